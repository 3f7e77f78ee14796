// End-to-end browser test of the web client: the real server binary, Debian's chromium
// driven by playwright-core. Two players create and join a room through the UI and play
// real turns (roll, select a piece, click the target square) until a capture and a piece
// reaching the goal have happened; a spectator sees the same board; a reload mid-game
// resumes the same seat. Screenshots go to ../artifacts/e2e/.
//
// Run with `bash e2e/run.sh` (installs chromium and npm deps, builds the server).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage as page0, shot, status, boardPieces, waitFor as wait0, settle, act } from '../harness.mjs';

const MAX_THROWS = Number(process.env.PARCHIS_E2E_MAX_THROWS || 1500);
let env;
before(async () => { env = await setup(); });
after(async () => { await teardown(env); });
const newPage = (name, viewport, opts) => page0(env, name, viewport, opts);
const waitFor = (fn, what, ms) => wait0({ env }, fn, what, ms);
let base;

test('two players create, join and play; a spectator watches; a reload resumes', { timeout: 15 * 60 * 1000 }, async () => {
  base = env.base;
  // Seeded client seeds (with the server's seeded dice): the same game on every run.
  const a = await newPage('A', { width: 1280, height: 900 }, { entropy: 'ana' });
  const b = await newPage('B', { width: 390, height: 844 }, { entropy: 'benito' });
  const c = await newPage('C', { width: 1024, height: 800 });

  // --- Lobby: A creates a two-seat room. ---
  await a.goto(base);
  await a.waitForSelector('#view-lobby:not([hidden])');
  assert.equal(await a.getAttribute('html', 'lang'), 'es');
  assert.equal((await a.textContent('#create-btn')).trim(), 'Crear sala');
  await a.fill('#name', 'Ana');
  await a.selectOption('#seats', '2');
  await a.fill('#clock', '120');
  await a.selectOption('#colour-pref', 'yellow');
  await shot(a, 'lobby.png');
  await a.click('#create-btn');
  await a.waitForSelector('#view-room:not([hidden])');
  const invite = await a.inputValue('#invite');
  const code = new URL(invite).searchParams.get('room');
  assert.match(code, /^[0-9A-Z]{10}$/);
  assert.ok(await a.isVisible('#start-btn'), 'the creator sees Start');
  assert.ok(await a.isDisabled('#start-btn'), 'Start needs two players');

  // The public list shows the room.
  const list = await (await fetch(`${base}/api/rooms`)).json();
  assert.ok(list.rooms.some((r) => r.code === code));

  // --- B opens the invite link on a phone-sized screen and joins as red, then picks green. ---
  await b.goto(invite);
  await b.waitForSelector('#view-join:not([hidden])');
  await b.fill('#join-name', 'Benito');
  await b.selectOption('#join-colour', 'red');
  await b.click('#join-btn');
  await b.waitForSelector('#view-room:not([hidden])');
  await b.click('#colour-change button[data-colour="green"]'); // the free colours, as buttons
  await waitFor(async () => (await status(b)).colour === 'green', 'B to be green');
  await waitFor(async () => (await a.textContent('#seat-list li[data-colour="green"]')).includes('Benito'), 'A to see B on green');
  assert.ok(!(await b.isVisible('#start-btn')), 'only the creator sees Start');
  await shot(a, 'room.png');
  await shot(b, 'room-phone.png');

  // --- A starts; C opens the same link and watches. ---
  await a.click('#start-btn');
  await a.waitForSelector('#view-game:not([hidden])');
  await b.waitForSelector('#view-game:not([hidden])');
  await c.goto(`${base}/r/${code}`);
  await c.waitForSelector('#view-game:not([hidden])');
  assert.equal((await status(c)).role, 'spectator');
  await waitFor(async () => (await a.textContent('#game-spectators')).includes('1'), 'A to count one spectator');
  assert.match(await a.textContent('#countdown'), /Tiempo: \d+ s/);

  // --- Play. ---
  const players = [a, b];
  let throws = 0; let steps = 0; let reloaded = false; let dropped = false; let compared = 0; let screenshotted = false;
  let captured = false; let goal = false; let previewsChecked = 0;
  while (throws < MAX_THROWS) {
    const sts = await Promise.all(players.map(status));
    if (sts.some((s) => s.outcome)) break;
    captured ||= await a.$('#log li.capture') !== null;
    goal ||= Object.values(sts[0].pieces).some((locs) => locs.includes('goal'));
    if (captured && goal) break;
    const i = sts.findIndex((s) => s.myTurn);
    if (i < 0) {
      await waitFor(async () => (await Promise.all(players.map(status))).some((s) => s.myTurn || s.outcome), 'someone to act');
      continue;
    }
    if (sts[i].myTurn.must_roll) throws += 1;
    steps += 1;
    const played = await act(players[i], sts[i], steps % 5 === 0 ? 'list' : steps % 7 === 0 ? 'keyboard' : 'board');
    if (played) {
      assert.equal(played.landed, played.target, `the piece lands on the previewed square: ${JSON.stringify(played)}`);
      previewsChecked += 1;
    }

    if (!screenshotted && throws >= 12) {
      screenshotted = true;
      await settle([a, b, c]);
      await shot(a, 'game.png');
      await shot(b, 'game-phone.png');
      await shot(c, 'game-spectator.png');
    }
    if (!reloaded && throws >= 16) {
      // --- Reload B mid-game: it resumes the same seat with the stored token. ---
      reloaded = true;
      const beforeSt = await status(b);
      await b.reload();
      await b.waitForSelector('#view-game:not([hidden])');
      await waitFor(async () => {
        const s = await status(b);
        return s.role === 'player' && s.colour === beforeSt.colour;
      }, 'B to resume its seat after the reload');
      await settle([a, b, c]);
      assert.deepEqual(await boardPieces(b), await boardPieces(a), 'after the reload B sees the same board');
      assert.ok((await b.$$('#log li')).length > 0, 'the resumed client rebuilt its event log');
      await shot(b, 'game-after-reload.png');
    }
    if (!dropped && throws >= 24) {
      // --- A dropped connection (player and spectator) reconnects by itself. ---
      dropped = true;
      await b.evaluate(() => window.__parchis.drop());
      await c.evaluate(() => window.__parchis.drop());
      await waitFor(async () => (await b.getAttribute('#conn-status', 'data-state')) === 'open'
        && (await c.getAttribute('#conn-status', 'data-state')) === 'open', 'B and C to reconnect');
      await settle([a, b, c]);
      assert.equal((await status(b)).role, 'player');
      assert.deepEqual(await boardPieces(c), await boardPieces(a), 'the spectator is back on the same board');
      // English is available (the spectator switches and back).
      await c.click('#lang-btn');
      assert.match(await c.textContent('#game-spectators'), /^Spectators: \d+$/);
      assert.equal(await c.getAttribute('html', 'lang'), 'en');
      await shot(c, 'game-spectator-en.png');
      await c.click('#lang-btn');
      assert.match(await c.textContent('#game-spectators'), /^Espectadores: \d+$/);
    }
    if (steps % 40 === 0) {
      await settle([a, b, c]);
      const pa = await boardPieces(a);
      assert.deepEqual(await boardPieces(b), pa, 'both players see the same board');
      assert.deepEqual(await boardPieces(c), pa, 'the spectator sees the same board');
      compared += 1;
    }
  }

  await settle([a, b, c]);
  const pa = await boardPieces(a);
  assert.deepEqual(await boardPieces(b), pa, 'both players see the same board at the end');
  assert.deepEqual(await boardPieces(c), pa, 'the spectator sees the same board at the end');
  const logText = (await a.$$eval('#log li', (ls) => ls.map((l) => l.textContent))).join('\n');
  await shot(a, 'game-final.png');
  await shot(c, 'spectator-final.png');
  const final = await status(a);
  console.log(`# throws: ${throws}, steps: ${steps}, board comparisons: ${compared}, outcome: ${JSON.stringify(final.outcome)}`);
  assert.ok(reloaded, 'the reload happened mid-game');
  assert.ok(previewsChecked >= 20, `previews checked against landings: ${previewsChecked}`);
  if (!final.outcome) {
    assert.ok(captured, 'a capture happened');
    assert.match(logText, /(Amarillo|Verde) come a (Amarillo|Verde) en la casilla \d+ y cuenta 20/);
    assert.ok(goal, 'a piece reached the goal');
    assert.match(logText, /mete una ficha en la meta y cuenta 10/);
  }
  if (!final.outcome) {
    // --- B leaves mid-game: with two players the game ends by forfeit (R-LEAVE). ---
    await b.click('#game-leave');
    await b.waitForSelector('#leave-dialog[open]');
    assert.match(await b.textContent('#leave-text'), /abandonas.*pierdes la partida/);
    await shot(b, 'leave-dialog-phone.png');
    await b.click('#leave-confirm');
    await b.waitForSelector('#view-lobby:not([hidden])');
  }
  await a.waitForSelector('#result:not([hidden])');
  await c.waitForSelector('#result:not([hidden])');
  // Seeded test dice are checked but never claimed verified (docs/FAIR_DICE.md).
  await a.waitForSelector('#result-dice[data-status="test"]');
  assert.match(await a.textContent('#result-dice'), /dados de prueba: no verificables/);
  const resultText = await a.textContent('#result-text');
  assert.match(resultText, /^¡Gana (Amarillo|Verde) \((Ana|Benito)\)/);
  if (!final.outcome) {
    assert.equal(resultText, '¡Gana Amarillo (Ana) por abandono!');
    assert.equal(await a.textContent('#result-you'), '¡Has ganado!');
  }
  await shot(a, 'result.png');
  await shot(c, 'result-spectator.png');
  for (const p of [a, b, c]) assert.deepEqual(p.errors, [], `${p.tag} had no page errors`);
});

