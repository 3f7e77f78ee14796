// Parchís web client: lobby, room, game. Plain ES module, no build step.
// Protocol: proto/README.md (HTTP /api/rooms, WebSocket /ws, JSON text frames).

import { t, getLang, setLang, colourName, locName, translateDom } from './i18n.js';
import { createBoard, COLOURS, SAFE, EXIT, advance, progress } from './board.js';
import { api, Connection } from './net.js';

const $ = (id) => document.getElementById(id);
const LOG_MAX = 300;

// ----- persistent settings --------------------------------------------------------------

const store = {
  get(key) { try { return JSON.parse(localStorage.getItem(key)); } catch (_) { return null; } },
  set(key, v) { try { localStorage.setItem(key, JSON.stringify(v)); } catch (_) { /* ignore */ } },
  del(key) { try { localStorage.removeItem(key); } catch (_) { /* ignore */ } },
};
const sessionKey = (code) => `parchis.session.${code}`;

// ----- state ------------------------------------------------------------------------------

let conn = null;
let S = freshState();
let board = null;
let clockTimer = null;
let roomsTimer = null;

function freshState() {
  return {
    code: null,
    role: null, // 'player' | 'spectator'
    colour: null,
    token: null,
    intent: null, // { kind: 'join', name, colour } | { kind: 'watch' } | { kind: 'resume' }
    seq: 0,
    room: null, // { settings, status, seats: [...], spectators }
    pieces: {}, // colour -> [loc x4]
    seatStatus: {}, // colour -> 'playing' | 'abandoned'
    turn: null,
    dice: null,
    used: [false, false],
    bonus: null,
    deadline: null,
    outcome: null,
    myTurn: null,
    lastTurn: null,
    selected: null,
    log: [],
    clockOffset: 0,
    pending: new Map(), // req -> kind
    resultShown: false,
    welcomed: false,
    wantColour: null,
  };
}

// ----- views ------------------------------------------------------------------------------

function show(view) {
  for (const v of ['lobby', 'join', 'room', 'game']) $(`view-${v}`).hidden = v !== view;
  document.body.dataset.view = view;
  clearInterval(roomsTimer);
  if (view === 'lobby') {
    loadLobbyLists();
    roomsTimer = setInterval(loadLobbyLists, 5000);
  }
}

let toastTimer = null;
function toast(text) {
  const el = $('toast');
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 5000);
}

function errorText(code, message) {
  const key = `err_${code}`;
  const s = t(key);
  return s === key ? t('err_generic', { msg: message || code }) : s;
}

function setUrl(code) {
  const url = code ? `/?room=${encodeURIComponent(code)}` : '/';
  if (location.pathname + location.search !== url) history.replaceState(null, '', url);
}

function inviteUrl(code) { return `${location.origin}/?room=${code}`; }

function myName() { return ($('name').value || '').trim(); }

function fillColourSelect(sel, free) {
  const keep = sel.value;
  sel.replaceChildren();
  const any = document.createElement('option');
  any.value = ''; any.textContent = t('any_colour');
  sel.appendChild(any);
  for (const c of COLOURS) {
    if (free && !free.includes(c)) continue;
    const o = document.createElement('option');
    o.value = c; o.textContent = colourName(c);
    sel.appendChild(o);
  }
  if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
}

// ----- lobby -----------------------------------------------------------------------------

async function loadRooms() {
  const list = $('room-list');
  let data;
  try { data = await api('GET', '/api/rooms'); } catch (_) { return; }
  list.replaceChildren();
  if (!data.rooms.length) {
    const li = document.createElement('li');
    li.className = 'muted';
    li.textContent = t('no_rooms');
    list.appendChild(li);
    return;
  }
  for (const r of data.rooms) {
    const li = document.createElement('li');
    li.dataset.code = r.code;
    const span = document.createElement('span');
    span.textContent = t('room_row', {
      code: r.code, taken: r.taken, seats: r.seats,
      free: r.free_colours.map(colourName).join(', '),
    });
    const join = button(t('join'), () => enterRoom(r.code, 'join'), `${t('join')} ${r.code}`);
    const watch = button(t('watch'), () => enterRoom(r.code, 'watch'), `${t('watch')} ${r.code}`);
    li.append(span, join, watch);
    list.appendChild(li);
  }
}

/** The lobby's second list: public games in progress that spectators may watch. */
async function loadLiveGames() {
  const list = $('live-list');
  let data;
  try { data = await api('GET', '/api/rooms?status=playing'); } catch (_) { return; }
  list.replaceChildren();
  if (!data.rooms.length) {
    const li = document.createElement('li');
    li.className = 'muted';
    li.textContent = t('no_live_games');
    list.appendChild(li);
    return;
  }
  for (const r of data.rooms) {
    const li = document.createElement('li');
    li.dataset.code = r.code;
    const span = document.createElement('span');
    span.textContent = t('live_row', { code: r.code, players: r.taken, spectators: r.spectators });
    const watch = button(t('watch'), () => enterRoom(r.code, 'watch'), `${t('watch')} ${r.code}`);
    li.append(span, watch);
    list.appendChild(li);
  }
}

