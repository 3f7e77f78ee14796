// Parchís web client: lobby, room, game, result, replay. Plain ES module, no build step.
// Protocol: proto/README.md (HTTP /api/…, WebSocket /ws, JSON text frames).
//
// The state changes in one place, the pure reducer of state.js: every server message and
// every local input goes through dispatch(), which runs the reducer, performs the
// effects it lists (sounds, animations, toasts, sends) and redraws. This file only wires
// the DOM and draws; it knows no rules (the server's previews and positions say it all).
//
// Why ~1300 lines: it still draws the lobby, join, room, game, result and replay views
// itself (they share the session state, the board and the log helpers); the features of
// issue 29 went into modules of their own (prefs, dialogs, autoplay, invite, emotes,
// fairpage). Splitting the views into one module each is the next step (the accounts'
// views should start as modules of their own).

import { t, getLang, setLang, colourName, locName, translateDom } from './i18n.js';
import { createBoard, COLOURS, SHAPE_CHAR } from './board.js';
import { api, Connection } from './net.js';
import { reduce, initialState, describedActions, selectable, bottomColour, awayCountdowns } from './state.js';
import * as sound from './sound.js';
import { newClientSeed, verifyGame } from './fairdice.js';
import { loadPrefs, savePrefs, applyPrefs } from './prefs.js';
import { openDialog, closeDialog, closeOnEscape } from './dialogs.js';
import { createAutoplay } from './autoplay.js';
import { loadInviteBase, inviteUrl, inviteIsLoopback } from './invite.js';
import { renderEmoteBar, renderEmoteFeed } from './emotes.js';
import { fairLinkTo } from './fairpage.js';

const $ = (id) => document.getElementById(id);

// ----- persistent settings --------------------------------------------------------------

const store = {
  get(key) { try { return JSON.parse(localStorage.getItem(key)); } catch (_) { return null; } },
  set(key, v) { try { localStorage.setItem(key, JSON.stringify(v)); } catch (_) { /* ignore */ } },
  del(key) { try { localStorage.removeItem(key); } catch (_) { /* ignore */ } },
};
const sessionKey = (code) => `parchis.session.${code}`;

// ----- state ------------------------------------------------------------------------------

let conn = null;
let S = initialState(); // changed only by dispatch()
let board = null;
let roomsTimer = null;
let replay = null; // { game, steps, i, board } while the replay view is open
let animations = 0; // moves animated so far (read by the browser test)
let diceAnimations = 0; // dice rolls animated so far (read by the browser test)
let prefs = loadPrefs();
let autoStart = false; // "play a bot now": start the game as soon as the room is ours
let refocus = false; // the player acted: put the keyboard focus on what comes next
let captureTimer = null;
// The room's fair dice (docs/FAIR_DICE.md): what the server published (commitment, seeds,
// server seed at the end) and our own client seed, generated with crypto.getRandomValues
// and sent in `join`. Only shown and checked here, never interpreted by the rules.
let fair = { info: null, clientSeed: null };

/** Notes the fair-dice facts a server message carries. */
function noteFair(m) {
  if (m.type === 'welcome' && m.snapshot && m.snapshot.dice) fair.info = m.snapshot.dice;
  if (m.type !== 'event' || !m.event) return;
  if (m.event.type === 'game_started' && m.event.dice) fair.info = m.event.dice;
  if (m.event.type === 'dice_revealed' && fair.info) fair.info = { ...fair.info, server_seed: m.event.server_seed };
}

/** The one way the state changes: the reducer, then its effects, then a redraw. */
function dispatch(msg) {
  S = reduce(S, msg);
  const fx = S.fx;
  for (const f of fx) runEffect(f);
  scheduleRender(fx);
}

function runEffect(f) {
  switch (f.type) {
    case 'save_session': saveSession(); break;
    case 'forget_session': if (S.code) store.del(sessionKey(S.code)); break;
    case 'send': if (conn) dispatch({ type: 'local:sent', req: conn.send(f.msg), kind: f.kind }); break;
    case 'toast': toast(errorText(f.code, f.message)); break;
    case 'stop': stopWith(f); break;
    case 'resync': resync(); break;
    case 'reconnect': if (conn) conn.reconnectNow(); break;
    case 'sound': sound.play(f.name); break;
    case 'my_turn': flashTitle(); break;
    case 'rematch': $('result').hidden = true; resultShownFor = null; break;
    case 'emote': sound.play('turn'); break;
    default: break;
  }
}

// ----- views ------------------------------------------------------------------------------

function show(view) {
  for (const v of ['lobby', 'join', 'room', 'game', 'replay']) $(`view-${v}`).hidden = v !== view;
  document.body.dataset.view = view;
  clearInterval(roomsTimer);
  if (view === 'lobby') {
    loadLobbyLists();
    roomsTimer = setInterval(loadLobbyLists, 5000);
  }
}

let toastTimer = null;
function toast(text) {
  const el = $('toast');
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 5000);
}

function errorText(code, message) {
  const key = `err_${code}`;
  const s = t(key);
  return s === key ? t('err_generic', { msg: message || code }) : s;
}

function setUrl(path) {
  const url = path || '/';
  if (location.pathname + location.search !== url) history.replaceState(null, '', url);
}
const roomUrl = (code) => `/?room=${encodeURIComponent(code)}`;


function myName() { return ($('name').value || '').trim(); }

function fillColourSelect(sel, free) {
  const keep = sel.value;
  sel.replaceChildren();
  const any = document.createElement('option');
  any.value = ''; any.textContent = t('any_colour');
  sel.appendChild(any);
  for (const c of COLOURS) {
    if (free && !free.includes(c)) continue;
    const o = document.createElement('option');
    o.value = c; o.textContent = `${SHAPE_CHAR[c]} ${colourName(c)}`;
    sel.appendChild(o);
  }
  if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
}

function button(text, onClick, label, cls) {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  if (label) b.setAttribute('aria-label', label);
  if (cls) b.className = cls;
  b.addEventListener('click', onClick);
  return b;
}

/** A seat's name as shown: bots' names are translated. */
function displayName(seat) {
  if (!seat) return '';
  const m = seat.bot && /^\w+ bot (\d+)$/.exec(seat.name || '');
  return m ? t('bot_name', { level: t(`level_${seat.bot}`), n: m[1] }) : seat.name;
}
function seatOf(colour) { return S.room && S.room.seats.find((s) => s.colour === colour); }
function nameOf(colour) { const s = seatOf(colour); return s ? displayName(s) : colourName(colour); }

/** A rule set name (`classic+murcia-12`) in words. */
function presetName(name) {
  const [base, ...variants] = String(name || '').split('+');
  const key = `preset_${base.replace(/-/g, '_')}`;
  const s = t(key);
  return (s === key ? base : s) + (variants.length ? ` + ${variants.join(' + ')}` : '');
}

// ----- lobby -----------------------------------------------------------------------------

