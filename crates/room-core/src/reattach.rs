//! Cluster mode's reattach (`docs/CLUSTER.md`, "Routing: relayed connections"): a
//! connection comes back without its token, as the player of a colour or as a spectator,
//! having been sent every event up to `last_seq`. It is a relayed connection whose edge
//! lost a frame, whose room moved to this node, or a local socket of a room that stopped
//! on its previous owner. The client must not notice: no `welcome`, no second answer,
//! only the events it missed (from the history) and, if it is its turn, `your_turn`.
//!
//! Decisions:
//! * A player's seat gets the connection back (shown connected, grace period over); a
//!   connection still on the seat that itself came by a reattach is replaced as on
//!   `resume` (told, closed with 4000).
//! * A connection still on the seat that joined or resumed here is newer than the
//!   reattaching one (which attached before, here or on an earlier owner, and does not
//!   replace it: the drained node's late reattach of a socket whose client has resumed
//!   since): the reattach is refused with `not_joined` and the newer connection keeps the
//!   seat; the edge closes the stale socket with 4000.
//! * A seat that is gone, abandoned or now played by a bot: the connection stays as a
//!   spectator (what a local connection of an abandoned seat is, too).
//! * Spectators (and players turned spectators) are not refused by `spectators: false`
//!   or `max_spectators`: they were admitted before and did nothing; they do count
//!   towards `max_spectators` for later `watch`es.
//! * `replaces`: the link the same client had (its edge lost a frame): forgotten quietly
//!   first (no `closing`, no grace period), whether the reattach succeeds or not.
//! * Events older than the history (or a `last_seq` the room never reached, e.g. a lobby
//!   rebuilt from the store restarts at seq 0): refused with `room_unavailable`; the edge
//!   then closes the socket with 1012 and the client resumes with its token.
//! * A lobby rebuilt from the store restarts at seq 0, so a `last_seq` from before the
//!   rebuild may name other events even when the room has reached it: a reattach from
//!   before (a player whose restored seat has not resumed here, a spectator whose
//!   previous link is not one here) is refused with `room_unavailable` as well, and that
//!   player's resume gets a snapshot (`Core::lobby_restored`).

use crate::core::{Core, Effect};
use crate::{ConnId, Member, Reattach, Refusal};
use parchis_protocol::{close_code, ErrorCode};

impl Core {
    /// What connection `conn` is in the room, to attach it elsewhere (`None`: not attached).
    pub fn reattach_of(&self, conn: ConnId) -> Option<Reattach> {
        if let Some(seat) = self.seats.iter().find(|s| s.conn == Some(conn)) {
            return Some(Reattach::Player(seat.colour));
        }
        self.spectators
            .contains(&conn)
            .then_some(Reattach::Spectator)
    }

    /// In a lobby rebuilt from the store ([`Core::lobby_restored`]), whether a reattach
    /// comes from before the rebuild, its seqs naming other events: a player's seat not
    /// yet resumed here, or a spectator whose previous link (`replaces`) is not one here.
    fn reattach_is_stale(&self, reattach: Reattach, replaces: Option<ConnId>) -> bool {
        match reattach {
            Reattach::Player(colour) => self
                .seats
                .iter()
                .any(|s| s.colour == colour && s.stale_seqs),
            Reattach::Spectator => !replaces.is_some_and(|r| self.spectators.contains(&r)),
        }
    }

