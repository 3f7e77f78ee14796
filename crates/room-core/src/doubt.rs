//! A durable write whose outcome is unknown (the database's answer to its `COMMIT` was
//! lost: `parchis_records::WriteFailure::Ambiguous`), decided against the stored room,
//! which is the authority (`docs/CLUSTER.md`, "Ownership details"). Pure: the actor
//! (`room/actor_doubt.rs`) reads the stored room and acts on the [`Verdict`].
//!
//! A write that appends to a game's log is told apart by the log: not applied while the
//! log still ends where the write started (and, for a game's end, the game is not
//! finished). Any other write (a seat, the room's status) is not looked for: the room is
//! rebuilt from its stored state whatever it shows, which is right either way.

use crate::persist::Write;
use parchis_records::RoomSnapshot;
use uuid::Uuid;

/// What the stored room shows when a write in doubt was NOT applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Doubt {
    /// A write of game `game_id`'s events (a start, an append, an end): not applied iff
    /// the stored log of that game still ends at seq `before` (0: no such game, or no
    /// event) and, when the write `ends` the game, the game is not finished.
    Log {
        /// The game written.
        game_id: Uuid,
        /// The last seq stored before the write.
        before: u64,
        /// The write finishes the game.
        ends: bool,
    },
    /// A write the log does not show (a seat, the room's status, the deadline column).
    Records,
}

/// What the stored room says about a write in doubt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The write was not applied: the room carries on as it is.
    NotApplied,
    /// The write was applied, or the stored room differs from the live one some other
    /// way, or the write cannot be told apart: the room is rebuilt from its stored state.
    Rebuild,
}

impl Doubt {
    /// What to look for after `write` got no answer.
    pub fn of(write: &Write) -> Doubt {
        match write {
            Write::Start(start) => Doubt::Log {
                game_id: start.game.id,
                before: 0,
                ends: false,
            },
            Write::Append {
                game_id, after_seq, ..
            } => Doubt::Log {
                game_id: *game_id,
                before: *after_seq,
                ends: false,
            },
            Write::End(end) => Doubt::Log {
                game_id: end.game_id,
                before: u64::try_from(end.after_seq).unwrap_or(0),
                ends: true,
            },
            Write::UpsertSeat(_)
            | Write::DeleteSeat { .. }
            | Write::RoomStatus(_)
            | Write::SetDeadline { .. } => Doubt::Records,
            // One transaction: its log write, if it has one, tells whether it applied.
            Write::Batch(writes) => writes
                .iter()
                .map(Doubt::of)
                .find(|d| matches!(d, Doubt::Log { .. }))
                .unwrap_or(Doubt::Records),
        }
    }

