// Browser tests of issue 29 (web client, round two) in the game, on a phone (390×844,
// touch) and a desktop: axe-core finds nothing on the game, result and replay views and
// every control is at least 44×44 CSS px; keyboard focus follows the play and Escape
// closes dialogs (point 8); captures are marked above the pieces, survive the bonus move,
// are announced and animated (point 1); targets carry their square's number, stacked
// pieces can be chosen and the phone board zooms (point 2); a dropped player's seat
// counts down to the bot, whose seat then shows no strikes (point 5); the replay names
// bots in the reader's language (point 6), autoplays with a slider and says whose turn
// it is; shapes on the pieces and high contrast (point 7); quick emotes; the dice
// animation; the fair-dice explanation inside the client. Screenshots in artifacts/e2e/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, shot, status, waitFor, act, sleep, PHONE, DESKTOP, offBodyPoint } from '../harness.mjs';
import { assertNoAxeViolations, assertTargets } from '../a11y.mjs';

let env;
before(async () => { env = await setup({ seed: '2930', extraEnv: { PARCHIS_MAX_BOT_ROOMS_PER_ADDRESS: '20' } }); });
after(async () => { await teardown(env); });

const post = async (path, body) => (await fetch(`${env.base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();
const get = async (path) => (await fetch(`${env.base}${path}`)).json();
const box = (page, sel) => page.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { w: r.width, h: r.height }; });
const focused = (page) => page.evaluate(() => {
  const a = document.activeElement;
  if (!a || a === document.body) return 'body';
  return a.id ? `#${a.id}` : (a.getAttribute('class') || a.tagName);
});

/** Joins room `code` through its invite link as `name`. */
async function joinByLink(page, code, name) {
  await page.goto(`${env.base}/?room=${code}`);
  await page.waitForSelector('#view-join:not([hidden])');
  await page.fill('#join-name', name);
  await page.click('#join-btn');
  await page.waitForSelector('#view-room:not([hidden])');
}

/** Keen play: a capture first, then bringing a piece out, else the first action. */
const keen = (actions) => actions.find((a) => a.capture === '1') || actions.find((a) => a.kind === 'exit') || actions[0];