async function loadRooms() {
  const list = $('room-list');
  let data;
  try { data = await api('GET', '/api/rooms'); } catch (_) { return; }
  list.replaceChildren();
  if (!data.rooms.length) {
    const li = document.createElement('li');
    li.className = 'muted';
    li.textContent = t('no_rooms');
    list.appendChild(li);
    return;
  }
  for (const r of data.rooms) {
    const li = document.createElement('li');
    li.dataset.code = r.code;
    li.dataset.free = r.free;
    const span = document.createElement('span');
    span.className = 'room-info';
    const free = r.free_colours.map(colourName).join(', ');
    span.textContent = t('room_row', {
      code: r.code, taken: r.taken, seats: r.seats, preset: presetName(r.preset),
      clock: r.turn_clock_secs ?? '?', free: free || '—',
    });
    li.appendChild(span);
    // A full room is not offered for joining: watch it instead, if allowed.
    if (r.free > 0) li.appendChild(button(t('join'), () => enterRoom(r.code, 'join'), `${t('join')} ${r.code}`, 'join-room'));
    if (r.spectators_allowed !== false) li.appendChild(button(t('watch'), () => enterRoom(r.code, 'watch'), `${t('watch')} ${r.code}`, 'watch-room'));
    list.appendChild(li);
  }
}

/** The lobby's second list: public games in progress that spectators may watch. */
async function loadLiveGames() {
  const list = $('live-list');
  let data;
  try { data = await api('GET', '/api/rooms?status=playing'); } catch (_) { return; }
  list.replaceChildren();
  if (!data.rooms.length) {
    const li = document.createElement('li');
    li.className = 'muted';
    li.textContent = t('no_live_games');
    list.appendChild(li);
    return;
  }
  for (const r of data.rooms) {
    const li = document.createElement('li');
    li.dataset.code = r.code;
    const span = document.createElement('span');
    span.className = 'room-info';
    span.textContent = t('live_row', { code: r.code, players: r.taken, spectators: r.spectators, preset: presetName(r.preset) });
    const watch = button(t('watch'), () => enterRoom(r.code, 'watch'), `${t('watch')} ${r.code}`);
    li.append(span, watch);
    list.appendChild(li);
  }
}

function loadLobbyLists() {
  loadRooms();
  loadLiveGames();
}

function requireName(input) {
  const name = (input.value || '').trim();
  if (!name || name.length > 24) {
    toast(t('err_name'));
    input.focus();
    return null;
  }
  store.set('parchis.name', name);
  $('name').value = name; $('join-name').value = name;
  return name;
}

function settingsFromForm() {
  return {
    preset: $('preset').value,
    seats: $('preset').value === 'pairs' ? 4 : Number($('seats').value), // pairs: exactly 4
    turn_clock_secs: Math.max(1, Math.min(600, Number($('clock').value) || 15)),
    public: $('public').checked,
    spectators: $('spectators-ok').checked,
    bots: $('bots').value || null, // fill the free seats with bots at the start
    on_abandon: $('bot-takeover').checked ? 'bot' : 'forfeit',
  };
}

async function createRoom(e) {
  e.preventDefault();
  const name = requireName($('name'));
  if (!name) return;
  let res;
  try { res = await api('POST', '/api/rooms', settingsFromForm()); } catch (err) {
    toast(err.code ? errorText(err.code, err.message) : t('err_http'));
    return;
  }
  startSession(res.code, { kind: 'join', name, colour: $('colour-pref').value || null });
}

/** "Play now": the oldest public room of the chosen rules with a free seat; when there
 * is none, an offer: a game against a bot now (one tap), or a public room to wait in. */
async function playNow() {
  const name = requireName($('name'));
  if (!name) return;
  const preset = $('quick-preset').value;
  try {
    const data = await api('GET', '/api/rooms');
    const open = data.rooms.find((r) => r.free > 0 && r.preset === preset);
    if (open) { startSession(open.code, { kind: 'join', name, colour: null }); return; }
    $('play-now-offer').hidden = false;
    $('play-bot').focus();
  } catch (err) {
    toast(err.code ? errorText(err.code, err.message) : t('err_http'));
  }
}

/** Creates a room of the chosen rules and joins it: against bots (started at once) or
 * public, to wait for others. */
async function quickRoom(vsBot) {
  const name = requireName($('name'));
  if (!name) return;
  const preset = $('quick-preset').value;
  const settings = vsBot
    ? { preset, seats: preset === 'pairs' ? 4 : 2, bots: 'greedy', public: false, turn_clock_secs: 30 }
    : { preset, public: true };
  try {
    const res = await api('POST', '/api/rooms', settings);
    $('play-now-offer').hidden = true;
    autoStart = vsBot;
    startSession(res.code, { kind: 'join', name, colour: null });
  } catch (err) {
    toast(err.code ? errorText(err.code, err.message) : t('err_http'));
  }
}

/** Opens room `code`: resume a stored seat, or join / watch / ask; a finished room's
 * link opens the replay of its game. */
async function enterRoom(rawCode, intent) {
  const code = (rawCode || '').trim().toUpperCase();
  if (!code) { toast(t('err_code')); return; }
  let view;
  try { view = await api('GET', `/api/rooms/${encodeURIComponent(code)}`); } catch (err) {
    if (err.status === 404 && await openStoredGameOf(code)) return;
    toast(err.status === 404 ? t('err_unknown_room') : t('err_http'));
    setUrl(null);
    show('lobby');
    return;
  }
  const saved = store.get(sessionKey(view.code));
  if (saved && saved.token) {
    startSession(view.code, { kind: 'resume' }, saved, view);
    return;
  }
  // A finished room's link, for anyone not seated there: the replay of its game.
  if (view.status === 'finished' && view.game && intent !== 'watch') {
    openReplay(view.game.game_id);
    return;
  }
  if (intent === 'watch' || view.status !== 'lobby') {
    startSession(view.code, { kind: 'watch' }, null, view);
    return;
  }
  const name = myName();
  const full = view.seats.length >= view.settings.seats;
  if (intent === 'join' && name && !full) {
    const free = COLOURS.filter((c) => !view.seats.some((s) => s.colour === c));
    const pref = $('colour-pref').value;
    startSession(view.code, { kind: 'join', name, colour: free.includes(pref) ? pref : null });
    return;
  }
  showJoin(view);
}

/** A room that is gone: its last stored game, if any, opens in the replay viewer. */
async function openStoredGameOf(code) {
  try {
    // Newest first: the first of a one-game page is the room's last game.
    const list = await api('GET', `/api/games?room=${encodeURIComponent(code)}&limit=1`);
    const last = list.games[0];
    if (!last) return false;
    openReplay(last.id);
    return true;
  } catch (_) { return false; }
}

/** The join page of a room reached by code or link: its rules, its seats and whether
 * bots fill the empty ones; a full room offers watching only. */
function showJoin(view) {
  setUrl(roomUrl(view.code));
  $('join-title').textContent = t('room', { code: view.code });
  $('join-form').dataset.code = view.code;
  $('join-name').value = $('name').value;
  $('join-info').textContent = roomInfo(view.settings);
  $('join-bots').textContent = botsInfo(view.settings);
  const seats = $('join-seats');
  seats.replaceChildren();
  for (const seat of view.seats) seats.appendChild(seatRow(seat.colour, `${colourName(seat.colour)}: ${displayName(seat)}${seat.bot ? ` (${t('bot_tag')})` : ''}`));
  for (let i = view.seats.length; i < view.settings.seats; i++) seats.appendChild(seatRow(null, view.settings.bots ? t('free_seat_bot') : t('free_seat')));
  const free = COLOURS.filter((c) => !view.seats.some((s) => s.colour === c));
  fillColourSelect($('join-colour'), free);
  const full = view.seats.length >= view.settings.seats;
  $('join-full').hidden = !full;
  $('join-fields').hidden = full;
  $('join-btn').hidden = full;
  show('join');
  (full ? $('join-watch') : $('join-name')).focus();
}

