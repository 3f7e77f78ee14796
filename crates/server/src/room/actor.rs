//! The thin tokio driver around [`Core`]: one task per room owns the connections' queues
//! and the store handle, feeds the core its inputs with the current time, and carries out
//! the effects in order. A [`Effect::Persist`] ends a batch: the actor awaits the write and
//! reports it with [`Core::persisted`] before anything else happens, so nothing is
//! broadcast before its records are durable.

use super::core::{BotJob, Core, Effect, Input, RoomInit};
use super::persist::{self, Write};
use super::{
    now_ms, BotChoice, ConnId, ConnLink, Listing, Member, Ms, Refusal, RoomCmd, RoomHandle,
};
use crate::dice::DiceSource;
use crate::ids;
use crate::state::AppState;
use parchis_protocol::{close_code, ErrorCode, RoomSettings};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tracing::{info, warn, Instrument};

/// A room's task: the core plus everything that does I/O.
pub(super) struct Actor {
    state: AppState,
    core: Core,
    links: HashMap<ConnId, ConnLink>,
    /// The connection of the join, watch or resume being handled, until the core
    /// attaches it.
    pending_link: Option<ConnLink>,
    /// Where the current join, watch or resume is answered.
    reply: Option<oneshot::Sender<Result<Member, Refusal>>>,
    listing: watch::Sender<Listing>,
    /// The room's own command channel, for the bots' choices (weak: the room still ends
    /// when every handle is gone).
    self_tx: mpsc::WeakSender<RoomCmd>,
    wake: Option<Ms>,
    /// Connections found dead or too slow while sending; detached after the batch.
    lost: Vec<ConnId>,
    /// Broadcast frames already queued for the players named with each, waiting for the
    /// other members (spectators) until the batch is done: players' frames go first.
    for_spectators: Vec<(Arc<str>, Vec<ConnId>)>,
    publish: bool,
    /// The last durable write that failed (restore reports it).
    pub(super) persist_error: Option<String>,
    span: tracing::Span,
    /// When the command being handled was read by its connection: `(conn, req, when)`.
    received: Option<(ConnId, u64, tokio::time::Instant)>,
    /// The channel, until [`Actor::start`] hands its sender to the registry.
    channel: Option<(mpsc::Sender<RoomCmd>, mpsc::Receiver<RoomCmd>)>,
}

/// The room's bot randomness (never the dice): seeded from the configuration in tests,
/// from the OS otherwise.
pub(super) fn room_rng(state: &AppState) -> ChaCha20Rng {
    match state.config().dice_seed {
        Some(seed) => ChaCha20Rng::seed_from_u64(seed.wrapping_add(state.next_id())),
        None => ChaCha20Rng::from_entropy(),
    }
}

/// The one constructor's input for a room of `code` with `settings`.
pub(super) fn room_init(
    state: &AppState,
    code: &str,
    settings: RoomSettings,
    rules: parchis_engine::RuleSet,
    created_at_ms: Ms,
    dice: DiceSource,
) -> RoomInit {
    RoomInit {
        code: code.to_owned(),
        settings,
        rules,
        created_at_ms,
        rng: room_rng(state),
        dice,
        seed_rng: ChaCha20Rng::from_entropy(),
        id_rng: ChaCha20Rng::from_entropy(),
        // Replayed to a resuming client only while it fits well within its outbound
        // queue: a reload resumes from seq 0, and a long game's history would overflow
        // the queue and drop the connection as a slow consumer, again and again.
        history_len: state
            .config()
            .history
            .min(state.config().outbound_queue / 2),
        now: now_ms(),
        limits: super::core::RoomLimits::of(state.config()),
    }
}

