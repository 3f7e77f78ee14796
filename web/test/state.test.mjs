// Unit tests of the client's reducer (web/state.js) with Node's test runner:
// `node --test web/test/`. No browser: the reducer is a pure function.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reduce, initialState, describedActions, selectable, bottomColour, LOG_MAX } from '../state.js';

const settings = { preset: 'online', seats: 2, turn_clock_secs: 15, timeouts_to_abandon: 3, on_abandon: 'forfeit' };

function position({ yellow = ['nest', 'nest', 'nest', 'nest'], red = ['nest', 'nest', 'nest', 'nest'], turn = 'yellow', stage = { kind: 'roll' }, timeouts = {} } = {}) {
  const player = (colour, locs) => ({ colour, status: 'playing', pieces: locs.map((at) => ({ at })), timeouts: timeouts[colour] || 0 });
  return { rules: {}, players: [player('yellow', yellow), player('red', red)], turn, stage };
}

function view(extra = {}) {
  return {
    code: 'ROOM', settings, status: 'playing', spectators: 0, seq: 4,
    seats: [
      { colour: 'yellow', name: 'Ana', creator: true, connected: true, abandoned: false, bot: null },
      { colour: 'red', name: 'Greedy bot 1', creator: false, connected: false, abandoned: false, bot: 'greedy' },
    ],
    board: { safe_squares: [5, 12], exit_squares: [], last_ring_squares: [] },
    game: { game_id: 'G1', position: position(), deadline_ms: 1000, outcome: null },
    ...extra,
  };
}

/** A player seated as yellow in a running game, at seq 4. */
function seated() {
  let s = reduce(initialState(), { type: 'local:session', code: 'ROOM', intent: { kind: 'join', name: 'Ana' } });
  s = reduce(s, { type: 'local:sent', req: 1, kind: 'join' });
  s = reduce(s, { type: 'welcome', req: 1, room: 'ROOM', role: 'player', colour: 'yellow', token: 'T', seq: 4, snapshot: view() });
  return s;
}

const ev = (seq, event, extra = {}) => ({ type: 'event', room: 'ROOM', seq, at_ms: 5000, event, ...extra });
const game = (e) => ({ type: 'game', event: e });

test('the reducer never changes its input state', () => {
  const s = seated();
  const frozen = JSON.stringify(s);
  reduce(s, ev(5, game({ type: 'dice_rolled', colour: 'yellow', dice: [5, 3], doubles_in_row: 0 })));
  reduce(s, { type: 'local:select', piece: 'yellow:0' });
  assert.equal(JSON.stringify(s), frozen);
});

test('welcome with a snapshot draws the server position and asks to save the session', () => {
  const s = seated();
  assert.equal(s.role, 'player');
  assert.equal(s.colour, 'yellow');
  assert.equal(s.token, 'T');
  assert.equal(s.seq, 4);
  assert.deepEqual(s.pieces.yellow, ['nest', 'nest', 'nest', 'nest']);
  assert.equal(s.gameId, 'G1');
  assert.deepEqual(s.fx, [{ type: 'save_session' }]);
  assert.deepEqual(s.pending, {}, 'the join was answered');
});

test('after a batch the client draws the position the server sent, not its own idea', () => {
  let s = seated();
  s = reduce(s, ev(5, game({ type: 'dice_rolled', colour: 'yellow', dice: [5, 3], doubles_in_row: 0 })));
  assert.deepEqual(s.lastRoll.yellow, [5, 3]);
  assert.deepEqual(s.dice, [5, 3]);
  s = reduce(s, ev(6, game({ type: 'piece_exited', colour: 'yellow', piece: 0, square: 5 })));
  assert.equal(s.pieces.yellow[0], '5', 'the event says where the piece went');
  // The last frame of the batch carries the position: it wins over anything else.
  const after = position({ yellow: ['5', 'nest', 'nest', 'nest'], stage: { kind: 'move', dice: [5, 3], used: [true, false] } });
  s = reduce(s, ev(7, { type: 'turn', colour: 'yellow', deadline_ms: 9000 }, { position: after }));
  assert.deepEqual(s.used, [true, false]);
  assert.equal(s.deadline, 9000);
  assert.deepEqual(s.position, after);
  assert.deepEqual(s.lastMove.yellow, { piece: 0, from: 'nest', to: '5', path: ['5'], captures: [] });
});

