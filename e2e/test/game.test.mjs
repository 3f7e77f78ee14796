// End-to-end browser test of the web client: the real server binary, Debian's chromium
// driven by playwright-core. Two players create and join a room through the UI and play
// real turns (roll, select a piece, click the target square) until a capture and a piece
// reaching the goal have happened; a spectator sees the same board; a reload mid-game
// resumes the same seat. Screenshots go to ../artifacts/e2e/.
//
// Run with `bash e2e/run.sh` (installs chromium and npm deps, builds the server).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..', '..');
const ARTIFACTS = resolve(ROOT, 'artifacts', 'e2e');
const SERVER_BIN = process.env.PARCHIS_SERVER_BIN
  || join(process.env.CARGO_TARGET_DIR ? resolve(ROOT, process.env.CARGO_TARGET_DIR) : join(ROOT, 'target'), 'debug', 'parchis-server');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const DICE_SEED = process.env.PARCHIS_E2E_DICE_SEED || '20240601';
const MAX_THROWS = Number(process.env.PARCHIS_E2E_MAX_THROWS || 1500);
const STEP_TIMEOUT = 15000;

let server; let base; let browser; let tmp; let serverLog = '';

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => res(port)); });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitHealthy(url, ms = 20000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try { const r = await fetch(`${url}/healthz`); if (r.ok) return; } catch (_) { /* not up yet */ }
    await sleep(100);
  }
  throw new Error(`server did not come up:\n${serverLog}`);
}

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  tmp = mkdtempSync(join(tmpdir(), 'parchis-e2e-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const args = ['--bind', '127.0.0.1', '--port', String(port), '--database-url', 'sqlite::memory:', '--log', 'info'];
  // Seeded dice make the game reproducible: the server's (hidden) --dice-seed option, set
  // through its environment variable PARCHIS_DICE_SEED below.
  server = spawn(SERVER_BIN, args, {
    env: { ...process.env, PARCHIS_DICE_SEED: DICE_SEED, PARCHIS_PUBLIC_URL: base, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (d) => { serverLog = (serverLog + d.toString()).slice(-20000); };
  server.stdout.on('data', keep);
  server.stderr.on('data', keep);
  await waitHealthy(base);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Playwright gives every launch a fresh profile in TMPDIR; point it at our temp dir.
    env: { ...process.env, TMPDIR: tmp },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic',
      '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  if (browser) await browser.close().catch(() => {});
  if (server) {
    server.kill('SIGTERM');
    await new Promise((r) => { server.once('exit', r); setTimeout(r, 5000); });
  }
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function newPage(name, viewport) {
  const ctx = await browser.newContext({ viewport, locale: 'es-ES' });
  const page = await ctx.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(`${name}: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(`${name} console: ${m.text()}`); });
  page.tag = name;
  return page;
}

const shot = (page, file) => page.screenshot({ path: join(ARTIFACTS, file) });

/** The client's state, read through its test hook (for the strategy and the checks). */
function status(page) {
  return page.evaluate(() => {
    const s = window.__parchis.state();
    return {
      seq: s.seq, role: s.role, colour: s.colour, turn: s.turn, outcome: s.outcome,
      myTurn: s.myTurn ? { must_roll: s.myTurn.must_roll, bonus: s.myTurn.bonus, n: s.myTurn.legal.length } : null,
      pieces: s.pieces, status: s.room && s.room.status,
    };
  });
}

/** The pieces drawn on the board, as sorted "colour:piece:loc" strings. */
function boardPieces(page) {
  return page.$$eval('svg.board .piece', (els) => els.map((e) => `${e.dataset.colour}:${e.dataset.piece}:${e.dataset.loc}`).sort());
}

async function waitFor(fn, what, ms = STEP_TIMEOUT) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n--- server log ---\n${serverLog.slice(-4000)}`);
    await sleep(25);
  }
}

/** All pages at the same event seq (the spectator included). */
async function settle(pages) {
  return waitFor(async () => {
    const seqs = await Promise.all(pages.map((p) => p.evaluate(() => window.__parchis.state().seq)));
    return seqs.every((s) => s === seqs[0]) ? seqs[0] : null;
  }, 'all clients at the same seq');
}

const progressOf = (colour, loc) => {
  const exit = { yellow: 5, blue: 22, red: 39, green: 56 }[colour];
  if (loc === 'nest') return -1;
  if (loc === 'goal') return 71;
  if (loc.startsWith('h')) return 63 + Number(loc.slice(1));
  return (Number(loc) - exit + 68) % 68;
};

/** Picks an action the way a keen player would: capture, goal, exit, then the leader. */
function choose(actions, pieces, colour) {
  const by = (pred) => actions.find(pred);
  return by((a) => a.capture === '1')
    || by((a) => a.target === 'goal')
    || by((a) => a.kind === 'exit')
    || actions.slice().sort((a, b) => {
      const pa = progressOf(colour, pieces[colour][Number(a.piece)]);
      const pb = progressOf(colour, pieces[colour][Number(b.piece)]);
      // Home-column pieces only move when nothing else can (they are safe there).
      const wa = pa >= 64 ? -100 : pa; const wb = pb >= 64 ? -100 : pb;
      return wb - wa || Number(b.progress) - Number(a.progress);
    })[0];
}

/** Plays one step (a roll or one action) on `page` through the UI. */
async function act(page, st, mode) {
  const before = st.seq;
  if (st.myTurn.must_roll) {
    await page.click('#roll-btn');
  } else {
    const actions = await page.$$eval('#action-list button', (bs) => bs.map((b) => ({ ...b.dataset })));
    assert.ok(actions.length > 0, 'a throw to play shows its actions');
    const a = choose(actions, st.pieces, st.colour);
    if (mode === 'list' || a.kind === 'bonus') {
      // The list of moves (keyboard and small screens); bonus moves are prompted there.
      if (a.kind === 'bonus') {
        const prompt = await page.textContent('#prompt');
        assert.match(prompt, /Cuentas (20|10)/, 'a bonus move is prompted');
      }
      await page.click(`#action-list button[data-key='${a.key}']`);
    } else if (mode === 'keyboard') {
      // Keyboard only: focus the piece, Enter selects it and focuses a target, Enter plays.
      const sel = `svg.board .piece.selectable[data-colour="${st.colour}"][data-piece="${a.piece}"]`;
      const selected = await page.$eval(sel, (e) => e.classList.contains('selected'));
      if (!selected) {
        await page.focus(sel);
        await page.keyboard.press('Enter');
      }
      await page.focus(`svg.board .target[data-key='${a.key}']`);
      await page.keyboard.press('Enter');
    } else {
      // The board: select the piece, then click the highlighted square.
      const sel = `svg.board .piece.selectable[data-colour="${st.colour}"][data-piece="${a.piece}"]`;
      const selected = await page.$eval(sel, (e) => e.classList.contains('selected'));
      if (!selected) await page.click(sel);
      await page.click(`svg.board .target[data-key='${a.key}']`);
    }
  }
  await waitFor(async () => (await page.evaluate(() => window.__parchis.state().seq)) > before, `${page.tag} to see its action applied`);
}

test('two players create, join and play; a spectator watches; a reload resumes', { timeout: 15 * 60 * 1000 }, async () => {
  const a = await newPage('A', { width: 1280, height: 900 });
  const b = await newPage('B', { width: 390, height: 844 });
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
  await b.click('#seat-list li[data-colour="green"] button');
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
  let captured = false; let goal = false;
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
    await act(players[i], sts[i], steps % 5 === 0 ? 'list' : steps % 7 === 0 ? 'keyboard' : 'board');

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
  if (!final.outcome) {
    assert.ok(captured, 'a capture happened');
    assert.match(logText, /(Amarillo|Verde) come a (Amarillo|Verde) en la casilla \d+ y cuenta 20/);
    assert.ok(goal, 'a piece reached the goal');
    assert.match(logText, /mete una ficha en la meta y cuenta 10/);
  }
  if (!final.outcome) {
    // --- B leaves mid-game: with two players the game ends by forfeit (R-LEAVE). ---
    b.once('dialog', (d) => d.accept());
    await b.click('#game-leave');
    await b.waitForSelector('#view-lobby:not([hidden])');
  }
  await a.waitForSelector('#result:not([hidden])');
  await c.waitForSelector('#result:not([hidden])');
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
  d.once('dialog', (x) => x.accept());
  await d.click('#game-leave');
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
