// Unit tests of the tournament page's view model (web/tournament_model.js) on views shaped
// like `GET /api/tournaments/{id}` (docs/TOURNAMENTS.md "The view"): registration with a
// partner's confirmation, "my next match" (claim, resume, wait), the ready announcement
// once per room, the bracket by rounds with byes, swiss standings, links to watch and
// replay, the referee's log and the create form's body.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as M from '../tournament_model.js';

const player = (name) => ({ account: `uuid-${name}`, name, bot: null });
const bot = (name) => ({ account: null, name, bot: 'random' });

function base(over = {}) {
  return {
    id: 'T1', name: 'Club', status: 'registering', format: 'knockout', preset: 'pairs',
    organiser: 'uuid-org', settings: { registration_deadline_ms: 1000 }, rounds: 0, current_round: 0, fan_in: 2,
    entrants: [], matches: [], byes: [], standings: [], referee_actions: [], champion: null, cancelled: null,
    ...over,
  };
}

const team = (id, a, b, status = 'registered', seed = null) => ({ id, name: `${a} & ${b}`, players: [player(a), player(b)], status, seed });
const bots = (id) => ({ id, name: `Bots ${id}`, players: [bot('Bot 1'), bot('Bot 2')], status: 'registered', seed: null });

test('registration: register, the partner confirms, then either may withdraw; guests log in', () => {
  assert.equal(M.registrationAction(base(), null), 'login');
  assert.equal(M.registrationAction(base(), 'ana'), 'register');
  const pending = base({ entrants: [team(0, 'ana', 'Bea', 'pending_partner')] });
  assert.equal(M.registrationAction(pending, 'ana'), 'waiting_partner');
  assert.equal(M.registrationAction(pending, 'bea'), 'confirm', 'usernames compare case-insensitively');
  assert.equal(M.awaitingMyConfirmation(pending, 'Bea').id, 0);
  assert.equal(M.awaitingMyConfirmation(pending, 'ana'), null, 'the registrant does not confirm');
  const done = base({ entrants: [team(0, 'ana', 'bea')] });
  assert.equal(M.registrationAction(done, 'bea'), 'registered');
  assert.equal(M.registrationAction(base({ status: 'running', entrants: done.entrants }), 'ana'), 'closed');
});

function running() {
  return base({
    status: 'running', rounds: 2, current_round: 1,
    entrants: [team(0, 'ana', 'bea', 'registered', 1), bots(1), bots(2), bots(3)],
    matches: [
      { id: 0, round: 1, table: 0, entrants: [0, 3], status: 'open', game_id: null, winner: null, places: [], room: 'ROOM0', paused: false, no_show_deadline_ms: 65_000,
        seats: [{ colour: 'blue', entrant: 0, name: 'ana' }, { colour: 'green', entrant: 0, name: 'bea' }, { colour: 'red', entrant: 3, name: 'Bot 1' }, { colour: 'yellow', entrant: 3, name: 'Bot 2' }] },
      { id: 1, round: 1, table: 1, entrants: [1, 2], status: 'finished', game_id: 'G1', winner: 2, places: [2, 1], room: 'ROOM1', paused: false, no_show_deadline_ms: null, seats: [] },
    ],
  });
}

test('my next match: claim while the room is open, resume while playing, wait before', () => {
  const v = running();
  const next = M.myNextMatch(v, 'ana');
  assert.equal(next.action, 'claim');
  assert.equal(next.match.id, 0);
  assert.equal(M.mySeat(next.match, 0, 'bea'), 'green');
  const playing = running();
  playing.matches[0] = { ...playing.matches[0], status: 'playing', game_id: 'G0' };
  assert.equal(M.myNextMatch(playing, 'bea').action, 'resume');
  const ready = running();
  ready.matches[0] = { ...ready.matches[0], status: 'ready', room: null };
  assert.equal(M.myNextMatch(ready, 'ana').action, 'wait');
  assert.equal(M.myNextMatch(v, 'nobody'), null, 'not an entrant: nothing to play');
  assert.equal(M.myNextMatch(v, null), null);
});

test('standing: through and waiting, out after a lost knockout match, champion', () => {
  const v = running();
  v.matches[0] = { ...v.matches[0], status: 'finished', winner: 0, places: [0, 3], game_id: 'G0' };
  assert.equal(M.myStanding(v, 0), 'waiting');
  assert.equal(M.myStanding(v, 1), 'out', 'the loser of match 1 is out');
  v.matches.push({ id: 2, round: 2, table: 0, entrants: [0, 2], status: 'pending', game_id: null, winner: null, places: [], room: null, seats: [] });
  assert.equal(M.myStanding(v, 0), 'playing');
  assert.equal(M.myNextMatch(v, 'ana').match.id, 2, 'the next round\'s match is the next one');
  const fin = { ...v, status: 'finished', champion: 0 };
  fin.matches = v.matches.map((m) => (m.id === 2 ? { ...m, status: 'finished', winner: 0, places: [0, 2] } : m));
  assert.equal(M.myStanding(fin, 0), 'champion');
  assert.equal(M.myStanding(fin, 2), 'out');
});

test('the ready announcement fires once per match and room, and again for a replayed room', () => {
  const announced = new Set();
  const v = running();
  const first = M.readyToAnnounce(v, 'ana', announced);
  assert.deepEqual([first.match.id, first.key], [0, '0:ROOM0']);
  announced.add(first.key);
  assert.equal(M.readyToAnnounce(v, 'bea', announced), null, 'announced once');
  const replayed = running();
  replayed.matches[0] = { ...replayed.matches[0], room: 'ROOM0b' };
  assert.equal(M.readyToAnnounce(replayed, 'ana', announced).key, '0:ROOM0b');
  const playing = running();
  playing.matches[0] = { ...playing.matches[0], status: 'playing' };
  assert.equal(M.readyToAnnounce(playing, 'ana', new Set()), null, 'a game already on is not "ready"');
});

