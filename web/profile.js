// A player's profile (`#/player/<username>`, `GET /api/players/{username}`): ratings by
// pool, the rating over time as a small inline SVG chart (chart.js computes it; no chart
// library), and the recent games with links to their replays.

import { t } from './i18n.js';
import { api } from './net.js';
import { registerView, show } from './ctx.js';
import { $, toast, httpErrorText, presetName } from './ui.js';
import { ratingChart, historyPools } from './chart.js';

const SVG = 'http://www.w3.org/2000/svg';
const CHART = { width: 320, height: 120, pad: 12, left: 36 };
let profile = null; // the profile shown

function svgEl(name, attrs) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

function dateText(ms) {
  try { return new Date(ms).toLocaleDateString(document.documentElement.lang || undefined); } catch (_) { return ''; }
}

/** Draws the chart of `pool` into the profile's chart box. */
function renderChart(pool) {
  const box = $('profile-chart');
  box.replaceChildren();
  const c = ratingChart(profile.history, pool, CHART);
  box.hidden = !c.points.length;
  if (!c.points.length) return;
  const first = c.points[0].display;
  const last = c.points[c.points.length - 1].display;
  const svg = svgEl('svg', { viewBox: `0 0 ${CHART.width} ${CHART.height}`, role: 'img', class: 'rating-chart' });
  svg.dataset.pool = pool;
  svg.dataset.points = String(c.points.length);
  svg.dataset.last = String(last);
  const title = svgEl('title', {});
  title.textContent = t('chart_label', { pool: presetName(pool), a: first, b: last });
  svg.appendChild(title);
  svg.setAttribute('aria-label', title.textContent);
  svg.appendChild(svgEl('line', { x1: CHART.left, y1: CHART.height - CHART.pad, x2: CHART.width - CHART.pad, y2: CHART.height - CHART.pad, class: 'axis' }));
  const hi = svgEl('text', { x: 2, y: CHART.pad + 4, class: 'tick' });
  hi.textContent = String(c.max);
  const lo = svgEl('text', { x: 2, y: CHART.height - CHART.pad + 4, class: 'tick' });
  lo.textContent = String(c.min);
  svg.append(hi, lo, svgEl('path', { d: c.path, class: 'line' }));
  for (const p of c.points) svg.appendChild(svgEl('circle', { cx: p.x, cy: p.y, r: 3, class: 'dot' }));
  box.appendChild(svg);
}

function renderRatings() {
  const ul = $('profile-ratings');
  ul.replaceChildren();
  const pools = Object.entries(profile.ratings || {}).sort((a, b) => b[1].games - a[1].games);
  $('profile-no-ratings').hidden = pools.length > 0;
  for (const [pool, r] of pools) {
    const li = document.createElement('li');
    li.dataset.pool = pool;
    li.dataset.display = String(r.display);
    li.dataset.games = String(r.games);
    li.textContent = t('rating_row', { pool: presetName(pool), r: r.display, n: r.games });
    ul.appendChild(li);
  }
  const sel = $('profile-pool');
  const chartPools = historyPools(profile.history);
  sel.replaceChildren();
  for (const p of chartPools) {
    const o = document.createElement('option');
    o.value = p; o.textContent = presetName(p);
    sel.appendChild(o);
  }
  $('profile-pool-row').hidden = chartPools.length < 2;
  renderChart(chartPools[0]);
}

function renderGames() {
  const ul = $('profile-games');
  ul.replaceChildren();
  $('profile-no-games').hidden = profile.recent_games.length > 0;
  for (const g of profile.recent_games) {
    const li = document.createElement('li');
    li.dataset.game = g.id;
    const span = document.createElement('span');
    span.textContent = t('game_row', { date: dateText(g.created_at_ms), preset: presetName(g.preset), room: g.room })
      + (g.finished_at_ms ? '' : ` · ${t('game_playing')}`);
    li.appendChild(span);
    if (g.finished_at_ms) {
      const a = document.createElement('a');
      a.href = `/?game=${encodeURIComponent(g.id)}`;
      a.className = 'replay-link';
      a.textContent = t('watch_replay');
      li.appendChild(a);
    }
    ul.appendChild(li);
  }
}

function render() {
  $('profile-title').textContent = t('profile_title', { u: profile.username });
  $('profile-since').textContent = t('member_since', { d: dateText(profile.created_at_ms) });
  renderRatings();
  renderGames();
}

/** Opens `username`'s profile (a toast and the lobby when there is no such player). */
export async function openProfile(username) {
  show('profile');
  $('profile-body').hidden = true;
  $('profile-title').textContent = t('profile_title', { u: username });
  try {
    profile = await api('GET', `/api/players/${encodeURIComponent(username)}`);
  } catch (err) {
    toast(httpErrorText(err));
    return;
  }
  render();
  $('profile-body').hidden = false;
  $('profile-title').focus();
}

/** Redraws in the current language. */
export function retranslateProfile() { if (profile && !$('view-profile').hidden) render(); }

/** Wires the chart's pool choice. */
export function initProfile() {
  $('profile-pool').addEventListener('change', (e) => renderChart(e.target.value));
}

registerView('profile');
