// The tournament page's view model (issue 27): pure functions from the server's
// tournament view (`GET /api/tournaments/{id}`, the SSE `tournament` event; shape in
// docs/TOURNAMENTS.md "The view") and the logged-in username to what the page shows.
// No DOM, no fetch, no clock of its own (`now` is passed in): tested by
// web/test/tournament.test.mjs. The server decides everything; this only reads.

/** Match statuses whose room a player can take a seat in or a spectator can watch. */
export const LIVE = new Set(['open', 'playing']);
/** Match statuses that are decided. */
export const DECIDED = new Set(['finished', 'forfeited', 'awarded']);

/** Entrant `id` of `view`, or undefined. */
export function entrantOf(view, id) { return view.entrants.find((e) => e.id === id); }

/** The shown name of entrant `id` (`?` when the view does not list it). */
export function entrantName(view, id) { const e = entrantOf(view, id); return e ? e.name : '?'; }

/** Whether entrant `e` has the account called `username` (case-insensitive) among its
 * players. The view names account players by their username. */
export function hasPlayer(e, username) {
  if (!username) return false;
  const u = username.toLowerCase();
  return e.players.some((p) => !p.bot && typeof p.name === 'string' && p.name.toLowerCase() === u);
}

/** The entrant `username` plays in (registered, waiting for a partner or
 * disqualified), or null. */
export function myEntrant(view, username) {
  return view.entrants.find((e) => hasPlayer(e, username)) || null;
}

/** The team waiting for `username` to confirm as its partner (the registrant is the
 * first player), or null. */
export function awaitingMyConfirmation(view, username) {
  const e = myEntrant(view, username);
  if (!e || e.status !== 'pending_partner') return null;
  const first = e.players[0];
  return first && first.name.toLowerCase() !== username.toLowerCase() ? e : null;
}

/** What the logged-in player may do about registration: 'login' (a guest), 'register',
 * 'confirm' (its partner registered it), 'waiting_partner', 'registered' (may
 * unregister), or 'closed'. */
export function registrationAction(view, username) {
  if (view.status !== 'registering') return 'closed';
  if (!username) return 'login';
  const e = myEntrant(view, username);
  if (!e) return 'register';
  if (e.status === 'pending_partner') return awaitingMyConfirmation(view, username) ? 'confirm' : 'waiting_partner';
  return 'registered';
}

/** The match entrant `entrantId` plays next: the first of its matches that is not
 * decided, in round order, or null. */
export function nextMatch(view, entrantId) {
  if (entrantId == null) return null;
  const mine = view.matches
    .filter((m) => m.entrants.includes(entrantId) && !DECIDED.has(m.status))
    .sort((a, b) => a.round - b.round || a.id - b.id);
  return mine[0] || null;
}

/** The latest decided match of entrant `entrantId`, or null. */
export function lastMatch(view, entrantId) {
  const mine = view.matches
    .filter((m) => m.entrants.includes(entrantId) && DECIDED.has(m.status))
    .sort((a, b) => b.round - a.round || b.id - a.id);
  return mine[0] || null;
}

/** The player's standing in a running or finished tournament: 'champion', 'out'
 * (lost a match, or disqualified), 'playing' (a match not decided), 'waiting' (through,
 * the next round not drawn yet), or null when not an entrant. */
export function myStanding(view, entrantId) {
  if (entrantId == null) return null;
  const e = entrantOf(view, entrantId);
  if (!e) return null;
  if (view.champion === entrantId) return 'champion';
  if (e.status === 'disqualified') return 'out';
  if (nextMatch(view, entrantId)) return 'playing';
  const last = lastMatch(view, entrantId);
  if (view.format === 'knockout' && last && last.winner !== entrantId && !(last.places || []).slice(0, 1).includes(entrantId)) return 'out';
  if (view.status === 'finished') return 'out';
  return 'waiting';
}

/** The colour entrant `entrantId`'s player `username` sits on in match `m`, or null. */
export function mySeat(m, entrantId, username) {
  const u = (username || '').toLowerCase();
  const s = (m.seats || []).find((x) => x.entrant === entrantId && (x.name || '').toLowerCase() === u);
  return s ? s.colour : null;
}

/** What "my next match" offers: `{match, action}` with action 'claim' (the room is open:
 * take the seat), 'resume' (the game is on: back to the seat), or 'wait' (no room yet);
 * null without a match to play. */
export function myNextMatch(view, username) {
  const e = myEntrant(view, username);
  if (!e || view.status !== 'running') return null;
  const m = nextMatch(view, e.id);
  if (!m) return null;
  if (m.room && m.status === 'open') return { match: m, action: 'claim' };
  if (m.room && m.status === 'playing') return { match: m, action: 'resume' };
  return { match: m, action: 'wait' };
}

/** "Your match is ready": the match of `username` whose room is open for its seat and
 * not yet announced (`announced`: a Set of `"<match>:<room>"` keys), as `{match, key}`,
 * or null. A replayed match (a new room) is announced again. */