test('one player against the computer: bots fill the free seats, play their turns, and one takes over when the player leaves', { timeout: 5 * 60 * 1000 }, async () => {
  base = env.base;
  const d = await newPage('D', { width: 1280, height: 900 });
  await d.goto(base);
  await d.waitForSelector('#view-lobby:not([hidden])');
  await d.fill('#name', 'Dora');
  await d.selectOption('#seats', '4');
  await d.fill('#clock', '60');
  await d.selectOption('#bots', 'greedy');
  await d.check('#bot-takeover');
  await d.selectOption('#colour-pref', 'red');
  await d.click('#create-btn');
  await d.waitForSelector('#view-room:not([hidden])');
  const code = new URL(await d.inputValue('#invite')).searchParams.get('room');
  const room = await (await fetch(`${base}/api/rooms/${code}`)).json();
  assert.equal(room.settings.bots, 'greedy', 'the room was created with greedy bots');
  assert.equal(room.settings.on_abandon, 'bot', 'and a bot takes over an abandoned seat');
  // Alone in the room, the creator may start: the bots fill the free seats.
  assert.ok(!(await d.isDisabled('#start-btn')), 'Start is enabled with bots to fill the seats');
  await d.click('#start-btn');
  await d.waitForSelector('#view-game:not([hidden])');
  await waitFor(async () => (await d.$$('#player-list li')).length === 4, 'four players listed');
  const players = await d.$$eval('#player-list li', (ls) => ls.map((l) => ({ colour: l.dataset.colour, text: l.textContent })));
  const bots = players.filter((p) => p.text.includes('(bot'));
  assert.ok(players.some((p) => /Bot normal \d/.test(p.text)), `bot names are translated: ${JSON.stringify(players)}`);
  assert.equal(bots.length, 3, `three bot seats: ${JSON.stringify(players)}`);
  assert.ok(players.some((p) => p.colour === 'red' && p.text.includes('Dora')), 'Dora plays red');

  // Play Dora's turns through the UI; the bots play theirs on the server.
  const turns = new Set(); let steps = 0;
  while (steps < 400) {
    const st = await status(d);
    if (st.outcome) break;
    if (st.turn) turns.add(st.turn);
    if (turns.size === 4 && steps >= 6) break;
    if (!st.myTurn) {
      const seq = st.seq;
      await waitFor(async () => { const s = await status(d); return s.seq > seq || s.myTurn || s.outcome; }, 'a bot to act or Dora to be asked', 20000);
      continue;
    }
    steps += 1;
    await act(d, st, 'board');
  }
  assert.equal(turns.size, 4, `every colour had a turn (bots included): ${[...turns]}`);
  const logColours = await d.$$eval('#log li', (ls) => ls.map((l) => l.textContent).join('\n'));
  for (const name of ['Amarillo', 'Azul', 'Verde']) assert.match(logColours, new RegExp(name), `the log shows ${name} (a bot) acting`);
  await shot(d, 'bots-game.png');

  // Dora leaves: her seat goes to a bot (on_abandon = bot) and the game goes on without her.
  await d.click('#game-leave');
  await d.waitForSelector('#leave-dialog[open]');
  assert.match(await d.textContent('#leave-text'), /un bot jugará tus fichas/);
  await d.click('#leave-confirm');
  await d.waitForSelector('#view-lobby:not([hidden])');
  const w = await newPage('W', { width: 1024, height: 800 });
  await w.goto(`${base}/r/${code}`);
  await w.waitForSelector('#view-game:not([hidden])');
  await waitFor(async () => (await w.$$eval('#player-list li', (ls) => ls.filter((l) => l.textContent.includes('(bot')).length)) === 4, 'the spectator to see four bot seats');
  const seq = (await status(w)).seq;
  await waitFor(async () => (await status(w)).seq > seq + 3, 'the bots to keep playing', 30000);
  const after = await (await fetch(`${base}/api/rooms/${code}`)).json();
  const red = after.seats.find((x) => x.colour === 'red');
  assert.ok(red && red.bot, `the API shows a bot on Dora's seat: ${JSON.stringify(after.seats)}`);
  await shot(w, 'bots-took-over.png');
  for (const p of [d, w]) assert.deepEqual(p.errors, [], `${p.tag} had no page errors`);
});
