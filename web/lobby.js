// The lobby and join views: the open public rooms and the games being played, "Play
// now", creating a room (rated only for a logged-in player), entering a room by code or
// link (resume a stored seat, join, watch, or its replay once finished), and the join
// page of a room reached by code or link.

import { t, colourName } from './i18n.js';
import { COLOURS } from './board.js';
import { api } from './net.js';
import { ctx, actions, registerView, show } from './ctx.js';
import {
  $, store, sessionKey, toast, httpErrorText, setUrl, roomUrl, button, fillColourSelect,
  displayName, ratingText, playersText, presetName, roomInfo, botsInfo, seatRow,
} from './ui.js';
import { startSession } from './session.js';

let roomsTimer = null;

function myName() { return ($('name').value || '').trim(); }

/** The rated tag and the players of a listed room, as a suffix of its row. */
function rowExtras(r) {
  const players = playersText(r);
  return (r.rated ? ` · ${t('rated_tag')}` : '') + (players ? ` · ${players}` : '');
}

/** Lists `path`'s rooms into `list` (emptied first): the rooms, or null when there are
 * none (a muted `emptyKey` row then) or the server did not answer (the list kept). */
async function fetchRooms(list, path, emptyKey) {
  let data;
  try { data = await api('GET', path); } catch (_) { return null; }
  list.replaceChildren();
  if (data.rooms.length) return data.rooms;
  const li = document.createElement('li');
  li.className = 'muted';
  li.textContent = t(emptyKey);
  list.appendChild(li);
  return null;
}

