//! `parchis-loadgen`: opens R rooms of four WebSocket clients against a running Parchís
//! server on this machine, plays legal actions with a think time for a bounded duration,
//! and prints a JSON report: actions per second, action→event latency percentiles,
//! errors, open connections, and the server's resident memory and CPU time when
//! `--server-pid` is given.
//!
//! ```sh
//! parchis-loadgen --url http://127.0.0.1:18080 --rooms 200 --think-ms 1000 \
//!     --duration-secs 30 --source-addrs 127.0.0.1,127.0.0.2 --server-pid $PID
//! ```
//!
//! Phases: (1) *setup*: each room is created with `POST /api/rooms` and four clients
//! `join` it (at most `--setup-concurrency` rooms at a time); (2) *idle*: once every room
//! is ready the server's RSS is sampled (memory per idle connection); (3) *starts*: every
//! creator sends `start` at a uniformly random moment within one think time, so rooms do
//! not act in lockstep, and the generator waits until every game has started (or was
//! refused, or `--setup-timeout-secs` passed: `games_started` in the report says); (4)
//! *warm-up* (`--warmup-secs`, counted from the last start): the games reach their steady
//! state; (5) *measured play* (`--duration-secs`): each client answers its `your_turn` after a
//! think time drawn uniformly from `think_ms × [1 − jitter, 1 + jitter]` with `roll` or
//! a uniformly random entry of `legal`. A room whose game ends plays a new one (new room,
//! new connections). Only commands sent in the measured window are counted (actions,
//! latency); after it the clients send nothing more and stay connected one more second,
//! so the last answers arrive before every connection closes at once.
//!
//! Latency: from writing a `roll`/`play` frame to reading the first `event` frame with
//! a higher `seq` on the same connection (the event the command caused; events precede
//! the `ok`). Only 127.0.0.0/8 targets are accepted.

use clap::Parser;
use futures_util::{SinkExt, StreamExt};
use hdrhistogram::Histogram;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::time::{sleep_until, timeout, Instant};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// Load generator for the Parchís server.
#[derive(Parser, Debug, Clone)]
#[command(name = "parchis-loadgen", version, about)]
struct Args {
    /// Server base URL (http://HOST:PORT); HOST must be in 127.0.0.0/8 or `localhost`.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// Rooms of four clients.
    #[arg(long, default_value_t = 10)]
    rooms: usize,
    /// Think time before each `roll`/`play`, in milliseconds. Every room has one player
    /// to act at a time, so 1000 ms ≈ one action per second per room.
    #[arg(long, default_value_t = 1000)]
    think_ms: u64,
    /// Spread of the think time: each one is drawn uniformly from
    /// `think_ms × [1 − jitter, 1 + jitter]` (mean `think_ms`), and each room's first
    /// command waits a uniform `[0, think_ms)`, so rooms do not act in lockstep (real
    /// players don't). 0 gives the fixed think time and simultaneous starts.
    #[arg(long, default_value_t = 0.5, value_parser = parse_jitter)]
    think_jitter: f64,
    /// Warm-up before the measured window, in seconds, counted from the moment every game
    /// has started (the starts are staggered over one think time, each creating a game in
    /// the store): the games reach their steady state; nothing of it is counted.
    #[arg(long, default_value_t = 5)]
    warmup_secs: u64,
    /// Length of the measured play phase, in seconds. After it the clients send nothing
    /// more and stay connected one second (drain) so the last answers are counted.
    #[arg(long, default_value_t = 30)]
    duration_secs: u64,
    /// Give up on the setup phase after this many seconds (the rooms ready by then play),
    /// and likewise on waiting for every game to start (the window opens anyway).
    #[arg(long, default_value_t = 120)]
    setup_timeout_secs: u64,
    /// Rooms set up at the same time.
    #[arg(long, default_value_t = 32)]
    setup_concurrency: usize,
    /// Source addresses, used round-robin per connection (bind before connect).
    #[arg(long, value_delimiter = ',', default_value = "127.0.0.1")]
    source_addrs: Vec<Ipv4Addr>,
    /// Server process id: report its VmRSS and CPU time from /proc.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Seed of the action choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Turn clock of the rooms created (seconds, 1–600).
    #[arg(long, default_value_t = 600)]
    turn_clock_secs: u64,
}

