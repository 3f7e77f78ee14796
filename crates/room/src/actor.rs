//! The thin tokio driver around [`Core`]: one task per room owns the connections' queues
//! and the store handle, feeds the core its inputs with the current time, and carries out
//! the effects in order. A [`Effect::Persist`] ends a batch: the actor awaits the write and
//! reports it with [`Core::persisted`] before anything else happens, so nothing is
//! broadcast before its records are durable.
//!
//! In cluster mode the actor holds its room's [`Fence`] and every write goes through
//! `Store::write_room` with it. A write refused as `Fenced` stops the room at once: the
//! refused step is neither applied nor retried (nothing of it was broadcast), the actor
//! deregisters and its connections move to the new owner
//! ([`crate::Host::ended`]).
//!
//! A durable write whose commit got no answer, or one refused as not following the
//! stored log, puts the room's state in doubt: the actor decides it against the stored
//! room and, when the store is ahead, stops the room to have it rebuilt from its stored
//! state ([`RoomEnd::Rebuild`]; `actor_doubt.rs`).
//!
//! Size (~650 lines): the task's loop, its effects, its one write path and its end share
//! the actor's state and are read together; what a command from the queue becomes
//! (`actor_cmd.rs`), what a stopping room owes (`actor_moving.rs`) and a write in doubt
//! (`actor_doubt.rs`) live in their own files.

use super::{
    now_ms, BotChoice, ConnId, ConnLink, Listing, Member, Ms, Refusal, RoomCmd, RoomHandle,
};
use crate::end::{Rehomed, RoomEnd};
use crate::rooms::Rooms;
use crate::Frame;
use parchis_protocol::{close_code, ErrorCode};
use parchis_room_core::core::{BotJob, Core, Effect, Input, WriteFailed};
use parchis_room_core::persist::Write;
use parchis_store::{Fence, StoreError};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tracing::{info, warn, Instrument};

/// A room's task: the core plus everything that does I/O.
pub(crate) struct Actor {
    rooms: Rooms,
    core: Core,
    links: HashMap<ConnId, ConnLink>,
    /// The connection of the join, watch or resume being handled, until the core
    /// attaches it.
    pending_link: Option<ConnLink>,
    /// Where the current join, watch or resume is answered.
    reply: Option<oneshot::Sender<Result<Member, Refusal>>>,
    /// Where the current director's command is answered.
    directed: Option<oneshot::Sender<Result<parchis_room_core::reserved::DirectorAnswer, Refusal>>>,
    listing: watch::Sender<Listing>,
    /// The room's own command channel, for the bots' choices (weak: the room still ends
    /// when every handle is gone).
    self_tx: mpsc::WeakSender<RoomCmd>,
    wake: Option<Ms>,
    /// Connections found dead or too slow while sending; detached after the batch.
    lost: Vec<ConnId>,
    /// Broadcast frames already queued for the players named with each, waiting for the
    /// other members (spectators) until the batch is done: players' frames go first.
    for_spectators: Vec<(Frame, Vec<ConnId>)>,
    publish: bool,
    /// The last durable write that failed (restore reports it).
    pub(crate) persist_error: Option<String>,
    span: tracing::Span,
    /// The game `span` names (a new game gets a new span: [`Actor::record_game`]).
    recorded_game: Option<uuid::Uuid>,
    /// When the command being handled was read by its connection: `(conn, req, when)`.
    received: Option<(ConnId, u64, tokio::time::Instant)>,
    /// The `leave` being handled and where its session learns whether it left.
    leave_outcome: Option<(ConnId, oneshot::Sender<bool>)>,
    /// The channel, until [`Actor::start`] hands its sender to the registry.
    channel: Option<(mpsc::Sender<RoomCmd>, mpsc::Receiver<RoomCmd>)>,
    /// Cluster mode: the lease this node holds for the room; every write carries it.
    fence: Option<Fence>,
    /// The room stops here (cluster mode: lease lost, write fenced, hand-off; any mode:
    /// a rebuild); set, the actor writes nothing more and ends after the current input.
    ending: Option<RoomEnd>,
    /// A durable write whose outcome is unknown, not decided yet (`actor_doubt.rs`).
    pub(crate) doubt: Option<parchis_room_core::doubt::Doubt>,
    /// When to look at the stored room again while in doubt.
    pub(crate) doubt_retry: Option<tokio::time::Instant>,
    /// The step being abandoned waited for a write that may have been applied: its
    /// command's refusal says so.
    pub(crate) outcome_unknown: bool,
}

