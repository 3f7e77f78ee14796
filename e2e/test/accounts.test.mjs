// Browser test of the account pages (issue 26) on a desktop and a phone: two players sign
// up (the ten recovery codes shown once, "I saved them"), create and join a rated 2-seat
// room (the "rated" choice only when logged in; no bots) and play it to its end through
// the game view (roll, then an action button, on both pages: `playToEnd`; the server
// alone decides, about 1 min); the winner's rating goes up and the loser's down on both
// profiles (numbers, μ from the API and the SVG chart), recent games link to their
// replays; after five rated games (four more ended by forfeits, to keep the test short)
// both are on the leaderboard, the player with four wins first. Log out, log in, a wrong
// password, recovery with a code and a password change. axe-core (0 violations) and
// 44×44 px targets on every new view. Screenshots in artifacts/e2e/.
//
// Time: about 2.5 min for the file on the 2-core CI machine.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, shot, waitFor, playToEnd, PHONE, DESKTOP } from '../harness.mjs';
import { assertNoAxeViolations, assertTargets } from '../a11y.mjs';

let env;
before(async () => { env = await setup({ seed: '26026' }); });
after(async () => { await teardown(env); });

const PASSWORD = 'correct horse battery';

/** Signs up `username` through the UI; returns the recovery codes shown. */
async function signUp(page, username, { checkA11y = false } = {}) {
  await page.goto(`${env.base}/#/signup`);
  await page.waitForSelector('#view-account:not([hidden]) #account-signup:not([hidden])');
  if (checkA11y) {
    await assertNoAxeViolations(page, `sign-up (${page.tag})`);
    await assertTargets(page, `sign-up (${page.tag})`);
  }
  await page.fill('#signup-username', username);
  await page.fill('#signup-password', 'short');
  await page.click('#signup-btn');
  await waitFor(page, async () => (await page.textContent('#toast')).includes('10 caracteres'), 'the short password refused');
  await page.fill('#signup-password', PASSWORD);
  await page.click('#signup-btn');
  await page.waitForSelector('#account-codes:not([hidden])');
  const codes = await page.$$eval('#codes-list li', (ls) => ls.map((l) => l.textContent));
  assert.equal(codes.length, 10, 'ten recovery codes');
  for (const c of codes) assert.match(c, /^[a-z0-9]{4}(-[a-z0-9]{4}){3}$/);
  assert.equal(await page.getAttribute('#account-btn', 'data-user'), username, 'logged in at once');
  if (checkA11y) {
    await shot(page, `account-codes-${page.tag}.png`);
    await assertNoAxeViolations(page, `recovery codes (${page.tag})`);
    await assertTargets(page, `recovery codes (${page.tag})`);
  }
  // The codes stay until "I saved them", even when the page is asked for again.
  await page.goto(`${env.base}/#/account`);
  await page.waitForSelector('#account-codes:not([hidden])');
  await page.click('#codes-saved');
  await page.waitForSelector('#view-lobby:not([hidden])');
  assert.equal(await page.$$eval('#codes-list li', (ls) => ls.length), 0, 'the codes are gone once saved');
  return codes;
}

/** `creator` makes a rated 2-seat online room, `joiner` joins by the invite link, the
 * creator starts; returns the room code. */
async function ratedGame(creator, joiner, { checkA11y = false } = {}) {
  await creator.goto(env.base);
  await creator.waitForSelector('#view-lobby:not([hidden])');
  await creator.waitForSelector('#rated-choice:not([hidden])');
  await creator.selectOption('#preset', 'online');
  await creator.selectOption('#seats', '2');
  await creator.fill('#clock', '120');
  await creator.check('#rated');
  assert.ok(await creator.isDisabled('#bots'), 'a rated room takes no bots');
  await creator.click('#create-btn');
  await creator.waitForSelector('#view-room:not([hidden])');
  const code = new URL(await creator.inputValue('#invite')).searchParams.get('room');
  const info = await creator.textContent('#room-info');
  assert.match(info, /puntuada|rated/, `the room says it is rated: ${info}`);
  await joiner.goto(`${env.base}/?room=${code}`);
  await joiner.waitForSelector('#view-join:not([hidden])');
  if (checkA11y) {
    await assertNoAxeViolations(joiner, `join a rated room (${joiner.tag})`);
    await assertTargets(joiner, `join a rated room (${joiner.tag})`);
  }
  await joiner.click('#join-btn');
  await joiner.waitForSelector('#view-room:not([hidden])');
  await waitFor(creator, async () => (await creator.$$('#seat-list li[data-taken]')).length === 2, 'two seats taken');
  if (checkA11y) {
    await shot(creator, 'rated-room.png');
    await assertNoAxeViolations(creator, `rated room (${creator.tag})`);
  }
  await creator.click('#start-btn');
  await creator.waitForSelector('#view-game:not([hidden])');
  await joiner.waitForSelector('#view-game:not([hidden])');
  return code;
}