function loadLobbyLists() {
  loadRooms();
  loadLiveGames();
}

function button(text, onClick, label, cls) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  if (label) b.setAttribute('aria-label', label);
  if (cls) b.className = cls;
  b.addEventListener('click', onClick);
  return b;
}

function requireName(input) {
  const name = (input.value || '').trim();
  if (!name || name.length > 24) {
    toast(t('err_name'));
    input.focus();
    return null;
  }
  store.set('parchis.name', name);
  $('name').value = name; $('join-name').value = name;
  return name;
}

async function createRoom(e) {
  e.preventDefault();
  const name = requireName($('name'));
  if (!name) return;
  const body = {
    preset: $('preset').value,
    seats: $('preset').value === 'pairs' ? 4 : Number($('seats').value), // pairs: exactly 4
    turn_clock_secs: Math.max(1, Math.min(600, Number($('clock').value) || 15)),
    public: $('public').checked,
    spectators: $('spectators-ok').checked,
    bots: $('bots').value || null, // fill the free seats with bots at the start
    on_abandon: $('bot-takeover').checked ? 'bot' : 'forfeit',
  };
  let res;
  try { res = await api('POST', '/api/rooms', body); } catch (err) {
    toast(err.code ? errorText(err.code, err.message) : t('err_http'));
    return;
  }
  startSession(res.code, { kind: 'join', name, colour: $('colour-pref').value || null });
}

/** Opens room `code`: resume a stored seat, or join / watch / ask. */
async function enterRoom(rawCode, intent) {
  const code = (rawCode || '').trim().toUpperCase();
  if (!code) { toast(t('err_code')); return; }
  let view;
  try { view = await api('GET', `/api/rooms/${encodeURIComponent(code)}`); } catch (err) {
    toast(err.status === 404 ? t('err_unknown_room') : t('err_http'));
    setUrl(null);
    show('lobby');
    return;
  }
  const saved = store.get(sessionKey(view.code));
  if (saved && saved.token) {
    startSession(view.code, { kind: 'resume' }, saved, view);
    return;
  }
  if (intent === 'watch' || view.status !== 'lobby') {
    startSession(view.code, { kind: 'watch' }, null, view);
    return;
  }
  const name = myName();
  if (intent === 'join' && name) {
    const free = COLOURS.filter((c) => !view.seats.some((s) => s.colour === c));
    const pref = $('colour-pref').value;
    startSession(view.code, { kind: 'join', name, colour: free.includes(pref) ? pref : null });
    return;
  }
  showJoin(view);
}

function showJoin(view) {
  setUrl(view.code);
  $('join-title').textContent = t('room', { code: view.code });
  $('join-form').dataset.code = view.code;
  $('join-name').value = $('name').value;
  const free = COLOURS.filter((c) => !view.seats.some((s) => s.colour === c));
  fillColourSelect($('join-colour'), free);
  show('join');
  $('join-name').focus();
}

// ----- session ---------------------------------------------------------------------------

function startSession(code, intent, saved = null, view = null) {
  if (conn) conn.close();
  S = freshState();
  S.code = code;
  S.intent = intent;
  if (saved) {
    S.token = saved.token;
    S.colour = saved.colour;
    S.role = 'player';
  }
  if (intent.kind === 'resume' && view) {
    // Rebuild the room from the start of its event stream (a full log), or get a snapshot.
    S.room = { settings: view.settings, status: 'lobby', seats: [], spectators: view.spectators, code: view.code };
    S.seq = 0;
  } else if (view) {
    applySnapshot(view);
  }
  setUrl(code);
  $('log').replaceChildren();
  $('result').hidden = true;
  // Handlers ignore a connection the app has let go of (after leaving, its last frames).
  const c = new Connection({
    onOpen: () => { if (conn === c) sendEntry(); },
    onMessage: (m) => { if (conn === c) onMessage(m); },
    onState: (st) => {
      if (conn !== c && st !== 'closed') return;
      const el = $('conn-status');
      el.dataset.state = st;
      el.textContent = st === 'open' ? t('connected') : st === 'closed' ? '' : t(st === 'connecting' ? 'connecting' : 'reconnecting');
    },
    onClose: (code) => (code === 4000 ? (toast(t('replaced')), false) : true),
  });
  conn = c;
  c.start();
  render();
}

