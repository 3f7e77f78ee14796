//! A room rebuilt from its stored log sends the frames the live room sent: whole seeded
//! games (every preset, people and bots, plays, timeouts, leaves, bot takeovers and
//! forfeits, the end) are rebuilt from the store at random points, and every frame of the
//! rebuilt history must equal, byte for byte, the frame a spectator received live for
//! the same seq — `position` included, on exactly the same events. At some of those points
//! the rebuilt room replaces the live one (a failover or a restart, sometimes after the
//! clock ran out meanwhile: a fresh `turn`), the people resume and the game goes on, so a
//! later rebuild also covers frames a rebuilt room sent.
//!
//! `HISTORY_SEED=<seed>` runs one game, `HISTORY_GAMES=<n>` more of them.

use super::{first_command, room_init, settings, Driver, FaultyStore};
use crate::Frame;
use crate::{Member, Ms, SeatCmd};
use parchis_engine::{Action, Colour, Preset};
use parchis_protocol::{Play, RoomStatus, ServerMessage};
use parchis_room_core::core::{Core, Effect};
use parchis_room_core::persist::Write;
use parchis_room_core::{persist, resume, throws, Input, Resumed};
use parchis_store::Store;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Events kept (live and rebuilt): the whole game, so every seq is compared.
const HISTORY: usize = 1 << 14;
/// The spectator recording the live frames.
const WATCHER: u64 = 999;
/// A game that has not ended after this many steps fails the test.
const MAX_STEPS: usize = 20_000;

/// What the rebuilds of one game checked.
#[derive(Debug, Default)]
struct Checked {
    /// Rebuilds compared.
    rebuilds: usize,
    /// Frames compared (over all rebuilds).
    frames: usize,
    /// Of those, frames with a position.
    positioned: usize,
    /// Rebuilt rooms that replaced the live one.
    swaps: usize,
    /// Of those, restored after the deadline had passed (a fresh `turn`).
    fresh_clocks: usize,
    /// The game ended.
    finished: bool,
    /// Its stored log packed as its inputs (issue 28), bytes.
    packed_bytes: usize,
    /// The same log as the stored JSON events, bytes of JSON.
    json_bytes: usize,
}

struct Game {
    seed: u64,
    d: Driver,
    store: Arc<FaultyStore>,
    rng: ChaCha20Rng,
    /// The join connection (and so the token, `token-{conn}`) of each person's colour.
    people: HashMap<Colour, u64>,
    /// Every event frame the spectator received, by seq (over every incarnation).
    sent: BTreeMap<u64, Frame>,
    /// Frames of the spectator's inbox already read into `sent`.
    read: usize,
    next_req: u64,
    checked: Checked,
}

fn random_settings(rng: &mut ChaCha20Rng) -> serde_json::Value {
    let preset = Preset::ALL[rng.gen_range(0..Preset::ALL.len())];
    let seats = if preset == Preset::Pairs {
        4
    } else {
        rng.gen_range(2..=4)
    };
    let bots = ["random", "greedy"][rng.gen_range(0..2)];
    let on_abandon = if rng.gen_bool(0.5) { "bot" } else { "forfeit" };
    json!({
        "preset": preset.name(),
        "seats": seats,
        "turn_clock_secs": rng.gen_range(5..=30),
        "disconnect_grace_secs": 600,
        "timeouts_to_abandon": rng.gen_range(2..=3),
        "bot_think_ms": rng.gen_range(0..=800),
        "on_abandon": on_abandon,
        "bots": bots,
        "spectators": true,
    })
}

/// The command for a legal `action` of the player to act.
fn command(action: Action) -> SeatCmd {
    match action {
        Action::Roll { .. } => SeatCmd::Roll,
        Action::Exit => SeatCmd::Play(Play::Exit),
        Action::Move {
            piece,
            die,
            capture,
        } => SeatCmd::Play(Play::Move {
            piece,
            die,
            capture,
        }),
        Action::Bonus {
            piece,
            amount,
            capture,
        } => SeatCmd::Play(Play::Bonus {
            piece,
            amount,
            capture,
        }),
        Action::Timeout | Action::Abandon { .. } => SeatCmd::Roll,
    }
}

