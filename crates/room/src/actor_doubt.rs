//! A durable write whose commit got no answer (`WriteFailure::Ambiguous`: the connection
//! failed with the `COMMIT` sent): the room does not know whether its step is stored. It
//! reads the stored room at once, once the room's write transactions still running have
//! ended (`Store::wait_room_writes`: the write may still be committing), and decides
//! ([`Doubt::judge`]):
//!
//! * not applied: the step is refused as for a database out of reach ("nothing was
//!   applied; send it again") and the room carries on;
//! * applied (the stored log is ahead of the room), or a write the log does not show:
//!   the room stops and is rebuilt from its stored state ([`RoomEnd::Rebuild`]); the
//!   command is told it may have been applied, and its events reach the clients from the
//!   rebuilt room's history when they resume or reattach;
//! * the stored room cannot be read (the database is still away): the command is told
//!   its outcome is unknown and the room stays in doubt. It looks again every
//!   [`DOUBT_RETRY`], between two inputs; a durable write meanwhile is not attempted
//!   (refused as for a database out of reach: nothing of it is applied). Found not
//!   applied, the player to act gets a fresh full clock ([`Input::ClockOwed`], R-CLOCK):
//!   every write was refused while the doubt stood, their own commands and the timeout
//!   included, so the throw is not lost to the timeout that could not be written.

use super::Actor;
use crate::end::RoomEnd;
use parchis_room_core::core::{Input, WriteFailed};
use parchis_room_core::doubt::{Doubt, Verdict};
use parchis_room_core::persist::Write;
use parchis_store::WriteFailure;
use std::time::Duration;
use tracing::{info, warn};

/// How often a room in doubt reads its stored state again.
pub(super) const DOUBT_RETRY: Duration = Duration::from_secs(1);

impl Actor {
    /// Performs the durable write of a step ([`crate::Effect::Persist`]), refused
    /// while a doubt stands, and decides a doubt it raises (module docs). With the room stopping for a
    /// rebuild, the error is its reason and the step is abandoned by the caller.
    pub(super) async fn persist(&mut self, write: Write) -> Result<(), WriteFailed> {
        if self.doubt.is_some() {
            // Settled between two inputs only ([`Actor::retry_doubt`]), where a fresh
            // clock can follow: a timeout written here would take the throw.
            return Err(WriteFailed {
                message: "a write in doubt: the stored room could not be read yet".into(),
                kind: WriteFailure::Unreachable,
            });
        }
        let doubt = Doubt::of(&write);
        match self.write(write).await {
            Err(failed) if failed.kind == WriteFailure::Ambiguous && !self.is_stopping() => {
                self.doubt = Some(doubt);
                match self.settle_doubt().await {
                    Some(Verdict::NotApplied) => Err(WriteFailed {
                        message: failed.message,
                        kind: WriteFailure::Unreachable,
                    }),
                    Some(Verdict::Rebuild) => {
                        self.outcome_unknown = true;
                        Err(failed)
                    }
                    None => Err(failed),
                }
            }
            result => result,
        }
    }

    /// The doubt timer fired: looks at the stored room again. Found not applied, the
    /// player to act gets a fresh clock ([`Input::ClockOwed`]).
    pub(super) async fn retry_doubt(&mut self) {
        if self.settle_doubt().await == Some(Verdict::NotApplied) {
            self.input(Input::ClockOwed).await;
        }
    }

    /// Reads the stored room and decides the doubt, if any: `None` while it cannot be
    /// read (looked at again after [`DOUBT_RETRY`]). A [`Verdict::Rebuild`] stops the
    /// room ([`RoomEnd::Rebuild`]).
    async fn settle_doubt(&mut self) -> Option<Verdict> {
        let doubt = self.doubt.clone()?;
        let store = self.rooms.store().clone();
        let code = self.core.code().to_owned();
        let game = self.core.game_id();
        // The write in doubt may still be committing: its outcome is read once it ended.
        let read = match store.wait_room_writes(&code).await {
            Ok(()) => store.get_room(&code).await,
            Err(e) => Err(e),
        };
        let stored = match read {
            Ok(stored) => stored,
            Err(e) => {
                warn!(room = %code, game = ?game, error = %e, "a write in doubt: the stored room could not be read; trying again");
                self.doubt_retry = Some(tokio::time::Instant::now() + DOUBT_RETRY);
                return None;
            }
        };
        self.doubt = None;
        self.doubt_retry = None;
        let verdict = doubt.judge(stored.as_ref());
        match verdict {
            Verdict::NotApplied => {
                info!(room = %code, game = ?game, seq = self.core.seq(), "a write in doubt was not applied")
            }
            Verdict::Rebuild => {
                warn!(room = %code, game = ?game, seq = self.core.seq(), doubt = ?doubt, "a write in doubt: the stored room is ahead of the live one (or cannot be told apart): rebuilding it");
                self.ending.get_or_insert(RoomEnd::Rebuild);
            }
        }
        Some(verdict)
    }
}
