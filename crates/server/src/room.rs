//! The room actor: one task per room owns its seats, spectators, event history and
//! [`Game`], and is the only code that changes them. Connections send [`RoomCmd`]s through
//! a bounded channel; joins and views are answered on a oneshot, everything else goes to
//! the connections' outbound queues, in order.
//!
//! Write-ahead: every accepted action's events are appended to the store before the new
//! state is committed and broadcast.

use crate::state::AppState;
use crate::{ids, observe};
use parchis_bots::Bot;
use parchis_engine::{Action, Colour, Dice, Expect, Game, RuleSet, SeatStatus};
use parchis_protocol::{
    close_code, team_of, AbandonReason, AdminCloseRoom, AdminRoom, AdminSeat, BotLevel, ErrorCode,
    GameView, OnAbandon, OpeningRollEntry, Play, Role, RoomEvent, RoomSettings, RoomStatus,
    RoomSummary, RoomView, SeatView, ServerMessage, TurnInfo, TEAMS,
};
use parchis_store::{
    hash_token, EventRecord, GameRecord, RoomStatus as StoredStatus, RoomStatusUpdate, SeatRecord,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn, Instrument};
use uuid::Uuid;

/// Identifies one WebSocket connection.
pub type ConnId = u64;

/// Current unix time in milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Serializes a server message once, for any number of queues.
pub fn encode(msg: &ServerMessage) -> Arc<str> {
    // Serializing these plain types cannot fail; an empty frame would be harmless anyway.
    Arc::from(serde_json::to_string(msg).unwrap_or_default())
}

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

/// What a connection is in a room, as the room answered its join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Member {
    /// Holds the seat with this id.
    Player(u64),
    /// Watches.
    Spectator,
}

/// A refused command: code and text (and a rule id for illegal actions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Error code.
    pub code: ErrorCode,
    /// Human-readable text.
    pub message: String,
    /// Rule id for `illegal_action`.
    pub rule: Option<String>,
}

impl Refusal {
    fn new(code: ErrorCode, message: impl Into<String>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
            rule: None,
        }
    }
    fn code(code: ErrorCode) -> Refusal {
        Refusal::new(code, code.describe())
    }
    /// The error frame answering request `req`.
    pub fn to_message(&self, req: Option<u64>) -> ServerMessage {
        ServerMessage::Error {
            req,
            code: self.code,
            message: self.message.clone(),
            rule: self.rule.clone(),
        }
    }
}

/// A command for a room the connection has joined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeatCmd {
    /// Change colour (lobby).
    ChooseColour(Colour),
    /// Start the game (creator).
    Start,
    /// Throw the dice.
    Roll,
    /// Play an action of the current throw.
    Play(Play),
    /// Leave the room.
    Leave,
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
        /// The outcome.
        reply: oneshot::Sender<Result<Member, Refusal>>,
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
        /// Session token.
        token: String,
        /// Last seq seen.
        last_seq: u64,
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
        received: Instant,
    },
    /// The connection closed.
    Detach {
        /// The connection.
        conn: ConnId,
    },
    /// The room's public state.
    View {
        /// Where to answer.
        reply: oneshot::Sender<RoomView>,
    },
    /// A bot finished thinking (sent by the room's own blocking task).
    BotChose(BotChoice),
    /// Admin: the room with its connections.
    Inspect {
        /// Where to answer.
        reply: oneshot::Sender<AdminRoom>,
    },
    /// Admin: close the room (a running game ends `closed_by_admin`).
    Close {
        /// Where to answer.
        reply: oneshot::Sender<AdminCloseRoom>,
    },
}

/// The action a bot chose on a blocking thread, with the bot itself handed back.
pub struct BotChoice {
    /// The room seq the choice was computed for: dropped if the room moved on.
    seq: u64,
    /// The bot's seat.
    colour: Colour,
    /// The chosen action.
    action: Action,
    /// The bot, back to its seat.
    brain: Box<dyn Bot + Send>,
}

impl std::fmt::Debug for BotChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotChoice")
            .field("seq", &self.seq)
            .field("colour", &self.colour)
            .field("action", &self.action)
            .finish_non_exhaustive()
    }
}

/// The bots crate's level for a wire level.
fn bot_kind(level: BotLevel) -> parchis_bots::BotLevel {
    match level {
        BotLevel::Random => parchis_bots::BotLevel::Random,
        BotLevel::Greedy => parchis_bots::BotLevel::Greedy,
        BotLevel::Expectimax => parchis_bots::BotLevel::Expectimax,
    }
}

/// A wire level from its stored name (`seats.bot`).
fn parse_level(name: &str) -> Option<BotLevel> {
    [BotLevel::Random, BotLevel::Greedy, BotLevel::Expectimax]
        .into_iter()
        .find(|l| bot_kind(*l).name() == name)
}

/// A bot playing a seat.
struct SeatBot {
    level: BotLevel,
    /// `None` while it thinks on a blocking thread. In a mutex only to make the room
    /// `Sync` (it is reached through `&mut`, never locked).
    brain: Mutex<Option<Box<dyn Bot + Send>>>,
}

impl SeatBot {
    fn new(level: BotLevel, seed: u64) -> SeatBot {
        SeatBot {
            level,
            brain: Mutex::new(Some(bot_kind(level).build(seed))),
        }
    }

    fn brain(&mut self) -> &mut Option<Box<dyn Bot + Send>> {
        self.brain.get_mut().unwrap_or_else(|e| e.into_inner())
    }
}

/// Light public facts about a room, readable without asking the actor.
#[derive(Clone, Debug)]
pub struct Listing {
    /// Lifecycle.
    pub status: RoomStatus,
    /// Listed publicly.
    pub public: bool,
    /// Spectators may watch (`settings.spectators`).
    pub spectators_allowed: bool,
    /// Summary for `GET /api/rooms`.
    pub summary: RoomSummary,
    /// The room's game, once started.
    pub game_id: Option<Uuid>,
    /// Absolute deadline of the running turn clock (unix ms, R-CLOCK), `None` when no
    /// clock runs. The games API reports it for a game in progress: the store's copy is
    /// written at the start and on restore only, not on every throw.
    pub deadline_ms: Option<i64>,
    /// Seats with a connection attached (the `parchis_room_connections` gauge).
    pub connected_players: u32,
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

struct Seat {
    id: u64,
    colour: Colour,
    name: String,
    token_hash: String,
    creator: bool,
    joined_at_ms: i64,
    conn: Option<ConnLink>,
    grace_until: Option<Instant>,
    abandoned: bool,
    /// A bot plays this seat (it has no connection, no grace period and no token).
    bot: Option<SeatBot>,
}

#[derive(Clone, Copy)]
struct Deadline {
    at: Instant,
    ms: i64,
}

struct Room {
    state: AppState,
    code: String,
    settings: RoomSettings,
    /// The rule set named by `settings.preset` (validated at creation).
    rules: RuleSet,
    created_at_ms: i64,
    status: RoomStatus,
    seats: Vec<Seat>,
    spectators: Vec<ConnLink>,
    next_seat_id: u64,
    seq: u64,
    history: VecDeque<(u64, Arc<str>)>,
    game: Option<Game>,
    game_id: Option<Uuid>,
    deadline: Option<Deadline>,
    rng: ChaCha20Rng,
    listing: watch::Sender<Listing>,
    /// The player to act must be sent `your_turn` once the current command is answered.
    turn_pending: bool,
    /// Since when a lobby has had neither seats nor connections.
    idle_since: Option<Instant>,
    /// When the bot to act acts (its think time elapsed).
    bot_due: Option<Instant>,
    /// A bot is choosing its move on a blocking thread.
    bot_thinking: bool,
    /// The room's own command channel, for the bots' choices (weak: the room still ends
    /// when every handle is gone).
    self_tx: mpsc::WeakSender<RoomCmd>,
}

/// An empty lobby (no seats, no connections) is disposed of after this long.
const LOBBY_IDLE: Duration = Duration::from_secs(30 * 60);

/// Creates room `code`: stores it, spawns its actor on the server's tracker and registers
/// its handle. Returns `None` if the code is taken, the server is full, or the store fails.
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
        let record = parchis_store::RoomRecord {
            code: code.clone(),
            settings: serde_json::to_value(&settings).unwrap_or_default(),
            status: StoredStatus::Open,
            created_at_ms,
            started_at_ms: None,
            finished_at_ms: None,
            updated_at_ms: created_at_ms,
        };
        match state.store().create_room(&record).await {
            Ok(()) => {}
            Err(parchis_store::StoreError::RoomExists(_)) => continue,
            Err(e) => {
                warn!(room = %code, error = %e, "store failed creating a room");
                return Err(Refusal::code(ErrorCode::Internal));
            }
        }
        let rng = match state.config().dice_seed {
            Some(seed) => ChaCha20Rng::seed_from_u64(seed.wrapping_add(state.next_id())),
            None => ChaCha20Rng::from_entropy(),
        };
        let (tx, rx) = mpsc::channel(state.config().room_queue);
        let mut room = Room {
            state: state.clone(),
            code: code.clone(),
            settings,
            rules,
            created_at_ms,
            status: RoomStatus::Lobby,
            seats: Vec::new(),
            spectators: Vec::new(),
            next_seat_id: 1,
            seq: 0,
            history: VecDeque::new(),
            game: None,
            game_id: None,
            deadline: None,
            rng,
            listing: watch::channel(placeholder_listing()).0,
            turn_pending: false,
            idle_since: Some(Instant::now()),
            bot_due: None,
            bot_thinking: false,
            self_tx: tx.downgrade(),
        };
        let listing = room.listing();
        let (ltx, lrx) = watch::channel(listing);
        room.listing = ltx;
        let handle = RoomHandle {
            code: Arc::from(code.as_str()),
            tx,
            listing: lrx,
        };
        if !state.register(handle) {
            return Err(Refusal::new(ErrorCode::ServerFull, "too many rooms"));
        }
        let span = tracing::info_span!("room", room = %code, game = tracing::field::Empty);
        state
            .tracker()
            .spawn(async move { room.run(rx).await }.instrument(span));
        info!(room = %code, "room created");
        return Ok(code);
    }
    Err(Refusal::new(
        ErrorCode::Internal,
        "could not allocate a room code",
    ))
}