function roomInfo(settings) {
  return t('room_info', { preset: presetName(settings.preset), seats: settings.seats, clock: settings.turn_clock_secs });
}
function botsInfo(settings) {
  return settings.bots ? t('bots_fill', { level: t(`level_${settings.bots}`) }) : t('no_bots_fill');
}

/** A seat row: a colour's swatch (with its shape) and a text; `colour` null: a free seat. */
function seatRow(colour, text) {
  const li = document.createElement('li');
  li.className = colour ? `seat c-${colour}` : 'seat free';
  if (colour) li.dataset.colour = colour;
  li.append(swatch(colour));
  const label = document.createElement('span');
  label.className = 'seat-label';
  label.textContent = text;
  li.append(label);
  return li;
}

function swatch(colour) {
  const sw = document.createElement('span');
  sw.className = colour ? `swatch bg-${colour}` : 'swatch empty';
  sw.setAttribute('aria-hidden', 'true');
  if (colour) sw.textContent = SHAPE_CHAR[colour];
  return sw;
}

// ----- session ---------------------------------------------------------------------------

function startSession(code, intent, saved = null, view = null) {
  if (conn) conn.close();
  closeReplay();
  resultShownFor = null;
  fair = { info: view && view.dice ? view.dice : null, clientSeed: saved && saved.clientSeed ? saved.clientSeed : null };
  if (intent.kind === 'join') fair.clientSeed = newClientSeed();
  dispatch({ type: 'local:session', code, intent, saved, view });
  setUrl(roomUrl(code));
  $('result').hidden = true;
  // Handlers ignore a connection the app has let go of (after leaving, its last frames).
  const c = new Connection({
    onOpen: () => { if (conn === c) sendEntry(); },
    onMessage: (m) => { if (conn === c) { noteFair(m); dispatch({ ...m, received_ms: Date.now() }); } },
    onState: (st) => {
      if (conn !== c && st !== 'closed') return;
      const el = $('conn-status');
      el.dataset.state = st;
      el.textContent = st === 'open' ? t('connected') : st === 'closed' ? '' : t(st === 'connecting' ? 'connecting' : 'reconnecting');
      el.title = st === 'reconnecting' ? t('reconnecting_long') : '';
    },
    onClose: (closeCode) => (closeCode === 4000 ? (toast(t('replaced')), false) : true),
  });
  conn = c;
  c.start();
}

function track(req, kind) { if (req !== null) dispatch({ type: 'local:sent', req, kind }); return req; }

function sendEntry() {
  if (S.token) {
    track(conn.send({ type: 'resume', room: S.code, token: S.token, last_seq: S.seq }), 'resume');
  } else if (S.intent && S.intent.kind === 'join') {
    const msg = { type: 'join', room: S.code, name: S.intent.name };
    if (S.intent.colour) msg.colour = S.intent.colour;
    if (fair.clientSeed) msg.client_seed = fair.clientSeed;
    track(conn.send(msg), 'join');
  } else {
    track(conn.send({ type: 'watch', room: S.code }), 'watch');
  }
}

function command(type, extra = {}) {
  if (!conn) return;
  track(conn.send({ type, room: S.code, seq: S.seq, ...extra }), type);
}

function saveSession() {
  if (S.token && S.code) store.set(sessionKey(S.code), { token: S.token, colour: S.colour, clientSeed: fair.clientSeed });
}

function inGame() { return S.role === 'player' && S.room && S.room.status === 'playing' && !S.outcome; }

/** Leaving mid-game asks first, in a dialog that says what leaving does. */
function leaveRoom() {
  if (inGame()) {
    const bot = S.room.settings.on_abandon === 'bot';
    $('leave-text').textContent = t(bot ? 'leave_bot' : 'leave_forfeit', { n: S.room.seats.filter((s) => !s.abandoned).length - 1 });
    const d = $('leave-dialog');
    if (typeof d.showModal === 'function') d.showModal(); else d.setAttribute('open', '');
    $('leave-cancel').focus();
    return;
  }
  doLeave();
}

function doLeave() {
  if (conn) {
    command('leave');
    const c = conn;
    setTimeout(() => c.close(), 300);
    conn = null;
  }
  if (S.code) store.del(sessionKey(S.code));
  dispatch({ type: 'local:reset' });
  setUrl(null);
  $('result').hidden = true;
  $('conn-status').textContent = '';
  show('lobby');
}

function stopWith(f) {
  const code = S.code;
  if (conn) { conn.close(); conn = null; }
  toast(errorText(f.code, f.message));
  if (f.code === 'colour_taken' || f.code === 'room_full') { enterRoom(code, null); return; }
  if (f.code === 'game_started' && f.kind === 'join') { enterRoom(code, 'watch'); return; }
  dispatch({ type: 'local:reset' });
  setUrl(null);
  show('lobby');
}

async function resync() {
  try {
    const view = await api('GET', `/api/rooms/${encodeURIComponent(S.code)}`);
    dispatch({ type: 'welcome', req: null, role: S.role, colour: S.colour, seq: view.seq, snapshot: view });
  } catch (_) { /* the next reconnect will fix it */ }
}

// ----- playing -------------------------------------------------------------------------

function actionLabel(d) {
  let label;
  if (d.action.type === 'exit') label = t('exit_here', { to: d.to });
  else if (d.action.type === 'bonus') label = t('bonus_to', { n: d.piece + 1, amount: d.action.amount, to: locName(d.to) });
  else if (d.steps !== d.action.die) label = t('move_counts_to', { n: d.piece + 1, die: d.action.die, steps: d.steps, to: locName(d.to) });
  else label = t('move_to', { n: d.piece + 1, die: d.action.die, to: locName(d.to) });
  if (d.capture) label += ` ${t('captures')}`;
  if (d.goal) label += ` ${t('reaches_goal')}`;
  if (d.bonus) label += ` ${t('earns', { n: d.bonus })}`;
  return label;
}

/** A location's short label for a target on the board: the square's number, the home
 * column's step (P3 / H3) or the goal. */
function shortLoc(loc) {
  if (loc === 'goal') return '★';
  if (String(loc).startsWith('h')) return `${getLang() === 'es' ? 'P' : 'H'}${String(loc).slice(1)}`;
  return String(loc);
}

/** Two or more movable pieces on one square: ask which (each a 44 px button). */
function chooseStacked(ids, loc) {
  const box = $('stack-choices');
  box.replaceChildren();
  for (const id of ids) {
    const [colour, piece] = id.split(':');
    const b = button(t('stack_piece', { n: Number(piece) + 1, loc: locName(loc) }), () => {
      closeDialog($('stack-dialog'));
      onPiece(colour, Number(piece));
    }, null, `stack-choice c-${colour}`);
    b.dataset.piece = piece;
    box.appendChild(b);
  }
  openDialog($('stack-dialog'));
}

/** The short banner of the latest capture, from the capturer's, the victim's or a
 * watcher's point of view; gone after 3 s. */
