//! The edge side (`docs/CLUSTER.md`, "Routing: relayed connections"): local sockets whose
//! room runs on another node. This module keeps them ([`Edge`], each with its [`Relay`])
//! ; the node's one subscription on `P.edge.<me>` is dispatched by
//! `routing::edge_in`: each frame reaches the queue of every socket a line of its message
//! names, after that link's relay's checks (generation, the link's counter, duplicates,
//! replies nobody waits for); a gap, the owner's `end`, a `moved` notice or a rehome makes
//! the connection reattach (`routing::reattach`). Requests to the owner are in
//! `routing::ask`, the client's attach and commands in `routing::forward`.
//!
//! Every relayed command gets exactly one reply: the owner's, or the edge's own. The edge
//! says `room_unavailable` (nothing was applied) only when it knows the owner never took
//! the command (`routing::forward`); when the link it waited on is given up, or no reply
//! came within [`REPLY_WINDOW`], it cannot know and says `outcome_unknown`
//! (`Edge::answer_unknown`).

use super::metrics::{self as m};
use super::relay::Relay;
use parchis_protocol::ErrorCode;
use parchis_room::{now_ms, ConnId, ConnLink, Reattach, Refusal};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{oneshot, Notify};
use tracing::{debug, info};

/// How long a command the owner took may go without its reply before the edge answers
/// it `outcome_unknown` (its owner died and nobody took the room over yet).
pub const REPLY_WINDOW: Duration = Duration::from_secs(10);
/// How often the edge looks for commands past [`REPLY_WINDOW`].
pub const REPLY_SWEEP: Duration = Duration::from_secs(1);
/// How often a command waiting for a reattach looks again.
const SETTLE_POLL: Duration = Duration::from_millis(10);

/// One relayed connection.
pub(crate) struct EdgeConn {
    pub(crate) link: ConnLink,
    pub(crate) room: String,
    pub(crate) relay: Relay,
    /// What it is in the room, once known (from its `welcome`, or the rehome).
    pub(crate) reattach: Option<Reattach>,
    pub(crate) reattaching: bool,
    /// It sent `leave`: the owner's `end` closes the relay quietly.
    pub(crate) leaving: bool,
    /// Wakes a waiting reattach (a `moved` notice, another gap, the `welcome`).
    pub(crate) wake: Arc<Notify>,
    /// The room's owner as the last `moved` notice (or attach answer) named it.
    pub(crate) owner: Option<String>,
    /// The lease epoch of that notice or answer (0: none yet): a notice, an attach answer,
    /// an `end` or a `kick` of an older epoch is a stale owner's, and ignored.
    pub(crate) epoch: i64,
    /// The `leave` waiting for its reply, and who waits for its outcome (`true`: `ok`).
    pub(crate) leave_reply: Option<(u64, oneshot::Sender<bool>)>,
}

impl EdgeConn {
    /// The owner `node` at lease `epoch` answered this connection's attach: `false` if
    /// it is stale (the connection followed a later epoch already: that owner lost the
    /// room and does not know yet, e.g. resumed after SIGSTOP), else it is followed from
    /// now on (the connection's requests name it). An answer without an epoch (a node
    /// that does not say) changes nothing.
    pub(crate) fn follow_owner(&mut self, epoch: Option<i64>, node: Option<String>) -> bool {
        let Some(epoch) = epoch else {
            return true;
        };
        if super::wire::is_stale(Some(epoch), self.epoch) {
            return false;
        }
        self.epoch = epoch;
        if node.is_some() {
            self.owner = node;
        }
        true
    }

    /// The reply to command `req` was delivered (`ok`: it was an `ok`): a `leave` that
    /// waited for it learns its outcome; a refused one keeps the connection in the room.
    pub(crate) fn replied(&mut self, req: u64, ok: bool) {
        if let Some((_, outcome)) = self.leave_reply.take_if(|(r, _)| *r == req) {
            if !ok {
                self.leaving = false;
            }
            let _ = outcome.send(ok);
        }
    }

    /// Answers `reqs` `outcome_unknown` ([`Edge::answer_unknown`]); a `leave` among them
    /// keeps the connection in the room (the client resumes to learn the outcome).
    pub(crate) fn answer_unknown(&mut self, reqs: &[u64], why: &'static str) {
        Edge::answer_unknown(&self.link, reqs, why);
        for &req in reqs {
            self.replied(req, false);
        }
    }
}

/// This node's relayed connections, by local connection id.
#[derive(Default)]
pub struct Edge {
    conns: Mutex<HashMap<ConnId, EdgeConn>>,
}