function sendEntry() {
  if (S.token) {
    track(conn.send({ type: 'resume', room: S.code, token: S.token, last_seq: S.seq }), 'resume');
  } else if (S.intent && S.intent.kind === 'join') {
    const msg = { type: 'join', room: S.code, name: S.intent.name };
    if (S.intent.colour) msg.colour = S.intent.colour;
    track(conn.send(msg), 'join');
  } else {
    track(conn.send({ type: 'watch', room: S.code }), 'watch');
  }
}

function track(req, kind) { if (req !== null) S.pending.set(req, kind); return req; }

function command(type, extra = {}) {
  if (!conn) return;
  track(conn.send({ type, room: S.code, seq: S.seq, ...extra }), type);
}

function saveSession() {
  if (S.token && S.code) store.set(sessionKey(S.code), { token: S.token, colour: S.colour });
}

function leaveRoom() {
  if (S.role === 'player' && S.room && S.room.status === 'playing' && !S.outcome) {
    if (!confirm(t('leave') + '?')) return;
  }
  if (conn) {
    command('leave');
    const c = conn;
    setTimeout(() => c.close(), 300);
    conn = null;
  }
  if (S.code) store.del(sessionKey(S.code));
  S = freshState();
  setUrl(null);
  $('result').hidden = true;
  $('conn-status').textContent = '';
  show('lobby');
}

// ----- incoming messages -------------------------------------------------------------

function onMessage(msg) {
  switch (msg.type) {
    case 'welcome': onWelcome(msg); break;
    case 'event': onEvent(msg); break;
    case 'your_turn': onYourTurn(msg); break;
    case 'presence': onPresence(msg); break;
    case 'ok': S.pending.delete(msg.req); break;
    case 'error': onError(msg); break;
    case 'closing': break;
    case 'pong': break;
    default: break;
  }
}

function onWelcome(msg) {
  S.pending.delete(msg.req);
  S.role = msg.role;
  if (msg.colour) S.colour = msg.colour;
  if (msg.token) S.token = msg.token;
  saveSession();
  S.intent = null;
  if (msg.snapshot) {
    applySnapshot(msg.snapshot);
    S.seq = msg.seq;
    // A first snapshot starts a fresh log; after a reconnection the log goes on.
    if (!S.welcomed) { $('log').replaceChildren(); S.log = []; }
  }
  S.welcomed = true;
  render();
}

function onError(msg) {
  const kind = msg.req != null ? S.pending.get(msg.req) : null;
  if (msg.req != null) S.pending.delete(msg.req);
  if (kind === 'resume') {
    store.del(sessionKey(S.code));
    S.token = null;
    S.role = null;
    S.colour = null;
    if (msg.code === 'unknown_room') { stopWith(msg); return; }
    // The seat is gone: watch instead (or join again before the start).
    track(conn.send({ type: 'watch', room: S.code }), 'watch');
    toast(errorText(msg.code, msg.message));
    return;
  }
  if (kind === 'join' || kind === 'watch') {
    stopWith(msg);
    if (msg.code === 'game_started' && kind === 'join') enterRoom(S.code, 'watch');
    return;
  }
  if ((kind === 'play' || kind === 'roll') && S.lastTurn && S.lastTurn.seq === S.seq) {
    // Nothing changed: offer the same choices again.
    S.myTurn = S.lastTurn;
    render();
  }
  if (msg.code === 'stale_seq' || msg.code === 'not_your_turn') {
    // The room moved on (a clock ran out): the next your_turn says what to do.
    return;
  }
  toast(errorText(msg.code, msg.message));
}

function stopWith(msg) {
  const code = S.code;
  if (conn) { conn.close(); conn = null; }
  toast(errorText(msg.code, msg.message));
  if (msg.code === 'colour_taken' || msg.code === 'room_full') {
    enterRoom(code, null);
    return;
  }
  S = freshState();
  setUrl(null);
  show('lobby');
}

function onPresence(msg) {
  if (!S.room) return;
  S.room.spectators = msg.spectators;
  for (const seat of S.room.seats) seat.connected = msg.connected.includes(seat.colour);
  render();
}

function onYourTurn(msg) {
  if (msg.seq < S.seq) return;
  S.myTurn = msg;
  S.lastTurn = msg;
  S.dice = msg.dice;
  S.used = msg.used;
  S.bonus = msg.bonus;
  S.deadline = msg.deadline_ms;
  const selectable = selectablePieces();
  if (!selectable.has(S.selected)) S.selected = null;
  if (!S.selected && selectable.size === 1) S.selected = [...selectable][0];
  render();
  if (!msg.must_roll) {
    const first = document.querySelector('.piece.selectable, #action-list button');
    if (first && document.activeElement === $('roll-btn')) first.focus();
  }
}

function onEvent(msg) {
  if (msg.seq <= S.seq) return; // already applied
  if (msg.seq > S.seq + 1 && S.seq !== 0) {
    resync();
    return;
  }
  S.seq = msg.seq;
  S.clockOffset = msg.at_ms - Date.now();
  S.myTurn = null;
  applyRoomEvent(msg.event);
  scheduleRender();
}

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  queueMicrotask(() => { renderQueued = false; render(); });
}

