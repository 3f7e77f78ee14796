// Browser test of playing on a phone (390×844, touch) against a bot in `classic`: touch
// areas of at least 44×44 CSS px measured on pieces and targets, tapping beside a piece
// or on the target's square works, no deselect trap, square numbers left out on the
// phone and at least 9 px on a desktop, the header on one line while disconnected, the
// board turned to the player's colour (spectators: the first player's), a six that
// counts 7 previewed and landed where previewed, last moves and rolls shown, sounds with
// a remembered mute switch, the title flashing in a background tab, animations (none
// with prefers-reduced-motion). Screenshots in artifacts/e2e/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, shot, status, waitFor, act, PHONE, DESKTOP, sleep } from '../harness.mjs';

let env;
// Four games against bots from one address: above the default limit of 3 bot rooms.
before(async () => { env = await setup({ seed: '17017', extraEnv: { PARCHIS_MAX_BOT_ROOMS_PER_ADDRESS: '20' } }); });
after(async () => { await teardown(env); });

async function createVsBot(page, { preset = 'classic', colour = 'red', clock = '60', think = null } = {}) {
  await page.goto(env.base);
  await page.waitForSelector('#view-lobby:not([hidden])');
  await page.fill('#name', 'Pilar');
  await page.selectOption('#preset', preset);
  await page.selectOption('#seats', '2');
  await page.fill('#clock', clock);
  await page.selectOption('#bots', 'greedy');
  await page.selectOption('#colour-pref', colour);
  await page.click('#create-btn');
  await page.waitForSelector('#view-room:not([hidden])');
  const code = new URL(await page.inputValue('#invite')).searchParams.get('room');
  if (think !== null) { /* the form has no think time: the default applies */ }
  return code;
}

const box = (page, sel) => page.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });

