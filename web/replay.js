// The replay viewer of a stored game (`GET /api/games/{id}/replay`): the board at each
// step, a slider, play/pause (autoplay.js), whose turn it is, the dice, the log up to
// the step and the dice checked. Opened from a `/?game=<id>` link, the result overlay,
// a finished room's link or a profile's recent games.

import { t, colourName } from './i18n.js';
import { createBoard, SHAPE_CHAR } from './board.js';
import { api } from './net.js';
import { createAutoplay } from './autoplay.js';
import { ctx, actions, registerView, show } from './ctx.js';
import { $, toast, errorText, setUrl, roomUrl, displayName, presetName, dieEl, boardPieces, renderLog } from './ui.js';
import { checkDice } from './fairline.js';

/** Opens the replay of game `gameId` (a toast and the lobby when it cannot be read). */
export async function openReplay(gameId) {
  let data;
  try { data = await api('GET', `/api/games/${encodeURIComponent(gameId)}/replay`); } catch (err) {
    // The server answered (400: a malformed id, 404: no such game) or could not be reached.
    toast(err.status === 404 ? t('err_unknown_game') : err.status === 400 ? t('err_bad_game_id') : err.status ? errorText(err.code, err.message) : t('err_http'));
    if (!ctx.S.room) { setUrl(null); show('lobby'); }
    return;
  }
  // A player coming from the result screen stays in the room (for a rematch): the
  // replay is drawn over it and "back" returns there.
  $('result').hidden = true;
  ctx.replay = { data, i: data.steps.length - 1, board: null };
  $('replay-slider').max = String(data.steps.length - 1);
  setUrl(`/?game=${encodeURIComponent(gameId)}`);
  show('replay');
  renderReplay();
  checkDice(gameId, $('replay-fair'));
}
actions.openReplay = openReplay;

/** Closes the viewer (autoplay paused, board dropped). */
export function closeReplay() {
  if (!ctx.replay) return;
  autoplay.pause();
  ctx.replay = null;
  $('replay-board').replaceChildren();
}
actions.closeReplay = closeReplay;

/** Moves the replay by `delta` steps; false when it could not move (at an end). */
function replayStep(delta) {
  const { replay } = ctx;
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

/** Draws the replay's current step. */
export function renderReplay() {
  const { replay } = ctx;
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
    shapes: ctx.prefs.shapes,
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

/** Drops the drawn replay board (a language change redraws it). */
export function resetReplayDrawing() {
  if (ctx.replay) { $('replay-board').replaceChildren(); ctx.replay.board = null; }
}

/** Wires the viewer's controls. */
export function initReplay() {
  $('replay-play').addEventListener('click', () => {
    const { replay } = ctx;
    if (replay && !autoplay.playing && replay.i === replay.data.steps.length - 1) { replay.i = 0; renderReplay(); }
    autoplay.toggle();
  });
  $('replay-slider').addEventListener('input', (e) => { if (ctx.replay) { autoplay.pause(); ctx.replay.i = Number(e.target.value); renderReplay(); } });
  $('replay-first').addEventListener('click', () => replayStep(-1e9));
  $('replay-prev').addEventListener('click', () => replayStep(-1));
  $('replay-next').addEventListener('click', () => replayStep(1));
  $('replay-last').addEventListener('click', () => replayStep(1e9));
  $('replay-back').addEventListener('click', () => {
    closeReplay();
    if (ctx.S.room && ctx.conn) { setUrl(roomUrl(ctx.S.code)); ctx.resultShownFor = null; ctx.render(); } else { setUrl(null); show('lobby'); }
  });
  document.addEventListener('keydown', (e) => {
    if (e.target && e.target.id === 'replay-slider') return; // the slider moves itself
    if (ctx.replay && e.key === 'ArrowLeft') replayStep(-1);
    if (ctx.replay && e.key === 'ArrowRight') replayStep(1);
  });
}

registerView('replay');
