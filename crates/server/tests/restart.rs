//! End-to-end restart test: the real `parchis-server` binary on a SQLite database (and on
//! Postgres when `DATABASE_URL` is set) is killed with SIGKILL mid-game and started again
//! on the same database; the clients resume with their tokens and finish the game.
//!
//! Why one file over 600 lines: its restart scenarios (SQLite and PostgreSQL, a deadline
//! missed while down, a bot that replaced a person) share the checks here (the stored
//! log, the fair dice, the replay, the games API, the frames sent again on resume).

mod binary;
mod common;

use binary::Proc;
use common::{client, http_at, play_to_end, Client};
use parchis_engine::{fair_dice, Colour, Game, GameRecord, RuleSet};
use parchis_protocol::RoomEvent;
use parchis_room_core::{replay, LoggedEvent};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// Starts the binary (fixed dice) and waits until `/healthz` answers.
async fn spawn(data_dir: &Path, database_url: Option<&str>) -> Proc {
    spawn_with(data_dir, database_url, &[]).await
}

/// As [`spawn`], with more command-line arguments.
async fn spawn_with(data_dir: &Path, database_url: Option<&str>, args: &[&str]) -> Proc {
    let args: Vec<&str> = ["--dice-seed", "7"]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    binary::spawn(data_dir, database_url, &args, &[]).await
}