    /// The verdict of the stored room `stored` (`None`: the room is not stored at all,
    /// which the rebuild then finds out).
    pub fn judge(&self, stored: Option<&RoomSnapshot>) -> Verdict {
        let (
            Doubt::Log {
                game_id,
                before,
                ends,
            },
            Some(stored),
        ) = (self, stored)
        else {
            return Verdict::Rebuild;
        };
        let game = stored.game.as_ref().filter(|g| g.id == *game_id);
        // The last seq stored in either format (the packed log's, else the rows').
        let last = match game {
            Some(_) => u64::try_from(stored.last_seq()).unwrap_or(0),
            None => 0,
        };
        let finished = game.is_some_and(|g| g.is_finished());
        if last == *before && !(*ends && finished) {
            Verdict::NotApplied
        } else {
            Verdict::Rebuild
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_records::{EventRecord, GameRecord, RoomRecord, RoomStatus, SeatRecord};
    use serde_json::json;

    const GAME: Uuid = Uuid::from_u128(7);

    fn game(id: Uuid, finished: bool) -> GameRecord {
        GameRecord {
            id,
            room_code: "DOUBT1".into(),
            preset: "online".into(),
            rules_hash: String::new(),
            rules: json!({}),
            created_at_ms: 1,
            finished_at_ms: finished.then_some(9),
            result: finished.then(|| json!({})),
            reason: finished.then(|| "completed".into()),
            deadline_ms: None,
            dice: None,
        }
    }

    /// The stored room with `game` and its events `1..=last`.
    fn stored(game: Option<GameRecord>, last: i64) -> RoomSnapshot {
        RoomSnapshot {
            room: RoomRecord {
                code: "DOUBT1".into(),
                settings: json!({}),
                status: RoomStatus::Playing,
                created_at_ms: 1,
                started_at_ms: Some(1),
                finished_at_ms: None,
                updated_at_ms: 1,
            },
            seats: Vec::new(),
            events: (1..=last)
                .map(|seq| EventRecord {
                    seq,
                    event: json!({}),
                    created_at_ms: 1,
                })
                .collect(),
            game,
            log: None,
        }
    }

    /// The stored room with `game` and a packed log whose last seq is `last`.
    fn packed(game: Option<GameRecord>, last: i64) -> RoomSnapshot {
        RoomSnapshot {
            events: Vec::new(),
            log: Some(parchis_records::PackedLog {
                bytes: vec![1],
                last_seq: last,
            }),
            ..stored(game, 0)
        }
    }

    fn append(after_seq: u64) -> Write {
        Write::Append {
            game_id: GAME,
            after_seq,
            events: Vec::new(),
            piece: None,
        }
    }

    #[test]
    fn a_packed_log_tells_where_it_ends() {
        let doubt = Doubt::of(&append(12));
        let live = Some(game(GAME, false));
        assert_eq!(
            doubt.judge(Some(&packed(live.clone(), 12))),
            Verdict::NotApplied
        );
        assert_eq!(doubt.judge(Some(&packed(live, 13))), Verdict::Rebuild);
    }

    #[test]
    fn an_append_is_applied_when_the_log_went_past_where_it_started() {
        let doubt = Doubt::of(&append(12));
        assert_eq!(
            doubt,
            Doubt::Log {
                game_id: GAME,
                before: 12,
                ends: false
            }
        );
        let live = Some(game(GAME, false));
        assert_eq!(
            doubt.judge(Some(&stored(live.clone(), 12))),
            Verdict::NotApplied
        );
        assert_eq!(
            doubt.judge(Some(&stored(live.clone(), 14))),
            Verdict::Rebuild
        );
        // Behind the room: not this write, but the room differs from its log all the same.
        assert_eq!(doubt.judge(Some(&stored(live, 11))), Verdict::Rebuild);
        assert_eq!(doubt.judge(None), Verdict::Rebuild, "no stored room");
    }

    #[test]
    fn a_start_is_applied_when_its_game_is_stored() {
        let previous = Uuid::from_u128(6);
        let start = Doubt::Log {
            game_id: GAME,
            before: 0,
            ends: false,
        };
        // No game yet, or only the previous one (a rematch): not applied.
        assert_eq!(start.judge(Some(&stored(None, 0))), Verdict::NotApplied);
        assert_eq!(
            start.judge(Some(&stored(Some(game(previous, true)), 40))),
            Verdict::NotApplied
        );
        assert_eq!(
            start.judge(Some(&stored(Some(game(GAME, false)), 3))),
            Verdict::Rebuild
        );
    }

    #[test]
    fn an_end_is_applied_when_the_game_is_finished_even_without_events() {
        let end = Doubt::Log {
            game_id: GAME,
            before: 30,
            ends: true,
        };
        assert_eq!(
            end.judge(Some(&stored(Some(game(GAME, false)), 30))),
            Verdict::NotApplied
        );
        assert_eq!(
            end.judge(Some(&stored(Some(game(GAME, true)), 30))),
            Verdict::Rebuild
        );
        assert_eq!(
            end.judge(Some(&stored(Some(game(GAME, true)), 31))),
            Verdict::Rebuild
        );
    }

    #[test]
    fn a_seat_write_is_never_told_apart_the_room_is_rebuilt() {
        let seat = Write::UpsertSeat(SeatRecord {
            room_code: "DOUBT1".into(),
            colour: "red".into(),
            display_name: "Ana".into(),
            token_hash: String::new(),
            is_creator: true,
            joined_at_ms: 1,
            bot: None,
            account_id: None,
        });
        assert_eq!(Doubt::of(&seat), Doubt::Records);
        assert_eq!(
            Doubt::Records.judge(Some(&stored(None, 0))),
            Verdict::Rebuild
        );
    }
}