async function resync() {
  try {
    const view = await api('GET', `/api/rooms/${encodeURIComponent(S.code)}`);
    applySnapshot(view);
    render();
  } catch (_) { /* the next reconnect will fix it */ }
}

// ----- state updates -----------------------------------------------------------------

function applySnapshot(view) {
  S.room = {
    code: view.code,
    settings: view.settings,
    status: view.status,
    seats: view.seats.map((s) => ({ ...s })),
    spectators: view.spectators,
  };
  S.seq = view.seq;
  if (view.game) {
    setPosition(view.game.position);
    S.deadline = view.game.deadline_ms;
    S.outcome = view.game.outcome || S.outcome;
  }
}

function setPosition(pos) {
  S.pieces = {};
  S.seatStatus = {};
  for (const p of pos.players) {
    S.pieces[p.colour] = p.pieces.map((x) => x.at);
    S.seatStatus[p.colour] = p.status;
  }
  S.turn = pos.turn;
  const st = pos.stage;
  if (st.kind === 'move') {
    S.dice = st.dice; S.used = st.used || [false, false]; S.bonus = st.bonus || null;
  } else {
    S.dice = null; S.used = [false, false]; S.bonus = null;
  }
  if (st.kind === 'finished') S.outcome = st.outcome;
}

function seatOf(colour) { return S.room && S.room.seats.find((s) => s.colour === colour); }
function nameOf(colour) { const s = seatOf(colour); return s ? s.name : colourName(colour); }

function applyRoomEvent(ev) {
  const room = S.room;
  switch (ev.type) {
    case 'player_joined':
      room.seats = room.seats.filter((s) => s.colour !== ev.colour);
      room.seats.push({ colour: ev.colour, name: ev.name, creator: ev.creator, connected: !ev.bot, abandoned: false, bot: ev.bot || null });
      log(t('ev_joined', { name: ev.name, colour: colourName(ev.colour) }));
      break;
    case 'colour_changed': {
      const s = seatOf(ev.from);
      if (s) s.colour = ev.to;
      // Ours only when we asked for it (a replay after a reload holds others' changes too).
      if (S.colour === ev.from && S.role === 'player' && S.wantColour === ev.to) {
        S.colour = ev.to;
        S.wantColour = null;
        saveSession();
      }
      log(t('ev_colour', { from: colourName(ev.from), to: colourName(ev.to) }));
      break;
    }
    case 'player_left':
      room.seats = room.seats.filter((s) => s.colour !== ev.colour);
      log(t('ev_left', { colour: colourName(ev.colour) }));
      break;
    case 'creator_changed':
      for (const s of room.seats) s.creator = s.colour === ev.colour;
      log(t('ev_creator', { colour: colourName(ev.colour) }));
      break;
    case 'opening_roll':
      // Who plays first, by the dice (every preset but online); a tie repeats.
      log('🎲 ' + ev.rolls.map((r) => `${colourName(r.colour)} ${r.value}`).join(', ')
        + (ev.first ? ` → ${colourName(ev.first)}` : ' …'));
      break;
    case 'game_started':
      room.status = 'playing';
      setPosition(ev.position);
      log(t('ev_started', { colour: colourName(ev.first) }), 'big');
      break;
    case 'turn':
      S.turn = ev.colour;
      S.deadline = ev.deadline_ms;
      break;
    case 'abandoned': {
      const s = seatOf(ev.colour);
      if (s) s.abandoned = true;
      break;
    }
    case 'bot_took_over': {
      const s = seatOf(ev.colour);
      if (s) { s.bot = ev.level; s.connected = false; }
      if (S.colour === ev.colour && S.role === 'player') S.role = 'spectator';
      log(t('ev_bot_took_over', { colour: colourName(ev.colour) }));
      break;
    }
    case 'game':
      applyGameEvent(ev.event);
      break;
    default:
      break;
  }
}

function useDie(value) {
  if (!S.dice) return;
  for (let i = 0; i < S.dice.length; i++) {
    if (!S.used[i] && S.dice[i] === value) { S.used = S.used.slice(); S.used[i] = true; return; }
  }
}

