// Tournaments in the web client (issue 27; routes in proto/README.md "Tournaments",
// docs/TOURNAMENTS.md): the list and the create form (`#/tournaments`), and the live
// page of one tournament (`#/tournament/<id>`): registration (alone, or with a partner
// who confirms), the organiser's close, the bracket (knockout) or standings (swiss)
// kept live by the SSE stream `GET /api/tournaments/{id}/events`, a watch and replay
// link per match, "my next match" with one tap into the seat (the room opens and sends
// `claim`), "your match is ready" (tournament_alert.js), the referee's controls and
// the stored referee actions. What to show is decided by the pure tournament_model.js.

import { t } from './i18n.js';
import { api } from './net.js';
import { ctx, registerView, show } from './ctx.js';
import { $, toast, httpErrorText, presetName, store } from './ui.js';
import { startSession } from './session.js';
import * as M from './tournament_model.js';
import { announce, clearAnnouncement, renderNotifyButton, askNotifications } from './tournament_alert.js';

let shownId = null; // the tournament shown
let view = null; // its latest view
let source = null; // its EventSource
let tick = null; // the countdown's timer

const ORGANISED = 'parchis.organised';
/** The tournaments this browser created: a fallback for a server whose `GET /api/me`
 * has no `id` yet. */
const organised = () => store.get(ORGANISED) || [];
const meId = () => (ctx.me && ctx.me.id) || null;
/** The logged-in account organises `v` (the view names its organiser by account id). */
const isOrganiser = (v) => M.isOrganiser(v, meId()) || (!meId() && organised().includes(v.id));

const me = () => (ctx.me ? ctx.me.username : null);

// ----- the list and the create form ------------------------------------------------------

/** Opens `#/tournaments`: the list, and the create form for a logged-in organiser. */
export async function openTournaments() {
  stopLive();
  show('tournaments');
  renderCreateForm();
  let data;
  try { data = await api('GET', '/api/tournaments'); } catch (err) { toast(httpErrorText(err)); return; }
  const ul = $('tl-list');
  ul.replaceChildren();
  $('tl-empty').hidden = data.tournaments.length > 0;
  for (const v of data.tournaments) {
    const li = document.createElement('li');
    li.dataset.id = v.id;
    const a = document.createElement('a');
    a.href = `#/tournament/${v.id}`;
    a.className = 'button-link';
    a.textContent = v.name;
    const info = document.createElement('span');
    info.className = 'muted';
    info.textContent = ` ${infoText(v)}`;
    li.append(a, info);
    ul.appendChild(li);
  }
}

function infoText(v) {
  return [presetName(v.preset), t(`tour_${v.format}`), t(`tour_status_${v.status}`), t('tour_n_entrants', { n: v.entrants.length })].join(' · ');
}

function renderCreateForm() {
  $('tc-form').hidden = !ctx.me;
  $('tc-login').hidden = !!ctx.me;
  $('tc-rounds-box').hidden = $('tc-format').value !== 'swiss';
  $('tc-bots-box').hidden = !$('tc-bots').checked;
}

async function createTournament(e) {
  e.preventDefault();
  const r = M.createBody({
    name: $('tc-name').value,
    preset: $('tc-preset').value,
    format: $('tc-format').value,
    rounds: $('tc-rounds').value,
    deadlineMinutes: $('tc-deadline').value,
    turnClock: $('tc-clock').value,
    spectatorDelay: $('tc-delay').value,
    botFill: $('tc-bots').checked,
    botUpTo: $('tc-bots-up').value,
    botThinkMs: $('tc-bots-think').value,
  }, Date.now());
  if (r.error) { toast(t(r.error)); return; }
  try {
    const { id } = await api('POST', '/api/tournaments', r.body);
    store.set(ORGANISED, [...organised(), id].slice(-50));
    location.hash = `#/tournament/${id}`;
  } catch (err) { toast(httpErrorText(err)); }
}

// ----- the live page ---------------------------------------------------------------------

/** Opens `#/tournament/<id>`: reads the view, then follows its SSE stream. */
export async function openTournament(id) {
  stopLive();
  shownId = id;
  view = null;
  show('tournament');
  $('tp-name').textContent = '';
  try { setView(await api('GET', `/api/tournaments/${encodeURIComponent(id)}`)); } catch (err) {
    toast(httpErrorText(err));
    return;
  }
  if (shownId !== id) return;
  source = new EventSource(`/api/tournaments/${encodeURIComponent(id)}/events`);
  source.addEventListener('tournament', (ev) => {
    if (shownId !== id) return;
    try { setView(JSON.parse(ev.data)); } catch (_) { /* a malformed event: the next one fixes it */ }
  });
  tick = setInterval(renderMine, 1000);
}