async function loadRooms() {
  const list = $('room-list');
  const rooms = await fetchRooms(list, '/api/rooms', 'no_rooms');
  if (!rooms) return;
  for (const r of rooms) {
    const li = document.createElement('li');
    li.dataset.code = r.code;
    li.dataset.free = r.free;
    if (r.rated) li.dataset.rated = 'true';
    const span = document.createElement('span');
    span.className = 'room-info';
    const free = r.free_colours.map(colourName).join(', ');
    span.textContent = t('room_row', {
      code: r.code, taken: r.taken, seats: r.seats, preset: presetName(r.preset),
      clock: r.turn_clock_secs ?? '?', free: free || '—',
    }) + rowExtras(r);
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
  const rooms = await fetchRooms(list, '/api/rooms?status=playing', 'no_live_games');
  if (!rooms) return;
  for (const r of rooms) {
    const li = document.createElement('li');
    li.dataset.code = r.code;
    const span = document.createElement('span');
    span.className = 'room-info';
    span.textContent = t('live_row', { code: r.code, players: r.taken, spectators: r.spectators, preset: presetName(r.preset) }) + rowExtras(r);
    const watch = button(t('watch'), () => enterRoom(r.code, 'watch'), `${t('watch')} ${r.code}`);
    li.append(span, watch);
    list.appendChild(li);
  }
}

/** Reloads both lobby lists. */
export function loadLobbyLists() {
  loadRooms();
  loadLiveGames();
}

/** The name typed in `input` (remembered), or null with a toast when it is missing. */
export function requireName(input) {
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
  const rated = !!ctx.me && $('rated').checked;
  const settings = {
    preset: $('preset').value,
    seats: $('preset').value === 'pairs' ? 4 : Number($('seats').value), // pairs: exactly 4
    turn_clock_secs: Math.max(1, Math.min(600, Number($('clock').value) || 15)),
    public: $('public').checked,
    spectators: $('spectators-ok').checked,
    // A rated room takes no bots (proto/README.md, "Rated rooms").
    bots: rated ? null : $('bots').value || null, // fill the free seats with bots at the start
    on_abandon: !rated && $('bot-takeover').checked ? 'bot' : 'forfeit',
  };
  if (rated) settings.rated = true;
  return settings;
}

/** The "rated" choice: offered to a logged-in player only; it turns the bots off. */
export function renderRatedChoice() {
  const box = $('rated-choice');
  box.hidden = !ctx.me;
  const rated = !!ctx.me && $('rated').checked;
  $('bots').disabled = rated;
  $('bot-takeover').disabled = rated;
  $('rated-hint').hidden = !rated;
}

async function createRoom(e) {
  e.preventDefault();
  const name = ctx.me ? ctx.me.username : requireName($('name'));
  if (!name) return;
  let res;
  try { res = await api('POST', '/api/rooms', settingsFromForm()); } catch (err) {
    toast(httpErrorText(err));
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
    const open = data.rooms.find((r) => r.free > 0 && r.preset === preset && !r.rated);
    if (open) { startSession(open.code, { kind: 'join', name, colour: null }); return; }
    $('play-now-offer').hidden = false;
    $('play-bot').focus();
  } catch (err) {
    toast(httpErrorText(err));
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
    ctx.autoStart = vsBot;
    startSession(res.code, { kind: 'join', name, colour: null });
  } catch (err) {
    toast(httpErrorText(err));
  }
}

/** Opens room `code`: resume a stored seat, or join / watch / ask; a finished room's
 * link opens the replay of its game. */
export async function enterRoom(rawCode, intent) {
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
  // A seat of this account taken on another device: `resume` it by the account (no
  // token; a logged-in player's seat is named after its username).
  if (ctx.me && view.status !== 'finished' && view.seats.some((s) => !s.bot && !s.abandoned && s.name === ctx.me.username)) {
    startSession(view.code, { kind: 'resume_account' }, null, view);
    return;
  }
  // A finished room's link, for anyone not seated there: the replay of its game.
  if (view.status === 'finished' && view.game && intent !== 'watch') {
    actions.openReplay(view.game.game_id);
    return;
  }
  if (intent === 'watch' || view.status !== 'lobby') {
    startSession(view.code, { kind: 'watch' }, null, view);
    return;
  }
  const name = ctx.me ? ctx.me.username : myName();
  const full = view.seats.length >= view.settings.seats;
  if (intent === 'join' && name && !full) {
    const free = COLOURS.filter((c) => !view.seats.some((s) => s.colour === c));
    const pref = $('colour-pref').value;
    startSession(view.code, { kind: 'join', name, colour: free.includes(pref) ? pref : null });
    return;
  }
  showJoin(view);
}
actions.enterRoom = enterRoom;

/** A room that is gone: its last stored game, if any, opens in the replay viewer. */
async function openStoredGameOf(code) {
  try {
    // Newest first: the first of a one-game page is the room's last game.
    const list = await api('GET', `/api/games?room=${encodeURIComponent(code)}&limit=1`);
    const last = list.games[0];
    if (!last) return false;
    actions.openReplay(last.id);
    return true;
  } catch (_) { return false; }
}

/** The join page of a room reached by code or link: its rules, its seats and whether
 * bots fill the empty ones; a full room offers watching only. */
function showJoin(view) {
  setUrl(roomUrl(view.code));
  $('join-title').textContent = t('room', { code: view.code });
  $('join-form').dataset.code = view.code;
  $('join-name').value = ctx.me ? ctx.me.username : $('name').value;
  $('join-info').textContent = roomInfo(view.settings);
  $('join-bots').textContent = botsInfo(view.settings);
  const seats = $('join-seats');
  seats.replaceChildren();
  for (const seat of view.seats) seats.appendChild(seatRow(seat.colour, `${colourName(seat.colour)}: ${displayName(seat)}${ratingText(seat)}${seat.bot ? ` (${t('bot_tag')})` : ''}`));
  for (let i = view.seats.length; i < view.settings.seats; i++) seats.appendChild(seatRow(null, view.settings.bots ? t('free_seat_bot') : t('free_seat')));
  const free = COLOURS.filter((c) => !view.seats.some((s) => s.colour === c));
  fillColourSelect($('join-colour'), free);
  const full = view.seats.length >= view.settings.seats;
  // A rated room seats logged-in players only.
  const guestInRated = !!view.settings.rated && !ctx.me;
  $('join-full').hidden = !full;
  $('join-rated').hidden = !guestInRated || full;
  $('join-fields').hidden = full || guestInRated;
  $('join-btn').hidden = full || guestInRated;
  show('join');
  (full || guestInRated ? $('join-watch') : $('join-name')).focus();
}

/** Wires the lobby's and the join page's controls. */
export function initLobby() {
  const name = store.get('parchis.name');
  if (name) $('name').value = name;
  fillColourSelect($('colour-pref'));
  $('create-form').addEventListener('submit', createRoom);
  $('rated').addEventListener('change', renderRatedChoice);
  $('play-now').addEventListener('click', playNow);
  $('quick-preset').addEventListener('change', () => { $('play-now-offer').hidden = true; });
  $('play-bot').addEventListener('click', () => quickRoom(true));
  $('play-wait').addEventListener('click', () => quickRoom(false));
  $('code-form').addEventListener('submit', (e) => { e.preventDefault(); enterRoom($('code').value, 'join'); });
  $('code-watch').addEventListener('click', () => enterRoom($('code').value, 'watch'));
  $('refresh-rooms').addEventListener('click', loadRooms);
  $('refresh-live').addEventListener('click', loadLiveGames);
  $('join-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const n = ctx.me ? ctx.me.username : requireName($('join-name'));
    if (!n) return;
    startSession($('join-form').dataset.code, { kind: 'join', name: n, colour: $('join-colour').value || null });
  });
  $('join-watch').addEventListener('click', () => enterRoom($('join-form').dataset.code, 'watch'));
  $('join-back').addEventListener('click', () => { setUrl(null); show('lobby'); });
  renderRatedChoice();
}

registerView('lobby', {
  enter: () => {
    clearInterval(roomsTimer);
    loadLobbyLists();
    roomsTimer = setInterval(loadLobbyLists, 5000);
  },
  leave: () => clearInterval(roomsTimer),
});
registerView('join');