test('dice the server says are lost are drawn used, and the pending bonus shown', () => {
  let s = seated();
  const lost = position({ yellow: ['g', '11', 'g', 'g'], stage: { kind: 'move', dice: [1, 6], used: [true, false], bonus: [10], dice_lost: true } });
  s = reduce(s, ev(5, { type: 'turn', colour: 'yellow', deadline_ms: 9000 }, { position: lost }));
  assert.deepEqual(s.used, [true, true]);
  assert.equal(s.bonus, 10);
});

test('a move is animated along the path the server sent, and a capture is marked and heard', () => {
  let s = seated();
  s = reduce(s, ev(5, game({ type: 'piece_moved', colour: 'yellow', piece: 1, from: '8', to: '11', steps: 3, by: 'die', bounced: false }), { path: ['9', '10', '11'] }));
  assert.deepEqual(s.fx, [{ type: 'animate', colour: 'yellow', piece: 1, from: '8', path: ['9', '10', '11'] }]);
  s = reduce(s, ev(6, game({ type: 'piece_captured', colour: 'red', piece: 0, square: 11, by: 'yellow' })));
  assert.deepEqual(s.lastMove.yellow.captures, ['11']);
  assert.equal(s.pieces.red[0], 'nest');
  assert.deepEqual(s.fx, [{ type: 'sound', name: 'capture' }, { type: 'captured', colour: 'red', piece: 0, from: '11' }]);
  s = reduce(s, ev(7, game({ type: 'bonus_earned', colour: 'yellow', amount: 20, reason: 'capture' })));
  const last = s.log[s.log.length - 1];
  assert.equal(last.key, 'ev_captured');
  assert.equal(last.p.counts, 20, 'the bonus is told with the capture');
});

test('your_turn offers the previews as actions; the only movable piece is chosen; tapping it again keeps it', () => {
  let s = seated();
  const preview = (piece, die, to, captures = []) => ({
    action: { type: 'move', piece, die }, colour: 'yellow', piece, from: '5', to, path: [to], steps: die === 6 ? 7 : die,
    bounced: false, captures, bonus: captures.length ? 20 : null, goal: false, position: position(),
  });
  const turn = { type: 'your_turn', room: 'ROOM', seq: 4, colour: 'yellow', must_roll: false, dice: [6, 3], used: [false, false], bonus: null,
    legal: [{ type: 'move', piece: 0, die: 6 }, { type: 'move', piece: 0, die: 3 }],
    previews: [preview(0, 6, '12'), preview(0, 3, '8', [{ colour: 'red', piece: 1 }])], deadline_ms: 99 };
  s = reduce(s, turn);
  const acts = describedActions(s);
  assert.equal(acts.length, 2);
  assert.equal(acts[0].to, '12', 'a six that counts 7 lands where the server says');
  assert.equal(acts[0].steps, 7);
  assert.equal(acts[1].capture, true);
  assert.deepEqual([...selectable(s)], ['yellow:0']);
  assert.equal(s.selected, 'yellow:0');
  s = reduce(s, { type: 'local:select', piece: 'yellow:0' });
  assert.equal(s.selected, 'yellow:0', 'no deselect trap');
  s = reduce(s, { type: 'local:select', piece: 'red:1' });
  assert.equal(s.selected, 'yellow:0', 'a piece that cannot move is not chosen');
  s = reduce(s, { type: 'local:played' });
  assert.equal(s.myTurn, null);
  assert.equal(describedActions(s).length, 0);
});

