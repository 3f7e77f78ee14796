//! One room's life in a load run: set up (create on its node, four clients join on
//! theirs), wait for the play phase, play games until the measured window is over.
//!
//! `play` is one client's state machine over a `select!` of its socket, the think-time
//! timer (and the creator's `start` attempts, `crate::start`) and the end of the window;
//! the state its branches share (the pending command, the one in flight, the last one
//! sent, the start) is a `Player`, and each branch one of its methods.

use crate::client::{next_json, next_text, seq_of, Client, Frame};
use crate::ctx::Ctx;
use crate::idle;
use crate::report::Hop;
use crate::rng::{Placement, Rng};
use crate::start::{self, AfterRefusal, FIRST_ACTION_REQ};
use futures_util::SinkExt;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::time::{sleep_until, timeout, Instant};
use tokio_tungstenite::tungstenite::Message;

/// How long clients keep reading (sending nothing) after the measured window, before they
/// close: the answers to the last commands arrive before the closing storm.
pub const DRAIN: Duration = Duration::from_secs(1);
/// Wait before sending again a command refused as `rate_limited`. Each refusal still
/// counts towards the server's error limit per connection, so a client that keeps acting
/// faster than the server's `--commands-per-second` is eventually closed: raise that limit
/// for saturation runs.
const RATE_LIMIT_RETRY: Duration = Duration::from_millis(100);

/// A client's last `roll`/`play`, as sent.
struct LastCommand {
    /// Its `req`.
    req: u64,
    /// When it was written.
    at: Instant,
    /// The frame (to send again after a `rate_limited`).
    msg: Value,
    /// The `seq` it was decided on.
    seq: u64,
}

/// The creator's `start` of this game: when the next attempt goes out, which one it is,
/// and whether the game is known to run (or will not).
struct Start {
    /// When to send the next attempt (`None`: none due).
    at: Option<Instant>,
    /// Attempts sent so far.
    attempts: u64,
    /// Answered for good: started, or given up.
    settled: bool,
}

/// Why a client's play loop ended.
enum Ended {
    GameOver,
    TimeUp,
    Failed,
}

/// One client's state while it plays: its socket, its draws, and the commands pending, in
/// flight and last sent. `play` runs the loop; the methods are its branches.
struct Player<'a> {
    ctx: &'a Ctx,
    code: &'a str,
    c: Client,
    rng: Rng,
    hop: Hop,
    creator: bool,
    /// This room's first game, whose `start` counts towards the starts phase.
    first_game: bool,
    think: Duration,
    jitter: f64,
    /// The `req` of the last `roll`/`play` sent.
    req: u64,
    start: Start,
    /// The `seq` of the last `your_turn` acted on.
    acted_seq: Option<u64>,
    /// (deadline to send, message to send, seq it was decided on)
    pending: Option<(Instant, Value, u64)>,
    /// (req, seq at send, sent at)
    inflight: Option<(u64, u64, Instant)>,
    /// The last roll/play sent: its `ok` counts if it was sent in the measured window, and
    /// it is sent again if refused as `rate_limited`.
    last: Option<LastCommand>,
}

/// Plays one client until the game ends or the play phase is over.
///
/// `room`: its number in the run (the creator's start slot, `--start-rate`);
/// `first_game`: this room's first game, whose `start` counts towards the starts phase.
#[allow(clippy::too_many_arguments)]
async fn play(
    ctx: &Ctx,
    code: &str,
    c: Client,
    mut rng: Rng,
    hop: Hop,
    creator: bool,
    room: usize,
    first_game: bool,
) -> Ended {
    let think = Duration::from_millis(ctx.args.think_ms);
    let jitter = ctx.args.think_jitter;
    // The creator's start waits for its slot inside this loop, reading the socket (the
    // server's pings are answered only while it is read).
    let start = Start {
        at: creator.then(|| {
            let wait = start::delay(room, ctx.args.start_rate, think, jitter, rng.unit());
            Instant::now() + wait
        }),
        attempts: 0,
        settled: !creator,
    };
    let mut p = Player {
        ctx,
        code,
        c,
        rng,
        hop,
        creator,
        first_game,
        think,
        jitter,
        req: FIRST_ACTION_REQ - 1,
        start,
        acted_seq: None,
        pending: None,
        inflight: None,
        last: None,
    };
    // The end of the window is fixed once every game has started (see `run`); until then
    // the loop also wakes when it is set.
    let mut end_rx = ctx.end.clone();
    let unset_end = Instant::now() + Duration::from_secs(86_400);
    let result = loop {
        let end_known = *end_rx.borrow_and_update();
        let end = end_known.unwrap_or(unset_end);
        let wake = p.wake(end);
        let ended = tokio::select! {
            Ok(()) = end_rx.changed(), if end_known.is_none() => None,
            frame = next_text(&mut p.c.ws) => match frame {
                Some(text) => p.on_frame(text.as_str()),
                None => {
                    ctx.stats.error("connection_lost");
                    Some(Ended::Failed)
                }
            },
            _ = sleep_until(wake) => p.on_timer(end).await,
        };
        if let Some(ended) = ended {
            break ended;
        }
    };
    p.finish().await;
    result
}