function applyGameEvent(e) {
  const C = (c) => colourName(c);
  switch (e.type) {
    case 'dice_rolled':
      S.turn = e.colour;
      S.dice = e.dice; S.used = [false, false]; S.bonus = null;
      log(e.dice.length === 2
        ? t('ev_rolled', { colour: C(e.colour), a: e.dice[0], b: e.dice[1] })
        : t('ev_rolled1', { colour: C(e.colour), a: e.dice[0] }), `c-${e.colour}`);
      break;
    case 'piece_exited':
      if (S.pieces[e.colour]) S.pieces[e.colour][e.piece] = String(e.square);
      if (S.dice) {
        if (S.dice.includes(5)) useDie(5);
        else { S.used = S.dice.map(() => true); }
      }
      log(t('ev_exit', { colour: C(e.colour), square: e.square }), `c-${e.colour}`);
      break;
    case 'piece_moved': {
      if (S.pieces[e.colour]) S.pieces[e.colour][e.piece] = e.to;
      if (e.by === 'die') useDie(e.steps); else S.bonus = null;
      const key = e.by === 'bonus' ? 'ev_moved_bonus' : 'ev_moved';
      log(t(key, { colour: C(e.colour), n: e.piece + 1, from: locName(e.from), to: locName(e.to), steps: e.steps })
        + (e.bounced ? t('ev_bounced') : ''), `c-${e.colour}`);
      break;
    }
    case 'piece_captured':
      if (S.pieces[e.colour]) S.pieces[e.colour][e.piece] = 'nest';
      log(t('ev_captured', { by: C(e.by), colour: C(e.colour), square: e.square }), `c-${e.by} capture`);
      break;
    case 'bonus_earned': {
      S.bonus = e.amount;
      const last = S.log[S.log.length - 1];
      if (e.reason === 'capture' && last && last.cls.includes('capture') && !last.counted) {
        last.text += t('ev_and_counts', { n: e.amount });
        last.counted = true;
        last.el.textContent = last.text;
      } else if (e.reason === 'goal') {
        log(t('ev_bonus_goal', { colour: C(e.colour), n: e.amount }), `c-${e.colour} goal`);
      } else {
        log(t('ev_bonus', { colour: C(e.colour), n: e.amount }), `c-${e.colour}`);
      }
      break;
    }
    case 'bonus_forfeited':
      S.bonus = null;
      log(t('ev_bonus_lost', { colour: C(e.colour), n: e.amount }), `c-${e.colour}`);
      break;
    case 'blockade_opened':
      log(t('ev_blockade', { colour: C(e.colour) }), `c-${e.colour}`);
      break;
    case 'no_legal_move':
      S.used = S.dice ? S.dice.map(() => true) : S.used;
      log(t('ev_no_move', { colour: C(e.colour) }), `c-${e.colour}`);
      break;
    case 'third_doubles_penalty':
      if (e.piece != null && S.pieces[e.colour]) S.pieces[e.colour][e.piece] = 'nest';
      log(e.piece != null ? t('ev_third', { colour: C(e.colour), n: e.piece + 1 }) : t('ev_third_none', { colour: C(e.colour) }), `c-${e.colour}`);
      break;
    case 'roll_again':
      S.dice = null; S.used = [false, false]; S.bonus = null;
      log(t('ev_again', { colour: C(e.colour) }), `c-${e.colour}`);
      break;
    case 'timed_out':
      S.dice = null; S.bonus = null;
      log(t('ev_timeout', { colour: C(e.colour) }), `c-${e.colour}`);
      break;
    case 'turn_passed':
      S.turn = e.to;
      S.dice = null; S.used = [false, false]; S.bonus = null;
      log(t('ev_passed', { to: C(e.to) }), `c-${e.to} pass`);
      break;
    case 'player_abandoned':
      S.seatStatus[e.colour] = 'abandoned';
      { const s = seatOf(e.colour); if (s) s.abandoned = true; }
      log(t('ev_abandoned', { colour: C(e.colour) }), `c-${e.colour}`);
      break;
    case 'game_won':
      S.outcome = { winner: e.winner, reason: e.reason };
      S.room.status = 'finished';
      S.deadline = null;
      S.dice = null;
      log(t(e.reason === 'forfeit' ? 'ev_won_forfeit' : 'ev_won', { colour: C(e.winner) }), `c-${e.winner} big`);
      break;
    default:
      break;
  }
}

function log(text, cls = '') {
  const entry = { text, cls, el: document.createElement('li') };
  entry.el.textContent = text;
  if (cls) entry.el.className = cls;
  S.log.push(entry);
  const ol = $('log');
  ol.prepend(entry.el);
  while (S.log.length > LOG_MAX) {
    const old = S.log.shift();
    old.el.remove();
  }
}

// ----- legal actions -----------------------------------------------------------------

