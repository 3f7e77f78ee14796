// The room session: one WebSocket per room (net.js `Connection`), what is sent on each
// (re)connection (`resume` with a stored seat, `join`, `claim` after quick pairing, or
// `watch`), commands, the stored seat tokens, leaving, and the reducer's effects that
// touch the connection (send, resync, reconnect, stop).

import { t } from './i18n.js';
import { api, Connection } from './net.js';
import { newClientSeed } from './fairdice.js';
import { ctx, actions, dispatch, onEffect, show } from './ctx.js';
import { $, store, sessionKey, toast, errorText, setUrl, roomUrl } from './ui.js';
import { noteFair } from './fairline.js';

/**
 * Opens room `code` with `intent` (`{kind:'join', name, colour}`, `{kind:'watch'}`,
 * `{kind:'resume'}` (a stored seat), `{kind:'resume_account'}` (the logged-in account's
 * seat, taken on another device) or `{kind:'claim', ticket}` (quick pairing)), `saved` a stored seat and `view` the
 * room view when already fetched.
 */
export function startSession(code, intent, saved = null, view = null) {
  if (ctx.conn) ctx.conn.close();
  if (actions.closeReplay) actions.closeReplay();
  ctx.resultShownFor = null;
  ctx.fair = { info: view && view.dice ? view.dice : null, clientSeed: saved && saved.clientSeed ? saved.clientSeed : null };
  if (intent.kind === 'join' || intent.kind === 'claim') ctx.fair.clientSeed = newClientSeed();
  byAccount = intent.kind === 'resume_account';
  dispatch({ type: 'local:session', code, intent, saved, view });
  setUrl(roomUrl(code));
  $('result').hidden = true;
  // Handlers ignore a connection the app has let go of (after leaving, its last frames).
  const c = new Connection({
    onOpen: () => { if (ctx.conn === c) sendEntry(); },
    onMessage: (m) => { if (ctx.conn === c) { noteFair(m); dispatch({ ...m, received_ms: Date.now() }); } },
    onState: (st) => {
      if (ctx.conn !== c && st !== 'closed') return;
      const el = $('conn-status');
      el.dataset.state = st;
      el.textContent = st === 'open' ? t('connected') : st === 'closed' ? '' : t(st === 'connecting' ? 'connecting' : 'reconnecting');
      el.title = st === 'reconnecting' ? t('reconnecting_long') : '';
    },
    onClose: (closeCode) => {
      if (closeCode === 4000) { toast(t('replaced')); return false; }
      if (closeCode === 4006) {
        // A quick pairing's lobby closed (not every seat claimed in time): back to the
        // lobby, where pairing learns whether this player waits again.
        if (ctx.conn === c) { ctx.conn = null; dispatch({ type: 'local:reset' }); setUrl(null); show('lobby'); }
        if (actions.pairingLobbyClosed) actions.pairingLobbyClosed(code);
        return false;
      }
      return true;
    },
  });
  ctx.conn = c;
  c.start();
}
actions.startSession = startSession;

// The seat was resumed by the account (no token of its own, unless the welcome gave
// one): reconnections resume it the same way.
let byAccount = false;

function track(req, kind) { if (req !== null) dispatch({ type: 'local:sent', req, kind }); return req; }

function sendEntry() {
  const { S, conn } = ctx;
  if (S.token) {
    track(conn.send({ type: 'resume', room: S.code, token: S.token, last_seq: S.seq }), 'resume');
  } else if (S.intent && S.intent.kind === 'join') {
    const msg = { type: 'join', room: S.code, name: S.intent.name };
    if (S.intent.colour) msg.colour = S.intent.colour;
    if (ctx.fair.clientSeed) msg.client_seed = ctx.fair.clientSeed;
    track(conn.send(msg), 'join');
  } else if ((S.intent && S.intent.kind === 'resume_account') || (byAccount && S.role === 'player')) {
    // The account's seat, from another device: the session cookie names the account.
    track(conn.send({ type: 'resume', room: S.code, last_seq: S.seq }), 'resume');
  } else if (S.intent && S.intent.kind === 'claim') {
    // Quick pairing: the seat reserved for us; a guest names its ticket, an account is
    // known by its session cookie.
    const msg = { type: 'claim', room: S.code };
    if (S.intent.ticket) msg.ticket = S.intent.ticket;
    if (ctx.fair.clientSeed) msg.client_seed = ctx.fair.clientSeed;
    track(conn.send(msg), 'claim');
  } else {
    track(conn.send({ type: 'watch', room: S.code }), 'watch');
  }
}

/** Sends a room command (`type` with `extra` fields) at the room's current seq. */
export function command(type, extra = {}) {
  if (!ctx.conn) return;
  track(ctx.conn.send({ type, room: ctx.S.code, seq: ctx.S.seq, ...extra }), type);
}

function saveSession() {
  const { S } = ctx;
  if (S.token && S.code) store.set(sessionKey(S.code), { token: S.token, colour: S.colour, clientSeed: ctx.fair.clientSeed });
}

function inGame() { const { S } = ctx; return S.role === 'player' && S.room && S.room.status === 'playing' && !S.outcome; }

/** Leaving mid-game asks first, in a dialog that says what leaving does. */
export function leaveRoom() {
  const { S } = ctx;
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

/** Leaves the room for good (the seat is given up) and goes back to the lobby. */
export function doLeave() {
  if (ctx.conn) {
    command('leave');
    const c = ctx.conn;
    setTimeout(() => c.close(), 300);
    ctx.conn = null;
  }
  if (ctx.S.code) store.del(sessionKey(ctx.S.code));
  dispatch({ type: 'local:reset' });
  setUrl(null);
  $('result').hidden = true;
  $('conn-status').textContent = '';
  show('lobby');
}

/** Closes the connection without leaving the seat and goes back to the lobby. */
export function closeSession() {
  if (ctx.conn) { ctx.conn.close(); ctx.conn = null; }
  dispatch({ type: 'local:reset' });
}

function stopWith(f) {
  const code = ctx.S.code;
  if (ctx.conn) { ctx.conn.close(); ctx.conn = null; }
  toast(errorText(f.code, f.message));
  if (f.code === 'colour_taken' || f.code === 'room_full') { actions.enterRoom(code, null); return; }
  if (f.code === 'game_started' && f.kind === 'join') { actions.enterRoom(code, 'watch'); return; }
  dispatch({ type: 'local:reset' });
  setUrl(null);
  show('lobby');
}

async function resync() {
  try {
    const view = await api('GET', `/api/rooms/${encodeURIComponent(ctx.S.code)}`);
    dispatch({ type: 'welcome', req: null, role: ctx.S.role, colour: ctx.S.colour, seq: view.seq, snapshot: view });
  } catch (_) { /* the next reconnect will fix it */ }
}

onEffect('save_session', saveSession);
onEffect('forget_session', () => { if (ctx.S.code) store.del(sessionKey(ctx.S.code)); });
onEffect('send', (f) => { if (ctx.conn) dispatch({ type: 'local:sent', req: ctx.conn.send(f.msg), kind: f.kind }); });
onEffect('toast', (f) => toast(errorText(f.code, f.message)));
onEffect('stop', stopWith);
onEffect('resync', resync);
onEffect('reconnect', () => { if (ctx.conn) ctx.conn.reconnectNow(); });