function renderCaptureBanner() {
  const el = $('capture-banner');
  const c = S.captureBanner;
  if (!c) { el.hidden = true; return; }
  const n = c.amount ?? 20;
  const key = S.role === 'player' && S.colour === c.colour ? 'capture_you'
    : S.role === 'player' && S.colour === c.by ? 'capture_mine' : 'capture_other';
  el.textContent = t(key, { n, by: colourName(c.by), colour: colourName(c.colour) });
  el.className = `capture-banner c-${c.by}`;
  el.dataset.by = c.by;
  el.dataset.colour = c.colour;
  el.hidden = false;
  if (el.dataset.n !== String(c.n)) {
    el.dataset.n = String(c.n);
    clearTimeout(captureTimer);
    captureTimer = setTimeout(() => dispatch({ type: 'local:capture_seen' }), 3000);
  }
}

/** The dropped players' countdowns to a bot taking over (or a forfeit). */
function renderAway() {
  const ul = $('away-list');
  const now = Date.now() + S.clockOffset;
  const list = awayCountdowns(S, now);
  const key = JSON.stringify(list);
  if (ul.dataset.key === key) return;
  ul.dataset.key = key;
  ul.replaceChildren();
  for (const a of list) {
    const li = document.createElement('li');
    li.className = `away c-${a.colour}`;
    li.dataset.colour = a.colour;
    li.dataset.secs = String(a.secs);
    li.dataset.what = a.what;
    li.textContent = `⏳ ${t(`away_${a.what}`, { colour: `${colourName(a.colour)} (${nameOf(a.colour)})`, s: a.secs })}`;
    ul.appendChild(li);
  }
}

/** After a roll or a move the keyboard focus would fall back to the page: it goes to
 * what the player can do next (the roll button, a movable piece, an action), else the
 * turn line. Only when the focus was lost, never taken from where the player put it. */
function keepFocus() {
  const a = document.activeElement;
  const lost = !a || a === document.body || !a.isConnected || (a.closest && a.closest('[hidden]'));
  if (!lost && !refocus) return;
  if (!lost && refocus && a && a.id !== 'roll-btn' && !(a.closest && a.closest('#action-list, svg.board'))) return;
  const roll = $('roll-btn');
  const target = (!roll.hidden && !roll.disabled && roll)
    || document.querySelector('svg.board .target')
    || document.querySelector('svg.board .piece.selectable')
    || document.querySelector('#action-list button');
  if (target) { target.focus({ preventScroll: true }); refocus = false; return; }
  if (lost && S.room && S.room.status === 'playing') $('turn-banner').focus({ preventScroll: true });
}

/** The dice tumble for a moment when thrown (none with reduced motion). */
function animateDice() {
  if (matchMedia('(prefers-reduced-motion: reduce)').matches) return;
  for (const d of document.querySelectorAll('#dice .die')) {
    if (!d.animate) continue;
    d.animate([
      { transform: 'rotate(0) scale(.6)', opacity: 0.3 },
      { transform: 'rotate(200deg) scale(1.15)', opacity: 1, offset: 0.6 },
      { transform: 'rotate(360deg) scale(1)' },
    ], { duration: 500, easing: 'ease-out' });
  }
  diceAnimations += 1;
}

function play(key) {
  const d = describedActions(S).find((x) => x.key === key);
  if (!d) return;
  command('play', { action: d.action });
  refocus = true;
  dispatch({ type: 'local:played' }); // wait for the server's answer
}

function onPiece(colour, piece) {
  dispatch({ type: 'local:select', piece: `${colour}:${piece}` });
  const tg = document.querySelector('.target');
  if (tg && S.selected) tg.focus({ preventScroll: true });
}

// ----- rendering ---------------------------------------------------------------------

let renderQueued = false;
let pendingFx = [];
function scheduleRender(fx = []) {
  pendingFx.push(...fx);
  if (renderQueued) return;
  renderQueued = true;
  queueMicrotask(() => {
    renderQueued = false;
    const todo = pendingFx;
    pendingFx = [];
    render();
    // Animations start from the drawn end positions, once per move.
    if (board && S.room && S.room.status !== 'lobby') {
      for (const f of todo) if (f.type === 'animate' && board.animate(f)) animations += 1;
      for (const f of todo) if (f.type === 'captured' && board.animateHome(f)) animations += 1;
      if (todo.some((f) => f.type === 'dice')) animateDice();
      keepFocus();
    }
  });
}

function render() {
  if (replay) { renderReplay(); return; }
  if (!S.room) return;
  if (S.room.status === 'lobby') {
    renderRoom();
    show('room');
  } else {
    renderGame();
    show('game');
  }
}

function renderInvite() {
  $('invite').value = inviteUrl(S.code);
  $('invite-loopback').hidden = !inviteIsLoopback(S.code);
  $('share-invite').hidden = !(navigator.share && matchMedia('(pointer: coarse)').matches);
}

/** The fair-dice line: our client seed and the server's commitment, with the explanation. */
function renderFair(el) {
  el.replaceChildren();
  if (!fair.info) return;
  const parts = [];
  if (fair.clientSeed && S.role === 'player') parts.push(t('dice_seed_mine', { seed: fair.clientSeed }));
  parts.push(t('dice_commitment', { c: fair.info.commitment.slice(0, 16) }));
  if (fair.info.mode === 'test') parts.push(t('dice_test'));
  el.append(`🎲 ${parts.join(' · ')} · `);
  el.appendChild(fairLink());
}

function fairLink() { return fairLinkTo($('fair-dialog')); }

/** Checks a finished game's dice with Web Crypto and shows the verdict in `el`
 * (`data-status`: checking, verified, failed, test or unavailable). */
async function checkDice(gameId, el) {
  el.dataset.status = 'checking';
  el.replaceChildren(t('dice_checking'));
  let verdict;
  try {
    verdict = await verifyGame(await api('GET', `/api/games/${encodeURIComponent(gameId || '')}`));
  } catch (err) {
    verdict = { status: 'unavailable', reason: String((err && err.message) || err) };
  }
  el.dataset.status = verdict.status;
  if (verdict.throw !== undefined) el.dataset.throw = String(verdict.throw);
  const text = verdict.status === 'verified' ? t('dice_verified', { n: verdict.throws })
    : verdict.status === 'test' ? t('dice_test')
      : verdict.status === 'failed' ? t('dice_failed', { reason: verdict.reason })
        : t('dice_unavailable', { reason: verdict.reason });
  el.replaceChildren(`🎲 ${text} · `);
  el.appendChild(fairLink());
}