impl Game {
    /// A lobby with a spectator and 1..=seats people (bots fill the rest), started.
    async fn start(seed: u64) -> Game {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let s = settings(random_settings(&mut rng));
        let seats = usize::from(s.seats);
        let store = Arc::new(FaultyStore::new());
        let d = Driver::new(&format!("HIST{seed:04}"), s, seed, HISTORY)
            .with_store(store.clone())
            .await
            .expect("room created");
        let mut g = Game {
            seed,
            d,
            store,
            people: HashMap::new(),
            sent: BTreeMap::new(),
            read: 0,
            next_req: 10,
            checked: Checked::default(),
            rng,
        };
        let req = g.req();
        g.d.input(Input::Watch { conn: WATCHER, req }).await;
        assert!(matches!(g.d.replies.pop(), Some(Ok(Member::Spectator))));
        let people = g.rng.gen_range(1..=seats);
        for conn in 1..=people as u64 {
            g.d.join(conn, &format!("P{conn}")).await;
            let colour = g.d.core.seats().last().expect("seated").colour;
            g.people.insert(colour, conn);
        }
        let req = g.req();
        let answer = g.d.cmd(1, Member::Player(1), req, SeatCmd::Start).await;
        assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
        g
    }

    fn req(&mut self) -> u64 {
        self.next_req += 1;
        self.next_req
    }

    /// One step of the game: the player to act acts (or lets the clock run out, or
    /// leaves), a bot thinks and acts; sometimes a rebuild is compared or replaces the
    /// room.
    async fn step(&mut self) {
        let Some(game) = self.d.core.game().copied() else {
            panic!("seed {}: a game runs", self.seed)
        };
        let seat = self
            .d
            .core
            .seats()
            .iter()
            .find(|s| s.colour == game.turn())
            .map(|s| (s.id, s.conn, s.bot.is_some()));
        match seat {
            Some((_, _, true)) | None => self.bot_or_time().await,
            Some((_, None, false)) => self.clock_runs_out().await,
            Some((id, Some(conn), false)) => match self.rng.gen_range(0..100) {
                0..=5 => self.clock_runs_out().await,
                6..=7 => {
                    let req = self.req();
                    let answer = self
                        .d
                        .cmd(conn, Member::Player(id), req, SeatCmd::Leave)
                        .await;
                    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
                }
                n => {
                    let legal = game.legal_actions();
                    let cmd = match legal.get(self.rng.gen_range(0..legal.len().max(1))) {
                        Some(a) if n < 40 => command(*a),
                        _ => first_command(&game),
                    };
                    let req = self.req();
                    let answer = self.d.cmd(conn, Member::Player(id), req, cmd.clone()).await;
                    assert!(
                        matches!(answer, ServerMessage::Ok { .. }),
                        "seed {}: {cmd:?} answered {answer:?}",
                        self.seed
                    );
                }
            },
        }
    }

    async fn clock_runs_out(&mut self) {
        let t = self.d.core.deadline().expect("a clock runs");
        self.d.at(t.max(self.d.now)).await;
    }

    /// A bot's search runs, or time passes to the next wake-up.
    async fn bot_or_time(&mut self) {
        if !self.d.thinking.is_empty() {
            return self.d.think().await;
        }
        let t = self.d.wake.unwrap_or(self.d.now + 1000).max(self.d.now);
        self.d.at(t).await;
    }

    /// Reads the spectator's new event frames into `sent` (a seq sent twice must be the
    /// same frame).
    fn record(&mut self) {
        let frames = self.d.inbox.get(&WATCHER).cloned().unwrap_or_default();
        for f in &frames[self.read..] {
            if !f.starts_with(r#"{"type":"event""#) {
                continue;
            }
            let seq = match serde_json::from_str::<ServerMessage>(f) {
                Ok(ServerMessage::Event { seq, .. }) => seq,
                other => panic!("an event frame: {other:?}"),
            };
            if let Some(old) = self.sent.insert(seq, f.clone()) {
                assert_eq!(
                    old, *f,
                    "seed {}: seq {seq} sent twice, differently",
                    self.seed
                );
            }
        }
        self.read = frames.len();
    }

    async fn rebuild(&self, now: Ms) -> (Core, Vec<Effect>) {
        rebuilt(&self.d, &self.store, HISTORY, now).await
    }

