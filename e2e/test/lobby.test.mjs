// Browser test of the lobby and the language (desktop and phone): full rooms are offered
// for watching only; each listed room shows its rule set, clock and free colours; "play
// now" joins the oldest public room of its rules with a free seat or offers to create one; the invite panel on a
// loopback address warns and explains; phones get the system share sheet; the language
// follows the browser until picked, and switching re-renders everything (move log, status
// line, bot names). Screenshots in artifacts/e2e/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, shot, waitFor, PHONE, DESKTOP } from '../harness.mjs';

let env;
before(async () => { env = await setup({ seed: '99' }); });
after(async () => { await teardown(env); });

const post = async (path, body) => (await fetch(`${env.base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })).json();

/** Seats `name` in room `code` from a WebSocket opened inside `page` (kept open). */
async function seat(page, code, name) {
  await page.evaluate(async ([c, n]) => {
    const ws = new WebSocket(`${location.origin.replace('http', 'ws')}/ws`);
    window.__seats = (window.__seats || []).concat([ws]);
    await new Promise((res, rej) => {
      ws.onopen = () => ws.send(JSON.stringify({ type: 'join', req: 1, room: c, name: n }));
      ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.type === 'welcome') res(); if (m.type === 'error') rej(new Error(m.code)); };
    });
  }, [code, name]);
}

test('lobby: full rooms are watch-only, rooms show rules, clock and free colours, play now, loopback warning, share sheet', { timeout: 4 * 60 * 1000 }, async () => {
  const helper = await newPage(env, 'H', DESKTOP);
  await helper.goto(env.base);
  const full = await post('/api/rooms', { preset: 'classic', seats: 2, turn_clock_secs: 45 });
  await seat(helper, full.code, 'Uno');
  await seat(helper, full.code, 'Dos');
  const open = await post('/api/rooms', { preset: 'online', seats: 2, turn_clock_secs: 20 });
  await seat(helper, open.code, 'Tres');

  const l = await newPage(env, 'L', DESKTOP);
  await l.goto(env.base);
  await l.waitForSelector(`#room-list li[data-code="${open.code}"]`);
  const fullRow = `#room-list li[data-code="${full.code}"]`;
  assert.equal(await l.$(`${fullRow} .join-room`), null, 'a full room is not offered for joining');
  assert.ok(await l.isVisible(`${fullRow} .watch-room`), 'it can be watched');
  const text = await l.textContent(`#room-list li[data-code="${open.code}"] .room-info`);
  assert.match(text, /Online/, 'the rule set');
  assert.match(text, /20 s por tirada/, 'the clock');
  assert.match(text, /libres: (Amarillo|Azul|Rojo|Verde)/, 'the free colours');
  assert.match(await l.textContent(`${fullRow} .room-info`), /Clásico.*45 s/);
  await shot(l, 'lobby-list.png');

  // Play now: the oldest public room with a free seat.
  await l.fill('#name', 'Nora');
  await l.click('#play-now');
  await l.waitForSelector('#view-room:not([hidden])');
  assert.equal((await l.textContent('#room-title')).includes(open.code), true, 'joined the open room');
  // Served from a loopback address: the invite panel says so and how to share.
  assert.ok(await l.isVisible('#invite-loopback'));
  assert.match(await l.textContent('#invite-loopback'), /solo funciona en este ordenador.*PARCHIS_PUBLIC_URL/);
  await shot(l, 'invite-loopback.png');

  // Play now with no free seat anywhere: a new public room.
  const m = await newPage(env, 'M', PHONE, { hasTouch: true });
  await m.addInitScript(() => { navigator.share = (d) => { window.__shared = d; return Promise.resolve(); }; });
  await m.goto(env.base);
  await m.fill('#name', 'Marta');
  await m.click('#play-now');
  // No open room of these rules: the offer; "create a room and wait" makes a public one.
  await m.waitForSelector('#play-now-offer:not([hidden])');
  await m.click('#play-wait');
  await m.waitForSelector('#view-room:not([hidden])');
  const title = await m.textContent('#room-title');
  assert.ok(!title.includes(open.code) && !title.includes(full.code), `a room of its own: ${title}`);
  // On a phone the system share sheet is offered.
  assert.ok(await m.isVisible('#share-invite'), 'share button on a phone');
  await m.click('#share-invite');
  const shared = await m.evaluate(() => window.__shared);
  assert.match(shared.url, /\?room=[0-9A-Z]{10}$/);
  await shot(m, 'invite-share-phone.png');
  for (const p of [helper, l, m]) assert.deepEqual(p.errors, [], `${p.tag} had no page errors`);
});

test('language: follows the browser until picked; switching re-renders the log, the status line and bot names', { timeout: 4 * 60 * 1000 }, async () => {
  const e = await newPage(env, 'EN', DESKTOP, { locale: 'en-GB' });
  await e.goto(env.base);
  await e.waitForSelector('#view-lobby:not([hidden])');
  assert.equal(await e.getAttribute('html', 'lang'), 'en', 'English from the browser');
  assert.equal((await e.textContent('#play-now')).trim(), 'Play now');
  await e.fill('#name', 'Eve');
  await e.selectOption('#seats', '2');
  await e.selectOption('#bots', 'greedy');
  await e.selectOption('#colour-pref', 'green');
  await e.click('#create-btn');
  await e.waitForSelector('#view-room:not([hidden])');
  await e.click('#start-btn');
  await e.waitForSelector('#view-game:not([hidden])');
  await waitFor(e, async () => (await e.$$('#log li')).length >= 3, 'a few log entries', 20000);
  const enLog = await e.$$eval('#log li', (ls) => ls.map((l) => l.textContent).join('\n'));
  assert.match(enLog, /The game starts/);
  assert.match(await e.textContent('#player-list'), /Normal bot 1/);
  assert.match(await e.textContent('#turn-banner'), /(turn|Your turn!|wins)/, 'the status line in English');
  await shot(e, 'game-en.png');
  await e.click('#lang-btn');
  assert.equal(await e.getAttribute('html', 'lang'), 'es');
  const esLog = await e.$$eval('#log li', (ls) => ls.map((l) => l.textContent).join('\n'));
  assert.match(esLog, /Empieza la partida|empieza/i, 'the move log is re-rendered in Spanish');
  assert.doesNotMatch(esLog, /The game starts/);
  assert.match(await e.textContent('#player-list'), /Bot normal 1/, 'bot names translated');
  assert.match(await e.textContent('#turn-banner'), /^(Turno de|¡Te toca!|¡Gana)/, 'the status line too');
  assert.equal(await e.textContent('#conn-status'), 'Conectado');
  await shot(e, 'game-es-switched.png');
  // The choice is remembered over the browser's language.
  await e.reload();
  await e.waitForSelector('#view-game:not([hidden])');
  assert.equal(await e.getAttribute('html', 'lang'), 'es');
  assert.deepEqual(e.errors, []);
});
