//! A seed-driven simulation (after FoundationDB's and TigerBeetle's simulators): many rooms,
//! random commands from players and spectators, disconnects and resumes, clocks running
//! out, bots, and a store that fails writes at random. After every step the invariants
//! are checked:
//!
//! * the room's seq is gap-free: every connection sees events `n, n+1, …` after its
//!   welcome (or after the seq its resume asked for);
//! * replaying the stored log gives the live game and seq, and room and store agree;
//! * no action is applied twice: the stored log records exactly one action per durable
//!   action write;
//! * every game event a client received is stored, with the same seq, time and content;
//! * the room rebuilt from its stored log (as a restart or a takeover does) has the live
//!   frames in its history, byte for byte, `position` included.
//!
//! A failing seed is printed; `SIM_SEED=<seed>` runs just that one, `SIM_ROOMS=<n>` more
//! rooms. Everything random comes from the seed, so a seed reproduces its run exactly.

use super::faults::agree;
use super::{first_command, settings, Driver, FaultyStore};
use crate::{Member, SeatCmd};
use parchis_engine::{Action, Colour};
use parchis_protocol::{Play, RoomEvent, ServerMessage};
use parchis_room_core::{persist, replay, Input, LoggedEvent};
use parchis_store::Store;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

const STEPS: usize = 200;

/// One simulated client connection.
#[derive(Debug, Clone)]
struct Client {
    conn: u64,
    member: Option<Member>,
}

/// What a connection has been checked up to: frames read, next event seq expected.
#[derive(Debug, Default, Clone, Copy)]
struct Cursor {
    read: usize,
    next: Option<u64>,
    /// The `last_seq` of a resume in flight (its welcome is followed by the missed events).
    resumed_from: Option<u64>,
}

struct Sim {
    d: Driver,
    store: Arc<FaultyStore>,
    rng: ChaCha20Rng,
    clients: Vec<Client>,
    tokens: Vec<String>,
    next_conn: u64,
    next_req: u64,
    cursors: HashMap<u64, Cursor>,
    /// Every event frame received by anyone: `seq → (at_ms, event)`.
    received: HashMap<u64, (i64, RoomEvent)>,
}

fn random_settings(rng: &mut ChaCha20Rng) -> serde_json::Value {
    let preset = ["online", "classic", "online", "parcheesi"][rng.gen_range(0..4)];
    let mut s = json!({
        "preset": preset,
        "seats": rng.gen_range(2..=4),
        "turn_clock_secs": rng.gen_range(5..=30),
        "disconnect_grace_secs": rng.gen_range(5..=60),
        "timeouts_to_abandon": rng.gen_range(2..=4),
        "bot_think_ms": rng.gen_range(0..=1500),
        "on_abandon": if rng.gen_bool(0.5) { "bot" } else { "forfeit" },
        "spectators": rng.gen_bool(0.9),
    });
    if rng.gen_bool(0.3) {
        s["bots"] = json!(["random", "greedy"][rng.gen_range(0..2)]);
    }
    s
}

impl Sim {
    async fn new(seed: u64) -> Sim {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let s = settings(random_settings(&mut rng));
        let store = Arc::new(FaultyStore::new());
        let d = Driver::new(&format!("SIM{seed:05}"), s, seed, 32)
            .with_store(store.clone())
            .await
            .expect("room created");
        store.fail_randomly(seed, 0.05);
        Sim {
            d,
            store,
            rng,
            clients: Vec::new(),
            tokens: Vec::new(),
            next_conn: 1,
            next_req: 1,
            cursors: HashMap::new(),
            received: HashMap::new(),
        }
    }

    fn new_conn(&mut self) -> u64 {
        let c = self.next_conn;
        self.next_conn += 1;
        c
    }

    fn req(&mut self) -> u64 {
        self.next_req += 1;
        self.next_req
    }

    /// One random step.
    async fn step(&mut self) {
        match self.rng.gen_range(0..100) {
            0..=9 => self.join().await,
            10..=13 => self.watch().await,
            14..=19 => self.resume().await,
            20..=26 => self.detach().await,
            27..=64 => self.command().await,
            65..=84 => self.advance().await,
            _ => self.d.think().await,
        }
    }

    async fn join(&mut self) {
        let conn = self.new_conn();
        let token = format!("tok-{conn}");
        let colour = self
            .rng
            .gen_bool(0.3)
            .then(|| Colour::ALL[self.rng.gen_range(0..4)]);
        let req = self.req();
        self.d
            .input(Input::Join {
                conn,
                req,
                name: format!("P{conn}"),
                colour,
                client_seed: None,
                account: None,
                ratings: Default::default(),
                token: token.clone(),
            })
            .await;
        if let Some(Ok(member)) = self.d.replies.pop() {
            self.tokens.push(token.clone());
            self.clients.push(Client {
                conn,
                member: Some(member),
            });
        }
    }

