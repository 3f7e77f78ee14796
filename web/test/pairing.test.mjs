// Unit tests of quick pairing's reducer (web/pairing_state.js) against the contract:
// POST /api/pairing → 201 {ticket, status: "waiting", waiting_ms, window}; polls of
// GET /api/pairing/{ticket} every ~1.5 s → waiting or {status: "paired", room, colour};
// DELETE to cancel; then `claim` on the room's WebSocket.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { reducePairing, initialPairing, waitingSecs, POLL_MS } from '../pairing_state.js';

const run = (msgs, s = initialPairing()) => msgs.reduce((acc, m) => reducePairing(acc, m), s);

test('a request posts the pool asked for, and the 201 starts polling its ticket', () => {
  let s = reducePairing(initialPairing(), { type: 'request', preset: 'online', seats: 2, rated: true });
  assert.equal(s.phase, 'requesting');
  assert.deepEqual(s.fx, [{ type: 'post', body: { preset: 'online', seats: 2, rated: true } }]);
  s = reducePairing(s, { type: 'queued', ticket: 'T1', status: 'waiting', waiting_ms: 0, window: 100 });
  assert.equal(s.phase, 'waiting');
  assert.equal(s.ticket, 'T1');
  assert.equal(s.window, 100);
  assert.deepEqual(s.fx, [{ type: 'poll', ticket: 'T1', delay_ms: POLL_MS }]);
  assert.equal(POLL_MS, 1500);
});

test('a guest\'s name goes in the body; seats other than 4 are 2', () => {
  const s = reducePairing(initialPairing(), { type: 'request', preset: 'classic', seats: 3, rated: false, name: 'Ana' });
  assert.deepEqual(s.fx[0].body, { preset: 'classic', seats: 2, rated: false, name: 'Ana' });
});

test('waiting polls again with the widened window; paired claims the room once', () => {
  let s = run([
    { type: 'request', preset: 'online', seats: 4, rated: false },
    { type: 'queued', ticket: 'T2', waiting_ms: 0, window: 50 },
    { type: 'status', status: 'waiting', waiting_ms: 3200, window: 80 },
  ]);
  assert.equal(s.window, 80);
  assert.equal(waitingSecs(s), 3);
  assert.deepEqual(s.fx, [{ type: 'poll', ticket: 'T2', delay_ms: 1500 }]);
  const wide = reducePairing(s, { type: 'status', status: 'waiting', waiting_ms: 61000, window: null });
  assert.equal(wide.window, null, 'after 60 s the window is unlimited (null), not unchanged');
  s = reducePairing(s, { type: 'status', status: 'paired', room: 'ROOM9', colour: 'red' });
  assert.equal(s.phase, 'paired');
  assert.deepEqual(s.fx, [{ type: 'claim', room: 'ROOM9', colour: 'red', ticket: 'T2' }]);
  // A late poll answer changes nothing and claims nothing twice.
  const late = reducePairing(s, { type: 'status', status: 'paired', room: 'ROOM9', colour: 'red' });
  assert.deepEqual(late.fx, []);
  const done = reducePairing(s, { type: 'claimed' });
  assert.equal(done.phase, 'idle');
  assert.equal(done.ticket, null);
});

test('cancel deletes the ticket; a 201 arriving after a cancel gives its ticket back', () => {
  const waiting = run([{ type: 'request', preset: 'online', seats: 2, rated: false }, { type: 'queued', ticket: 'T3', waiting_ms: 0, window: 1 }]);
  const c = reducePairing(waiting, { type: 'cancel' });
  assert.equal(c.phase, 'idle');
  assert.deepEqual(c.fx, [{ type: 'delete', ticket: 'T3' }]);
  const early = run([{ type: 'request', preset: 'online', seats: 2, rated: false }, { type: 'cancel' }]);
  assert.deepEqual(early.fx, [], 'no ticket yet: nothing to delete');
  const late = reducePairing(early, { type: 'queued', ticket: 'T4', waiting_ms: 0, window: 1 });
  assert.equal(late.phase, 'idle');
  assert.deepEqual(late.fx, [{ type: 'delete', ticket: 'T4' }]);
});

test('failures: a guest in a rated pool (401) and an expired ticket (404) stop with a toast', () => {
  const guest = run([{ type: 'request', preset: 'online', seats: 2, rated: true }, { type: 'failed', status: 401, code: 'not_logged_in', message: 'log in' }]);
  assert.equal(guest.phase, 'idle');
  assert.deepEqual(guest.fx, [{ type: 'toast', code: 'not_logged_in', message: 'log in' }]);
  const gone = run([
    { type: 'request', preset: 'online', seats: 2, rated: false },
    { type: 'queued', ticket: 'T5', waiting_ms: 0, window: 1 },
    { type: 'failed', status: 404 },
  ]);
  assert.equal(gone.phase, 'idle');
  assert.equal(gone.fx[0].code, 'unknown_ticket');
  assert.deepEqual(reducePairing(initialPairing(), { type: 'failed', status: 500 }).fx, [], 'idle: nothing to stop');
});

