//! Tests of the room with time as a value: a synchronous-in-spirit driver feeds the core
//! inputs at chosen times and carries out its effects like the actor does (writes go to a
//! store, or succeed without one), recording what every connection received.
//!
//! * `acks` — acknowledgements wait for the seat rows they change (leave, colour,
//!   grace, bot takeover); a failed write refuses and changes nothing.
//! * `clock` — turn timeouts at the deadline, grace expiry, strikes to abandonment, bot
//!   scheduling, resume windows.
//! * `reattach` — cluster mode's reattach: seat back, replaced connection, spectator,
//!   only the missed events, refused when too far behind.
//! * `rerate` — ratings changed elsewhere: the seat shows them, every connection is told.
//! * `fenced` — the actor under a fence: a write refused because another node took the
//!   lease stops the room at once, nothing of the refused step stored or answered done.
//! * `faults` — a store that fails its N-th write, for every N across a whole game.
//! * `sim` — a seed-driven simulation of many rooms with invariants after every step.
//! * `writes` — what a write the room produced stores of a game's log (piece or rows).
//! * `history` — whole seeded games rebuilt from their log at random points: the rebuilt
//!   history sends the live frames again, byte for byte (positions included).
//! * `lost_ack` — the real actor over a store whose commit answer is lost (applied or
//!   not): the room settles the doubt from its log, rebuilds itself when the log is ahead,
//!   and its clients see every committed event once, in order.

mod acks;
mod clock;
mod director;
mod faults;
mod fenced;
mod history;
mod lost_ack;
mod reattach;
mod rerate;
mod sim;
mod snapshots;
mod writes;

pub use writes::{assert_writes_packed, written_seqs};