    async fn watch(&mut self) {
        let conn = self.new_conn();
        let req = self.req();
        self.d.input(Input::Watch { conn, req }).await;
        if let Some(Ok(member)) = self.d.replies.pop() {
            self.clients.push(Client {
                conn,
                member: Some(member),
            });
        }
    }

    async fn resume(&mut self) {
        if self.tokens.is_empty() {
            return;
        }
        let token = self.tokens[self.rng.gen_range(0..self.tokens.len())].clone();
        let conn = self.new_conn();
        let seq = self.d.core.seq();
        let last_seq = seq.saturating_sub(self.rng.gen_range(0..40));
        self.cursors.entry(conn).or_default().resumed_from = Some(last_seq);
        let req = self.req();
        self.d
            .input(Input::Resume {
                conn,
                req,
                token,
                account: None,
                last_seq,
            })
            .await;
        if let Some(Ok(member)) = self.d.replies.pop() {
            self.clients.push(Client {
                conn,
                member: Some(member),
            });
        }
    }

    async fn detach(&mut self) {
        if self.clients.is_empty() {
            return;
        }
        let i = self.rng.gen_range(0..self.clients.len());
        let c = self.clients.swap_remove(i);
        self.d.input(Input::Detach { conn: c.conn }).await;
    }

    /// A random command from a random client: mostly what the game expects, sometimes
    /// a random legal action, a stale seq, a start, a colour change or a leave.
    async fn command(&mut self) {
        if self.clients.is_empty() {
            return;
        }
        let c = self.clients[self.rng.gen_range(0..self.clients.len())].clone();
        let Some(member) = c.member else { return };
        let game = self.d.core.game().copied();
        let cmd = match (self.rng.gen_range(0..100), game) {
            (0..=4, _) => SeatCmd::Leave,
            (5..=14, _) => SeatCmd::Start,
            (15..=19, _) => SeatCmd::ChooseColour(Colour::ALL[self.rng.gen_range(0..4)]),
            (20..=39, Some(g)) => {
                let legal: Vec<Action> = g.legal_actions();
                match legal.get(self.rng.gen_range(0..legal.len().max(1))) {
                    Some(Action::Exit) => SeatCmd::Play(Play::Exit),
                    _ => first_command(&g),
                }
            }
            (_, Some(g)) => first_command(&g),
            (_, None) => SeatCmd::Roll,
        };
        let seq = if self.rng.gen_bool(0.1) {
            self.d.core.seq().saturating_sub(1)
        } else {
            self.d.core.seq()
        };
        let req = self.req();
        self.d
            .input(Input::Command {
                conn: c.conn,
                member,
                req,
                seq,
                cmd: cmd.clone(),
            })
            .await;
        if self.d.answer(c.conn, req).is_none() && self.d.attached.contains(&c.conn) {
            panic!("command {req} of conn {} ({cmd:?}) got no answer", c.conn);
        }
        if cmd == SeatCmd::Leave {
            self.clients.retain(|x| x.conn != c.conn);
        }
    }

    /// Time passes: to the next wake-up, or by a random amount.
    async fn advance(&mut self) {
        let t = match (self.d.wake, self.rng.gen_bool(0.6)) {
            (Some(w), true) => w.max(self.d.now),
            _ => self.d.now + self.rng.gen_range(0..20_000),
        };
        self.d.at(t).await;
    }

