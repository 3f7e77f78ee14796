// The game view: the board (board.js) with the server's previews as targets, the dice
// and the roll button, the actions list, the players (with accounts' ratings when the
// room view carries them), the capture banner, the dropped players' countdowns, emotes,
// the clock, the log, keeping the keyboard focus where the next move is, the board's
// zoom on a phone, and the tab title flashing on your turn. It knows no rules.

import { t, getLang, colourName, locName } from './i18n.js';
import { createBoard } from './board.js';
import { describedActions, selectable, bottomColour, awayCountdowns } from './state.js';
import * as sound from './sound.js';
import { openDialog, closeDialog } from './dialogs.js';
import { renderEmoteBar, renderEmoteFeed } from './emotes.js';
import { ctx, dispatch, registerView, onEffect, onAfterRender, scheduleRender } from './ctx.js';
import {
  $, button, swatch, dieEl, boardPieces, renderLog, displayName, ratingText, seatOf, nameOf,
} from './ui.js';
import { command, leaveRoom } from './session.js';
import { renderFair } from './fairline.js';
import { renderResult } from './result.js';

let captureTimer = null;

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
  const { S } = ctx;
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
export function renderAway() {
  const ul = $('away-list');
  const now = Date.now() + ctx.S.clockOffset;
  const list = awayCountdowns(ctx.S, now);
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
  if (!lost && !ctx.refocus) return;
  // Where the focus was put after a move (the turn line, while the others play) it moves
  // on to the roll button when the turn comes back; elsewhere, it stays where the user put it.
  if (!lost && ctx.refocus && a && a.id !== 'roll-btn' && a.id !== 'turn-banner' && !(a.closest && a.closest('#action-list, svg.board'))) return;
  const roll = $('roll-btn');
  const target = (!roll.hidden && !roll.disabled && roll)
    || document.querySelector('svg.board .target')
    || document.querySelector('svg.board .piece.selectable')
    || document.querySelector('#action-list button');
  if (target) { target.focus({ preventScroll: true }); ctx.refocus = false; return; }
  if (lost && ctx.S.room && ctx.S.room.status === 'playing') $('turn-banner').focus({ preventScroll: true });
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
  ctx.diceAnimations += 1;
}

function play(key) {
  const d = describedActions(ctx.S).find((x) => x.key === key);
  if (!d) return;
  command('play', { action: d.action });
  ctx.refocus = true;
  dispatch({ type: 'local:played' }); // wait for the server's answer
}

function onPiece(colour, piece) {
  dispatch({ type: 'local:select', piece: `${colour}:${piece}` });
  const tg = document.querySelector('.target');
  if (tg && ctx.S.selected) tg.focus({ preventScroll: true });
}

function timeoutsText(colour) {
  const { S } = ctx;
  const seat = seatOf(colour);
  if (seat && (seat.bot || seat.abandoned)) return ''; // a bot plays it now: no strikes
  const n = S.timeouts[colour] || 0;
  const max = S.room.settings.timeouts_to_abandon;
  return n > 0 ? t('strikes', { n, max }) : '';
}

function renderTurn(mine) {
  const { S } = ctx;
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
}

function renderActions(mine, actions) {
  const { S } = ctx;
  const dice = $('dice');
  dice.replaceChildren();
  (S.dice || []).forEach((v, i) => dice.appendChild(dieEl(v, S.used[i])));
  const roll = $('roll-btn');
  roll.disabled = !(mine && S.myTurn.must_roll);
  roll.hidden = S.role !== 'player' || !!S.outcome;

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
    b.dataset.colour = d.colour;
    b.dataset.piece = d.piece;
    b.dataset.target = d.to;
    b.dataset.steps = d.steps;
    b.dataset.capture = d.capture ? '1' : '0';
    b.dataset.key = d.key;
    list.appendChild(b);
  }
}

/** Players: name (and rating), pieces in the goal, last roll, timeout strikes. */
function renderPlayers() {
  const { S } = ctx;
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
    txt.textContent = `${colourName(seat.colour)} · ${displayName(seat)}${ratingText(seat)}${tags.length ? ` (${tags.join(', ')})` : ''} · ${t('loc_goal')}: ${home}/4`;
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
}