/** The current player's legal actions, described for the UI. */
function describedActions() {
  const turn = S.myTurn;
  if (!turn || turn.must_roll || !turn.legal) return [];
  const colour = turn.colour;
  const mine = S.pieces[colour] || [];
  const nestPiece = mine.findIndex((l) => l === 'nest');
  return turn.legal.map((a) => {
    let piece; let to; let label;
    if (a.type === 'exit') {
      piece = nestPiece;
      to = String(EXIT[colour]);
      label = t('exit_to', { to });
    } else if (a.type === 'move') {
      piece = a.piece;
      to = advance(colour, mine[a.piece], a.die);
      label = t('move_to', { n: a.piece + 1, die: a.die, to: locName(to) });
    } else if (a.type === 'bonus') {
      piece = a.piece;
      to = advance(colour, mine[a.piece], a.amount);
      label = t('bonus_to', { n: a.piece + 1, amount: a.amount, to: locName(to) });
    } else {
      return null;
    }
    const capture = capturesAt(colour, to);
    if (capture) label += ` ${t('captures')}`;
    return {
      action: a, key: JSON.stringify(a), colour, piece, from: mine[piece], to, label, capture,
      progress: progress(colour, to),
    };
  }).filter(Boolean);
}

function capturesAt(colour, loc) {
  if (loc === 'nest' || loc === 'goal' || loc.startsWith('h')) return false;
  const sq = Number(loc);
  const others = [];
  for (const [c, locs] of Object.entries(S.pieces)) {
    if (S.seatStatus[c] === 'abandoned') continue;
    for (const l of locs) if (l === loc) others.push(c);
  }
  if (SAFE.has(sq)) {
    // Only on an exit square, when its owner brings a piece out (R-EXIT-CAPTURE).
    return EXIT[colour] === sq && others.some((c) => c !== colour) && others.length >= 2;
  }
  return others.length === 1 && others[0] !== colour;
}

function selectablePieces() {
  return new Set(describedActions().map((d) => `${d.colour}:${d.piece}`));
}

function play(key) {
  const d = describedActions().find((x) => x.key === key);
  if (!d) return;
  S.selected = null;
  command('play', { action: d.action });
  S.myTurn = null; // wait for the server's answer
  render();
}

function onPiece(colour, piece) {
  const id = `${colour}:${piece}`;
  S.selected = S.selected === id ? null : id;
  render();
  const tg = document.querySelector('.target');
  if (tg && S.selected) tg.focus();
}

// ----- rendering ---------------------------------------------------------------------

function render() {
  if (!S.room) return;
  const status = S.room.status;
  if (status === 'lobby') {
    renderRoom();
    show('room');
  } else {
    renderGame();
    show('game');
  }
}

function renderRoom() {
  const room = S.room;
  $('room-title').textContent = t('room', { code: S.code });
  $('invite').value = inviteUrl(S.code);
  const ul = $('seat-list');
  ul.replaceChildren();
  const me = S.role === 'player' ? seatOf(S.colour) : null;
  for (const c of COLOURS) {
    const seat = seatOf(c);
    const li = document.createElement('li');
    li.className = `seat c-${c}`;
    li.dataset.colour = c;
    const sw = document.createElement('span');
    sw.className = `swatch bg-${c}`;
    sw.setAttribute('aria-hidden', 'true');
    const label = document.createElement('span');
    label.className = 'seat-label';
    if (seat) {
      const tags = [];
      if (seat.colour === S.colour && S.role === 'player') tags.push(t('you'));
      if (seat.creator) tags.push(t('creator'));
      if (seat.bot) tags.push(t('bot_tag'));
      else if (!seat.connected) tags.push(t('offline'));
      label.textContent = `${colourName(c)}: ${seat.name}${tags.length ? ` (${tags.join(', ')})` : ''}`;
      li.dataset.taken = 'true';
    } else {
      label.textContent = `${colourName(c)}: ${t('free_seat')}`;
    }
    li.append(sw, label);
    if (!seat && me && room.seats.length <= room.settings.seats) {
      li.appendChild(button(t('take_colour', { colour: colourName(c) }), () => { S.wantColour = c; command('choose_colour', { colour: c }); }, null, 'small'));
    }
    ul.appendChild(li);
  }
  const creator = room.seats.find((s) => s.creator);
  const start = $('start-btn');
  start.hidden = !(me && me.creator);
  const bots = !!room.settings.bots; // bots fill the free seats at the start
  start.disabled = room.seats.length < 2 && !bots;
  $('room-status').textContent = room.seats.length < 2 && !bots
    ? t('need_two')
    : (me && me.creator ? '' : t('waiting_creator', { name: creator ? creator.name : '' }));
  $('room-spectators').textContent = t('spectators', { n: room.spectators || 0 });
}

