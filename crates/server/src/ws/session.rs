//! A WebSocket session's state (its connection, its room, its rate and error budgets) and
//! the helpers every part of the session uses: sending, refusing with the error budget,
//! the command rate.

use crate::state::AppState;
use parchis_cluster::routing::RouteCell;
use parchis_protocol::{close_code, ErrorCode, ServerMessage};
use parchis_room::{encode, ConnLink, Refusal};
use std::collections::{HashSet, VecDeque};
use std::net::IpAddr;
use tokio::time::Instant;
use tracing::debug;

/// The room a session joined: its code and where its commands go (a local actor, or the
/// owner on another node in cluster mode; [`routing::rehome`] may swap it).
pub(super) struct Joined {
    pub(super) code: String,
    pub(super) cell: RouteCell,
}

pub(super) struct Session {
    pub(super) state: AppState,
    pub(super) ip: IpAddr,
    /// The logged-in player whose session or token came with the upgrade, if any.
    pub(super) account: Option<crate::accounts::auth::User>,
    pub(super) link: ConnLink,
    pub(super) joined: Option<Joined>,
    pub(super) seen: HashSet<u64>,
    pub(super) seen_order: VecDeque<u64>,
    pub(super) tokens: f64,
    pub(super) refilled: Instant,
    pub(super) errors: VecDeque<Instant>,
}

pub(super) enum Flow {
    Continue,
    Close,
}

impl Session {
    pub(super) fn send(&self, msg: &ServerMessage) {
        self.link.send(encode(msg));
    }

    /// Reports an error to the client; too many in the window closes the connection.
    pub(super) fn error(
        &mut self,
        req: Option<u64>,
        code: ErrorCode,
        message: impl Into<String>,
    ) -> Flow {
        self.refuse(
            req,
            Refusal {
                code,
                message: message.into(),
                rule: None,
            },
        )
    }

    pub(super) fn refuse(&mut self, req: Option<u64>, r: Refusal) -> Flow {
        parchis_telemetry::observe::refused(r.code);
        self.send(&r.to_message(req));
        if matches!(
            r.code,
            ErrorCode::RoomUnavailable
                | ErrorCode::OutcomeUnknown
                | ErrorCode::ShuttingDown
                | ErrorCode::Internal
        ) {
            // The server's doing (a room changing nodes, an owner that did not answer in
            // time, a drain, a fault of ours), not abuse: an honest client retries, within
            // its command rate, and is not closed for it.
            return Flow::Continue;
        }
        let cfg = self.state.config();
        let now = Instant::now();
        self.errors.push_back(now);
        while self
            .errors
            .front()
            .is_some_and(|t| now.duration_since(*t) > cfg.error_window)
        {
            self.errors.pop_front();
        }
        if self.errors.len() > cfg.max_errors as usize {
            debug!("too many errors: closing");
            self.link
                .kick
                .kick(close_code::POLICY, "too many errors or commands");
            return Flow::Close;
        }
        Flow::Continue
    }

    pub(super) fn take_token(&mut self) -> bool {
        let rate = f64::from(self.state.config().commands_per_second.max(1));
        let now = Instant::now();
        let elapsed = now.duration_since(self.refilled).as_secs_f64();
        self.refilled = now;
        self.tokens = (self.tokens + elapsed * rate).min(rate * 2.0);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}
