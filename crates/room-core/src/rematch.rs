//! Rematch (issue 17): after a game, every player still in the room can ask to play again
//! with the same seats and settings; the new game starts when all of them have asked
//! (bots always agree). The decision is here; the start is the room's ordinary start
//! ([`Core::start`]), with its one durable write.

use crate::core::Core;
use crate::{ConnId, Ms, Refusal};
use parchis_engine::Colour;
use parchis_protocol::{ErrorCode, RoomEvent, RoomStatus};

/// Whether every seat still in the game agrees: `seats` are (colour, abandoned, bot);
/// people must be in `wanted`, bots always agree, abandoned seats are not asked.
pub fn all_agree(seats: impl IntoIterator<Item = (Colour, bool, bool)>, wanted: &[Colour]) -> bool {
    seats
        .into_iter()
        .filter(|&(_, abandoned, _)| !abandoned)
        .all(|(colour, _, bot)| bot || wanted.contains(&colour))
}

impl Core {
    /// Seat `seat_id` asks for a rematch. Refused before the game ends
    /// (`game_not_started`, `game_started`), for a seat that abandoned (`not_joined`) and
    /// when fewer than two players stayed in a room without bots (`not_enough_players`);
    /// a refusal announces nothing.
    /// Everyone hears `rematch_wanted`; once everyone still seated agrees, the abandoned
    /// seats are freed, `rematch` is announced and the room starts a new game with the
    /// same settings (by its creator, or the first seat when the creator has gone). These
    /// events are not stored (the finished game's log stays as it ended; the new game's
    /// log starts with its own `game_started`).
    pub(super) fn rematch(&mut self, seat_id: u64, conn: ConnId, req: u64, now: Ms) {
        match self.status {
            RoomStatus::Lobby => {
                return self.reply_err(conn, req, &Refusal::code(ErrorCode::GameNotStarted))
            }
            RoomStatus::Playing => {
                return self.reply_err(conn, req, &Refusal::code(ErrorCode::GameStarted))
            }
            RoomStatus::Finished => {}
        }
        let Some(i) = self.seat_index(seat_id) else {
            return self.reply_err(conn, req, &Refusal::code(ErrorCode::NotJoined));
        };
        if self.seats[i].abandoned {
            let refusal = Refusal::new(
                ErrorCode::NotJoined,
                "you abandoned that game; a rematch is for the players who stayed",
            );
            return self.reply_err(conn, req, &refusal);
        }
        // Refused before anything is announced: an error changes nothing (a lone player
        // left, without bots, could never get a rematch).
        let staying = self.seats.iter().filter(|s| !s.abandoned).count();
        if staying < 2 && self.settings.bots.is_none() {
            let refusal = Refusal::new(
                ErrorCode::NotEnoughPlayers,
                "a rematch needs at least two players still in the room",
            );
            return self.reply_err(conn, req, &refusal);
        }
        let colour = self.seats[i].colour;
        if !self.rematch.contains(&colour) {
            self.rematch.push(colour);
            self.broadcast_events(vec![RoomEvent::RematchWanted { colour }], now, None);
        }
        let seats = self
            .seats
            .iter()
            .map(|s| (s.colour, s.abandoned, s.bot.is_some()));
        if !all_agree(seats, &self.rematch) {
            return self.reply_ok(conn, req);
        }
        crate::note!(self, Info, "rematch: everyone agreed", "");
        self.rematch.clear();
        self.status = RoomStatus::Lobby;
        self.game = None;
        self.game_id = None;
        self.deadline = None;
        let gone: Vec<u64> = self
            .seats
            .iter()
            .filter(|s| s.abandoned)
            .map(|s| s.id)
            .collect();
        let mut releases = Vec::new();
        for id in gone {
            releases.extend(self.release_abandoned_seat(id, now));
        }
        self.broadcast_events(vec![RoomEvent::Rematch], now, None);
        let creator = self.seats.iter().position(|s| s.creator).unwrap_or(0);
        self.start(creator, conn, req, now, releases);
    }
}

#[cfg(test)]
mod tests {
    use super::all_agree;
    use parchis_engine::Colour::{Blue, Red, Yellow};

    #[test]
    fn everyone_still_seated_must_agree_bots_always_do() {
        let seats = [
            (Yellow, false, false),
            (Red, false, false),
            (Blue, false, true),
        ];
        assert!(!all_agree(seats, &[Yellow]));
        assert!(all_agree(seats, &[Yellow, Red]), "the bot agrees by itself");
        // A seat that abandoned is not asked.
        let seats = [(Yellow, false, false), (Red, true, false)];
        assert!(all_agree(seats, &[Yellow]));
    }
}