test('one search at a time; the pools survive a search; no pairing on the server hides it', () => {
  let s = reducePairing(initialPairing(), { type: 'pools', pools: [{ preset: 'online', seats: 2, rated: true, waiting: 3 }] });
  assert.equal(s.available, true);
  s = run([{ type: 'request', preset: 'online', seats: 2, rated: false }, { type: 'request', preset: 'classic', seats: 4, rated: false }], s);
  assert.deepEqual(s.request, { preset: 'online', seats: 2, rated: false });
  assert.deepEqual(s.fx, []);
  s = reducePairing(s, { type: 'cancel' });
  assert.equal(s.pools[0].waiting, 3);
  const input = initialPairing();
  const frozen = JSON.stringify(input);
  assert.equal(reducePairing(input, { type: 'pools_unavailable' }).available, false);
  assert.equal(JSON.stringify(input), frozen, 'the input state is not changed');
});

test('a lobby closed 4006 polls the claimed ticket; expired with a new ticket waits on it, without one stops', () => {
  let s = run([
    { type: 'request', preset: 'online', seats: 2, rated: false },
    { type: 'queued', ticket: 'T7', waiting_ms: 0, window: 2 },
    { type: 'status', of: 'T7', status: 'paired', room: 'ROOM7', colour: 'red' },
    { type: 'claimed' },
  ]);
  assert.equal(s.phase, 'idle');
  assert.deepEqual(s.claimed, { ticket: 'T7', room: 'ROOM7', request: { preset: 'online', seats: 2, rated: false } });
  // Another room's close changes nothing.
  assert.deepEqual(reducePairing(s, { type: 'lobby_closed', room: 'OTHER' }).fx, []);
  s = reducePairing(s, { type: 'lobby_closed', room: 'ROOM7' });
  assert.equal(s.phase, 'waiting');
  assert.deepEqual(s.fx, [{ type: 'poll', ticket: 'T7', delay_ms: 0 }]);
  // The answer's `ticket` is the new one; `of` is the one polled.
  const back = reducePairing(s, { type: 'status', of: 'T7', status: 'expired', room: 'ROOM7', ticket: 'T8' });
  assert.equal(back.phase, 'waiting');
  assert.equal(back.ticket, 'T8');
  assert.deepEqual(back.fx, [{ type: 'toast', key: 'pairing_requeued' }, { type: 'poll', ticket: 'T8', delay_ms: 0 }]);
  const next = reducePairing(back, { type: 'status', of: 'T8', status: 'waiting', waiting_ms: 64000, window: null });
  assert.deepEqual(next.fx, [{ type: 'poll', ticket: 'T8', delay_ms: 1500 }]);
  const stopped = reducePairing(s, { type: 'status', of: 'T7', status: 'expired', room: 'ROOM7', ticket: null });
  assert.equal(stopped.phase, 'idle');
  assert.equal(stopped.claimed, null);
  assert.deepEqual(stopped.fx, [{ type: 'toast', key: 'pairing_expired' }]);
});

test('a poll that still says paired with the closed room (not settled yet) polls again, no claim', () => {
  let s = run([
    { type: 'request', preset: 'online', seats: 2, rated: false },
    { type: 'queued', ticket: 'T7', waiting_ms: 0, window: 2 },
    { type: 'status', of: 'T7', status: 'paired', room: 'ROOM7', colour: 'red' },
    { type: 'claimed' },
    { type: 'lobby_closed', room: 'ROOM7' },
  ]);
  // The server closes the room, then settles its tickets: a poll in between says paired.
  s = reducePairing(s, { type: 'status', of: 'T7', status: 'paired', room: 'ROOM7', colour: 'red' });
  assert.equal(s.phase, 'waiting');
  assert.equal(s.ticket, 'T7');
  assert.deepEqual(s.fx, [{ type: 'poll', ticket: 'T7', delay_ms: POLL_MS }]);
  s = reducePairing(s, { type: 'status', of: 'T7', status: 'expired', room: 'ROOM7', ticket: 'T8' });
  assert.equal(s.ticket, 'T8');
  assert.equal(s.closedRoom, null);
  assert.deepEqual(s.fx, [{ type: 'toast', key: 'pairing_requeued' }, { type: 'poll', ticket: 'T8', delay_ms: 0 }]);
  // Paired again, in another room: that one is claimed.
  s = reducePairing(s, { type: 'status', of: 'T8', status: 'paired', room: 'ROOM9', colour: 'blue' });
  assert.equal(s.phase, 'paired');
  assert.deepEqual(s.fx, [{ type: 'claim', room: 'ROOM9', colour: 'blue', ticket: 'T8' }]);
});