/// Counters shared by every client.
#[derive(Default)]
struct Stats {
    /// Commands (`roll`/`play`) sent in the measured window and answered with `ok`.
    actions: AtomicU64,
    /// Commands (`roll`/`play`) sent in the measured window.
    sent: AtomicU64,
    /// Games that reached `game_won`.
    games_finished: AtomicU64,
    /// Rooms fully set up (created, four joined).
    rooms_ready: AtomicU64,
    /// Open WebSocket connections now.
    open: AtomicI64,
    /// Highest `open` seen.
    open_peak: AtomicI64,
    /// Errors by kind (`error` codes from the server, and local failures).
    errors: Mutex<BTreeMap<String, u64>>,
    /// Games whose `start` was answered `ok` (first game of each room).
    games_started: AtomicU64,
    /// First games whose `start` was refused (their rooms do not play).
    starts_failed: AtomicU64,
    /// Action→event latency, microseconds: one histogram for every client, recorded into
    /// directly (a histogram per client would cost ~40 KiB each and, allocated for 19,600
    /// clients at once, stall the generator for seconds just as the games start).
    latency: Mutex<Option<Histogram<u64>>>,
}

impl Stats {
    fn error(&self, kind: &str) {
        if let Ok(mut e) = self.errors.lock() {
            *e.entry(kind.to_string()).or_insert(0) += 1;
        }
    }
    fn opened(&self) {
        let now = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.open_peak.fetch_max(now, Ordering::Relaxed);
    }
    fn closed(&self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }
    /// Records one action→event latency, in microseconds (at least 1).
    fn record(&self, us: u64) {
        let failed = match self.latency.lock() {
            Ok(mut g) => {
                if g.is_none() {
                    *g = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).ok();
                }
                g.as_mut()
                    .is_none_or(|h| h.record(us.clamp(1, 60_000_000)).is_err())
            }
            Err(_) => true,
        };
        if failed {
            self.error("histogram_record");
        }
    }
}

/// Settings and shared state every task needs.
struct Ctx {
    args: Args,
    server: SocketAddr,
    host_header: String,
    stats: Stats,
    /// Round-robin index into the source addresses.
    next_source: AtomicU64,
    /// `true` once the play phase starts.
    go: watch::Receiver<bool>,
    /// End of the measured window (clients send nothing after it and close `DRAIN`
    /// later); the window is the `--duration-secs` before it. `None` until every game has
    /// started: the window is placed after that.
    end: watch::Receiver<Option<Instant>>,
}

impl Ctx {
    fn source(&self) -> Ipv4Addr {
        let n = self.args.source_addrs.len().max(1) as u64;
        let i = self.next_source.fetch_add(1, Ordering::Relaxed) % n;
        self.args
            .source_addrs
            .get(i as usize)
            .copied()
            .unwrap_or(Ipv4Addr::LOCALHOST)
    }
    fn end(&self) -> Option<Instant> {
        *self.end.borrow()
    }
    /// Whether a command sent at `at` falls in the measured window.
    fn measured(&self, at: Instant) -> bool {
        let window = Duration::from_secs(self.args.duration_secs);
        self.end().is_some_and(|end| at >= end - window)
    }
    fn playing(&self) -> bool {
        *self.go.borrow()
    }
}

/// `--think-jitter`: a fraction in [0, 1].
fn parse_jitter(s: &str) -> Result<f64, String> {
    let j: f64 = s.parse().map_err(|e| format!("{s:?}: {e}"))?;
    if (0.0..=1.0).contains(&j) {
        Ok(j)
    } else {
        Err(format!("{s:?}: must be between 0 and 1"))
    }
}