function renderRoom() {
  renderFair($('room-fair'));
  const room = S.room;
  $('room-title').textContent = t('room', { code: S.code });
  renderInvite();
  $('room-info').textContent = roomInfo(room.settings);
  $('room-bots').textContent = botsInfo(room.settings);
  const ul = $('seat-list');
  ul.replaceChildren();
  const me = S.role === 'player' ? seatOf(S.colour) : null;
  // The room's seats only (a 2-seat room lists two): the taken ones, then the free ones.
  for (const seat of room.seats) {
    const tags = [];
    if (seat.colour === S.colour && S.role === 'player') tags.push(t('you'));
    if (seat.creator) tags.push(t('creator'));
    if (seat.bot) tags.push(t('bot_tag'));
    else if (!seat.connected) tags.push(t('offline'));
    const li = seatRow(seat.colour, `${colourName(seat.colour)}: ${displayName(seat)}${tags.length ? ` (${tags.join(', ')})` : ''}`);
    li.dataset.taken = 'true';
    ul.appendChild(li);
  }
  for (let i = room.seats.length; i < room.settings.seats; i++) {
    ul.appendChild(seatRow(null, room.settings.bots ? t('free_seat_bot') : t('free_seat')));
  }
  // A seated player may switch to a free colour.
  const change = $('colour-change');
  change.replaceChildren();
  const freeColours = COLOURS.filter((c) => !seatOf(c));
  if (me && freeColours.length) {
    const lab = document.createElement('span');
    lab.className = 'muted';
    lab.textContent = `${t('change_colour')}:`;
    change.appendChild(lab);
    for (const c of freeColours) {
      const b = button(`${SHAPE_CHAR[c]} ${colourName(c)}`, () => { dispatch({ type: 'local:want_colour', colour: c }); command('choose_colour', { colour: c }); }, t('take_colour', { colour: colourName(c) }), `take-colour c-${c}`);
      b.dataset.colour = c;
      change.appendChild(b);
    }
  }
  change.hidden = !change.children.length;
  if (autoStart && me && me.creator) {
    autoStart = false;
    command('start');
  }
  const creator = room.seats.find((s) => s.creator);
  const start = $('start-btn');
  start.hidden = !(me && me.creator);
  const bots = !!room.settings.bots; // bots fill the free seats at the start
  start.disabled = room.seats.length < 2 && !bots;
  $('room-status').textContent = room.seats.length < 2 && !bots
    ? t('need_two')
    : (me && me.creator ? '' : t('waiting_creator', { name: creator ? displayName(creator) : '' }));
  $('room-spectators').textContent = t('spectators', { n: room.spectators || 0 });
}

const PIPS = { 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

function dieEl(v, used, small) {
  const d = document.createElement('span');
  d.className = `die${used ? ' used' : ''}${small ? ' small' : ''}`;
  d.dataset.value = v;
  d.setAttribute('role', 'img');
  d.setAttribute('aria-label', `${v}${used ? ` (${t('die_used')})` : ''}`);
  for (let p = 0; p < 9; p++) {
    const pip = document.createElement('i');
    if (PIPS[v].includes(p)) pip.className = 'pip';
    d.appendChild(pip);
  }
  return d;
}

function boardPieces(pieces, seatStatus) {
  const out = [];
  for (const c of COLOURS) {
    if (!pieces[c] || seatStatus[c] === 'abandoned') continue;
    pieces[c].forEach((at, i) => out.push({ colour: c, piece: i, at }));
  }
  return out;
}

function logText(e) {
  const p = {};
  for (const [k, v] of Object.entries(e.p || {})) {
    if (v && typeof v === 'object') {
      if ('c' in v) p[k] = colourName(v.c);
      else if ('loc' in v) p[k] = locName(v.loc);
      else if ('rolls' in v) p[k] = v.rolls.map((r) => `${colourName(r.colour)} ${r.value}`).join(', ');
      else if ('name' in v) p[k] = displayName({ name: v.name, bot: v.bot });
    } else p[k] = v;
  }
  let s = t(e.key, p);
  if (e.p && e.p.bounced) s += t('ev_bounced');
  if (e.p && e.p.counts) s += t('ev_and_counts', { n: e.p.counts });
  return s;
}

function renderLog(ol, entries) {
  ol.replaceChildren();
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    const li = document.createElement('li');
    li.textContent = logText(e);
    if (e.cls) li.className = e.cls;
    ol.appendChild(li);
  }
}

function timeoutsText(colour) {
  const seat = seatOf(colour);
  if (seat && (seat.bot || seat.abandoned)) return ''; // a bot plays it now: no strikes
  const n = S.timeouts[colour] || 0;
  const max = S.room.settings.timeouts_to_abandon;
  return n > 0 ? t('strikes', { n, max }) : '';
}

function renderGame() {
  renderFair($('game-fair'));
  if (!board) board = createBoard($('board-wrap'));
  const actions = describedActions(S);
  const movable = selectable(S);
  const lastMoves = Object.entries(S.lastMove).map(([colour, m]) => ({ colour, ...m }));
  const targets = actions
    .filter((d) => `${d.colour}:${d.piece}` === S.selected)
    .map((d) => ({ loc: d.to, colour: d.colour, label: actionLabel(d), capture: d.capture, key: d.key, short: shortLoc(d.to) }));
  board.render({
    board: S.room.board,
    bottom: bottomColour(S),
    pieces: boardPieces(S.pieces, S.seatStatus),
    selectable: movable,
    selected: S.selected,
    targets,
    lastMoves,
    onPiece,
    onTarget: play,
    onStack: chooseStacked,
    lastCapture: S.lastCapture,
    shapes: prefs.shapes,
    seq: S.seq,
    turn: S.turn,
  });
  renderCaptureBanner();
  renderAway();
  renderEmoteBar($('emote-bar'), { player: S.role === 'player' && !!S.colour, muted: S.emotesMuted, send: (id) => command('emote', { emote: id }) });
  renderEmoteFeed($('emote-feed'), S.emotes, nameOf);
  $('emote-mute').checked = S.emotesMuted;

  // Turn banner.
  const mine = S.myTurn && S.role === 'player';
  const banner = $('turn-banner');
  if (S.outcome) {
    banner.textContent = t(S.outcome.reason === 'forfeit' ? 'ev_won_forfeit' : 'ev_won', { colour: colourName(S.outcome.winner) });
  } else if (mine || (S.turn && S.turn === S.colour && S.role === 'player')) {
    banner.textContent = `${t('your_turn')} (${colourName(S.colour)})`;
  } else if (S.turn) {
    banner.textContent = `${t('turn_of', { colour: colourName(S.turn) })} · ${nameOf(S.turn)}`;
  }
  banner.className = `turn-banner${S.turn ? ` c-${S.turn}` : ''}`;
  banner.dataset.turn = S.turn || '';

  // Dice.
  const dice = $('dice');
  dice.replaceChildren();
  (S.dice || []).forEach((v, i) => dice.appendChild(dieEl(v, S.used[i])));
  const roll = $('roll-btn');
  roll.disabled = !(mine && S.myTurn.must_roll);
  roll.hidden = S.role !== 'player' || !!S.outcome;

  // Prompt and the list of actions.
  const prompt = $('prompt');
  if (mine && !S.myTurn.must_roll) {
    if (S.myTurn.bonus) prompt.textContent = t('bonus_prompt', { n: S.myTurn.bonus });
    else if (S.selected) prompt.textContent = t('choose_target', { n: Number(S.selected.split(':')[1]) + 1 });
    else prompt.textContent = t('choose_piece');
    prompt.classList.toggle('bonus', !!S.myTurn.bonus);
  } else {
    prompt.textContent = '';
    prompt.classList.remove('bonus');
  }
  const strikes = S.role === 'player' && S.colour ? timeoutsText(S.colour) : '';
  $('my-strikes').textContent = strikes ? t('strikes_you', { n: S.timeouts[S.colour], max: S.room.settings.timeouts_to_abandon }) : '';
  $('my-strikes').hidden = !strikes;
  const list = $('action-list');
  list.replaceChildren();
  for (const d of actions) {
    const b = button(actionLabel(d), () => play(d.key), null, `action${d.capture ? ' capture' : ''}${d.action.type === 'bonus' ? ' bonus' : ''}`);
    b.dataset.kind = d.action.type;
    b.dataset.piece = d.piece;
    b.dataset.target = d.to;
    b.dataset.steps = d.steps;
    b.dataset.capture = d.capture ? '1' : '0';
    b.dataset.key = d.key;
    list.appendChild(b);
  }

  // Players: name, pieces in the goal, last roll, timeout strikes.
  const pl = $('player-list');
  pl.replaceChildren();
  for (const seat of S.room.seats) {
    const li = document.createElement('li');
    li.className = `c-${seat.colour}${seat.colour === S.turn ? ' current' : ''}`;
    li.dataset.colour = seat.colour;
    const home = (S.pieces[seat.colour] || []).filter((l) => l === 'goal').length;
    const tags = [];
    if (seat.colour === S.colour && S.role === 'player') tags.push(t('you'));
    if (seat.bot) tags.push(t('bot_tag'));
    else if (!seat.connected && !seat.abandoned) tags.push(t('offline'));
    if (seat.abandoned) tags.push(t('abandoned'));
    const sw = swatch(seat.colour);
    const txt = document.createElement('span');
    txt.className = 'player-name';
    txt.textContent = `${colourName(seat.colour)} · ${displayName(seat)}${tags.length ? ` (${tags.join(', ')})` : ''} · ${t('loc_goal')}: ${home}/4`;
    const roll = document.createElement('span');
    roll.className = 'last-roll';
    roll.setAttribute('role', 'group');
    roll.setAttribute('aria-label', t('last_roll'));
    for (const v of S.lastRoll[seat.colour] || []) roll.appendChild(dieEl(v, false, true));
    const strike = document.createElement('span');
    strike.className = 'strikes';
    strike.textContent = timeoutsText(seat.colour);
    li.append(sw, txt, roll, strike);
    pl.appendChild(li);
  }
  $('game-spectators').textContent = t('spectators', { n: S.room.spectators || 0 });
  $('game-spectators').dataset.count = S.room.spectators || 0;
  $('spectating').hidden = S.role !== 'spectator';
  $('game-leave').textContent = S.outcome || S.role === 'spectator' ? t('back_lobby') : t('leave');
  renderLog($('log'), S.log);
  tickClock();
  renderResult();
}

