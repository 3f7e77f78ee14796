// Shared setup of the browser tests (e2e/test/*.test.mjs): the real server binary on a
// free loopback port with seeded dice and an in-memory database, Debian's chromium driven
// by playwright-core, pages with the client's test hook (and, on request, seeded client
// seeds: `newPage`'s `entropy`), screenshots in artifacts/e2e/.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '..');
export const ARTIFACTS = resolve(ROOT, 'artifacts', 'e2e');
const SERVER_BIN = process.env.PARCHIS_SERVER_BIN
  || join(process.env.CARGO_TARGET_DIR ? resolve(ROOT, process.env.CARGO_TARGET_DIR) : join(ROOT, 'target'), 'debug', 'parchis-server');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const STEP_TIMEOUT = 15000;
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => res(port)); });
  });
}

/** Starts a server and a browser; returns the environment `env` used by the helpers. */
export async function setup({ seed = '20240601', host = '127.0.0.1', publicUrl = null, extraEnv = {} } = {}) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const env = { serverLog: '' };
  env.tmp = mkdtempSync(join(tmpdir(), 'parchis-e2e-'));
  const port = await freePort();
  env.base = `http://${host}:${port}`;
  const args = ['--bind', '127.0.0.1', '--port', String(port), '--database-url', 'sqlite::memory:', '--log', 'info'];
  // Seeded dice make the games reproducible (the server's PARCHIS_DICE_SEED); `seed: null`
  // runs the production dice (a fresh server seed from the OS per room, docs/FAIR_DICE.md).
  const serverEnv = { ...process.env, PARCHIS_DICE_SEED: seed, PARCHIS_PUBLIC_URL: publicUrl || env.base, NO_COLOR: '1', ...extraEnv };
  if (seed === null) delete serverEnv.PARCHIS_DICE_SEED;
  delete serverEnv.PARCHIS_NATS_URL; // a single node, even where CI set it for the cluster tests
  env.server = spawn(SERVER_BIN, args, {
    env: serverEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (d) => { env.serverLog = (env.serverLog + d.toString()).slice(-20000); };
  env.server.stdout.on('data', keep);
  env.server.stderr.on('data', keep);
  const until = Date.now() + 20000;
  for (;;) {
    try { const r = await fetch(`${env.base}/healthz`); if (r.ok) break; } catch (_) { /* not up yet */ }
    if (Date.now() > until) throw new Error(`server did not come up:\n${env.serverLog}`);
    await sleep(100);
  }
  env.browser = await chromium.launch({
    executablePath: CHROMIUM,
    env: { ...process.env, TMPDIR: env.tmp },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic',
      '--no-first-run', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'],
  });
  return env;
}

export async function teardown(env) {
  if (!env) return;
  if (env.browser) await env.browser.close().catch(() => {});
  if (env.server) {
    env.server.kill('SIGTERM');
    await new Promise((r) => { env.server.once('exit', r); setTimeout(r, 5000); });
  }
  if (env.tmp) rmSync(env.tmp, { recursive: true, force: true });
}

/**
 * Replaces the page's `crypto.getRandomValues` with a generator seeded by `seed` (FNV-1a
 * of the string, then mulberry32): the same bytes in the same order on every run. Runs
 * in the page as an init script, so it must stay self-contained (a package would have to
 * be bundled into the script; these few lines do). Never secure: tests only.
 */
function seededEntropy(seed) {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) { h ^= seed.charCodeAt(i); h = Math.imul(h, 0x01000193); }
  let s = h >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  crypto.getRandomValues = (array) => {
    if (!ArrayBuffer.isView(array) || array instanceof DataView) throw new TypeError('getRandomValues: an integer typed array');
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = next() & 0xff;
    return array;
  };
}

