//! Test clients that play through node failures: a [`Player`] (or a spectator) wraps the
//! shared WebSocket [`Client`], keeps every room event it saw by seq (failing on a gap or
//! on two different events with one seq), plays a legal action on each `your_turn`,
//! counts what it sent and what was acknowledged, and when its socket closes reconnects
//! to another node that is up and `resume`s (a spectator watches again).

use crate::common::Client;
use crate::harness::Roster;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a command may go unanswered before the player stops waiting for it: longer
/// than an edge lets a command go without its reply (10 s, then it answers
/// `room_unavailable` itself; crates/cluster/src/links/edge.rs, REPLY_WINDOW).
const UNANSWERED: Duration = Duration::from_secs(15);
/// Replies slower than this are recorded in [`Player::slow`].
const SLOW: Duration = Duration::from_secs(1);
/// Longest a reconnection (connect, then `resume` until a `welcome`) may take.
const RECONNECT: Duration = Duration::from_secs(15);

/// One socket of a player: the node it was on, when it opened and closed.
#[derive(Clone, Debug)]
pub struct Session {
    pub node: usize,
    pub opened: Instant,
    pub closed: Option<Instant>,
    /// The close code the server gave (`closing` message or close frame).
    pub close_code: Option<u64>,
}

/// A seat's (or a spectator's) client and everything it observed.
pub struct Player {
    pub name: String,
    pub c: Client,
    /// The session token (`None`: a spectator).
    pub token: Option<String>,
    pub colour: Option<String>,
    pub roster: Arc<Roster>,
    /// Every room event seen, by seq: the whole frame.
    pub events: BTreeMap<u64, Value>,
    /// When each event arrived.
    pub arrivals: BTreeMap<u64, Instant>,
    /// The last event seq this client has (gap checks start from here).
    pub last: u64,
    /// `seq` of each `ok` to a roll or play.
    pub acks: Vec<u64>,
    /// Rolls and plays sent.
    pub sent: u64,
    /// Commands that got no answer within [`UNANSWERED`] (each also printed).
    pub unanswered: u64,
    /// Replies that took longer than [`SLOW`]: the request, how long, the reply's type or
    /// error code (each also printed).
    pub slow: Vec<(u64, Duration, String)>,
    /// The room's seq in this client's first `welcome` (it saw the events after it).
    pub joined_seq: u64,
    /// Reconnections whose `resume` (or `watch`) was refused or unanswered, then retried.
    pub resume_refusals: u32,
    /// Times the same `your_turn` came again while the command sent on it was unanswered
    /// (that reply was lost; the player acted again).
    pub reprompts: u32,
    /// Every `error` frame received.
    pub errors: Vec<Value>,
    /// Rolls and plays sent on the current socket whose reply has not come (yet), with
    /// when each was sent: a re-prompted command stays here until its late reply comes.
    pub unreplied: BTreeMap<u64, Instant>,
    /// The longest a roll or play waited for its reply.
    pub longest_reply: Duration,
    /// Welcomes with a snapshot after the first (the client then skipped events).
    pub snapshots: u32,
    /// The game ended while this player was away: its `resume` was answered `game_over`
    /// (the server's answer to a seat of a finished game, with the game's link), so it
    /// did not see the last events.
    pub ended_away: bool,
    /// Events received again (identical) after they had been seen.
    pub repeats: u32,
    /// Its attached sockets: the first join or watch, then each successful reconnection.
    pub sessions: Vec<Session>,
    /// Pause before each roll or play.
    pub think: Duration,
    /// While set the player does not act (a `your_turn` waits).
    pub hold: Arc<AtomicBool>,
    /// Set while the player holds a current `your_turn` it does not act on.
    pub holding: Arc<AtomicBool>,
    rng: StdRng,
    /// The latest `your_turn`.
    turn: Option<Value>,
    /// The seq of the `your_turn` last acted on.
    acted_on: Option<u64>,
    /// When to act again on that same turn (after an error or no answer).
    retry_at: Option<Instant>,
    /// Refusals in a row of this player's commands (reset by an `ok`): the retry after a
    /// refusal waits 150 ms doubled per refusal in a row, up to 1.2 s, as a client that
    /// keeps within the server's error budget would.
    refused_in_a_row: u32,
    inflight: Option<(u64, Instant)>,
    done: bool,
}