let lastTick = null;
function tickClock() {
  const cd = $('countdown');
  const bar = $('clock-bar');
  if (!S.deadline || S.outcome || !S.room || S.room.status !== 'playing') {
    cd.textContent = '';
    bar.style.width = '0';
    return;
  }
  const now = Date.now() + S.clockOffset;
  const left = Math.max(0, S.deadline - now);
  const total = (S.room.settings.turn_clock_secs || 15) * 1000;
  const secs = Math.ceil(left / 1000);
  cd.textContent = t('time_left', { s: secs });
  cd.dataset.left = String(secs);
  bar.style.width = `${Math.max(0, Math.min(100, (left / total) * 100))}%`;
  bar.classList.toggle('low', left < 5000);
  // The last 5 seconds of your own clock tick.
  const mine = S.role === 'player' && S.turn === S.colour && S.myTurn;
  if (mine && secs <= 5 && secs > 0 && lastTick !== `${S.deadline}:${secs}`) {
    lastTick = `${S.deadline}:${secs}`;
    sound.play('tick');
  }
}

// ----- the tab title flashes on your turn while the tab is in the background -----------

let flashTimer = null;
const TITLE = 'Parchís';
function flashTitle() {
  if (!document.hidden || flashTimer) return;
  let on = false;
  flashTimer = setInterval(() => {
    on = !on;
    document.title = on ? `● ${t('your_turn')}` : TITLE;
  }, 800);
  document.title = `● ${t('your_turn')}`;
}
function stopFlash() {
  clearInterval(flashTimer);
  flashTimer = null;
  document.title = TITLE;
}

// ----- result, rematch -------------------------------------------------------------------

let resultShownFor = null;
function renderResult() {
  const el = $('result');
  if (!S.outcome) { el.hidden = true; return; }
  const w = S.outcome.winner;
  $('result-text').textContent = t(S.outcome.reason === 'forfeit' ? 'result_forfeit' : 'result_goal', { colour: colourName(w), name: nameOf(w) });
  $('result-text').className = `result-text c-${w}`;
  $('result-you').textContent = S.role === 'player' ? (S.colour === w || S.outcome.partner === S.colour ? t('you_won') : t('you_lost')) : '';
  const table = $('result-table');
  table.replaceChildren();
  const rows = S.room.seats.map((s) => ({ s, home: (S.pieces[s.colour] || []).filter((l) => l === 'goal').length }))
    .sort((a, b) => (b.s.colour === w) - (a.s.colour === w) || b.home - a.home);
  for (const { s, home } of rows) {
    const li = document.createElement('li');
    li.className = `c-${s.colour}`;
    li.dataset.colour = s.colour;
    const wants = S.rematch.wanted.includes(s.colour) ? ` · ${t('rematch_yes')}` : '';
    li.textContent = `${colourName(s.colour)} · ${displayName(s)} · ${t('loc_goal')}: ${home}/4${wants}`;
    table.appendChild(li);
  }
  const canRematch = S.role === 'player' && !seatOf(S.colour)?.abandoned;
  const rm = $('result-rematch');
  rm.hidden = !canRematch;
  rm.disabled = S.rematch.wanted.includes(S.colour);
  rm.textContent = rm.disabled ? t('rematch_waiting') : t('rematch');
  $('result-replay').hidden = !S.gameId;
  if (resultShownFor === S.gameId) return;
  resultShownFor = S.gameId;
  checkDice(S.gameId, $('result-dice'));
  el.hidden = false;
  $('result-lobby').focus();
}

// ----- replay viewer -----------------------------------------------------------------

async function openReplay(gameId) {
  let data;
  try { data = await api('GET', `/api/games/${encodeURIComponent(gameId)}/replay`); } catch (err) {
    // The server answered (400: a malformed id, 404: no such game) or could not be reached.
    toast(err.status === 404 ? t('err_unknown_game') : err.status === 400 ? t('err_bad_game_id') : err.status ? errorText(err.code, err.message) : t('err_http'));
    if (!S.room) { setUrl(null); show('lobby'); }
    return;
  }
  // A player coming from the result screen stays in the room (for a rematch): the
  // replay is drawn over it and "back" returns there.
  $('result').hidden = true;
  replay = { data, i: data.steps.length - 1, board: null };
  $('replay-slider').max = String(data.steps.length - 1);
  setUrl(`/?game=${encodeURIComponent(gameId)}`);
  show('replay');
  renderReplay();
  checkDice(gameId, $('replay-fair'));
}

function closeReplay() {
  if (!replay) return;
  autoplay.pause();
  replay = null;
  $('replay-board').replaceChildren();
}

/** Moves the replay by `delta` steps; false when it could not move (at an end). */
function replayStep(delta) {
  if (!replay) return false;
  const i = Math.max(0, Math.min(replay.data.steps.length - 1, replay.i + delta));
  const moved = i !== replay.i;
  replay.i = i;
  renderReplay();
  return moved;
}