test('phone play in classic: touch areas, no deselect trap, the board turned, a six counting 7 lands where previewed', { timeout: 6 * 60 * 1000 }, async () => {
  // The same game on every run: the server's seeded dice mix in this page's client seed,
  // seeded here too (`entropy`; with '17017' and 'x', red's first six counting 7 comes at
  // step 27 of the loop below). A 600 s clock, longer than the test's timeout: no turn of
  // ours can time out and change the game, however slow the machine.
  const p = await newPage(env, 'P', PHONE, { hasTouch: true, entropy: 'x' });
  const code = await createVsBot(p, { preset: 'classic', colour: 'red', clock: '600' });
  // No hook on this page: production pages expose nothing to tests.
  const plain = await newPage(env, 'plain', DESKTOP, { hook: false });
  await plain.goto(env.base);
  await plain.waitForSelector('#view-lobby:not([hidden])');
  assert.equal(await plain.evaluate(() => typeof window.__parchis), 'undefined', 'no test hook in a production page');
  assert.equal(await plain.getAttribute('html', 'lang'), 'es', 'the language follows the browser (es-ES)');

  await p.click('#start-btn');
  await p.waitForSelector('#view-game:not([hidden])');
  assert.equal(await p.getAttribute('svg.board', 'data-bottom'), 'red', 'the board is turned: red at the bottom');
  const redNest = await box(p, 'svg.board [data-nest="red"]');
  const boardBox = await box(p, 'svg.board');
  assert.ok(redNest.y > boardBox.y + boardBox.h / 2, 'red\'s nest is drawn in the lower half');
  // Square numbers: left out on the phone (they would be under 9 px).
  assert.ok(await p.$eval('svg.board', (s) => s.classList.contains('no-nums')), 'numbers left out on a phone');
  assert.equal(await p.isVisible('svg.board .num[data-n="12"]'), false);

  // A spectator on a desktop: the first player's colour (red) at the bottom, numbers ≥ 9 px.
  const w = await newPage(env, 'W', DESKTOP);
  await w.goto(`${env.base}/r/${code}`);
  await w.waitForSelector('#view-game:not([hidden])');
  assert.equal(await w.getAttribute('svg.board', 'data-bottom'), 'red');
  const num = await box(w, 'svg.board .num[data-n="12"]');
  assert.ok(num.h >= 9, `square numbers are at least 9 px on a desktop: ${num.h}`);

  let measured = false; let trap = false; let seven = null; let tapped = false; let steps = 0;
  while (steps < 300 && !(measured && trap && seven && tapped)) {
    const st = await status(p);
    if (st.outcome) break;
    if (!st.myTurn) {
      const seq = st.seq;
      await waitFor(p, async () => { const s = await status(p); return s.seq > seq || s.myTurn || s.outcome; }, 'the bot to act', 20000);
      continue;
    }
    steps += 1;
    if (st.myTurn.must_roll) { await act(p, st, 'board'); continue; }
    const actions = await p.$$eval('#action-list button', (bs) => bs.map((b) => ({ ...b.dataset })));
    if (!measured) {
      // Every movable piece and (once one is chosen) every target: ≥ 44×44 CSS px.
      for (const h of await p.$$('svg.board .piece-hit')) {
        const b = await h.boundingBox();
        assert.ok(b.width >= 44 && b.height >= 44, `piece touch area ${b.width}×${b.height}`);
      }
      const first = actions[0];
      await p.tap(`svg.board .piece.selectable[data-colour="red"][data-piece="${first.piece}"]`);
      await waitFor(p, async () => (await p.$$('svg.board .target-hit')).length > 0, 'targets shown');
      for (const h of await p.$$('svg.board .target-hit')) {
        const b = await h.boundingBox();
        assert.ok(b.width >= 44 && b.height >= 44, `target touch area ${b.width}×${b.height}`);
      }
      await shot(p, 'phone-targets.png');
      measured = true;
    }
    if (!trap) {
      // Tapping the chosen piece again keeps it chosen and its targets shown.
      const sel = (await status(p)).selected;
      if (sel) {
        const n = sel.split(':')[1];
        await p.tap(`svg.board .piece.selectable[data-colour="red"][data-piece="${n}"] .piece-body`);
        assert.equal((await status(p)).selected, sel, 'no deselect trap');
        assert.ok((await p.$$('svg.board .target')).length > 0, 'its targets stay');
        trap = true;
      }
    }
    const six = actions.find((a) => a.kind === 'move' && JSON.parse(a.key).die === 6 && a.steps === '7');
    const pick = six || actions[actions.length - 1];
    if (six) {
      assert.match(await p.textContent(`#action-list button[data-key='${six.key}']`), /con 6 \(cuenta 7\)/);
    }
    if (!tapped && !six) {
      // Tap the target's square beside its centre (inside the touch area, off the ring).
      const sel = `svg.board .piece.selectable[data-colour="red"][data-piece="${pick.piece}"]`;
      if ((await status(p)).selected !== `red:${pick.piece}`) await p.tap(sel);
      const hit = await p.$(`svg.board .target-hit[data-key='${pick.key}']`);
      const b = await hit.boundingBox();
      const before = (await status(p)).seq;
      await p.touchscreen.tap(b.x + b.width / 2 + 14, b.y + b.height / 2 + 3);
      await waitFor(p, async () => (await status(p)).seq > before, 'the tap beside the target to play it');
      const loc = await waitFor(p, () => p.$eval(`svg.board .piece[data-colour="red"][data-piece="${pick.piece}"]`, (e) => e.dataset.loc), 'the moved piece');
      assert.equal(loc, pick.target, 'a tap inside the touch area plays the move, landing as previewed');
      tapped = true;
      continue;
    }
    const played = await act(p, st, 'board', () => pick);
    assert.equal(played.landed, played.target, `lands where previewed: ${JSON.stringify(played)}`);
    if (six) seven = played;
  }
  console.log(`# steps: ${steps}, a six counting 7: ${seven ? JSON.stringify(seven) : 'none'}`);
  assert.ok(measured && trap && tapped, 'touch areas measured, no deselect trap, a tap beside the target');
  assert.ok(seven, 'a six counting 7 was previewed and played');
  await shot(p, 'phone-classic.png');
  await shot(w, 'spectator-classic-desktop.png');

  // Following: the last move of both players marked, the last rolls beside them.
  await waitFor(p, async () => (await p.$$('svg.board .last-move')).length === 2, 'both players\' last moves marked', 30000);
  for (const c of ['yellow', 'red']) {
    assert.ok((await p.$$(`#player-list li[data-colour="${c}"] .last-roll .die`)).length >= 1, `${c}'s last roll shown`);
  }
  const marks = await p.$$eval('svg.board .last-move', (ms) => ms.map((m) => m.dataset.colour).sort());
  assert.deepEqual(marks, ['red', 'yellow']);
  assert.match(await p.getAttribute('#player-list li[data-colour="yellow"] .player-name', 'class'), /player-name/);
  assert.ok(/Bot normal 1/.test(await p.textContent('#player-list')), 'the bot\'s name is translated');

  // Sounds: the turn sound was heard; muting is remembered across a reload.
  const sounds = await p.evaluate(() => window.__parchis.sounds());
  assert.ok(sounds.some((s) => s.name === 'turn' && !s.muted), `turn sound played: ${JSON.stringify(sounds.slice(-5))}`);
  assert.ok((await p.evaluate(() => window.__parchis.animations())) > 0, 'moves are animated');
  await p.click('#mute-btn');
  assert.equal(await p.getAttribute('#mute-btn', 'aria-pressed'), 'true');
  await p.reload();
  await p.waitForSelector('#view-game:not([hidden])').catch(async (e) => { await shot(p, 'debug-reload.png'); console.log(p.errors, await p.evaluate(() => location.href)); throw e; });
  assert.equal(await p.getAttribute('#mute-btn', 'aria-pressed'), 'true', 'mute is remembered');

  // The tab title flashes on your turn when the tab is in the background.
  await p.evaluate(() => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
    document.dispatchEvent(new Event('visibilitychange'));
  });
  for (let k = 0; k < 200 && !(await p.title()).includes('Te toca'); k++) {
    const st = await status(p);
    if (st.myTurn && !st.myTurn.must_roll) await act(p, st, 'list');
    else await sleep(50);
  }
  assert.match(await p.title(), /Te toca/, 'the title flashes on my turn in a background tab');
  const muted = await p.evaluate(() => window.__parchis.sounds());
  assert.ok(muted.length > 0 && muted.every((s) => s.muted), 'after muting, sounds are muted');

  // The header stays one line while the connection is down.
  await p.context().setOffline(true);
  await p.evaluate(() => window.__parchis.drop());
  await waitFor(p, async () => (await p.getAttribute('#conn-status', 'data-state')) === 'reconnecting', 'reconnecting');
  const header = await box(p, 'header.top');
  const button = await box(p, '#lang-btn');
  assert.ok(header.h < button.h * 1.8, `the header is one line (${header.h} px for ${button.h} px buttons)`);
  const tops = await p.$$eval('header.top > *', (els) => els.filter((e) => e.offsetParent).map((e) => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2)));
  assert.ok(Math.max(...tops) - Math.min(...tops) <= 4, `header items on one line: ${tops}`);
  await shot(p, 'phone-disconnected.png');
  await p.context().setOffline(false);
  await waitFor(p, async () => (await p.getAttribute('#conn-status', 'data-state')) === 'open', 'reconnected', 20000);
  for (const q of [p, w, plain]) assert.deepEqual(q.errors, [], `${q.tag} had no page errors`);
});

