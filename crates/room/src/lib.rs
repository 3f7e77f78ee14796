//! Rooms at run time: the thin tokio actor that drives each room's pure core
//! (`parchis-room-core`), the registry of room handles, and how rooms come to life
//! (create, restore, rebuild).
//!
//! * [`actor`] is the room's task: it owns the connections' queues and the store handle,
//!   executes the core's effects in order and keeps the write-ahead rule (a persist is the
//!   last effect of a batch; nothing of the step goes out until the write is durable). A
//!   write whose commit got no answer is settled against the stored room (`actor_doubt.rs`).
//! * [`rooms`] is the narrow context rooms run in ([`Rooms`]): the store, the registry, the
//!   room settings, the shutdown token and the [`Host`], "whoever hosts the rooms",
//!   called when a room is stored, starts, ends and when a write is fenced.
//!   [`SingleNode`] ([`single_node`]) is the host of a server on its own; the cluster
//!   crate implements it with leases, fencing and routing. The room never imports the
//!   cluster.
//! * [`mod@create`], [`mod@restore`] and [`rebuild`] bring rooms to life; [`end`] says why a room
//!   stopped and which connections it hands on; [`link`] is a connection as a room sees it
//!   (queue and kick switch); [`observed`] sends the core's observations to
//!   `parchis-telemetry`.
//!
//! Module order (each imports only modules before it in this list): `ids`, `link`, `end`,
//! `observed`, the types below (in this file), `rooms`, `actor`, `create`, `director`,
//! `restore`, `rebuild`, `single_node`.
//!
//! Connections send [`RoomCmd`]s through a bounded channel; joins and views are answered on
//! a oneshot, everything else goes to the connections' outbound queues, in order.

#![warn(missing_docs)]

pub mod actor;
pub mod create;
pub mod director;
pub mod end;
pub mod ids;
pub mod link;
pub mod observed;
pub mod rebuild;
pub mod restore;
pub mod rooms;
pub mod seat_ratings;
pub mod single_node;

#[cfg(test)]
mod tests;

pub use self::create::create;
pub use self::director::Opened;
pub use self::end::{Rehomed, RoomEnd};
pub use self::link::{ConnLink, Kick, Mutes, Unwritten};
pub use self::restore::{restore, RestoreError};
pub use self::rooms::{Host, Rooms, RoomsConfig};
pub use self::single_node::SingleNode;
pub use parchis_room_core::{
    encode, BotChoice, ConnId, Frame, Listing, Member, Ms, Reattach, Refusal, Restored, SeatCmd,
};

use parchis_engine::Colour;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, oneshot, watch};

