// Browser tests of issue 29 (web client, round two) before the game, on a phone (390×844,
// touch) and a desktop: axe-core finds nothing on the lobby, join and room views and
// every control is at least 44×44 CSS px (point 8); a full room's code or link offers
// watching only (point 3); broken replay links say what is wrong and show the lobby
// (point 4); a 2- or 3-seat room lists its seats and says whether bots fill them, and
// "play now" joins a room of the chosen rules or offers a game against a bot in one tap
// (point 9); invite links come from the server's public URL (point 10); the in-app hint
// names a README section that exists, and the README tells a newcomer what to install,
// how long the first build takes and how to play on a LAN before any operator table
// (point 11).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setup, teardown, newPage, shot, status, waitFor, PHONE, DESKTOP, ROOT } from '../harness.mjs';
import { assertNoAxeViolations, assertTargets } from '../a11y.mjs';

let env;
// Each viewport makes two rooms with bots from one address: above the default limit of 3.
before(async () => { env = await setup({ seed: '2929', extraEnv: { PARCHIS_MAX_BOT_ROOMS_PER_ADDRESS: '20' } }); });
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

for (const [label, viewport] of [['phone', PHONE], ['desktop', DESKTOP]]) {
  const touch = viewport === PHONE;

  test(`${label}: lobby and join views pass axe-core, 44 px targets; a full room offers watching only; broken replay links`, { timeout: 3 * 60 * 1000 }, async () => {
    const helper = await newPage(env, `H-${label}`, DESKTOP);
    await helper.goto(env.base);
    const full = await post('/api/rooms', { preset: 'classic', seats: 2, turn_clock_secs: 45 });
    await seat(helper, full.code, 'Uno');
    await seat(helper, full.code, 'Dos');

    const p = await newPage(env, `L-${label}`, viewport, { hasTouch: touch });
    await p.goto(env.base);
    await p.waitForSelector('#view-lobby:not([hidden])');
    await p.fill('#name', 'Lola');
    await waitFor(p, () => p.$(`#room-list li[data-code="${full.code}"]`), 'the full room listed');
    await assertNoAxeViolations(p, `the lobby (${label})`);
    await assertTargets(p, `the lobby (${label})`);
    await shot(p, `r2-lobby-${label}.png`);

    // Point 3: the code of a full room, then its invite link: no "join", only "watch".
    await p.fill('#code', full.code);
    await p.click('#code-join');
    await p.waitForSelector('#view-join:not([hidden])');
    assert.ok(await p.isVisible('#join-full'), 'the room is said to be full');
    assert.ok(await p.isHidden('#join-btn'), 'no join button');
    assert.ok(await p.isHidden('#join-colour'), 'no colours to pick');
    assert.ok(await p.isVisible('#join-watch'), 'watching is offered');
    assert.match(await p.textContent('#join-info'), /Clásico.*2 jugadores.*45 s/);
    assert.equal((await p.$$('#join-seats li')).length, 2, 'its two seats');
    await assertNoAxeViolations(p, `the join view of a full room (${label})`);
    await assertTargets(p, `the join view (${label})`);
    await shot(p, `r2-join-full-${label}.png`);
    await p.goto(`${env.base}/?room=${full.code}`);
    await p.waitForSelector('#view-join:not([hidden])');
    assert.ok(await p.isHidden('#join-btn'), 'the invite link of a full room offers no join either');
    await p.click('#join-watch');
    await p.waitForSelector('#view-room:not([hidden])');
    await waitFor(p, async () => (await status(p)).role === 'spectator', 'watching the full room');

    // Point 4: a malformed replay id and an unknown one: the right message, the lobby.
    await p.goto(`${env.base}/?game=nonexistent`);
    await waitFor(p, () => p.isVisible('#toast'), 'a message');
    assert.match(await p.textContent('#toast'), /enlace de repetición no es válido/);
    assert.doesNotMatch(await p.textContent('#toast'), /No se pudo contactar/);
    assert.ok(await p.isVisible('#view-lobby'), 'the lobby, not an empty page');
    await p.goto(`${env.base}/?game=00000000-0000-7000-8000-000000000000`);
    await waitFor(p, () => p.isVisible('#toast'), 'a message');
    assert.match(await p.textContent('#toast'), /No hay ninguna partida guardada/);
    assert.ok(await p.isVisible('#view-lobby'), 'the lobby, not an empty page');
    // The browser logs the two refused requests themselves; nothing else went wrong.
    const errors = p.errors.filter((e) => !/Failed to load resource: .*(400|404)/.test(e));
    assert.deepEqual(errors, [], 'no page errors');
    assert.deepEqual(helper.errors, []);
    await helper.context().close();
    await p.context().close();
  });

  test(`${label}: a 3-seat room with bots lists 3 seats and says bots fill them; play now: a room of the chosen rules, else a bot game in one tap`, { timeout: 3 * 60 * 1000 }, async () => {
    const p = await newPage(env, `C-${label}`, viewport, { hasTouch: touch });
    await p.goto(env.base);
    await p.waitForSelector('#view-lobby:not([hidden])');
    await p.fill('#name', 'Carmen');
    await p.selectOption('#seats', '3');
    await p.selectOption('#bots', 'greedy');
    await p.click('#create-btn');
    await p.waitForSelector('#view-room:not([hidden])');
    const seats = await p.$$eval('#seat-list li', (ls) => ls.map((l) => l.textContent));
    assert.equal(seats.length, 3, `three seats, not four colours: ${seats}`);
    assert.match(seats[0], /Carmen/);
    assert.match(seats[1], /Libre: un bot al empezar/);
    assert.match(await p.textContent('#room-bots'), /bots \(normal\) ocupan los asientos libres/);
    assert.match(await p.textContent('#room-info'), /3 jugadores/);
    // Changing colour: one 44 px button per free colour.
    const take = await p.$$eval('#colour-change button', (bs) => bs.map((b) => b.dataset.colour));
    assert.equal(take.length, 3);
    await assertNoAxeViolations(p, `the room view (${label})`);
    await assertTargets(p, `the room view (${label})`);
    await p.click(`#colour-change button[data-colour="${take[0]}"]`);
    await waitFor(p, async () => (await status(p)).colour === take[0], 'the colour changed');
    // Point 11: the hint on a loopback address names a README section that exists.
    const hint = await p.textContent('#invite-loopback');
    const section = /«([^»]+)»/.exec(hint)[1];
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    assert.ok(readme.split('\n').some((l) => /^#+ /.test(l) && l.includes(section)), `README has a section «${section}»`);
    await shot(p, `r2-room-3-seats-${label}.png`);
    const openCode = await p.evaluate(() => window.__parchis.state().code);
    await p.context().close();

    // Play now with other rules than the open room's: the offer, then a bot game in one tap.
    const q = await newPage(env, `Q-${label}`, viewport, { hasTouch: touch });
    await q.goto(env.base);
    await q.fill('#name', 'Quique');
    await q.selectOption('#quick-preset', 'parcheesi');
    await q.click('#play-now');
    await q.waitForSelector('#play-now-offer:not([hidden])');
    assert.match(await q.textContent('#play-now-offer'), /No hay ninguna sala abierta con estas reglas/);
    await assertTargets(q, `the play-now offer (${label})`);
    await q.click('#play-bot');
    await q.waitForSelector('#view-game:not([hidden])', { timeout: 20000 });
    const st = await status(q);
    assert.equal(st.role, 'player');
    const room = await q.evaluate(() => window.__parchis.state().room);
    assert.equal(room.settings.seats, 2, 'a 2-seat game');
    assert.equal(room.settings.preset, 'parcheesi', 'of the chosen rules');
    assert.equal(room.seats.filter((x) => x.bot).length, 1, 'against one bot');
    assert.notEqual(room.code, openCode);
    await shot(q, `r2-play-bot-${label}.png`);
    await q.context().close();

    // Play now with the open room's rules (online, the default): it joins that room.
    const r = await newPage(env, `J-${label}`, viewport, { hasTouch: touch });
    await r.goto(env.base);
    await r.fill('#name', 'Rita');
    const listed = await (await fetch(`${env.base}/api/rooms`)).json();
    const oldest = listed.rooms.find((x) => x.free > 0 && x.preset === 'online');
    assert.ok(listed.rooms.some((x) => x.code === openCode), 'our room is listed');
    await r.click('#play-now');
    await r.waitForSelector('#view-room:not([hidden])');
    assert.equal(await r.evaluate(() => window.__parchis.state().code), oldest.code, 'joined the oldest open room of these rules');
    for (const x of [q, r]) assert.deepEqual(x.errors, [], `${x.tag} had no page errors`);
    await r.context().close();
  });
}

test('point 11: the README\'s first section is for players: prerequisites, the first build\'s time, a LAN example, before any table', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const lines = readme.split('\n');
  const heading = (re) => lines.findIndex((l) => /^#+ /.test(l) && re.test(l));
  const play = heading(/^## Play$/);
  const lan = heading(/Play with friends on your network/);
  const firstTable = lines.findIndex((l) => /^\|.*\|$/.test(l));
  const nextSection = lines.findIndex((l, i) => i > lan && /^## /.test(l));
  assert.ok(play >= 0 && lan > play, 'a "Play" section with a LAN subsection');
  assert.ok(firstTable > nextSection, `no table before the player's sections end (first table at line ${firstTable + 1})`);
  const playText = lines.slice(play, nextSection).join('\n');
  assert.match(playText, /Rust 1\.\d+ or newer/, 'the Rust version needed');
  assert.match(playText, /Node\.js 20\+ is only for the browser tests/, 'Node only for the browser tests');
  assert.match(playText, /first build[^.]*takes\s+several minutes[\s\S]*\d+ min \d+ s/, 'the first build\'s time, measured');
  assert.match(playText, /--bind 0\.0\.0\.0 --public-url http:\/\/192\.168\.\d+\.\d+:8080/, 'a worked LAN example');
  assert.ok(heading(/^## Server settings$/) > nextSection, 'the settings the in-app hint names come after the player\'s part');
});