    /// Every frame of `core`'s rebuilt history equals the live frame of its seq; the
    /// history holds every stored event (`HISTORY` is larger than any game).
    fn compare(&mut self, core: &Core) {
        self.record();
        let (first, last) = match (core.history().front(), core.history().back()) {
            (Some(f), Some(l)) => (f.0, l.0),
            _ => panic!("seed {}: the rebuilt history is empty", self.seed),
        };
        assert_eq!(
            last,
            self.d.core.seq(),
            "seed {}: the rebuilt history ends at the live seq",
            self.seed
        );
        assert_eq!(
            core.history().len() as u64,
            last - first + 1,
            "seed {}: the rebuilt history is gap-free",
            self.seed
        );
        assert!(
            self.sent[&first].contains(r#""type":"opening_roll""#)
                || self.sent[&first].contains(r#""type":"game_started""#),
            "seed {}: the rebuilt history starts with the game: {}",
            self.seed,
            self.sent[&first]
        );
        for (seq, frame) in core.history() {
            let live = self
                .sent
                .get(seq)
                .unwrap_or_else(|| panic!("seed {}: seq {seq} was never sent live", self.seed));
            assert_eq!(
                &**frame, &**live,
                "seed {}: seq {seq} rebuilt differs from the live frame",
                self.seed
            );
            self.checked.frames += 1;
            if frame.contains(r#""position":"#) {
                self.checked.positioned += 1;
            }
        }
        self.checked.rebuilds += 1;
    }

    /// The rebuilt room takes over (sometimes after the clock ran out meanwhile): the
    /// people resume where they were, the spectator watches again.
    async fn swap(&mut self) {
        let late = self.rng.gen_bool(0.5);
        let now = match (late, self.d.core.deadline()) {
            (true, Some(d)) => d.max(self.d.now) + self.rng.gen_range(1..5_000),
            _ => self.d.now,
        };
        let (core, effects) = self.rebuild(now).await;
        self.compare(&core);
        if !effects.is_empty() {
            self.checked.fresh_clocks += 1;
        }
        self.d.core = core;
        self.d.now = now;
        self.d.attached.clear();
        self.d.thinking.clear();
        self.d.wake = None;
        let before = self.d.core.seq();
        self.d.carry_out(effects).await;
        // R-CLOCK: the restore gives the player to act a fresh full clock from `now`,
        // whether the old one ran out meanwhile or not (`late`).
        let clock = i64::from(self.d.core.settings().turn_clock_secs) * 1000;
        assert_eq!(
            self.d.core.deadline(),
            Some(now + clock),
            "a rebuilt room's clock starts afresh (late: {late})"
        );
        // The fresh `turn` went out to nobody (nobody is attached yet): as sent.
        let fresh: Vec<_> = self
            .d
            .core
            .history()
            .iter()
            .filter(|h| h.0 > before)
            .cloned()
            .collect();
        self.sent.extend(fresh);
        self.record();
        let req = self.req();
        self.d.input(Input::Watch { conn: WATCHER, req }).await;
        assert!(matches!(self.d.replies.pop(), Some(Ok(Member::Spectator))));
        let resuming: Vec<u64> = self
            .d
            .core
            .seats()
            .iter()
            .filter(|s| s.bot.is_none() && !s.abandoned)
            .filter_map(|s| self.people.get(&s.colour).copied())
            .collect();
        for conn in resuming {
            let req = self.req();
            let last_seq = self.d.core.seq();
            self.d
                .input(Input::Resume {
                    conn,
                    req,
                    token: format!("token-{conn}"),
                    account: None,
                    last_seq,
                })
                .await;
            let reply = self.d.replies.pop();
            assert!(matches!(reply, Some(Ok(Member::Player(_)))), "{reply:?}");
        }
        self.checked.swaps += 1;
    }
}

/// `d`'s room rebuilt from `store` at `now` as `restore` does (seats, the game replayed,
/// its dice at the throw the log reached, `history` events kept), with the effects its
/// restore asks for (a fresh `turn` when the deadline passed). Panics unless a game is
/// stored. It replays the whole log, so that every frame is compared; a restore reads
/// from the last snapshot, and that read is checked against this one at every rebuild
/// (`same_from_snapshot`; `tests/snapshots.rs` restores that way).
pub(super) async fn rebuilt(
    d: &Driver,
    store: &FaultyStore,
    history: usize,
    now: Ms,
) -> (Core, Vec<Effect>) {
    rebuilt_with(d, store, history, now, true).await
}

/// [`rebuilt`], the room packing its log after the stored one (`packing`) or, without
/// its encoder, going on as a game stored as JSON rows (restored from rows written
/// before issue 28).
async fn rebuilt_with(
    d: &Driver,
    store: &FaultyStore,
    history: usize,
    now: Ms,
    packing: bool,
) -> (Core, Vec<Effect>) {
    let code = d.core.code();
    let snap = store
        .get_room(code)
        .await
        .expect("store read")
        .expect("room stored");
    let record = snap.game.as_ref().expect("a game is stored");
    // Either format; a new game is stored as its packed log (issue 28).
    let (stored, encoder) =
        persist::stored_log(&snap.events, snap.log.as_ref()).expect("stored log reads");
    // Issue 28: the log packed as its inputs unpacks, by replay, to the stored log; the
    // room is rebuilt from the unpacked one.
    let unpacked = throws::decode(&throws::encode(&stored)).expect("packed log unpacks");
    assert_eq!(
        unpacked.events, stored,
        "the packed log gives back the stored log"
    );
    assert!(
        unpacked.encoder.follows_game(),
        "every action of the room's log packs as an action"
    );
    let log = unpacked.events;
    let replayed = resume(None, &log).expect("stored log replays");
    if let Some(packed) = snap.log.as_ref() {
        same_from_snapshot(packed, &replayed, d.core.settings().spectator_delay_throws);
    }
    let per_throw = usize::from(replayed.game.rules().dice.clamp(1, 2));
    let throws = replayed.next_throw;
    let mut init = room_init(code, d.core.settings().clone(), 0xfa11, history, now);
    init.dice = parchis_room_core::dice::DiceSource::restored(
        record.dice.as_ref().expect("fair dice stored"),
        per_throw,
        throws,
    )
    .expect("dice restore");
    let mut core = Core::new(init);
    for seat in &snap.seats {
        core.restore_seat(persist::seat_from(seat).expect("seat reads"), now);
    }
    core.resume_log(encoder.filter(|_| packing));
    let (_, effects) = core.restore_game(record.id, &log, replayed, record.deadline_ms, now);
    (core, effects)
}

/// A restore from the stored packed log's last snapshot (issue 28) gets what the whole
/// log's replay gets: the game, seq, clock, pause, next throw, and the positions of the
/// events after the snapshot.
fn same_from_snapshot(packed: &parchis_store::PackedLog, whole: &Resumed, delay: u8) {
    let tail = throws::decode_tail(&packed.bytes, u64::from(delay)).expect("tail unpacks");
    let part = resume(tail.from.as_ref(), &tail.events).expect("tail replays");
    assert_eq!(part.game, whole.game);
    assert_eq!(part.seq, whole.seq);
    assert_eq!(part.last_turn_deadline, whole.last_turn_deadline);
    assert_eq!(part.paused, whole.paused);
    assert_eq!(part.next_throw, whole.next_throw);
    assert!(whole.positions.ends_with(&part.positions));
    if let Some(from) = &tail.from {
        assert_eq!(part.before.seq, from.seq);
        assert!(tail.events.iter().all(|e| e.seq > from.seq));
    }
}

/// Plays game `seed` to its end with rebuilds along the way and one at the end.
async fn run(seed: u64) -> Checked {
    let mut g = Game::start(seed).await;
    let mut steps = 0;
    while g.d.core.status() == RoomStatus::Playing {
        g.step().await;
        if g.d.core.status() != RoomStatus::Playing {
            break;
        }
        match g.rng.gen_range(0..100) {
            0..=1 => {
                let (core, _) = g.rebuild(g.d.now).await;
                g.compare(&core);
            }
            2 => g.swap().await,
            _ => {}
        }
        steps += 1;
        assert!(steps < MAX_STEPS, "seed {seed}: the game ends");
    }
    // The whole finished game: its last frames reveal the dice and carry the last position.
    let (core, _) = g.rebuild(g.d.now).await;
    g.compare(&core);
    g.checked.finished = g.d.core.status() == RoomStatus::Finished;
    let snap = g
        .store
        .get_room(g.d.core.code())
        .await
        .expect("read")
        .expect("room");
    let (log, _) = persist::stored_log(&snap.events, snap.log.as_ref()).expect("stored log reads");
    assert!(snap.events.is_empty(), "a new game stores no JSON rows");
    super::assert_writes_packed(seed, &g.d.persisted, &log);
    let stored_bytes = snap.log.as_ref().map_or(0, |l| l.bytes.len());
    g.checked.packed_bytes = throws::encode(&log).len();
    assert_eq!(
        stored_bytes, g.checked.packed_bytes,
        "the pieces stored per write join into the bytes of packing the log whole"
    );
    g.checked.json_bytes = persist::records_of(&log)
        .iter()
        .map(|e| e.event.to_string().len())
        .sum();
    g.checked
}

#[tokio::test]
async fn frames_rebuilt_from_the_log_equal_the_live_frames_positions_included() {
    let seeds: Vec<u64> = match std::env::var("HISTORY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(seed) => vec![seed],
        None => {
            let n = std::env::var("HISTORY_GAMES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(8);
            (1..=n).collect()
        }
    };
    let mut total = Checked::default();
    for &seed in &seeds {
        let c = run(seed).await;
        assert!(c.finished, "seed {seed}: the game ended");
        assert!(
            c.positioned > 0,
            "seed {seed}: some frames carry a position"
        );
        total.rebuilds += c.rebuilds;
        total.frames += c.frames;
        total.positioned += c.positioned;
        total.swaps += c.swaps;
        total.fresh_clocks += c.fresh_clocks;
        total.packed_bytes += c.packed_bytes;
        total.json_bytes += c.json_bytes;
    }
    // Issue 28: the packed log is a small fraction of the JSON events.
    eprintln!(
        "{} games: {} bytes packed, {} bytes of JSON events",
        seeds.len(),
        total.packed_bytes,
        total.json_bytes
    );
    assert!(total.packed_bytes * 8 < total.json_bytes, "{total:?}");
    if seeds.len() >= 5 {
        assert!(total.swaps > 0, "rebuilt rooms took over: {total:?}");
        assert!(
            total.fresh_clocks > 0,
            "some restores gave a fresh clock: {total:?}"
        );
    }
    assert!(total.positioned < total.frames, "{total:?}");
}

/// Issue 25, point 4: an owner whose wall clock ran 45 s ahead wrote the turn deadline
/// 45 s too late. The node that takes the room over (its clock right) does not keep that
/// deadline: the player to act gets a fresh full clock from the new owner's clock,
/// announced by a `turn` event stored first. A deadline within a full clock is kept.
#[tokio::test]
async fn a_deadline_written_by_a_clock_running_ahead_is_not_kept_by_the_next_owner() {
    let g = Game::start(11).await;
    let stored = g.d.core.deadline().expect("a clock runs");
    let clock_ms = i64::from(g.d.core.settings().turn_clock_secs) * 1000;
    // The new owner's `now` is 45 s behind the old owner's.
    let now = g.d.now - 45_000;
    let (core, effects) = g.rebuild(now).await;
    assert!(
        stored > now + clock_ms + 1_000,
        "the stored deadline is a skewed one"
    );
    let fresh = now + clock_ms;
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::Persist(Write::Append { events, piece: Some(piece), .. })
                if events.is_empty() && piece.first_seq == piece.last_seq
        )),
        "a fresh `turn` is stored: {effects:?}"
    );
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::Store(Write::SetDeadline { deadline_ms: Some(d), .. }) if *d == fresh
        )),
        "the games table's copy follows: {effects:?}"
    );
    drop(core);
    // Restored again a moment after the fresh clock was written, it is kept.
    let (_, again) = g.rebuild(stored - clock_ms).await;
    assert!(
        !again.iter().any(|e| matches!(e, Effect::Persist(_))),
        "a deadline within a full clock is kept: {again:?}"
    );
}

/// A game stored as JSON rows (restored from rows written before issue 28: no encoder)
/// goes on as rows: the room's write carries the rows and no piece.
#[tokio::test]
async fn a_game_restored_without_its_encoder_writes_json_rows_and_no_piece() {
    let g = Game::start(11).await;
    // As above: a deadline written by a clock running ahead, so the restore writes a
    // fresh `turn`.
    let now = g.d.now - 45_000;
    let (core, effects) = rebuilt_with(&g.d, &g.store, HISTORY, now, false).await;
    let (rows, piece, after_seq) = effects
        .iter()
        .find_map(|e| match e {
            Effect::Persist(Write::Append {
                events,
                piece,
                after_seq,
                ..
            }) => Some((events, piece, *after_seq)),
            _ => None,
        })
        .expect("a fresh `turn` is written");
    assert!(piece.is_none(), "a game stored as rows writes no piece");
    assert_eq!(after_seq, core.seq());
    let read = persist::events_from(rows).expect("the rows read back");
    let seqs: Vec<u64> = read.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [after_seq + 1]);
    assert!(
        matches!(read[0].event, parchis_protocol::RoomEvent::Turn { .. }),
        "{read:?}"
    );
}