function renderGame() {
  if (!board) board = createBoard($('board-wrap'));
  const actions = describedActions();
  const selectable = new Set(actions.map((d) => `${d.colour}:${d.piece}`));
  if (S.selected && !selectable.has(S.selected)) S.selected = null;
  const pieces = [];
  for (const c of COLOURS) {
    if (!S.pieces[c] || S.seatStatus[c] === 'abandoned') continue;
    S.pieces[c].forEach((at, i) => pieces.push({ colour: c, piece: i, at }));
  }
  const targets = actions
    .filter((d) => `${d.colour}:${d.piece}` === S.selected)
    .map((d) => ({ loc: d.to, colour: d.colour, label: d.label, capture: d.capture, key: d.key }));
  board.render({ pieces, selectable, selected: S.selected, targets, onPiece, onTarget: play, seq: S.seq, turn: S.turn });

  // Turn banner.
  const mine = S.myTurn && S.role === 'player';
  const banner = $('turn-banner');
  if (S.outcome) {
    banner.textContent = t(S.outcome.reason === 'forfeit' ? 'ev_won_forfeit' : 'ev_won', { colour: colourName(S.outcome.winner) });
  } else if (mine || (S.turn && S.turn === S.colour && S.role === 'player')) {
    banner.textContent = `${t('your_turn')} (${colourName(S.colour)})`;
  } else if (S.turn) {
    banner.textContent = `${t('turn_of', { colour: colourName(S.turn) })} · ${nameOf(S.turn)}`;
  }
  banner.className = `turn-banner${S.turn ? ` c-${S.turn}` : ''}`;
  banner.dataset.turn = S.turn || '';

  // Dice.
  const dice = $('dice');
  dice.replaceChildren();
  (S.dice || []).forEach((v, i) => {
    const d = document.createElement('span');
    d.className = `die${S.used[i] ? ' used' : ''}`;
    d.dataset.value = v;
    d.setAttribute('role', 'img');
    d.setAttribute('aria-label', `${v}${S.used[i] ? ` (${t('die_used')})` : ''}`);
    for (let p = 0; p < 9; p++) {
      const pip = document.createElement('i');
      if (PIPS[v].includes(p)) pip.className = 'pip';
      d.appendChild(pip);
    }
    dice.appendChild(d);
  });
  const roll = $('roll-btn');
  roll.disabled = !(mine && S.myTurn.must_roll);
  roll.hidden = S.role !== 'player' || !!S.outcome;

  // Prompt and the list of actions.
  const prompt = $('prompt');
  if (mine && !S.myTurn.must_roll) {
    if (S.myTurn.bonus) prompt.textContent = t('bonus_prompt', { n: S.myTurn.bonus });
    else if (S.selected) prompt.textContent = t('choose_target', { n: Number(S.selected.split(':')[1]) + 1 });
    else prompt.textContent = t('choose_piece');
    prompt.classList.toggle('bonus', !!S.myTurn.bonus);
  } else {
    prompt.textContent = '';
    prompt.classList.remove('bonus');
  }
  const list = $('action-list');
  list.replaceChildren();
  for (const d of actions) {
    const b = button(d.label, () => play(d.key), null, `action${d.capture ? ' capture' : ''}${d.action.type === 'bonus' ? ' bonus' : ''}`);
    b.dataset.kind = d.action.type;
    b.dataset.piece = d.piece;
    b.dataset.target = d.to;
    b.dataset.progress = d.progress;
    b.dataset.capture = d.capture ? '1' : '0';
    b.dataset.key = d.key;
    list.appendChild(b);
  }

  // Players.
  const pl = $('player-list');
  pl.replaceChildren();
  for (const seat of S.room.seats) {
    const li = document.createElement('li');
    li.className = `c-${seat.colour}${seat.colour === S.turn ? ' current' : ''}`;
    li.dataset.colour = seat.colour;
    const home = (S.pieces[seat.colour] || []).filter((l) => l === 'goal').length;
    const tags = [];
    if (seat.colour === S.colour && S.role === 'player') tags.push(t('you'));
    if (seat.bot) tags.push(t('bot_tag'));
    else if (!seat.connected && !seat.abandoned) tags.push(t('offline'));
    if (seat.abandoned) tags.push(t('abandoned'));
    li.innerHTML = '';
    const sw = document.createElement('span');
    sw.className = `swatch bg-${seat.colour}`;
    sw.setAttribute('aria-hidden', 'true');
    const txt = document.createElement('span');
    txt.textContent = `${colourName(seat.colour)} · ${seat.name}${tags.length ? ` (${tags.join(', ')})` : ''} · ${t('loc_goal')}: ${home}/4`;
    li.append(sw, txt);
    pl.appendChild(li);
  }
  $('game-spectators').textContent = t('spectators', { n: S.room.spectators || 0 });
  $('game-spectators').dataset.count = S.room.spectators || 0;
  $('spectating').hidden = S.role !== 'spectator';
  $('game-leave').textContent = S.outcome || S.role === 'spectator' ? t('back_lobby') : t('leave');
  tickClock();
  renderResult();
}

const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