test('a new throw to roll plays the turn sound and flashes the title, once', () => {
  let s = seated();
  const turn = { type: 'your_turn', room: 'ROOM', seq: 4, colour: 'yellow', must_roll: true, dice: null, used: [false, false], bonus: null, legal: [], previews: [], deadline_ms: 99 };
  s = reduce(s, turn);
  assert.deepEqual(s.fx, [{ type: 'sound', name: 'turn' }, { type: 'my_turn' }]);
  s = reduce(s, turn);
  assert.deepEqual(s.fx, [], 'the same prompt again (after a refusal) is not announced twice');
});

test('timeouts are counted per player from the server', () => {
  let s = seated();
  s = reduce(s, ev(5, game({ type: 'timed_out', colour: 'yellow', consecutive: 2 })));
  assert.equal(s.timeouts.yellow, 2);
  const last = s.log[s.log.length - 1];
  assert.deepEqual([last.key, last.p.n, last.p.max], ['ev_timeout', 2, 3]);
  s = reduce(s, ev(6, { type: 'turn', colour: 'red', deadline_ms: 1 }, { position: position({ timeouts: { yellow: 2 }, turn: 'red' }) }));
  assert.equal(s.timeouts.yellow, 2);
});

test('a gap in the stream asks for a resync and applies nothing; old events are ignored', () => {
  const s = seated();
  const gap = reduce(s, ev(9, game({ type: 'dice_rolled', colour: 'yellow', dice: [1, 1], doubles_in_row: 1 })));
  assert.deepEqual(gap.fx, [{ type: 'resync' }]);
  assert.equal(gap.seq, 4);
  const old = reduce(s, ev(3, game({ type: 'dice_rolled', colour: 'yellow', dice: [1, 1], doubles_in_row: 1 })));
  assert.equal(old.dice, null);
});

test('a refused play offers the same choices again', () => {
  let s = seated();
  const turn = { type: 'your_turn', room: 'ROOM', seq: 4, colour: 'yellow', must_roll: true, dice: null, used: [false, false], bonus: null, legal: [], previews: [], deadline_ms: 99 };
  s = reduce(s, turn);
  s = reduce(s, { type: 'local:sent', req: 7, kind: 'roll' });
  s = reduce(s, { type: 'local:played' });
  assert.equal(s.myTurn, null);
  s = reduce(s, { type: 'error', req: 7, code: 'rate_limited', message: 'slow down' });
  assert.equal(s.myTurn.must_roll, true);
  assert.deepEqual(s.fx, [{ type: 'toast', code: 'rate_limited', message: 'slow down' }]);
});

test('the log is data (keys and parameters, translated when drawn) and bounded', () => {
  let s = seated();
  for (let i = 0; i < LOG_MAX + 20; i++) {
    s = reduce(s, ev(5 + i, game({ type: 'roll_again', colour: 'red' })));
  }
  assert.equal(s.log.length, LOG_MAX);
  assert.deepEqual(s.log[0], { key: 'ev_again', p: { colour: { c: 'red' } }, cls: 'c-red' });
});

test('the board turns to your colour; spectators see the first player at the bottom', () => {
  const s = seated();
  assert.equal(bottomColour({ ...s, colour: 'red' }), 'red');
  const w = reduce(initialState(), { type: 'local:session', code: 'ROOM', intent: { kind: 'watch' }, view: view({ seats: [{ colour: 'green', name: 'G', creator: true }, { colour: 'blue', name: 'B', creator: false }] }) });
  assert.equal(w.role, null);
  assert.equal(bottomColour(w), 'green');
});

test('the game ends with the winner; a rematch resets the room for the next game', () => {
  let s = seated();
  s = reduce(s, ev(5, game({ type: 'game_won', winner: 'yellow', reason: 'goal' })));
  assert.deepEqual(s.outcome, { winner: 'yellow', reason: 'goal', partner: null });
  assert.equal(s.room.status, 'finished');
  s = reduce(s, ev(6, { type: 'rematch_wanted', colour: 'yellow' }));
  assert.deepEqual(s.rematch.wanted, ['yellow']);
  s = reduce(s, ev(7, { type: 'rematch' }));
  assert.equal(s.outcome, null);
  assert.deepEqual(s.rematch.wanted, []);
  s = reduce(s, ev(8, { type: 'game_started', game_id: 'G2', first: 'red', position: position({ turn: 'red' }) }));
  assert.equal(s.gameId, 'G2');
  assert.equal(s.room.status, 'playing');
  assert.deepEqual(s.lastMove, {});
});

