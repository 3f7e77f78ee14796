// The client's state and the one place it changes: reduce(state, message) → new state.
//
// Pure: no DOM, no network, no clock, no translations (log entries are keys and
// parameters, translated when drawn, so switching the language re-renders them). The
// input `state` is never changed. Unit-tested with Node's test runner (web/test/).
//
// The client knows no rules: what each legal action does comes from the server
// (`your_turn.previews`) and the board is drawn from the positions the server sends
// (`event.position`, `welcome.snapshot.game.position`). Events only say what happened,
// for the log, the last-move marks and the animations.
//
// Messages are the server's (proto/README.md) plus a few local ones, typed `local:*`:
//   local:reset                             no room any more (left, back to the lobby)
//   local:session {code, intent, saved, view} a new session (join / watch / resume /
//                                           claim: a seat found by quick pairing)
//   local:sent {req, kind}                  a command went out (its reply is matched later)
//   local:select {piece}                    the player picked a piece ("colour:index")
//   local:played                            the player sent a play or roll: wait
//   local:want_colour {colour}              the player asked for another colour
//   local:mute_emotes {muted}               the player muted (or unmuted) emotes
//   local:capture_seen                      the capture banner was shown long enough
// Server messages may carry `received_ms` (local time of arrival) for the clock offset.

export const LOG_MAX = 300;
/** Emotes kept for drawing (the newest). */
export const EMOTES_MAX = 4;
export const COLOURS = ['yellow', 'blue', 'red', 'green'];

/** A fresh state for no room. */
export function initialState() {
  return {
    code: null,
    role: null, // 'player' | 'spectator'
    colour: null,
    token: null,
    intent: null, // { kind: 'join', name, colour } | { kind: 'watch' } | { kind: 'resume' }
    seq: 0,
    room: null, // { code, settings, status, seats, spectators, board }
    gameId: null,
    position: null, // the server's Position, as sent
    pieces: {}, // colour -> [location x4], from `position` (and move events before it)
    seatStatus: {}, // colour -> 'playing' | 'abandoned' | 'finished'
    timeouts: {}, // colour -> consecutive timeouts (R-LEAVE)
    turn: null,
    dice: null,
    used: [false, false],
    bonus: null,
    deadline: null,
    outcome: null,
    myTurn: null, // the latest your_turn still to answer
    lastTurn: null,
    selected: null, // "colour:piece"
    lastMove: {}, // colour -> { piece, from, to, path, captures: [location] }
    lastRoll: {}, // colour -> dice
    log: [], // { key, p, cls } newest last
    clockOffset: 0,
    pending: {}, // req -> kind
    welcomed: false,
    wantColour: null,
    rematch: { wanted: [] }, // colours that asked for a rematch
    away: {}, // colour -> unix ms at which the dropped seat is given up (presence.away)
    emotes: [], // the latest emotes heard: { colour, emote, n } newest last (at most EMOTES_MAX)
    emotesMuted: false, // emotes are not shown (nor sounded)
    emoteCount: 0,
    lastCapture: null, // { by, colour, piece, square, passed } until the capturer's next turn
    captureBanner: null, // { by, colour, amount, n } the capture to announce
    fx: [], // effects of the last message for the app: { type, ... }
  };
}

const clone = (x) => (typeof structuredClone === 'function' ? structuredClone(x) : JSON.parse(JSON.stringify(x)));

/**
 * The state after `msg`. `msg` is a server message (proto/README.md) or a local one.
 * `fx` of the result lists what the app should do once (sounds, animations, toasts).
 */
