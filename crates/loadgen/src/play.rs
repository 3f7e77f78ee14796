//! One room's life in a load run: set up (create on its node, four clients join on
//! theirs), wait for the play phase, play games until the measured window is over.
//!
//! `play` is one client's state machine over a `select!` of its socket, the think-time
//! timer (and the creator's `start` attempts, `crate::start`) and the end of the window;
//! it is longer than 80 lines because its branches share that state (the pending command,
//! the one in flight, the last one sent, the start), and splitting them would pass all of
//! it around.

use crate::client::{next_json, next_text, seq_of, Client, Frame};
use crate::idle;
use crate::ctx::Ctx;
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

/// Plays one client until the game ends or the play phase is over.
///
/// `room`: its number in the run (the creator's start slot, `--start-rate`);
/// `first_game`: this room's first game, whose `start` counts towards the starts phase.
#[allow(clippy::too_many_arguments)]
async fn play(
    ctx: &Ctx,
    code: &str,
    mut c: Client,
    mut rng: Rng,
    hop: Hop,
    creator: bool,
    room: usize,
    first_game: bool,
) -> Ended {
    let think = Duration::from_millis(ctx.args.think_ms);
    let jitter = ctx.args.think_jitter;
    let mut req: u64 = FIRST_ACTION_REQ - 1;
    // The creator's start waits for its slot inside this loop, reading the socket (the
    // server's pings are answered only while it is read).
    let mut start = Start {
        at: creator.then(|| {
            let wait = start::delay(room, ctx.args.start_rate, think, jitter, rng.unit());
            Instant::now() + wait
        }),
        attempts: 0,
        settled: !creator,
    };
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
        // After `end` nothing is sent; the connection stays open until `end + DRAIN` so
        // the commands still in flight are answered under the same load, not during the
        // storm of 30,000 connections closing at once.
        let due = [pending.as_ref().map(|p| p.0), start.at]
            .into_iter()
            .flatten()
            .min();
        let wake = match due {
            _ if Instant::now() >= end => end + DRAIN,
            Some(at) => at.min(end),
            None => end,
        };
        tokio::select! {
            Ok(()) = end_rx.changed(), if end_known.is_none() => {}
            frame = next_text(&mut c.ws) => {
                let Some(text) = frame else {
                    ctx.stats.error("connection_lost");
                    break Ended::Failed;
                };
                let Some(mut v) = Frame::parse(text.as_str()) else {
                    ctx.stats.error("unreadable_frame");
                    continue;
                };
                let seq = v.seq;
                match v.kind.as_ref() {
                    "event" => {
                        c.seq = c.seq.max(seq);
                        if let Some((_, sent_seq, at)) = inflight {
                            if seq > sent_seq {
                                if ctx.measured(at) {
                                    ctx.stats.record(at.elapsed().as_micros() as u64, hop);
                                }
                                inflight = None;
                            }
                        }
                        if v.is_game_won() {
                            ctx.stats.games_finished.fetch_add(u64::from(creator), Ordering::Relaxed);
                            break 'outer Ended::GameOver;
                        }
                    }
                    "ok" => {
                        c.seq = c.seq.max(seq);
                        let req = v.req;
                        if req.is_some_and(|r| r >= FIRST_ACTION_REQ) {
                            if last.as_ref().is_some_and(|l| req == Some(l.req) && ctx.measured(l.at)) {
                                ctx.stats.actions.fetch_add(1, Ordering::Relaxed);
                            }
                        } else if req.is_some_and(start::is_start_req) && !start.settled {
                            start.settled = true;
                            if first_game {
                                ctx.stats.games_started.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    "error" => {
                        let code = v.code.as_deref().unwrap_or("unknown");
                        inflight = None;
                        let req = v.req;
                        if req.is_some_and(start::is_start_req) {
                            ctx.stats.error(&format!("start_{code}"));
                            if start.settled {
                                continue;
                            }
                            match start::after_refusal(code, start.attempts) {
                                AfterRefusal::Retry(wait) => start.at = Some(Instant::now() + wait),
                                AfterRefusal::Started => {
                                    start.settled = true;
                                    if first_game {
                                        ctx.stats.games_started.fetch_add(1, Ordering::Relaxed);
                                    }
                                }
                                AfterRefusal::GiveUp => {
                                    // This room will not play; the starts phase stops
                                    // waiting for it.
                                    start.settled = true;
                                    if first_game {
                                        ctx.stats.starts_failed.fetch_add(1, Ordering::Relaxed);
                                    }
                                }
                            }
                            continue;
                        }
                        ctx.stats.error(code);
                        if code == "rate_limited" {
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
                        let msg = if v.must_roll {
                            json!({"type": "roll", "room": code, "seq": seq})
                        } else if v.legal.is_empty() {
                            ctx.stats.error("empty_legal");
                            continue;
                        } else {
                            let a = v.legal.swap_remove(rng.below(v.legal.len()));
                            json!({"type": "play", "room": code, "seq": seq, "action": a})
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
                    if start.at.is_some() {
                        // A game of a room that came back after the window: not started.
                        break Ended::TimeUp;
                    }
                    continue;
                }
                if start.at.is_some_and(|at| now >= at) {
                    start.at = None;
                    start.attempts += 1;
                    let req = start::START_REQ + start.attempts - 1;
                    let msg = json!({"type": "start", "req": req, "room": code, "seq": c.seq});
                    if c.ws.send(Message::text(msg.to_string())).await.is_err() {
                        ctx.stats.error("send_failed");
                        break Ended::Failed;
                    }
                }
                if pending.as_ref().is_some_and(|p| now >= p.0) {
                    let Some((_, mut msg, seq)) = pending.take() else {
                        continue;
                    };
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
    if !start.settled && first_game {
        // The socket went (or the window ended) before the start was answered: the
        // starts phase must not wait for this room until its timeout.
        ctx.stats.error("start_unanswered");
        ctx.stats.starts_failed.fetch_add(1, Ordering::Relaxed);
    }
    let _ = c.ws.close(None).await;
    ctx.net.closed();
    result
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
