// Parchís web client: the entry module. Plain ES modules, no build step.
// Protocol: proto/README.md (HTTP /api/…, WebSocket /ws, JSON text frames).
//
// One module per view, and this file only wires them: it loads the views (each
// registers itself with ctx.js), decides which to show from the address (routing),
// draws the room's view when the state changes (`ctx.render`), and keeps the header's
// settings (language, sound, preferences). The state changes in one place, the pure
// reducer of state.js, through ctx.js's dispatch(); the views draw it and know no
// rules (the server's previews and positions say it all).
//
// Views: lobby.js (lobby, join), room.js, game.js, result.js, replay.js, account.js
// (sign up, log in, recover, account), profile.js, leaderboard.js, pairing.js (quick
// pairing in the lobby). A new page registers with `registerView` in ctx.js and a route
// in ROUTES below.

import { t, getLang, setLang, translateDom } from './i18n.js';
import * as sound from './sound.js';
import { savePrefs, applyPrefs } from './prefs.js';
import { closeDialog, closeOnEscape, openDialog } from './dialogs.js';
import { loadInviteBase } from './invite.js';
import { ctx, dispatch, scheduleRender, show, currentView } from './ctx.js';
import { $, setUrl, fillColourSelect } from './ui.js';
import { leaveRoom, doLeave, closeSession } from './session.js';
import { initLobby, loadLobbyLists, enterRoom } from './lobby.js';
import { initRoom, renderRoom, renderInvite } from './room.js';
import { initGame, renderGame, resetGameDrawing } from './game.js';
import { initResult } from './result.js';
import { initReplay, openReplay, closeReplay, renderReplay, resetReplayDrawing } from './replay.js';
import { initAccount, openAccountPage, renderAccountButton, onAccountChange } from './account.js';
import { initProfile, openProfile, retranslateProfile } from './profile.js';
import { initLeaderboard, openLeaderboard } from './leaderboard.js';
import { initPairing, renderPairing, pairingState } from './pairing.js';
import { renderRatedChoice } from './lobby.js';
import { initTournaments, openTournaments, openTournament, retranslateTournament, tournamentView } from './tournament.js';

// ----- drawing the room ------------------------------------------------------------------

ctx.render = () => {
  if (ctx.replay) { renderReplay(); return; }
  if (!ctx.S.room) return;
  if (ctx.S.room.status === 'lobby') {
    renderRoom();
    show('room');
  } else {
    renderGame();
    show('game');
  }
};

// ----- header: language, sound, preferences ---------------------------------------------

function retranslate() {
  translateDom();
  fillColourSelect($('colour-pref'));
  renderMute();
  resetGameDrawing();
  resetReplayDrawing();
  renderAccountButton();
  renderPairing();
  retranslateProfile();
  retranslateTournament();
  if (ctx.S.room || ctx.replay) ctx.render(); else loadLobbyLists();
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
  const { prefs } = ctx;
  $('pref-shapes').checked = prefs.shapes;
  $('pref-contrast').checked = prefs.contrast;
  $('pref-emotes').checked = prefs.emotesMuted;
  $('emote-mute').checked = prefs.emotesMuted;
}

function setPrefs(change) {
  ctx.prefs = { ...ctx.prefs, ...change };
  savePrefs(ctx.prefs);
  renderPrefs();
  if (ctx.S.emotesMuted !== ctx.prefs.emotesMuted) dispatch({ type: 'local:mute_emotes', muted: ctx.prefs.emotesMuted });
  else scheduleRender();
}

function initHeader() {
  $('lang-btn').addEventListener('click', () => { setLang(getLang() === 'es' ? 'en' : 'es'); retranslate(); });
  $('mute-btn').addEventListener('click', () => { sound.setMuted(!sound.isMuted()); renderMute(); });
  $('settings-btn').addEventListener('click', () => openDialog($('settings-dialog'), $('pref-shapes')));
  $('settings-close').addEventListener('click', () => closeDialog($('settings-dialog')));
  $('fair-close').addEventListener('click', () => closeDialog($('fair-dialog')));
  $('pref-shapes').addEventListener('change', (e) => setPrefs({ shapes: e.target.checked }));
  $('pref-contrast').addEventListener('change', (e) => setPrefs({ contrast: e.target.checked }));
  $('pref-emotes').addEventListener('change', (e) => setPrefs({ emotesMuted: e.target.checked }));
  $('emote-mute').addEventListener('change', (e) => setPrefs({ emotesMuted: e.target.checked }));
  $('leave-cancel').addEventListener('click', () => closeDialog($('leave-dialog')));
  $('leave-confirm').addEventListener('click', () => { $('leave-dialog').close(); doLeave(); });
  closeOnEscape((el) => { if (el.id === 'result') ctx.resultShownFor = ctx.S.gameId; });
  $('home-link').addEventListener('click', (e) => {
    e.preventDefault();
    if (ctx.replay) { closeReplay(); setUrl(null); show('lobby'); return; }
    if (ctx.S.room) leaveRoom(); else { setUrl(null); show('lobby'); }
  });
}

