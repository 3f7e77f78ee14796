//! The room stops here in the middle of its work and moves (cluster mode: lease lost,
//! write fenced, drain's hand-off; any mode: rebuilt from its stored state): each command
//! it will not carry out gets its one reply, `room_unavailable` (nothing of it applied;
//! sent again, it reaches the new owner or the rebuilt room; `docs/CLUSTER.md`, "Every
//! relayed command gets exactly one reply"), except a command whose write may have been
//! applied, which is told so.

use super::{Actor, RoomCmd};
use crate::{ConnId, Refusal};
use parchis_protocol::ErrorCode;
use parchis_room_core::effect::{STORE_AMBIGUOUS, STORE_REBUILD};
use tokio::sync::mpsc;

impl Actor {
    /// The room stops here and moves: the commands still queued are not handled here, so
    /// each gets its one reply now, `room_unavailable` (nothing applied; sent again, they
    /// reach the new owner). Queued entries get theirs when their reply channel drops.
    pub(super) fn refuse_queued(&mut self, rx: &mut mpsc::Receiver<RoomCmd>) {
        rx.close();
        while let Ok(cmd) = rx.try_recv() {
            match cmd {
                RoomCmd::Command { conn, req, .. } | RoomCmd::Leave { conn, req, .. } => {
                    self.refuse(conn, req)
                }
                _ => {}
            }
        }
    }

    /// The room stops in the middle of a step: every command the core still owes a
    /// reply gets `room_unavailable` (nothing of it was applied here), except the one
    /// whose write may have been applied ([`Actor::outcome_unknown`]: it is told so).
    pub(super) fn refuse_owed(&mut self) {
        let unknown = std::mem::take(&mut self.outcome_unknown)
            .then(|| self.core.staged_owed())
            .flatten();
        for owed in self.core.abandon_step() {
            let refusal = if Some(owed) == unknown {
                Refusal::new(ErrorCode::OutcomeUnknown, STORE_AMBIGUOUS)
            } else if self.is_rebuilding() {
                Refusal::new(ErrorCode::RoomUnavailable, STORE_REBUILD)
            } else {
                Refusal::code(ErrorCode::RoomUnavailable)
            };
            self.refuse_with(owed, &refusal);
        }
    }

    /// `room_unavailable` for request `req` to connection `conn`, if it is still here.
    fn refuse(&self, conn: ConnId, req: u64) {
        let refusal = if self.is_rebuilding() {
            Refusal::new(ErrorCode::RoomUnavailable, STORE_REBUILD)
        } else {
            Refusal::code(ErrorCode::RoomUnavailable)
        };
        self.refuse_with((conn, req), &refusal);
    }

    /// `refusal` for request `req` to connection `conn`, if it is still here.
    fn refuse_with(&self, (conn, req): (ConnId, u64), refusal: &Refusal) {
        if let Some(link) = self.links.get(&conn) {
            link.send(crate::encode(&refusal.to_message(Some(req))));
        }
    }
}