test('the no-show countdown in whole seconds and m:ss', () => {
  assert.equal(M.secondsLeft(65_000, 0), 65);
  assert.equal(M.secondsLeft(65_000, 64_001), 1);
  assert.equal(M.secondsLeft(65_000, 70_000), 0);
  assert.equal(M.secondsLeft(null, 0), null);
  assert.equal(M.clockText(65), '1:05');
  assert.equal(M.clockText(0), '0:00');
});

test('links: watch an open or playing room, the replay of a finished game', () => {
  const [open, done] = running().matches;
  assert.deepEqual(M.matchLinks(open), { watch: '/?room=ROOM0&watch=1', replay: null });
  assert.deepEqual(M.matchLinks(done), { watch: null, replay: '/?game=G1' });
  assert.deepEqual(M.matchLinks({ ...open, status: 'pending', room: null }), { watch: null, replay: null });
});

test('the bracket groups matches by round, by table, with byes and names', () => {
  const v = running();
  v.matches.push({ id: 2, round: 2, table: 0, entrants: [0, 2], status: 'pending', game_id: null, winner: null, places: [], room: null, seats: [] });
  v.matches.reverse();
  v.byes = [{ round: 1, entrant: 3 }];
  const b = M.bracket(v);
  assert.deepEqual(b.map((r) => r.round), [1, 2]);
  assert.deepEqual(b[0].matches.map((m) => m.id), [0, 1]);
  assert.deepEqual(b[0].matches[0].names, ['ana & bea', 'Bots 3']);
  assert.deepEqual(b[0].byes, ['Bots 3']);
  assert.deepEqual(b[1].matches[0].names, ['ana & bea', 'Bots 2']);
});

test('swiss standings keep the server\'s order with ranks and names', () => {
  const v = base({ format: 'swiss', status: 'running', entrants: [team(0, 'ana', 'bea'), bots(1)],
    standings: [{ entrant: 1, points: 2, buchholz: 1, byes: 0 }, { entrant: 0, points: 1, buchholz: 2, byes: 1 }] });
  assert.deepEqual(M.standingsRows(v).map((r) => [r.rank, r.name, r.points, r.buchholz]), [[1, 'Bots 1', 2, 1], [2, 'ana & bea', 1, 2]]);
});

test('the referee log is newest first with the entrant\'s name', () => {
  const v = running();
  v.referee_actions = [
    { at: 1, by: 'uuid-org', action: 'pause', match_id: 0, entrant: null, reason: null },
    { at: 2, by: 'uuid-org', action: 'disqualify', match_id: null, entrant: 3, reason: 'help from the public' },
  ];
  const log = M.refereeLog(v);
  assert.deepEqual(log.map((a) => [a.action, a.entrantName, a.reason]), [['disqualify', 'Bots 3', 'help from the public'], ['pause', null, null]]);
});

test('the create form\'s body: knockout with bot fill, swiss with rounds, refusals', () => {
  const f = { name: ' Club ', preset: 'pairs', format: 'knockout', deadlineMinutes: '30', turnClock: '5', spectatorDelay: '0', botFill: true, botUpTo: '4', botThinkMs: '0' };
  assert.deepEqual(M.createBody(f, 1_000), { body: {
    name: 'Club', preset: 'pairs', format: 'knockout', registration_deadline_ms: 1_000 + 30 * 60_000,
    turn_clock_secs: 5, spectator_delay_throws: 0, bot_fill: { up_to: 4, level: 'random', think_ms: 0 },
  } });
  const swiss = M.createBody({ ...f, format: 'swiss', rounds: '3', botFill: false }, 0).body;
  assert.equal(swiss.rounds, 3);
  assert.equal(swiss.bot_fill, undefined);
  assert.equal(M.createBody({ ...f, format: 'swiss', rounds: '0' }, 0).error, 'tour_err_rounds');
  assert.equal(M.createBody({ ...f, name: '  ' }, 0).error, 'tour_err_name');
  assert.equal(M.createBody({ ...f, deadlineMinutes: 'x' }, 0).error, 'tour_err_deadline');
  assert.equal(M.createBody({ ...f, botUpTo: '1' }, 0).error, 'tour_err_bots');
  assert.equal(M.createBody({ ...f, spectatorDelay: '' }, 0).body.spectator_delay_throws, 3, 'the default delay');
});

test('the organiser and the referees are known by the account id of GET /api/me', () => {
  const v = base({ organiser: 'uuid-org', referees: ['uuid-ref', { account: 'uuid-ref2' }] });
  assert.equal(M.isOrganiser(v, 'uuid-org'), true);
  assert.equal(M.isOrganiser(v, 'uuid-ref'), false);
  assert.equal(M.isOrganiser(v, null), false);
  assert.deepEqual(['uuid-org', 'uuid-ref', 'uuid-ref2', 'uuid-x', null].map((id) => M.mayReferee(v, id)), [true, true, true, false, false]);
  // A view without a referees list leaves the controls to any logged-in player.
  const old = base({ organiser: 'uuid-org' });
  delete old.referees;
  assert.deepEqual([M.mayReferee(old, 'uuid-x'), M.mayReferee(old, null)], [true, false]);
});