export function reduce(state, msg) {
  const s = clone(state);
  s.fx = [];
  switch (msg.type) {
    case 'local:reset': return initialState();
    case 'local:session': return session(s, msg);
    case 'local:sent': s.pending[msg.req] = msg.kind; return s;
    case 'local:select': return select(s, msg.piece);
    case 'local:played': s.myTurn = null; s.selected = null; return s;
    case 'local:want_colour': s.wantColour = msg.colour; return s;
    case 'local:mute_emotes': s.emotesMuted = !!msg.muted; if (s.emotesMuted) s.emotes = []; return s;
    case 'local:capture_seen': s.captureBanner = null; return s;
    case 'emote': return emote(s, msg);
    case 'welcome': return welcome(s, msg);
    case 'event': return event(s, msg);
    case 'your_turn': return yourTurn(s, msg);
    case 'presence': return presence(s, msg);
    case 'renamed': return renamed(s, msg);
    case 'rating': return rating(s, msg);
    case 'ok': delete s.pending[msg.req]; return s;
    case 'error': return error(s, msg);
    default: return s;
  }
}

function session(s, msg) {
  const n = initialState();
  n.emotesMuted = s.emotesMuted;
  n.code = msg.code;
  n.intent = msg.intent;
  if (msg.saved) {
    n.token = msg.saved.token;
    n.colour = msg.saved.colour;
    n.role = 'player';
  }
  if (msg.view && msg.intent.kind !== 'resume') snapshot(n, msg.view);
  else if (msg.view) {
    // A resume replays the room's stream from the start (or sends a snapshot).
    n.room = roomOf(msg.view);
    n.room.status = 'lobby';
    n.room.seats = [];
    n.seq = 0;
  }
  return n;
}

/** Emotes from seated players (the server refuses spectators'); none while muted. */
function emote(s, msg) {
  if (s.emotesMuted || !s.room) return s;
  s.emoteCount += 1;
  s.emotes.push({ colour: msg.colour, emote: msg.emote, n: s.emoteCount });
  if (s.emotes.length > EMOTES_MAX) s.emotes.splice(0, s.emotes.length - EMOTES_MAX);
  s.fx.push({ type: 'emote', colour: msg.colour, emote: msg.emote, n: s.emoteCount });
  return s;
}

/** The dropped seats' deadlines from the room view's seats (`away_until_ms`). */
function awayOf(seats) {
  const away = {};
  for (const x of seats) if (x.away_until_ms) away[x.colour] = x.away_until_ms;
  return away;
}

function roomOf(view) {
  return {
    code: view.code,
    settings: view.settings,
    status: view.status,
    seats: view.seats.map((x) => ({ ...x })),
    spectators: view.spectators,
    board: view.board || null,
    teams: view.teams || [],
    // A room whose seats are reserved for specific players (quick pairing, a
    // tournament's match): `{seats: [{colour, name, bot?}], starts_when_seated}`.
    ...(view.reserved ? { reserved: view.reserved } : {}),
  };
}

function snapshot(s, view) {
  s.room = roomOf(view);
  s.away = awayOf(view.seats);
  s.seq = view.seq;
  if (view.game) {
    s.gameId = view.game.game_id;
    setPosition(s, view.game.position);
    // The throw being played is the current player's last roll.
    const st = view.game.position.stage;
    if (st.kind === 'move') s.lastRoll[view.game.position.turn] = st.dice;
    s.deadline = view.game.deadline_ms;
    s.outcome = view.game.outcome || s.outcome;
  }
}

/** Draw `pos` as it is: pieces, seats, turn, dice, bonus, timeouts, outcome. */
export function setPosition(s, pos) {
  s.position = pos;
  s.pieces = {};
  s.seatStatus = {};
  s.timeouts = {};
  for (const p of pos.players) {
    s.pieces[p.colour] = p.pieces.map((x) => x.at);
    s.seatStatus[p.colour] = p.status;
    s.timeouts[p.colour] = p.timeouts || 0;
  }
  s.turn = pos.turn;
  const st = pos.stage;
  if (st.kind === 'move') {
    s.dice = st.dice;
    // dice_lost: the dice left could not be played and are gone; only bonuses remain.
    s.used = st.dice_lost ? st.dice.map(() => true)
      : st.used && st.used.length ? st.used.slice(0, st.dice.length) : st.dice.map(() => false);
    s.bonus = st.bonus && st.bonus.length ? st.bonus[0] : null;
  } else {
    s.dice = null; s.used = [false, false]; s.bonus = null;
  }
  if (st.kind === 'finished') s.outcome = st.outcome;
}