use super::{actor, BotChoice, ConnId, Member, Ms, Refusal, SeatCmd};
use crate::Frame;
use async_trait::async_trait;
use parchis_protocol::{RoomSettings, ServerMessage};
use parchis_room_core::core::{Core, Effect, Input, RoomInit};
use parchis_room_core::persist::{self, Write};
use parchis_store::{
    EventRecord, GameEnd, GameQuery, GameRecord, GameStart, MemoryStore, RoomRecord, RoomSnapshot,
    RoomStatusUpdate, SeatRecord, Store, StoreError,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// Unix ms of the tests' epoch.
pub const T0: Ms = 1_800_000_000_000;

/// Settings from JSON (missing fields take their defaults).
pub fn settings(json: Value) -> RoomSettings {
    serde_json::from_value(json).expect("room settings")
}

/// A [`MemoryStore`] whose writes can be made to fail: the N-th write (1-based), or each
/// write with a probability drawn from a seeded RNG. A failed write writes nothing.
pub struct FaultyStore {
    inner: MemoryStore,
    writes: AtomicUsize,
    fail_at: Mutex<Option<usize>>,
    /// `(rng, probability)`.
    random: Mutex<Option<(ChaCha20Rng, f64)>>,
    failed: AtomicUsize,
    /// Random faults spare best-effort writes (see [`Driver`]): set while one runs.
    sparing: std::sync::atomic::AtomicBool,
    /// Faults are a database that cannot be reached (a connection refused), not a
    /// failure of the store itself.
    unreachable: std::sync::atomic::AtomicBool,
}

impl FaultyStore {
    /// A store that fails nothing (yet).
    pub fn new() -> FaultyStore {
        FaultyStore {
            inner: MemoryStore::new(),
            writes: AtomicUsize::new(0),
            fail_at: Mutex::new(None),
            random: Mutex::new(None),
            failed: AtomicUsize::new(0),
            sparing: std::sync::atomic::AtomicBool::new(false),
            unreachable: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// From now on the faults are a database that cannot be reached (`true`: a refused
    /// connection, `StoreError::is_unreachable`) or a failure of the store (`false`, the
    /// default: an I/O error of the store itself).
    pub fn faults_unreachable(&self, yes: bool) {
        self.unreachable.store(yes, Ordering::SeqCst);
    }

    /// Fails the `n`-th write from now on counted from the store's creation.
    pub fn fail_write(&self, n: Option<usize>) {
        *self.fail_at.lock().unwrap_or_else(|e| e.into_inner()) = n;
    }

    /// Fails each write with probability `p` (seeded).
    pub fn fail_randomly(&self, seed: u64, p: f64) {
        *self.random.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((ChaCha20Rng::seed_from_u64(seed), p));
    }

    /// Writes attempted so far.
    pub fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }

    /// Writes failed so far.
    pub fn failures(&self) -> usize {
        self.failed.load(Ordering::SeqCst)
    }

    fn check(&self) -> parchis_store::Result<()> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        let at = *self.fail_at.lock().unwrap_or_else(|e| e.into_inner());
        let random = self
            .random
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .is_some_and(|(rng, p)| rand::Rng::gen_bool(rng, *p))
            && !self.sparing.load(Ordering::SeqCst);
        if at == Some(n) || random {
            self.failed.fetch_add(1, Ordering::SeqCst);
            if self.unreachable.load(Ordering::SeqCst) {
                return Err(StoreError::from(sqlx::Error::Io(std::io::Error::new(
                    std::io::ErrorKind::ConnectionRefused,
                    format!("injected: database unreachable on write {n}"),
                ))));
            }
            return Err(StoreError::Io(Arc::new(std::io::Error::other(format!(
                "injected fault on write {n}"
            )))));
        }
        Ok(())
    }
}

#[async_trait]
impl Store for FaultyStore {
    /// A room write fails whole (the real backends' writes are one transaction each, a
    /// batch included): one fault check, then the memory store's atomic write.
    async fn write_room(
        &self,
        code: &str,
        fence: Option<&parchis_store::Fence>,
        write: parchis_store::RoomWrite,
    ) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.write_room(code, fence, write).await
    }
    async fn create_room(&self, room: &RoomRecord) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.create_room(room).await
    }
    async fn update_room_status(
        &self,
        code: &str,
        u: RoomStatusUpdate,
    ) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.update_room_status(code, u).await
    }
    async fn upsert_seat(&self, seat: &SeatRecord) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.upsert_seat(seat).await
    }
    async fn delete_seat(&self, code: &str, colour: &str) -> parchis_store::Result<bool> {
        self.check()?;
        self.inner.delete_seat(code, colour).await
    }
    async fn create_game(&self, game: &GameRecord) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.create_game(game).await
    }
    async fn append_events(&self, id: Uuid, events: Vec<EventRecord>) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.append_events(id, events).await
    }
    async fn append_after(
        &self,
        id: Uuid,
        after: i64,
        events: Vec<EventRecord>,
    ) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.append_after(id, after, events).await
    }
    async fn start_game(&self, start: GameStart) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.start_game(start).await
    }
    async fn end_game(&self, end: GameEnd) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.end_game(end).await
    }
    async fn set_deadline(&self, id: Uuid, d: Option<i64>) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.set_deadline(id, d).await
    }
    async fn finish_game(
        &self,
        id: Uuid,
        result: &Value,
        reason: &str,
        at: i64,
    ) -> parchis_store::Result<()> {
        self.check()?;
        self.inner.finish_game(id, result, reason, at).await
    }
    async fn get_room(&self, code: &str) -> parchis_store::Result<Option<RoomSnapshot>> {
        self.inner.get_room(code).await
    }
    async fn load_unfinished(&self) -> parchis_store::Result<Vec<RoomSnapshot>> {
        self.inner.load_unfinished().await
    }
    async fn get_game(
        &self,
        id: Uuid,
    ) -> parchis_store::Result<Option<(GameRecord, Vec<EventRecord>)>> {
        self.inner.get_game(id).await
    }
    async fn get_game_log(
        &self,
        id: Uuid,
    ) -> parchis_store::Result<Option<parchis_store::StoredGame>> {
        self.inner.get_game_log(id).await
    }
    async fn list_games(&self, code: &str) -> parchis_store::Result<Vec<GameRecord>> {
        self.inner.list_games(code).await
    }
    async fn find_games(&self, q: &GameQuery) -> parchis_store::Result<Vec<GameRecord>> {
        self.inner.find_games(q).await
    }
    async fn ping(&self) -> parchis_store::Result<()> {
        self.inner.ping().await
    }
    async fn close(&self) {
        self.inner.close().await
    }
}

