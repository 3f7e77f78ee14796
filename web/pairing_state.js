// Quick pairing's state and the one place it changes (issue 26; the contract in
// proto/README.md "Quick pairing"): reducePairing(state, message) → new state, with the
// effects the app runs listed in `fx` (HTTP calls, the next poll, the room's claim, a
// toast). Pure: no DOM, no network, no clock; unit-tested in web/test/pairing.test.mjs.
//
// Messages:
//   pools {pools}                   GET /api/pairing answered: the pools and who waits
//   pools_unavailable               the server has no quick pairing (404): hide it
//   request {preset, seats, rated}  the player asks to be paired
//   queued {ticket, waiting_ms, window}  POST /api/pairing answered 201
//   status {of, status, waiting_ms, window | room, colour | room, ticket}  a poll of ticket
//                                   `of` answered
//                                   (`expired`: the claim wait ran out; `ticket` is the
//                                   new one of a player who had claimed, or null)
//   failed {status, code, message}  a call failed (401 guest in a rated pool, 404 ticket gone…)
//   cancel                          the player stops waiting
//   claimed                         the app opened the paired room
//   lobby_closed {room}             that room's socket closed 4006 (pairing_expired):
//                                   poll the claimed ticket again to learn the new one
//                                   (until the server has settled the group it may still
//                                   answer `paired` with that room: poll again, no claim)
// Effects: {type:'post', body}, {type:'poll', ticket, delay_ms}, {type:'delete', ticket},
//   {type:'claim', room, colour, ticket}, {type:'toast', code, message} or
//   {type:'toast', key} (an i18n key).

/** How long to wait between two polls (the ticket stays alive while polled). */
export const POLL_MS = 1500;

/** A fresh state: not waiting; pools unknown. */
export function initialPairing() {
  return {
    phase: 'idle', // 'idle' | 'requesting' | 'waiting' | 'paired'
    request: null, // { preset, seats, rated }
    ticket: null,
    waitingMs: 0,
    window: null,
    room: null,
    colour: null,
    pools: [],
    available: null, // null: not asked yet; false: the server has no quick pairing
    claimed: null, // { ticket, room, request }: the last paired room the app opened
    closedRoom: null, // the paired room whose lobby closed (4006) while its ticket is polled
    fx: [],
  };
}

/** The state after `msg` (see the list above); the input is never changed. */
export function reducePairing(state, msg) {
  const s = { ...state, fx: [] };
  switch (msg.type) {
    case 'pools':
      s.available = true;
      s.pools = Array.isArray(msg.pools) ? msg.pools.map((p) => ({ ...p })) : [];
      return s;
    case 'pools_unavailable':
      s.available = false;
      s.pools = [];
      return s;
    case 'request': {
      if (s.phase !== 'idle') return s; // one search at a time
      const body = { preset: msg.preset, seats: msg.seats === 4 ? 4 : 2, rated: !!msg.rated };
      if (msg.name) body.name = msg.name;
      s.phase = 'requesting';
      s.request = { preset: body.preset, seats: body.seats, rated: body.rated };
      s.fx = [{ type: 'post', body }];
      return s;
    }
    case 'queued':
      if (s.phase !== 'requesting') {
        // Cancelled while the request was on its way: give the ticket back.
        if (msg.ticket) s.fx = [{ type: 'delete', ticket: msg.ticket }];
        return s;
      }
      s.phase = 'waiting';
      s.ticket = msg.ticket;
      s.waitingMs = msg.waiting_ms || 0;
      s.window = msg.window ?? null;
      s.fx = [{ type: 'poll', ticket: s.ticket, delay_ms: POLL_MS }];
      return s;
    case 'status':
      // `of`: the ticket polled (the answer's own `ticket` is an expired one's new ticket).
      if (s.phase !== 'waiting' || (msg.of && msg.of !== s.ticket)) return s; // a late answer
      if (msg.status === 'expired') {
        if (msg.ticket) {
          // Claimed in time: back in the pool with the original wait, under a new ticket.
          s.ticket = msg.ticket;
          s.room = null;
          s.colour = null;
          s.closedRoom = null;
          s.fx = [{ type: 'toast', key: 'pairing_requeued' }, { type: 'poll', ticket: s.ticket, delay_ms: 0 }];
          return s;
        }
        const out = initialPairing();
        out.pools = s.pools;
        out.available = s.available;
        out.fx = [{ type: 'toast', key: 'pairing_expired' }];
        return out;
      }
      if (msg.status === 'paired' && msg.room === s.closedRoom) {
        // The lobby closed but the server has not settled its tickets yet (it closes the
        // room first): ask again rather than claim a room that is gone.
        s.fx = [{ type: 'poll', ticket: s.ticket, delay_ms: POLL_MS }];
        return s;
      }
      if (msg.status === 'paired') {
        s.phase = 'paired';
        s.room = msg.room;
        s.colour = msg.colour ?? null;
        s.fx = [{ type: 'claim', room: msg.room, colour: s.colour, ticket: s.ticket }];
        return s;
      }
      s.waitingMs = msg.waiting_ms ?? s.waitingMs;
      // `window: null`: any rating now (after 60 s), not "unchanged".
      if ('window' in msg) s.window = msg.window;
      s.fx = [{ type: 'poll', ticket: s.ticket, delay_ms: POLL_MS }];
      return s;
    case 'failed': {
      if (s.phase === 'idle' || s.phase === 'paired') return s;
      const code = msg.code || (msg.status === 404 ? 'unknown_ticket' : 'http');
      const out = initialPairing();
      out.pools = s.pools;
      out.available = s.available;
      out.fx = [{ type: 'toast', code, message: msg.message || '' }];
      return out;
    }
    case 'cancel': {
      const out = initialPairing();
      out.pools = s.pools;
      out.available = s.available;
      if (s.ticket && s.phase === 'waiting') out.fx = [{ type: 'delete', ticket: s.ticket }];
      return out;
    }
    case 'claimed': {
      const out = initialPairing();
      out.pools = s.pools;
      out.available = s.available;
      if (s.phase === 'paired') out.claimed = { ticket: s.ticket, room: s.room, request: s.request };
      return out;
    }
    case 'lobby_closed': {
      const c = s.claimed;
      if (s.phase !== 'idle' || !c || c.room !== msg.room) return s;
      s.phase = 'waiting';
      s.ticket = c.ticket;
      s.request = c.request;
      s.claimed = null;
      s.closedRoom = c.room;
      s.fx = [{ type: 'poll', ticket: c.ticket, delay_ms: 0 }];
      return s;
    }
    default:
      return s;
  }
}

/** Seconds waited so far, for the waiting line. */
export function waitingSecs(s) { return Math.floor((s.waitingMs || 0) / 1000); }
