//! Rematch (issue 17): after a game, every player still in the room can ask to play again
//! with the same seats and settings; the new game starts when all of them have asked
//! (bots always agree). The decision is here; the start is the room's ordinary start
//! (`Core::start`), with its one durable write.

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

/// The players a rematch would start with, and whether that is enough: `staying` seats
/// that did not abandon, `bot_seats` the free seats bots would fill (0 without bots),
/// `min_players` the rule set's least (R-SEAT; never under 2). `Err` with the number
/// needed when the start would be refused: the rematch is then refused before any
/// abandoned seat is freed, so a seat row is only ever deleted in the start's own
/// transaction (docs/CLUSTER.md, "Stored seats and the log").
pub fn enough_to_start(staying: usize, bot_seats: usize, min_players: u8) -> Result<(), usize> {
    let need = usize::from(min_players).max(2);
    if staying + bot_seats < need {
        Err(need)
    } else {
        Ok(())
    }
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
        // left without bots, or fewer than the rule set needs, e.g. three of a `pairs`
        // room, could never start the rematch; its abandoned seats stay as stored).
        let staying = self.seats.iter().filter(|s| !s.abandoned).count();
        let bot_seats = match self.settings.bots {
            Some(_) => usize::from(self.settings.seats).saturating_sub(staying),
            None => 0,
        };
        if let Err(need) = enough_to_start(staying, bot_seats, self.rules.min_players) {
            let refusal = Refusal::new(
                ErrorCode::NotEnoughPlayers,
                format!("a rematch needs at least {need} players still in the room"),
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
    use super::{all_agree, enough_to_start};
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

    /// R-SEAT: a rematch starts only with as many players as its rule set needs (at
    /// least two), bots counted; otherwise it is refused before any seat is freed.
    #[test]
    fn r_seat_a_rematch_needs_the_rule_sets_players_bots_counted() {
        assert_eq!(enough_to_start(1, 0, 2), Err(2), "a lone player, no bots");
        assert_eq!(
            enough_to_start(1, 1, 2),
            Ok(()),
            "a bot takes the free seat"
        );
        assert_eq!(enough_to_start(2, 0, 2), Ok(()));
        assert_eq!(
            enough_to_start(3, 0, 4),
            Err(4),
            "pairs after an abandonment"
        );
        assert_eq!(enough_to_start(3, 1, 4), Ok(()), "pairs with bots");
        assert_eq!(enough_to_start(1, 0, 0), Err(2), "never under two");
    }
}