// ----- routing ---------------------------------------------------------------------------

/** The pages reached by a `#/…` address: `#/<name>/<arg>` → `open(arg)`. A new page (a
 * tournament page…) adds its entry here and registers its view in ctx.js. */
const ROUTES = {
  login: () => openAccountPage('login'),
  signup: () => openAccountPage('signup'),
  recover: () => openAccountPage('recover'),
  account: () => openAccountPage('account'),
  player: (arg) => openProfile(arg),
  leaderboard: (arg) => openLeaderboard(arg),
  tournaments: () => openTournaments(),
  tournament: (arg) => openTournament(arg),
};

/** The `#/…` page of the address, as `[name, arg]`, or null. */
function hashPage() {
  const m = /^#\/([a-z]+)(?:\/(.*))?$/.exec(location.hash);
  if (!m || !ROUTES[m[1]]) return null;
  let arg = m[2] || '';
  try { arg = decodeURIComponent(arg); } catch (_) { /* keep it as typed */ }
  return [m[1], arg];
}

/** Opens what the address names: a `#/…` page, a replay (`/?game=`), a room
 * (`/?room=`, `/r/<code>`), else the lobby. */
function route() {
  const page = hashPage();
  if (page) {
    // A page over a room: the room's connection closes (its seat stays stored, to resume).
    if (ctx.replay) closeReplay();
    if (ctx.S.room) closeSession();
    $('result').hidden = true;
    if (location.pathname !== '/' || location.search) history.replaceState(null, '', `/${location.hash}`);
    ROUTES[page[0]](page[1]);
    return;
  }
  const params = new URLSearchParams(location.search);
  const m = location.pathname.match(/^\/r\/([^/]+)/);
  const code = params.get('room') || (m && decodeURIComponent(m[1]));
  if (params.get('game')) openReplay(params.get('game'));
  else if (code) enterRoom(code, params.get('watch') ? 'watch' : null);
  else show('lobby');
}

function init() {
  document.documentElement.lang = getLang();
  applyPrefs(ctx.prefs);
  renderPrefs();
  ctx.S = { ...ctx.S, emotesMuted: ctx.prefs.emotesMuted };
  loadInviteBase().then(() => { if (ctx.S.room && ctx.S.room.status === 'lobby') renderInvite(); });
  translateDom();
  renderMute();
  initHeader();
  initLobby();
  initRoom();
  initGame();
  initResult();
  initReplay();
  initProfile();
  initLeaderboard();
  initTournaments();
  onAccountChange(() => { renderRatedChoice(); renderPairing(); retranslateTournament(); });
  initPairing();
  window.addEventListener('hashchange', () => { if (hashPage()) route(); });
  // Who is logged in decides what a rated room's join page offers: ask first.
  initAccount().finally(route);
}

// Test hook: only when a test page installed a receiver before the app loaded (the
// browser test does, with an init script); production pages expose nothing.
if (typeof window.__parchisTestHook === 'function') {
  window.__parchisTestHook({
    state: () => ctx.S,
    // Simulates a dropped network: closes the socket as a failure would; it reconnects.
    drop: () => { if (ctx.conn && ctx.conn.ws) ctx.conn.ws.close(4999, 'test drop'); },
    sounds: () => sound.played.slice(),
    animations: () => ctx.animations,
    homeAnimations: () => ctx.homeAnimations,
    diceAnimations: () => ctx.diceAnimations,
    replay: () => ctx.replay && { i: ctx.replay.i, n: ctx.replay.data.steps.length },
    view: () => currentView(),
    me: () => ctx.me,
    pairing: () => pairingState(),
    tournament: () => tournamentView(),
  });
}

init();