/**
 * A new page in its own context. The test hook is installed by an init script that runs
 * before the app: the app hands its hook to `window.__parchisTestHook` when (and only
 * when) that function exists, so production pages expose nothing.
 *
 * `entropy` (a seed string) is the browser-side equivalent of PARCHIS_DICE_SEED: the
 * dice mix in each player's client seed (docs/FAIR_DICE.md), which the app draws from
 * `crypto.getRandomValues` when it joins, so a seeded server alone plays a different game
 * on every run. With `entropy`, an init script makes that page's `getRandomValues`
 * deterministic (see `seededEntropy`), and with the server's seed and the same steps the
 * game is the same on every run (a room's server seed also depends on the rooms and
 * connections the server had before it, so keep a test's order of them). Tests whose assertions need particular dice pass it;
 * without it the page has the browser's own random source.
 */
export async function newPage(env, name, viewport, { locale = 'es-ES', hook = true, entropy, reducedMotion, hasTouch } = {}) {
  const ctx = await env.browser.newContext({ viewport, locale, reducedMotion, hasTouch, isMobile: !!hasTouch });
  if (hook) await ctx.addInitScript(() => { window.__parchisTestHook = (h) => { window.__parchis = h; }; });
  if (entropy !== undefined) await ctx.addInitScript(seededEntropy, String(entropy));
  const page = await ctx.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(`${name}: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(`${name} console: ${m.text()}`); });
  page.tag = name;
  page.env = env;
  return page;
}

export const shot = (page, file) => page.screenshot({ path: join(ARTIFACTS, file) });

/** The client's state, read through its test hook (for the strategy and the checks). */
export function status(page) {
  return page.evaluate(() => {
    const s = window.__parchis.state();
    return {
      seq: s.seq, role: s.role, colour: s.colour, turn: s.turn, outcome: s.outcome,
      myTurn: s.myTurn ? { must_roll: s.myTurn.must_roll, bonus: s.myTurn.bonus, n: s.myTurn.legal.length, seq: s.myTurn.seq } : null,
      pieces: s.pieces, status: s.room && s.room.status, gameId: s.gameId, selected: s.selected,
    };
  });
}

/** The pieces drawn on the board, as sorted "colour:piece:loc" strings. */
export function boardPieces(page, root = 'svg.board') {
  return page.$$eval(`${root} .piece`, (els) => els.map((e) => `${e.dataset.colour}:${e.dataset.piece}:${e.dataset.loc}`).sort());
}

export async function waitFor(page, fn, what, ms = STEP_TIMEOUT) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n--- server log ---\n${page.env.serverLog.slice(-4000)}`);
    await sleep(25);
  }
}

/** All pages at the same event seq. */
export async function settle(pages) {
  return waitFor(pages[0], async () => {
    const seqs = await Promise.all(pages.map((p) => p.evaluate(() => window.__parchis.state().seq)));
    return seqs.every((s) => s === seqs[0]) ? seqs[0] : null;
  }, 'all clients at the same seq');
}

/** Picks an action the way a keen player would: capture, goal, exit, then the longest. */
export function choose(actions) {
  const by = (pred) => actions.find(pred);
  return by((a) => a.capture === '1')
    || by((a) => a.target === 'goal')
    || by((a) => a.kind === 'exit')
    || actions.slice().sort((a, b) => (a.target.startsWith('h') - b.target.startsWith('h')) || Number(b.steps) - Number(a.steps))[0];
}

/**
 * Plays one step (a roll or one action) on `page` through the UI ('board', 'list' or
 * 'keyboard'), then checks the piece landed on the previewed target. Returns the action
 * played (its data attributes) or null for a roll.
 */