impl Player<'_> {
    /// When the loop must wake if no frame comes: the next send due, else the end of the
    /// window. After `end` nothing is sent; the connection stays open until `end + DRAIN`
    /// so the commands still in flight are answered under the same load, not during the
    /// storm of 30,000 connections closing at once.
    fn wake(&self, end: Instant) -> Instant {
        let due = [self.pending.as_ref().map(|p| p.0), self.start.at]
            .into_iter()
            .flatten()
            .min();
        match due {
            _ if Instant::now() >= end => end + DRAIN,
            Some(at) => at.min(end),
            None => end,
        }
    }

    /// One frame read from the socket; `Some` ends the loop.
    fn on_frame(&mut self, text: &str) -> Option<Ended> {
        let Some(mut v) = Frame::parse(text) else {
            self.ctx.stats.error("unreadable_frame");
            return None;
        };
        match v.kind.as_ref() {
            "event" => return self.on_event(&v),
            "ok" => self.on_ok(&v),
            "error" => self.on_error(&v),
            "your_turn" => self.on_your_turn(&mut v),
            "closing" => {
                self.ctx.stats.error("closing");
                return Some(Ended::Failed);
            }
            _ => {}
        }
        None
    }

    /// An `event`: answers the command in flight (its latency) once its `seq` is passed;
    /// a won game ends the loop.
    fn on_event(&mut self, v: &Frame) -> Option<Ended> {
        let seq = v.seq;
        self.c.seq = self.c.seq.max(seq);
        if let Some((_, sent_seq, at)) = self.inflight {
            if seq > sent_seq {
                if self.ctx.measured(at) {
                    self.ctx
                        .stats
                        .record(at.elapsed().as_micros() as u64, self.hop);
                }
                self.inflight = None;
            }
        }
        if v.is_game_won() {
            self.ctx
                .stats
                .games_finished
                .fetch_add(u64::from(self.creator), Ordering::Relaxed);
            return Some(Ended::GameOver);
        }
        None
    }

    /// An `ok`: of the last action (counted if sent in the window), or of the `start`.
    fn on_ok(&mut self, v: &Frame) {
        self.c.seq = self.c.seq.max(v.seq);
        let req = v.req;
        if req.is_some_and(|r| r >= FIRST_ACTION_REQ) {
            if self
                .last
                .as_ref()
                .is_some_and(|l| req == Some(l.req) && self.ctx.measured(l.at))
            {
                self.ctx.stats.actions.fetch_add(1, Ordering::Relaxed);
            }
        } else if req.is_some_and(start::is_start_req) && !self.start.settled {
            self.start_settled();
        }
    }

    /// The game is known to run: the start is answered (counted for a first game).
    fn start_settled(&mut self) {
        self.start.settled = true;
        if self.first_game {
            self.ctx.stats.games_started.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// An `error`: of the `start` (retried, taken as started, or given up), or of an
    /// action (sent again after `rate_limited`, else decided again on the next turn).
    fn on_error(&mut self, v: &Frame) {
        let code = v.code.as_deref().unwrap_or("unknown");
        self.inflight = None;
        if v.req.is_some_and(start::is_start_req) {
            self.on_start_refused(code);
            return;
        }
        self.ctx.stats.error(code);
        if code == "rate_limited" {
            // Refused before the room saw it: the turn is still ours, and no new
            // your_turn will come. Send it again a little later.
            if let Some(l) = self.last.take() {
                self.pending = Some((Instant::now() + RATE_LIMIT_RETRY, l.msg, l.seq));
            }
        } else {
            // Decide again on the next your_turn.
            self.acted_seq = None;
        }
    }

    /// The creator's `start` refused with `code`.
    fn on_start_refused(&mut self, code: &str) {
        self.ctx.stats.error(&format!("start_{code}"));
        if self.start.settled {
            return;
        }
        match start::after_refusal(code, self.start.attempts) {
            AfterRefusal::Retry(wait) => self.start.at = Some(Instant::now() + wait),
            AfterRefusal::Started => self.start_settled(),
            AfterRefusal::GiveUp => {
                // This room will not play; the starts phase stops waiting for it.
                self.start.settled = true;
                if self.first_game {
                    self.ctx.stats.starts_failed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// A `your_turn`: decides the answer (`roll`, or a random legal action), sent after a
    /// think time.
    fn on_your_turn(&mut self, v: &mut Frame) {
        let seq = v.seq;
        self.c.seq = self.c.seq.max(seq);
        if self.acted_seq == Some(seq) {
            return;
        }
        let code = self.code;
        let msg = if v.must_roll {
            json!({"type": "roll", "room": code, "seq": seq})
        } else if v.legal.is_empty() {
            self.ctx.stats.error("empty_legal");
            return;
        } else {
            let a = v.legal.swap_remove(self.rng.below(v.legal.len()));
            json!({"type": "play", "room": code, "seq": seq, "action": a})
        };
        let at = Instant::now() + self.rng.think(self.think, self.jitter);
        self.pending = Some((at, msg, seq));
    }

    /// The timer: ends the loop after the drain, else sends the `start` and the pending
    /// command when due (nothing after `end`).
    async fn on_timer(&mut self, end: Instant) -> Option<Ended> {
        let now = Instant::now();
        if now >= end + DRAIN {
            return Some(Ended::TimeUp);
        }
        if now >= end {
            // A game of a room that came back after the window: not started.
            return self.start.at.is_some().then_some(Ended::TimeUp);
        }
        if self.start.at.is_some_and(|at| now >= at) {
            self.start.at = None;
            self.start.attempts += 1;
            let req = start::START_REQ + self.start.attempts - 1;
            let msg = json!({"type": "start", "req": req, "room": self.code, "seq": self.c.seq});
            if !self.send(&msg).await {
                return Some(Ended::Failed);
            }
        }
        if self.pending.as_ref().is_some_and(|p| now >= p.0) {
            return self.send_pending().await;
        }
        None
    }

    /// Sends the pending `roll`/`play` with the next `req`.
    async fn send_pending(&mut self) -> Option<Ended> {
        let (_, mut msg, seq) = self.pending.take()?;
        self.req += 1;
        let req = self.req;
        msg["req"] = json!(req);
        self.acted_seq = Some(seq);
        let now = Instant::now();
        self.inflight = Some((req, seq, now));
        self.last = Some(LastCommand {
            req,
            at: now,
            msg: msg.clone(),
            seq,
        });
        if self.ctx.measured(now) {
            self.ctx.stats.sent.fetch_add(1, Ordering::Relaxed);
        }
        if !self.send(&msg).await {
            return Some(Ended::Failed);
        }
        None
    }

    /// Writes `msg`; `false` (counted) when the socket refuses it.
    async fn send(&mut self, msg: &Value) -> bool {
        if self
            .c
            .ws
            .send(Message::text(msg.to_string()))
            .await
            .is_err()
        {
            self.ctx.stats.error("send_failed");
            return false;
        }
        true
    }

    /// After the loop: a start never answered no longer holds up the starts phase; the
    /// socket is closed.
    async fn finish(&mut self) {
        if !self.start.settled && self.first_game {
            // The socket went (or the window ended) before the start was answered: the
            // starts phase must not wait for this room until its timeout.
            self.ctx.stats.error("start_unanswered");
            self.ctx.stats.starts_failed.fetch_add(1, Ordering::Relaxed);
        }
        let _ = self.c.ws.close(None).await;
        self.ctx.net.closed();
    }
}

/// Closes every client of an unfinished setup.
async fn close_all(ctx: &Ctx, clients: Vec<Client>) {
    for mut c in clients {
        let _ = c.ws.close(None).await;
        ctx.net.closed();
    }
}

/// Sets up one room: create it on its node, join four clients in order (the first is the
/// creator), each on its node, and wait until the creator has seen every join.
async fn setup_room(
    ctx: &Ctx,
    room: usize,
    place: &Placement,
) -> Result<(String, Vec<Client>), String> {
    let node = |i: usize| &ctx.nodes[i % ctx.nodes.len()];
    let code = ctx
        .net
        .create_room(node(place.room), ctx.args.turn_clock_secs)
        .await?;
    let mut clients = Vec::with_capacity(4);
    for (i, &at) in place.clients.iter().enumerate() {
        match ctx
            .net
            .join(node(at), &code, &format!("lg{room}-{i}"))
            .await
        {
            Ok(c) => clients.push(c),
            Err(e) => {
                close_all(ctx, clients).await;
                return Err(e);
            }
        }
    }
    // The creator must `start` with the latest seq: the fourth welcome's.
    let latest = clients.iter().map(|c| c.seq).max().unwrap_or(0);
    let creator = &mut clients[0];
    while creator.seq < latest {
        match timeout(Duration::from_secs(30), next_json(&mut creator.ws)).await {
            Ok(Some(v)) => creator.seq = creator.seq.max(seq_of(&v)),
            _ => {
                close_all(ctx, clients).await;
                return Err("lobby: creator did not see the joins".into());
            }
        }
    }
    Ok((code, clients))
}

/// One room's life: set up, wait for the play phase, play games until time is up.
pub async fn room_task(ctx: Arc<Ctx>, room: usize, setup: Arc<Semaphore>) {
    let mut game_no = 0u64;
    loop {
        let permit = if game_no == 0 {
            setup.clone().acquire_owned().await.ok()
        } else {
            None
        };
        let place = Placement::draw(ctx.args.seed, room, game_no, ctx.nodes.len());
        let ready = setup_room(&ctx, room, &place).await;
        drop(permit);
        let (code, clients) = match ready {
            Ok(r) => r,
            Err(e) => {
                // "join refused: CODE" keeps the code; other errors their first part.
                let kind = match e.strip_prefix("join refused: ") {
                    Some(code) => format!("join_refused_{code}"),
                    None => e.split(':').next().unwrap_or("setup").replace(' ', "_"),
                };
                ctx.stats.error(&format!("setup_{kind}"));
                if game_no == 0 {
                    ctx.stats.setups_failed.fetch_add(1, Ordering::Relaxed);
                }
                return;
            }
        };
        let mut clients = clients;
        if game_no == 0 {
            ctx.stats.rooms_ready.fetch_add(1, Ordering::Relaxed);
            // Read every socket until the play phase, as a real client does.
            let mut go = ctx.go();
            if let Err(kind) = idle::hold(&mut clients, &mut go).await {
                ctx.stats.error(kind);
                ctx.stats.starts_failed.fetch_add(1, Ordering::Relaxed);
                close_all(&ctx, clients).await;
                return;
            }
        }
        let mut handles = Vec::with_capacity(4);
        for (i, c) in clients.into_iter().enumerate() {
            let ctx = ctx.clone();
            let code = code.clone();
            let rng = Rng::for_room(ctx.args.seed, room, game_no, i as u64);
            let hop = if place.crosses(i) {
                Hop::Cross
            } else {
                Hop::Same
            };
            handles.push(tokio::spawn(async move {
                play(&ctx, &code, c, rng, hop, i == 0, room, game_no == 0).await
            }));
        }
        let mut again = false;
        for h in handles {
            if let Ok(Ended::GameOver) = h.await {
                again = true;
            }
        }
        game_no += 1;
        if !again || !ctx.playing() || ctx.end().is_some_and(|e| Instant::now() >= e) {
            return;
        }
    }
}
