//! The room's way to reach a connection task: its bounded outbound queue and its kick
//! switch. Held by the actor only; the core names connections by [`ConnId`].

use super::ConnId;
use crate::Frame;
use parchis_protocol::close_code;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Tells a connection task to close, with a WebSocket close code and reason.
#[derive(Clone, Debug, Default)]
pub struct Kick {
    token: CancellationToken,
    reason: Arc<Mutex<Option<(u16, String)>>>,
}

impl Kick {
    /// Asks the connection to close; the first reason given wins.
    pub fn kick(&self, code: u16, reason: &str) {
        let mut r = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if r.is_none() {
            *r = Some((code, reason.to_owned()));
        }
        drop(r);
        self.token.cancel();
    }

    /// Resolves once kicked.
    pub async fn kicked(&self) {
        self.token.cancelled().await
    }

    /// The close code and reason, once kicked.
    pub fn reason(&self) -> Option<(u16, String)> {
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Bytes queued for a connection and not yet written to its socket: the room adds a
/// frame's length when it queues it, the connection's writer subtracts it once written.
#[derive(Clone, Debug, Default)]
pub struct Unwritten(Arc<AtomicUsize>);

impl Unwritten {
    /// Bytes queued and not yet written.
    pub fn bytes(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    /// `n` bytes were written to the socket.
    pub fn written(&self, n: usize) {
        // Never below zero, even if a caller reports more than was queued.
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some(b.saturating_sub(n))
            });
    }
}

/// The room's way to reach one connection: its bounded outbound queue and its kick switch.
/// A slow consumer is measured by bytes not yet written ([`Unwritten`], at most
/// `max_unwritten`) — the connection's writer adds the time a frame may wait to be
/// written — not by a frame count, so a reader that keeps up is never dropped for a burst
/// of small frames.
#[derive(Clone, Debug)]
pub struct ConnLink {
    /// The connection.
    pub id: ConnId,
    /// Outbound queue of encoded JSON frames (bounded in frames as a backstop).
    pub tx: mpsc::Sender<Frame>,
    /// Closes the connection.
    pub kick: Kick,
    /// Bytes queued and not yet written.
    pub unwritten: Unwritten,
    /// The most bytes that may wait unwritten before the connection is dropped.
    pub max_unwritten: usize,
    /// The accounts whose emotes this connection does not get (its player blocked them,
    /// issue 26); empty for a guest.
    pub mutes: Mutes,
}

/// The accounts a connection's player blocked (read when the connection opened): their
/// emotes are not sent to it.
#[derive(Clone, Debug, Default)]
pub struct Mutes(Arc<Vec<uuid::Uuid>>);

impl Mutes {
    /// Mutes `accounts`.
    pub fn of(accounts: Vec<uuid::Uuid>) -> Mutes {
        Mutes(Arc::new(accounts))
    }

    /// Whether a frame from `account` is withheld (never for a guest's, `None`).
    pub fn mutes(&self, account: Option<uuid::Uuid>) -> bool {
        account.is_some_and(|a| self.0.contains(&a))
    }
}

impl ConnLink {
    /// Queues a frame without waiting. A queue over its byte limit (or its frame
    /// backstop) kicks the connection as a slow consumer (4001) and returns `false`.
    pub fn send(&self, msg: Frame) -> bool {
        let len = msg.len();
        if self.unwritten.bytes() + len > self.max_unwritten {
            self.kick.kick(
                close_code::SLOW_CONSUMER,
                "too many bytes not read: read faster",
            );
            return false;
        }
        self.unwritten.0.fetch_add(len, Ordering::Relaxed);
        match self.tx.try_send(msg) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.unwritten.written(len);
                self.kick.kick(
                    close_code::SLOW_CONSUMER,
                    "outbound queue overflow: read faster",
                );
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.unwritten.written(len);
                false
            }
        }
    }
}