impl Edge {
    pub(crate) fn lock(&self) -> MutexGuard<'_, HashMap<ConnId, EdgeConn>> {
        self.conns.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `link` as relayed for `room` under generation `gen` (before its attach
    /// is sent, so the frames that answer it are not lost).
    pub fn register(
        &self,
        link: ConnLink,
        room: &str,
        gen: u64,
        last_seq: u64,
        reattach: Option<Reattach>,
    ) {
        let conn = link.id;
        self.lock().insert(
            conn,
            EdgeConn {
                link,
                room: room.to_owned(),
                relay: Relay::new(gen, last_seq),
                reattach,
                reattaching: false,
                leaving: false,
                wake: Arc::new(Notify::new()),
                owner: None,
                epoch: 0,
                leave_reply: None,
            },
        );
    }

    /// Forgets connection `conn` (closed, refused); `gen`: only if still that attach.
    pub fn forget(&self, conn: ConnId, gen: Option<u64>) {
        let mut conns = self.lock();
        if gen.is_none_or(|g| conns.get(&conn).is_some_and(|e| e.relay.gen() == g)) {
            conns.remove(&conn);
        }
    }

    /// Connection `conn` is about to forward `leave` as command `req`: the owner's `end`
    /// that follows its `ok` closes the relay quietly; the receiver tells the leave's
    /// outcome once its reply is delivered (`true`: `ok`; `false`: refused, or answered by
    /// the edge). `None` if `conn` is not relayed.
    pub fn leaving(&self, conn: ConnId, req: u64) -> Option<oneshot::Receiver<bool>> {
        let mut conns = self.lock();
        let e = conns.get_mut(&conn)?;
        let (tx, rx) = oneshot::channel();
        e.leaving = true;
        e.leave_reply = Some((req, tx));
        Some(rx)
    }

    /// The gen of relayed connection `conn`'s current link.
    pub fn gen_of(&self, conn: ConnId) -> Option<u64> {
        self.lock().get(&conn).map(|e| e.relay.gen())
    }

    /// Whether relayed connection `conn` is reattaching.
    pub fn is_reattaching(&self, conn: ConnId) -> bool {
        self.lock().get(&conn).is_some_and(|e| e.reattaching)
    }

    /// Waits (at most `bound`) until connection `conn` is not reattaching; whether it
    /// settled.
    pub async fn settled(&self, conn: ConnId, bound: Duration) -> bool {
        let until = tokio::time::Instant::now() + bound;
        while self.is_reattaching(conn) {
            if tokio::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(SETTLE_POLL).await;
        }
        true
    }

    /// The room of relayed connection `conn`.
    pub fn room_of(&self, conn: ConnId) -> Option<String> {
        self.lock().get(&conn).map(|e| e.room.clone())
    }

    /// Command `req` of connection `conn` is about to be forwarded: its reply is waited
    /// for from now on. `false` if `conn` is not relayed.
    pub fn sent(&self, conn: ConnId, req: u64) -> bool {
        match self.lock().get_mut(&conn) {
            Some(e) => {
                e.relay.sent(req, now_ms());
                true
            }
            None => false,
        }
    }

    /// Where command `req` of `conn` goes now, if it still waits for its reply: the
    /// current link's generation and the owner a `moved` notice named.
    pub fn route(&self, conn: ConnId, req: u64) -> Option<(u64, Option<String>)> {
        let conns = self.lock();
        let e = conns.get(&conn)?;
        e.relay.waits(req).then(|| (e.relay.gen(), e.owner.clone()))
    }

    /// The edge answers command `req` of `conn` itself: `true` if nobody had (the caller
    /// answers it now).
    pub fn claim(&self, conn: ConnId, req: u64) -> bool {
        let mut conns = self.lock();
        let Some(e) = conns.get_mut(&conn) else {
            return false;
        };
        let claimed = e.relay.claim(req);
        if claimed {
            e.replied(req, false);
        }
        claimed
    }

    /// Answers `reqs` of `link` with `outcome_unknown`: they were (or may have been)
    /// forwarded and their owner's reply will not come on this link, so the edge cannot
    /// tell whether they were applied. The client resumes and reads the events (sending
    /// one again is safe: applied already, it is refused as stale).
    pub(crate) fn answer_unknown(link: &ConnLink, reqs: &[u64], why: &'static str) {
        for &req in reqs {
            debug!(
                conn = link.id,
                req, why, "relayed command answered by the edge: outcome unknown"
            );
            m::forwarded(why);
            parchis_telemetry::observe::refused(ErrorCode::OutcomeUnknown);
            let refusal = Refusal::code(ErrorCode::OutcomeUnknown);
            link.send(parchis_room::encode(&refusal.to_message(Some(req))));
        }
    }

    /// Answers every command waiting past [`REPLY_WINDOW`] at `now` (unix ms).
    pub fn answer_overdue(&self, now: i64) {
        let window = REPLY_WINDOW.as_millis() as i64;
        for e in self.lock().values_mut() {
            let late = e.relay.overdue(now, window);
            if !late.is_empty() {
                info!(room = %e.room, conn = e.link.id, late = ?late, "relayed commands unanswered by their owner: answered outcome_unknown");
                e.answer_unknown(&late, "no_reply");
            }
        }
    }

    /// The relayed connections of `room`, now owned by `owner` at lease `epoch`: those
    /// that had not followed a later epoch already (a stale notice, e.g. one delayed on
    /// the bus, names an owner that lost the room: it is ignored).
    pub(crate) fn moved(&self, room: &str, owner: &str, epoch: i64) -> Vec<ConnId> {
        self.lock()
            .iter_mut()
            .filter(|(_, e)| e.room == room && e.epoch <= epoch)
            .map(|(c, e)| {
                e.owner = Some(owner.to_owned());
                e.epoch = epoch;
                *c
            })
            .collect()
    }

    /// Every relayed connection of this node.
    pub(crate) fn conns(&self) -> Vec<ConnId> {
        self.lock().keys().copied().collect()
    }
}