/// Connects to `addr`.
async fn connect(addr: SocketAddr) -> Option<Client> {
    let url = format!("ws://{addr}/ws");
    match tokio::time::timeout(
        Duration::from_secs(3),
        tokio_tungstenite::connect_async(url),
    )
    .await
    {
        Ok(Ok((ws, _))) => Some(Client::new(ws)),
        _ => None,
    }
}

impl Player {
    fn new(name: &str, c: Client, node: usize, roster: Arc<Roster>, seed: u64) -> Player {
        Player {
            name: name.to_owned(),
            c,
            token: None,
            colour: None,
            roster,
            events: BTreeMap::new(),
            arrivals: BTreeMap::new(),
            last: 0,
            acks: Vec::new(),
            sent: 0,
            unanswered: 0,
            slow: Vec::new(),
            joined_seq: 0,
            resume_refusals: 0,
            reprompts: 0,
            errors: Vec::new(),
            unreplied: BTreeMap::new(),
            longest_reply: Duration::ZERO,
            snapshots: 0,
            ended_away: false,
            repeats: 0,
            sessions: vec![Session {
                node,
                opened: Instant::now(),
                closed: None,
                close_code: None,
            }],
            think: Duration::ZERO,
            hold: Arc::new(AtomicBool::new(false)),
            holding: Arc::new(AtomicBool::new(false)),
            rng: StdRng::seed_from_u64(seed),
            turn: None,
            acted_on: None,
            retry_at: None,
            refused_in_a_row: 0,
            inflight: None,
            done: false,
        }
    }

    /// Opens a socket to node `node` and joins `room` (colour `colour`, or the first free).
    pub async fn join(
        roster: &Arc<Roster>,
        node: usize,
        room: &str,
        name: &str,
        colour: Option<&str>,
    ) -> Player {
        let c = connect(roster.addr(node)).await.expect("connect to join");
        let mut p = Player::new(name, c, node, roster.clone(), name.len() as u64 * 7919);
        let msg = json!({"type": "join", "room": room, "name": name, "colour": colour});
        let w = p.entry(msg).await;
        assert_eq!(w["type"], "welcome", "{name} joins {room}: {w}");
        p.joined_seq = w["seq"].as_u64().unwrap_or(0);
        p.token = Some(w["token"].as_str().expect("token").to_owned());
        p.colour = w["colour"].as_str().map(str::to_owned);
        p
    }

    /// Opens a socket to node `node` and watches `room`.
    pub async fn watch(roster: &Arc<Roster>, node: usize, room: &str, name: &str) -> Player {
        let c = connect(roster.addr(node)).await.expect("connect to watch");
        let mut p = Player::new(name, c, node, roster.clone(), 1);
        let w = p.entry(json!({"type": "watch", "room": room})).await;
        assert_eq!(w["type"], "welcome", "{name} watches {room}: {w}");
        p.joined_seq = w["seq"].as_u64().unwrap_or(0);
        p
    }

    /// Sends a `join` or `watch` and returns its answer (once: a new room is served on
    /// every node before its creation is answered, docs/CLUSTER.md).
    async fn entry(&mut self, msg: Value) -> Value {
        let req = self.c.cmd(msg).await;
        self.reply(req).await
    }

    /// Seeds the player's choice of legal actions.
    pub fn seed(&mut self, seed: u64) {
        self.rng = StdRng::seed_from_u64(seed);
    }

    /// The node of the current socket.
    pub fn node(&self) -> usize {
        self.sessions.last().map_or(0, |s| s.node)
    }

    /// The room's code.
    pub fn room(&self) -> String {
        self.c.room.clone()
    }