test('a resume error on an unknown seat falls back to watching', () => {
  let s = reduce(initialState(), { type: 'local:session', code: 'ROOM', intent: { kind: 'resume' }, saved: { token: 'OLD', colour: 'red' }, view: view() });
  assert.equal(s.seq, 0, 'a resume replays the stream from the start');
  s = reduce(s, { type: 'local:sent', req: 1, kind: 'resume' });
  s = reduce(s, { type: 'error', req: 1, code: 'bad_token', message: 'no' });
  assert.equal(s.token, null);
  assert.deepEqual(s.fx.map((f) => f.type), ['forget_session', 'send', 'toast']);
  assert.deepEqual(s.fx[1].msg, { type: 'watch', room: 'ROOM' });
});

test('a snapshot in the middle of a throw shows it as the current player\'s last roll', () => {
  const v = view();
  v.game.position = position({ turn: 'red', stage: { kind: 'move', dice: [4, 2] } });
  const s = reduce(initialState(), { type: 'local:session', code: 'ROOM', intent: { kind: 'watch' }, view: v });
  assert.deepEqual(s.lastRoll, { red: [4, 2] });
  assert.deepEqual(s.dice, [4, 2]);
  assert.deepEqual(s.used, [false, false]);
});

test('a piece reaching the goal plays the goal sound; the end of the game the win sound', () => {
  let s = seated();
  s = reduce(s, ev(5, game({ type: 'piece_moved', colour: 'red', piece: 2, from: 'h5', to: 'goal', steps: 3, by: 'die', bounced: false }), { path: ['h6', 'h7', 'goal'] }));
  assert.deepEqual(s.fx.map((f) => f.type === 'sound' ? f.name : f.type), ['animate', 'goal']);
  s = reduce(s, ev(6, game({ type: 'game_won', winner: 'red', reason: 'goal' })));
  assert.deepEqual(s.fx, [{ type: 'sound', name: 'win' }]);
});

test('an unknown outcome makes the client reconnect and resume, with no toast', () => {
  let s = seated();
  s = reduce(s, { type: 'local:sent', req: 8, kind: 'play' });
  s = reduce(s, { type: 'error', req: 8, code: 'outcome_unknown', message: 'may have been applied' });
  assert.deepEqual(s.fx.map((f) => f.type), ['reconnect']);
});

// ----- issue 29: emotes, the takeover countdown, captures ------------------------------

import { awayCountdowns, EMOTES_MAX } from '../state.js';

test('emotes are kept (the newest few) with an effect each, and none while muted', () => {
  let s = seated();
  s = reduce(s, { type: 'emote', room: 'ROOM', colour: 'red', emote: 'good_luck' });
  assert.deepEqual(s.emotes, [{ colour: 'red', emote: 'good_luck', n: 1 }]);
  assert.deepEqual(s.fx, [{ type: 'emote', colour: 'red', emote: 'good_luck', n: 1 }]);
  for (let i = 0; i < EMOTES_MAX + 2; i++) s = reduce(s, { type: 'emote', room: 'ROOM', colour: 'yellow', emote: 'wow' });
  assert.equal(s.emotes.length, EMOTES_MAX);
  assert.equal(s.emotes[s.emotes.length - 1].n, EMOTES_MAX + 3);
  s = reduce(s, { type: 'local:mute_emotes', muted: true });
  assert.deepEqual(s.emotes, [], 'muting clears the shown emotes');
  s = reduce(s, { type: 'emote', room: 'ROOM', colour: 'red', emote: 'oops' });
  assert.deepEqual(s.emotes, []);
  assert.deepEqual(s.fx, [], 'no effect (no sound) while muted');
  // The choice outlives the session.
  s = reduce(s, { type: 'local:session', code: 'OTHER', intent: { kind: 'watch' } });
  assert.equal(s.emotesMuted, true);
});

