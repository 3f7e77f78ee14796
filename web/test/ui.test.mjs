// Unit tests of the view helpers that need no DOM (web/ui.js): a seat's rating, which the
// room view may or may not carry yet (`rating`: a number or `{display}`), and a seat's
// shown name.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ratingText, displayName, playersText, unclaimedReserved } from '../ui.js';

test('a seat\'s rating is shown when the room view carries one, in either shape', () => {
  assert.equal(ratingText({ name: 'Ana_1', rating: 1012 }), ' · 1012');
  assert.equal(ratingText({ name: 'Ana_1', rating: { display: 990, mu: 25, sigma: 8 } }), ' · 990');
});

test('no rating, a null one or a malformed one shows nothing', () => {
  assert.equal(ratingText({ name: 'Ana' }), '');
  assert.equal(ratingText({ name: 'Ana', rating: null }), '');
  assert.equal(ratingText({ name: 'Ana', rating: { mu: 25 } }), '');
  assert.equal(ratingText({ name: 'Ana', rating: 'high' }), '');
  assert.equal(ratingText(null), '');
});

test('a person\'s seat shows its name (a logged-in player\'s is the username)', () => {
  assert.equal(displayName({ name: 'Ana_1', bot: null }), 'Ana_1');
  assert.equal(displayName(null), '');
});

test('a listed room shows its players: usernames, guests\' names, ratings and bots', () => {
  const room = {
    code: 'ABCD',
    players: [
      { colour: 'yellow', name: 'Ana_1', username: 'Ana_1', bot: false, rating: 1012 },
      { colour: 'red', name: 'Luis', username: null, bot: false },
    ],
  };
  assert.equal(playersText(room), 'Ana_1 · 1012, Luis');
  const withBot = { players: [{ colour: 'blue', name: 'Bot', username: null, bot: true }] };
  assert.match(playersText(withBot), /^Bot \(.+\)$/);
  assert.equal(playersText({ code: 'EFGH', players: [] }), '');
  assert.equal(playersText({ code: 'EFGH' }), '');
});

test('a room with reserved seats lists those not claimed yet; an ordinary room none', () => {
  const reserved = { seats: [{ colour: 'red', name: 'Paula' }, { colour: 'green', name: 'Hugo' }, { colour: 'blue', name: 'Bot', bot: true }], starts_when_seated: true };
  const room = { seats: [{ colour: 'red', name: 'Paula' }], reserved };
  assert.deepEqual(unclaimedReserved(room), [{ colour: 'green', name: 'Hugo', bot: false }, { colour: 'blue', name: 'Bot', bot: true }]);
  assert.deepEqual(unclaimedReserved({ ...room, seats: [{ colour: 'red' }, { colour: 'green' }, { colour: 'blue' }] }), []);
  assert.deepEqual(unclaimedReserved({ seats: [{ colour: 'red' }] }), [], 'no reservations: an ordinary room');
  assert.deepEqual(unclaimedReserved({ seats: [], reserved: { seats: [{ colour: 'red' }] } }), [{ colour: 'red', name: '', bot: false }], 'no name: shown as just reserved');
  assert.deepEqual(unclaimedReserved({ seats: [], reserved: {} }), []);
  assert.deepEqual(unclaimedReserved(null), []);
});