function tickClock() {
  const cd = $('countdown');
  const bar = $('clock-bar');
  if (!S.deadline || S.outcome || !S.room || S.room.status !== 'playing') {
    cd.textContent = '';
    bar.style.width = '0';
    return;
  }
  const now = Date.now() + S.clockOffset;
  const left = Math.max(0, S.deadline - now);
  const total = (S.room.settings.turn_clock_secs || 15) * 1000;
  const secs = Math.ceil(left / 1000);
  cd.textContent = t('time_left', { s: secs });
  cd.dataset.left = String(secs);
  bar.style.width = `${Math.max(0, Math.min(100, (left / total) * 100))}%`;
  bar.classList.toggle('low', left < 5000);
}

function renderResult() {
  const el = $('result');
  if (!S.outcome) { el.hidden = true; return; }
  if (S.resultShown) return;
  S.resultShown = true;
  const w = S.outcome.winner;
  $('result-text').textContent = t(S.outcome.reason === 'forfeit' ? 'result_forfeit' : 'result_goal', { colour: colourName(w), name: nameOf(w) });
  $('result-text').className = `result-text c-${w}`;
  $('result-you').textContent = S.role === 'player' ? (S.colour === w ? t('you_won') : t('you_lost')) : '';
  const table = $('result-table');
  table.replaceChildren();
  const rows = S.room.seats.map((s) => ({ s, home: (S.pieces[s.colour] || []).filter((l) => l === 'goal').length }))
    .sort((a, b) => (b.s.colour === w) - (a.s.colour === w) || b.home - a.home);
  for (const { s, home } of rows) {
    const li = document.createElement('li');
    li.className = `c-${s.colour}`;
    li.textContent = `${colourName(s.colour)} · ${s.name} · ${t('loc_goal')}: ${home}/4`;
    table.appendChild(li);
  }
  el.hidden = false;
  $('result-lobby').focus();
}

// ----- wiring ------------------------------------------------------------------------

function retranslate() {
  translateDom();
  fillColourSelect($('colour-pref'));
  if (board) { $('board-wrap').replaceChildren(); board = null; }
  if (S.room) { S.resultShown = false; render(); } else loadLobbyLists();
}

function init() {
  document.documentElement.lang = getLang();
  translateDom();
  fillColourSelect($('colour-pref'));
  const name = store.get('parchis.name');
  if (name) $('name').value = name;

  $('lang-btn').addEventListener('click', () => { setLang(getLang() === 'es' ? 'en' : 'es'); retranslate(); });
  $('create-form').addEventListener('submit', createRoom);
  $('code-form').addEventListener('submit', (e) => { e.preventDefault(); enterRoom($('code').value, 'join'); });
  $('code-watch').addEventListener('click', () => enterRoom($('code').value, 'watch'));
  $('refresh-rooms').addEventListener('click', loadRooms);
  $('refresh-live').addEventListener('click', loadLiveGames);
  $('join-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const n = requireName($('join-name'));
    if (!n) return;
    startSession($('join-form').dataset.code, { kind: 'join', name: n, colour: $('join-colour').value || null });
  });
  $('join-watch').addEventListener('click', () => enterRoom($('join-form').dataset.code, 'watch'));
  $('join-back').addEventListener('click', () => { setUrl(null); show('lobby'); });
  $('copy-invite').addEventListener('click', async () => {
    const text = $('invite').value;
    try { await navigator.clipboard.writeText(text); } catch (_) {
      $('invite').select();
      try { document.execCommand('copy'); } catch (__) { /* ignore */ }
    }
    $('copy-invite').textContent = t('copied');
    setTimeout(() => { $('copy-invite').textContent = t('copy'); }, 1500);
  });
  $('start-btn').addEventListener('click', () => command('start'));
  $('room-leave').addEventListener('click', leaveRoom);
  $('game-leave').addEventListener('click', leaveRoom);
  $('roll-btn').addEventListener('click', () => {
    if (!S.myTurn || !S.myTurn.must_roll) return;
    command('roll');
    S.myTurn = null;
    render();
  });
  $('result-close').addEventListener('click', () => { $('result').hidden = true; });
  $('result-lobby').addEventListener('click', () => {
    if (conn) { conn.close(); conn = null; }
    S = freshState();
    setUrl(null);
    $('result').hidden = true;
    show('lobby');
  });
  $('home-link').addEventListener('click', (e) => {
    if (S.room) { e.preventDefault(); leaveRoom(); }
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && S.selected) { S.selected = null; render(); }
  });
  clockTimer = setInterval(tickClock, 250);

  const params = new URLSearchParams(location.search);
  const m = location.pathname.match(/^\/r\/([^/]+)/);
  const code = params.get('room') || (m && decodeURIComponent(m[1]));
  if (code) {
    enterRoom(code, params.get('watch') ? 'watch' : null);
  } else {
    show('lobby');
  }
}

// Test hook: read-only view of the client state (used by the browser test).
window.__parchis = {
  state: () => S,
  // Simulates a dropped network: closes the socket as a failure would; the client reconnects.
  drop: () => { if (conn && conn.ws) conn.ws.close(4999, 'test drop'); },
};

init();