/// What a test room is built from: `code`, `settings`, the bots' RNG and the dice seeded
/// with `seed`, `history` events kept, created at [`T0`], built at `now`.
pub fn room_init(
    code: &str,
    settings: RoomSettings,
    seed: u64,
    history: usize,
    now: Ms,
) -> RoomInit {
    let rules = settings.rules().expect("rule set");
    RoomInit {
        code: code.to_owned(),
        settings,
        rules,
        created_at_ms: T0,
        rng: ChaCha20Rng::seed_from_u64(seed),
        dice: parchis_room_core::dice::DiceSource::draw(
            &parchis_room_core::dice::DiceConfig {
                dice_seed: Some(seed),
                ..Default::default()
            },
            0,
        )
        .expect("test dice"),
        seed_rng: ChaCha20Rng::seed_from_u64(seed ^ 0xd1ce),
        id_rng: ChaCha20Rng::seed_from_u64(seed ^ 0x5eed),
        history_len: history,
        now,
        limits: parchis_room_core::core::RoomLimits {
            lobby_idle_ms: 30 * 60 * 1000,
            presence_interval_ms: 0,
            min_unwatched_bot_think_ms: 0,
        },
        observer: Arc::new(parchis_room_core::Silent),
    }
}

/// Drives one [`Core`] like its actor: effects in order, durable writes awaited (on a
/// store, or accepted without one) and reported back, bot searches run inline.
pub struct Driver {
    pub core: Core,
    pub now: Ms,
    pub store: Option<Arc<FaultyStore>>,
    /// Frames each connection received (JSON; decoded on demand).
    pub inbox: HashMap<ConnId, Vec<Frame>>,
    pub attached: HashSet<ConnId>,
    pending: Option<ConnId>,
    /// Answers to joins, watches and resumes.
    pub replies: Vec<Result<Member, Refusal>>,
    /// Answers to director's commands.
    pub directed: Vec<Result<parchis_room_core::reserved::DirectorAnswer, Refusal>>,
    /// Durable writes that succeeded, in order.
    pub persisted: Vec<Write>,
    /// Durable writes that failed.
    pub refused_writes: usize,
    /// Connections kicked, with the close code (the socket's writer then sends the one
    /// `closing` frame and the close frame).
    pub kicks: Vec<(ConnId, u16)>,
    /// Bot searches waiting to be answered (run by [`Driver::think`]).
    pub thinking: Vec<parchis_room_core::core::BotJob>,
    pub wake: Option<Ms>,
    /// Every batch that ended with a durable write: the effects before it (the write-ahead
    /// checks look at them).
    pub batches: Vec<Vec<String>>,
}

impl Driver {
    /// A new lobby `code` with `settings`, dice seeded with `seed`, at [`T0`].
    pub fn new(code: &str, settings: RoomSettings, seed: u64, history: usize) -> Driver {
        let core = Core::new(room_init(code, settings, seed, history, T0));
        Driver {
            core,
            now: T0,
            store: None,
            inbox: HashMap::new(),
            attached: HashSet::new(),
            pending: None,
            replies: Vec::new(),
            directed: Vec::new(),
            persisted: Vec::new(),
            refused_writes: 0,
            kicks: Vec::new(),
            thinking: Vec::new(),
            wake: None,
            batches: Vec::new(),
        }
    }

    /// The same, with its writes going to `store` (the room record is created there).
    pub async fn with_store(mut self, store: Arc<FaultyStore>) -> Option<Driver> {
        let record = persist::room_record(self.core.code(), self.core.settings(), T0);
        store.create_room(&record).await.ok()?;
        self.store = Some(store);
        Some(self)
    }

