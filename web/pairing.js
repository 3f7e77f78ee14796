// Quick pairing in the lobby (issue 26): choose the rules, 2 or 4 players and rated or
// casual, wait in the pool (the number waiting per pool is listed), and once the server
// has seated you, open the room and `claim` the seat. The decisions are in the pure
// reducer of pairing_state.js; this module draws and runs its effects (HTTP, polls).
// The card stays hidden on a server without quick pairing (`GET /api/pairing` 404).

import { t } from './i18n.js';
import { api } from './net.js';
import { ctx, actions, currentView } from './ctx.js';
import { $, toast, errorText, presetName, store } from './ui.js';
import { startSession } from './session.js';
import { reducePairing, initialPairing, waitingSecs } from './pairing_state.js';

let ps = initialPairing();
let pollTimer = null;

function dispatchPairing(msg) {
  ps = reducePairing(ps, msg);
  for (const f of ps.fx) runEffect(f);
  renderPairing();
}

const failed = (err) => dispatchPairing({ type: 'failed', status: err.status, code: err.code, message: err.message });

function runEffect(f) {
  switch (f.type) {
    case 'post':
      api('POST', '/api/pairing', f.body).then((r) => { dispatchPairing({ type: 'queued', ...r }); loadPools(); }, failed);
      break;
    case 'poll':
      clearTimeout(pollTimer);
      pollTimer = setTimeout(() => {
        if (ps.ticket !== f.ticket || ps.phase !== 'waiting') return;
        if (currentView() !== 'lobby') { dispatchPairing({ type: 'cancel' }); return; }
        api('GET', `/api/pairing/${encodeURIComponent(f.ticket)}`)
          .then((r) => dispatchPairing({ ...r, type: 'status', of: f.ticket }), failed);
      }, f.delay_ms);
      break;
    case 'delete':
      clearTimeout(pollTimer);
      api('DELETE', `/api/pairing/${encodeURIComponent(f.ticket)}`).then(loadPools, () => { /* it expires anyway */ });
      break;
    case 'claim':
      clearTimeout(pollTimer);
      // A guest names its ticket; an account is known by its session cookie.
      startSession(f.room, { kind: 'claim', ticket: ctx.me ? null : f.ticket });
      dispatchPairing({ type: 'claimed' });
      break;
    case 'toast':
      if (f.key) toast(t(f.key));
      else toast(f.code === 'http' ? t('err_http') : errorText(f.code, f.message));
      break;
    default: break;
  }
}

// The room's socket closed 4006 (pairing_expired, session.js): the app is back in the
// lobby; poll the claimed ticket to learn whether this player waits again. The room view
// is hidden (with whatever had the focus there): the card's button takes the focus.
actions.pairingLobbyClosed = (room) => {
  dispatchPairing({ type: 'lobby_closed', room });
  if (currentView() === 'lobby') $(ps.phase === 'idle' ? 'pairing-find' : 'pairing-cancel').focus();
};

/** Asks the server for the pools and how many wait in each. */
export async function loadPools() {
  try {
    const data = await api('GET', '/api/pairing');
    dispatchPairing({ type: 'pools', pools: data.pools });
  } catch (err) {
    if (err.status === 404 || err.status === 405) dispatchPairing({ type: 'pools_unavailable' });
  }
}

/** Draws the card from the pairing state (and whether a rated search is possible). */
export function renderPairing() {
  const card = $('pairing-card');
  card.hidden = ps.available !== true;
  if (card.hidden) return;
  const busy = ps.phase !== 'idle';
  const pairsOnly = $('pairing-preset').value === 'pairs';
  if (pairsOnly) $('pairing-seats').value = '4';
  $('pairing-seats').disabled = busy || pairsOnly;
  $('pairing-preset').disabled = busy;
  $('pairing-rated').disabled = busy || !ctx.me;
  if (!ctx.me) $('pairing-rated').checked = false;
  $('pairing-login').hidden = !!ctx.me;
  // The focus follows the card's button when one replaces the other (searching, stopped).
  const focused = document.activeElement;
  $('pairing-find').hidden = busy;
  $('pairing-wait').hidden = !busy;
  if (focused === $('pairing-find') && busy) $('pairing-cancel').focus();
  else if (focused === $('pairing-cancel') && !busy) $('pairing-find').focus();
  card.dataset.phase = ps.phase;
  const st = $('pairing-status');
  if (ps.phase === 'paired') st.textContent = t('pairing_paired');
  else if (busy) {
    const w = ps.window == null ? t('pairing_window_any') : t('pairing_window', { w: Math.round(ps.window * 10) / 10 });
    st.textContent = `${t('pairing_waiting', { s: waitingSecs(ps) })} · ${w}`;
  } else st.textContent = '';
  const ul = $('pairing-pools');
  ul.replaceChildren();
  const pools = ps.pools.filter((p) => p.waiting > 0);
  if (!pools.length) {
    const li = document.createElement('li');
    li.className = 'muted';
    li.textContent = t('pairing_nobody');
    ul.appendChild(li);
  }
  for (const p of pools) {
    const li = document.createElement('li');
    li.dataset.preset = p.preset;
    li.dataset.waiting = String(p.waiting);
    li.textContent = t('pairing_pool_row', { preset: presetName(p.preset), seats: p.seats, kind: t(p.rated ? 'rated_tag' : 'casual_tag'), n: p.waiting });
    ul.appendChild(li);
  }
}

function find() {
  const name = ctx.me ? null : ($('name').value || '').trim();
  if (!ctx.me) {
    if (!name || name.length > 24) { toast(t('err_name')); $('name').focus(); return; }
    store.set('parchis.name', name);
  }
  dispatchPairing({
    type: 'request',
    preset: $('pairing-preset').value,
    seats: Number($('pairing-seats').value),
    rated: !!ctx.me && $('pairing-rated').checked,
    name,
  });
}

/** Wires the card; the pools are refreshed every 5 s while the lobby is shown. */
export function initPairing() {
  $('pairing-find').addEventListener('click', find);
  $('pairing-cancel').addEventListener('click', () => dispatchPairing({ type: 'cancel' }));
  $('pairing-preset').addEventListener('change', renderPairing);
  loadPools();
  // A server without quick pairing (404 once) is not asked again.
  setInterval(() => { if (currentView() === 'lobby' && ps.available !== false) loadPools(); }, 5000);
}

/** The pairing state (for the test hook). */
export function pairingState() { return ps; }
