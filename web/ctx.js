// The web client's shared context: the one state (changed only by dispatch(), through
// the pure reducer of state.js), the room's connection, the preferences, and the
// registries that let the view modules (lobby.js, room.js, game.js, result.js,
// replay.js, account.js, profile.js, leaderboard.js…) reach each other without
// importing each other: views register what they offer here; app.js wires them.
//
// Nothing here draws: `ctx.render` (set by app.js) draws the room's current view, and
// effects of the reducer go to the handlers registered with `onEffect`.

import { reduce, initialState } from './state.js';
import { loadPrefs } from './prefs.js';

/** The mutable application context shared by the view modules. */
export const ctx = {
  /** The client state (state.js); changed only by dispatch(). */
  S: initialState(),
  /** The logged-in account (`GET /api/me`: `{username, ratings, …}`), or null: a guest. */
  me: null,
  /** The room's Connection (net.js), or null. */
  conn: null,
  /** The player's preferences (prefs.js). */
  prefs: loadPrefs(),
  /** The room's fair dice: what the server published and our own client seed. */
  fair: { info: null, clientSeed: null },
  /** The game board (board.js) while the game view is drawn. */
  board: null,
  /** The replay viewer's state while it is open: { data, i, board }. */
  replay: null,
  /** Moves and dice rolls animated so far (read by the browser tests). */
  animations: 0,
  /** Captured pieces animated going home (a subset of `animations`; tests read it). */
  homeAnimations: 0,
  diceAnimations: 0,
  /** "Play a bot now": start the game as soon as the room is ours. */
  autoStart: false,
  /** The player acted: put the keyboard focus on what comes next. */
  refocus: false,
  /** The game whose result overlay was already shown (or dismissed). */
  resultShownFor: null,
  /** Room code → the id of the tournament whose match it hosts, for the rooms of the
   * tournament pages seen (the result screen links back to the tournament). */
  tournamentOfRoom: new Map(),
  /** Draws the room's current view (set by app.js). */
  render: () => {},
};

/**
 * Late-bound actions one view offers the others (e.g. `enterRoom`, `openReplay`,
 * `startSession`): the module that owns an action sets it when it loads, the callers
 * look it up when they run, so no two view modules import each other.
 */
export const actions = {};

const effectHandlers = new Map();
/** Registers `fn(effect)` for the reducer's effects of type `type`. */
export function onEffect(type, fn) { effectHandlers.set(type, fn); }

/** The one way the state changes: the reducer, then its effects, then a redraw. */
export function dispatch(msg) {
  ctx.S = reduce(ctx.S, msg);
  const fx = ctx.S.fx;
  for (const f of fx) {
    const h = effectHandlers.get(f.type);
    if (h) h(f);
  }
  scheduleRender(fx);
}

const afterRender = [];
/** Registers `fn(effects)`, called after each redraw with the effects drawn since the last. */
export function onAfterRender(fn) { afterRender.push(fn); }

let renderQueued = false;
let pendingFx = [];
/** Redraws once per microtask, however many messages arrived. */
export function scheduleRender(fx = []) {
  pendingFx.push(...fx);
  if (renderQueued) return;
  renderQueued = true;
  queueMicrotask(() => {
    renderQueued = false;
    const todo = pendingFx;
    pendingFx = [];
    ctx.render();
    for (const fn of afterRender) fn(todo);
  });
}

// ----- views -----------------------------------------------------------------------------

const views = new Map();

/**
 * Registers a view: `name` is the id suffix of its `<section id="view-<name>">`;
 * `hooks.enter()` runs each time it is shown, `hooks.leave()` when another is.
 * A new page (a tournament page…) registers itself the same way.
 */
export function registerView(name, hooks = {}) { views.set(name, hooks); }

let current = null;
/** Shows view `name` and hides every other registered view. */
export function show(name) {
  const changed = current !== name;
  if (changed && current && views.get(current)?.leave) views.get(current).leave();
  for (const v of views.keys()) {
    const el = document.getElementById(`view-${v}`);
    if (el) el.hidden = v !== name;
  }
  document.body.dataset.view = name;
  current = name;
  const hooks = views.get(name);
  if (hooks && hooks.enter) hooks.enter(changed);
}

/** The view shown now. */
export function currentView() { return current; }