fn placeholder_listing() -> Listing {
    Listing {
        status: RoomStatus::Lobby,
        public: false,
        spectators_allowed: false,
        summary: RoomSummary {
            code: String::new(),
            status: RoomStatus::Lobby,
            preset: String::new(),
            seats: 0,
            taken: 0,
            free: 0,
            free_colours: Vec::new(),
            age_secs: 0,
            spectators: 0,
        },
        game_id: None,
        deadline_ms: None,
        connected_players: 0,
    }
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl Room {
    async fn run(mut self, mut rx: mpsc::Receiver<RoomCmd>) {
        let shutdown = self.state.shutdown_token();
        loop {
            self.schedule_bot();
            let wake = self.next_wake();
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => {
                    self.close_all(close_code::GOING_AWAY, "server shutting down");
                    break;
                }
                cmd = rx.recv() => match cmd {
                    Some(cmd) => self.handle(cmd).await,
                    None => break,
                },
                _ = sleep_until_opt(wake) => self.on_timers().await,
            }
            if std::mem::take(&mut self.turn_pending) {
                self.send_turn_info();
            }
            self.update_idle();
            if self.disposable() {
                info!("room finished or idle and empty: disposing");
                break;
            }
        }
        self.state.deregister(&self.code);
    }

    // ----- views ---------------------------------------------------------------------

    fn taken(&self, colour: Colour) -> bool {
        self.seats.iter().any(|s| s.colour == colour)
    }

    fn free_colours(&self) -> Vec<Colour> {
        Colour::ALL
            .into_iter()
            .filter(|c| !self.taken(*c))
            .collect()
    }

    fn listing(&self) -> Listing {
        let taken = self.seats.len() as u8;
        Listing {
            status: self.status,
            public: self.settings.public,
            spectators_allowed: self.settings.spectators,
            summary: RoomSummary {
                code: self.code.clone(),
                status: self.status,
                preset: self.settings.preset.clone(),
                seats: self.settings.seats,
                taken,
                free: self.settings.seats.saturating_sub(taken),
                free_colours: if taken < self.settings.seats {
                    self.free_colours()
                } else {
                    Vec::new()
                },
                age_secs: ((now_ms() - self.created_at_ms).max(0) / 1000) as u64,
                spectators: self.spectators.len() as u32,
            },
            game_id: self.game_id,
            deadline_ms: self.deadline.map(|d| d.ms),
            connected_players: self.seats.iter().filter(|s| s.conn.is_some()).count() as u32,
        }
    }

    fn publish(&self) {
        self.listing.send_replace(self.listing());
    }

    fn view(&self) -> RoomView {
        RoomView {
            code: self.code.clone(),
            settings: self.settings.clone(),
            rules: self.rules,
            teams: if self.rules.teams {
                TEAMS.iter().map(|t| t.to_vec()).collect()
            } else {
                Vec::new()
            },
            status: self.status,
            seats: self
                .seats
                .iter()
                .map(|s| SeatView {
                    colour: s.colour,
                    name: s.name.clone(),
                    creator: s.creator,
                    connected: s.conn.is_some(),
                    abandoned: s.abandoned,
                    team: self.rules.teams.then(|| team_of(s.colour)),
                    bot: s.bot.as_ref().map(|b| b.level),
                })
                .collect(),
            spectators: self.spectators.len() as u32,
            seq: self.seq,
            created_at_ms: self.created_at_ms,
            game: self.game.as_ref().map(|g| GameView {
                game_id: self.game_id.map(|id| id.to_string()).unwrap_or_default(),
                position: g.to_position(),
                deadline_ms: self.deadline.map(|d| d.ms),
                outcome: g.outcome(),
            }),
            board: Default::default(),
        }
    }

    fn seat_index(&self, seat_id: u64) -> Option<usize> {
        self.seats.iter().position(|s| s.id == seat_id)
    }

    fn seat_record(&self, seat: &Seat) -> SeatRecord {
        SeatRecord {
            room_code: self.code.clone(),
            colour: seat.colour.to_string(),
            display_name: seat.name.clone(),
            token_hash: seat.token_hash.clone(),
            is_creator: seat.creator,
            joined_at_ms: seat.joined_at_ms,
            bot: seat
                .bot
                .as_ref()
                .map(|b| bot_kind(b.level).name().to_owned()),
        }
    }

    fn links(&self) -> impl Iterator<Item = &ConnLink> {
        self.seats
            .iter()
            .filter_map(|s| s.conn.as_ref())
            .chain(self.spectators.iter())
    }

    fn link_of(&self, conn: ConnId) -> Option<&ConnLink> {
        self.links().find(|l| l.id == conn)
    }

    fn disposable(&self) -> bool {
        let nobody = self.links().next().is_none();
        match self.status {
            RoomStatus::Finished => nobody,
            RoomStatus::Lobby => {
                nobody
                    && self.seats.is_empty()
                    && self.idle_since.is_some_and(|t| t.elapsed() >= LOBBY_IDLE)
            }
            RoomStatus::Playing => false,
        }
    }

    /// Tracks how long a lobby has had neither seats nor connections.
    fn update_idle(&mut self) {
        let empty = self.status == RoomStatus::Lobby
            && self.seats.is_empty()
            && self.links().next().is_none();
        match (empty, self.idle_since) {
            (true, None) => self.idle_since = Some(Instant::now()),
            (false, Some(_)) => self.idle_since = None,
            _ => {}
        }
    }

    fn next_wake(&self) -> Option<Instant> {
        let graces = self.seats.iter().filter_map(|s| s.grace_until);
        let idle = self.idle_since.map(|t| t + LOBBY_IDLE);
        self.deadline
            .map(|d| d.at)
            .into_iter()
            .chain(graces)
            .chain(idle)
            .chain(self.bot_due)
            .min()
    }

    // ----- bots ------------------------------------------------------------------------

    /// The seat of the bot to act, while the game runs.
    fn bot_to_act(&self) -> Option<usize> {
        if self.status != RoomStatus::Playing {
            return None;
        }
        let game = self.game.as_ref()?;
        if matches!(game.expect(), Expect::Finished(_)) {
            return None;
        }
        let turn = game.turn();
        self.seats
            .iter()
            .position(|s| s.colour == turn && s.bot.is_some() && !s.abandoned)
    }

    /// Starts the think time of the bot to act, if any (and forgets it otherwise).
    fn schedule_bot(&mut self) {
        match self.bot_to_act() {
            None => self.bot_due = None,
            Some(_) if self.bot_due.is_none() && !self.bot_thinking => {
                let think = Duration::from_millis(u64::from(self.settings.bot_think_ms));
                self.bot_due = Some(Instant::now() + think);
            }
            Some(_) => {}
        }
    }

    /// The bot to act acts: it rolls through the normal roll path (the room's dice), or
    /// chooses its move on a blocking thread; the choice comes back as
    /// [`RoomCmd::BotChose`].
    async fn bot_act(&mut self) {
        let Some(i) = self.bot_to_act() else { return };
        let Some(game) = self.game else { return };
        let colour = self.seats[i].colour;
        match game.expect() {
            Expect::Roll { .. } => match Dice::from_slice(&self.throw()) {
                Ok(dice) => {
                    if let Err(e) = self.apply(Action::Roll { dice }, Vec::new()).await {
                        warn!(%colour, error = %e.message, "bot roll not applied");
                    }
                }
                Err(_) => warn!(%colour, "bot roll: bad dice"),
            },
            Expect::Move { .. } => {
                let legal = game.legal_actions();
                if legal.is_empty() {
                    return;
                }
                let Some(tx) = self.self_tx.upgrade() else {
                    return;
                };
                let Some(mut brain) = self.seats[i].bot.as_mut().and_then(|b| b.brain().take())
                else {
                    return;
                };
                let seq = self.seq;
                self.bot_thinking = true;
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
            Expect::Finished(_) => {}
        }
    }

    /// A bot's choice is back: the bot returns to its seat, and the action is applied like
    /// a person's if the room is still where the bot looked at it.
    async fn bot_chose(&mut self, choice: BotChoice) {
        let BotChoice {
            seq,
            colour,
            action,
            brain,
        } = choice;
        self.bot_thinking = false;
        if let Some(bot) = self
            .seats
            .iter_mut()
            .find(|s| s.colour == colour)
            .and_then(|s| s.bot.as_mut())
        {
            *bot.brain() = Some(brain);
        }
        if self.status == RoomStatus::Playing {
            self.expire_clock_first().await;
        }
        let still = self.bot_to_act().map(|i| self.seats[i].colour) == Some(colour);
        if seq != self.seq || !still {
            debug!(%colour, seq, now = self.seq, "stale bot choice dropped");
            return;
        }
        if let Err(e) = self.apply(action, Vec::new()).await {
            warn!(%colour, %action, error = %e.message, "bot action not applied");
        }
    }

    /// Bots fill the free colours when the creator starts ("play against the computer").
    async fn add_bots(&mut self, level: BotLevel, colours: &[Colour]) -> Result<(), Refusal> {
        let mut events = Vec::new();
        for (n, &colour) in colours.iter().enumerate() {
            let kind = bot_kind(level).name();
            let mut chars = kind.chars();
            let title: String = chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
                .collect();
            let name = format!("{title} bot {}", n + 1);
            let seed = self.rng.gen();
            let seat = Seat {
                id: self.next_seat_id,
                colour,
                name: name.clone(),
                token_hash: String::new(),
                creator: false,
                joined_at_ms: now_ms(),
                conn: None,
                grace_until: None,
                abandoned: false,
                bot: Some(SeatBot::new(level, seed)),
            };
            if let Err(e) = self
                .state
                .store()
                .upsert_seat(&self.seat_record(&seat))
                .await
            {
                warn!(error = %e, "store failed saving a bot seat");
                return Err(Refusal::code(ErrorCode::Internal));
            }
            self.next_seat_id += 1;
            self.seats.push(seat);
            events.push(RoomEvent::PlayerJoined {
                colour,
                name,
                creator: false,
                bot: Some(level),
            });
        }
        self.commit(None, events).await?;
        info!(
            level = bot_kind(level).name(),
            bots = colours.len(),
            "bots seated"
        );
        Ok(())
    }

    /// `on_abandon: bot`: a bot takes over seat `i` instead of the player forfeiting.
    /// Returns `false` (nothing changed) if the event could not be stored.
    async fn bot_take_over(&mut self, i: usize, reason: AbandonReason) -> bool {
        let level = self.settings.bots.unwrap_or(BotLevel::Greedy);
        let colour = self.seats[i].colour;
        let event = RoomEvent::BotTookOver {
            colour,
            level,
            reason,
        };
        if let Err(e) = self.commit(None, vec![event]).await {
            warn!(%colour, error = %e.message, "bot takeover not committed");
            return false;
        }
        let seed = self.rng.gen();
        let seat = &mut self.seats[i];
        seat.bot = Some(SeatBot::new(level, seed));
        // The old session token no longer resumes the seat.
        seat.token_hash = String::new();
        seat.grace_until = None;
        // A connection still on the seat (the leaver awaiting its `ok`, or a player who
        // timed out) watches from now on.
        if let Some(link) = seat.conn.take() {
            self.spectators.push(link);
        }
        let record = self.seat_record(&self.seats[i]);
        if let Err(e) = self.state.store().upsert_seat(&record).await {
            warn!(%colour, error = %e, "store failed saving the bot seat");
        }
        observe::bot_took_over(&self.code, self.game_id, colour, level, reason);
        self.presence();
        true
    }

    // ----- sending -------------------------------------------------------------------

    fn send_to(&mut self, conn: ConnId, msg: &ServerMessage) {
        let ok = match self.link_of(conn) {
            Some(link) => link.send(encode(msg)),
            None => return,
        };
        if !ok {
            self.detach(conn);
        }
    }

    fn broadcast_raw(&mut self, frame: Arc<str>) {
        let slow: Vec<ConnId> = self
            .links()
            .filter(|l| !l.send(frame.clone()))
            .map(|l| l.id)
            .collect();
        for conn in slow {
            self.detach(conn);
        }
    }

    fn presence(&mut self) {
        let msg = ServerMessage::Presence {
            room: self.code.clone(),
            seq: self.seq,
            connected: self
                .seats
                .iter()
                .filter(|s| s.conn.is_some())
                .map(|s| s.colour)
                .collect(),
            spectators: self.spectators.len() as u32,
        };
        self.broadcast_raw(encode(&msg));
        self.publish();
    }

    fn close_all(&mut self, code: u16, reason: &str) {
        for link in self.links() {
            link.kick.kick(code, reason);
        }
    }

    /// The `your_turn` message for the player to act, if the game runs.
    fn turn_info(&self) -> Option<(Colour, ServerMessage)> {
        let game = self.game.as_ref()?;
        let deadline_ms = self.deadline.map(|d| d.ms).unwrap_or(0);
        let (colour, must_roll, dice, used, bonus) = match game.expect() {
            Expect::Roll { colour } => (colour, true, None, [false, false], None),
            Expect::Move {
                colour,
                dice,
                used,
                bonus,
            } => (colour, false, Some(dice), used, bonus),
            Expect::Finished(_) => return None,
        };
        Some((
            colour,
            ServerMessage::YourTurn(TurnInfo {
                room: self.code.clone(),
                seq: self.seq,
                colour,
                must_roll,
                dice,
                used,
                bonus,
                legal: game.legal_actions(),
                previews: game.previews(),
                deadline_ms,
            }),
        ))
    }

    fn send_turn_info(&mut self) {
        if let Some((colour, msg)) = self.turn_info() {
            if let Some(conn) = self
                .seats
                .iter()
                .find(|s| s.colour == colour && !s.abandoned)
                .and_then(|s| s.conn.as_ref().map(|l| l.id))
            {
                self.send_to(conn, &msg);
            }
        }
    }

    // ----- committing events -----------------------------------------------------------

    /// Persists `events` (write-ahead, when a game exists), then commits `game` and
    /// broadcasts. On a store failure nothing changes.
    async fn commit(&mut self, game: Option<Game>, events: Vec<RoomEvent>) -> Result<(), Refusal> {
        let at_ms = now_ms();
        let first = self.seq + 1;
        let numbered: Vec<(u64, RoomEvent)> = events
            .into_iter()
            .enumerate()
            .map(|(i, e)| (first + i as u64, e))
            .collect();
        if let Some(game_id) = self.game_id {
            let records: Vec<EventRecord> = numbered
                .iter()
                .map(|(seq, e)| EventRecord {
                    seq: *seq as i64,
                    event: serde_json::to_value(e).unwrap_or_default(),
                    created_at_ms: at_ms,
                })
                .collect();
            if let Err(e) = self.state.store().append_events(game_id, records).await {
                warn!(game = %game_id, error = %e, "store failed appending events; not applied");
                return Err(Refusal::code(ErrorCode::Internal));
            }
        }
        if let Some(g) = game {
            self.game = Some(g);
            // The result is durable before anyone hears of it.
            if let Some(outcome) = g.outcome() {
                self.finish(outcome).await;
            }
        }
        let last = numbered.last().map(|(seq, _)| *seq);
        let after = if game.is_some() { self.game } else { None };
        for (seq, event) in numbered {
            self.seq = seq;
            let after = after.as_ref().filter(|_| Some(seq) == last);
            let frame = encode(&crate::frames::event_message(
                &self.code, seq, at_ms, event, after,
            ));
            self.history.push_back((seq, frame.clone()));
            while self.history.len() > self.state.config().history {
                self.history.pop_front();
            }
            self.broadcast_raw(frame);
        }
        self.publish();
        Ok(())
    }

    /// Applies `action` to the game: engine check, clock bookkeeping, write-ahead,
    /// broadcast, `your_turn`, and the end of the game.
    async fn apply(&mut self, action: Action, prelude: Vec<RoomEvent>) -> Result<(), Refusal> {
        let Some(game) = self.game else {
            return Err(Refusal::code(ErrorCode::GameNotStarted));
        };
        let (next, engine_events) = game.apply(&action).map_err(|e| Refusal {
            code: ErrorCode::IllegalAction,
            message: e.message.clone(),
            rule: Some(e.rule.to_owned()),
        })?;
        let mut events = prelude;
        events.extend(
            engine_events
                .into_iter()
                .map(|event| RoomEvent::Game { event }),
        );
        // A new throw gets a fresh clock (R-CLOCK, D-12), except when someone else's
        // abandonment leaves the current throw as it was.
        let new_throw = match (next.expect(), &action) {
            (Expect::Roll { colour }, Action::Abandon { .. }) => {
                colour != game.turn() || !matches!(game.expect(), Expect::Roll { .. })
            }
            (Expect::Roll { .. }, _) => true,
            _ => false,
        };
        let mut deadline = self.deadline;
        if new_throw {
            let d = self.fresh_deadline();
            events.push(RoomEvent::Turn {
                colour: next.turn(),
                deadline_ms: d.ms,
            });
            deadline = Some(d);
        }
        if next.outcome().is_some() {
            deadline = None;
        }
        // Set before the commit so the listing it publishes carries the new deadline;
        // put back if the commit fails (nothing changed then).
        let previous = std::mem::replace(&mut self.deadline, deadline);
        if let Err(e) = self.commit(Some(next), events).await {
            self.deadline = previous;
            return Err(e);
        }
        observe::action_applied(&action);
        // The new deadline is durable already: the `turn` event that carries it was
        // committed with the action's events, and recovery reads it from there. No second
        // write: a separate deadline update per throw cost the store a commit of its own.
        self.turn_pending = true;
        Ok(())
    }

    fn fresh_deadline(&self) -> Deadline {
        let clock = Duration::from_secs(u64::from(self.settings.turn_clock_secs));
        Deadline {
            at: Instant::now() + clock,
            ms: now_ms() + clock.as_millis() as i64,
        }
    }

    async fn finish(&mut self, outcome: parchis_engine::Outcome) {
        let game_id = self.game_id.unwrap_or_default();
        let at = now_ms();
        self.status = RoomStatus::Finished;
        self.deadline = None;
        for seat in &mut self.seats {
            seat.grace_until = None;
        }
        let reason = match outcome.reason {
            parchis_engine::WinReason::Goal => "completed",
            parchis_engine::WinReason::Forfeit => "abandoned",
        };
        observe::game_finished(
            &self.code,
            game_id,
            &self.settings.preset,
            reason,
            Some(outcome.winner),
        );
        let store = self.state.store().clone();
        if let Err(e) = store
            .finish_game(
                game_id,
                &serde_json::to_value(outcome).unwrap_or_default(),
                reason,
                at,
            )
            .await
        {
            warn!(game = %game_id, error = %e, "store failed finishing the game");
        }
        let update = RoomStatusUpdate {
            status: StoredStatus::Finished,
            started_at_ms: None,
            finished_at_ms: Some(at),
            updated_at_ms: at,
        };
        if let Err(e) = store.update_room_status(&self.code, update).await {
            warn!(error = %e, "store failed updating the room status");
        }
        self.publish();
    }

    // ----- timers ----------------------------------------------------------------------

    async fn on_timers(&mut self) {
        let now = Instant::now();
        if self.deadline.is_some_and(|d| d.at <= now) {
            self.timeout().await;
        }
        let expired: Vec<u64> = self
            .seats
            .iter()
            .filter(|s| s.grace_until.is_some_and(|g| g <= now))
            .map(|s| s.id)
            .collect();
        for seat_id in expired {
            self.grace_expired(seat_id).await;
        }
        if self.bot_due.is_some_and(|t| t <= now) {
            self.bot_due = None;
            self.bot_act().await;
        }
    }

    /// Applies an expired clock before anything else (R-CLOCK): an action that arrives
    /// after the deadline is then judged against the next throw.
    async fn expire_clock_first(&mut self) {
        if self.deadline.is_some_and(|d| d.at <= Instant::now()) {
            self.timeout().await;
        }
    }

    async fn timeout(&mut self) {
        let Some(game) = self.game else { return };
        let colour = game.turn();
        if let Err(e) = self.apply(Action::Timeout, Vec::new()).await {
            warn!(error = %e.message, "timeout not applied; retrying in 1 s");
            if let Some(d) = &mut self.deadline {
                d.at = Instant::now() + Duration::from_secs(1);
            }
            return;
        }
        let n = self
            .game
            .map(|g| g.consecutive_timeouts(colour))
            .unwrap_or(0);
        observe::turn_timed_out(&self.code, self.game_id, colour, n);
        if n >= self.settings.timeouts_to_abandon {
            self.abandon(colour, AbandonReason::Timeouts).await;
        }
    }

    async fn grace_expired(&mut self, seat_id: u64) {
        let Some(i) = self.seat_index(seat_id) else {
            return;
        };
        self.seats[i].grace_until = None;
        if self.seats[i].conn.is_some() {
            return;
        }
        let colour = self.seats[i].colour;
        match self.status {
            RoomStatus::Lobby => {
                self.free_seat(seat_id, "grace_expired").await;
            }
            RoomStatus::Playing => {
                self.abandon(colour, AbandonReason::Disconnected).await;
            }
            RoomStatus::Finished => {}
        }
    }

    async fn abandon(&mut self, colour: Colour, reason: AbandonReason) {
        let Some(game) = self.game else { return };
        if game.outcome().is_some() || game.seat(colour) != SeatStatus::Playing {
            return;
        }
        if self.settings.on_abandon == OnAbandon::Bot {
            if let Some(i) = self
                .seats
                .iter()
                .position(|s| s.colour == colour && s.bot.is_none())
            {
                if self.bot_take_over(i, reason).await {
                    return;
                }
            }
        }
        let prelude = vec![RoomEvent::Abandoned { colour, reason }];
        match self.apply(Action::Abandon { colour }, prelude).await {
            Ok(()) => {
                observe::abandoned(&self.code, self.game_id, colour, reason);
                if let Some(seat) = self.seats.iter_mut().find(|s| s.colour == colour) {
                    seat.abandoned = true;
                    seat.grace_until = None;
                }
                self.publish();
            }
            Err(e) => warn!(%colour, error = %e.message, "abandon not applied"),
        }
    }

    // ----- commands ----------------------------------------------------------------------

    async fn handle(&mut self, cmd: RoomCmd) {
        match cmd {
            RoomCmd::Join {
                link,
                req,
                name,
                colour,
                reply,
            } => {
                let result = self.join(link, req, name, colour).await;
                let _ = reply.send(result);
            }
            RoomCmd::Watch { link, req, reply } => {
                let result = self.watch(link, req);
                let _ = reply.send(result);
            }
            RoomCmd::Resume {
                link,
                req,
                token,
                last_seq,
                reply,
            } => {
                let result = self.resume(link, req, &token, last_seq);
                let _ = reply.send(result);
            }
            RoomCmd::Command {
                conn,
                member,
                req,
                seq,
                cmd,
                received,
            } => {
                let result = self.command(conn, member, seq, cmd).await;
                let acted = result.is_ok() && matches!(cmd, SeatCmd::Roll | SeatCmd::Play(_));
                let msg = match result {
                    Ok(()) => ServerMessage::Ok { req, seq: self.seq },
                    Err(r) => {
                        observe::refused(r.code);
                        r.to_message(Some(req))
                    }
                };
                if acted {
                    // Events durable and their frames queued; the reply goes next.
                    observe::action_latency(received.elapsed().as_secs_f64());
                }
                self.send_to(conn, &msg);
                if cmd == SeatCmd::Leave {
                    self.drop_link(conn);
                }
            }
            RoomCmd::Detach { conn } => self.detach(conn),
            RoomCmd::View { reply } => {
                let _ = reply.send(self.view());
            }
            RoomCmd::BotChose(choice) => self.bot_chose(choice).await,
            RoomCmd::Inspect { reply } => {
                let _ = reply.send(self.inspect());
            }
            RoomCmd::Close { reply } => {
                let _ = reply.send(self.close_by_admin().await);
            }
        }
    }

    async fn join(
        &mut self,
        link: ConnLink,
        req: u64,
        name: String,
        colour: Option<Colour>,
    ) -> Result<Member, Refusal> {
        if self.status != RoomStatus::Lobby {
            return Err(Refusal::new(
                ErrorCode::GameStarted,
                "the game has started: you can still watch as a spectator",
            ));
        }
        let name = name.trim().to_owned();
        let chars = name.chars().count();
        if chars == 0
            || chars > parchis_protocol::MAX_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                format!(
                    "a display name has 1 to {} printable characters",
                    parchis_protocol::MAX_NAME_CHARS
                ),
            ));
        }
        if self.seats.len() >= usize::from(self.settings.seats) {
            return Err(Refusal::code(ErrorCode::RoomFull));
        }
        let colour = match colour {
            Some(c) if self.taken(c) => {
                return Err(Refusal::new(
                    ErrorCode::ColourTaken,
                    format!("{c} is taken; free colours: {:?}", self.free_colours()),
                ))
            }
            Some(c) => c,
            None => match self.free_colours().first() {
                Some(c) => *c,
                None => return Err(Refusal::code(ErrorCode::RoomFull)),
            },
        };
        let token = ids::session_token();
        let seat = Seat {
            id: self.next_seat_id,
            colour,
            name: name.clone(),
            token_hash: hash_token(&token),
            creator: self.seats.is_empty(),
            joined_at_ms: now_ms(),
            conn: None,
            grace_until: None,
            abandoned: false,
            bot: None,
        };
        if let Err(e) = self
            .state
            .store()
            .upsert_seat(&self.seat_record(&seat))
            .await
        {
            warn!(error = %e, "store failed saving a seat");
            return Err(Refusal::code(ErrorCode::Internal));
        }
        self.next_seat_id += 1;
        let seat_id = seat.id;
        let creator = seat.creator;
        self.seats.push(seat);
        self.commit(
            None,
            vec![RoomEvent::PlayerJoined {
                colour,
                name,
                creator,
                bot: None,
            }],
        )
        .await?;
        let conn = link.id;
        observe::player_joined(&self.code, colour, conn, creator);
        if let Some(i) = self.seat_index(seat_id) {
            self.seats[i].conn = Some(link);
        }
        let welcome = ServerMessage::Welcome {
            req,
            room: self.code.clone(),
            role: Role::Player,
            colour: Some(colour),
            token: Some(token),
            seq: self.seq,
            snapshot: Some(Box::new(self.view())),
        };
        self.send_to(conn, &welcome);
        self.presence();
        Ok(Member::Player(seat_id))
    }

    fn watch(&mut self, link: ConnLink, req: u64) -> Result<Member, Refusal> {
        if !self.settings.spectators {
            return Err(Refusal::code(ErrorCode::SpectatorsNotAllowed));
        }
        let conn = link.id;
        observe::spectator_joined(&self.code, self.game_id, conn);
        self.spectators.push(link);
        let welcome = ServerMessage::Welcome {
            req,
            room: self.code.clone(),
            role: Role::Spectator,
            colour: None,
            token: None,
            seq: self.seq,
            snapshot: Some(Box::new(self.view())),
        };
        self.send_to(conn, &welcome);
        self.presence();
        Ok(Member::Spectator)
    }

    fn resume(
        &mut self,
        link: ConnLink,
        req: u64,
        token: &str,
        last_seq: u64,
    ) -> Result<Member, Refusal> {
        let hash = hash_token(token);
        let Some(i) = self.seats.iter().position(|s| s.token_hash == hash) else {
            return Err(Refusal::code(ErrorCode::BadToken));
        };
        if self.seats[i].abandoned {
            return Err(Refusal::new(
                ErrorCode::BadToken,
                "this seat abandoned the game; you can watch as a spectator",
            ));
        }
        if let Some(old) = self.seats[i].conn.take() {
            let msg = ServerMessage::Closing {
                code: close_code::SESSION_REPLACED,
                reason: "another connection took over this seat".into(),
            };
            old.send(encode(&msg));
            old.kick.kick(
                close_code::SESSION_REPLACED,
                "another connection took over this seat",
            );
        }
        let conn = link.id;
        let colour = self.seats[i].colour;
        self.seats[i].conn = Some(link);
        self.seats[i].grace_until = None;
        let seat_id = self.seats[i].id;
        // Missed events from the bounded history, or a snapshot when they are too old.
        let replay = last_seq <= self.seq
            && (last_seq == self.seq
                || self
                    .history
                    .front()
                    .is_some_and(|(first, _)| *first <= last_seq + 1));
        let welcome = ServerMessage::Welcome {
            req,
            room: self.code.clone(),
            role: Role::Player,
            colour: Some(colour),
            token: None,
            seq: self.seq,
            snapshot: (!replay).then(|| Box::new(self.view())),
        };
        self.send_to(conn, &welcome);
        if replay {
            let missed: Vec<Arc<str>> = self
                .history
                .iter()
                .filter(|(seq, _)| *seq > last_seq)
                .map(|(_, f)| f.clone())
                .collect();
            let mut ok = true;
            if let Some(link) = self.link_of(conn) {
                ok = missed.into_iter().all(|f| link.send(f));
            }
            if !ok {
                self.detach(conn);
                return Ok(Member::Player(seat_id));
            }
        }
        observe::resumed(&self.code, self.game_id, colour, conn, last_seq, replay);
        self.presence();
        if self.turn_info().is_some_and(|(c, _)| c == colour) {
            self.send_turn_info();
        }
        Ok(Member::Player(seat_id))
    }

    async fn command(
        &mut self,
        conn: ConnId,
        member: Member,
        seq: u64,
        cmd: SeatCmd,
    ) -> Result<(), Refusal> {
        let seat_id = match member {
            Member::Spectator => {
                return match cmd {
                    SeatCmd::Leave => Ok(()),
                    _ => Err(Refusal::code(ErrorCode::SpectatorCannotAct)),
                }
            }
            Member::Player(id) => id,
        };
        let Some(i) = self.seat_index(seat_id) else {
            return Err(Refusal::new(
                ErrorCode::NotJoined,
                "you no longer hold a seat",
            ));
        };
        if self.seats[i].conn.as_ref().map(|l| l.id) != Some(conn) {
            return Err(Refusal::new(
                ErrorCode::NotJoined,
                "another connection holds this seat",
            ));
        }
        if cmd == SeatCmd::Leave {
            return self.leave(seat_id).await;
        }
        if self.status == RoomStatus::Playing {
            self.expire_clock_first().await;
        }
        if seq != self.seq {
            return Err(Refusal::new(
                ErrorCode::StaleSeq,
                format!(
                    "command based on seq {seq}; the room is at seq {}",
                    self.seq
                ),
            ));
        }
        let Some(i) = self.seat_index(seat_id) else {
            return Err(Refusal::code(ErrorCode::NotJoined));
        };
        let colour = self.seats[i].colour;
        match cmd {
            SeatCmd::ChooseColour(c) => self.choose_colour(i, c).await,
            SeatCmd::Start => self.start(i).await,
            SeatCmd::Roll | SeatCmd::Play(_) => {
                match self.status {
                    RoomStatus::Lobby => return Err(Refusal::code(ErrorCode::GameNotStarted)),
                    RoomStatus::Finished => return Err(Refusal::code(ErrorCode::GameOver)),
                    RoomStatus::Playing => {}
                }
                let Some(game) = self.game else {
                    return Err(Refusal::code(ErrorCode::GameNotStarted));
                };
                if self.seats[i].abandoned {
                    return Err(Refusal::new(
                        ErrorCode::NotYourTurn,
                        "you abandoned the game",
                    ));
                }
                if game.turn() != colour {
                    return Err(Refusal::new(
                        ErrorCode::NotYourTurn,
                        format!("it is {}'s turn", game.turn()),
                    ));
                }
                let action = match cmd {
                    SeatCmd::Roll => {
                        let dice = Dice::from_slice(&self.throw())
                            .map_err(|m| Refusal::new(ErrorCode::Internal, m))?;
                        Action::Roll { dice }
                    }
                    SeatCmd::Play(p) => Action::from(p),
                    _ => return Err(Refusal::code(ErrorCode::Internal)),
                };
                self.apply(action, Vec::new()).await
            }
            SeatCmd::Leave => Ok(()),
        }
    }

    async fn choose_colour(&mut self, i: usize, colour: Colour) -> Result<(), Refusal> {
        if self.status != RoomStatus::Lobby {
            return Err(Refusal::code(ErrorCode::GameStarted));
        }
        let from = self.seats[i].colour;
        if from == colour {
            return Ok(());
        }
        if self.taken(colour) {
            return Err(Refusal::new(
                ErrorCode::ColourTaken,
                format!("{colour} is taken; free colours: {:?}", self.free_colours()),
            ));
        }
        let mut record = self.seat_record(&self.seats[i]);
        record.colour = colour.to_string();
        let store = self.state.store().clone();
        if let Err(e) = store.upsert_seat(&record).await {
            warn!(error = %e, "store failed saving a seat");
            return Err(Refusal::code(ErrorCode::Internal));
        }
        if let Err(e) = store.delete_seat(&self.code, &from.to_string()).await {
            warn!(error = %e, "store failed deleting a seat");
        }
        self.seats[i].colour = colour;
        self.commit(None, vec![RoomEvent::ColourChanged { from, to: colour }])
            .await?;
        let conn = self.seats[i].conn.as_ref().map_or(0, |l| l.id);
        observe::colour_changed(&self.code, from, colour, conn);
        Ok(())
    }

    /// One throw of the rule set's dice (1 or 2) from the room's RNG.
    fn throw(&mut self) -> Vec<u8> {
        (0..self.rules.dice.clamp(1, 2))
            .map(|_| self.rng.gen_range(1..=6))
            .collect()
    }

    /// The opening roll (R-FIRST) for rule sets whose first player is not the creator:
    /// every seated colour throws the dice; a tie for the best value makes the tied
    /// colours throw again. Returns one `opening_roll` event per round and the winner.
    fn opening_roll(&mut self, colours: &[Colour]) -> (Vec<RoomEvent>, Option<Colour>) {
        let mut events = Vec::new();
        let mut rollers = colours.to_vec();
        // A tie among n players repeats with probability < 1/6; 100 rounds never tie.
        for _ in 0..100 {
            let rolls: Vec<(Colour, u8)> = rollers
                .iter()
                .map(|&c| (c, self.throw().iter().sum()))
                .collect();
            let first = self.rules.first_by_roll(&rolls);
            events.push(RoomEvent::OpeningRoll {
                rolls: rolls
                    .iter()
                    .map(|&(colour, value)| OpeningRollEntry { colour, value })
                    .collect(),
                first,
            });
            if first.is_some() {
                return (events, first);
            }
            let best = match self.rules.first_player {
                parchis_engine::FirstPlayer::LowestRoll => rolls.iter().map(|r| r.1).min(),
                _ => rolls.iter().map(|r| r.1).max(),
            };
            rollers = rolls
                .iter()
                .filter(|r| Some(r.1) == best)
                .map(|r| r.0)
                .collect();
        }
        (events, None)
    }

    async fn start(&mut self, i: usize) -> Result<(), Refusal> {
        if self.status != RoomStatus::Lobby {
            return Err(Refusal::code(ErrorCode::GameStarted));
        }
        if !self.seats[i].creator {
            return Err(Refusal::code(ErrorCode::NotCreator));
        }
        let rules = self.rules;
        // Play against the computer: bots take the free seats.
        let fill: Vec<Colour> = match self.settings.bots {
            Some(_) => self
                .free_colours()
                .into_iter()
                .take(usize::from(self.settings.seats).saturating_sub(self.seats.len()))
                .collect(),
            None => Vec::new(),
        };
        let seated = self.seats.len() + fill.len();
        if seated < 2 || seated < usize::from(rules.min_players) {
            return Err(Refusal::new(
                ErrorCode::NotEnoughPlayers,
                format!(
                    "{} needs at least {} players to start; {seated} seated",
                    rules.name(),
                    rules.min_players.max(2)
                ),
            ));
        }
        let mut colours: Vec<Colour> = self.seats.iter().map(|s| s.colour).collect();
        colours.extend(&fill);
        let creator = self.seats[i].colour;
        // Check the seats before any dice are thrown.
        Game::new(rules, &colours, creator)
            .map_err(|e| Refusal::new(ErrorCode::BadRequest, e.to_string()))?;
        if let (Some(level), false) = (self.settings.bots, fill.is_empty()) {
            self.add_bots(level, &fill).await?;
        }
        let (opening, first) = if rules.first_player == parchis_engine::FirstPlayer::Creator {
            (Vec::new(), creator)
        } else {
            let (events, winner) = self.opening_roll(&colours);
            (events, winner.unwrap_or(creator))
        };
        let game = Game::new(rules, &colours, first)
            .map_err(|e| Refusal::new(ErrorCode::BadRequest, e.to_string()))?;
        let game_id = Uuid::now_v7();
        let at = now_ms();
        let rules_json = serde_json::to_value(rules).unwrap_or_default();
        let record = GameRecord {
            id: game_id,
            room_code: self.code.clone(),
            preset: rules.name(),
            rules_hash: hex::encode(sha2_digest(rules_json.to_string().as_bytes())),
            rules: rules_json,
            created_at_ms: at,
            finished_at_ms: None,
            result: None,
            reason: None,
            deadline_ms: None,
        };
        let store = self.state.store().clone();
        if let Err(e) = store.create_game(&record).await {
            warn!(error = %e, "store failed creating the game");
            return Err(Refusal::code(ErrorCode::Internal));
        }
        let update = RoomStatusUpdate {
            status: StoredStatus::Playing,
            started_at_ms: Some(at),
            finished_at_ms: None,
            updated_at_ms: at,
        };
        if let Err(e) = store.update_room_status(&self.code, update).await {
            warn!(error = %e, "store failed updating the room status");
        }
        self.game_id = Some(game_id);
        let d = self.fresh_deadline();
        let mut events = opening;
        events.extend([
            RoomEvent::GameStarted {
                game_id: game_id.to_string(),
                first,
                position: game.to_position(),
            },
            RoomEvent::Turn {
                colour: first,
                deadline_ms: d.ms,
            },
        ]);
        if let Err(e) = self.commit(Some(game), events).await {
            self.game_id = None;
            return Err(e);
        }
        self.status = RoomStatus::Playing;
        self.deadline = Some(d);
        if let Err(e) = store.set_deadline(game_id, Some(d.ms)).await {
            warn!(error = %e, "store failed saving the deadline");
        }
        tracing::Span::current().record("game", tracing::field::display(game_id));
        observe::game_started(&self.code, game_id, &self.settings.preset, &colours, first);
        self.publish();
        self.turn_pending = true;
        Ok(())
    }

    async fn leave(&mut self, seat_id: u64) -> Result<(), Refusal> {
        let Some(i) = self.seat_index(seat_id) else {
            return Ok(());
        };
        match self.status {
            RoomStatus::Lobby => {
                self.free_seat(seat_id, "left").await;
                Ok(())
            }
            RoomStatus::Playing => {
                let colour = self.seats[i].colour;
                self.abandon(colour, AbandonReason::Left).await;
                Ok(())
            }
            RoomStatus::Finished => Ok(()),
        }
    }

    /// Frees a seat before the start; the creator role passes to the next player.
    async fn free_seat(&mut self, seat_id: u64, why: &'static str) {
        let Some(i) = self.seat_index(seat_id) else {
            return;
        };
        let seat = self.seats.remove(i);
        if let Err(e) = self
            .state
            .store()
            .delete_seat(&self.code, &seat.colour.to_string())
            .await
        {
            warn!(error = %e, "store failed deleting a seat");
        }
        let mut events = vec![RoomEvent::PlayerLeft {
            colour: seat.colour,
        }];
        if seat.creator {
            if let Some(next) = self.seats.first_mut() {
                next.creator = true;
                events.push(RoomEvent::CreatorChanged {
                    colour: next.colour,
                });
                let record = self.seat_record(&self.seats[0]);
                if let Err(e) = self.state.store().upsert_seat(&record).await {
                    warn!(error = %e, "store failed saving a seat");
                }
            }
        }
        observe::seat_freed(
            &self.code,
            seat.colour,
            seat.conn.as_ref().map(|l| l.id),
            why,
        );
        // Keep the leaving connection in the loop for its `ok`; drop it afterwards.
        if let Some(link) = seat.conn {
            self.spectators.push(link);
        }
        if let Err(e) = self.commit(None, events).await {
            warn!(error = %e.message, "lobby events not committed");
        }
    }

    // ----- admin --------------------------------------------------------------------------

    fn inspect(&self) -> AdminRoom {
        AdminRoom {
            code: self.code.clone(),
            status: self.status,
            preset: self.settings.preset.clone(),
            game_id: self.game_id.map(|id| id.to_string()),
            created_at_ms: self.created_at_ms,
            seats: self
                .seats
                .iter()
                .map(|s| AdminSeat {
                    colour: s.colour,
                    name: s.name.clone(),
                    conn: s.conn.as_ref().map(|l| l.id),
                    bot: s.bot.as_ref().map(|b| b.level),
                    abandoned: s.abandoned,
                })
                .collect(),
            spectators: self.spectators.iter().map(|l| l.id).collect(),
        }
    }

    /// An administrator closes the room: a running game ends with reason
    /// `closed_by_admin` (stored, no winner), the room is stored finished (not restored
    /// after a restart), every connection is closed with 4002 and the room goes away.
    async fn close_by_admin(&mut self) -> AdminCloseRoom {
        let at = now_ms();
        let store = self.state.store().clone();
        let running =
            self.status == RoomStatus::Playing && self.game.is_some_and(|g| g.outcome().is_none());
        let game_id = self.game_id.filter(|_| running);
        if let Some(id) = game_id {
            let result = serde_json::json!({ "reason": "closed_by_admin" });
            if let Err(e) = store.finish_game(id, &result, "closed_by_admin", at).await {
                warn!(game = %id, error = %e, "store failed finishing the closed game");
            }
            observe::game_finished(
                &self.code,
                id,
                &self.settings.preset,
                "closed_by_admin",
                None,
            );
        }
        if self.status != RoomStatus::Finished {
            let update = RoomStatusUpdate {
                status: StoredStatus::Finished,
                started_at_ms: None,
                finished_at_ms: Some(at),
                updated_at_ms: at,
            };
            if let Err(e) = store.update_room_status(&self.code, update).await {
                warn!(error = %e, "store failed updating the closed room's status");
            }
        }
        self.status = RoomStatus::Finished;
        self.deadline = None;
        self.bot_due = None;
        let connections_closed = self.links().count() as u32;
        self.close_all(
            close_code::CLOSED_BY_ADMIN,
            "the room was closed by an administrator",
        );
        self.spectators.clear();
        for seat in &mut self.seats {
            seat.conn = None;
            seat.grace_until = None;
        }
        self.publish();
        AdminCloseRoom {
            code: self.code.clone(),
            game_id: game_id.map(|id| id.to_string()),
            connections_closed,
        }
    }

    /// Forgets a connection without starting a grace period (after `leave`).
    fn drop_link(&mut self, conn: ConnId) {
        self.spectators.retain(|l| l.id != conn);
        for seat in &mut self.seats {
            if seat.conn.as_ref().is_some_and(|l| l.id == conn) {
                seat.conn = None;
            }
        }
        self.presence();
    }

    /// A connection went away (closed, kicked, or too slow): spectators are forgotten;
    /// a seat keeps its place for the grace period (R-LEAVE).
    fn detach(&mut self, conn: ConnId) {
        let before = self.spectators.len();
        self.spectators.retain(|l| l.id != conn);
        let mut changed = before != self.spectators.len();
        let grace = Duration::from_secs(u64::from(self.settings.disconnect_grace_secs));
        let running = self.status != RoomStatus::Finished;
        for seat in &mut self.seats {
            if seat.conn.as_ref().is_some_and(|l| l.id == conn) {
                seat.conn = None;
                if running && !seat.abandoned {
                    seat.grace_until = Some(Instant::now() + grace);
                }
                observe::player_disconnected(&self.code, self.game_id, seat.colour, conn);
                changed = true;
            }
        }
        if changed {
            self.presence();
        }
    }
}