function welcome(s, msg) {
  delete s.pending[msg.req];
  s.role = msg.role;
  if (msg.colour) s.colour = msg.colour;
  if (msg.token) s.token = msg.token;
  s.intent = null;
  if (msg.snapshot) {
    snapshot(s, msg.snapshot);
    s.seq = msg.seq;
    // A first snapshot starts a fresh log; after a reconnection the log goes on.
    if (!s.welcomed) s.log = [];
  }
  s.welcomed = true;
  s.fx.push({ type: 'save_session' });
  return s;
}

function error(s, msg) {
  const kind = msg.req != null ? s.pending[msg.req] : null;
  if (msg.req != null) delete s.pending[msg.req];
  if (kind === 'resume') {
    s.token = null; s.role = null; s.colour = null;
    s.fx.push({ type: 'forget_session' });
    if (msg.code === 'unknown_room') s.fx.push({ type: 'stop', code: msg.code, message: msg.message });
    else {
      s.fx.push({ type: 'send', msg: { type: 'watch', room: s.code }, kind: 'watch' });
      s.fx.push({ type: 'toast', code: msg.code, message: msg.message });
    }
    return s;
  }
  if (kind === 'join' || kind === 'watch' || kind === 'claim') {
    s.fx.push({ type: 'stop', code: msg.code, message: msg.message, kind });
    return s;
  }
  if ((kind === 'play' || kind === 'roll') && s.lastTurn && s.lastTurn.seq === s.seq) {
    s.myTurn = s.lastTurn; // nothing changed: the same choices again
  }
  if (msg.code === 'stale_seq' || msg.code === 'not_your_turn') return s; // the room moved on
  // The server cannot tell whether it was applied: resume, the events will tell.
  if (msg.code === 'outcome_unknown') { s.fx.push({ type: 'reconnect' }); return s; }
  s.fx.push({ type: 'toast', code: msg.code, message: msg.message });
  return s;
}

function presence(s, msg) {
  if (!s.room) return s;
  s.room.spectators = msg.spectators;
  for (const seat of s.room.seats) seat.connected = msg.connected.includes(seat.colour);
  s.away = {};
  for (const a of msg.away || []) s.away[a.colour] = a.until_ms;
  return s;
}

/** An administrator renamed a seated player's account: the seat shows the new name. */
function renamed(s, msg) {
  const seat = s.room && msg.room === s.code ? seatOf(s, msg.colour) : null;
  if (seat) seat.name = msg.name;
  return s;
}

/** A seated player's rating changed (a rated game of theirs ended in another room): the
 * seat shows the new one (none when the message carries none). */
function rating(s, msg) {
  const seat = s.room && msg.room === s.code ? seatOf(s, msg.colour) : null;
  if (seat) {
    if (msg.rating == null) delete seat.rating;
    else seat.rating = msg.rating;
  }
  return s;
}

function yourTurn(s, msg) {
  if (msg.seq < s.seq) return s;
  const fresh = !s.lastTurn || s.lastTurn.seq !== msg.seq || s.lastTurn.must_roll !== msg.must_roll;
  s.myTurn = msg;
  s.lastTurn = msg;
  s.dice = msg.dice;
  s.used = msg.used;
  s.bonus = msg.bonus;
  s.deadline = msg.deadline_ms;
  const movable = selectable(s);
  // Keep the chosen piece while it can still move (no deselect trap); a single movable
  // piece is chosen for the player.
  if (!movable.has(s.selected)) s.selected = null;
  if (!s.selected && movable.size === 1) s.selected = [...movable][0];
  if (fresh && msg.must_roll) s.fx.push({ type: 'sound', name: 'turn' }, { type: 'my_turn' });
  return s;
}

function select(s, piece) {
  // Tapping the selected piece keeps it (and its targets); tapping another movable piece
  // chooses that one instead.
  if (selectable(s).has(piece)) s.selected = piece;
  return s;
}

