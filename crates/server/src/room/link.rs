//! The room's way to reach a connection task: its bounded outbound queue and its kick
//! switch. Held by the actor only; the core names connections by [`ConnId`].

use super::ConnId;
use parchis_protocol::close_code;
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

/// The room's way to reach one connection: its bounded outbound queue and its kick switch.
#[derive(Clone, Debug)]
pub struct ConnLink {
    /// The connection.
    pub id: ConnId,
    /// Outbound queue of encoded JSON frames.
    pub tx: mpsc::Sender<Arc<str>>,
    /// Closes the connection.
    pub kick: Kick,
}

impl ConnLink {
    /// Queues a frame without waiting. A full queue kicks the connection as a slow
    /// consumer and returns `false`.
    pub fn send(&self, msg: Arc<str>) -> bool {
        match self.tx.try_send(msg) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.kick.kick(
                    close_code::SLOW_CONSUMER,
                    "outbound queue overflow: read faster",
                );
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}
