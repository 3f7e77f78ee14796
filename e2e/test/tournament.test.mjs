// Browser test of the tournament pages (issue 27; docs/TOURNAMENTS.md, proto/README.md
// "Tournaments"): an organiser (a third account, desktop) creates a `pairs` knockout with
// `bot_fill` up to 4 entrants (bots at 0 ms, no spectator delay, a 20 s clock) from the
// create form; two players (a desktop and a phone) register as a pair (one names the
// partner, the partner confirms on the page; a withdrawal and a new registration before
// that); the organiser closes registration. Both see the draw (two rounds), are told
// "your match is ready" (the page, the sound, the tab title, the no-show countdown), take
// their seats with one tap (the room opens and `claim`s) and play their match to its end
// through the game view (roll, then an action button: `playToEnd`; the server and two
// bots at 0 ms do the rest, nothing is decided by the test); the result screen links back
// to the tournament page, where they see the match's replay link and the final drawn with
// them in it, or their elimination, live. axe-core (0 violations) and 44 px targets on the
// list, the create form, the referee's controls and the tournament page (phone and
// desktop).
//
// Time: about 3 min on the 2-core CI machine, the match itself ~2.5 min (~420 steps by
// the pair, each a click and the server's answer, with two bots' turns between); the
// match must end within PLAY_BUDGET_MS (4 min) or the test fails saying how far it got.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, shot, status, waitFor, playToEnd, PHONE, DESKTOP } from '../harness.mjs';
import { assertNoAxeViolations, assertTargets } from '../a11y.mjs';

let env;
// A tournament room's bots keep the tournament's think time even when nobody watches
// (no PARCHIS_MIN_UNWATCHED_BOT_THINK_MS pacing there), so the all-bots table runs at 0 ms.
before(async () => { env = await setup({ seed: '27027' }); });
after(async () => { await teardown(env); });

const PASSWORD = 'correct horse battery';
const PLAY_BUDGET_MS = 240_000;

async function signUpAndLogIn(page, username) {
  const r = await fetch(`${env.base}/api/accounts`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ username, password: PASSWORD }) });
  assert.equal(r.status, 201, `sign-up of ${username}`);
  await page.goto(`${env.base}/#/login`);
  await page.waitForSelector('#account-login:not([hidden])');
  await page.fill('#login-username', username);
  await page.fill('#login-password', PASSWORD);
  await page.click('#login-btn');
  await page.waitForSelector('#view-lobby:not([hidden])');
  await waitFor(page, async () => (await page.getAttribute('#account-btn', 'data-user')) === username, `${username} logged in`);
}

const view = async (id) => (await fetch(`${env.base}/api/tournaments/${id}`)).json();

async function openPage(page, id) {
  await page.goto(`${env.base}/#/tournament/${id}`);
  await page.waitForSelector('#view-tournament:not([hidden])');
  await waitFor(page, async () => (await page.textContent('#tp-name')) === 'Copa del Club', 'the tournament page drawn');
}