fn sha2_digest(bytes: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).to_vec()
}

// ----- restart recovery --------------------------------------------------------------------

/// Why a stored room could not be brought back. The room then stays closed: it is not
/// registered, and its stored rows are left untouched for an operator to inspect.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// A stored value does not parse (settings, colour, preset, event JSON).
    #[error("stored data unreadable: {0}")]
    Unreadable(String),
    /// Replaying the stored actions through the engine failed or produced other events.
    #[error("replay diverges from the stored events: {0}")]
    Diverged(String),
    /// The room code is taken or the server is full.
    #[error("could not register the room")]
    Register,
}

fn unreadable(what: &str, e: impl std::fmt::Display) -> RestoreError {
    RestoreError::Unreadable(format!("{what}: {e}"))
}

/// The game part of a stored room, rebuilt by replay.
struct RestoredGame {
    id: Uuid,
    game: Game,
    seq: u64,
    history: VecDeque<(u64, Arc<str>)>,
    /// The stored absolute deadline, or that of the last `turn` event.
    deadline_ms: Option<i64>,
}

/// Rebuilds the running game of a stored room: parses its events, replays the actions they
/// record through the engine, and checks the replay produced exactly the stored engine events.
fn rebuild_game(
    code: &str,
    snapshot: &parchis_store::RoomSnapshot,
    history_len: usize,
) -> Result<Option<RestoredGame>, RestoreError> {
    let Some(record) = &snapshot.game else {
        return Ok(None);
    };
    let mut start: Option<(RuleSet, Vec<Colour>, Colour)> = None;
    let mut stored_engine = Vec::new();
    let mut history = VecDeque::new();
    let mut last_turn_deadline = None;
    let mut seq = 0u64;
    for rec in &snapshot.events {
        let event: RoomEvent = serde_json::from_value(rec.event.clone())
            .map_err(|e| unreadable(&format!("event seq {}", rec.seq), e))?;
        let this_seq = u64::try_from(rec.seq).map_err(|e| unreadable("event seq", e))?;
        if seq != 0 && this_seq != seq + 1 {
            return Err(RestoreError::Diverged(format!(
                "event seq {this_seq} follows seq {seq}"
            )));
        }
        seq = this_seq;
        match &event {
            RoomEvent::GameStarted {
                first, position, ..
            } => {
                start = Some((
                    position.rules,
                    position.players.iter().map(|p| p.colour).collect(),
                    *first,
                ));
            }
            RoomEvent::Turn { deadline_ms, .. } => last_turn_deadline = Some(*deadline_ms),
            RoomEvent::Game { event } => stored_engine.push(*event),
            _ => {}
        }
        let frame = encode(&crate::frames::event_message(
            code,
            this_seq,
            rec.created_at_ms,
            event,
            None,
        ));
        history.push_back((this_seq, frame));
        while history.len() > history_len {
            history.pop_front();
        }
    }
    let Some((rules, seats, first)) = start else {
        return Err(RestoreError::Diverged(
            "the log has no game_started event".into(),
        ));
    };
    let replay = parchis_engine::GameRecord::from_events(rules, seats, first, &stored_engine);
    let (game, replayed) = replay
        .replay()
        .map_err(|e| RestoreError::Diverged(e.to_string()))?;
    if replayed != stored_engine {
        let at = replayed
            .iter()
            .zip(&stored_engine)
            .position(|(a, b)| a != b)
            .unwrap_or(replayed.len().min(stored_engine.len()));
        return Err(RestoreError::Diverged(format!(
            "engine event {at} differs ({} replayed, {} stored)",
            replayed.len(),
            stored_engine.len()
        )));
    }
    Ok(Some(RestoredGame {
        id: record.id,
        game,
        seq,
        history,
        // The last `turn` event is authoritative (it is written with the action); the
        // games table's column is a convenience copy that may lag behind it.
        deadline_ms: last_turn_deadline.or(record.deadline_ms),
    }))
}

