//! The replies a room still owes when it stops here in the middle of a step (cluster
//! mode: a write refused as fenced, `docs/CLUSTER.md`). Every command gets exactly one
//! reply (proto/README.md): the step that waited for the refused write and the work
//! queued behind it are never carried out here, so each command among them is answered
//! `room_unavailable` instead (nothing of it was applied; sent again, it reaches the new
//! owner, and the seq check refuses a command applied already).

use crate::core::{Core, Staged, Then, Work};
use crate::{ConnId, Input};

impl Core {
    /// Drops the step waiting for its write and every queued work item, and returns the
    /// `(connection, req)` of each command among them, in order, that has had no reply
    /// yet. Pure: the caller sends the refusals. Only for a room that stops here; the
    /// core is not to be used afterwards.
    pub fn abandon_step(&mut self) -> Vec<(ConnId, u64)> {
        let mut owed = Vec::new();
        if let Some(staged) = self.staged.take() {
            owed.extend(staged_reply(&staged));
        }
        for work in std::mem::take(&mut self.queue) {
            owed.extend(work_reply(&work));
        }
        let mut seen = std::collections::HashSet::new();
        owed.retain(|o| seen.insert(*o));
        owed
    }
}

impl Core {
    /// The `(connection, req)` of the command the step waiting for its write would
    /// answer, if any (pure, changes nothing).
    pub fn staged_owed(&self) -> Option<(ConnId, u64)> {
        self.staged.as_ref().and_then(staged_reply)
    }
}

fn staged_reply(staged: &Staged) -> Option<(ConnId, u64)> {
    match staged {
        Staged::Join { conn, req, .. } | Staged::Colour { conn, req, .. } => Some((*conn, *req)),
        Staged::Start(plan) if plan.director => None,
        Staged::Start(plan) => Some((plan.conn, plan.req)),
        Staged::Events(commit) => match commit.then {
            Then::Reply { conn, req } => Some((conn, req)),
            _ => None,
        },
        Staged::TakeOver { .. } | Staged::Leave { .. } => None,
    }
}

fn work_reply(work: &Work) -> Option<(ConnId, u64)> {
    match work {
        Work::Checked { conn, req, .. } | Work::ReplyOk { conn, req, .. } => Some((*conn, *req)),
        Work::Input(
            Input::Join { conn, req, .. }
            | Input::Watch { conn, req }
            | Input::Resume { conn, req, .. }
            | Input::Command { conn, req, .. },
        ) => Some((*conn, *req)),
        _ => None,
    }
}
