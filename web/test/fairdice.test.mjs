// Unit tests of the browser's dice verifier (web/fairdice.js) with Node's Web Crypto:
// `node --test web/test/`. The games are built from the test vectors of
// docs/FAIR_DICE.md, so the JavaScript verifier agrees with the Rust one byte for byte.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { verifyGame, newClientSeed } from '../fairdice.js';

const DOC = readFileSync(fileURLToPath(new URL('../../docs/FAIR_DICE.md', import.meta.url)), 'utf8');
const NAMES = { Y: 'yellow', B: 'blue', R: 'red', G: 'green' };

/** The documented vectors: server seed, commitment, seeds, dice per throw, throws 0..7. */
function vectors() {
  const out = [];
  for (const block of DOC.split('```text vector').slice(1)) {
    const lines = block.split('```')[0].trim().split('\n');
    const field = (name) => lines.find((l) => l.startsWith(`${name} `)).slice(name.length + 1);
    const throws = new Map(lines.filter((l) => l.startsWith('throw ')).map((l) => {
      const [, k, dice] = l.split(' ');
      return [Number(k), dice.split(',').map(Number)];
    }));
    out.push({
      server_seed: field('server_seed'),
      commitment: field('commitment'),
      seeds: field('client_seeds').split(' ').map((p) => ({ colour: NAMES[p[0]], seed: p.slice(2) })),
      n: Number(field('dice')),
      throws,
    });
  }
  return out;
}

/** A games-API game whose throws are the vector's throws 0..7 (colours alternate). */
function gameOf(v) {
  const colours = v.seeds.map((s) => s.colour);
  const events = [{ seq: 1, event: { type: 'game_started', dice: { commitment: v.commitment } } }];
  for (let k = 0; k < 8; k++) {
    events.push({ seq: k + 2, event: { type: 'game', throw: k, event: { type: 'dice_rolled', colour: colours[k % colours.length], dice: v.throws.get(k) } } });
  }
  events.push({ seq: 10, event: { type: 'dice_revealed', server_seed: v.server_seed } });
  return {
    dice: { scheme: 'parchis-fair-dice-v1', mode: 'fair', commitment: v.commitment, client_seeds: v.seeds, dice_per_throw: v.n, server_seed: v.server_seed },
    events,
  };
}

test('the documented vectors verify in the browser code', async () => {
  const vs = vectors();
  assert.ok(vs.length >= 2);
  for (const v of vs) assert.deepEqual(await verifyGame(gameOf(v)), { status: 'verified', throws: 8 });
});

test('one die, the seed or the order tampered with fails at the right throw', async () => {
  const v = vectors()[0];
  const die = gameOf(v);
  const d = die.events[5].event.event.dice; // throw 4 (after game_started)
  d[1] = (d[1] % 6) + 1;
  const r = await verifyGame(die);
  assert.equal(r.status, 'failed');
  assert.equal(r.throw, 4);

  const seed = gameOf(v);
  seed.dice.server_seed = '11'.repeat(32);
  assert.equal((await verifyGame(seed)).status, 'failed');

  const order = gameOf(v);
  [order.events[2], order.events[3]] = [order.events[3], order.events[2]]; // throws 1 and 2
  const o = await verifyGame(order);
  assert.equal(o.status, 'failed');
  assert.equal(o.throw, 1);
});

test('a test-dice game is never verified, and a running game cannot be checked', async () => {
  const v = vectors()[0];
  const testDice = gameOf(v);
  testDice.dice.mode = 'test';
  assert.deepEqual(await verifyGame(testDice), { status: 'test' });
  const running = gameOf(v);
  delete running.dice.server_seed;
  running.events.pop();
  assert.equal((await verifyGame(running)).status, 'unavailable');
});

test('client seeds are 32 hex digits from getRandomValues', () => {
  const a = newClientSeed();
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.notEqual(a, newClientSeed());
});