test('a pair registers, sees the draw, plays its match from the tournament page and sees the next round', { timeout: 7 * 60 * 1000 }, async () => {
  const org = await newPage(env, 'ORG', DESKTOP);
  const ana = await newPage(env, 'ANA', DESKTOP, { entropy: 'ana' });
  const bea = await newPage(env, 'BEA', PHONE, { hasTouch: true, entropy: 'bea' });
  await signUpAndLogIn(org, 'Olga_1');
  await signUpAndLogIn(ana, 'Ana_2');
  await signUpAndLogIn(bea, 'Bea_3');

  // The organiser: the list (empty), the create form, axe and 44 px on both.
  await org.click('#lobby-tournaments');
  await org.waitForSelector('#view-tournaments:not([hidden]) #tc-form:not([hidden])');
  await waitFor(org, async () => org.isVisible('#tl-empty'), 'the empty list');
  await assertNoAxeViolations(org, 'tournament list and create form (desktop)');
  await assertTargets(org, 'tournament list and create form (desktop)');
  await org.fill('#tc-name', 'Copa del Club');
  await org.selectOption('#tc-preset', 'pairs');
  await org.selectOption('#tc-format', 'knockout');
  await org.fill('#tc-clock', '20');
  await org.fill('#tc-delay', '0');
  await org.check('#tc-bots');
  await org.waitForSelector('#tc-bots-box:not([hidden])');
  await org.fill('#tc-bots-up', '4');
  await org.fill('#tc-bots-think', '0');
  await assertNoAxeViolations(org, 'create form with bot fill (desktop)');
  await org.click('#tc-create');
  await org.waitForSelector('#view-tournament:not([hidden])');
  const id = await waitFor(org, async () => { const m = /#\/tournament\/(.+)$/.exec(await org.evaluate(() => location.hash)); return m && m[1]; }, 'the new tournament\'s page');
  let v = await view(id);
  assert.equal(v.status, 'registering');
  assert.equal(v.preset, 'pairs');
  assert.equal(v.settings.turn_clock_secs, 20);
  assert.deepEqual(v.settings.bot_fill, { up_to: 4, level: 'random', think_ms: 0 });
  assert.ok(await org.isVisible('#tp-close'), 'the organiser may close registration');

  // The list on a phone, with the new tournament in it.
  await bea.goto(`${env.base}/#/tournaments`);
  await bea.waitForSelector('#view-tournaments:not([hidden])');
  await waitFor(bea, async () => (await bea.textContent('#view-tournaments')).includes('Copa del Club'), 'the tournament listed (phone)');
  await assertNoAxeViolations(bea, 'tournament list and create form (phone)');
  await assertTargets(bea, 'tournament list and create form (phone)');

  // Ana registers the pair with Bea; Bea confirms on her page (live: no reload).
  await openPage(ana, id);
  await openPage(bea, id);
  assert.equal(await ana.getAttribute('#tp-reg', 'data-action'), 'register');
  assert.ok(await ana.isHidden('#tp-close'), 'a player cannot close registration');
  await assertNoAxeViolations(bea, 'tournament page, registering (phone)');
  await assertTargets(bea, 'tournament page, registering (phone)');
  await ana.fill('#tp-partner', 'Bea_3');
  await ana.fill('#tp-team', 'Ana y Bea');
  await ana.click('#tp-register');
  await waitFor(ana, async () => (await ana.getAttribute('#tp-reg', 'data-action')) === 'waiting_partner', 'the team waiting for the partner');
  // Withdrawing before the deadline, then registering again.
  await ana.click('#tp-unregister');
  await waitFor(ana, async () => (await ana.getAttribute('#tp-reg', 'data-action')) === 'register', 'the entry withdrawn');
  assert.equal((await view(id)).entrants.length, 0, 'a withdrawn team is not listed');
  await ana.fill('#tp-partner', 'Bea_3');
  await ana.fill('#tp-team', 'Ana y Bea');
  await ana.click('#tp-register');
  await waitFor(ana, async () => (await ana.getAttribute('#tp-reg', 'data-action')) === 'waiting_partner', 'registered again');
  await waitFor(bea, async () => (await bea.getAttribute('#tp-reg', 'data-action')) === 'confirm', 'Bea asked to confirm (live)');
  assert.match(await bea.textContent('#tp-reg-text'), /Ana y Bea/);
  await shot(bea, 'tournament-confirm-phone.png');
  await bea.tap('#tp-confirm');
  await waitFor(ana, async () => (await ana.getAttribute('#tp-reg', 'data-action')) === 'registered', 'Ana sees the team confirmed (live)');
  v = await view(id);
  assert.deepEqual(v.entrants.map((e) => [e.name, e.status, e.players.map((p) => p.name)]), [['Ana y Bea', 'registered', ['Ana_2', 'Bea_3']]]);

  // The organiser closes registration: three bot teams fill up to 4, two rounds drawn.
  await openPage(org, id);
  await org.click('#tp-close');
  for (const p of [ana, bea]) {
    await waitFor(p, async () => (await p.getAttribute('#view-tournament', 'data-status')) === 'running', `${p.tag} sees the draw`);
  }
  v = await view(id);
  assert.equal(v.entrants.length, 4);
  assert.equal(v.rounds, 2);
  const mine = v.entrants.find((e) => e.name === 'Ana y Bea');
  const myMatch = v.matches.find((m) => m.round === 1 && m.entrants.includes(mine.id));
  assert.ok(myMatch, 'the pair is drawn in round 1');
  assert.equal(await ana.$$eval('#tp-bracket .bracket-round[data-round="1"] li.match', (ls) => ls.length), 2, 'round 1 has two matches');

  // "Your match is ready": the page (with the no-show countdown), the sound, the title.
  for (const p of [ana, bea]) {
    await p.waitForSelector('#tp-ready:not([hidden])', { timeout: 15000 });
    assert.match(await p.textContent('#tp-ready-text'), /\d+:\d\d/, 'the no-show countdown');
    assert.match(await p.title(), /⏰/);
    assert.ok((await p.evaluate(() => window.__parchis.sounds())).some((s) => s.name === 'ready'), 'the ready sound');
    assert.equal(await p.getAttribute('#tp-mine', 'data-action'), 'claim');
    assert.ok(await p.isVisible('#tp-notify'), 'notifications are offered from a button');
  }
  await shot(bea, 'tournament-ready-phone.png');
  await assertNoAxeViolations(bea, 'tournament page, match ready (phone)');
  await assertTargets(bea, 'tournament page, match ready (phone)');
  await assertNoAxeViolations(ana, 'tournament page, match ready (desktop)');
  await assertTargets(ana, 'tournament page, match ready (desktop)');
  // Every match has a link to watch it while its room is open or playing.
  await waitFor(org, async () => (await org.$$('#tp-bracket li.match a[href*="watch=1"]')).length >= 1, 'watch links');
  // The organiser's referee controls (used by the server tests; here only looked at).
  await org.waitForSelector('#tp-referee[open]');
  await org.selectOption('#tp-ref-match', String(myMatch.id));
  await org.selectOption('#tp-ref-entrant', String(mine.id));
  await assertNoAxeViolations(org, 'tournament page with the referee\'s controls (desktop)');
  await assertTargets(org, 'tournament page with the referee\'s controls (desktop)');

  // One tap into the seat: the room opens with `claim`; the game starts when both sit.
  await ana.click('#tp-take-seat');
  await bea.tap('#tp-take-seat');
  for (const p of [ana, bea]) await p.waitForSelector('#view-game:not([hidden])', { timeout: 20000 });
  await waitFor(ana, async () => (await status(ana)).status === 'playing', 'the match started', 20000);
  const [sa, sb] = [await status(ana), await status(bea)];
  assert.deepEqual([sa.role, sb.role], ['player', 'player']);
  assert.deepEqual([sa.colour, sb.colour].sort(), v.matches.find((m) => m.id === myMatch.id).seats.filter((s) => s.entrant === mine.id).map((s) => s.colour).sort(), 'each on the reserved colour');
  assert.ok(['blue', 'red'].includes(sa.colour) && sb.colour === (sa.colour === 'blue' ? 'green' : 'yellow'), 'partners sit opposite');

  // Play the match to its end through the game view: roll, then an action button.
  const { steps, ms } = await playToEnd([ana, bea], { budgetMs: PLAY_BUDGET_MS });
  console.log(`# the match was played to its end: ${steps} steps by the pair in ${Math.round(ms / 1000)} s`);
  await shot(bea, 'tournament-match-over-phone.png');
  v = await view(id);
  let m = v.matches.find((x) => x.id === myMatch.id);
  assert.ok(m.game_id, 'the match carries its game id once started');
  // The result screen of a tournament game links back to the tournament.
  await ana.waitForSelector('#result-tournament:not([hidden])', { timeout: 20000 });
  await ana.click('#result-tournament');
  await ana.waitForSelector('#view-tournament:not([hidden])');
  await waitFor(ana, async () => (await view(id)).matches.find((x) => x.id === myMatch.id).status === 'finished', 'the director learns the result', 20000);

  // Back on the tournament page: the match decided, and the next round or elimination.
  await ana.goto(`${env.base}/#/tournament/${id}`);
  await ana.waitForSelector('#view-tournament:not([hidden])');
  v = await view(id);
  m = v.matches.find((x) => x.id === myMatch.id);
  assert.equal(m.status, 'finished', 'the match was played, not awarded');
  assert.deepEqual(v.referee_actions || [], [], 'no referee action was needed');
  assert.ok(await ana.isVisible('#tp-actions-empty'), 'the page lists no referee action');
  const won = m.winner === mine.id;
  await waitFor(ana, async () => (await ana.getAttribute(`#tp-bracket li.match[data-match="${myMatch.id}"]`, 'data-status')) === m.status, 'the decided match on the page');
  assert.equal(await ana.$$eval(`#tp-bracket li.match[data-match="${myMatch.id}"] a[href*="game="]`, (as) => as.length), 1, 'a finished match links its replay');
  // The stored game ended with a winner, and the match's winner is the team that won it.
  const game = await (await fetch(`${env.base}/api/games/${m.game_id}`)).json();
  assert.ok(game.finished_at_ms && game.result && game.result.winner, `the game is stored finished: ${JSON.stringify(game.result)}`);
  const winnerSeat = m.seats.find((x) => x.colour === game.result.winner);
  assert.equal(m.winner, winnerSeat.entrant, 'the match\'s winner is the team of the winning colour');
  if (won) {
    // Through: the final appears once the other semi-final (bots at 0 ms) ends.
    await waitFor(ana, async () => (await ana.$$('#tp-bracket .bracket-round[data-round="2"] li.match')).length === 1, 'the final drawn on the page (live)', 60000);
    assert.match(await ana.textContent('#tp-bracket .bracket-round[data-round="2"]'), /Ana y Bea/);
  } else {
    await waitFor(ana, async () => (await ana.getAttribute('#tp-mine', 'data-action')) === 'out', 'eliminated, said on the page');
  }
  // The partner on the phone sees the same, from the result screen's link.
  await bea.waitForSelector('#result-tournament:not([hidden])', { timeout: 20000 });
  await bea.tap('#result-tournament');
  await bea.waitForSelector('#view-tournament:not([hidden])');
  if (won) {
    await waitFor(bea, async () => /Ana y Bea/.test(await bea.textContent('#tp-bracket .bracket-round[data-round="2"]').catch(() => '')), 'the final with the pair in it (phone)', 60000);
  } else {
    await waitFor(bea, async () => (await bea.getAttribute('#tp-mine', 'data-action')) === 'out', 'eliminated, said on the page (phone)');
  }
  await shot(bea, 'tournament-after-match-phone.png');
  await assertNoAxeViolations(bea, 'tournament page after the match (phone)');
  await assertTargets(bea, 'tournament page after the match (phone)');
  await shot(ana, 'tournament-after-match-desktop.png');
  // The page in English, redrawn at once.
  await ana.click('#lang-btn');
  await waitFor(ana, async () => (await ana.textContent('#tp-bracket-title')) === 'Bracket', 'the page in English');
  assert.match(await ana.textContent('#tp-status'), /Round \d of 2|Champion/);
  assert.match(await ana.textContent('#tp-mine-title'), /My next match/);
  await assertNoAxeViolations(ana, 'tournament page after the match (desktop)');
  await assertTargets(ana, 'tournament page after the match (desktop)');
  for (const p of [org, ana, bea]) assert.deepEqual(p.errors, [], `${p.tag} had no page errors`);
});
