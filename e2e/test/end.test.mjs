// Browser test of the end of a game (desktop and phone): a player plays a whole game
// against a bot through the UI; the result screen offers a rematch and the replay; the
// replay viewer steps through the stored game forwards and backwards with the board, the
// dice and the log (checked against the server's positions); a finished room's invite
// link opens the replay; the rematch starts a new game with the same seats and settings
// (the bot agrees by itself). Screenshots in artifacts/e2e/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, shot, status, waitFor, act, boardPieces, PHONE, DESKTOP } from '../harness.mjs';

let env;
before(async () => { env = await setup({ seed: '4242' }); });
after(async () => { await teardown(env); });

const post = async (path, body) => (await fetch(`${env.base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();
const get = async (path) => (await fetch(`${env.base}${path}`)).json();

test('a whole game against a bot, the result screen, the replay viewer, the finished room link and a rematch', { timeout: 10 * 60 * 1000 }, async () => {
  const room = await post('/api/rooms', { seats: 2, bots: 'random', bot_think_ms: 0, turn_clock_secs: 600 });
  // A seeded client seed (with the server's seeded dice): the same game on every run.
  const p = await newPage(env, 'E', DESKTOP, { entropy: 'elena' });
  await p.goto(`${env.base}/?room=${room.code}`);
  await p.waitForSelector('#view-join:not([hidden])');
  await p.fill('#join-name', 'Elena');
  await p.selectOption('#join-colour', 'blue');
  await p.click('#join-btn');
  await p.waitForSelector('#view-room:not([hidden])');
  await p.click('#start-btn');
  await p.waitForSelector('#view-game:not([hidden])');
  let steps = 0;
  for (;;) {
    const st = await status(p);
    if (st.outcome) break;
    if (!st.myTurn) {
      const seq = st.seq;
      await waitFor(p, async () => { const s = await status(p); return s.seq > seq || s.myTurn || s.outcome; }, 'the bot', 20000);
      continue;
    }
    steps += 1;
    assert.ok(steps < 3000, 'the game ends');
    await act(p, st, 'list');
  }
  const first = await status(p);
  await p.waitForSelector('#result:not([hidden])');
  assert.ok(await p.isVisible('#result-rematch'), 'the result screen offers a rematch');
  assert.ok(await p.isVisible('#result-replay'), 'and the replay');
  await shot(p, 'result-with-rematch.png');

  // A finished room's invite link, opened by someone not seated there: the replay.
  const q = await newPage(env, 'Q', PHONE);
  await q.goto(`${env.base}/?room=${room.code}`);
  await q.waitForSelector('#view-replay:not([hidden])');
  const replay = await get(`/api/games/${first.gameId}/replay`);
  console.log(`# steps: ${steps}, replay steps: ${replay.steps.length}, outcome: ${JSON.stringify(first.outcome)}`);
  assert.ok(replay.steps.length > 20);
  await waitFor(q, async () => (await q.getAttribute('#replay-counter', 'data-step')) === String(replay.steps.length - 1), 'the replay at its end');
  const drawn = (r, i) => {
    const out = [];
    for (const pl of r.steps[i].position.players) {
      if (pl.status === 'abandoned') continue;
      pl.pieces.forEach((x, k) => out.push(`${pl.colour}:${k}:${x.at}`));
    }
    return out.sort();
  };
  assert.deepEqual(await boardPieces(q, '#replay-board svg.board'), drawn(replay, replay.steps.length - 1), 'the last step is the final position');
  await shot(q, 'replay-phone-end.png');
  // Backwards and forwards, move by move: the board is the server's position of each step.
  await q.click('#replay-first');
  assert.equal(await q.getAttribute('#replay-counter', 'data-step'), '0');
  assert.deepEqual(await boardPieces(q, '#replay-board svg.board'), drawn(replay, 0));
  for (let i = 1; i <= 6; i++) {
    await q.click('#replay-next');
    assert.equal(await q.getAttribute('#replay-counter', 'data-step'), String(i));
    assert.deepEqual(await boardPieces(q, '#replay-board svg.board'), drawn(replay, i), `step ${i}`);
  }
  await q.click('#replay-prev');
  assert.deepEqual(await boardPieces(q, '#replay-board svg.board'), drawn(replay, 5), 'one step back');
  assert.ok((await q.$$('#replay-log li')).length >= 3, 'the log up to the step');
  // A roll step shows the dice the server threw at it (which steps roll depends on the dice).
  const rollAt = replay.steps.findIndex((st, i) => i > 0 && Array.isArray(st.dice) && st.dice.length > 0);
  assert.ok(rollAt > 0, 'the game has a roll step');
  await q.click('#replay-first');
  for (let i = 1; i <= rollAt; i++) await q.click('#replay-next');
  assert.equal(await q.getAttribute('#replay-counter', 'data-step'), String(rollAt));
  const dice = await q.$$eval('#replay-dice .die', (ds) => ds.map((d) => Number(d.dataset.value)));
  assert.deepEqual(dice, replay.steps[rollAt].dice, 'the dice of the step are shown');
  await shot(q, 'replay-phone-step.png');

  // From the result screen: the replay of the game just played.
  await p.click('#result-replay');
  await p.waitForSelector('#view-replay:not([hidden])');
  await p.keyboard.press('ArrowLeft');
  assert.equal(await p.getAttribute('#replay-counter', 'data-step'), String(replay.steps.length - 2), 'arrow keys step');
  await shot(p, 'replay-desktop.png');

  // Back to the result screen (still in the room) and ask for a rematch: the bot agrees.
  await p.click('#replay-back');
  await p.waitForSelector('#result:not([hidden])');
  await p.click('#result-rematch');
  await waitFor(p, async () => { const s = await status(p); return s.gameId && s.gameId !== first.gameId && !s.outcome; }, 'the rematch to start');
  await p.waitForSelector('#view-game:not([hidden])');
  assert.ok(await p.isHidden('#result'), 'the result screen closes');
  const view = await get(`/api/rooms/${room.code}`);
  assert.equal(view.status, 'playing');
  assert.deepEqual(view.seats.map((s) => s.colour).sort(), ['blue', 'yellow'], 'the same colours');
  assert.ok(view.seats.some((s) => s.colour === 'blue' && s.name === 'Elena'), 'the same seat');
  assert.equal(view.settings.turn_clock_secs, 600, 'the same settings');
  const log = await p.$$eval('#log li', (ls) => ls.map((l) => l.textContent).join('\n'));
  assert.match(log, /¡Revancha!/);
  await shot(p, 'rematch-started.png');
  for (const x of [p, q]) assert.deepEqual(x.errors, [], `${x.tag} had no page errors`);
});