    /// Feeds `input` at the current time and carries out what follows.
    pub async fn input(&mut self, input: Input) {
        if let Input::Join { conn, .. }
        | Input::Claim { conn, .. }
        | Input::Watch { conn, .. }
        | Input::Resume { conn, .. }
        | Input::Reattach { conn, .. } = &input
        {
            self.pending = Some(*conn);
        }
        let effects = self.core.handle(input, self.now);
        self.carry_out(effects).await;
        self.pending = None;
    }

    /// Carries out `effects` of the core like the actor: in order, each durable write
    /// performed and reported back, until a batch needs none.
    pub async fn carry_out(&mut self, mut effects: Vec<Effect>) {
        loop {
            let mut write = None;
            let mut before = Vec::new();
            for e in effects {
                match e {
                    Effect::Persist(w) => write = Some(w),
                    other => {
                        before.push(effect_name(&other));
                        self.act(other).await;
                    }
                }
            }
            let Some(w) = write else { break };
            self.batches.push(before);
            let result = self.perform(&w).await;
            match &result {
                Ok(()) => self.persisted.push(w),
                Err(_) => self.refused_writes += 1,
            }
            effects = self.core.persisted(result, self.now);
        }
    }

    async fn perform(&self, w: &Write) -> Result<(), parchis_room_core::core::WriteFailed> {
        match &self.store {
            Some(store) => {
                let store: Arc<dyn Store> = store.clone();
                actor::perform(&store, self.core.code(), w.clone())
                    .await
                    .map_err(|e| actor::write_failed(&e))
            }
            None => Ok(()),
        }
    }

    async fn act(&mut self, e: Effect) {
        match e {
            Effect::Send { conn, frame } => {
                if self.attached.contains(&conn) {
                    self.deliver(conn, &frame);
                }
            }
            Effect::Broadcast { frame } | Effect::Emote { frame, .. } => {
                let conns: Vec<ConnId> = self.attached.iter().copied().collect();
                for conn in conns {
                    self.deliver(conn, &frame);
                }
            }
            Effect::Attach { conn } => {
                if self.pending == Some(conn) {
                    self.attached.insert(conn);
                }
            }
            Effect::Forget { conn } => {
                self.attached.remove(&conn);
            }
            Effect::Kick { conn, code, .. } => self.kicks.push((conn, code)),
            Effect::Publish | Effect::Acted { .. } | Effect::Left { .. } => {}
            Effect::Reply(r) => self.replies.push(r),
            Effect::Store(w) => {
                // Best effort, as in the actor. Random faults spare these: a failed one
                // leaves the store behind the room by design (a known gap: lobby seat
                // deletions, the creator handover, a bot's seat row).
                if let Some(store) = &self.store {
                    store.sparing.store(true, Ordering::SeqCst);
                }
                let _ = self.perform(&w).await;
                if let Some(store) = &self.store {
                    store.sparing.store(false, Ordering::SeqCst);
                }
            }
            Effect::Think(job) => self.thinking.push(job),
            Effect::Wake(at) => self.wake = at,
            Effect::Directed(answer) => self.directed.push(answer),
            Effect::Persist(_) => unreachable!("handled by input"),
        }
    }

    fn deliver(&mut self, conn: ConnId, frame: &Frame) {
        self.inbox.entry(conn).or_default().push(frame.clone());
    }

    /// Every message `conn` received, decoded.
    pub fn messages(&self, conn: ConnId) -> Vec<ServerMessage> {
        self.inbox
            .get(&conn)
            .map(|frames| frames.iter().map(|f| decode(f)).collect())
            .unwrap_or_default()
    }

    /// Runs every pending bot search and hands the choices back.
    pub async fn think(&mut self) {
        for job in std::mem::take(&mut self.thinking) {
            let mut brain = job.brain;
            let action = brain.choose(&job.game, &job.legal);
            let choice = BotChoice {
                seq: job.seq,
                colour: job.colour,
                action,
                brain,
            };
            self.input(Input::BotChose(choice)).await;
        }
    }