export function readyToAnnounce(view, username, announced) {
  const next = myNextMatch(view, username);
  if (!next || next.action !== 'claim') return null;
  const key = `${next.match.id}:${next.match.room}`;
  return announced.has(key) ? null : { match: next.match, key };
}

/** Whole seconds left until `deadlineMs` at `nowMs` (0 once passed; null without one). */
export function secondsLeft(deadlineMs, nowMs) {
  if (deadlineMs == null) return null;
  return Math.max(0, Math.ceil((deadlineMs - nowMs) / 1000));
}

/** `m:ss` of a number of seconds. */
export function clockText(secs) {
  const s = Math.max(0, secs | 0);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** The links of a match: `watch` (its room, as a spectator) while open or playing,
 * `replay` once its game finished. Each is a path or null. */
export function matchLinks(m) {
  return {
    watch: m.room && LIVE.has(m.status) ? `/?room=${encodeURIComponent(m.room)}&watch=1` : null,
    replay: m.game_id && m.status === 'finished' ? `/?game=${encodeURIComponent(m.game_id)}` : null,
  };
}

/** The bracket (knockout) by rounds: `[{round, matches: [{...match, names}], byes:
 * [entrant name]}]`, rounds ascending, matches by table. */
export function bracket(view) {
  const rounds = new Map();
  const at = (r) => {
    if (!rounds.has(r)) rounds.set(r, { round: r, matches: [], byes: [] });
    return rounds.get(r);
  };
  for (const m of view.matches) at(m.round).matches.push({ ...m, names: m.entrants.map((id) => entrantName(view, id)) });
  for (const b of view.byes || []) at(b.round).byes.push(entrantName(view, b.entrant));
  const out = [...rounds.values()].sort((a, b) => a.round - b.round);
  for (const r of out) r.matches.sort((a, b) => (a.table ?? a.id) - (b.table ?? b.id) || a.id - b.id);
  return out;
}

/** The swiss standings as rows `{rank, entrant, name, points, buchholz, byes}`, in the
 * server's order. */
export function standingsRows(view) {
  return (view.standings || []).map((s, i) => ({ rank: i + 1, name: entrantName(view, s.entrant), ...s }));
}

/** The referee actions, newest first, with the names they refer to:
 * `{at, action, match_id, entrant, entrantName, reason}`. */
export function refereeLog(view) {
  return (view.referee_actions || []).slice().reverse().map((a) => ({
    ...a, entrantName: a.entrant == null ? null : entrantName(view, a.entrant),
  }));
}

/**
 * The body of `POST /api/tournaments` from the create form's values (strings as typed):
 * `{name, preset, format, rounds, deadlineMinutes, turnClock, spectatorDelay, botFill,
 * botUpTo, botThinkMs}` and `nowMs`. Returns `{body}` or `{error: <i18n key>}`. The server
 * checks every rule again (docs/TOURNAMENTS.md "Settings"); this only shapes the body.
 */
export function createBody(f, nowMs) {
  const name = (f.name || '').trim();
  if (!name || name.length > 80) return { error: 'tour_err_name' };
  const minutes = Number(f.deadlineMinutes);
  if (!Number.isFinite(minutes) || minutes < 1 || minutes > 60 * 24 * 365) return { error: 'tour_err_deadline' };
  const body = {
    name,
    preset: f.preset || 'pairs',
    format: f.format === 'swiss' ? 'swiss' : 'knockout',
    registration_deadline_ms: nowMs + Math.round(minutes * 60000),
    turn_clock_secs: Number(f.turnClock) || 15,
    spectator_delay_throws: Number.isFinite(Number(f.spectatorDelay)) && f.spectatorDelay !== '' ? Number(f.spectatorDelay) : 3,
  };
  if (body.format === 'swiss') {
    const r = Number(f.rounds);
    if (!Number.isInteger(r) || r < 1 || r > 20) return { error: 'tour_err_rounds' };
    body.rounds = r;
  }
  if (f.botFill) {
    const up = Number(f.botUpTo);
    if (!Number.isInteger(up) || up < 2 || up > 256) return { error: 'tour_err_bots' };
    body.bot_fill = { up_to: up, level: f.botLevel || 'random', think_ms: Number(f.botThinkMs) || 0 };
  }
  return { body };
}

/** Whether the account `meId` (`GET /api/me`'s `id`) organises `view` (its `organiser`
 * is that account's id); false when logged out. */
export function isOrganiser(view, meId) {
  return !!meId && view.organiser === meId;
}

/** Whether the account `meId` may use the referee's controls of `view`: the organiser,
 * or an account listed in `referees` (ids, or `{account}` objects). A view without a
 * `referees` list leaves them to every logged-in player (the server checks anyway). */
export function mayReferee(view, meId) {
  if (!meId) return false;
  if (isOrganiser(view, meId)) return true;
  if (!Array.isArray(view.referees)) return true;
  return view.referees.some((r) => r === meId || (r && (r.account === meId || r.id === meId)));
}
