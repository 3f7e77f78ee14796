// The leaderboard per pool (`#/leaderboard/<pool>`, `GET /api/leaderboard`): players
// with at least 5 rated games, best first by the conservative rating (μ − 3σ), each
// linked to their profile.

import { t } from './i18n.js';
import { api } from './net.js';
import { registerView, show } from './ctx.js';
import { $, toast, httpErrorText } from './ui.js';

let shown = null; // the pool shown

/** Opens the leaderboard of `pool` (a rule set name; default `online`). */
export async function openLeaderboard(pool) {
  const p = pool || 'online';
  shown = p;
  show('leaderboard');
  const sel = $('lb-pool');
  if ([...sel.options].some((o) => o.value === p)) sel.value = p;
  const body = $('lb-rows');
  let data;
  try { data = await api('GET', `/api/leaderboard?preset=${encodeURIComponent(p)}&limit=50`); } catch (err) {
    toast(httpErrorText(err));
    return;
  }
  if (shown !== p) return; // another pool was chosen meanwhile
  body.replaceChildren();
  $('lb-table').dataset.pool = data.pool;
  $('lb-empty').hidden = data.players.length > 0;
  $('lb-table').hidden = data.players.length === 0;
  for (const e of data.players) {
    const tr = document.createElement('tr');
    tr.dataset.username = e.username;
    tr.dataset.display = String(e.display);
    const rank = document.createElement('td');
    rank.textContent = String(e.rank);
    const who = document.createElement('td');
    const a = document.createElement('a');
    a.href = `#/player/${encodeURIComponent(e.username)}`;
    a.textContent = e.username;
    who.appendChild(a);
    const r = document.createElement('td');
    r.textContent = String(e.display);
    const g = document.createElement('td');
    g.textContent = String(e.games);
    tr.append(rank, who, r, g);
    body.appendChild(tr);
  }
}

/** Wires the pool choice. */
export function initLeaderboard() {
  $('lb-pool').addEventListener('change', (e) => { location.hash = `#/leaderboard/${encodeURIComponent(e.target.value)}`; });
}

registerView('leaderboard');