test('the takeover countdown comes from presence.away and ends with the bot', () => {
  let s = seated();
  s.room.settings = { ...s.room.settings, on_abandon: 'bot' };
  s.room.seats.push({ colour: 'blue', name: 'Bea', creator: false, connected: true, abandoned: false, bot: null });
  s = reduce(s, { type: 'presence', room: 'ROOM', seq: 4, connected: ['yellow'], spectators: 0, away: [{ colour: 'blue', until_ms: 61_000 }] });
  assert.deepEqual(s.away, { blue: 61_000 });
  assert.deepEqual(awayCountdowns(s, 1_000), [{ colour: 'blue', secs: 60, what: 'bot' }]);
  assert.deepEqual(awayCountdowns(s, 60_500), [{ colour: 'blue', secs: 1, what: 'bot' }]);
  assert.deepEqual(awayCountdowns(s, 70_000), [{ colour: 'blue', secs: 0, what: 'bot' }]);
  s = reduce(s, ev(5, { type: 'bot_took_over', colour: 'blue', level: 'greedy', reason: 'disconnected' }));
  assert.deepEqual(s.away, {});
  assert.deepEqual(awayCountdowns(s, 1_000), []);
  // A forfeit room says so; a snapshot's seats carry the same deadline.
  const v = view();
  v.settings = { ...settings, on_abandon: 'forfeit' };
  v.seats[0] = { ...v.seats[0], connected: false, away_until_ms: 30_000 };
  let w = reduce(initialState(), { type: 'local:session', code: 'ROOM', intent: { kind: 'watch' }, view: v });
  assert.deepEqual(awayCountdowns(w, 0), [{ colour: 'yellow', secs: 30, what: 'forfeit' }]);
  // The player came back: presence without it.
  w = reduce(w, { type: 'presence', room: 'ROOM', seq: 4, connected: ['yellow'], spectators: 1 });
  assert.deepEqual(awayCountdowns(w, 0), []);
});

test('a capture stays marked through the capturer\'s turn (its bonus, a roll again) and the others\', with a banner and its amount', () => {
  let s = seated();
  s = reduce(s, ev(5, game({ type: 'piece_captured', by: 'yellow', colour: 'red', piece: 2, square: 30 })));
  assert.deepEqual(s.lastCapture, { by: 'yellow', colour: 'red', piece: 2, square: '30', passed: false });
  assert.deepEqual(s.captureBanner, { by: 'yellow', colour: 'red', amount: null, n: 5 });
  assert.ok(s.fx.some((f) => f.type === 'captured' && f.colour === 'red' && f.piece === 2 && f.from === '30'));
  s = reduce(s, ev(6, game({ type: 'bonus_earned', colour: 'yellow', amount: 20, reason: 'capture' })));
  assert.equal(s.captureBanner.amount, 20);
  s = reduce(s, ev(7, game({ type: 'piece_moved', colour: 'yellow', piece: 0, from: '30', to: '50', steps: 20, by: 'bonus', bounced: false })));
  assert.equal(s.lastCapture.square, '30', 'the bonus move keeps the mark');
  s = reduce(s, ev(8, game({ type: 'dice_rolled', colour: 'yellow', dice: [6], doubles_in_row: 0 })));
  assert.equal(s.lastCapture.square, '30', 'the capturer rolling again in the same turn keeps it');
  s = reduce(s, ev(9, game({ type: 'turn_passed', from: 'yellow', to: 'red' })));
  s = reduce(s, ev(10, game({ type: 'dice_rolled', colour: 'red', dice: [1, 2], doubles_in_row: 0 })));
  assert.equal(s.lastCapture.square, '30', 'the victim\'s turn keeps it');
  s = reduce(s, ev(11, game({ type: 'turn_passed', from: 'red', to: 'yellow' })));
  s = reduce(s, ev(12, game({ type: 'dice_rolled', colour: 'yellow', dice: [1, 2], doubles_in_row: 0 })));
  assert.equal(s.lastCapture, null, 'the capturer\'s next turn clears it');
  s = reduce(s, { type: 'local:capture_seen' });
  assert.equal(s.captureBanner, null);
});