function event(s, msg) {
  if (msg.seq <= s.seq) return s; // already applied
  if (msg.seq > s.seq + 1 && s.seq !== 0) {
    s.fx.push({ type: 'resync' });
    return s;
  }
  s.seq = msg.seq;
  if (msg.received_ms) s.clockOffset = msg.at_ms - msg.received_ms;
  s.myTurn = null;
  roomEvent(s, msg.event, msg);
  // The server's position after the batch: draw it as it is.
  if (msg.position) setPosition(s, msg.position);
  return s;
}

function seatOf(s, colour) { return s.room && s.room.seats.find((x) => x.colour === colour); }

function log(s, key, p = {}, cls = '') {
  s.log.push({ key, p, cls });
  if (s.log.length > LOG_MAX) s.log.splice(0, s.log.length - LOG_MAX);
}

function roomEvent(s, ev, frame) {
  const room = s.room;
  switch (ev.type) {
    case 'player_joined':
      room.seats = room.seats.filter((x) => x.colour !== ev.colour);
      room.seats.push({ colour: ev.colour, name: ev.name, creator: ev.creator, connected: !ev.bot, abandoned: false, bot: ev.bot || null });
      log(s, 'ev_joined', { name: { seat: ev.colour, name: ev.name, bot: ev.bot || null }, colour: { c: ev.colour } });
      break;
    case 'colour_changed': {
      const seat = seatOf(s, ev.from);
      if (seat) seat.colour = ev.to;
      // Ours only when we asked for it (a replay after a reload holds others' changes too).
      if (s.colour === ev.from && s.role === 'player' && s.wantColour === ev.to) {
        s.colour = ev.to;
        s.wantColour = null;
        s.fx.push({ type: 'save_session' });
      }
      log(s, 'ev_colour', { from: { c: ev.from }, to: { c: ev.to } });
      break;
    }
    case 'player_left':
      room.seats = room.seats.filter((x) => x.colour !== ev.colour);
      log(s, 'ev_left', { colour: { c: ev.colour } });
      break;
    case 'creator_changed':
      for (const x of room.seats) x.creator = x.colour === ev.colour;
      log(s, 'ev_creator', { colour: { c: ev.colour } });
      break;
    case 'opening_roll':
      log(s, ev.first ? 'ev_opening' : 'ev_opening_tie', {
        rolls: { rolls: ev.rolls },
        colour: ev.first ? { c: ev.first } : '',
      });
      break;
    case 'game_started':
      room.status = 'playing';
      s.lastCapture = null;
      s.captureBanner = null;
      s.gameId = ev.game_id;
      s.outcome = null;
      s.lastMove = {};
      s.lastRoll = {};
      s.rematch = { wanted: [] };
      setPosition(s, ev.position);
      log(s, 'ev_started', { colour: { c: ev.first } }, 'big');
      break;
    case 'turn':
      s.turn = ev.colour;
      s.deadline = ev.deadline_ms;
      break;
    case 'abandoned': {
      const seat = seatOf(s, ev.colour);
      if (seat) seat.abandoned = true;
      delete s.away[ev.colour];
      break;
    }
    case 'bot_took_over': {
      const seat = seatOf(s, ev.colour);
      if (seat) { seat.bot = ev.level; seat.connected = false; }
      delete s.away[ev.colour];
      if (s.colour === ev.colour && s.role === 'player') s.role = 'spectator';
      log(s, 'ev_bot_took_over', { colour: { c: ev.colour } });
      break;
    }
    case 'rematch_wanted':
      if (!s.rematch.wanted.includes(ev.colour)) s.rematch.wanted.push(ev.colour);
      log(s, 'ev_rematch_wanted', { colour: { c: ev.colour } });
      break;
    case 'rematch':
      // The same seats play again: a new game follows (`game_started`).
      s.rematch = { wanted: [] };
      s.outcome = null;
      s.fx.push({ type: 'rematch' });
      log(s, 'ev_rematch', {}, 'big');
      break;
    case 'game':
      gameEvent(s, ev.event, frame);
      break;
    case 'dice_revealed':
      // The game is over: the server seed is out, the dice can be checked (docs/FAIR_DICE.md).
      log(s, 'ev_dice_revealed', {});
      break;
    default:
      break;
  }
}