for (const [label, viewport] of [['phone', PHONE], ['desktop', DESKTOP]]) {
  const touch = viewport === PHONE;

  test(`${label}: the game view: axe, 44 px, focus, shapes, contrast, emotes, fair dice, dice animation, captures, targets' numbers, zoom, stacks`, { timeout: 8 * 60 * 1000 }, async () => {
    const room = await post('/api/rooms', { preset: 'classic', seats: 2, bots: 'greedy', bot_think_ms: 0, turn_clock_secs: 600 });
    const p = await newPage(env, `G-${label}`, viewport, { hasTouch: touch, entropy: `g-${label}` });
    await joinByLink(p, room.code, 'Gema');
    await p.click('#start-btn');
    await p.waitForSelector('#view-game:not([hidden])');
    await assertNoAxeViolations(p, `the game view (${label})`);
    await assertTargets(p, `the game view (${label})`);
    const me = (await status(p)).colour;

    // Point 7: a shape per colour on every piece, the same beside the names.
    const shapes = await p.$$eval('svg.board .piece', (ps) => ps.map((e) => `${e.dataset.colour}:${e.querySelector('.piece-mark').dataset.shape}`));
    const want = { yellow: '●', blue: '■', red: '▲', green: '◆' };
    for (const s of shapes) { const [c, sh] = s.split(':'); assert.equal(sh, want[c], s); }
    assert.equal(await p.$eval('svg.board', (s) => s.classList.contains('shapes')), true, 'shapes on by default');
    assert.match(await p.textContent(`#player-list li[data-colour="${me}"] .swatch`), /[●■▲◆]/);
    // High contrast from the settings dialog; Escape closes it.
    await p.click('#settings-btn');
    await p.waitForSelector('#settings-dialog[open]');
    await assertTargets(p, `the settings dialog (${label})`);
    await p.click('#pref-contrast');
    assert.equal(await p.evaluate(() => document.body.classList.contains('hc')), true);
    const fill = await p.$eval(`svg.board .piece[data-colour="${me}"] .piece-body`, (e) => getComputedStyle(e).fill);
    const hc = { yellow: 'rgb(240, 228, 66)', blue: 'rgb(0, 114, 178)', red: 'rgb(213, 94, 0)', green: 'rgb(0, 158, 115)' };
    assert.equal(fill, hc[me], 'the high-contrast palette');
    await p.keyboard.press('Escape');
    await waitFor(p, async () => !(await p.$('#settings-dialog[open]')), 'Escape closes the settings');
    await assertNoAxeViolations(p, `the game view in high contrast (${label})`);
    await shot(p, `r2-game-hc-${label}.png`);

    // The fair dice explained inside the client, in Spanish; Escape closes it.
    await p.click('#game-fair a.fair-link');
    await p.waitForSelector('#fair-dialog[open]');
    assert.match(await p.textContent('#fair-dialog'), /compromiso.*semilla/s);
    await assertNoAxeViolations(p, `the fair-dice explanation (${label})`);
    await p.keyboard.press('Escape');
    await waitFor(p, async () => !(await p.$('#fair-dialog[open]')), 'Escape closes the explanation');

    // Quick emotes: a fixed list; the sender hears its own; muting hides them all.
    assert.equal((await p.$$('#emote-bar button')).length, 8);
    await p.click('#emote-bar button[data-emote="good_luck"]');
    await waitFor(p, () => p.$('#emote-feed li[data-emote="good_luck"]'), 'the emote shown');
    assert.match(await p.textContent('#emote-feed'), /¡Suerte!/);

    // Play: the first roll by keyboard; the focus must land on what comes next.
    let keyboardChecked = false; let moveFocus = null; let capture = null; let survived = false; let labelled = false; let zoomed = !touch; let stacked = false;
    const animBefore = await p.evaluate(() => window.__parchis.animations());
    for (let steps = 0; steps < 400; steps++) {
      const st = await status(p);
      if (st.outcome) break;
      // A capture: the mark above the pieces, the banner, and (later) the bonus move.
      const mark = await p.$('svg.board g.pieces ~ g.capture-marks .capture-mark');
      if (mark && !capture) {
        capture = { by: await mark.getAttribute('data-by'), square: await mark.getAttribute('data-square'), seq: st.seq };
        const banner = await p.textContent('#capture-banner');
        assert.ok(await p.isVisible('#capture-banner'), 'a capture banner');
        assert.match(banner, /(¡Te comen!|¡Comes a|come a).*\+\d+/, banner);
        await shot(p, `r2-capture-${label}.png`);
      }
      if (capture && !survived) {
        // The capture marked now, and whether its capturer has played the bonus since.
        const now = await p.evaluate(() => {
          const x = window.__parchis.state();
          const who = (e) => (e.key === 'ev_captured' ? e.p.by.c : e.p.colour && e.p.colour.c);
          const keys = x.log.map((e) => `${e.key}:${who(e)}`);
          const lc = x.lastCapture;
          if (!lc) return null;
          const at = keys.lastIndexOf(`ev_captured:${lc.by}`);
          return { square: lc.square, bonus: at >= 0 && keys.slice(at + 1).includes(`ev_moved_bonus:${lc.by}`) };
        });
        if (now && now.bonus) {
          assert.ok(await p.$(`svg.board .capture-marks .capture-mark[data-square="${now.square}"]`), 'the mark outlives the bonus move');
          survived = true;
        }
      }
      if (!st.myTurn) {
        const seq = st.seq;
        await waitFor(p, async () => { const s = await status(p); return s.seq > seq || s.myTurn || s.outcome; }, 'the bot', 20000);
        continue;
      }
      if (moveFocus === 'moved' && st.myTurn.must_roll) {
        // The turn came back after a keyboard move: the focus is on the roll button (no Tab).
        moveFocus = await waitFor(p, async () => { const x = await focused(p); return x === '#roll-btn' ? x : null; }, 'the focus on the roll button when the turn comes back', 5000);
      }
      if (st.myTurn.must_roll && !keyboardChecked) {
        await p.focus('#roll-btn');
        await p.keyboard.press('Enter');
        await waitFor(p, async () => (await status(p)).seq > st.seq, 'the roll');
        const f = await waitFor(p, async () => { const x = await focused(p); return x !== 'body' ? x : null; }, 'the focus to land somewhere', 5000);
        assert.notEqual(f, 'body', 'after a roll the focus is not lost');
        keyboardChecked = true;
        continue;
      }
      if (!st.myTurn.must_roll) {
        const actions = await p.$$eval('#action-list button', (bs) => bs.map((b) => ({ ...b.dataset, text: b.textContent })));
        const exit = actions.find((a) => a.kind === 'exit');
        if (exit) assert.match(exit.text, /salida/, 'the exit is named without a hidden square number');
        // Stacked movable pieces: one touch area that asks which.
        const stack = await p.$('svg.board .stack-hit');
        if (stack && !stacked) {
          const ids = (await stack.getAttribute('data-pieces')).split(' ');
          // A point of the square's touch area off both pieces' bodies.
          const pt = await offBodyPoint(stack);
          assert.ok(pt, 'the stack\'s touch area is reachable beside the pieces');
          if (touch) await p.touchscreen.tap(pt.x, pt.y); else await p.mouse.click(pt.x, pt.y);
          await p.waitForSelector('#stack-dialog[open]');
          const choices = await p.$$('#stack-choices button');
          assert.equal(choices.length, ids.length);
          for (const c of choices) { const bb = await c.boundingBox(); assert.ok(bb.width >= 44 && bb.height >= 44); }
          const second = ids[1].split(':')[1];
          await p.click(`#stack-choices button[data-piece="${second}"]`);
          assert.equal((await status(p)).selected, ids[1], 'the chosen piece of the stack is selected');
          stacked = true;
        }
        // Targets carry the square's number, readable on a phone.
        const a = keen(actions);
        if (a.kind !== 'bonus' && !labelled) {
          const sel = `svg.board .piece.selectable[data-colour="${me}"][data-piece="${a.piece}"]`;
          if ((await status(p)).selected !== `${me}:${a.piece}`) await p.click(sel, { force: true });
          await p.waitForSelector('svg.board .target .target-label-text');
          const labels = await p.$$eval('svg.board .target', (ts) => ts.map((t) => ({ loc: t.dataset.loc, text: t.querySelector('.target-label-text')?.textContent, h: t.querySelector('.target-label-text')?.getBoundingClientRect().height })));
          for (const l of labels) {
            if (/^\d+$/.test(l.loc)) assert.equal(l.text, l.loc, 'the target names its square');
            assert.ok(l.h >= 9, `a target's number of ${l.h} px`);
          }
          if (!zoomed) {
            const small = await box(p, `svg.board .piece[data-colour="${me}"] .piece-body`);
            await p.tap('#zoom-btn');
            assert.equal(await p.getAttribute('#zoom-btn', 'aria-pressed'), 'true');
            await sleep(100);
            const big = await box(p, `svg.board .piece[data-colour="${me}"] .piece-body`);
            assert.ok(big.w >= 1.9 * small.w && big.w >= 28, `zoomed pieces: ${small.w} -> ${big.w} px`);
            for (const h of await p.$$('svg.board .piece-hit')) { const bb = await h.boundingBox(); assert.ok(bb.width >= 44); }
            await shot(p, 'r2-zoomed-phone.png');
            await p.tap('#zoom-btn');
            zoomed = true;
          }
          labelled = true;
        }
        if (keyboardChecked && !moveFocus && a.kind !== 'bonus') {
          // A move by keyboard (the piece, then its target, with Enter): the focus is not lost.
          await act(p, await status(p), 'keyboard', () => a);
          const f = await waitFor(p, async () => { const x = await focused(p); return x !== 'body' ? x : null; }, 'the focus after a move', 5000);
          assert.notEqual(f, 'body', 'after a move the focus is not lost');
          moveFocus = 'moved';
          continue;
        }
        await act(p, await status(p), 'list', () => a);
        continue;
      }
      await act(p, st, 'list');
      if (capture && survived && labelled && moveFocus === '#roll-btn' && (stacked || steps > 250)) break;
    }
    assert.ok(keyboardChecked && labelled && zoomed, 'focus, target numbers and zoom checked');
    assert.equal(moveFocus, '#roll-btn', 'after a keyboard move, the focus came back to the roll button');
    assert.ok((await p.evaluate(() => window.__parchis.homeAnimations())) >= 1, 'the captured piece was animated going home');
    assert.ok(capture, 'a capture happened and was marked above the pieces');
    assert.ok(survived, 'its mark outlived the capturer\'s bonus move');
    // The seeded game (the server's dice seed and this page's `entropy`) stacks two of our
    // movable pieces on one square on every run.
    assert.ok(stacked, 'two movable pieces on one square were offered in a chooser');
    assert.ok((await p.evaluate(() => window.__parchis.animations())) > animBefore, 'moves (and the capture) animated');
    assert.ok((await p.evaluate(() => window.__parchis.diceAnimations())) > 0, 'the dice roll is animated');
    // The fair-dice explanation and the emotes in English too.
    await p.click('#lang-btn');
    await waitFor(p, async () => /Good luck!/.test(await p.textContent('#emote-bar')), 'the emotes in English');
    assert.match(await p.textContent('#emote-feed'), /Good luck!/, 'the emote already shown, in English');
    await p.click('#game-fair a.fair-link');
    await p.waitForSelector('#fair-dialog[open]');
    assert.match(await p.textContent('#fair-dialog'), /commitment.*seed/s);
    assert.doesNotMatch(await p.textContent('#fair-dialog'), /semilla/);
    await p.keyboard.press('Escape');
    await waitFor(p, async () => !(await p.$('#fair-dialog[open]')), 'Escape closes the explanation');
    await p.click('#lang-btn');
    // Mute emotes: the bar and the feed go.
    await p.click('#emote-mute');
    assert.ok(await p.isHidden('#emote-bar'));
    assert.equal((await p.$$('#emote-feed li')).length, 0);
    assert.deepEqual(p.errors, []);
    await p.context().close();
  });

  test(`${label}: a dropped opponent counts down to the bot, whose seat shows no strikes; emotes reach players and spectators, who have none to send`, { timeout: 3 * 60 * 1000 }, async () => {
    const room = await post('/api/rooms', { preset: 'online', seats: 2, turn_clock_secs: 3, disconnect_grace_secs: 9, on_abandon: 'bot', bot_think_ms: 0 });
    const p = await newPage(env, `T-${label}`, viewport, { hasTouch: touch });
    await joinByLink(p, room.code, 'Tere');
    // Red is a WebSocket in a helper page, closed at will.
    const h = await newPage(env, `H-${label}`, DESKTOP);
    await h.goto(env.base);
    await h.evaluate(async (c) => {
      const ws = new WebSocket(`${location.origin.replace('http', 'ws')}/ws`);
      window.__red = ws;
      await new Promise((res) => { ws.onopen = () => ws.send(JSON.stringify({ type: 'join', req: 1, room: c, name: 'Rosa', colour: 'red' })); ws.onmessage = (e) => { if (JSON.parse(e.data).type === 'welcome') res(); }; });
    }, room.code);
    const w = await newPage(env, `W-${label}`, viewport, { hasTouch: touch });
    await w.goto(`${env.base}/?room=${room.code}&watch=1`);
    await w.waitForSelector('#view-room:not([hidden])');
    await waitFor(p, async () => (await p.$$('#seat-list li[data-taken]')).length === 2, 'red seated');
    await p.click('#start-btn');
    await p.waitForSelector('#view-game:not([hidden])');
    await w.waitForSelector('#view-game:not([hidden])');
    // An emote from red reaches the player and the spectator; the spectator has no bar.
    await h.evaluate((c) => window.__red.send(JSON.stringify({ type: 'emote', req: 2, room: c, emote: 'hello' })), room.code);
    for (const q of [p, w]) await waitFor(q, () => q.$('#emote-feed li[data-colour="red"][data-emote="hello"]'), `${q.tag} sees red's emote`);
    assert.match(await w.textContent('#emote-feed'), /Rojo \(Rosa\): ¡Hola!/);
    assert.ok(await w.isHidden('#emote-bar'), 'spectators get no control to send emotes');
    assert.ok(await p.isVisible('#emote-bar'));
    await assertNoAxeViolations(w, `the game view of a spectator (${label})`);
    // Red drops on its turn: a countdown to the bot, then the bot, and no strike badge.
    let dropped = false; let countdown = null; let strikeSeen = false;
    for (let k = 0; k < 400; k++) {
      const st = await status(p);
      if (!dropped && st.turn === 'red') {
        await h.evaluate(() => window.__red.close());
        dropped = true;
      }
      if (dropped && !countdown) {
        const li = await p.$('#away-list li[data-colour="red"]');
        if (li) countdown = { text: await li.textContent(), secs: Number(await li.getAttribute('data-secs')) };
      }
      if ((await p.textContent('#player-list li[data-colour="red"] .strikes')).includes('1/3')) strikeSeen = true;
      if (dropped && /Un bot juega ahora con Rojo/.test(await p.textContent('#log'))) break;
      if (st.myTurn) { await act(p, st, 'list'); continue; }
      await sleep(50);
    }
    assert.ok(countdown, 'a countdown for the dropped player');
    assert.match(countdown.text, /Un bot jugará por Rojo \(Rosa\) en \d+ s/);
    // 9 s of grace; a second more for rounding up against the clocks' offset.
    assert.ok(countdown.secs > 0 && countdown.secs <= 10, `within the grace period: ${countdown.secs}`);
    assert.ok(strikeSeen, 'red timed out once while away (⏱ 1/3)');
    await waitFor(p, async () => (await p.$$('#away-list li')).length === 0, 'the countdown gone');
    assert.equal((await p.textContent('#player-list li[data-colour="red"] .strikes')).trim(), '', 'no strike badge beside the bot');
    assert.match(await p.textContent('#player-list li[data-colour="red"]'), /bot/);
    await shot(p, `r2-takeover-${label}.png`);
    for (const q of [p, w, h]) assert.deepEqual(q.errors, [], `${q.tag} had no page errors`);
    for (const q of [p, w, h]) await q.context().close();
  });

  test(`${label}: the result and the replay: axe, 44 px, Escape, bot names translated, autoplay, slider, whose turn`, { timeout: 3 * 60 * 1000 }, async () => {
    const room = await post('/api/rooms', { preset: 'online', seats: 2, bots: 'greedy', bot_think_ms: 0, turn_clock_secs: 600 });
    const p = await newPage(env, `R-${label}`, DESKTOP);
    await joinByLink(p, room.code, 'Raúl');
    const w = await newPage(env, `V-${label}`, viewport, { hasTouch: touch });
    await w.goto(`${env.base}/?room=${room.code}&watch=1`);
    await w.waitForSelector('#view-room:not([hidden])');
    await p.click('#start-btn');
    await p.waitForSelector('#view-game:not([hidden])');
    for (let moves = 0; moves < 8;) {
      const st = await status(p);
      if (st.myTurn) { await act(p, st, 'list'); moves += 1; } else await sleep(30);
    }
    // Leaving asks first; Escape keeps playing.
    await p.click('#game-leave');
    await p.waitForSelector('#leave-dialog[open]');
    await p.keyboard.press('Escape');
    await waitFor(p, async () => !(await p.$('#leave-dialog[open]')), 'Escape closes the leave dialog');
    await p.click('#game-leave');
    await p.click('#leave-confirm');
    // The bot wins by forfeit: the spectator's result screen.
    await w.waitForSelector('#result:not([hidden])', { timeout: 20000 });
    await assertNoAxeViolations(w, `the result view (${label})`);
    await assertTargets(w, `the result view (${label})`);
    await w.keyboard.press('Escape');
    await waitFor(w, () => w.isHidden('#result'), 'Escape closes the result');
    const gameId = (await status(w)).gameId;
    await w.goto(`${env.base}/?game=${gameId}`);
    await w.waitForSelector('#view-replay:not([hidden])');
    const data = await get(`/api/games/${gameId}/replay`);
    assert.match(await w.textContent('#replay-players'), /Bot normal 1/, 'the bot named as in the game');
    assert.doesNotMatch(await w.textContent('#replay-players'), /Greedy bot/);
    await assertNoAxeViolations(w, `the replay view (${label})`);
    await assertTargets(w, `the replay view (${label})`);
    // The slider to step 0, whose turn it is there, then autoplay and pause.
    await w.$eval('#replay-slider', (e) => { e.value = '0'; e.dispatchEvent(new Event('input', { bubbles: true })); });
    assert.equal(await w.getAttribute('#replay-counter', 'data-step'), '0');
    const turnAt = async () => {
      const i = Number(await w.getAttribute('#replay-counter', 'data-step'));
      assert.equal(await w.getAttribute('#replay-turn', 'data-turn'), data.steps[i].position.turn, `whose turn at step ${i}`);
      return i;
    };
    await turnAt();
    await w.click('#replay-play');
    assert.equal(await w.getAttribute('#replay-play', 'aria-pressed'), 'true');
    await waitFor(w, async () => Number(await w.getAttribute('#replay-counter', 'data-step')) >= 2, 'autoplay to advance', 5000);
    await w.click('#replay-play');
    assert.equal(await w.getAttribute('#replay-play', 'aria-pressed'), 'false');
    const paused = await turnAt();
    await sleep(1000);
    assert.equal(Number(await w.getAttribute('#replay-counter', 'data-step')), paused, 'paused');
    assert.equal(await w.$eval('#replay-slider', (e) => Number(e.value)), paused, 'the slider follows');
    await shot(w, `r2-replay-${label}.png`);
    for (const q of [p, w]) assert.deepEqual(q.errors, [], `${q.tag} had no page errors`);
    for (const q of [p, w]) await q.context().close();
  });
}
