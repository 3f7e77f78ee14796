//! A single node's rebuild of a room whose stored state is ahead of the live one
//! (`RoomEnd::Rebuild`: a write whose commit got no answer was applied, or a write was
//! refused as not following the stored log). The stopped actor has deregistered; the room
//! comes back through the restart's [`restore`] from what is stored, which is the
//! authority: seats, the game replayed from its log (history and seq included), a fresh
//! turn clock. Its connections are then told to reconnect and `resume` (1012), and get
//! every event after the last one they had from the rebuilt history. In cluster mode the
//! lease is released and the room adopted again instead
//! (the cluster's [`crate::Host::ended`]).

use crate::restore::{restore, RestoreError};
use crate::rooms::Rooms;
use futures_util::future::BoxFuture;
use parchis_room_core::Restored;
use std::time::Duration;
use tracing::{error, info, warn};

/// Pause between two attempts while the store cannot be read or written.
pub const REBUILD_RETRY: Duration = Duration::from_secs(1);

/// What one attempt at a rebuild came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// The room runs again (or it had ended and is closed): done.
    Done,
    /// The store failed (read or a write of the restore): try again.
    Again,
    /// The stored room is missing or does not restore: it stays closed, as after a
    /// restart.
    GiveUp,
}

/// What to do after a restore that ended so (pure).
pub fn after(result: &Result<Restored, RestoreError>) -> Attempt {
    match result {
        Ok(Restored::Running | Restored::Over) => Attempt::Done,
        Err(RestoreError::Store(_)) => Attempt::Again,
        Err(
            RestoreError::Unreadable(_)
            | RestoreError::Diverged(_)
            | RestoreError::Register
            | RestoreError::Fenced,
        ) => Attempt::GiveUp,
    }
}

/// Rebuilds room `code` from the store on this node (module docs), trying again every
/// [`REBUILD_RETRY`] while the store fails, until the server shuts down. Resolves to
/// whether the room runs again.
///
/// Boxed: the stopped actor awaits it, and it starts the new actor (whose task may one
/// day await it again), so its future names no opaque type of its own.
pub fn rebuild_here<'a>(rooms: &'a Rooms, code: &'a str) -> BoxFuture<'a, bool> {
    Box::pin(rebuild(rooms, code))
}

async fn rebuild(rooms: &Rooms, code: &str) -> bool {
    let shutdown = rooms.shutdown_token();
    loop {
        let attempt = match rooms.store().get_room(code).await {
            Ok(Some(snapshot)) => {
                let result = restore(rooms, &snapshot, None).await;
                match &result {
                    Ok(restored) => {
                        info!(room = %code, restored = ?restored, "room rebuilt from its stored state")
                    }
                    Err(e) => warn!(room = %code, error = %e, "room rebuild failed"),
                }
                if matches!(result, Ok(Restored::Running)) {
                    return true;
                }
                after(&result)
            }
            Ok(None) => {
                error!(room = %code, "room rebuild: the room is not stored; it stays closed");
                Attempt::GiveUp
            }
            Err(e) => {
                warn!(room = %code, error = %e, "room rebuild: the stored room could not be read; trying again");
                Attempt::Again
            }
        };
        if attempt != Attempt::Again {
            return false;
        }
        tokio::select! {
            _ = shutdown.cancelled() => return false,
            _ = tokio::time::sleep(REBUILD_RETRY) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_store_failure_is_tried_again() {
        assert_eq!(after(&Ok(Restored::Running)), Attempt::Done);
        assert_eq!(after(&Ok(Restored::Over)), Attempt::Done);
        assert_eq!(
            after(&Err(RestoreError::Store("connection reset".into()))),
            Attempt::Again
        );
        assert_eq!(
            after(&Err(RestoreError::Diverged("seq 4".into()))),
            Attempt::GiveUp
        );
        assert_eq!(
            after(&Err(RestoreError::Unreadable("bad json".into()))),
            Attempt::GiveUp
        );
        assert_eq!(after(&Err(RestoreError::Register)), Attempt::GiveUp);
    }
}