function stopLive() {
  if (source) { source.close(); source = null; }
  clearInterval(tick);
  tick = null;
  clearAnnouncement();
}

function setView(v) {
  view = v;
  renderTournament();
}

/** Redraws the page from `view`. */
export function renderTournament() {
  if (!view) return;
  const v = view;
  $('view-tournament').dataset.status = v.status;
  $('view-tournament').dataset.round = String(v.current_round || 0);
  $('tp-name').textContent = v.name;
  $('tp-info').textContent = infoText(v);
  $('tp-status').textContent = statusText(v);
  renderRegistration(v);
  renderEntrants(v);
  renderBracket(v);
  renderStandings(v);
  renderReferee(v);
  renderActions(v);
  renderMine();
}

function statusText(v) {
  if (v.cancelled) return t('tour_cancelled', { why: v.cancelled });
  if (v.status === 'registering') return t('tour_registering_until', { when: new Date(v.settings.registration_deadline_ms).toLocaleString() });
  if (v.status === 'finished') return v.champion == null ? t('tour_finished') : t('tour_champion', { name: M.entrantName(v, v.champion) });
  return t('tour_round_of', { r: v.current_round, n: v.rounds });
}

function renderRegistration(v) {
  const action = M.registrationAction(v, me());
  $('tp-reg').hidden = v.status !== 'registering';
  const pairs = v.preset === 'pairs';
  $('tp-reg-form').hidden = action !== 'register';
  $('tp-partner-box').hidden = !pairs;
  $('tp-register').hidden = action !== 'register';
  $('tp-confirm').hidden = action !== 'confirm';
  $('tp-unregister').hidden = !['registered', 'waiting_partner', 'confirm'].includes(action);
  $('tp-login').hidden = action !== 'login';
  $('tp-close').hidden = v.status !== 'registering' || !isOrganiser(v);
  $('tp-reg').dataset.action = action;
  const mine = M.myEntrant(v, me());
  const texts = {
    login: 'tour_reg_login', register: pairs ? 'tour_reg_pairs' : 'tour_reg_alone', confirm: 'tour_reg_confirm',
    waiting_partner: 'tour_reg_waiting', registered: 'tour_reg_done', closed: 'tour_reg_closed',
  };
  $('tp-reg-text').textContent = t(texts[action], { team: mine ? mine.name : '' });
}

function renderEntrants(v) {
  const ul = $('tp-entrants');
  ul.replaceChildren();
  for (const e of v.entrants) {
    const li = document.createElement('li');
    li.dataset.entrant = String(e.id);
    li.dataset.status = e.status;
    const seed = e.seed == null ? '' : `#${e.seed} `;
    const who = e.players.map((p) => p.name).join(' & ');
    li.textContent = `${seed}${e.name}${who && who !== e.name ? ` (${who})` : ''} · ${t(`tour_entrant_${e.status}`)}`;
    if (M.hasPlayer(e, me())) li.classList.add('mine');
    ul.appendChild(li);
  }
}

function matchItem(v, m) {
  const li = document.createElement('li');
  li.className = 'match';
  li.dataset.match = String(m.id);
  li.dataset.status = m.status;
  if (m.winner != null) li.dataset.winner = String(m.winner);
  const names = document.createElement('span');
  names.className = 'match-names';
  names.textContent = m.entrants.map((id) => {
    const n = M.entrantName(v, id);
    return m.winner === id ? `${n} ✓` : n;
  }).join(` ${t('tour_vs')} `);
  const st = document.createElement('span');
  st.className = 'muted';
  st.textContent = ` · ${t(`tour_match_${m.status}`)}${m.paused ? ` · ${t('tour_paused')}` : ''}`;
  li.append(names, st);
  const links = M.matchLinks(m);
  // The accessible name starts with the visible text and says which match.
  const which = t('tour_match_n', { n: m.id });
  if (links.watch) li.appendChild(link(links.watch, t('tour_watch'), `${t('tour_watch')} (${which})`));
  if (links.replay) li.appendChild(link(links.replay, t('replay'), `${t('replay')} (${which})`));
  if (M.myEntrant(v, me()) && m.entrants.includes(M.myEntrant(v, me()).id)) li.classList.add('mine');
  return li;
}