    /// Moves time to `t` and fires the timers.
    pub async fn at(&mut self, t: Ms) {
        self.now = t;
        self.input(Input::Timers).await;
    }

    /// A person joins on `conn`; returns the seat's member id.
    pub async fn join(&mut self, conn: ConnId, name: &str) -> Member {
        let token = format!("token-{conn}");
        self.input(Input::Join {
            conn,
            req: 1,
            name: name.into(),
            colour: None,
            client_seed: None,
            account: None,
            ratings: Default::default(),
            token,
        })
        .await;
        self.replies
            .pop()
            .expect("a join is answered")
            .expect("joined")
    }

    /// A member's command with request id `req`, based on the room's current seq; returns
    /// its answer (`ok` or `error`).
    pub async fn cmd(
        &mut self,
        conn: ConnId,
        member: Member,
        req: u64,
        cmd: SeatCmd,
    ) -> ServerMessage {
        let seq = self.core.seq();
        self.input(Input::Command {
            conn,
            member,
            req,
            seq,
            cmd,
        })
        .await;
        self.answer(conn, req).expect("every command is answered")
    }

    /// The answer to request `req` of `conn`, if any.
    pub fn answer(&self, conn: ConnId, req: u64) -> Option<ServerMessage> {
        let frames = self.inbox.get(&conn)?;
        frames.iter().rev().take(64).find_map(|f| {
            if !(f.starts_with(r#"{"type":"ok""#) || f.starts_with(r#"{"type":"error""#)) {
                return None;
            }
            match decode(f) {
                m @ (ServerMessage::Ok { req: r, .. }
                | ServerMessage::Error { req: Some(r), .. })
                    if r == req =>
                {
                    Some(m)
                }
                _ => None,
            }
        })
    }

    /// Every event frame `conn` received: `(seq, at_ms, event)`.
    pub fn events(&self, conn: ConnId) -> Vec<(u64, Ms, parchis_protocol::RoomEvent)> {
        self.messages(conn)
            .into_iter()
            .filter_map(|m| match m {
                ServerMessage::Event {
                    seq, at_ms, event, ..
                } => Some((seq, at_ms, event)),
                _ => None,
            })
            .collect()
    }
}

/// The command a player sends for the first legal action of the throw: `roll`, or `play`.
pub fn first_command(game: &parchis_engine::Game) -> SeatCmd {
    let must_roll = matches!(game.expect(), parchis_engine::Expect::Roll { .. });
    command_for(must_roll, &game.legal_actions())
}

/// The command for the first of the `legal` actions (`roll` when `must_roll`, or when
/// none is a move).
pub fn command_for(must_roll: bool, legal: &[parchis_engine::Action]) -> SeatCmd {
    use parchis_engine::Action;
    use parchis_protocol::Play;
    let play = legal.iter().find_map(|a| match *a {
        Action::Exit => Some(Play::Exit),
        Action::Move {
            piece,
            die,
            capture,
        } => Some(Play::Move {
            piece,
            die,
            capture,
        }),
        Action::Bonus {
            piece,
            amount,
            capture,
        } => Some(Play::Bonus {
            piece,
            amount,
            capture,
        }),
        _ => None,
    });
    match play {
        Some(p) if !must_roll => SeatCmd::Play(p),
        _ => SeatCmd::Roll,
    }
}

fn decode(frame: &str) -> ServerMessage {
    serde_json::from_str(frame).expect("frames are server messages")
}

fn effect_name(e: &Effect) -> String {
    match e {
        Effect::Send { frame, .. } => format!("send {}", &frame[..frame.len().min(40)]),
        Effect::Broadcast { frame } => format!("broadcast {}", &frame[..frame.len().min(40)]),
        other => format!("{other:?}").chars().take(40).collect(),
    }
}