/// Parses `http://HOST:PORT[/]` and checks HOST is a loopback IPv4 address.
fn parse_url(url: &str) -> Result<(SocketAddr, String), String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("ws://"))
        .ok_or_else(|| format!("{url:?}: only http:// (or ws://) URLs are supported"))?;
    let hostport = rest.split('/').next().unwrap_or("");
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("{url:?}: bad port {p:?}"))?,
        ),
        None => (hostport, 80),
    };
    let ip: Ipv4Addr = if host.eq_ignore_ascii_case("localhost") {
        Ipv4Addr::LOCALHOST
    } else {
        host.parse()
            .map_err(|_| format!("{url:?}: host must be an IPv4 address in 127.0.0.0/8"))?
    };
    if !ip.is_loopback() {
        return Err(format!(
            "{url:?}: refusing to load a non-loopback host ({ip}); only 127.0.0.0/8 is allowed"
        ));
    }
    Ok((SocketAddr::new(IpAddr::V4(ip), port), hostport.to_string()))
}

/// A TCP connection to the server from the next source address.
async fn connect(ctx: &Ctx) -> Result<TcpStream, String> {
    let socket = TcpSocket::new_v4().map_err(|e| format!("socket: {e}"))?;
    socket
        .bind(SocketAddr::new(IpAddr::V4(ctx.source()), 0))
        .map_err(|e| format!("bind: {e}"))?;
    let stream = timeout(Duration::from_secs(10), socket.connect(ctx.server))
        .await
        .map_err(|_| "connect: timed out".to_string())?
        .map_err(|e| format!("connect: {e}"))?;
    stream
        .set_nodelay(true)
        .map_err(|e| format!("nodelay: {e}"))?;
    Ok(stream)
}

/// `POST /api/rooms`; returns the room code.
async fn create_room(ctx: &Ctx) -> Result<String, String> {
    let mut stream = connect(ctx).await?;
    let body = json!({"seats": 4, "turn_clock_secs": ctx.args.turn_clock_secs, "public": false})
        .to_string();
    let req = format!(
        "POST /api/rooms HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        ctx.host_header,
        body.len(),
        body
    );
    stream
        .write_all(req.as_bytes())
        .await
        .map_err(|e| format!("http write: {e}"))?;
    let mut buf = Vec::with_capacity(1024);
    timeout(Duration::from_secs(30), stream.read_to_end(&mut buf))
        .await
        .map_err(|_| "http: timed out".to_string())?
        .map_err(|e| format!("http read: {e}"))?;
    let text = String::from_utf8_lossy(&buf);
    let status = text.split_whitespace().nth(1).unwrap_or("");
    if status != "201" {
        return Err(format!("create room: HTTP status {status:?}"));
    }
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
    // Tolerate a chunked body: the JSON object is between the first '{' and last '}'.
    let (start, end) = (body.find('{'), body.rfind('}'));
    let json = match (start, end) {
        (Some(s), Some(e)) if e > s => &body[s..=e],
        _ => return Err("create room: no JSON body".into()),
    };
    let v: Value = serde_json::from_str(json).map_err(|e| format!("create room: {e}"))?;
    v.get("code")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "create room: no code".into())
}

type Ws = WebSocketStream<TcpStream>;

/// Opens a WebSocket to `/ws` with small buffers.
async fn open_ws(ctx: &Ctx) -> Result<Ws, String> {
    let stream = connect(ctx).await?;
    let url = format!("ws://{}/ws", ctx.host_header);
    let config = WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0)
        .max_write_buffer_size(1 << 20);
    let (ws, _) = timeout(
        Duration::from_secs(30),
        tokio_tungstenite::client_async_with_config(url, stream, Some(config)),
    )
    .await
    .map_err(|_| "handshake: timed out".to_string())?
    .map_err(|e| format!("handshake: {e}"))?;
    ctx.stats.opened();
    Ok(ws)
}

/// Reads the next JSON text frame (other frames skipped); `None` when closed or on
/// error.
async fn next_json(ws: &mut Ws) -> Option<Value> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(t)) => return serde_json::from_str(t.as_str()).ok(),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => continue,
        }
    }
}

fn seq_of(v: &Value) -> u64 {
    v.get("seq").and_then(Value::as_u64).unwrap_or(0)
}