function gameEvent(s, e, frame) {
  const C = (c) => ({ c });
  switch (e.type) {
    case 'dice_rolled':
      // The capture stays marked through the capturer's turn (its bonus, its rolls
      // again) and the others'; the capturer's next turn clears it.
      if (s.lastCapture && s.lastCapture.by === e.colour && s.lastCapture.passed) s.lastCapture = null;
      s.turn = e.colour;
      s.dice = e.dice; s.used = e.dice.map(() => false); s.bonus = null;
      s.lastRoll[e.colour] = e.dice;
      log(s, e.dice.length === 2 ? 'ev_rolled' : 'ev_rolled1', { colour: C(e.colour), a: e.dice[0], b: e.dice[1] }, `c-${e.colour}`);
      s.fx.push({ type: 'dice', colour: e.colour });
      break;
    case 'piece_exited': {
      const to = String(e.square);
      const from = s.pieces[e.colour] ? s.pieces[e.colour][e.piece] : 'nest';
      if (s.pieces[e.colour]) s.pieces[e.colour][e.piece] = to;
      s.lastMove[e.colour] = { piece: e.piece, from, to, path: [to], captures: [] };
      log(s, 'ev_exit', { colour: C(e.colour), square: e.square }, `c-${e.colour}`);
      s.fx.push({ type: 'animate', colour: e.colour, piece: e.piece, from, path: [to] });
      break;
    }
    case 'piece_moved': {
      if (s.pieces[e.colour]) s.pieces[e.colour][e.piece] = e.to;
      const path = frame.path && frame.path.length ? frame.path : [e.to];
      s.lastMove[e.colour] = { piece: e.piece, from: e.from, to: e.to, path, captures: [] };
      const key = e.by === 'bonus' ? 'ev_moved_bonus' : 'ev_moved';
      log(s, key, { colour: C(e.colour), n: e.piece + 1, from: { loc: e.from }, to: { loc: e.to }, steps: e.steps, bounced: e.bounced }, `c-${e.colour}`);
      s.fx.push({ type: 'animate', colour: e.colour, piece: e.piece, from: e.from, path });
      if (e.to === 'goal') s.fx.push({ type: 'sound', name: 'goal' });
      break;
    }
    case 'piece_captured': {
      if (s.pieces[e.colour]) s.pieces[e.colour][e.piece] = 'nest';
      const last = s.lastMove[e.by];
      if (last) last.captures.push(String(e.square));
      s.lastCapture = { by: e.by, colour: e.colour, piece: e.piece, square: String(e.square), passed: false };
      s.captureBanner = { by: e.by, colour: e.colour, amount: null, n: frame.seq };
      log(s, 'ev_captured', { by: C(e.by), colour: C(e.colour), square: e.square }, `c-${e.by} capture`);
      s.fx.push({ type: 'sound', name: 'capture' });
      s.fx.push({ type: 'captured', colour: e.colour, piece: e.piece, from: String(e.square) });
      break;
    }
    case 'bonus_earned': {
      const last = s.log[s.log.length - 1];
      if (e.reason === 'capture' && s.captureBanner && s.captureBanner.by === e.colour && s.captureBanner.amount === null) {
        s.captureBanner.amount = e.amount;
      }
      if (e.reason === 'capture' && last && last.cls.includes('capture') && !last.p.counts) {
        last.p.counts = e.amount; // "… and counts 20"
      } else if (e.reason === 'goal') {
        log(s, 'ev_bonus_goal', { colour: C(e.colour), n: e.amount }, `c-${e.colour} goal`);
      } else {
        log(s, 'ev_bonus', { colour: C(e.colour), n: e.amount }, `c-${e.colour}`);
      }
      break;
    }
    case 'bonus_forfeited':
      log(s, 'ev_bonus_lost', { colour: C(e.colour), n: e.amount }, `c-${e.colour}`);
      break;
    case 'blockade_opened':
      log(s, 'ev_blockade', { colour: C(e.colour) }, `c-${e.colour}`);
      break;
    case 'no_legal_move':
      log(s, 'ev_no_move', { colour: C(e.colour) }, `c-${e.colour}`);
      break;
    case 'third_doubles_penalty':
      { const owner = e.piece_colour || e.colour; // pair play: the partner's piece
        if (e.piece != null && s.pieces[owner]) s.pieces[owner][e.piece] = 'nest'; }
      log(s, e.piece != null ? 'ev_third' : 'ev_third_none', { colour: C(e.colour), n: e.piece != null ? e.piece + 1 : '' }, `c-${e.colour}`);
      break;
    case 'roll_again':
      log(s, 'ev_again', { colour: C(e.colour) }, `c-${e.colour}`);
      break;
    case 'timed_out':
      s.timeouts[e.colour] = e.consecutive;
      log(s, 'ev_timeout', { colour: C(e.colour), n: e.consecutive, max: s.room.settings.timeouts_to_abandon }, `c-${e.colour}`);
      break;
    case 'turn_passed':
      s.turn = e.to;
      if (s.lastCapture && e.to !== s.lastCapture.by) s.lastCapture.passed = true;
      log(s, 'ev_passed', { to: C(e.to) }, `c-${e.to} pass`);
      break;
    case 'player_abandoned': {
      s.seatStatus[e.colour] = 'abandoned';
      const seat = seatOf(s, e.colour);
      if (seat) seat.abandoned = true;
      log(s, 'ev_abandoned', { colour: C(e.colour) }, `c-${e.colour}`);
      break;
    }
    case 'player_finished':
      log(s, 'ev_finished', { colour: C(e.colour), place: e.place }, `c-${e.colour} goal`);
      break;
    case 'game_won':
      s.outcome = { winner: e.winner, reason: e.reason, partner: e.partner || null };
      s.room.status = 'finished';
      s.deadline = null;
      log(s, e.reason === 'forfeit' ? 'ev_won_forfeit' : 'ev_won', { colour: C(e.winner) }, `c-${e.winner} big`);
      s.fx.push({ type: 'sound', name: 'win' });
      break;
    default:
      break;
  }
}