    /// Sends `msg` (req, room and seq filled in) and reads until its reply.
    pub async fn command(&mut self, msg: Value) -> Value {
        let req = self.c.cmd(msg).await;
        self.reply(req).await
    }

    /// Reads (recording events) until the reply to `req`; panics after 10 s.
    pub async fn reply(&mut self, req: u64) -> Value {
        self.read_until(Duration::from_secs(10), &format!("reply to {req}"), |v| {
            matches!(v["type"].as_str(), Some("ok" | "error" | "welcome"))
                && v["req"].as_u64() == Some(req)
        })
        .await
    }

    /// Reads (recording events) until a frame satisfies `pred`; panics after `limit` or
    /// when the socket closes.
    pub async fn read_until(
        &mut self,
        limit: Duration,
        what: &str,
        pred: impl Fn(&Value) -> bool,
    ) -> Value {
        let until = Instant::now() + limit;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "{}: no {what} within {limit:?}", self.name);
            match tokio::time::timeout(left.min(Duration::from_secs(5)), self.c.next()).await {
                Err(_) => continue,
                Ok(None) => panic!("{}: socket closed while waiting for {what}", self.name),
                Ok(Some(v)) => {
                    self.observe(&v);
                    if pred(&v) {
                        return v;
                    }
                }
            }
        }
    }

    /// Reads until this client has the event with seq `seq`.
    pub async fn wait_seq(&mut self, seq: u64) {
        if self.last >= seq {
            return;
        }
        self.read_until(Duration::from_secs(10), &format!("event {seq}"), |v| {
            v["type"] == "event" && v["seq"].as_u64() >= Some(seq)
        })
        .await;
    }

    /// Records one frame: events (gap and fork checks), welcomes, turns, replies.
    fn observe(&mut self, v: &Value) {
        match v["type"].as_str() {
            Some("event") => self.on_event(v),
            Some("welcome") if !v["snapshot"].is_null() => {
                if !self.events.is_empty() || self.last > 0 {
                    self.snapshots += 1;
                }
                self.last = v["seq"].as_u64().unwrap_or(0);
            }
            Some("your_turn") => {
                // The same turn again (a reattach or resume re-sends it) while the command
                // sent on it is unanswered: its reply is lost; act again, as a person would
                // (the seq check refuses the second if the first was applied).
                let seq = v["seq"].as_u64();
                if self.inflight.is_some() && seq.is_some() && seq == self.acted_on {
                    self.reprompts += 1;
                    self.inflight = None;
                    self.retry_at = Some(Instant::now());
                }
                self.turn = Some(v.clone());
            }
            Some("closing" | "ws_close") => {
                if let Some(s) = self.sessions.last_mut().filter(|s| s.closed.is_none()) {
                    s.close_code = s.close_code.or(v["code"].as_u64());
                }
            }
            _ => {}
        }
    }

    fn on_event(&mut self, v: &Value) {
        let seq = v["seq"].as_u64().expect("event seq");
        let frame = json!({"seq": seq, "at_ms": v["at_ms"], "event": v["event"]});
        if let Some(old) = self.events.get(&seq) {
            assert_eq!(
                old, &frame,
                "{}: seq {seq} arrived twice with different events (a fork)",
                self.name
            );
            self.repeats += 1;
            return;
        }
        if seq <= self.last {
            // Covered by a snapshot this client already has.
            return;
        }
        assert_eq!(
            seq,
            self.last + 1,
            "{}: event {seq} follows {} (a gap): {v}",
            self.name,
            self.last
        );
        self.last = seq;
        self.events.insert(seq, frame);
        self.arrivals.insert(seq, Instant::now());
        if v["event"]["type"] == "dice_revealed" {
            self.done = true;
        }
    }

    /// Plays until the game ends, reconnecting as needed; panics at
    /// `deadline`.
    pub async fn play(mut self, deadline: Instant) -> Player {
        while !self.done {
            assert!(
                Instant::now() < deadline,
                "{}: the game did not end in time; last event {}, errors {:?}",
                self.name,
                self.last,
                self.errors.iter().rev().take(5).collect::<Vec<_>>()
            );
            self.maybe_act().await;
            match tokio::time::timeout(Duration::from_millis(25), self.c.next()).await {
                Err(_) => {}
                Ok(None) => self.reconnect().await,
                Ok(Some(v)) if v["type"] == "ws_close" => {
                    self.observe(&v);
                    self.reconnect().await
                }
                Ok(Some(v)) => self.on_frame(v),
            }
        }
        // The reply to the game's last action follows its last events.
        let until = Instant::now() + Duration::from_secs(5);
        while self.inflight.is_some() && Instant::now() < until {
            match tokio::time::timeout(Duration::from_millis(100), self.c.next()).await {
                Ok(Some(v)) if v["type"] != "ws_close" => self.on_frame(v),
                Ok(_) => break,
                Err(_) => {}
            }
        }
        self
    }

    fn on_frame(&mut self, v: Value) {
        self.observe(&v);
        let req = v["req"].as_u64();
        if matches!(v["type"].as_str(), Some("ok" | "error")) {
            if let Some(sent) = req.and_then(|r| self.unreplied.remove(&r)) {
                self.longest_reply = self.longest_reply.max(sent.elapsed());
            }
        }
        if let Some((r, at)) = self.inflight.filter(|f| Some(f.0) == req) {
            if at.elapsed() > SLOW && matches!(v["type"].as_str(), Some("ok" | "error")) {
                let what = v["code"]
                    .as_str()
                    .unwrap_or(v["type"].as_str().unwrap_or("?"));
                eprintln!(
                    "{}: request {r} answered {what} after {:?} (socket on node {})",
                    self.name,
                    at.elapsed(),
                    self.node()
                );
                self.slow.push((r, at.elapsed(), what.to_owned()));
            }
        }
        match v["type"].as_str() {
            Some("ok") if req.is_some() && req == self.inflight.map(|f| f.0) => {
                self.acks.push(v["seq"].as_u64().expect("ok seq"));
                self.inflight = None;
                self.refused_in_a_row = 0;
            }
            Some("error") => {
                if req.is_some() && req == self.inflight.map(|f| f.0) {
                    self.inflight = None;
                    // Act again on the same turn a little later, if it is still current,
                    // backing off while the refusals go on.
                    let wait = 150u64 << self.refused_in_a_row.min(3);
                    self.refused_in_a_row += 1;
                    self.retry_at = Some(Instant::now() + Duration::from_millis(wait));
                }
                self.errors.push(v);
                assert!(
                    self.errors.len() < 500,
                    "{}: too many errors: {:?}",
                    self.name,
                    self.errors.last()
                );
            }
            _ => {}
        }
    }

    /// Rolls or plays when a current `your_turn` is waiting and nothing is in flight.
    async fn maybe_act(&mut self) {
        if let Some((req, at)) = self.inflight {
            if at.elapsed() < UNANSWERED {
                return;
            }
            eprintln!(
                "{}: request {req} unanswered after {UNANSWERED:?} (socket on node {}, last event {}, room seq {})",
                self.name,
                self.node(),
                self.last,
                self.c.seq
            );
            self.unanswered += 1;
            self.inflight = None;
            self.retry_at = Some(Instant::now());
        }
        let Some(turn) = self.turn.clone() else {
            self.holding.store(false, Ordering::SeqCst);
            return;
        };
        if turn["seq"].as_u64() != Some(self.c.seq) || self.token.is_none() {
            self.holding.store(false, Ordering::SeqCst);
            return;
        }
        if self.hold.load(Ordering::SeqCst) {
            self.holding.store(true, Ordering::SeqCst);
            return;
        }
        self.holding.store(false, Ordering::SeqCst);
        let seq = self.c.seq;
        let again = self.retry_at.is_some_and(|t| Instant::now() >= t);
        if self.acted_on == Some(seq) && !again {
            return;
        }
        if !self.think.is_zero() {
            tokio::time::sleep(self.think).await;
        }
        let msg = if turn["must_roll"] == true {
            json!({"type": "roll"})
        } else {
            let legal = turn["legal"].as_array().cloned().unwrap_or_default();
            assert!(
                !legal.is_empty(),
                "{}: your_turn without legal actions: {turn}",
                self.name
            );
            let i = self.rng.gen_range(0..legal.len());
            json!({"type": "play", "action": legal[i]})
        };
        let Ok(req) = self.c.try_cmd(msg).await else {
            // The socket is gone: the read side sees it next and reconnects.
            return;
        };
        self.sent += 1;
        self.inflight = Some((req, Instant::now()));
        self.unreplied.insert(req, Instant::now());
        self.acted_on = Some(seq);
        self.retry_at = None;
    }

    /// The socket closed: connect to another node that is up and resume the seat (or
    /// watch again), retrying while the room's owner is being replaced.
    async fn reconnect(&mut self) {
        let from = self.node();
        if let Some(s) = self.sessions.last_mut() {
            s.closed.get_or_insert(Instant::now());
        }
        self.inflight = None;
        // The closed socket's replies are gone with it.
        self.unreplied.clear();
        self.turn = None;
        self.acted_on = None;
        let room = self.room();
        let n = self.roster.len();
        let until = Instant::now() + RECONNECT;
        let mut k = 1;
        let mut last_error = Value::Null;
        while Instant::now() < until {
            let node = (from + k) % n;
            k += 1;
            if !self.roster.is_up(node) {
                if k % n == 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                continue;
            }
            // Counted from before the connect: the node may go down meanwhile.
            let opened = Instant::now();
            let Some(c) = connect(self.roster.addr(node)).await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let seq = self.c.seq;
            let next_req = self.c.next_req;
            let old = std::mem::replace(&mut self.c, c);
            self.c.seq = seq;
            self.c.next_req = next_req;
            self.c.room = old.room;
            self.c.colour = old.colour;
            let msg = match &self.token {
                Some(token) => {
                    json!({"type": "resume", "room": room, "token": token, "last_seq": self.last})
                }
                None => json!({"type": "watch", "room": room}),
            };
            let Ok(req) = self.c.try_cmd(msg).await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            match tokio::time::timeout(Duration::from_secs(5), self.await_reply(req)).await {
                Ok(Some(w)) if w["type"] == "welcome" => {
                    self.sessions.push(Session {
                        node,
                        opened,
                        closed: None,
                        close_code: None,
                    });
                    return;
                }
                Ok(Some(e)) if e["code"] == "game_over" && self.token.is_some() => {
                    // The game ended while this seat was away (bots played it out): the
                    // server refuses the resume and names the stored game, which the
                    // caller checks against what this player saw.
                    println!("{}: the game ended while away: {e}", self.name);
                    self.errors.push(e);
                    self.ended_away = true;
                    self.done = true;
                    return;
                }
                Ok(Some(e)) => {
                    last_error = e.clone();
                    self.errors.push(e);
                }
                _ => {}
            }
            // Refused (the room's owner is being replaced) or no answer: try again.
            self.resume_refusals += 1;
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        panic!(
            "{}: could not resume in room {room} within {RECONNECT:?} (socket was on node {from}); last error {last_error}",
            self.name
        );
    }

    /// The reply to `req`, recording frames; `None` if the socket closed first.
    async fn await_reply(&mut self, req: u64) -> Option<Value> {
        loop {
            let v = self.c.next().await?;
            if v["type"] == "ws_close" {
                return None;
            }
            self.observe(&v);
            if matches!(v["type"].as_str(), Some("ok" | "error" | "welcome"))
                && v["req"].as_u64() == Some(req)
            {
                return Some(v);
            }
        }
    }
}

/// Plays every player until its game ends, each on its own task;
/// returns them in the same order. Panics when one does not finish by `deadline`.
pub async fn play_all(players: Vec<Player>, deadline: Instant) -> Vec<Player> {
    let tasks: Vec<_> = players
        .into_iter()
        .map(|p| tokio::spawn(p.play(deadline)))
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        match t.await {
            Ok(p) => out.push(p),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    out
}
