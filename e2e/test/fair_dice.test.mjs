// Provably fair dice in the browser (docs/FAIR_DICE.md): a server with production dice
// (no PARCHIS_DICE_SEED). The creator's page generates and shows its client seed, two
// players play real throws through the UI, one leaves, and the result screen and the
// replay verify the finished game with Web Crypto: "dice verified".

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, shot, status, waitFor, act, DESKTOP, PHONE } from '../harness.mjs';

let env;
before(async () => { env = await setup({ seed: null }); });
after(async () => { await teardown(env); });

test('a finished game with fair dice shows "dice verified" on the result screen and in the replay', { timeout: 5 * 60 * 1000 }, async () => {
  const a = await newPage(env, 'A', DESKTOP);
  const b = await newPage(env, 'B', PHONE);
  await a.goto(env.base);
  await a.waitForSelector('#view-lobby:not([hidden])');
  await a.fill('#name', 'Ana');
  await a.selectOption('#seats', '2');
  await a.fill('#clock', '120');
  await a.selectOption('#colour-pref', 'yellow');
  await a.click('#create-btn');
  await a.waitForSelector('#view-room:not([hidden])');
  // The lobby shows our own client seed and the server's commitment.
  const fairLine = await waitFor(a, async () => {
    const text = await a.textContent('#room-fair');
    return /[0-9a-f]{32}/.test(text) ? text : null;
  }, 'the client seed in the lobby');
  const seed = fairLine.match(/[0-9a-f]{32}/)[0];
  assert.match(fairLine, /compromiso del servidor: [0-9a-f]{16}/);
  const invite = await a.inputValue('#invite');

  await b.goto(invite);
  await b.waitForSelector('#view-join:not([hidden])');
  await b.fill('#join-name', 'Benito');
  await b.selectOption('#join-colour', 'red');
  await b.click('#join-btn');
  await b.waitForSelector('#view-room:not([hidden])');
  await waitFor(a, async () => !(await a.isDisabled('#start-btn')), 'Start enabled');
  await a.click('#start-btn');
  await a.waitForSelector('#view-game:not([hidden])');
  await b.waitForSelector('#view-game:not([hidden])');

  // Real throws through the UI.
  const players = [a, b];
  let throws = 0;
  while (throws < 10) {
    const sts = await Promise.all(players.map(status));
    const i = sts.findIndex((s) => s.myTurn);
    if (i < 0) {
      await waitFor(a, async () => (await Promise.all(players.map(status))).some((s) => s.myTurn), 'someone to act');
      continue;
    }
    if (sts[i].myTurn.must_roll) throws += 1;
    await act(players[i], sts[i], 'list');
  }
  // Benito leaves: Ana wins by forfeit and the server reveals its seed.
  await b.click('#game-leave');
  await b.waitForSelector('#leave-dialog[open]');
  await b.click('#leave-confirm');
  await a.waitForSelector('#result:not([hidden])');
  await a.waitForSelector('#result-dice[data-status="verified"]', { timeout: 15000 });
  const verdict = await a.textContent('#result-dice');
  assert.match(verdict, /Dados verificados \(\d+ tiradas\)/);
  assert.equal(await a.getAttribute('#result-dice a', 'href'), '/FAIR_DICE.md');
  await shot(a, 'result-dice-verified.png');

  // The stored game carries our seed; the explanation is served where the link points.
  const { gameId } = await status(a);
  const game = await (await fetch(`${env.base}/api/games/${gameId}`)).json();
  assert.equal(game.dice.mode, 'fair');
  assert.deepEqual(game.dice.client_seeds[0], { colour: 'yellow', seed });
  assert.match(await (await fetch(`${env.base}/FAIR_DICE.md`)).text(), /parchis-fair-dice-v1/);

  // The replay of the game verifies it too.
  await a.click('#result-replay');
  await a.waitForSelector('#view-replay:not([hidden])');
  await a.waitForSelector('#replay-fair[data-status="verified"]', { timeout: 15000 });
  await shot(a, 'replay-dice-verified.png');
  for (const p of [a, b]) assert.deepEqual(p.errors, [], `${p.tag} had no page errors`);
});