/// Both clients play legal actions until an event with seq ≥ `target` is seen. No command
/// is in flight when this returns: commands answer `your_turn`, which follows the events.
async fn play_until(clients: Vec<Client>, target: u64) -> Vec<Client> {
    let mut tasks = Vec::new();
    for mut c in clients {
        tasks.push(tokio::spawn(async move {
            for _ in 0..10_000 {
                let v = c.next().await.expect("socket closed mid-game");
                assert_ne!(v["type"], "error", "unexpected error: {v}");
                assert!(
                    !Client::is_game_event(&v, "game_won"),
                    "game ended too early"
                );
                if v["type"] == "event" && v["seq"].as_u64().unwrap_or(0) >= target {
                    return c;
                }
                if v["type"] == "your_turn" && v["seq"].as_u64() == Some(c.seq) {
                    if v["must_roll"] == true {
                        c.cmd(json!({"type": "roll"})).await;
                    } else {
                        let action = v["legal"][0].clone();
                        c.cmd(json!({"type": "play", "action": action})).await;
                    }
                }
            }
            panic!("no event with seq {target} within 10000 messages");
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        let c = tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("part of the game did not finish in 60 s")
            .expect("player task panicked");
        out.push(c);
    }
    out
}

/// Keeps each event once, by seq, checking duplicates are identical.
fn by_seq(events: &[Value]) -> std::collections::BTreeMap<u64, Value> {
    let mut map = std::collections::BTreeMap::new();
    for e in events {
        let seq = e["seq"].as_u64().expect("seq");
        if let Some(old) = map.insert(seq, e["event"].clone()) {
            assert_eq!(
                old, e["event"],
                "seq {seq} delivered twice with different events"
            );
        }
    }
    map
}

/// A room created with `settings`, Ana (yellow) and Bruno (red) seated, both at seq 2
/// (the two joins): its code and their clients.
async fn seated_pair(addr: SocketAddr, settings: Value) -> (String, Client, Client) {
    let (status, body) = http_at(addr, "POST", "/api/rooms", Some(&settings.to_string())).await;
    assert_eq!(status, 201, "{body}");
    let code = body["code"].as_str().expect("code").to_owned();
    let mut a = client(addr).await;
    let mut b = client(addr).await;
    a.join(&code, "Ana", Some("yellow")).await;
    b.join(&code, "Bruno", Some("red")).await;
    a.until("bruno's join", |v| v["seq"].as_u64() == Some(2))
        .await;
    (code, a, b)
}

/// Creates a 2-seat room with `settings`, seats Ana (yellow) and Bruno (red), starts the
/// game and returns the room code, the `game_started` event and both clients.
async fn start_game(addr: SocketAddr, settings: Value) -> (String, Value, Client, Client) {
    let (code, mut a, b) = seated_pair(addr, settings).await;
    a.ok(json!({"type": "start"})).await;
    let started = a
        .events
        .iter()
        .find(|e| e["event"]["type"] == "game_started")
        .cloned()
        .expect("game_started");
    (code, started, a, b)
}

/// The `deadline_ms` of every stored `turn` event (`GET /api/games/{id}` events), in order.
fn turn_deadlines(events: &[Value]) -> Vec<i64> {
    events
        .iter()
        .filter(|e| e["event"]["type"] == "turn")
        .filter_map(|e| e["event"]["deadline_ms"].as_i64())
        .collect()
}

/// What was stored of the game when the server was killed.
struct BeforeKill {
    code: String,
    game_id: String,
    /// The seq of `game_started`.
    first_seq: u64,
    stored: Vec<Value>,
    /// The seq of the last stored event.
    last_seq: u64,
    clients: Vec<Client>,
}

/// Starts a game, plays 40 events of it, checks that what the clients saw was stored
/// first and that the games API shows the running clock, then SIGKILLs the server.
async fn play_then_kill(server: &mut Proc, events: u64) -> BeforeKill {
    let (code, started, a, b) = start_game(
        server.addr,
        json!({"seats": 2, "turn_clock_secs": 2, "disconnect_grace_secs": 120,
               "timeouts_to_abandon": 10, "public": false}),
    )
    .await;
    let game_id = started["event"]["game_id"].as_str().expect("id").to_owned();
    let first_seq = started["seq"].as_u64().expect("seq");
    assert_eq!(first_seq, 3, "two lobby events, then the game");

    // Play part of the game, then SIGKILL.
    let target = first_seq + events;
    let clients = play_until(vec![a, b], target).await;
    let (status, before) =
        http_at(server.addr, "GET", &format!("/api/games/{game_id}"), None).await;
    assert_eq!(status, 200, "{before}");
    let stored_before = before["events"].as_array().cloned().expect("events");
    let last_before = stored_before
        .last()
        .and_then(|e| e["seq"].as_u64())
        .expect("a stored event");
    // The running game's clock deadline is the one its last `turn` event announced, many
    // throws after the start (the store's column is written at the start only).
    let deadlines = turn_deadlines(&stored_before);
    let (first_turn_deadline, last_turn_deadline) = (
        *deadlines.first().expect("the first turn event"),
        *deadlines.last().expect("a turn event"),
    );
    assert!(
        last_turn_deadline > first_turn_deadline,
        "several throws were played"
    );
    assert_eq!(
        before["deadline_ms"].as_i64(),
        Some(last_turn_deadline),
        "{before}"
    );
    let (_, listed) = http_at(server.addr, "GET", &format!("/api/games?room={code}"), None).await;
    assert_eq!(
        listed["games"][0]["deadline_ms"].as_i64(),
        Some(last_turn_deadline)
    );
    let seen_before = clients.iter().map(|c| c.seq).max().unwrap_or(0);
    // A batch (roll + turn…) may run past the target: the clients stopped inside it.
    assert!(
        last_before >= seen_before && last_before < seen_before + 8,
        "every broadcast event was stored first: stored {last_before}, seen {seen_before}"
    );
    server.kill();
    BeforeKill {
        code,
        game_id,
        first_seq,
        stored: stored_before,
        last_seq: last_before,
        clients,
    }
}

/// How many events before its last one each client asks for again when it resumes
/// after the restart: frames the restarted room sends from the history it rebuilt from
/// the log, compared with the ones the killed server sent.
const RESENT: u64 = 12;

/// The `clients` back on the server at `addr` with their tokens, each keeping what it saw.
/// Each resumes [`RESENT`] events behind what it saw: those frames, rebuilt from the
/// stored log, must equal the live ones whole (`position` included), and some carry one.
async fn resume_all(addr: SocketAddr, code: &str, clients: Vec<Client>) -> Vec<Client> {
    let mut resumed = Vec::new();
    for old in clients {
        let mut c = client(addr).await;
        let token = old.token.expect("token");
        let last_seq = old.seq - RESENT;
        let w = c.resume(code, &token, last_seq).await;
        assert_eq!(w["colour"], old.colour.clone().expect("colour").as_str());
        assert!(
            w["seq"].as_u64() >= Some(old.seq),
            "seq went backwards: {w}"
        );
        assert!(w.get("snapshot").is_none_or(Value::is_null), "{w}");
        while !c.events.iter().any(|e| e["seq"].as_u64() >= Some(old.seq)) {
            c.next().await;
        }
        let live: Vec<&Value> = old
            .events
            .iter()
            .filter(|e| e["seq"].as_u64() > Some(last_seq))
            .collect();
        let again: Vec<&Value> = c
            .events
            .iter()
            .filter(|e| e["seq"].as_u64() <= Some(old.seq))
            .collect();
        assert_eq!(again, live, "frames sent again after the restart");
        assert!(
            again.iter().any(|f| f.get("position").is_some()),
            "some frames sent again carry the position: {again:?}"
        );
        let mut events = old.events;
        events.extend(
            c.events
                .into_iter()
                .filter(|e| e["seq"].as_u64() > Some(old.seq)),
        );
        c.events = events;
        resumed.push(c);
    }
    resumed
}

/// The stored log of the finished game (`detail`, from the games API): gap-free, the
/// same events every client saw, continuing the seq, with a timeout after the restart.
fn check_stored_log(detail: &Value, before: &BeforeKill, clients: &[Client], winner: &str) {
    assert_eq!(detail["room"], before.code.as_str());
    assert_eq!(detail["preset"], "online");
    assert_eq!(detail["result"]["winner"], winner);
    assert_eq!(detail["reason"], "completed");
    assert!(
        detail["deadline_ms"].is_null(),
        "no clock after the end: {detail}"
    );
    let names: Vec<&str> = detail["players"]
        .as_array()
        .expect("players")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["Ana", "Bruno"]);
    let stored = detail["events"].as_array().expect("events");
    let first_seq = before.first_seq;
    let seqs: Vec<u64> = stored.iter().filter_map(|e| e["seq"].as_u64()).collect();
    let expected: Vec<u64> = (first_seq..first_seq + stored.len() as u64).collect();
    assert_eq!(seqs, expected, "stored seqs are gap-free from game_started");
    assert_eq!(
        &stored[..before.stored.len()],
        &before.stored[..],
        "nothing lost"
    );
    for c in clients {
        let seen = by_seq(&c.events);
        let game_seen: Vec<(u64, Value)> =
            seen.into_iter().filter(|(s, _)| *s >= first_seq).collect();
        let stored_pairs: Vec<(u64, Value)> = stored
            .iter()
            .map(|e| (e["seq"].as_u64().unwrap_or(0), e["event"].clone()))
            .collect();
        assert_eq!(
            game_seen, stored_pairs,
            "client saw exactly the stored events"
        );
    }
    let timed_out = stored
        .iter()
        .filter(|e| e["seq"].as_u64() > Some(before.last_seq))
        .any(|e| e["event"]["event"]["type"] == "timed_out");
    assert!(timed_out, "the clock ran after the restart");
}

/// The fair dice: every throw, before and after the SIGKILL, is the one its number
/// gives with the game's seeds (docs/FAIR_DICE.md), numbered 0, 1, 2… without a gap.
fn check_fair_dice(detail: &Value, stored_before: &[Value]) {
    let stored = detail["events"].as_array().expect("events");
    let dice = &detail["dice"];
    assert_eq!(dice["mode"], "test", "a --dice-seed game is marked");
    let throws: Vec<fair_dice::RecordedThrow> = stored
        .iter()
        .filter(|e| e["event"]["type"] == "game" && e["event"]["event"]["type"] == "dice_rolled")
        .map(|e| fair_dice::RecordedThrow {
            number: e["event"]["throw"].as_u64().expect("throw number"),
            colour: e["event"]["event"]["colour"]
                .as_str()
                .and_then(|c| c.parse().ok())
                .expect("colour"),
            dice: serde_json::from_value(e["event"]["event"]["dice"].clone()).expect("dice"),
        })
        .collect();
    let before_restart = stored_before
        .iter()
        .filter(|e| e["event"]["type"] == "game" && e["event"]["event"]["type"] == "dice_rolled")
        .count();
    assert!(
        before_restart > 5 && throws.len() > before_restart + 5,
        "throws before ({before_restart}) and after the restart ({})",
        throws.len()
    );
    let claim = fair_dice::Claim {
        scheme: dice["scheme"].as_str().expect("scheme").to_owned(),
        commitment: dice["commitment"].as_str().expect("commitment").to_owned(),
        server_seed: dice["server_seed"].as_str().map(str::to_owned),
        client_seeds: vec![
            (Colour::Yellow, "yellow".to_owned()),
            (Colour::Red, "red".to_owned()),
        ],
        per_throw: 2,
        throws: throws.clone(),
    };
    assert_eq!(fair_dice::verify(&claim), Ok(throws.len()));
}

/// Replaying the `stored` events through the engine (the server's one replay function)
/// reproduces the game won by `winner`; returns the final game and its record.
fn check_replay(stored: &[Value], winner: &str) -> (Game, GameRecord) {
    let log: Vec<LoggedEvent> = stored
        .iter()
        .map(|e| LoggedEvent {
            seq: e["seq"].as_u64().expect("seq"),
            at_ms: e["at_ms"].as_i64().expect("at_ms"),
            event: serde_json::from_value::<RoomEvent>(e["event"].clone()).expect("RoomEvent"),
            // The games API does not show the stored position marks: no positions rebuilt.
            positioned: false,
        })
        .collect();
    let replayed = replay(&log).expect("stored game replays");
    let (_, seats, _): (RuleSet, Vec<Colour>, Colour) = replayed.start.clone();
    assert_eq!(seats, [Colour::Yellow, Colour::Red]);
    let engine: Vec<_> = log
        .iter()
        .filter_map(|e| match &e.event {
            RoomEvent::Game { event, .. } => Some(*event),
            _ => None,
        })
        .collect();
    let record = replayed.record.clone();
    let (_, again) = record.replay().expect("engine replays the record");
    assert_eq!(again, engine, "replay gives the stored engine events");
    let game = replayed.game;
    let outcome = game.outcome().expect("finished");
    assert_eq!(outcome.winner.name(), winner);
    (game, record)
}

/// The room's games, the export of `game` (whose replayed record is `record`), and the
/// games API's errors.
async fn check_games_api(
    addr: SocketAddr,
    code: &str,
    game_id: &str,
    game: &Game,
    record: &GameRecord,
) {
    let (status, list) = http_at(addr, "GET", &format!("/api/games?room={code}"), None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["games"].as_array().map(Vec::len), Some(1));
    assert_eq!(list["games"][0]["id"], game_id);
    let (status, export) =
        http_at(addr, "GET", &format!("/api/games/{game_id}/export"), None).await;
    assert_eq!(status, 200);
    let text = export.as_str().expect("text export").to_owned();
    assert!(text.contains(&format!("[Room \"{code}\"]")), "{text}");
    assert!(text.contains(&format!("[Game \"{game_id}\"]")), "{text}");
    assert!(
        text.contains("[Yellow \"Ana\"]") && text.contains("[Red \"Bruno\"]"),
        "{text}"
    );
    let result = parchis_engine::result_tag(game).expect("result");
    assert!(text.contains(&format!("[Result \"{result}\"]")), "{text}");
    let parsed: GameRecord = text.parse().expect("the export parses");
    assert_eq!(parsed.actions, record.actions);
    let (status, err) = http_at(
        addr,
        "GET",
        "/api/games/00000000-0000-0000-0000-000000000000",
        None,
    )
    .await;
    assert_eq!(status, 404);
    assert_eq!(err["code"], "unknown_game");
    let (status, err) = http_at(addr, "GET", "/api/games/not-a-uuid", None).await;
    assert_eq!(status, 400);
    assert_eq!(err["code"], "bad_request");
}

/// Plays `events` events of a game, SIGKILLs the server, restarts it, and checks the
/// game goes on and finishes with its log, dice, replay and games API whole; at least
/// `min_throws` throws were made before the kill.
async fn restart_scenario(database_url: Option<&str>, events: u64, min_throws: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = spawn(dir.path(), database_url).await;
    let mut before = play_then_kill(&mut server, events).await;
    let throws_before = before
        .stored
        .iter()
        .filter(|e| e["event"]["type"] == "game" && e["event"]["event"]["type"] == "dice_rolled")
        .count();
    assert!(
        throws_before >= min_throws,
        "{throws_before} throws before the kill"
    );

    // Start again on the same database; resume with the old tokens.
    let mut server = spawn(dir.path(), database_url).await;
    let clients = std::mem::take(&mut before.clients);
    let mut resumed = resume_all(server.addr, &before.code, clients).await;
    // Nobody acts: the clock runs again and times the player to act out.
    for c in &mut resumed {
        let t = c
            .until("timed_out", |v| Client::is_game_event(v, "timed_out"))
            .await;
        assert!(t["seq"].as_u64() > Some(before.last_seq), "{t}");
    }
    let (won, clients) = play_to_end(resumed).await;
    let winner = won["winner"].as_str().expect("winner").to_owned();

    let game_id = &before.game_id;
    let (status, detail) =
        http_at(server.addr, "GET", &format!("/api/games/{game_id}"), None).await;
    assert_eq!(status, 200, "{detail}");
    check_stored_log(&detail, &before, &clients, &winner);
    check_fair_dice(&detail, &before.stored);
    let (game, record) = check_replay(detail["events"].as_array().expect("events"), &winner);
    check_games_api(server.addr, &before.code, game_id, &game, &record).await;
    server.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_game_then_resume_and_finish_on_sqlite() {
    restart_scenario(None, 40, 0).await;
}

/// Issue 28: killed after more than 64 throws, the game's packed log has a snapshot, and
/// the restart restores from it (replaying only the throws after it): the game goes on
/// with the right dice and clock, the frames resent after the restart equal the live ones,
/// and the whole log (its snapshot checked against the replay) reads back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_after_a_snapshot_then_resume_and_finish_on_sqlite() {
    restart_scenario(None, 420, 70).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_game_then_resume_and_finish_on_postgres() {
    if let Some(url) = common::database_url("sigkill_mid_game_then_resume_and_finish_on_postgres") {
        restart_scenario(Some(&url), 40, 0).await;
    }
}

/// A deadline that passed while the server was down is not held against the player to
/// act: after the restart the throw gets a fresh full clock, announced by a stored
/// `turn` event (proto/README.md, "Turn clock across a restart").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_missed_while_down_gives_a_fresh_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = spawn(dir.path(), None).await;
    let (_code, started, a, b) = start_game(
        server.addr,
        json!({"seats": 2, "turn_clock_secs": 2, "public": false}),
    )
    .await;
    let game_id = started["event"]["game_id"].as_str().expect("id").to_owned();
    let clients = play_until(vec![a, b], 12).await;
    drop(clients);

    let (_, before) = http_at(server.addr, "GET", &format!("/api/games/{game_id}"), None).await;
    let stored_before = before["events"].as_array().cloned().expect("events");
    let last_turn_before = *turn_deadlines(&stored_before)
        .last()
        .expect("a stored turn event");
    let mut server = server;
    server.kill();
    // Stay down past the 2 s deadline.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let restarted_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    assert!(
        restarted_at > last_turn_before,
        "the old deadline has passed"
    );

    let mut server = spawn(dir.path(), None).await;
    let (status, after) = http_at(server.addr, "GET", &format!("/api/games/{game_id}"), None).await;
    assert_eq!(status, 200, "{after}");
    let stored_after = after["events"].as_array().cloned().expect("events");
    assert_eq!(
        &stored_after[..stored_before.len()],
        &stored_before[..],
        "what was stored before the kill is unchanged"
    );
    let new: Vec<&Value> = stored_after[stored_before.len()..].iter().collect();
    let fresh = new
        .iter()
        .find(|e| e["event"]["type"] == "turn")
        .unwrap_or_else(|| panic!("a fresh turn event after the restart: {new:?}"));
    let fresh_deadline = fresh["event"]["deadline_ms"].as_i64().expect("deadline");
    assert!(
        fresh_deadline >= restarted_at + 1_500 && fresh_deadline <= restarted_at + 30_000,
        "a full 2 s clock from the restart: deadline {fresh_deadline}, restarted {restarted_at}"
    );
    assert_eq!(
        fresh["event"]["colour"],
        stored_before
            .iter()
            .rev()
            .find(|e| e["event"]["type"] == "turn")
            .map(|e| e["event"]["colour"].clone())
            .expect("colour"),
        "the same player keeps the throw"
    );
    server.kill();
}

/// A person whose seat a bot took over (`on_abandon: bot`), in a game the bots finished
/// after a SIGKILL and a restart, still learns the result once the room is gone (the
/// stored seat keeps the person's token hash), while the token never resumes the bot's
/// seat as long as the room lives, restored or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_replaced_by_a_bot_gets_the_result_after_a_restart_and_the_room_is_gone() {
    // Long as one story (takeover, SIGKILL, restart, the bots finish, the room goes),
    // each step waiting on the one before.
    let dir = tempfile::tempdir().expect("tempdir");
    // Unwatched bots wait 1 s per action here: the game is far from over at the kill.
    let server = spawn(dir.path(), None).await;
    let settings = json!({"seats": 4, "bots": "greedy", "bot_think_ms": 1,
        "on_abandon": "bot", "disconnect_grace_secs": 1, "turn_clock_secs": 600});
    let (status, body) = http_at(
        server.addr,
        "POST",
        "/api/rooms",
        Some(&settings.to_string()),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let code = body["code"].as_str().expect("code").to_owned();
    let mut ana = client(server.addr).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    ana.ok(json!({"type": "start"})).await;
    let is_start = |v: &Value| v["type"] == "event" && v["event"]["type"] == "game_started";
    let started = match ana.events.iter().find(|v| is_start(v)).cloned() {
        Some(v) => v,
        None => ana.until("game_started", is_start).await,
    };
    let game_id = started["event"]["game_id"].as_str().expect("id").to_owned();
    let token = ana.token.clone().expect("token");
    drop(ana);

    // Her grace runs out: a bot takes her seat, and the store says so.
    let path = format!("/api/games/{game_id}");
    let mut taken = false;
    for _ in 0..200 {
        let (_, game) = http_at(server.addr, "GET", &path, None).await;
        let yellow = game["players"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["colour"] == "yellow").cloned());
        if yellow.is_some_and(|y| !y["bot"].is_null()) {
            assert!(
                game["finished_at_ms"].is_null(),
                "the game ended too early: {game}"
            );
            taken = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(taken, "no bot took over yellow's seat within 10 s");
    let mut server = server;
    server.kill();

    // Back up with bots at full speed; the restored room still refuses her token.
    let mut server = spawn_with(
        dir.path(),
        None,
        &[
            "--min-unwatched-bot-think-ms",
            "0",
            "--lookups-per-minute",
            "100000",
        ],
    )
    .await;
    let mut me = client(server.addr).await;
    let resume = json!({"type": "resume", "room": code, "token": token, "last_seq": 3});
    let cmd = me.cmd(resume.clone()).await;
    let answer = me.reply(cmd).await;
    assert_eq!(
        answer["type"], "error",
        "her token resumed the bot's seat: {answer}"
    );
    assert_ne!(
        answer["code"], "unknown_room",
        "the room was not restored: {answer}"
    );
    let mut gone = false;
    for _ in 0..1200 {
        let (status, _) = http_at(server.addr, "GET", &format!("/api/rooms/{code}"), None).await;
        if status == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        gone,
        "the bot game did not finish (and its room go) within 120 s"
    );
    let (_, game) = http_at(server.addr, "GET", &path, None).await;
    assert!(!game["finished_at_ms"].is_null(), "{game}");

    let mut me = client(server.addr).await;
    let e = me.refused(resume, "game_over").await;
    let message = e["message"].as_str().unwrap_or_default();
    assert!(message.contains("you played yellow"), "{e}");
    assert!(message.contains(&format!("/api/games/{game_id}")), "{e}");
    assert!(message.contains("winner"), "{e}");
    server.kill();
}

/// A lobby rebuilt after a restart starts its event seq again at 0 (lobby events are not
/// stored), so a client's `last_seq` from before names other events once the room has
/// moved on. Bruno saw the two joins (seq 2); after the restart Ana resumes and starts the
/// game (its `game_started` and `turn` are seqs 1 and 2 now); Bruno's resume with
/// `last_seq` 2 must bring him the game (a snapshot), not "nothing missed".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_from_before_a_lobby_was_rebuilt_gets_a_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = spawn(dir.path(), None).await;
    let (code, ana, bruno) = seated_pair(
        server.addr,
        json!({"seats": 2, "turn_clock_secs": 600, "public": false}),
    )
    .await;
    assert_eq!((ana.seq, bruno.seq), (2, 2));
    let (ana_token, bruno_token) = (
        ana.token.clone().expect("token"),
        bruno.token.clone().expect("token"),
    );
    server.kill();
    drop((ana, bruno));

    let mut server = spawn(dir.path(), None).await;
    let mut ana = client(server.addr).await;
    let welcome = ana.resume(&code, &ana_token, 2).await;
    assert!(welcome["snapshot"].is_object(), "{welcome}");
    ana.ok(json!({"type": "start"})).await;
    let view = loop {
        let (_, view) = http_at(server.addr, "GET", &format!("/api/rooms/{code}"), None).await;
        if view["seq"].as_u64() >= Some(2) {
            break view;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(view["status"], "playing", "{view}");
    let mut bruno = client(server.addr).await;
    let welcome = bruno.resume(&code, &bruno_token, 2).await;
    assert_eq!(welcome["snapshot"]["status"], "playing", "{welcome}");
    assert_eq!(welcome["seq"], view["seq"], "{welcome}");
    server.kill();
}

/// A rated 2-seat `online` room with the accounts of `tokens` seated (yellow, red), both
/// clients at seq 2: its code and the clients.
async fn rated_seated(addr: SocketAddr, tokens: [&str; 2]) -> (String, Vec<Client>) {
    let settings = json!({"preset": "online", "seats": 2, "rated": true});
    let (status, body) = http_at(addr, "POST", "/api/rooms", Some(&settings.to_string())).await;
    assert_eq!(status, 201, "{body}");
    let code = body["code"].as_str().expect("code").to_owned();
    let mut clients = Vec::new();
    for (token, colour) in tokens.into_iter().zip(["yellow", "red"]) {
        let mut c = common::logged_in(addr, token).await;
        c.join(&code, "ignored", Some(colour)).await;
        clients.push(c);
    }
    clients[0]
        .until("red's join", |v| v["seq"].as_u64() == Some(2))
        .await;
    (code, clients)
}

/// Issue 26: a room restored from the store reads its account seats' ratings again. After
/// a rated game Ana and Luis have ratings; they sit in a second rated room, the server is
/// killed and started again on the same SQLite file, and the restored room's seats show
/// the profiles' display ratings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_room_shows_its_account_seats_ratings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut server = spawn(dir.path(), None).await;
    let ana = common::sign_up_at(server.addr, "Ana").await;
    let luis = common::sign_up_at(server.addr, "Luis").await;
    let (_, mut clients) = rated_seated(server.addr, [&ana, &luis]).await;
    clients[0].ok(json!({"type": "start"})).await;
    let (won, _clients) = play_to_end(clients).await;
    assert_eq!(won["reason"], "goal", "{won}");
    let (code, clients) = rated_seated(server.addr, [&ana, &luis]).await;
    server.kill();
    drop(clients);

    let server = spawn(dir.path(), None).await;
    let mut expected = Vec::new();
    for name in ["Ana", "Luis"] {
        let (status, profile) =
            http_at(server.addr, "GET", &format!("/api/players/{name}"), None).await;
        assert_eq!(status, 200, "{profile}");
        let display = profile["ratings"]["online"]["display"].clone();
        assert!(display.is_i64(), "{profile}");
        expected.push(display);
    }
    assert_ne!(expected[0], expected[1], "winner and loser differ");
    let (status, view) = http_at(server.addr, "GET", &format!("/api/rooms/{code}"), None).await;
    assert_eq!(status, 200, "{view}");
    let seats = view["seats"].as_array().expect("seats");
    let shown: Vec<(Value, Value)> = seats
        .iter()
        .map(|s| (s["name"].clone(), s["rating"].clone()))
        .collect();
    assert_eq!(
        shown,
        [
            (json!("Ana"), expected[0].clone()),
            (json!("Luis"), expected[1].clone())
        ],
        "{view}"
    );
    drop(server);
}