function link(href, text, label) {
  const a = document.createElement('a');
  a.href = href;
  a.className = 'button-link';
  a.textContent = text;
  a.setAttribute('aria-label', label);
  return a;
}

function renderBracket(v) {
  const box = $('tp-bracket');
  box.replaceChildren();
  const rounds = M.bracket(v);
  $('tp-bracket-card').hidden = rounds.length === 0;
  $('tp-bracket-title').textContent = t(v.format === 'swiss' ? 'tour_pairings' : 'tour_bracket');
  for (const r of rounds) {
    const col = document.createElement('section');
    col.className = 'bracket-round';
    col.dataset.round = String(r.round);
    const h = document.createElement('h3');
    h.textContent = t('tour_round', { r: r.round });
    const ul = document.createElement('ul');
    ul.className = 'room-list';
    for (const m of r.matches) ul.appendChild(matchItem(v, m));
    for (const name of r.byes) {
      const li = document.createElement('li');
      li.className = 'muted bye';
      li.textContent = t('tour_bye', { name });
      ul.appendChild(li);
    }
    col.append(h, ul);
    box.appendChild(col);
  }
}

function renderStandings(v) {
  const rows = M.standingsRows(v);
  $('tp-standings-card').hidden = v.format !== 'swiss' || rows.length === 0;
  const body = $('tp-standings');
  body.replaceChildren();
  for (const r of rows) {
    const tr = document.createElement('tr');
    tr.dataset.entrant = String(r.entrant);
    for (const x of [r.rank, r.name, r.points, r.buchholz]) {
      const td = document.createElement('td');
      td.textContent = String(x);
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

function renderReferee(v) {
  const box = $('tp-referee');
  box.hidden = !ctx.me || v.status !== 'running' || (meId() !== null && !M.mayReferee(v, meId()));
  if (box.hidden) return;
  if (isOrganiser(v) && !box.dataset.opened) { box.open = true; box.dataset.opened = '1'; }
  const ms = $('tp-ref-match');
  const keep = ms.value;
  ms.replaceChildren();
  for (const m of v.matches.filter((x) => x.round === v.current_round || !M.DECIDED.has(x.status))) {
    const o = document.createElement('option');
    o.value = String(m.id);
    o.textContent = `${t('tour_round', { r: m.round })}: ${m.entrants.map((id) => M.entrantName(v, id)).join(` ${t('tour_vs')} `)}`;
    ms.appendChild(o);
  }
  if ([...ms.options].some((o) => o.value === keep)) ms.value = keep;
  renderRefereeEntrants();
}

function renderRefereeEntrants() {
  if (!view) return;
  const m = view.matches.find((x) => String(x.id) === $('tp-ref-match').value);
  const es = $('tp-ref-entrant');
  const keep = es.value;
  es.replaceChildren();
  for (const id of m ? m.entrants : []) {
    const o = document.createElement('option');
    o.value = String(id);
    o.textContent = M.entrantName(view, id);
    es.appendChild(o);
  }
  if ([...es.options].some((o) => o.value === keep)) es.value = keep;
}

async function referee(action) {
  if (!view) return;
  const match = $('tp-ref-match').value;
  if (!match) return;
  const reason = $('tp-ref-reason').value.trim();
  const body = { action };
  if (['award', 'disqualify', 'replay'].includes(action)) {
    if (!reason) { toast(t('tour_err_reason')); $('tp-ref-reason').focus(); return; }
    body.reason = reason;
  }
  if (action === 'award') body.winner = Number($('tp-ref-entrant').value);
  if (action === 'disqualify') body.entrant = Number($('tp-ref-entrant').value);
  try {
    setView(await api('POST', `/api/tournaments/${view.id}/matches/${match}/referee`, body));
    $('tp-ref-reason').value = '';
    toast(t('tour_ref_done'));
  } catch (err) { toast(httpErrorText(err)); }
}

function renderActions(v) {
  const log = M.refereeLog(v);
  $('tp-actions-empty').hidden = log.length > 0;
  const ul = $('tp-actions');
  ul.replaceChildren();
  for (const a of log) {
    const li = document.createElement('li');
    li.dataset.action = a.action;
    const parts = [new Date(a.at).toLocaleTimeString(), t(`tour_ref_${a.action}_done`)];
    if (a.match_id != null) parts.push(t('tour_match_n', { n: a.match_id }));
    if (a.entrantName) parts.push(a.entrantName);
    if (a.reason) parts.push(`«${a.reason}»`);
    li.textContent = parts.join(' · ');
    ul.appendChild(li);
  }
}

/** "My next match": what it is, the seat's button and the ready announcement. */
function renderMine() {
  if (!view) return;
  const next = M.myNextMatch(view, me());
  const e = M.myEntrant(view, me());
  const standing = e ? M.myStanding(view, e.id) : null;
  const box = $('tp-mine');
  box.hidden = !e || view.status === 'registering';
  box.dataset.action = next ? next.action : (standing || '');
  if (box.hidden) { clearAnnouncement(); return; }
  const btn = $('tp-take-seat');
  btn.hidden = !next || next.action === 'wait';
  if (next) {
    const rivals = next.match.entrants.filter((id) => id !== e.id).map((id) => M.entrantName(view, id)).join(', ');
    const left = M.secondsLeft(next.match.no_show_deadline_ms, Date.now());
    const key = next.action === 'claim' ? 'tour_mine_open' : next.action === 'resume' ? 'tour_mine_playing' : 'tour_mine_wait';
    $('tp-mine-text').textContent = t(key, { r: next.match.round, rivals, left: left == null ? '' : M.clockText(left) });
    btn.textContent = t(next.action === 'resume' ? 'tour_back_to_seat' : 'tour_take_seat');
  } else {
    $('tp-mine-text').textContent = t(`tour_standing_${standing}`);
  }
  renderNotifyButton(!!next);
  announce(view, me());
}

function takeSeat() {
  const next = view && M.myNextMatch(view, me());
  if (!next || !next.match.room) return;
  clearAnnouncement();
  stopLive();
  shownId = null;
  startSession(next.match.room, next.action === 'resume' ? { kind: 'resume_account' } : { kind: 'claim', ticket: null });
}

async function registration(kind) {
  if (!view) return;
  const id = view.id;
  const mine = M.myEntrant(view, me());
  try {
    if (kind === 'register') {
      const body = {};
      const partner = $('tp-partner').value.trim();
      const team = $('tp-team').value.trim();
      if (view.preset === 'pairs') {
        if (!partner) { toast(t('tour_err_partner')); $('tp-partner').focus(); return; }
        body.partner = partner;
      }
      if (team) body.team_name = team;
      setView(await api('POST', `/api/tournaments/${id}/entries`, body));
    } else if (kind === 'confirm' && mine) {
      setView(await api('POST', `/api/tournaments/${id}/entries/${mine.id}/confirm`));
    } else if (kind === 'unregister' && mine) {
      setView(await api('DELETE', `/api/tournaments/${id}/entries/${mine.id}`));
    } else if (kind === 'close') {
      setView(await api('POST', `/api/tournaments/${id}/close`));
    }
  } catch (err) { toast(httpErrorText(err)); }
}

/** Redraws in the current language (the header's language switch). */
export function retranslateTournament() {
  renderCreateForm();
  renderTournament();
}

/** Wires the list's form and the page's buttons. */
export function initTournaments() {
  $('tc-form').addEventListener('submit', createTournament);
  $('tc-format').addEventListener('change', renderCreateForm);
  $('tc-bots').addEventListener('change', renderCreateForm);
  $('tp-register').addEventListener('click', () => registration('register'));
  $('tp-confirm').addEventListener('click', () => registration('confirm'));
  $('tp-unregister').addEventListener('click', () => registration('unregister'));
  $('tp-close').addEventListener('click', () => registration('close'));
  $('tp-take-seat').addEventListener('click', takeSeat);
  $('tp-notify').addEventListener('click', askNotifications);
  $('tp-ref-match').addEventListener('change', renderRefereeEntrants);
  for (const b of document.querySelectorAll('#tp-referee [data-ref]')) b.addEventListener('click', () => referee(b.dataset.ref));
}

/** The view shown (for the test hook). */
export function tournamentView() { return view; }

registerView('tournaments');
registerView('tournament', { leave: () => { if (source) stopLive(); shownId = null; } });