export async function act(page, st, mode, pickFn = choose) {
  const before = st.seq;
  let a = null;
  if (st.myTurn.must_roll) {
    await page.click('#roll-btn');
  } else {
    const actions = await page.$$eval('#action-list button', (bs) => bs.map((b) => ({ ...b.dataset })));
    if (!actions.length) throw new Error('a throw to play shows its actions');
    a = pickFn(actions);
    if (mode === 'list' || a.kind === 'bonus') {
      await page.click(`#action-list button[data-key='${a.key}']`);
    } else if (mode === 'keyboard') {
      const sel = `svg.board .piece.selectable[data-colour="${st.colour}"][data-piece="${a.piece}"]`;
      const selected = await page.$eval(sel, (e) => e.classList.contains('selected'));
      if (!selected) {
        await page.focus(sel);
        await page.keyboard.press('Enter');
      }
      await page.focus(`svg.board .target[data-key='${a.key}']`);
      await page.keyboard.press('Enter');
    } else {
      const sel = `svg.board .piece.selectable[data-colour="${st.colour}"][data-piece="${a.piece}"]`;
      const selected = await page.$eval(sel, (e) => e.classList.contains('selected'));
      if (!selected) await page.click(sel);
      await page.click(`svg.board .target[data-key='${a.key}']`);
    }
  }
  await waitFor(page, async () => (await page.evaluate(() => window.__parchis.state().seq)) > before, `${page.tag} to see its action applied`);
  if (a) {
    // The piece is drawn where the server's preview said it would land (in pairs, a
    // finished player moves the partner's pieces: the button names the piece's colour).
    const colour = a.colour || st.colour;
    const landed = await waitFor(page, () => page.$eval(`svg.board .piece[data-colour="${colour}"][data-piece="${a.piece}"]`, (e) => e.dataset.loc).catch(() => null), 'the moved piece');
    a.landed = landed;
  }
  return a;
}

/** A point of an SVG touch area (`hit`, an element handle) where the area itself, not a
 * piece drawn over it, takes the tap; null when there is none. */
export function offBodyPoint(hit) {
  return hit.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const cx = r.x + r.width / 2; const cy = r.y + r.height / 2;
    for (const f of [0.85, 0.7, 0.55]) {
      for (let deg = 0; deg < 360; deg += 15) {
        const x = cx + Math.cos(deg * Math.PI / 180) * f * r.width / 2;
        const y = cy + Math.sin(deg * Math.PI / 180) * f * r.height / 2;
        if (document.elementFromPoint(x, y) === el) return { x, y };
      }
    }
    return null;
  });
}

/**
 * Plays a game to its end through the UI of the players' `pages`, as fast as a keen
 * player clicks: whoever may act presses the roll button or an action button of the list
 * (`pickFn`, by default `choose`), and every moved piece must land where its button said
 * (`act`). Bots and the server do the rest; the test decides nothing. Resolves once every
 * page shows the outcome, with `{ steps, ms }` (the pages' own steps, the time taken);
 * throws when the game is not over within `budgetMs`. A step that fails because the game
 * ended under it is not a failure; any other failure throws (use a clock long enough for
 * the machine: a turn that times out is a failure here).
 */
export async function playToEnd(pages, { budgetMs = 240_000, pickFn = choose } = {}) {
  const t0 = Date.now();
  let steps = 0;
  for (;;) {
    const sts = await Promise.all(pages.map(status));
    if (sts.some((s) => s.outcome)) break;
    if (Date.now() - t0 > budgetMs) {
      throw new Error(`the game was not over after ${Math.round((Date.now() - t0) / 1000)} s and ${steps} steps\n--- server log ---\n${pages[0].env.serverLog.slice(-3000)}`);
    }
    const i = sts.findIndex((s) => s.myTurn && s.role === 'player');
    if (i < 0) { await sleep(15); continue; }
    const page = pages[i];
    try {
      const played = await act(page, sts[i], 'list', pickFn);
      // (A piece found back in its nest was captured right after landing: bots at 0 ms
      // can play before the page is read; no move goes to the nest.)
      if (played && played.landed !== 'nest') assert.equal(played.landed, played.target, `${page.tag}: ${JSON.stringify(played)} lands where its button said`);
      steps += 1;
    } catch (e) {
      if (!(await status(page)).outcome) throw e;
    }
  }
  for (const p of pages) await waitFor(p, async () => (await status(p)).outcome, `${p.tag} to see the outcome`);
  return { steps, ms: Date.now() - t0 };
}
