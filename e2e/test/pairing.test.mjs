// Browser test of quick pairing in the lobby (issue 26; proto/README.md "Quick pairing"):
// two guests (a phone and a desktop) wait in the casual 2-seat `online` pool and are
// seated together, the room starting by itself once both claimed their seats; the pool's
// count shows who waits; cancelling leaves the pool; a guest cannot choose a rated pool;
// two accounts are paired in the rated pool and play as their usernames, and an account
// resumes its seat from another device. axe-core and 44 px on the lobby with the card.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, shot, status, waitFor, PHONE, DESKTOP } from '../harness.mjs';
import { assertNoAxeViolations, assertTargets } from '../a11y.mjs';

let env;
before(async () => { env = await setup({ seed: '26027' }); });
after(async () => { await teardown(env); });

const pools = async () => (await (await fetch(`${env.base}/api/pairing`)).json()).pools;
const waitingIn = async (rated) => (await pools()).filter((p) => p.preset === 'online' && p.seats === 2 && p.rated === rated).reduce((n, p) => n + p.waiting, 0);

async function lobby(page, name) {
  await page.goto(env.base);
  await page.waitForSelector('#view-lobby:not([hidden])');
  await page.waitForSelector('#pairing-card:not([hidden])');
  if (name) await page.fill('#name', name);
  await page.selectOption('#pairing-preset', 'online');
  await page.selectOption('#pairing-seats', '2');
}

/** Logs `username` in through the log-in page. */
async function logIn(page, username) {
  await page.goto(`${env.base}/#/login`);
  await page.waitForSelector('#account-login:not([hidden])');
  await page.fill('#login-username', username);
  await page.fill('#login-password', 'correct horse battery');
  await page.click('#login-btn');
  await page.waitForSelector('#view-lobby:not([hidden])');
}

test('two guests are paired in a casual pool and the game starts by itself; cancel leaves the pool', { timeout: 3 * 60 * 1000 }, async () => {
  const g1 = await newPage(env, 'G1', PHONE, { hasTouch: true });
  const g2 = await newPage(env, 'G2', DESKTOP);
  await lobby(g1, 'Gema');
  await assertNoAxeViolations(g1, 'lobby with quick pairing (phone)');
  await assertTargets(g1, 'lobby with quick pairing (phone)');
  // A guest is offered no rated pool.
  assert.ok(await g1.isDisabled('#pairing-rated'), 'a guest cannot choose a rated pool');
  assert.ok(await g1.isVisible('#pairing-login'));

  // Waiting, then cancelling, leaves the pool.
  await g1.tap('#pairing-find');
  await g1.waitForSelector('#pairing-card[data-phase="waiting"]');
  assert.match(await g1.textContent('#pairing-status'), /Buscando rivales… \d+ s · margen de puntuación ±[\d.]+|cualquier puntuación/);
  await waitFor(g1, async () => (await waitingIn(false)) === 1, 'one guest waiting in the pool');
  await shot(g1, 'pairing-waiting-phone.png');
  await assertNoAxeViolations(g1, 'lobby while waiting (phone)');
  await assertTargets(g1, 'lobby while waiting (phone)');
  await g1.tap('#pairing-cancel');
  await g1.waitForSelector('#pairing-card[data-phase="idle"]');
  await waitFor(g1, async () => (await waitingIn(false)) === 0, 'the pool empty after cancelling');

  // Both look: the second sees the first waiting, then they are seated together.
  await g1.tap('#pairing-find');
  await g1.waitForSelector('#pairing-card[data-phase="waiting"]');
  await lobby(g2, 'Gonzalo');
  await waitFor(g2, async () => (await g2.$$('#pairing-pools li[data-waiting="1"]')).length === 1, 'the lobby lists one player waiting', 12000);
  await assertNoAxeViolations(g2, 'lobby with quick pairing and a player waiting (desktop)');
  await assertTargets(g2, 'lobby with quick pairing and a player waiting (desktop)');
  await g2.click('#pairing-find');
  for (const p of [g1, g2]) await p.waitForSelector('#view-game:not([hidden])', { timeout: 20000 });
  const [s1, s2] = await Promise.all([status(g1), status(g2)]);
  assert.equal(s1.role, 'player');
  assert.equal(s2.role, 'player');
  assert.notEqual(s1.colour, s2.colour);
  assert.equal(s1.status, 'playing', 'the paired room starts by itself');
  const names = await g2.$$eval('#player-list li .player-name', (ls) => ls.map((l) => l.textContent).join(' | '));
  assert.match(names, /Gema/);
  assert.match(names, /Gonzalo/);
  const code = await g1.evaluate(() => window.__parchis.state().code);
  const listed = (await (await fetch(`${env.base}/api/rooms?status=playing`)).json()).rooms;
  assert.ok(!listed.some((r) => r.code === code), 'a paired room is private');
  await shot(g2, 'paired-game.png');
  assert.deepEqual([...g1.errors, ...g2.errors], []);
});

test('two accounts are paired in the rated pool; an account resumes its seat from another device', { timeout: 3 * 60 * 1000 }, async () => {
  const a = await newPage(env, 'RA', DESKTOP);
  const b = await newPage(env, 'RB', PHONE, { hasTouch: true });
  for (const [p, username] of [[a, 'Rita_5'], [b, 'Raul_6']]) {
    const r = await fetch(`${env.base}/api/accounts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username, password: 'correct horse battery' }) });
    assert.equal(r.status, 201);
    await logIn(p, username);
    await lobby(p, null);
    await waitFor(p, async () => (await p.getAttribute('#account-btn', 'data-user')) === username, 'logged in');
    assert.ok(!(await p.isDisabled('#pairing-rated')), 'an account can choose a rated pool');
    await p.check('#pairing-rated');
  }
  await a.click('#pairing-find');
  await a.waitForSelector('#pairing-card[data-phase="waiting"]');
  await waitFor(a, async () => (await waitingIn(true)) === 1, 'one account waiting in the rated pool');
  await b.tap('#pairing-find');
  for (const p of [a, b]) await p.waitForSelector('#view-game:not([hidden])', { timeout: 20000 });
  const names = await a.$$eval('#player-list li .player-name', (ls) => ls.map((l) => l.textContent).join(' | '));
  assert.match(names, /Rita_5/);
  assert.match(names, /Raul_6/);
  const st = await status(a);
  const code = await a.evaluate(() => window.__parchis.state().code);
  const view = await (await fetch(`${env.base}/api/rooms/${code}`)).json();
  assert.equal(view.settings.rated, true, 'a rated pool makes a rated room');

  // Another device: Rita logs in on a second page and opens the room: her seat, resumed
  // by her account (no stored token there); the first page is told it was replaced.
  const a2 = await newPage(env, 'RA2', PHONE, { hasTouch: true });
  await logIn(a2, 'Rita_5');
  await a2.goto(`${env.base}/?room=${code}`);
  await a2.waitForSelector('#view-game:not([hidden])');
  await waitFor(a2, async () => { const s = await status(a2); return s.role === 'player' && s.colour === st.colour; }, 'the seat resumed on the other device');
  await shot(a2, 'resumed-by-account-phone.png');
  assert.deepEqual([...a.errors, ...b.errors, ...a2.errors], []);
});