    /// Handles [`crate::Input::Reattach`] (the decisions are in the module docs).
    pub(super) fn reattach(
        &mut self,
        conn: ConnId,
        reattach: Reattach,
        last_seq: u64,
        replaces: Option<ConnId>,
    ) {
        if self.lobby_restored && self.reattach_is_stale(reattach, replaces) {
            self.emit(Effect::Reply(Err(Refusal::new(
                ErrorCode::RoomUnavailable,
                "the room was rebuilt from its stored state: reconnect and resume (or watch)",
            ))));
            return;
        }
        self.forget_replaced(conn, replaces);
        if !self.can_replay(last_seq) {
            self.emit(Effect::Reply(Err(Refusal::new(
                ErrorCode::RoomUnavailable,
                format!(
                    "the events after seq {last_seq} are not in the room's history (seq {}): \
                     reconnect and resume",
                    self.seq
                ),
            ))));
            return;
        }
        let seat = match self.reattach_seat(conn, reattach) {
            Ok(seat) => seat,
            Err(refusal) => {
                self.emit(Effect::Reply(Err(refusal)));
                return;
            }
        };
        let member = self.take_seat_or_watch(conn, seat);
        self.emit(Effect::Attach { conn });
        // A spectator of a delayed game gets only what spectators have been shown.
        let missed = match member {
            Member::Spectator => self.spectator_missed(last_seq),
            Member::Player(_) => self.missed(last_seq),
        };
        for frame in missed {
            self.emit(Effect::Send { conn, frame });
        }
        crate::note!(
            self,
            Info,
            "connection reattached",
            "conn={conn} last_seq={last_seq} seq={} as_player={}",
            self.seq,
            matches!(member, Member::Player(_))
        );
        self.presence();
        if let Member::Player(id) = member {
            let colour = self.seat_by_id(id).map(|s| s.colour);
            if colour.is_some() && self.turn_info().map(|(c, _)| c) == colour {
                self.send_turn_info();
            }
        }
        self.emit(Effect::Reply(Ok(member)));
    }

    /// Forgets `replaces`, the same client's previous link (unless it is `conn` itself):
    /// gone without a grace period or a word.
    fn forget_replaced(&mut self, conn: ConnId, replaces: Option<ConnId>) {
        if let Some(old) = replaces.filter(|old| *old != conn) {
            self.spectators.retain(|c| *c != old);
            for seat in &mut self.seats {
                if seat.conn == Some(old) {
                    seat.conn = None;
                }
            }
            self.emit(Effect::Forget { conn: old });
        }
    }

    /// The seat a reattach gets back (`None`: the connection stays as a spectator), with
    /// `conn` no longer among the spectators; refused if the seat is held by a newer
    /// connection (one that did not come by a reattach).
    fn reattach_seat(
        &mut self,
        conn: ConnId,
        reattach: Reattach,
    ) -> Result<Option<usize>, Refusal> {
        let seat = match reattach {
            Reattach::Player(colour) => self
                .seats
                .iter()
                .position(|s| s.colour == colour && !s.abandoned && s.bot.is_none()),
            Reattach::Spectator => None,
        };
        // Whatever it was before, the connection is attached once only.
        self.spectators.retain(|c| *c != conn);
        if let Some(i) = seat {
            let held = self.seats[i].conn.is_some_and(|c| c != conn);
            if held && !self.seats[i].reattached {
                crate::note!(
                    self,
                    Info,
                    "stale reattach refused: the seat is held by a newer connection",
                    "conn={conn} holder={:?} colour={}",
                    self.seats[i].conn,
                    self.seats[i].colour
                );
                return Err(Refusal::new(
                    ErrorCode::NotJoined,
                    "another connection took over this seat",
                ));
            }
        }
        Ok(seat)
    }

    /// Puts `conn` on seat `seat` (replacing a connection still on it, which is told and
    /// closed) or, with no seat, among the spectators.
    fn take_seat_or_watch(&mut self, conn: ConnId, seat: Option<usize>) -> Member {
        match seat {
            Some(i) => {
                if let Some(old) = self.seats[i].conn.take().filter(|old| *old != conn) {
                    let reason = "another connection took over this seat";
                    // The kick sends the one `closing` frame, then the close frame (ws/writer.rs).
                    self.emit(Effect::Kick {
                        conn: old,
                        code: close_code::SESSION_REPLACED,
                        reason: reason.into(),
                    });
                    self.emit(Effect::Forget { conn: old });
                }
                self.seats[i].conn = Some(conn);
                self.seats[i].reattached = true;
                self.seats[i].grace_until = None;
                Member::Player(self.seats[i].id)
            }
            None => {
                self.spectators.push(conn);
                Member::Spectator
            }
        }
    }
}
