// Browser test of quick pairing's claim wait running out (proto/README.md "Quick pairing",
// close code 4006 `pairing_expired`): a guest on a phone waits in the casual 2-seat
// `online` pool; a second player, not a browser (this test's own `fetch` calls to the
// same HTTP pairing API the web client uses), enters the same pool, so a group forms, but
// never claims its seat. The page claims its seat and waits in the room; when the claim
// wait (PARCHIS_PAIRING_CLAIM_WAIT_MS, shortened here) runs out the server closes the
// lobby: the page gets `closing` and 4006, is back in the lobby with the card waiting
// again under a new ticket (the server put it back in the pool with its original wait)
// and says so; the other player's ticket answers `expired` with no new ticket. While it
// waits, the room view shows the seats reserved (`RoomView.reserved`): no invite link, the
// unclaimed seat reserved for the other player, no colour change, the game starting by
// itself (axe-core there too). axe-core and 44 px on the lobby after the toast; the focus
// on the card's button.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, teardown, newPage, shot, status, waitFor, sleep, PHONE } from '../harness.mjs';
import { assertNoAxeViolations, assertTargets } from '../a11y.mjs';

const CLAIM_WAIT_MS = 4000;

let env;
before(async () => { env = await setup({ seed: '4006', extraEnv: { PARCHIS_PAIRING_CLAIM_WAIT_MS: String(CLAIM_WAIT_MS) } }); });
after(async () => { await teardown(env); });

const json = { 'Content-Type': 'application/json' };
const pools = async () => (await (await fetch(`${env.base}/api/pairing`)).json()).pools;
const waitingIn = async () => (await pools()).filter((p) => p.preset === 'online' && p.seats === 2 && !p.rated).reduce((n, p) => n + p.waiting, 0);
/** GET /api/pairing/{ticket}, as the web client polls it: [HTTP status, body]. */
async function poll(ticket) {
  const r = await fetch(`${env.base}/api/pairing/${encodeURIComponent(ticket)}`);
  return [r.status, await r.json()];
}

/** Records, in the page, every WebSocket's close code and reason (the app's own socket
 * included): the browser's CloseEvent, what the app's `onClose` saw. */
function recordCloses() {
  window.__wsCloses = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('close', (e) => window.__wsCloses.push({ code: e.code, reason: e.reason, at: Date.now() }));
    }
  };
}