const autoplay = createAutoplay({
  step: () => replayStep(1),
  onChange: (playing) => {
    const b = $('replay-play');
    b.setAttribute('aria-pressed', playing ? 'true' : 'false');
    b.setAttribute('aria-label', t(playing ? 'replay_pause' : 'replay_play'));
    b.textContent = playing ? '⏸' : '⏵';
  },
});

function renderReplay() {
  const { data } = replay;
  const step = data.steps[replay.i];
  if (!replay.board) replay.board = createBoard($('replay-board'));
  const pos = step.position;
  const pieces = {}; const status = {};
  for (const p of pos.players) { pieces[p.colour] = p.pieces.map((x) => x.at); status[p.colour] = p.status; }
  const moved = step.moves || [];
  replay.board.render({
    board: data.board,
    bottom: data.players[0] ? data.players[0].colour : 'yellow',
    pieces: boardPieces(pieces, status),
    lastMoves: moved.map((m) => ({ colour: m.colour, from: m.from, to: m.to, captures: m.captures })),
    shapes: prefs.shapes,
  });
  $('replay-slider').value = String(replay.i);
  $('replay-slider').setAttribute('aria-valuetext', t('replay_step', { i: replay.i, n: data.steps.length - 1 }));
  const turnOf = pos.turn;
  const who = data.players.find((p) => p.colour === turnOf);
  const turnEl = $('replay-turn');
  turnEl.textContent = turnOf ? t('replay_turn', { colour: colourName(turnOf), name: who ? displayName(who) : '' }) : '';
  turnEl.className = `turn-banner${turnOf ? ` c-${turnOf}` : ''}`;
  turnEl.dataset.turn = turnOf || '';
  $('replay-title').textContent = t('replay_title', { room: data.game.room, preset: presetName(data.game.preset) });
  $('replay-counter').textContent = t('replay_step', { i: replay.i, n: data.steps.length - 1 });
  $('replay-counter').dataset.step = replay.i;
  const dice = $('replay-dice');
  dice.replaceChildren();
  const st = pos.stage;
  const shown = step.dice || (st.kind === 'move' ? st.dice : null);
  for (const v of shown || []) dice.appendChild(dieEl(v, false));
  $('replay-players').textContent = data.players.map((p) => `${SHAPE_CHAR[p.colour]} ${colourName(p.colour)}: ${displayName(p)}`).join(' · ');
  // The log up to this step, newest first.
  const entries = [];
  for (let k = 1; k <= replay.i; k++) for (const e of data.steps[k].log) entries.push(replayLogEntry(e, data));
  renderLog($('replay-log'), entries.filter(Boolean).slice(-300));
  $('replay-prev').disabled = replay.i === 0;
  $('replay-first').disabled = replay.i === 0;
  $('replay-next').disabled = replay.i === data.steps.length - 1;
  $('replay-last').disabled = replay.i === data.steps.length - 1;
}

/** A stored engine event as a log entry (the same texts as the live log). */
function replayLogEntry(e) {
  const C = (c) => ({ c });
  switch (e.type) {
    case 'dice_rolled': return { key: e.dice.length === 2 ? 'ev_rolled' : 'ev_rolled1', p: { colour: C(e.colour), a: e.dice[0], b: e.dice[1] }, cls: `c-${e.colour}` };
    case 'piece_exited': return { key: 'ev_exit', p: { colour: C(e.colour), square: e.square }, cls: `c-${e.colour}` };
    case 'piece_moved': return { key: e.by === 'bonus' ? 'ev_moved_bonus' : 'ev_moved', p: { colour: C(e.colour), n: e.piece + 1, from: { loc: e.from }, to: { loc: e.to }, steps: e.steps, bounced: e.bounced }, cls: `c-${e.colour}` };
    case 'piece_captured': return { key: 'ev_captured', p: { by: C(e.by), colour: C(e.colour), square: e.square }, cls: `c-${e.by} capture` };
    case 'bonus_earned': return { key: e.reason === 'goal' ? 'ev_bonus_goal' : 'ev_bonus', p: { colour: C(e.colour), n: e.amount }, cls: `c-${e.colour}` };
    case 'no_legal_move': return { key: 'ev_no_move', p: { colour: C(e.colour) }, cls: `c-${e.colour}` };
    case 'timed_out': return { key: 'ev_timeout', p: { colour: C(e.colour), n: e.consecutive }, cls: `c-${e.colour}` };
    case 'turn_passed': return { key: 'ev_passed', p: { to: C(e.to) }, cls: `c-${e.to} pass` };
    case 'player_abandoned': return { key: 'ev_abandoned', p: { colour: C(e.colour) }, cls: `c-${e.colour}` };
    case 'game_won': return { key: e.reason === 'forfeit' ? 'ev_won_forfeit' : 'ev_won', p: { colour: C(e.winner) }, cls: `c-${e.winner} big` };
    case 'roll_again': return { key: 'ev_again', p: { colour: C(e.colour) }, cls: `c-${e.colour}` };
    default: return null;
  }
}

// ----- wiring ------------------------------------------------------------------------

function retranslate() {
  translateDom();
  fillColourSelect($('colour-pref'));
  renderMute();
  if (board) { $('board-wrap').replaceChildren(); board = null; }
  $('emote-bar').replaceChildren();
  $('away-list').dataset.key = '';
  if (replay) { $('replay-board').replaceChildren(); replay.board = null; }
  if (S.room || replay) render(); else loadLobbyLists();
  const st = $('conn-status');
  if (st.dataset.state === 'open') st.textContent = t('connected');
  else if (st.dataset.state === 'reconnecting') st.textContent = t('reconnecting');
}

function renderMute() {
  const m = sound.isMuted();
  const b = $('mute-btn');
  b.setAttribute('aria-pressed', m ? 'true' : 'false');
  b.setAttribute('aria-label', t(m ? 'unmute' : 'mute'));
  b.title = t(m ? 'unmute' : 'mute');
}

function renderPrefs() {
  $('pref-shapes').checked = prefs.shapes;
  $('pref-contrast').checked = prefs.contrast;
  $('pref-emotes').checked = prefs.emotesMuted;
  $('emote-mute').checked = prefs.emotesMuted;
}

function setPrefs(change) {
  prefs = { ...prefs, ...change };
  savePrefs(prefs);
  renderPrefs();
  if (S.emotesMuted !== prefs.emotesMuted) dispatch({ type: 'local:mute_emotes', muted: prefs.emotesMuted });
  else scheduleRender();
}

function setZoom(on) {
  const wrap = $('board-wrap');
  wrap.classList.toggle('zoomed', on);
  const b = $('zoom-btn');
  b.setAttribute('aria-pressed', on ? 'true' : 'false');
  b.setAttribute('aria-label', t(on ? 'zoom_out' : 'zoom_in'));
  scheduleRender();
  if (on) {
    // Centre the view on the chosen piece, else on the player's own side.
    requestAnimationFrame(() => {
      const focus = document.querySelector('svg.board .piece.selected, svg.board .piece.selectable, svg.board .target');
      const r = focus ? focus.getBoundingClientRect() : null;
      const w = wrap.getBoundingClientRect();
      if (r) wrap.scrollTo({ left: wrap.scrollLeft + r.x - w.x - w.width / 2, top: wrap.scrollTop + r.y - w.y - w.height / 2 });
      else wrap.scrollTo({ left: (wrap.scrollWidth - w.width) / 2, top: wrap.scrollHeight - w.height });
    });
  }
}