/// Why [`Actor::start`] did not start the room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unstarted {
    /// The code is taken or the server holds its maximum of rooms.
    Full,
    /// Cluster mode: the room's subject could not be served.
    Unserved,
}

/// Whether the local connections of a room that ends so move on (reattached to the next
/// owner, or told to reconnect) and its queued commands are refused as it stops.
fn moves(end: &RoomEnd) -> bool {
    matches!(
        end,
        RoomEnd::Lost(_) | RoomEnd::Fenced | RoomEnd::Handoff(_) | RoomEnd::Rebuild
    )
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_ms(at: Option<Ms>) {
    match at {
        Some(at) => {
            let left = (at - now_ms()).max(0) as u64;
            tokio::time::sleep(Duration::from_millis(left)).await
        }
        None => std::future::pending().await,
    }
}

/// The span of a room's task: a root span (not a child of the request or sweep that
/// created or restored the room, which would label every line of the room for its whole
/// life), with the room code and, once a game runs, its id.
fn room_span(code: &str, game: Option<uuid::Uuid>) -> tracing::Span {
    match game {
        Some(game) => tracing::info_span!(parent: None, "room", room = %code, game = %game),
        None => tracing::info_span!(parent: None, "room", room = %code),
    }
}

impl Actor {
    /// An actor around `core`, not running yet (see [`Actor::start`]).
    pub(crate) fn new(rooms: &Rooms, core: Core) -> Actor {
        let (tx, rx) = mpsc::channel(rooms.config().room_queue);
        let span = room_span(core.code(), None);
        let (listing, _) = watch::channel(core.listing(now_ms()));
        Actor {
            rooms: rooms.clone(),
            core,
            links: HashMap::new(),
            pending_link: None,
            reply: None,
            directed: None,
            listing,
            self_tx: tx.downgrade(),
            wake: None,
            lost: Vec::new(),
            for_spectators: Vec::new(),
            publish: false,
            persist_error: None,
            span,
            recorded_game: None,
            received: None,
            leave_outcome: None,
            channel: Some((tx, rx)),
            fence: None,
            ending: None,
            doubt: None,
            doubt_retry: None,
            outcome_unknown: false,
        }
    }

    /// Cluster mode: the room's writes carry `fence` (`None`: a single node).
    pub(crate) fn with_fence(mut self, fence: Option<Fence>) -> Actor {
        self.fence = fence;
        self
    }

    /// Whether the room stops here (lease lost, write fenced, hand-off, rebuild).
    pub(crate) fn is_stopping(&self) -> bool {
        self.ending.is_some()
    }

    /// Whether the room stops here to be rebuilt from its stored state.
    pub(crate) fn is_rebuilding(&self) -> bool {
        matches!(self.ending, Some(RoomEnd::Rebuild))
    }

    /// The core.
    pub(crate) fn core(&self) -> &Core {
        &self.core
    }

    /// Registers the room's handle, serves its subject in cluster mode (awaited: the
    /// subscription is on the NATS server before this returns, so whoever is told of the
    /// room next can reach it from any node) and spawns its task.
    ///
    /// # Errors
    /// [`Unstarted::Full`] if the code is taken or the server is full;
    /// [`Unstarted::Unserved`] if NATS did not take the subscription (nothing runs).
    pub(crate) async fn start(mut self) -> Result<(), Unstarted> {
        let Some((tx, rx)) = self.channel.take() else {
            return Err(Unstarted::Full);
        };
        self.record_game();
        self.listing.send_replace(self.core.listing(now_ms()));
        let handle = RoomHandle {
            code: Arc::from(self.core.code()),
            tx,
            listing: self.listing.subscribe(),
        };
        if !self.rooms.register(handle.clone()) {
            return Err(Unstarted::Full);
        }
        let host = self.rooms.host().clone();
        if let Err(e) = host.started(&self.rooms, &handle).await {
            warn!(room = %self.core.code(), error = %e, "room not started");
            self.rooms.deregister(self.core.code());
            return Err(Unstarted::Unserved);
        }
        drop(handle);
        let tracker = self.rooms.tracker().clone();
        tracker.spawn(async move { self.run(rx).await });
        Ok(())
    }

    /// The room's task. Each step runs in the room's span of the moment (a rematch gives
    /// it a new one, with the new game id).
    async fn run(mut self, mut rx: mpsc::Receiver<RoomCmd>) {
        let shutdown = self.rooms.shutdown_token();
        self.wake = self.core.poll_wake(now_ms());
        let end = loop {
            let span = self.span.clone();
            if let Some(end) = self.step(&mut rx, &shutdown).instrument(span).await {
                break end;
            }
        };
        let span = self.span.clone();
        async {
            if moves(&end) {
                self.refuse_queued(&mut rx);
            }
            self.finish(end).await;
        }
        .instrument(span)
        .await;
    }

    /// One input (a command, the timers, a doubt's retry or the shutdown); how the room
    /// ends, if it does.
    async fn step(
        &mut self,
        rx: &mut mpsc::Receiver<RoomCmd>,
        shutdown: &tokio_util::sync::CancellationToken,
    ) -> Option<RoomEnd> {
        let wake = self.wake;
        tokio::select! {
            biased;
            _ = shutdown.cancelled() => {
                for link in self.links.values() {
                    link.kick.kick(close_code::GOING_AWAY, "server shutting down");
                }
                return Some(RoomEnd::Shutdown);
            }
            cmd = rx.recv() => match cmd {
                Some(cmd) => self.on_cmd(cmd).await,
                None => return Some(RoomEnd::Shutdown),
            },
            _ = sleep_until_ms(wake) => self.input(Input::Timers).await,
            _ = sleep_until(self.doubt_retry) => self.retry_doubt().await,
        }
        if let Some(end) = self.ending.take() {
            return Some(end);
        }
        if self.core.disposable(now_ms()) {
            info!("room finished or idle and empty: disposing");
            return Some(RoomEnd::Disposed);
        }
        None
    }

    /// The room ends here: deregisters; in cluster mode the lease is retired, released or
    /// left (it is lost) and the local connections move on (the host's [`crate::Host::ended`]).
    async fn finish(mut self, end: RoomEnd) {
        self.rooms.deregister(self.core.code());
        let conns = if moves(&end) {
            self.rehomed()
        } else {
            Vec::new()
        };
        let host = self.rooms.host().clone();
        let code = self.core.code().to_owned();
        host.ended(&self.rooms, &code, self.fence.take(), end, conns)
            .await;
    }

    /// The local connections with what each one was and the last seq queued to it
    /// (every attached connection has had every committed event: a refused step was
    /// never broadcast).
    fn rehomed(&mut self) -> Vec<Rehomed> {
        let last_seq = self.core.seq();
        let mut out = Vec::new();
        for (conn, link) in self.links.drain() {
            match self.core.reattach_of(conn) {
                Some(reattach) => out.push(Rehomed {
                    link,
                    reattach,
                    last_seq,
                }),
                // Not a member (cannot happen: links follow the core's attachments).
                None => link
                    .kick
                    .kick(close_code::SERVICE_RESTART, "the room moved: reconnect"),
            }
        }
        out
    }

    /// One command from the room's queue (`actor_cmd.rs`): an attach or a connection's
    /// command is the core's input; an operator's or the host's request is met here.
    async fn on_cmd(&mut self, cmd: RoomCmd) {
        let cmd = match self
            .attach_input(cmd)
            .or_else(|cmd| self.command_input(cmd))
        {
            Ok(input) => {
                self.input(input).await;
                // A leave not answered `ok` by now was refused (or is in doubt): its
                // session stays joined.
                if let Some((_, outcome)) = self.leave_outcome.take() {
                    let _ = outcome.send(false);
                }
                return;
            }
            Err(cmd) => cmd,
        };
        self.on_request(cmd).await;
    }

    /// Feeds one input to the core and carries out everything it leads to, then detaches
    /// the connections found dead meanwhile.
    pub(crate) async fn input(&mut self, input: Input) {
        let effects = self.core.handle(input, now_ms());
        self.execute(effects).await;
        while let Some(conn) = self.lost.pop() {
            if self.is_stopping() {
                break;
            }
            let effects = self.core.handle(Input::Detach { conn }, now_ms());
            self.execute(effects).await;
        }
        // An answer the core did not give (it always does, unless the room stopped
        // here) must not leave a caller hanging.
        self.pending_link = None;
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(Err(self.unanswered()));
        }
        if let Some(directed) = self.directed.take() {
            let _ = directed.send(Err(self.unanswered()));
        }
    }

    /// The refusal of a command the core did not answer: the room stops here (rebuilt or
    /// moved), or a fault.
    fn unanswered(&self) -> Refusal {
        if self.is_rebuilding() {
            Refusal::new(
                ErrorCode::RoomUnavailable,
                parchis_room_core::effect::STORE_REBUILD,
            )
        } else if self.is_stopping() {
            Refusal::new(
                ErrorCode::RoomUnavailable,
                "the room moved to another server: try again",
            )
        } else {
            Refusal::code(ErrorCode::Internal)
        }
    }

    /// Carries out `effects` in order; a durable write is awaited and reported to the
    /// core, whose answer is carried out in turn.
    pub(crate) async fn execute(&mut self, mut effects: Vec<Effect>) {
        let was_playing = self.core.status() == parchis_protocol::RoomStatus::Playing;
        loop {
            let mut persist = None;
            for effect in effects {
                match effect {
                    Effect::Persist(write) => persist = Some(write),
                    other => self.act(other).await,
                }
            }
            let Some(write) = persist else { break };
            let result = self.persist(write).await;
            if self.is_stopping() {
                // Fenced or rebuilt: the step is neither applied nor retried; the room
                // ends here, and the commands it held are answered (each gets its one
                // reply).
                self.refuse_owed();
                break;
            }
            if let Err(e) = &result {
                self.persist_error = Some(e.message.clone());
            }
            effects = self.core.persisted(result, now_ms());
        }
        if was_playing && self.core.status() == parchis_protocol::RoomStatus::Finished {
            // The game's end is stored, with a rated game's new ratings in its
            // transaction: the seats show the ratings after it (a rematch's too; issue 26).
            crate::seat_ratings::read_ratings(&self.rooms, &mut self.core).await;
            if self.core.settings().rated {
                // Other rooms where these players sit show their new ratings too.
                let accounts = self.core.seated_accounts();
                self.rooms.ratings_changed(Some(self.core.code()), accounts);
            }
        }
        self.fan_out_to_spectators();
        if std::mem::take(&mut self.publish) {
            self.listing.send_replace(self.core.listing(now_ms()));
        }
        self.record_game();
    }

    /// A new game (the first, or a rematch's) gets the room a new span naming it: a
    /// span's field is recorded once, and the old game's id must not label the new
    /// game's lines. Takes effect from the room's next step.
    fn record_game(&mut self) {
        let id = self.core.game_id();
        if id.is_some() && id != self.recorded_game {
            self.span = room_span(self.core.code(), id);
            self.recorded_game = id;
        }
    }

    async fn act(&mut self, effect: Effect) {
        match effect {
            Effect::Send { conn, frame } => {
                if let Some(link) = self.links.get(&conn) {
                    if !link.send(frame) {
                        self.lose(conn);
                    }
                }
            }
            Effect::Broadcast { frame } => {
                // Players now; everyone else once the batch is done.
                let players = self.core.player_conns();
                for &conn in &players {
                    if let Some(link) = self.links.get(&conn) {
                        if !link.send(frame.clone()) {
                            self.lose(conn);
                        }
                    }
                }
                self.for_spectators.push((frame, players));
            }
            Effect::Emote { frame, from } => {
                // Not part of the event stream: to every member at once, but those
                // whose player blocked the sender.
                let conns: Vec<ConnId> = self.links.keys().copied().collect();
                for conn in conns {
                    let Some(link) = self.links.get(&conn) else {
                        continue;
                    };
                    if !link.mutes.mutes(from) && !link.send(frame.clone()) {
                        self.lose(conn);
                    }
                }
            }
            Effect::Attach { conn } => {
                if let Some(link) = self.pending_link.take_if(|l| l.id == conn) {
                    self.links.insert(conn, link);
                }
            }
            Effect::Forget { conn } => {
                self.links.remove(&conn);
            }
            Effect::Kick { conn, code, reason } => {
                if let Some(link) = self.links.get(&conn) {
                    link.kick.kick(code, &reason);
                }
            }
            Effect::Reply(result) => {
                if result.is_err() {
                    self.pending_link = None;
                }
                if let Some(reply) = self.reply.take() {
                    let _ = reply.send(result);
                }
            }
            Effect::Store(write) => {
                if let Err(e) = self.write(write).await {
                    warn!(error = %e, "best-effort store write failed");
                }
            }
            Effect::Think(job) => self.think(job),
            Effect::Publish => self.publish = true,
            Effect::Acted { conn, req } => {
                if let Some((_, _, at)) = self.received.take_if(|r| r.0 == conn && r.1 == req) {
                    parchis_telemetry::observe::action_latency(at.elapsed().as_secs_f64());
                }
            }
            Effect::Left { conn } => {
                if let Some((_, outcome)) = self.leave_outcome.take_if(|(c, _)| *c == conn) {
                    let _ = outcome.send(true);
                }
            }
            Effect::Wake(at) => self.wake = at,
            Effect::Directed(answer) => {
                if let Some(directed) = self.directed.take() {
                    let _ = directed.send(answer);
                }
            }
            // Handled by `execute`.
            Effect::Persist(_) => {}
        }
    }

    /// Queues the batch's broadcast frames for every member that has not had them yet
    /// (the spectators), in order.
    fn fan_out_to_spectators(&mut self) {
        if self.for_spectators.is_empty() {
            return;
        }
        let frames = std::mem::take(&mut self.for_spectators);
        let slow: Vec<ConnId> = self
            .links
            .values()
            .filter(|l| {
                !frames
                    .iter()
                    .filter(|(_, sent)| !sent.contains(&l.id))
                    .all(|(f, _)| l.send(f.clone()))
            })
            .map(|l| l.id)
            .collect();
        for conn in slow {
            self.lose(conn);
        }
    }

    fn lose(&mut self, conn: ConnId) {
        self.links.remove(&conn);
        if !self.lost.contains(&conn) {
            self.lost.push(conn);
        }
    }

    /// Runs a bot's search on a blocking thread; the choice comes back on the room's own
    /// channel as [`RoomCmd::BotChose`].
    fn think(&self, job: BotJob) {
        let Some(tx) = self.self_tx.upgrade() else {
            return;
        };
        let BotJob {
            seq,
            colour,
            game,
            legal,
            mut brain,
        } = job;
        tokio::task::spawn_blocking(move || {
            let action = brain.choose(&game, &legal);
            let choice = BotChoice {
                seq,
                colour,
                action,
                brain,
            };
            // The room is gone if this fails: nothing left to play.
            let _ = tx.blocking_send(RoomCmd::BotChose(choice));
        });
    }

    /// Performs one write, through the room's fence in cluster mode; the error says what
    /// the failure means ([`WriteFailed::kind`]). A fenced write stops the room, one that
    /// does not follow the stored log (or repeats a stored seq) has it rebuilt; once it stops, nothing more is
    /// written.
    async fn write(&mut self, write: Write) -> Result<(), WriteFailed> {
        if self.is_stopping() {
            return Err(WriteFailed::other("the room stopped on this node"));
        }
        // Owned copies: nothing of the actor is borrowed across the await (its bots'
        // brains are `Send`, not `Sync`).
        let store = self.rooms.store().clone();
        let code = self.core.code().to_owned();
        let game = self.core.game_id();
        let fence = self.fence.clone();
        let write = parchis_store::RoomWrite::from(write);
        let kind = write.kind();
        match store.write_room(&code, fence.as_ref(), write).await {
            Ok(()) => Ok(()),
            Err(StoreError::Fenced { epoch, current, .. }) => {
                if let Some(fence) = &fence {
                    self.rooms
                        .host()
                        .write_fenced(fence, game, epoch, kind, &current);
                }
                self.ending = Some(RoomEnd::Fenced);
                Err(WriteFailed::other("fenced"))
            }
            Err(e @ (StoreError::SeqMismatch { .. } | StoreError::DuplicateSeq { .. })) => {
                // The stored log is not the room's (a commit whose answer was lost went
                // through; `DuplicateSeq`: it landed only after the doubt read found it
                // not applied, and this append of the same seq waited for it): the log is
                // the authority, the room is rebuilt from it.
                warn!(room = %code, game = ?game, error = %e, "the stored log is ahead of the room: rebuilding it");
                self.ending.get_or_insert(RoomEnd::Rebuild);
                Err(write_failed(&e))
            }
            Err(e) => {
                let failed = write_failed(&e);
                warn!(
                    room = %code,
                    game = ?game,
                    error = %e,
                    failure = ?failed.kind,
                    "store write failed"
                );
                Err(failed)
            }
        }
    }
}

/// What a store error means for the core ([`WriteFailed`]): its text and
/// [`StoreError::write_failure`].
pub fn write_failed(e: &StoreError) -> WriteFailed {
    WriteFailed {
        message: e.to_string(),
        kind: e.write_failure(),
    }
}

/// Carries out one [`Write`] of room `code` on `store`, unfenced (a single node).
///
/// # Errors
/// The store's.
pub async fn perform(
    store: &Arc<dyn parchis_store::Store>,
    code: &str,
    write: Write,
) -> Result<(), parchis_store::StoreError> {
    store.write_room(code, None, write.into()).await
}

#[path = "actor_moving.rs"]
mod moving;

#[path = "actor_doubt.rs"]
mod doubt;

#[path = "actor_cmd.rs"]
mod cmd;

#[cfg(test)]
#[path = "actor_test_room.rs"]
pub(crate) mod test_room;

#[cfg(test)]
#[path = "actor_fanout_tests.rs"]
mod fanout_tests;

#[cfg(test)]
#[path = "actor_moving_tests.rs"]
mod moving_tests;
