//! The room stops here in the middle of its work and moves (cluster mode: lease lost,
//! write fenced, drain's hand-off): each command it will not carry out gets its one
//! reply, `room_unavailable` (nothing of it applied; sent again, it reaches the new owner;
//! `docs/CLUSTER.md`, "Every relayed command gets exactly one reply").

use super::{Actor, RoomCmd};
use crate::room::{ConnId, Refusal};
use parchis_protocol::ErrorCode;
use tokio::sync::mpsc;

impl Actor {
    /// The room stops here and moves: the commands still queued are not handled here, so
    /// each gets its one reply now, `room_unavailable` (nothing applied; sent again, they
    /// reach the new owner). Queued entries get theirs when their reply channel drops.
    pub(super) fn refuse_queued(&mut self, rx: &mut mpsc::Receiver<RoomCmd>) {
        rx.close();
        while let Ok(cmd) = rx.try_recv() {
            if let RoomCmd::Command { conn, req, .. } = cmd {
                self.refuse(conn, req);
            }
        }
    }

    /// The room stops in the middle of a step: every command the core still owes a
    /// reply gets `room_unavailable` (nothing of it was applied here).
    pub(super) fn refuse_owed(&mut self) {
        for (conn, req) in self.core.abandon_step() {
            self.refuse(conn, req);
        }
    }

    /// `room_unavailable` for request `req` to connection `conn`, if it is still here.
    fn refuse(&self, conn: ConnId, req: u64) {
        if let Some(link) = self.links.get(&conn) {
            let refusal = Refusal::code(ErrorCode::RoomUnavailable);
            link.send(crate::room::encode(&refusal.to_message(Some(req))));
        }
    }
}