fn type_of(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

/// One seated client in the lobby: its socket and the room's latest `seq` it has seen.
struct Client {
    ws: Ws,
    seq: u64,
}

/// Joins `code`; returns the client once `welcome` arrived.
async fn join(ctx: &Ctx, code: &str, name: &str) -> Result<Client, String> {
    let mut ws = open_ws(ctx).await?;
    let msg = json!({"type": "join", "req": 1, "room": code, "name": name});
    if let Err(e) = ws.send(Message::text(msg.to_string())).await {
        ctx.stats.closed();
        return Err(format!("send join: {e}"));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match timeout(deadline - Instant::now(), next_json(&mut ws)).await {
            Ok(Some(v)) => match type_of(&v) {
                "welcome" => {
                    let seq = seq_of(&v);
                    return Ok(Client { ws, seq });
                }
                "error" => {
                    ctx.stats.closed();
                    let code = v.get("code").and_then(Value::as_str).unwrap_or("?");
                    return Err(format!("join refused: {code}"));
                }
                _ => {}
            },
            Ok(None) => {
                ctx.stats.closed();
                return Err("join: connection closed".into());
            }
            Err(_) => {
                ctx.stats.closed();
                return Err("join: timed out".into());
            }
        }
    }
}

/// Small deterministic PRNG for the action choices (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x % n.max(1) as u64) as usize
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        self.below(1 << 30) as f64 / (1u64 << 30) as f64
    }

    /// A think time: uniform in `think × [1 − jitter, 1 + jitter]`.
    fn think(&mut self, think: Duration, jitter: f64) -> Duration {
        think.mul_f64(1.0 - jitter + 2.0 * jitter * self.unit())
    }
}

/// First `req` of a `roll`/`play` command on a connection.
const FIRST_ACTION_REQ: u64 = 10;
/// How long clients keep reading (sending nothing) after the measured window, before they
/// close: the answers to the last commands arrive before the closing storm.
const DRAIN: Duration = Duration::from_secs(1);
/// Wait before sending again a command refused as `rate_limited`. Each refusal still
/// counts towards the server's error limit per connection, so a client that keeps acting
/// faster than the server's `--commands-per-second` is eventually closed: raise that limit
/// for saturation runs.
const RATE_LIMIT_RETRY: Duration = Duration::from_millis(100);
/// `req` of the creator's `start` (1 was its `join`).
const START_REQ: u64 = 2;

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

/// Why a client's play loop ended.
enum Ended {
    GameOver,
    TimeUp,
    Failed,
}