/** Draws the game view from the state. */
export function renderGame() {
  const { S } = ctx;
  renderFair($('game-fair'));
  if (!ctx.board) ctx.board = createBoard($('board-wrap'));
  const actions = describedActions(S);
  const movable = selectable(S);
  const lastMoves = Object.entries(S.lastMove).map(([colour, m]) => ({ colour, ...m }));
  const targets = actions
    .filter((d) => `${d.colour}:${d.piece}` === S.selected)
    .map((d) => ({ loc: d.to, colour: d.colour, label: actionLabel(d), capture: d.capture, key: d.key, short: shortLoc(d.to) }));
  ctx.board.render({
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
    shapes: ctx.prefs.shapes,
    seq: S.seq,
    turn: S.turn,
  });
  renderCaptureBanner();
  renderAway();
  renderEmoteBar($('emote-bar'), { player: S.role === 'player' && !!S.colour, muted: S.emotesMuted, send: (id) => command('emote', { emote: id }) });
  renderEmoteFeed($('emote-feed'), S.emotes, nameOf);
  $('emote-mute').checked = S.emotesMuted;

  const mine = S.myTurn && S.role === 'player';
  renderTurn(mine);
  renderActions(mine, actions);
  renderPlayers();
  $('game-spectators').textContent = t('spectators', { n: S.room.spectators || 0 });
  $('game-spectators').dataset.count = S.room.spectators || 0;
  $('spectating').hidden = S.role !== 'spectator';
  $('game-leave').textContent = S.outcome || S.role === 'spectator' ? t('back_lobby') : t('leave');
  renderLog($('log'), S.log);
  tickClock();
  renderResult();
}

let lastTick = null;
/** The turn clock: seconds left and the bar; the last 5 s of your own clock tick. */
export function tickClock() {
  const { S } = ctx;
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

/** Zooms the board in (on a phone) or out, centred on the piece to move. */
export function setZoom(on) {
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

/** Drops the drawn board (a language change redraws it in the new words). */
export function resetGameDrawing() {
  if (ctx.board) { $('board-wrap').replaceChildren(); ctx.board = null; }
  $('emote-bar').replaceChildren();
  $('away-list').dataset.key = '';
}

/** Wires the game view's controls. */
export function initGame() {
  $('stack-cancel').addEventListener('click', () => closeDialog($('stack-dialog')));
  $('zoom-btn').addEventListener('click', () => setZoom(!$('board-wrap').classList.contains('zoomed')));
  $('game-leave').addEventListener('click', leaveRoom);
  $('roll-btn').addEventListener('click', () => {
    if (!ctx.S.myTurn || !ctx.S.myTurn.must_roll) return;
    command('roll');
    ctx.refocus = true;
    dispatch({ type: 'local:played' });
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) stopFlash();
    else if (ctx.S.myTurn && ctx.S.role === 'player') flashTitle();
  });
  setInterval(() => { tickClock(); if (ctx.S.room && ctx.S.room.status !== 'lobby' && !ctx.replay) renderAway(); }, 250);
  // Redraw when the board's size changes (touch areas follow the CSS size).
  window.addEventListener('resize', () => { if (ctx.S.room && ctx.S.room.status !== 'lobby') scheduleRender(); });
}

onEffect('sound', (f) => sound.play(f.name));
onEffect('my_turn', flashTitle);
onEffect('emote', () => sound.play('turn'));
// Animations start from the drawn end positions, once per move.
onAfterRender((todo) => {
  const { S, board } = ctx;
  if (!board || !S.room || S.room.status === 'lobby') return;
  for (const f of todo) if (f.type === 'animate' && board.animate(f)) ctx.animations += 1;
  for (const f of todo) if (f.type === 'captured' && board.animateHome(f)) { ctx.animations += 1; ctx.homeAnimations += 1; }
  if (todo.some((f) => f.type === 'dice')) animateDice();
  keepFocus();
});

registerView('game');