/** `leaver` leaves the running game (a forfeit: the other wins); both see the result. */
async function forfeit(leaver, winner) {
  await leaver.click('#game-leave');
  await leaver.waitForSelector('#leave-dialog[open]');
  await leaver.click('#leave-confirm');
  await leaver.waitForSelector('#view-lobby:not([hidden])');
  await winner.waitForSelector('#result:not([hidden])');
  assert.equal(await winner.textContent('#result-you'), '¡Has ganado!');
}

const profileRating = (page, pool) => page.$eval(`#profile-ratings li[data-pool="${pool}"]`, (li) => ({ display: Number(li.dataset.display), games: Number(li.dataset.games) })).catch(() => null);

async function openProfile(page, username) {
  await page.goto(`${env.base}/#/player/${username}`);
  await page.waitForSelector('#view-profile:not([hidden]) #profile-body:not([hidden])');
}

test('two players sign up, play rated games, see their ratings change on the profiles and the leaderboard', { timeout: 10 * 60 * 1000 }, async () => {
  const a = await newPage(env, 'A', DESKTOP, { entropy: 'ana' });
  const b = await newPage(env, 'B', PHONE, { entropy: 'benito', hasTouch: true });

  // Logged out: no rated choice; the header offers to log in.
  await a.goto(env.base);
  await a.waitForSelector('#view-lobby:not([hidden])');
  assert.equal(await a.isVisible('#rated-choice'), false, 'a guest is offered no rated room');
  assert.equal((await a.textContent('#account-name')).trim(), 'Entrar');

  await signUp(a, 'Ana_1', { checkA11y: true });
  await signUp(b, 'Benito_2', { checkA11y: true });

  // A new profile: no ratings yet.
  await openProfile(a, 'Ana_1');
  assert.equal(await profileRating(a, 'online'), null);
  assert.ok(await a.isVisible('#profile-no-ratings'));

  // --- The first rated game, played to its end by both pages. ---
  const code = await ratedGame(a, b, { checkA11y: true });
  const names = await a.$$eval('#player-list li .player-name', (ls) => ls.map((l) => l.textContent));
  assert.ok(names.some((n) => n.includes('Ana_1')) && names.some((n) => n.includes('Benito_2')), `seats show the usernames: ${names}`);
  const { steps, ms } = await playToEnd([a, b], { budgetMs: 240_000 });
  console.log(`# the rated game was played to its end: ${steps} steps in ${Math.round(ms / 1000)} s`);
  for (const p of [a, b]) await p.waitForSelector('#result:not([hidden])');
  const aWon = (await a.textContent('#result-you')) === '¡Has ganado!';
  const [winner, loser] = aWon ? [a, b] : [b, a];
  const [winnerName, loserName] = aWon ? ['Ana_1', 'Benito_2'] : ['Benito_2', 'Ana_1'];
  assert.equal(await winner.textContent('#result-you'), '¡Has ganado!');
  assert.equal(await loser.textContent('#result-you'), 'Has perdido.');
  await shot(b, 'rated-result-phone.png');
  await shot(a, 'rated-result.png');
  assert.ok(await a.isVisible('#result-profile'), 'a rated game\'s result links to the profile');
  await a.click('#result-profile');
  await a.waitForSelector('#view-profile:not([hidden]) #profile-body:not([hidden])');
  const a1 = await profileRating(a, 'online');
  assert.equal(a1.games, 1, 'one rated game on A\'s profile');
  await openProfile(b, 'Benito_2');
  const b1 = await profileRating(b, 'online');
  assert.equal(b1.games, 1, 'one rated game on B\'s profile');
  // Both started at a new player's 1000 (μ 25): the winner's went up, the loser's down.
  const [w1, l1] = aWon ? [a1, b1] : [b1, a1];
  assert.ok(w1.display > 1000, `the winner's rating went up: ${w1.display}`);
  assert.ok(l1.display < 1000, `the loser's rating went down: ${l1.display}`);
  const mu = async (u) => (await (await fetch(`${env.base}/api/players/${u}`)).json()).ratings.online.mu;
  assert.ok(await mu(winnerName) > 25 && await mu(loserName) < 25, 'μ moved the same way');
  assert.equal(await b.getAttribute('.rating-chart', 'data-points'), '1');
  assert.equal(Number(await b.getAttribute('.rating-chart', 'data-last')), b1.display, 'B\'s chart ends at the new rating');
  // The recent game links to its replay.
  const link = await b.getAttribute(`#profile-games li .replay-link`, 'href');
  assert.match(link, /^\/\?game=/);
  await assertNoAxeViolations(b, 'profile (phone)');
  await assertTargets(b, 'profile (phone)');
  await shot(b, 'profile-phone.png');
  await b.click('#profile-games li .replay-link');
  await b.waitForSelector('#view-replay:not([hidden])');
  assert.match(await b.textContent('#replay-title'), new RegExp(code));

  // --- Four more rated games (forfeits), enough for the leaderboard: A ends with four
  // wins and one loss whoever won the first. ---
  for (let k = 0; k < 4; k++) {
    const aLeaves = aWon && k === 2;
    await ratedGame(a, b);
    await forfeit(aLeaves ? a : b, aLeaves ? b : a);
  }
  await openProfile(a, 'Ana_1');
  const a5 = await profileRating(a, 'online');
  assert.equal(a5.games, 5);
  assert.equal(await a.getAttribute('.rating-chart', 'data-points'), '5', 'the chart has a point per rated game');
  assert.equal(Number(await a.getAttribute('.rating-chart', 'data-last')), a5.display, 'the chart ends at the current rating');
  assert.equal(await a.$$eval('#profile-games li', (ls) => ls.length), 5, 'five recent games');
  await assertNoAxeViolations(a, 'profile (desktop)');
  await shot(a, 'profile.png');

  // --- The leaderboard: both, the player with four wins first. ---
  await a.click('#view-profile a[href="#/leaderboard/online"]');
  await a.waitForSelector('#view-leaderboard:not([hidden]) #lb-table:not([hidden])');
  const rows = await a.$$eval('#lb-rows tr', (trs) => trs.map((tr) => [tr.dataset.username, Number(tr.dataset.display)]));
  assert.deepEqual(rows.map((r) => r[0]), ['Ana_1', 'Benito_2']);
  assert.equal(rows[0][1], a5.display, 'the leaderboard shows the profile\'s rating');
  await assertNoAxeViolations(a, 'leaderboard (desktop)');
  await shot(a, 'leaderboard.png');
  // Another pool: nobody yet.
  await a.selectOption('#lb-pool', 'classic');
  await a.waitForSelector('#lb-empty:not([hidden])');
  await b.goto(`${env.base}/#/leaderboard/online`);
  await b.waitForSelector('#view-leaderboard:not([hidden]) #lb-table:not([hidden])');
  await assertNoAxeViolations(b, 'leaderboard (phone)');
  await assertTargets(b, 'leaderboard (phone)');
  await shot(b, 'leaderboard-phone.png');
  await b.click('#lb-rows tr[data-username="Ana_1"] a');
  await b.waitForSelector('#view-profile:not([hidden]) #profile-body:not([hidden])');
  assert.match(await b.textContent('#profile-title'), /Ana_1/);

  // English.
  await b.click('#lang-btn');
  assert.match(await b.textContent('#profile-title'), /Ana_1's profile/);
  await b.click('#lang-btn');
  assert.deepEqual([...a.errors, ...b.errors], []);
});

test('log out, a wrong password, log in, recover with a code, change the password', { timeout: 3 * 60 * 1000 }, async () => {
  for (const [viewport, user] of [[PHONE, 'Carla_3'], [DESKTOP, 'Dario_4']]) {
    const p = await newPage(env, viewport === PHONE ? 'Cphone' : 'Ddesk', viewport);
    const codes = await signUp(p, user);
    // The account page: who, codes left, log out.
    await p.click('#account-btn');
    await p.waitForSelector('#account-home:not([hidden])');
    assert.match(await p.textContent('#account-who'), new RegExp(user));
    assert.match(await p.textContent('#account-codes-left'), /10/);
    await assertNoAxeViolations(p, `account (${p.tag})`);
    await assertTargets(p, `account (${p.tag})`);
    await p.click('#logout-btn');
    await p.waitForSelector('#view-lobby:not([hidden])');
    assert.equal(await p.getAttribute('#account-btn', 'data-user'), null, 'logged out');
    assert.equal((await (await p.request.get(`${env.base}/api/me`)).status()), 401);

    // Log in: a wrong password first.
    await p.click('#account-btn');
    await p.waitForSelector('#account-login:not([hidden])');
    await assertNoAxeViolations(p, `log in (${p.tag})`);
    await assertTargets(p, `log in (${p.tag})`);
    await p.fill('#login-username', user);
    await p.fill('#login-password', 'not the password');
    await p.click('#login-btn');
    await waitFor(p, async () => (await p.textContent('#toast')).includes('incorrectos'), 'the wrong password refused');
    await p.fill('#login-password', PASSWORD);
    await p.click('#login-btn');
    await p.waitForSelector('#view-lobby:not([hidden])');
    assert.equal(await p.getAttribute('#account-btn', 'data-user'), user);

    // Recover with a code (logged out), then the new password works.
    await p.goto(`${env.base}/#/account`);
    await p.click('#logout-btn');
    await p.waitForSelector('#view-lobby:not([hidden])');
    await p.goto(`${env.base}/#/recover`);
    await p.waitForSelector('#account-recover:not([hidden])');
    await assertNoAxeViolations(p, `recover (${p.tag})`);
    await assertTargets(p, `recover (${p.tag})`);
    await p.fill('#recover-username', user);
    await p.fill('#recover-code', codes[3]);
    await p.fill('#recover-password', 'a brand new password');
    await p.click('#recover-btn');
    await p.waitForSelector('#view-lobby:not([hidden])');
    assert.equal(await p.getAttribute('#account-btn', 'data-user'), user, 'recovered and logged in');
    await p.goto(`${env.base}/#/account`);
    await p.waitForSelector('#account-home:not([hidden])');
    assert.match(await p.textContent('#account-codes-left'), /9/, 'one code spent');

    // Change the password: the old one stops working, the new one logs in.
    await p.fill('#change-current', 'a brand new password');
    await p.fill('#change-new', 'the third password');
    await p.click('#change-btn');
    await waitFor(p, async () => /Contraseña cambiada/.test(await p.textContent('#toast')), 'the password changed');
    const login = (password) => p.request.post(`${env.base}/api/session`, { data: { username: user, password } });
    assert.equal((await login('a brand new password')).status(), 401);
    assert.equal((await login('the third password')).status(), 200);
    assert.deepEqual(p.errors.filter((e) => !/401|Failed to load resource/.test(e)), []);
  }
});

test('a guest opening a rated room is asked to log in, and comes back to the room to join it', { timeout: 2 * 60 * 1000 }, async () => {
  for (const username of ['Elena_7', 'Fede_8']) {
    const r = await fetch(`${env.base}/api/accounts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username, password: PASSWORD }) });
    assert.equal(r.status, 201);
  }
  const e = await newPage(env, 'E', DESKTOP);
  await e.goto(`${env.base}/#/login`);
  await e.waitForSelector('#account-login:not([hidden])');
  await e.fill('#login-username', 'Elena_7');
  await e.fill('#login-password', PASSWORD);
  await e.click('#login-btn');
  await e.waitForSelector('#view-lobby:not([hidden])');
  await e.selectOption('#seats', '2');
  await e.check('#rated');
  await e.click('#create-btn');
  await e.waitForSelector('#view-room:not([hidden])');
  const invite = await e.inputValue('#invite');

  const f = await newPage(env, 'F', PHONE, { hasTouch: true });
  await f.goto(invite);
  await f.waitForSelector('#view-join:not([hidden])');
  assert.ok(await f.isVisible('#join-rated'), 'a guest is told the room is rated');
  assert.equal(await f.isVisible('#join-btn'), false, 'and is offered no seat');
  await assertNoAxeViolations(f, 'rated room, guest (phone)');
  await assertTargets(f, 'rated room, guest (phone)');
  await f.click('#join-rated a');
  await f.waitForSelector('#account-login:not([hidden])');
  await f.fill('#login-username', 'Fede_8');
  await f.fill('#login-password', PASSWORD);
  await f.click('#login-btn');
  // Back to the room once logged in: its join page, now with a seat to take.
  await f.waitForSelector('#view-join:not([hidden]) #join-btn:not([hidden])');
  await f.click('#join-btn');
  await f.waitForSelector('#view-room:not([hidden])');
  await waitFor(e, async () => (await e.textContent('#seat-list')).includes('Fede_8'), 'the creator to see Fede_8 seated');
  assert.deepEqual([...e.errors, ...f.errors], []);
});