/// Creates a room: stores it, spawns its actor on the server's tracker and registers its
/// handle. Returns the room code.
///
/// # Errors
/// `bad_request` for settings that name no rule set; `internal` if no code could be
/// allocated, the server is full, or the store fails.
pub async fn create(state: &AppState, settings: RoomSettings) -> Result<String, Refusal> {
    let rules = settings
        .rules()
        .map_err(|m| Refusal::new(ErrorCode::BadRequest, m))?;
    for _ in 0..4 {
        let code = ids::room_code();
        if state.room(&code).is_some() {
            continue;
        }
        let created_at_ms = now_ms();
        let record = persist::room_record(&code, &settings, created_at_ms);
        match state.store().create_room(&record).await {
            Ok(()) => {}
            Err(parchis_store::StoreError::RoomExists(_)) => continue,
            Err(e) => {
                warn!(room = %code, error = %e, "store failed creating a room");
                return Err(Refusal::code(ErrorCode::Internal));
            }
        }
        // The server seed comes from the OS here, at the edge; the core gets it as a value.
        let dice = DiceSource::draw(state.config(), state.next_id()).map_err(|e| {
            tracing::warn!(room = %code, error = %e, "no dice for the room");
            Refusal::code(ErrorCode::Internal)
        })?;
        let core = Core::new(room_init(
            state,
            &code,
            settings,
            rules,
            created_at_ms,
            dice,
        ));
        if !Actor::new(state, core).start() {
            return Err(Refusal::new(ErrorCode::ServerFull, "too many rooms"));
        }
        info!(room = %code, "room created");
        return Ok(code);
    }
    Err(Refusal::new(
        ErrorCode::Internal,
        "could not allocate a room code",
    ))
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

impl Actor {
    /// An actor around `core`, not running yet (see [`Actor::start`]).
    pub(super) fn new(state: &AppState, core: Core) -> Actor {
        let (tx, rx) = mpsc::channel(state.config().room_queue);
        let span = tracing::info_span!("room", room = %core.code(), game = tracing::field::Empty);
        let (listing, _) = watch::channel(core.listing(now_ms()));
        Actor {
            state: state.clone(),
            core,
            links: HashMap::new(),
            pending_link: None,
            reply: None,
            listing,
            self_tx: tx.downgrade(),
            wake: None,
            lost: Vec::new(),
            for_spectators: Vec::new(),
            publish: false,
            persist_error: None,
            span,
            received: None,
            channel: Some((tx, rx)),
        }
    }

    /// The core.
    pub(super) fn core(&self) -> &Core {
        &self.core
    }

    /// Registers the room's handle and spawns its task; `false` if the code is taken or
    /// the server is full.
    pub(super) fn start(mut self) -> bool {
        let Some((tx, rx)) = self.channel.take() else {
            return false;
        };
        self.record_game();
        self.listing.send_replace(self.core.listing(now_ms()));
        let handle = RoomHandle {
            code: Arc::from(self.core.code()),
            tx,
            listing: self.listing.subscribe(),
        };
        if !self.state.register(handle) {
            return false;
        }
        // Cluster mode: edges reach the room through its subject while it runs here (a
        // no-op when the ownership side serves it already).
        crate::cluster::routing::serve_room(&self.state, self.core.code(), None);
        let span = self.span.clone();
        let tracker = self.state.tracker().clone();
        tracker.spawn(async move { self.run(rx).await }.instrument(span));
        true
    }

    async fn run(mut self, mut rx: mpsc::Receiver<RoomCmd>) {
        let shutdown = self.state.shutdown_token();
        self.wake = self.core.poll_wake(now_ms());
        loop {
            let wake = self.wake;
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => {
                    for link in self.links.values() {
                        link.kick.kick(close_code::GOING_AWAY, "server shutting down");
                    }
                    break;
                }
                cmd = rx.recv() => match cmd {
                    Some(cmd) => self.on_cmd(cmd).await,
                    None => break,
                },
                _ = sleep_until_ms(wake) => self.input(Input::Timers).await,
            }
            if self.core.disposable(now_ms()) {
                info!("room finished or idle and empty: disposing");
                break;
            }
        }
        self.state.deregister(self.core.code());
    }

    async fn on_cmd(&mut self, cmd: RoomCmd) {
        let input = match cmd {
            RoomCmd::Join {
                link,
                req,
                name,
                colour,
                client_seed,
                reply,
            } => {
                let conn = link.id;
                self.pending(link, reply);
                Input::Join {
                    conn,
                    req,
                    name,
                    colour,
                    client_seed,
                    token: ids::session_token(),
                }
            }
            RoomCmd::Watch { link, req, reply } => {
                let conn = link.id;
                self.pending(link, reply);
                Input::Watch { conn, req }
            }
            RoomCmd::Resume {
                link,
                req,
                token,
                last_seq,
                reply,
            } => {
                let conn = link.id;
                self.pending(link, reply);
                Input::Resume {
                    conn,
                    req,
                    token,
                    last_seq,
                }
            }
            RoomCmd::Reattach {
                link,
                reattach,
                last_seq,
                replaces,
                reply,
            } => {
                let conn = link.id;
                self.pending(link, reply);
                Input::Reattach {
                    conn,
                    reattach,
                    last_seq,
                    replaces,
                }
            }
            RoomCmd::Command {
                conn,
                member,
                req,
                seq,
                cmd,
                received,
            } => {
                self.received = Some((conn, req, received));
                Input::Command {
                    conn,
                    member,
                    req,
                    seq,
                    cmd,
                }
            }
            RoomCmd::Detach { conn } => Input::Detach { conn },
            RoomCmd::View { reply } => {
                let _ = reply.send(self.core.view());
                return;
            }
            RoomCmd::BotChose(choice) => Input::BotChose(choice),
            RoomCmd::Inspect { reply } => {
                let _ = reply.send(self.core.inspect());
                return;
            }
            RoomCmd::Close { reply } => {
                let (answer, effects) = self.core.close_by_admin(now_ms());
                self.execute(effects).await;
                let _ = reply.send(answer);
                return;
            }
        };
        self.input(input).await;
    }

    fn pending(&mut self, link: ConnLink, reply: oneshot::Sender<Result<Member, Refusal>>) {
        self.pending_link = Some(link);
        self.reply = Some(reply);
    }

    /// Feeds one input to the core and carries out everything it leads to, then detaches
    /// the connections found dead meanwhile.
    pub(super) async fn input(&mut self, input: Input) {
        let effects = self.core.handle(input, now_ms());
        self.execute(effects).await;
        while let Some(conn) = self.lost.pop() {
            let effects = self.core.handle(Input::Detach { conn }, now_ms());
            self.execute(effects).await;
        }
        // An answer the core did not give (it always does) must not leave a caller hanging.
        self.pending_link = None;
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(Err(Refusal::code(ErrorCode::Internal)));
        }
    }

    /// Carries out `effects` in order; a durable write is awaited and reported to the
    /// core, whose answer is carried out in turn.
    pub(super) async fn execute(&mut self, mut effects: Vec<Effect>) {
        loop {
            let mut persist = None;
            for effect in effects {
                match effect {
                    Effect::Persist(write) => persist = Some(write),
                    other => self.act(other).await,
                }
            }
            let Some(write) = persist else { break };
            let result = self.write(write).await;
            if let Err(e) = &result {
                self.persist_error = Some(e.clone());
            }
            effects = self.core.persisted(result, now_ms());
        }
        self.fan_out_to_spectators();
        if std::mem::take(&mut self.publish) {
            self.listing.send_replace(self.core.listing(now_ms()));
        }
        self.record_game();
    }

    fn record_game(&self) {
        if let Some(id) = self.core.game_id() {
            self.span.record("game", tracing::field::display(id));
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
                    crate::observe::action_latency(at.elapsed().as_secs_f64());
                }
            }
            Effect::Wake(at) => self.wake = at,
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

    /// Performs one write; the error text is for logs.
    async fn write(&mut self, write: Write) -> Result<(), String> {
        // Owned copies: nothing of the actor is borrowed across the await (its bots'
        // brains are `Send`, not `Sync`).
        let store = self.state.store().clone();
        let code = self.core.code().to_owned();
        let game = self.core.game_id();
        perform(&store, &code, write).await.map_err(|e| {
            warn!(room = %code, game = ?game, error = %e, "store write failed");
            e.to_string()
        })
    }
}

/// Carries out one [`Write`] of room `code` on `store`.
///
/// # Errors
/// The store's.
pub async fn perform(
    store: &Arc<dyn parchis_store::Store>,
    code: &str,
    write: Write,
) -> Result<(), parchis_store::StoreError> {
    match write {
        Write::UpsertSeat(record) => store.upsert_seat(&record).await,
        Write::DeleteSeat { colour } => store.delete_seat(code, &colour).await.map(drop),
        Write::Append {
            game_id,
            after_seq,
            events,
        } => store.append_after(game_id, after_seq as i64, events).await,
        Write::Start(start) => store.start_game(*start).await,
        Write::End(end) => store.end_game(*end).await,
        Write::SetDeadline {
            game_id,
            deadline_ms,
        } => store.set_deadline(game_id, deadline_ms).await,
        Write::RoomStatus(update) => store.update_room_status(code, update).await,
    }
}