/// Current unix time in milliseconds (read by the actor, never by the core).
pub fn now_ms() -> Ms {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The logged-in player of a [`RoomCmd::Join`] (issue 26).
#[derive(Debug, Clone, PartialEq)]
pub struct JoinAccount {
    /// The account's id.
    pub id: uuid::Uuid,
    /// Its display ratings by pool name, read from the store by the edge; the seat
    /// shows its room's pool's.
    pub ratings: std::collections::BTreeMap<String, i64>,
}

/// Messages to a room actor.
#[derive(Debug)]
pub enum RoomCmd {
    /// Take a seat.
    Join {
        /// The connection.
        link: ConnLink,
        /// Request id.
        req: u64,
        /// Display name.
        name: String,
        /// Wanted colour.
        colour: Option<Colour>,
        /// Client seed for the fair dice, if given (boxed, as `account`).
        client_seed: Option<Box<str>>,
        /// The logged-in player's account (`name` is its username), `None` for a guest.
        /// Boxed: it keeps the command small (clippy's `result_large_err`).
        account: Option<Box<JoinAccount>>,
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
    },
    /// Claim the seat reserved for `key` in a tournament director's room
    /// ([`parchis_room_core::reserved`]); answered like a join.
    Claim {
        /// The connection.
        link: ConnLink,
        /// Request id.
        req: u64,
        /// The reservation's key (the logged-in account, from the session).
        key: String,
        /// Client seed for the fair dice, if given.
        client_seed: Option<String>,
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
    },
    /// A tournament director's command ([`Rooms::direct`]).
    Director {
        /// What to do.
        cmd: parchis_room_core::reserved::DirectorCmd,
        /// The outcome, once what it changed is stored.
        reply: oneshot::Sender<Result<parchis_room_core::reserved::DirectorAnswer, Refusal>>,
    },
    /// Watch.
    Watch {
        /// The connection.
        link: ConnLink,
        /// Request id.
        req: u64,
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
    },
    /// Come back to a seat.
    Resume {
        /// The connection.
        link: ConnLink,
        /// Request id.
        req: u64,
        /// Session token; empty: the seat of `account`.
        token: String,
        /// Last seq seen.
        last_seq: u64,
        /// The logged-in account, to resume its seat without a token (issue 26).
        account: Option<uuid::Uuid>,
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
    },
    /// Cluster mode: a connection that was a member on another node (or before a lost
    /// frame) comes back as `reattach`, having seen every event up to `last_seq`
    /// ([`parchis_room_core::Input::Reattach`]: no `welcome`, only the missed events).
    Reattach {
        /// The connection.
        link: ConnLink,
        /// What it was.
        reattach: Reattach,
        /// Last event seq it was sent.
        last_seq: u64,
        /// The connection it was here before, if any (the same client: forgotten
        /// quietly).
        replaces: Option<ConnId>,
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
    },
    /// A command from a member; answered on its outbound queue.
    Command {
        /// The connection.
        conn: ConnId,
        /// Its membership.
        member: Member,
        /// Request id.
        req: u64,
        /// The seq it was based on.
        seq: u64,
        /// What to do.
        cmd: SeatCmd,
        /// When the connection read the command (for the action latency metric).
        received: tokio::time::Instant,
    },
    /// A member's `leave`, whose outcome its session waits for: `true` once the leave is
    /// stored and answered `ok`, `false` (or the sender dropped) when it was refused or
    /// not handled; the answer itself goes to the connection's queue like any command's.
    Leave {
        /// The connection.
        conn: ConnId,
        /// Its membership.
        member: Member,
        /// Request id.
        req: u64,
        /// The seq it was based on.
        seq: u64,
        /// When the connection read the command.
        received: tokio::time::Instant,
        /// Whether the connection left.
        outcome: oneshot::Sender<bool>,
    },
    /// The connection closed.
    Detach {
        /// The connection.
        conn: ConnId,
    },
    /// The room's public state.
    View {
        /// Where to answer.
        reply: oneshot::Sender<parchis_protocol::RoomView>,
    },
    /// A bot finished thinking (sent by the room's own blocking task).
    BotChose(BotChoice),
    /// Admin: the room with its connections.
    Inspect {
        /// Where to answer.
        reply: oneshot::Sender<parchis_protocol::AdminRoom>,
    },
    /// Admin: close the room (a running game ends `closed_by_admin`).
    Close {
        /// Where to answer.
        reply: oneshot::Sender<parchis_protocol::AdminCloseRoom>,
    },
    /// An administrator renamed account `account` `name`: its seats here show the new
    /// name ([`parchis_room_core::Core::rename_account`]).
    Rename {
        /// The account.
        account: uuid::Uuid,
        /// Its new username.
        name: String,
    },
    /// The ratings of `accounts` changed (a rated game of another room ended, an
    /// administrator reset them; issue 26): the seats they hold here show their ratings
    /// read again from the store ([`parchis_room_core::Core::rerate_account`]).
    Rerate {
        /// The accounts whose ratings changed.
        accounts: Vec<uuid::Uuid>,
    },
    /// A quick pairing's claim wait ran out: close the lobby
    /// ([`parchis_room_core::Core::close_lobby`]); the colours that had claimed, or
    /// `game_started`.
    CloseLobby {
        /// Where to answer.
        reply: oneshot::Sender<Result<Vec<parchis_engine::Colour>, Refusal>>,
    },
    /// Cluster mode: this node lost the room's lease. The room stops at once without
    /// writing anything, deregisters and moves its connections to the new owner
    /// (`docs/CLUSTER.md`, "Ownership").
    Stop {
        /// Why, for the log.
        why: &'static str,
    },
    /// Cluster mode drain: between two inputs the room stops writing, deregisters,
    /// releases its lease and answers with its local connections (the drain has another
    /// node adopt the room and moves them there).
    Handoff {
        /// Where the connections go.
        reply: oneshot::Sender<Vec<Rehomed>>,
    },
}

/// A handle on a running room actor.
#[derive(Clone, Debug)]
pub struct RoomHandle {
    code: Arc<str>,
    tx: mpsc::Sender<RoomCmd>,
    listing: watch::Receiver<Listing>,
}

impl RoomHandle {
    /// The room code.
    pub fn code(&self) -> &str {
        &self.code
    }
    /// The command channel.
    pub fn sender(&self) -> &mpsc::Sender<RoomCmd> {
        &self.tx
    }
    /// The latest listing facts.
    pub fn listing(&self) -> Listing {
        self.listing.borrow().clone()
    }
}