function init() {
  document.documentElement.lang = getLang();
  applyPrefs(prefs);
  renderPrefs();
  S = { ...S, emotesMuted: prefs.emotesMuted };
  loadInviteBase().then(() => { if (S.room && S.room.status === 'lobby') renderInvite(); });
  translateDom();
  fillColourSelect($('colour-pref'));
  renderMute();
  const name = store.get('parchis.name');
  if (name) $('name').value = name;

  $('lang-btn').addEventListener('click', () => { setLang(getLang() === 'es' ? 'en' : 'es'); retranslate(); });
  $('mute-btn').addEventListener('click', () => { sound.setMuted(!sound.isMuted()); renderMute(); });
  $('create-form').addEventListener('submit', createRoom);
  $('play-now').addEventListener('click', playNow);
  $('quick-preset').addEventListener('change', () => { $('play-now-offer').hidden = true; });
  $('play-bot').addEventListener('click', () => quickRoom(true));
  $('play-wait').addEventListener('click', () => quickRoom(false));
  $('settings-btn').addEventListener('click', () => openDialog($('settings-dialog'), $('pref-shapes')));
  $('settings-close').addEventListener('click', () => closeDialog($('settings-dialog')));
  $('fair-close').addEventListener('click', () => closeDialog($('fair-dialog')));
  $('stack-cancel').addEventListener('click', () => closeDialog($('stack-dialog')));
  $('pref-shapes').addEventListener('change', (e) => setPrefs({ shapes: e.target.checked }));
  $('pref-contrast').addEventListener('change', (e) => setPrefs({ contrast: e.target.checked }));
  $('pref-emotes').addEventListener('change', (e) => setPrefs({ emotesMuted: e.target.checked }));
  $('emote-mute').addEventListener('change', (e) => setPrefs({ emotesMuted: e.target.checked }));
  $('zoom-btn').addEventListener('click', () => setZoom(!$('board-wrap').classList.contains('zoomed')));
  $('replay-play').addEventListener('click', () => {
    if (replay && !autoplay.playing && replay.i === replay.data.steps.length - 1) { replay.i = 0; renderReplay(); }
    autoplay.toggle();
  });
  $('replay-slider').addEventListener('input', (e) => { if (replay) { autoplay.pause(); replay.i = Number(e.target.value); renderReplay(); } });
  closeOnEscape((el) => { if (el.id === 'result') resultShownFor = S.gameId; });
  $('code-form').addEventListener('submit', (e) => { e.preventDefault(); enterRoom($('code').value, 'join'); });
  $('code-watch').addEventListener('click', () => enterRoom($('code').value, 'watch'));
  $('refresh-rooms').addEventListener('click', loadRooms);
  $('refresh-live').addEventListener('click', loadLiveGames);
  $('join-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const n = requireName($('join-name'));
    if (!n) return;
    startSession($('join-form').dataset.code, { kind: 'join', name: n, colour: $('join-colour').value || null });
  });
  $('join-watch').addEventListener('click', () => enterRoom($('join-form').dataset.code, 'watch'));
  $('join-back').addEventListener('click', () => { setUrl(null); show('lobby'); });
  $('copy-invite').addEventListener('click', async () => {
    const text = $('invite').value;
    try { await navigator.clipboard.writeText(text); } catch (_) {
      $('invite').select();
      try { document.execCommand('copy'); } catch (__) { /* ignore */ }
    }
    $('copy-invite').textContent = t('copied');
    setTimeout(() => { $('copy-invite').textContent = t('copy'); }, 1500);
  });
  $('share-invite').addEventListener('click', () => {
    navigator.share({ title: t('share_title'), text: t('share_text', { code: S.code }), url: $('invite').value }).catch(() => {});
  });
  $('start-btn').addEventListener('click', () => command('start'));
  $('room-leave').addEventListener('click', leaveRoom);
  $('game-leave').addEventListener('click', leaveRoom);
  $('leave-cancel').addEventListener('click', () => closeDialog($('leave-dialog')));
  $('leave-confirm').addEventListener('click', () => { $('leave-dialog').close(); doLeave(); });
  $('roll-btn').addEventListener('click', () => {
    if (!S.myTurn || !S.myTurn.must_roll) return;
    command('roll');
    refocus = true;
    dispatch({ type: 'local:played' });
  });
  $('result-close').addEventListener('click', () => { $('result').hidden = true; });
  $('result-rematch').addEventListener('click', () => command('rematch'));
  $('result-replay').addEventListener('click', () => { if (S.gameId) openReplay(S.gameId); });
  $('result-lobby').addEventListener('click', () => {
    if (conn) { conn.close(); conn = null; }
    dispatch({ type: 'local:reset' });
    setUrl(null);
    $('result').hidden = true;
    show('lobby');
  });
  $('replay-first').addEventListener('click', () => replayStep(-1e9));
  $('replay-prev').addEventListener('click', () => replayStep(-1));
  $('replay-next').addEventListener('click', () => replayStep(1));
  $('replay-last').addEventListener('click', () => replayStep(1e9));
  $('replay-back').addEventListener('click', () => {
    closeReplay();
    if (S.room && conn) { setUrl(roomUrl(S.code)); resultShownFor = null; render(); } else { setUrl(null); show('lobby'); }
  });
  $('home-link').addEventListener('click', (e) => {
    e.preventDefault();
    if (replay) { closeReplay(); setUrl(null); show('lobby'); return; }
    if (S.room) leaveRoom(); else show('lobby');
  });
  document.addEventListener('keydown', (e) => {
    if (e.target && e.target.id === 'replay-slider') return; // the slider moves itself
    if (replay && e.key === 'ArrowLeft') replayStep(-1);
    if (replay && e.key === 'ArrowRight') replayStep(1);
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) stopFlash();
    else if (S.myTurn && S.role === 'player') flashTitle();
  });
  setInterval(() => { tickClock(); if (S.room && S.room.status !== 'lobby' && !replay) renderAway(); }, 250);
  // Redraw when the board's size changes (touch areas follow the CSS size).
  window.addEventListener('resize', () => { if (S.room && S.room.status !== 'lobby') scheduleRender(); });

  const params = new URLSearchParams(location.search);
  const m = location.pathname.match(/^\/r\/([^/]+)/);
  const code = params.get('room') || (m && decodeURIComponent(m[1]));
  if (params.get('game')) openReplay(params.get('game'));
  else if (code) enterRoom(code, params.get('watch') ? 'watch' : null);
  else show('lobby');
}

// Test hook: only when a test page installed a receiver before the app loaded (the
// browser test does, with an init script); production pages expose nothing.
if (typeof window.__parchisTestHook === 'function') {
  window.__parchisTestHook({
    state: () => S,
    // Simulates a dropped network: closes the socket as a failure would; it reconnects.
    drop: () => { if (conn && conn.ws) conn.ws.close(4999, 'test drop'); },
    sounds: () => sound.played.slice(),
    animations: () => animations,
    diceAnimations: () => diceAnimations,
    replay: () => replay && { i: replay.i, n: replay.data.steps.length },
  });
}

init();