// ----- derived views (pure) ------------------------------------------------------------

/**
 * The player's legal actions, from the server's previews: for each, the action to send
 * back, its key, the piece, where it lands, its path, what it captures, its bonus.
 */
export function describedActions(s) {
  const turn = s.myTurn;
  if (!turn || turn.must_roll || !turn.previews) return [];
  return turn.previews.map((p) => ({
    action: p.action,
    key: JSON.stringify(p.action),
    colour: p.colour,
    piece: p.piece,
    from: p.from,
    to: p.to,
    path: p.path,
    steps: p.steps,
    capture: p.captures.length > 0,
    captures: p.captures,
    bonus: p.bonus,
    goal: p.goal,
    bounced: p.bounced,
  }));
}

/** The pieces that can move now, as "colour:piece". */
export function selectable(s) {
  return new Set(describedActions(s).map((d) => `${d.colour}:${d.piece}`));
}

/**
 * The dropped seats still counting down at `now` (unix ms, server time): for each, the
 * colour, the whole seconds left and what happens then (`bot`: a bot takes over, `forfeit`:
 * the player is out; before the start the seat is freed: `free`). From the server's
 * `presence.away` only: the client computes no rule.
 */
export function awayCountdowns(s, now) {
  if (!s.room) return [];
  const what = s.room.status === 'lobby' ? 'free' : (s.room.settings.on_abandon === 'bot' ? 'bot' : 'forfeit');
  return Object.entries(s.away)
    .filter(([colour]) => { const x = seatOf(s, colour); return x && !x.bot && !x.abandoned && !x.connected; })
    .map(([colour, until]) => ({ colour, secs: Math.max(0, Math.ceil((until - now) / 1000)), what }))
    .sort((a, b) => a.secs - b.secs);
}

/** The colour at the bottom of the board: your own; spectators see the first player's. */
export function bottomColour(s) {
  if (s.role === 'player' && s.colour) return s.colour;
  const seats = s.room ? s.room.seats : [];
  const first = seats.find((x) => x.creator) || seats[0];
  return first ? first.colour : 'yellow';
}