    /// Checks every invariant; the error says which and why.
    async fn check(&mut self) -> Result<(), String> {
        self.check_clients()?;
        agree(&self.d, &self.store).await?;
        let Some(id) = self.d.core.game_id() else {
            return Ok(());
        };
        let stored = self
            .store
            .get_game_log(id)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("game not stored")?;
        let log = persist::game_events(&stored).map_err(|e| e.to_string())?;
        let replayed = replay(&log).map_err(|e| e.to_string())?;
        // No action applied twice: one stored action per durable action write.
        let action_writes = self
            .d
            .persisted
            .iter()
            .filter(|w| writes_an_action(w, id, &log))
            .count();
        if replayed.record.actions.len() != action_writes {
            return Err(format!(
                "{} actions stored, {action_writes} action writes succeeded",
                replayed.record.actions.len()
            ));
        }
        // The start and every stored action end a positioned batch, each marked once.
        if replayed.positions.len() != replayed.record.actions.len() + 1 {
            return Err(format!(
                "{} positioned events stored for {} actions",
                replayed.positions.len(),
                replayed.record.actions.len()
            ));
        }
        // Every event a client received (from the game's start on) is stored as sent.
        let first = log.first().map_or(u64::MAX, |e| e.seq);
        let stored: HashMap<u64, (i64, &RoomEvent)> =
            log.iter().map(|e| (e.seq, (e.at_ms, &e.event))).collect();
        for (seq, (at, event)) in &self.received {
            if *seq < first {
                continue;
            }
            match stored.get(seq) {
                Some((a, e)) if a == at && *e == event => {}
                other => return Err(format!("event {seq} was received but stored as {other:?}")),
            }
        }
        // A rebuilt room sends again the frames the live one sent.
        let (rebuilt, _) = super::history::rebuilt(&self.d, &self.store, 32, self.d.now).await;
        let live: Vec<_> = self
            .d
            .core
            .history()
            .iter()
            .filter(|(seq, _)| *seq >= first && *seq <= replayed.seq)
            .collect();
        if rebuilt.history().iter().collect::<Vec<_>>() != live {
            return Err(format!(
                "the rebuilt history differs from the live one: {:?} vs {live:?}",
                rebuilt.history()
            ));
        }
        Ok(())
    }

    /// Each connection's events continue without a gap from its welcome.
    fn check_clients(&mut self) -> Result<(), String> {
        let conns: Vec<u64> = self.d.inbox.keys().copied().collect();
        for conn in conns {
            let frames = &self.d.inbox[&conn];
            let mut cur = self.cursors.get(&conn).copied().unwrap_or_default();
            for f in &frames[cur.read..] {
                if !(f.starts_with(r#"{"type":"welcome""#) || f.starts_with(r#"{"type":"event""#)) {
                    continue;
                }
                match serde_json::from_str::<ServerMessage>(f).map_err(|e| e.to_string())? {
                    ServerMessage::Welcome { seq, snapshot, .. } => {
                        cur.next = Some(match (cur.resumed_from.take(), snapshot) {
                            (Some(last), None) => last + 1,
                            _ => seq + 1,
                        });
                    }
                    ServerMessage::Event {
                        seq, at_ms, event, ..
                    } => {
                        if cur.next != Some(seq) {
                            return Err(format!(
                                "conn {conn} got event {seq}, expected {:?}",
                                cur.next
                            ));
                        }
                        cur.next = Some(seq + 1);
                        if let Some((at, e)) = self.received.get(&seq) {
                            if *at != at_ms || *e != event {
                                return Err(format!("event {seq} differs between clients"));
                            }
                        }
                        self.received.insert(seq, (at_ms, event));
                    }
                    _ => {}
                }
            }
            cur.read = frames.len();
            self.cursors.insert(conn, cur);
        }
        Ok(())
    }
}

/// Whether a durable write records an engine action of game `game_id`: the events it
/// stored (read back from the game's stored `log` by the seqs of its piece or rows)
/// include engine events.
fn writes_an_action(w: &persist::Write, game_id: Uuid, log: &[LoggedEvent]) -> bool {
    let Some((first, last)) = super::written_seqs(w, game_id) else {
        return false;
    };
    log.iter()
        .filter(|e| (first..=last).contains(&e.seq))
        .any(|e| matches!(e.event, RoomEvent::Game { .. }))
}

/// Runs one seed; returns the injected faults and whether a game started.
async fn run(seed: u64) -> Result<(usize, bool), String> {
    let mut sim = Sim::new(seed).await;
    for step in 0..STEPS {
        sim.step().await;
        sim.check().await.map_err(|e| format!("step {step}: {e}"))?;
    }
    Ok((sim.store.failures(), sim.d.core.game_id().is_some()))
}

#[tokio::test]
async fn simulated_rooms_keep_every_invariant_after_every_step() {
    let seeds: Vec<u64> = match std::env::var("SIM_SEED").ok().and_then(|s| s.parse().ok()) {
        Some(seed) => vec![seed],
        None => {
            let n = std::env::var("SIM_ROOMS")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(24);
            (1..=n).collect()
        }
    };
    let mut faults = 0;
    let mut games = 0;
    let mut started = 0;
    for seed in seeds {
        match run(seed).await {
            Ok((f, game)) => {
                faults += f;
                games += usize::from(game);
            }
            Err(e) => panic!(
                "simulation seed {seed} failed (reproduce: SIM_SEED={seed} cargo test -p \
                 parchis-server --lib simulated_rooms): {e}"
            ),
        }
        started += 1;
    }
    assert!(started > 0);
    assert!(faults > 0, "the store failed some writes along the way");
    if started > 4 {
        assert!(games > 0, "some simulated rooms started their game");
    }
}