/// Brings back one stored room after a restart: seats (with their token hashes, so old
/// session tokens `resume`), the game rebuilt by replaying its events through the engine,
/// the event seq counter and the turn clock, then spawns and registers its actor.
///
/// Every seat starts disconnected with a fresh grace period. A stored deadline still in
/// the future is kept as it was; one that passed while the server was down gives the
/// current player a fresh full clock, announced by a new `turn` event.
///
/// # Errors
/// [`RestoreError`] when the stored rows do not parse or the replay diverges from the
/// stored events; the room is then not registered (it stays closed).
pub async fn restore(
    state: &AppState,
    snapshot: &parchis_store::RoomSnapshot,
) -> Result<(), RestoreError> {
    let code = snapshot.room.code.clone();
    let settings: RoomSettings = serde_json::from_value(snapshot.room.settings.clone())
        .map_err(|e| unreadable("room settings", e))?;
    let grace = Duration::from_secs(u64::from(settings.disconnect_grace_secs));
    let mut rules = settings
        .rules()
        .map_err(|e| unreadable("room rule set", e))?;
    let mut rng = match state.config().dice_seed {
        Some(seed) => ChaCha20Rng::seed_from_u64(seed.wrapping_add(state.next_id())),
        None => ChaCha20Rng::from_entropy(),
    };
    let mut seats = Vec::with_capacity(snapshot.seats.len());
    for (i, s) in snapshot.seats.iter().enumerate() {
        let colour: Colour = s.colour.parse().map_err(|e| unreadable("seat colour", e))?;
        let bot = match s.bot.as_deref() {
            None => None,
            Some(name) => {
                let level = parse_level(name).ok_or_else(|| unreadable("seat bot level", name))?;
                Some(SeatBot::new(level, rng.gen()))
            }
        };
        seats.push(Seat {
            id: i as u64 + 1,
            colour,
            name: s.display_name.clone(),
            token_hash: s.token_hash.clone(),
            creator: s.is_creator,
            joined_at_ms: s.joined_at_ms,
            conn: None,
            grace_until: bot.is_none().then(|| Instant::now() + grace),
            abandoned: false,
            bot,
        });
    }
    let playing = snapshot.room.status == StoredStatus::Playing;
    let restored = if playing {
        rebuild_game(&code, snapshot, state.config().history)?
    } else {
        None
    };
    if let Some(r) = &restored {
        // The game's own rule set (from its `game_started` position) is authoritative.
        rules = *r.game.rules();
    }
    let (tx, rx) = mpsc::channel(state.config().room_queue);
    let next_seat_id = seats.len() as u64 + 1;
    let mut room = Room {
        state: state.clone(),
        code: code.clone(),
        settings,
        rules,
        created_at_ms: snapshot.room.created_at_ms,
        status: RoomStatus::Lobby,
        seats,
        spectators: Vec::new(),
        next_seat_id,
        seq: 0,
        history: VecDeque::new(),
        game: None,
        game_id: None,
        deadline: None,
        rng,
        listing: watch::channel(placeholder_listing()).0,
        turn_pending: false,
        idle_since: None,
        bot_due: None,
        bot_thinking: false,
        self_tx: tx.downgrade(),
    };
    if room.seats.is_empty() {
        room.idle_since = Some(Instant::now());
    }
    let span = tracing::info_span!("room", room = %code, game = tracing::field::Empty);
    if let Some(r) = restored {
        span.record("game", tracing::field::display(r.id));
        for seat in &mut room.seats {
            if r.game.seat(seat.colour) != SeatStatus::Playing {
                seat.abandoned = true;
                seat.grace_until = None;
            }
        }
        room.seq = r.seq;
        room.history = r.history;
        room.game_id = Some(r.id);
        room.game = Some(r.game);
        if let Some(outcome) = r.game.outcome() {
            // The crash came between the last event and the room's status update.
            room.finish(outcome).instrument(span.clone()).await;
            info!(room = %code, game = %r.id, "restored game had already ended: room closed");
            return Ok(());
        }
        room.status = RoomStatus::Playing;
        let now = now_ms();
        match r.deadline_ms {
            Some(ms) if ms > now => {
                let left = Duration::from_millis((ms - now) as u64);
                room.deadline = Some(Deadline {
                    at: Instant::now() + left,
                    ms,
                });
            }
            _ => {
                // The deadline passed while the server was down: a fresh full clock.
                let d = room.fresh_deadline();
                let turn = RoomEvent::Turn {
                    colour: r.game.turn(),
                    deadline_ms: d.ms,
                };
                room.commit(None, vec![turn])
                    .instrument(span.clone())
                    .await
                    .map_err(|e| unreadable("store", e.message))?;
                room.deadline = Some(d);
                if let Err(e) = state.store().set_deadline(r.id, Some(d.ms)).await {
                    warn!(room = %code, game = %r.id, error = %e, "store failed saving the deadline");
                }
            }
        }
        info!(
            room = %code,
            game = %r.id,
            seq = room.seq,
            deadline_ms = room.deadline.map(|d| d.ms),
            "game restored"
        );
    } else {
        info!(room = %code, seats = room.seats.len(), "lobby restored");
    }
    let (ltx, lrx) = watch::channel(room.listing());
    room.listing = ltx;
    let handle = RoomHandle {
        code: Arc::from(code.as_str()),
        tx,
        listing: lrx,
    };
    if !state.register(handle) {
        return Err(RestoreError::Register);
    }
    state
        .tracker()
        .spawn(async move { room.run(rx).await }.instrument(span));
    Ok(())
}