test('quick pairing: a claim is answered like a join; a refused claim stops the session', () => {
  let s = reduce(initialState(), { type: 'local:session', code: 'ROOM', intent: { kind: 'claim', ticket: 'T1' } });
  assert.deepEqual(s.intent, { kind: 'claim', ticket: 'T1' });
  s = reduce(s, { type: 'local:sent', req: 1, kind: 'claim' });
  const seated = reduce(s, { type: 'welcome', req: 1, room: 'ROOM', role: 'player', colour: 'red', token: 'TK', seq: 4, snapshot: view() });
  assert.equal(seated.role, 'player');
  assert.equal(seated.colour, 'red');
  assert.equal(seated.token, 'TK');
  assert.deepEqual(seated.fx, [{ type: 'save_session' }]);
  const refused = reduce(s, { type: 'error', req: 1, code: 'seat_reserved', message: 'not yours' });
  assert.deepEqual(refused.fx, [{ type: 'stop', code: 'seat_reserved', message: 'not yours', kind: 'claim' }]);
});

test('resuming an account\'s seat from another device starts from the room view, with no token', () => {
  const s = reduce(initialState(), { type: 'local:session', code: 'ROOM', intent: { kind: 'resume_account' }, saved: null, view: view() });
  assert.equal(s.token, null);
  assert.equal(s.role, null, 'not a player until the server says so');
  assert.equal(s.seq, 4, 'events after the room view\'s seq come next');
  assert.equal(s.room.seats.length, 2);
});

test('a renamed seat shows its new name; another room\'s rename changes nothing', () => {
  let s = seated();
  s = reduce(s, { type: 'renamed', room: 'OTHER', colour: 'yellow', name: 'Nope' });
  assert.equal(s.room.seats[0].name, 'Ana');
  s = reduce(s, { type: 'renamed', room: 'ROOM', colour: 'yellow', name: 'Ana_Nueva' });
  assert.deepEqual(s.room.seats.map((x) => x.name), ['Ana_Nueva', 'Greedy bot 1']);
  assert.deepEqual(s.fx, []);
});

test('a seat\'s new rating shows at once; another room\'s rating changes nothing', () => {
  let s = seated();
  s.room.seats[0].rating = 1012;
  s = reduce(s, { type: 'rating', room: 'OTHER', colour: 'yellow', rating: 1500 });
  assert.equal(s.room.seats[0].rating, 1012);
  s = reduce(s, { type: 'rating', room: 'ROOM', colour: 'yellow', rating: 1043 });
  assert.equal(s.room.seats[0].rating, 1043);
  s = reduce(s, { type: 'rating', room: 'ROOM', colour: 'yellow' });
  assert.equal(s.room.seats[0].rating, undefined, 'no rating in the pool: none shown');
  assert.deepEqual(s.fx, []);
});

test('a room view\'s reservations are kept in the state; an ordinary room has none', () => {
  const reserved = { seats: [{ colour: 'yellow', name: 'Ana' }, { colour: 'red', name: 'Hugo' }], starts_when_seated: true };
  let s = reduce(initialState(), { type: 'local:session', code: 'ROOM', intent: { kind: 'join', name: 'Ana' } });
  s = reduce(s, { type: 'local:sent', req: 1, kind: 'join' });
  const lobby = view({ status: 'lobby', game: null, seats: [view().seats[0]], reserved });
  const claimed = reduce(s, { type: 'welcome', req: 1, room: 'ROOM', role: 'player', colour: 'yellow', token: 'T', seq: 4, snapshot: lobby });
  assert.deepEqual(claimed.room.reserved, reserved);
  assert.equal('reserved' in seated().room, false);
});