test('a seat not claimed in time closes the paired lobby (4006): the page that claimed is back in the lobby, waiting again', { timeout: 60 * 1000 }, async () => {
  const p = await newPage(env, 'P', PHONE, { hasTouch: true });
  await p.context().addInitScript(recordCloses);
  const frames = [];
  p.on('websocket', (ws) => ws.on('framereceived', (f) => { try { frames.push(JSON.parse(f.payload)); } catch (_) { /* not JSON */ } }));

  await p.goto(env.base);
  await p.waitForSelector('#view-lobby:not([hidden])');
  await p.waitForSelector('#pairing-card:not([hidden])');
  await p.fill('#name', 'Paula');
  await p.selectOption('#pairing-preset', 'online');
  await p.selectOption('#pairing-seats', '2');
  await p.tap('#pairing-find');
  await p.waitForSelector('#pairing-card[data-phase="waiting"]');
  await waitFor(p, async () => (await waitingIn()) === 1, 'the page waiting in the pool');
  const firstTicket = (await p.evaluate(() => window.__parchis.pairing())).ticket;
  assert.match(firstTicket, /^[0-9a-f]{32}$/i, 'the page holds a ticket');

  // The second player: plain HTTP, the requests of web/pairing.js (POST, then polls).
  const r = await fetch(`${env.base}/api/pairing`, { method: 'POST', headers: json, body: JSON.stringify({ preset: 'online', seats: 2, rated: false, name: 'Hugo' }) });
  assert.equal(r.status, 201);
  const hugo = await r.json();
  assert.equal(hugo.status, 'waiting');
  assert.notEqual(hugo.ticket, firstTicket);
  const paired = await waitFor(p, async () => {
    const [code, body] = await poll(hugo.ticket);
    assert.equal(code, 200, JSON.stringify(body));
    if (body.status === 'paired') return { ...body, seenAt: Date.now() };
    await sleep(50);
    return null;
  }, 'the second player paired');
  assert.match(paired.room, /^[A-Z0-9]+$/);

  // The page is taken into the room and claims the other seat; it waits there (a paired
  // room starts by itself only once every seat is claimed).
  await p.waitForSelector('#view-room:not([hidden])', { timeout: 10000 });
  const st = await waitFor(p, async () => { const s = await status(p); return s.role === 'player' ? s : null; }, 'the page seated');
  assert.equal(await p.evaluate(() => window.__parchis.state().code), paired.room, 'the page is in the paired room');
  assert.equal(st.status, 'lobby');
  assert.notEqual(st.colour, paired.colour, 'the page has the seat not reserved for the second player');
  const welcome = frames.find((m) => m.type === 'welcome');
  assert.ok(welcome, 'the claim was welcomed');
  assert.equal(welcome.role, 'player');
  assert.equal(welcome.colour, st.colour);
  // Its seat is the only one taken (the other, reserved for the second player, is empty).
  await waitFor(p, async () => (await p.$$('#seat-list li')).length === 2, 'the two seats listed');
  assert.deepEqual(await p.$$eval('#seat-list li[data-taken]', (ls) => ls.map((l) => l.textContent.trim())), [`${{ red: '▲Rojo', blue: '■Azul', yellow: '●Amarillo', green: '◆Verde' }[st.colour]}: Paula (tú)`]);
  assert.ok(await p.isHidden('#start-btn'), 'a paired room is not started by hand');
  // The room view says the seats are reserved (RoomView.reserved), and the page shows it:
  // no invite link (nobody else can join), the unclaimed seat reserved for the second
  // player (not free), no colour change, and that the game starts by itself.
  const reserved = welcome.snapshot && welcome.snapshot.reserved;
  assert.ok(reserved, 'the room view carries the reservations');
  assert.equal(reserved.starts_when_seated, true);
  assert.deepEqual([...reserved.seats].sort((a, b) => a.colour.localeCompare(b.colour)),
    [{ colour: st.colour, name: 'Paula' }, { colour: paired.colour, name: 'Hugo' }].sort((a, b) => a.colour.localeCompare(b.colour)),
    'both seats reserved, by name (no ticket in sight)');
  assert.ok(!JSON.stringify(welcome).includes(hugo.ticket), 'the other player\'s ticket is not sent');
  assert.ok(await p.isHidden('#invite'), 'no invite link');
  assert.ok(await p.isHidden('#copy-invite'), 'no copy button');
  assert.ok(await p.isHidden('#share-invite'), 'no share button');
  assert.ok(await p.isHidden('label[for="invite"]'), 'no invite label');
  const other = { red: '▲Rojo', blue: '■Azul', yellow: '●Amarillo', green: '◆Verde' }[paired.colour];
  assert.deepEqual(await p.$$eval('#seat-list li[data-reserved]', (ls) => ls.map((l) => [l.dataset.colour, l.textContent.trim()])), [[paired.colour, `${other}: Reservado para Hugo`]], 'the unclaimed seat is shown reserved for the second player');
  assert.equal((await p.$$('#seat-list li.free')).length, 0, 'no seat shown free');
  assert.ok(!(await p.textContent('#seat-list')).includes('Libre'));
  assert.ok(await p.isHidden('#colour-change'), 'no colour change');
  assert.equal((await p.$$('#colour-change button')).length, 0, 'no colour buttons');
  assert.equal(await p.textContent('#room-status'), 'La partida empieza sola cuando todos hayan ocupado su asiento.');
  assert.ok(await p.isHidden('#room-bots'), 'no line about free seats and bots');
  assert.ok(!(await p.innerText('#view-room')).includes('al menos dos jugadores'), 'no "at least two players" hint anywhere');
  await assertNoAxeViolations(p, 'paired room waiting for a claim (phone)');
  assert.equal(await waitingIn(), 0, 'nobody waits in the pool while the group is seated');
  assert.equal((await poll(hugo.ticket))[1].status, 'paired', 'the unclaimed seat is still reserved');
  await shot(p, 'pairing-claimed-waiting-room-phone.png');

  // The claim wait runs out: `closing`, then the close code 4006.
  await waitFor(p, () => p.evaluate(() => window.__wsCloses.some((c) => c.code === 4006)), 'the room socket closed 4006', CLAIM_WAIT_MS + 10000);
  const closes = await p.evaluate(() => window.__wsCloses);
  const close = closes.find((c) => c.code === 4006);
  assert.deepEqual(closes.map((c) => c.code), [4006], 'the room socket closed once, 4006, and was not reopened');
  assert.equal(close.reason, 'not every player claimed their seat in time: poll your pairing ticket');
  assert.ok(close.at - paired.seenAt >= CLAIM_WAIT_MS - 500, `closed after the claim wait (${close.at - paired.seenAt} ms after the pairing was seen)`);
  const closing = frames.find((m) => m.type === 'closing');
  assert.ok(closing, 'a `closing` message came first');
  assert.deepEqual(closing, { type: 'closing', code: 4006, reason: close.reason });

  // Back in the lobby: the room view gone, the lobby's address, the card waiting again
  // under a new ticket, and the toast saying why (the claimed player's text: it waits
  // again; 'pairing_expired', "se ha cerrado", is for who did not claim and must not show).
  await p.waitForSelector('#view-lobby:not([hidden])');
  assert.ok(await p.isHidden('#view-room'));
  assert.ok(await p.isHidden('#view-game'));
  assert.equal(new URL(p.url()).pathname + new URL(p.url()).search, '/');
  await p.waitForSelector('#toast:not([hidden])');
  assert.equal(await p.textContent('#toast'), 'No todos llegaron a tiempo a la sala: sigues buscando rivales, con tu tiempo de espera.');
  assert.equal(await p.getAttribute('#toast', 'role'), 'alert');
  const ps = await waitFor(p, async () => { const s = await p.evaluate(() => window.__parchis.pairing()); return s.phase === 'waiting' && s.ticket !== firstTicket ? s : null; }, 'the page waiting under a new ticket');
  assert.match(ps.ticket, /^[0-9a-f]{32}$/i);
  assert.deepEqual(ps.request, { preset: 'online', seats: 2, rated: false });
  await p.waitForSelector('#pairing-card[data-phase="waiting"]');
  assert.ok(await p.isVisible('#pairing-cancel'));
  assert.ok(await p.isHidden('#pairing-find'));
  assert.ok(await p.isDisabled('#pairing-preset'), 'the rules cannot change while waiting');
  // The room view went away with the focus: the card's button has it, not the page's body.
  assert.equal(await p.evaluate(() => document.activeElement && document.activeElement.id), 'pairing-cancel', 'the focus is on the card\'s Stop searching');
  // The original wait is kept: the page had waited at least the claim wait.
  const secs = await waitFor(p, async () => {
    const m = /^Buscando rivales… (\d+) s · (margen de puntuación ±[\d.,]+|cualquier puntuación)$/.exec(await p.textContent('#pairing-status'));
    return m && Number(m[1]) >= CLAIM_WAIT_MS / 1000 ? Number(m[1]) : null;
  }, 'the waiting line with the original wait');
  assert.ok(secs >= CLAIM_WAIT_MS / 1000);
  const old = await poll(firstTicket);
  assert.deepEqual(old, [200, { status: 'expired', room: paired.room, ticket: ps.ticket }], 'the claimed ticket names the new one');
  const [, now] = await poll(ps.ticket);
  assert.equal(now.status, 'waiting');
  assert.ok(now.waiting_ms >= CLAIM_WAIT_MS, `the original wait is kept (${now.waiting_ms} ms)`);
  // The pool's count shows the page waiting again, and so does the card's list.
  assert.equal(await waitingIn(), 1, 'the page waits in the pool again');
  await waitFor(p, async () => (await p.$$('#pairing-pools li[data-waiting="1"]')).length === 1, 'the card lists one player waiting', 12000);

  // The second player, who never claimed: expired, no new ticket, not in the pool.
  assert.deepEqual(await poll(hugo.ticket), [200, { status: 'expired', room: paired.room, ticket: null }]);

  // The room's lobby is closed: the page has no seat to go back to.
  assert.equal(await p.evaluate(() => window.__parchis.state().code), null);
  assert.equal((await p.evaluate(() => window.__parchis.view())), 'lobby');
  assert.ok(await p.isVisible('#toast'), 'the toast is still up for the checks');
  await shot(p, 'pairing-expired-requeued-phone.png');
  await assertNoAxeViolations(p, 'lobby after the paired lobby closed (phone)');
  await assertTargets(p, 'lobby after the paired lobby closed (phone)');

  // Waiting again is real: cancelling gives the new ticket back and empties the pool.
  await p.tap('#pairing-cancel');
  await p.waitForSelector('#pairing-card[data-phase="idle"]');
  await waitFor(p, async () => (await waitingIn()) === 0, 'the pool empty after cancelling');
  assert.equal((await poll(ps.ticket))[0], 404, 'the new ticket was given back');
  assert.deepEqual(p.errors, []);
});
