// The result overlay at the end of a game: who won, the places, the dice checked, and
// the way on (rematch, replay, the board, the lobby, back to the tournament of a
// tournament game). Rated games' new ratings are on the players' profiles (profile.js).

import { t, colourName } from './i18n.js';
import { ctx, actions, dispatch, onEffect, show } from './ctx.js';
import { $, displayName, nameOf, seatOf, setUrl } from './ui.js';
import { command, closeSession } from './session.js';
import { checkDice } from './fairline.js';

/** Shows (once per game) or hides the result overlay from the state. */
export function renderResult() {
  const { S } = ctx;
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
  $('result-profile').hidden = !(S.room.settings.rated && ctx.me);
  $('result-tournament').hidden = !ctx.tournamentOfRoom.has(S.code);
  if (ctx.resultShownFor === S.gameId) return;
  ctx.resultShownFor = S.gameId;
  checkDice(S.gameId, $('result-dice'));
  el.hidden = false;
  $('result-lobby').focus();
}

/** Wires the result overlay's buttons. */
export function initResult() {
  $('result-close').addEventListener('click', () => { $('result').hidden = true; });
  $('result-rematch').addEventListener('click', () => command('rematch'));
  $('result-replay').addEventListener('click', () => { if (ctx.S.gameId) actions.openReplay(ctx.S.gameId); });
  $('result-profile').addEventListener('click', () => {
    if (!ctx.me) return;
    closeSession();
    $('result').hidden = true;
    location.hash = `#/player/${encodeURIComponent(ctx.me.username)}`;
  });
  $('result-tournament').addEventListener('click', () => {
    const id = ctx.tournamentOfRoom.get(ctx.S.code);
    if (!id) return;
    closeSession();
    $('result').hidden = true;
    location.hash = `#/tournament/${id}`;
  });
  $('result-lobby').addEventListener('click', () => {
    closeSession();
    setUrl(null);
    $('result').hidden = true;
    show('lobby');
  });
}

onEffect('rematch', () => { $('result').hidden = true; ctx.resultShownFor = null; });