/// Plays one client until the game ends or the play phase is over.
///
/// `first_game`: this room's first game, whose `start` counts towards the warm-up.
async fn play(
    ctx: &Ctx,
    code: &str,
    mut c: Client,
    mut rng: Rng,
    creator: bool,
    first_game: bool,
) -> Ended {
    let think = Duration::from_millis(ctx.args.think_ms);
    let jitter = ctx.args.think_jitter;
    // Action requests are numbered from FIRST_ACTION_REQ; 1 was `join`, 2 is `start`.
    let mut req: u64 = FIRST_ACTION_REQ - 1;
    let mut started = !creator;
    let mut acted_seq: Option<u64> = None;
    // (deadline to send, message to send, seq it was decided on)
    let mut pending: Option<(Instant, Value, u64)> = None;
    // (req, seq at send, sent at)
    let mut inflight: Option<(u64, u64, Instant)> = None;
    // The last roll/play sent: its `ok` counts if it was sent in the measured window, and
    // it is sent again if refused as `rate_limited`.
    let mut last: Option<LastCommand> = None;
    // The end of the window is fixed once every game has started (see `run`); until then
    // the loop also wakes when it is set.
    let mut end_rx = ctx.end.clone();
    let unset_end = Instant::now() + Duration::from_secs(86_400);
    let result = 'outer: loop {
        let end_known = *end_rx.borrow_and_update();
        let end = end_known.unwrap_or(unset_end);
        if !started {
            started = true;
            // Stagger the rooms' starts over one think time (unless jitter is 0).
            if jitter > 0.0 {
                tokio::time::sleep(think.mul_f64(rng.unit())).await;
            }
            if ctx.end().is_some_and(|e| Instant::now() >= e) {
                // A game of a room that came back after the window: not started.
                break Ended::TimeUp;
            }
            let msg = json!({"type": "start", "req": START_REQ, "room": code, "seq": c.seq});
            if c.ws.send(Message::text(msg.to_string())).await.is_err() {
                ctx.stats.error("send_failed");
                break Ended::Failed;
            }
        }
        // After `end` nothing is sent; the connection stays open until `end + DRAIN` so
        // the commands still in flight are answered under the same load, not during the
        // storm of 19,600 connections closing at once.
        let wake = match &pending {
            _ if Instant::now() >= end => end + DRAIN,
            Some((at, _, _)) => (*at).min(end),
            None => end,
        };
        tokio::select! {
            Ok(()) = end_rx.changed(), if end_known.is_none() => {}
            frame = next_json(&mut c.ws) => {
                let Some(v) = frame else {
                    ctx.stats.error("connection_lost");
                    break Ended::Failed;
                };
                let seq = seq_of(&v);
                match type_of(&v) {
                    "event" => {
                        c.seq = c.seq.max(seq);
                        if let Some((_, sent_seq, at)) = inflight {
                            if seq > sent_seq {
                                if ctx.measured(at) {
                                    ctx.stats.record(at.elapsed().as_micros() as u64);
                                }
                                inflight = None;
                            }
                        }
                        let inner = v.get("event");
                        let is_win = inner
                            .and_then(|e| e.get("event"))
                            .map(|g| type_of(g) == "game_won")
                            .unwrap_or(false);
                        if is_win {
                            ctx.stats.games_finished.fetch_add(u64::from(creator), Ordering::Relaxed);
                            break 'outer Ended::GameOver;
                        }
                    }
                    "ok" => {
                        c.seq = c.seq.max(seq);
                        let req = v.get("req").and_then(Value::as_u64);
                        if req.is_some_and(|r| r >= FIRST_ACTION_REQ) {
                            if last.as_ref().is_some_and(|l| req == Some(l.req) && ctx.measured(l.at)) {
                                ctx.stats.actions.fetch_add(1, Ordering::Relaxed);
                            }
                        } else if req == Some(START_REQ) && first_game {
                            ctx.stats.games_started.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    "error" => {
                        let code = v.get("code").and_then(Value::as_str).unwrap_or("unknown");
                        ctx.stats.error(code);
                        inflight = None;
                        let req = v.get("req").and_then(Value::as_u64);
                        if req == Some(START_REQ) && first_game {
                            // This room will not play; the starts phase stops waiting for it.
                            ctx.stats.starts_failed.fetch_add(1, Ordering::Relaxed);
                        } else if code == "rate_limited" {
                            // Refused before the room saw it: the turn is still ours, and
                            // no new your_turn will come. Send it again a little later.
                            if let Some(l) = last.take() {
                                pending = Some((Instant::now() + RATE_LIMIT_RETRY, l.msg, l.seq));
                            }
                        } else {
                            // Decide again on the next your_turn.
                            acted_seq = None;
                        }
                    }
                    "your_turn" => {
                        c.seq = c.seq.max(seq);
                        if acted_seq == Some(seq) {
                            continue;
                        }
                        let msg = if v.get("must_roll").and_then(Value::as_bool).unwrap_or(false) {
                            json!({"type": "roll", "room": code, "seq": seq})
                        } else {
                            let legal = v.get("legal").and_then(Value::as_array);
                            match legal {
                                Some(l) if !l.is_empty() => {
                                    let a = l[rng.below(l.len())].clone();
                                    json!({"type": "play", "room": code, "seq": seq, "action": a})
                                }
                                _ => {
                                    ctx.stats.error("empty_legal");
                                    continue;
                                }
                            }
                        };
                        pending = Some((Instant::now() + rng.think(think, jitter), msg, seq));
                    }
                    "closing" => {
                        ctx.stats.error("closing");
                        break Ended::Failed;
                    }
                    _ => {}
                }
            }
            _ = sleep_until(wake) => {
                let now = Instant::now();
                if now >= end + DRAIN {
                    break Ended::TimeUp;
                }
                if now >= end {
                    continue;
                }
                if let Some((_, mut msg, seq)) = pending.take() {
                    req += 1;
                    msg["req"] = json!(req);
                    acted_seq = Some(seq);
                    let now = Instant::now();
                    inflight = Some((req, seq, now));
                    last = Some(LastCommand { req, at: now, msg: msg.clone(), seq });
                    if ctx.measured(now) {
                        ctx.stats.sent.fetch_add(1, Ordering::Relaxed);
                    }
                    if c.ws.send(Message::text(msg.to_string())).await.is_err() {
                        ctx.stats.error("send_failed");
                        break Ended::Failed;
                    }
                }
            }
        }
    };
    let _ = c.ws.close(None).await;
    ctx.stats.closed();
    result
}

/// Sets up one room: create it, join four clients in order (the first is the creator),
/// and wait until the creator has seen every join.
async fn setup_room(ctx: &Ctx, room: usize) -> Result<(String, Vec<Client>), String> {
    let code = create_room(ctx).await?;
    let mut clients = Vec::with_capacity(4);
    for i in 0..4 {
        match join(ctx, &code, &format!("lg{room}-{i}")).await {
            Ok(c) => clients.push(c),
            Err(e) => {
                for mut c in clients {
                    let _ = c.ws.close(None).await;
                    ctx.stats.closed();
                }
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
                for mut c in clients {
                    let _ = c.ws.close(None).await;
                    ctx.stats.closed();
                }
                return Err("lobby: creator did not see the joins".into());
            }
        }
    }
    Ok((code, clients))
}

/// One room's life: set up, wait for the play phase, play games until time is up.
async fn room_task(ctx: Arc<Ctx>, room: usize, setup: Arc<Semaphore>) {
    let mut game_no = 0u64;
    loop {
        let permit = if game_no == 0 {
            setup.clone().acquire_owned().await.ok()
        } else {
            None
        };
        let ready = setup_room(&ctx, room).await;
        drop(permit);
        let (code, clients) = match ready {
            Ok(r) => r,
            Err(e) => {
                let kind = e.split(':').next().unwrap_or("setup").replace(' ', "_");
                ctx.stats.error(&format!("setup_{kind}"));
                return;
            }
        };
        if game_no == 0 {
            ctx.stats.rooms_ready.fetch_add(1, Ordering::Relaxed);
            let mut go = ctx.go.clone();
            if go.wait_for(|g| *g).await.is_err() {
                return;
            }
        }
        let mut handles = Vec::with_capacity(4);
        for (i, c) in clients.into_iter().enumerate() {
            let ctx = ctx.clone();
            let code = code.clone();
            let seed = ctx.args.seed ^ ((room as u64) << 20) ^ (game_no << 8) ^ (i as u64 + 1);
            let rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
            handles.push(tokio::spawn(async move {
                play(&ctx, &code, c, rng, i == 0, game_no == 0).await
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

/// VmRSS of `pid` in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// utime + stime of `pid`, in seconds.
fn cpu_secs(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0) // USER_HZ is 100 on Linux
}

fn main() -> ExitCode {
    let args = Args::parse();
    let (server, host_header) = match parse_url(&args.url) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("parchis-loadgen: {e}");
            return ExitCode::from(2);
        }
    };
    if args.source_addrs.iter().any(|a| !a.is_loopback()) {
        eprintln!("parchis-loadgen: --source-addrs must be in 127.0.0.0/8");
        return ExitCode::from(2);
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("parchis-loadgen: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let report = rt.block_on(run(args, server, host_header));
    match serde_json::to_string_pretty(&report) {
        Ok(s) => println!("{s}"),
        Err(e) => {
            eprintln!("parchis-loadgen: {e}");
            return ExitCode::FAILURE;
        }
    }
    if report["rooms_ready"].as_u64() == Some(0) {
        eprintln!(
            "parchis-loadgen: no room could be set up (is the server running at {}?); errors: {}",
            report["url"], report["errors"]
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

async fn run(args: Args, server: SocketAddr, host_header: String) -> Value {
    let (go_tx, go_rx) = watch::channel(false);
    let (end_tx, end_rx) = watch::channel(None);
    let pid = args.server_pid;
    let ctx = Arc::new(Ctx {
        args: args.clone(),
        server,
        host_header,
        stats: Stats::default(),
        next_source: AtomicU64::new(0),
        go: go_rx,
        end: end_rx,
    });
    let rss_before = pid.and_then(rss_kib);
    let setup_started = Instant::now();
    let sem = Arc::new(Semaphore::new(args.setup_concurrency.max(1)));
    let mut tasks = Vec::with_capacity(args.rooms);
    for room in 0..args.rooms {
        tasks.push(tokio::spawn(room_task(ctx.clone(), room, sem.clone())));
    }
    // Setup phase: wait until every room is ready or failed, or the timeout.
    let setup_deadline = setup_started + Duration::from_secs(args.setup_timeout_secs);
    loop {
        let ready = ctx.stats.rooms_ready.load(Ordering::Relaxed) as usize;
        let failed: u64 = ctx
            .stats
            .errors
            .lock()
            .map(|e| {
                e.iter()
                    .filter(|(k, _)| k.starts_with("setup_"))
                    .map(|(_, v)| *v)
                    .sum()
            })
            .unwrap_or(0);
        if ready + failed as usize >= args.rooms || Instant::now() >= setup_deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let setup_secs = setup_started.elapsed().as_secs_f64();
    let rooms_ready = ctx.stats.rooms_ready.load(Ordering::Relaxed);
    let idle_connections = ctx.stats.open.load(Ordering::Relaxed);
    // Let the server settle, then sample its memory with every connection idle.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_idle = pid.and_then(rss_kib);
    // Play phase: every game starts (within one think time), then the warm-up, then the
    // measured window. The window is fixed only once every game has started, so the burst
    // of `start`s (each a game created in the store) never falls into it.
    let go = Instant::now();
    let _ = go_tx.send(true);
    let starts_deadline = go + Duration::from_secs(args.setup_timeout_secs);
    let settled = || {
        ctx.stats.games_started.load(Ordering::Relaxed)
            + ctx.stats.starts_failed.load(Ordering::Relaxed)
    };
    // Gives up at the setup timeout (the report's `games_started` then falls short of
    // `rooms_ready`) and opens the window all the same.
    while settled() < rooms_ready && Instant::now() < starts_deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let starts_secs = go.elapsed().as_secs_f64();
    let games_started = ctx.stats.games_started.load(Ordering::Relaxed);
    let start = Instant::now() + Duration::from_secs(args.warmup_secs);
    let end = start + Duration::from_secs(args.duration_secs);
    let _ = end_tx.send(Some(end));
    sleep_until(start).await;
    let cpu_start = pid.and_then(cpu_secs);
    let own_cpu_start = cpu_secs(std::process::id());
    let mut rss_peak = rss_idle.unwrap_or(0);
    // Last samples taken while every client is still playing (just before `end`).
    let mut open_at_end = ctx.stats.open.load(Ordering::Relaxed);
    let mut open_min = open_at_end;
    let mut rss_playing = rss_idle;
    loop {
        let next = Instant::now() + Duration::from_millis(500);
        if next + Duration::from_millis(100) >= end {
            break;
        }
        sleep_until(next).await;
        open_at_end = ctx.stats.open.load(Ordering::Relaxed);
        open_min = open_min.min(open_at_end);
        if let Some(r) = pid.and_then(rss_kib) {
            rss_peak = rss_peak.max(r);
            rss_playing = Some(r);
        }
    }
    sleep_until(end).await;
    let own_cpu_end = cpu_secs(std::process::id());
    let cpu_end = pid.and_then(cpu_secs);
    let measured = (end - start).as_secs_f64();
    // Commands sent in the window are answered during the drain; count them after it.
    sleep_until(end + DRAIN).await;
    let actions = ctx.stats.actions.load(Ordering::Relaxed);
    let sent = ctx.stats.sent.load(Ordering::Relaxed);
    // Wind down: every client stops at `end`; give them a few seconds to close.
    let _ = timeout(Duration::from_secs(20), async {
        for t in tasks {
            let _ = t.await;
        }
    })
    .await;
    let secs = measured.max(0.001);
    let latency = ctx.stats.latency.lock().ok().and_then(|h| h.clone());
    let lat = |q: f64| {
        latency
            .as_ref()
            .map(|h| h.value_at_quantile(q) as f64 / 1000.0)
    };
    let errors = ctx
        .stats
        .errors
        .lock()
        .map(|e| e.clone())
        .unwrap_or_default();
    let cpu = match (cpu_start, cpu_end) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let per_conn = |rss: Option<u64>| match (rss, rss_before) {
        (Some(r), Some(b)) if idle_connections > 0 => {
            Some((r as f64 - b as f64) / idle_connections as f64)
        }
        _ => None,
    };
    json!({
        "url": args.url,
        "rooms": args.rooms,
        "rooms_ready": rooms_ready,
        "setup_secs": setup_secs,
        "games_started": games_started,
        "starts_secs": starts_secs,
        "think_ms": args.think_ms,
        "think_jitter": args.think_jitter,
        "warmup_secs": args.warmup_secs,
        "duration_secs": args.duration_secs,
        "measured_secs": measured,
        "source_addrs": args.source_addrs.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "actions": actions,
        "commands_sent": sent,
        "actions_per_sec": actions as f64 / secs,
        "games_finished": ctx.stats.games_finished.load(Ordering::Relaxed),
        "latency_ms": {
            "count": latency.as_ref().map(|h| h.len()).unwrap_or(0),
            "p50": lat(0.5), "p90": lat(0.9), "p99": lat(0.99), "p999": lat(0.999),
            "max": latency.as_ref().map(|h| h.max() as f64 / 1000.0),
        },
        "errors": errors,
        "connections": {
            "idle_before_play": idle_connections,
            "open_at_end_of_play": open_at_end,
            "min_during_play": open_min,
            "peak": ctx.stats.open_peak.load(Ordering::Relaxed),
        },
        // The load generator's own CPU during play: near 1.0 per core means it is the
        // bottleneck and the latencies measure it, not the server.
        "loadgen": {
            "cpu_secs_during_play": own_cpu_start.zip(own_cpu_end).map(|(a, b)| b - a),
            "cpu_share_during_play": own_cpu_start.zip(own_cpu_end).map(|(a, b)| (b - a) / secs),
        },
        "server": pid.map(|p| json!({
            "pid": p,
            "rss_kib_before": rss_before,
            "rss_kib_idle": rss_idle,
            "rss_kib_playing": rss_playing,
            "rss_kib_peak": rss_peak,
            "rss_kib_per_idle_connection": per_conn(rss_idle),
            "rss_kib_per_playing_connection": per_conn(rss_playing),
            "cpu_secs_during_play": cpu,
            "cpu_us_per_action": cpu.map(|c| if actions > 0 { c * 1e6 / actions as f64 } else { 0.0 }),
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_loopback_urls_only() {
        let (addr, host) = parse_url("http://127.0.0.3:18080/").unwrap();
        assert_eq!(addr, "127.0.0.3:18080".parse::<SocketAddr>().unwrap());
        assert_eq!(host, "127.0.0.3:18080");
        let (addr, _) = parse_url("http://localhost:8080").unwrap();
        assert_eq!(addr, "127.0.0.1:8080".parse::<SocketAddr>().unwrap());
        assert!(parse_url("http://10.0.0.1:8080")
            .unwrap_err()
            .contains("refusing"));
        assert!(parse_url("http://example.com:80").is_err());
        assert!(parse_url("https://127.0.0.1:8080").is_err());
        assert!(parse_url("http://127.0.0.1:99999").is_err());
    }

    #[test]
    fn rng_choices_stay_in_range_and_cover_it() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let mut seen = [0u32; 5];
        for _ in 0..1000 {
            seen[rng.below(5)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 100), "{seen:?}");
    }

    #[test]
    fn think_times_stay_in_the_jitter_band_with_the_requested_mean() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let think = Duration::from_millis(1000);
        let draws: Vec<Duration> = (0..10_000).map(|_| rng.think(think, 0.5)).collect();
        let (lo, hi) = (Duration::from_millis(500), Duration::from_millis(1500));
        assert!(draws.iter().all(|d| *d >= lo && *d <= hi));
        let mean = draws.iter().map(Duration::as_secs_f64).sum::<f64>() / draws.len() as f64;
        assert!((mean - 1.0).abs() < 0.02, "mean {mean}");
        assert!(draws.iter().any(|d| *d < Duration::from_millis(600)));
        assert!(draws.iter().any(|d| *d > Duration::from_millis(1400)));
        assert_eq!(rng.think(think, 0.0), think);
        assert!(parse_jitter("1.5").is_err());
        assert_eq!(parse_jitter("0.25"), Ok(0.25));
    }
}