for (const [label, viewport] of [['phone', PHONE], ['desktop', DESKTOP]]) {
test(`${label}: prefers-reduced-motion: moves, captures and dice are drawn without animation`, { timeout: 3 * 60 * 1000 }, async () => {
  // Seeded (the server's dice and this page's seed): the same game, with a capture, every run.
  const r = await newPage(env, `R-${label}`, viewport, { reducedMotion: 'reduce', hasTouch: viewport === PHONE, entropy: `rm-${label}` });
  await createVsBot(r, { preset: 'online', colour: 'yellow' });
  await r.click('#start-btn');
  await r.waitForSelector('#view-game:not([hidden])');
  // Play (captures first) until pieces moved and one was captured, or the game ends.
  let moves = 0; let captures = 0;
  while (moves < 6 || captures < 1) {
    const st = await status(r);
    if (st.outcome) break;
    if (!st.myTurn) {
      const seq = st.seq;
      await waitFor(r, async () => { const s = await status(r); return s.seq > seq || s.myTurn || s.outcome; }, 'the bot', 20000);
      const log = await r.$$eval('#log li', (ls) => ls.map((l) => l.textContent));
      moves = log.filter((l) => /mueve|saca una ficha/.test(l)).length;
      captures = log.filter((l) => / come a /.test(l)).length;
      continue;
    }
    await act(r, st, 'list');
  }
  assert.ok(moves >= 6, `pieces moved: ${moves}`);
  assert.ok(captures >= 1, 'a piece was captured (and sent home without animation)');
  assert.equal(await r.evaluate(() => window.__parchis.animations()), 0, 'no animation with reduced motion');
  assert.equal(await r.evaluate(() => window.__parchis.homeAnimations()), 0, 'no captured piece animated going home');
  assert.equal(await r.evaluate(() => window.__parchis.diceAnimations()), 0, 'no dice animation with reduced motion');
  assert.deepEqual(r.errors, []);
});
}

test('timeout strikes are shown to the player and beside each player', { timeout: 3 * 60 * 1000 }, async () => {
  const s = await newPage(env, 'S', PHONE);
  await createVsBot(s, { preset: 'online', colour: 'blue', clock: '2' });
  await s.click('#start-btn');
  await s.waitForSelector('#view-game:not([hidden])');
  // Do nothing: the clock runs out.
  await waitFor(s, async () => !(await s.isHidden('#my-strikes')), 'a timeout strike', 30000);
  assert.match(await s.textContent('#my-strikes'), /Se te ha acabado el tiempo 1 de 3 veces/);
  assert.match(await s.textContent('#player-list li[data-colour="blue"] .strikes'), /1\/3/);
  await shot(s, 'phone-timeout-strike.png');
  assert.deepEqual(s.errors, []);
});
