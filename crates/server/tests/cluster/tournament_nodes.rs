//! Every node serves every tournament (issue 27, docs/TOURNAMENTS.md "Cluster"): a
//! tournament directed by node `a` is run entirely from node `b` (registration with the
//! partners' confirmations, a referee named, registration closed, the referee's pause and
//! award: each command forwarded to `a`'s director over NATS, with the caller's identity,
//! and answered with what it answered); `b`'s live feed (SSE) relays `a`'s views; and a
//! match room running on one node is paused and resumed by a director on another.

use crate::common::tour::{matches, now_ms, Sse};
use crate::common::{call, sign_up_at};
use crate::harness::{Cluster, Opts};
use crate::tournament::{lease, until};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

/// `POST`s `body` to `path` on `addr` with `token`; asserts `want`; the answer.
async fn post(addr: SocketAddr, path: &str, token: &str, body: Value, want: u16) -> Value {
    let body = if body.is_null() {
        String::new()
    } else {
        body.to_string()
    };
    let (status, v) = call(addr, "POST", path, Some(token), &body).await;
    assert_eq!(status, want, "POST {path}: {v}");
    v
}

/// The id of the entrant with a player called `name`.
fn entrant_of(v: &Value, name: &str) -> u64 {
    v["entrants"]
        .as_array()
        .and_then(|es| {
            es.iter().find(|e| {
                e["players"]
                    .as_array()
                    .is_some_and(|ps| ps.iter().any(|p| p["name"] == name))
            })
        })
        .and_then(|e| e["id"].as_u64())
        .unwrap_or_else(|| panic!("no entrant of {name}: {v:#}"))
}

/// The kinds of the referee's actions listed in the view.
fn actions(v: &Value) -> Vec<String> {
    v["referee_actions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x["action"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_directed_by_a_is_run_and_watched_from_b() {
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start("tournament_any_node", opts).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));
    let org = sign_up_at(a, "Organiser").await;
    let settings = json!({
        "name": "Anywhere",
        "preset": "pairs",
        "registration_deadline_ms": now_ms() + 3_600_000,
        "spectator_delay_throws": 0,
    });
    let created = post(a, "/api/tournaments", &org, settings, 201).await;
    let id = created["id"].as_str().expect("id").to_owned();
    assert_eq!(lease(&cluster, &id).await, Some(("a".to_owned(), 1)));
    let base = format!("/api/tournaments/{id}");

    // Node b's live feed: the stored view at once.
    let mut feed = Sse::open(b, &format!("{base}/events")).await;
    let first = feed.until("the view at once", |_| true).await;
    assert!(feed.raw.starts_with("HTTP/1.1 200"), "{}", feed.raw);
    assert_eq!(first["status"], "registering", "{first:#}");

    // Everyone else only ever talks to node b.
    let mut tokens = std::collections::HashMap::new();
    for name in ["Ana", "Bea", "Cris", "Dani", "Rita"] {
        tokens.insert(name, sign_up_at(b, name).await);
    }
    let entries = format!("{base}/entries");
    for (registrant, partner) in [("Ana", "Bea"), ("Cris", "Dani")] {
        let v = post(
            b,
            &entries,
            &tokens[registrant],
            json!({"partner": partner}),
            201,
        )
        .await;
        let entry = entrant_of(&v, registrant);
        let team = v["entrants"]
            .as_array()
            .and_then(|es| es.iter().find(|e| e["id"] == entry))
            .expect("the team");
        assert_eq!(team["status"], "pending_partner", "{v:#}");
        let v = post(
            b,
            &format!("{entries}/{entry}/confirm"),
            &tokens[partner],
            Value::Null,
            200,
        )
        .await;
        let team = v["entrants"]
            .as_array()
            .and_then(|es| es.iter().find(|e| e["id"] == entry))
            .expect("the team");
        assert_ne!(team["status"], "pending_partner", "confirmed: {v:#}");
    }
    // The director's refusals come back as they are: Ana is registered already, and only
    // the organiser closes.
    let e = post(b, &entries, &tokens["Ana"], json!({"partner": "Rita"}), 409).await;
    assert_eq!(e["code"], "tournament_refused", "{e}");
    let e = post(
        b,
        &format!("{base}/close"),
        &tokens["Ana"],
        Value::Null,
        403,
    )
    .await;
    assert_eq!(e["code"], "not_referee", "{e}");

    let v = post(
        b,
        &format!("{base}/referees"),
        &org,
        json!({"username": "Rita"}),
        200,
    )
    .await;
    assert_eq!(v["referees"][0]["name"], "Rita", "{v:#}");
    let drawn = post(b, &format!("{base}/close"), &org, Value::Null, 200).await;
    assert_eq!(drawn["status"], "running", "{drawn:#}");
    let ms = matches(&drawn);
    assert_eq!(ms.len(), 1, "two pairs, one match: {drawn:#}");
    // Nobody sits: the match waits for its players.
    let m = until(b, &id, "the match's room open", |v| {
        matches(v)[0]["status"] == "open"
    })
    .await;
    let m = matches(&m)[0].clone();
    let referee = format!("{base}/matches/{}/referee", m["id"]);

    // The named referee (its identity carried to a) pauses, then awards.
    let v = post(
        b,
        &referee,
        &tokens["Rita"],
        json!({"action": "pause"}),
        200,
    )
    .await;
    assert_eq!(matches(&v)[0]["paused"], true, "{v:#}");
    let e = post(b, &referee, &tokens["Ana"], json!({"action": "pause"}), 403).await;
    assert_eq!(e["code"], "not_referee", "{e}");
    let winner = entrant_of(&v, "Cris");
    let award = json!({"action": "award", "winner": winner, "reason": "no-show agreed"});
    let v = post(b, &referee, &tokens["Rita"], award, 200).await;
    assert_eq!(
        (v["status"].as_str(), v["champion"].as_u64()),
        (Some("finished"), Some(winner)),
        "{v:#}"
    );

    // Both nodes show the same stored tournament.
    for addr in [a, b] {
        let (status, v) = call(addr, "GET", &base, None, "").await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["champion"].as_u64(), Some(winner), "{v:#}");
        assert_eq!(matches(&v)[0]["status"], "awarded", "{v:#}");
        assert_eq!(actions(&v), ["pause", "award"], "{v:#}");
        assert_eq!(v["entrants"].as_array().map(Vec::len), Some(2), "{v:#}");
        assert_eq!(v["referees"][0]["name"], "Rita", "{v:#}");
    }
    // b's feed relayed a's views: the draw, then the award.
    let running = feed
        .until("the draw on b's feed", |v| v["status"] == "running")
        .await;
    assert_eq!(matches(&running).len(), 1, "{running:#}");
    let done = feed
        .until("the award on b's feed", |v| v["status"] == "finished")
        .await;
    assert_eq!(done["champion"].as_u64(), Some(winner), "{done:#}");
    assert_eq!(actions(&done), ["pause", "award"], "{done:#}");
    // Nothing moved: a directed it throughout.
    assert_eq!(lease(&cluster, &id).await, Some(("a".to_owned(), 1)));
}

/// The event types of stored game `game`, read on `addr`.
async fn event_types(addr: SocketAddr, game: &str) -> Vec<String> {
    let (status, g) = call(addr, "GET", &format!("/api/games/{game}"), None, "").await;
    assert_eq!(status, 200, "{g}");
    g["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(|e| e["event"]["type"].as_str().map(str::to_owned))
        .collect()
}

/// The node holding room `room`'s lease.
async fn room_owner(cluster: &Cluster, room: &str) -> String {
    sqlx::query_scalar::<_, String>("SELECT owner FROM room_leases WHERE room_code = $1")
        .bind(room)
        .fetch_one(&cluster.db)
        .await
        .expect("the room's lease")
}

/// A director on node b commands a match room that runs on node a: its `PauseClock` and
/// `ResumeClock` go over NATS to a's room (the clock stops: no throw while paused, the
/// game stores `clock_paused` then `clock_resumed`), and the match finishes. The
/// tournament's lease is moved to b by hand (as a failover would move it) while the room
/// stays on a.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_director_on_b_pauses_and_resumes_a_match_room_running_on_a() {
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start("tournament_remote_room", opts).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));
    let org = sign_up_at(a, "Organiser").await;
    let settings = json!({
        "name": "Across",
        "preset": "pairs",
        "registration_deadline_ms": now_ms() + 3_600_000,
        "spectator_delay_throws": 0,
        // Slow enough bots that the game is still running when the referee acts.
        "bot_fill": {"up_to": 2, "level": "random", "think_ms": 150},
    });
    let created = post(a, "/api/tournaments", &org, settings, 201).await;
    let id = created["id"].as_str().expect("id").to_owned();
    let base = format!("/api/tournaments/{id}");
    post(a, &format!("{base}/close"), &org, Value::Null, 200).await;
    let v = until(a, &id, "the match playing", |v| {
        matches(v)[0]["status"] == "playing" && matches(v)[0]["game_id"].is_string()
    })
    .await;
    let m = matches(&v)[0].clone();
    let room = m["room"].as_str().expect("room").to_owned();
    let game = m["game_id"].as_str().expect("game").to_owned();
    assert_eq!(room_owner(&cluster, &room).await, "a");

    // The tournament moves to b; its room stays on a.
    sqlx::query(
        "UPDATE tournament_leases SET owner = 'b', epoch = epoch + 1, \
         expires_at = now() + interval '1 hour' WHERE tournament_id = $1::UUID",
    )
    .bind(&id)
    .execute(&cluster.db)
    .await
    .expect("move the lease");
    let referee = format!("{base}/matches/{}/referee", m["id"]);
    let v = post(b, &referee, &org, json!({"action": "pause"}), 200).await;
    assert_eq!(matches(&v)[0]["paused"], true, "{v:#}");
    assert_eq!(lease(&cluster, &id).await, Some(("b".to_owned(), 2)));
    let paused = event_types(b, &game).await;
    assert!(paused.contains(&"clock_paused".to_owned()), "{paused:?}");
    // The clock is stopped: the bots (150 ms a throw) make no move for a while.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let still = event_types(b, &game).await;
    assert_eq!(still.len(), paused.len(), "nothing happened while paused");
    assert_eq!(
        room_owner(&cluster, &room).await,
        "a",
        "the room stayed on a"
    );

    let v = post(b, &referee, &org, json!({"action": "resume"}), 200).await;
    assert_eq!(matches(&v)[0]["paused"], false, "{v:#}");
    let resumed = event_types(b, &game).await;
    assert!(resumed.contains(&"clock_resumed".to_owned()), "{resumed:?}");
    let v = until(b, &id, "the match finished", |v| v["status"] == "finished").await;
    let m = &matches(&v)[0];
    assert_eq!(m["status"], "finished", "{v:#}");
    assert_eq!(
        m["game_id"].as_str(),
        Some(game.as_str()),
        "one game: {v:#}"
    );
    assert!(v["champion"].is_u64(), "{v:#}");
    let after = event_types(a, &game).await;
    assert!(
        after.len() > still.len(),
        "the game went on after the resume"
    );
    assert_eq!(actions(&v), ["pause", "resume"], "{v:#}");
    assert_eq!(lease(&cluster, &id).await, Some(("b".to_owned(), 2)));
}

/// `SELECT $sql` on the test's pool as a float (ms on the database's clock).
async fn db_ms(cluster: &Cluster, sql: &str, id: &str) -> f64 {
    sqlx::query_scalar::<_, f64>(sql)
        .bind(id)
        .fetch_one(&cluster.db)
        .await
        .expect("read the database's clock")
}

/// SIGTERM of the node directing a tournament (and running its rooms): the drain stops
/// the director between two inputs and releases its lease, so node b takes it (epoch 2)
/// before a's lease would have expired (a TTL of 15 s, so that a claim after expiry
/// cannot pass for a release), and the tournament finishes there with the same draw,
/// one game per match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drained_director_releases_its_tournament_and_b_carries_on_at_once() {
    let opts = Opts {
        nodes: 2,
        lease_ttl_ms: 15_000,
        ..Opts::default()
    };
    let Some(mut cluster) = Cluster::start("tournament_drain", opts).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));
    let org = sign_up_at(a, "Organiser").await;
    let settings = json!({
        "name": "Drained",
        "preset": "pairs",
        "registration_deadline_ms": now_ms() + 3_600_000,
        "spectator_delay_throws": 0,
        // Bots slow enough that round 1 is still played at the SIGTERM.
        "bot_fill": {"up_to": 4, "level": "random", "think_ms": 30},
    });
    let created = post(a, "/api/tournaments", &org, settings, 201).await;
    let id = created["id"].as_str().expect("id").to_owned();
    let base = format!("/api/tournaments/{id}");
    let drawn = post(a, &format!("{base}/close"), &org, Value::Null, 200).await;
    let draw = crate::common::tour::round_one(&drawn);
    until(a, &id, "round 1 playing", |v| {
        matches(v)
            .iter()
            .any(|m| m["round"] == 1 && m["status"] == "playing")
    })
    .await;
    assert_eq!(lease(&cluster, &id).await, Some(("a".to_owned(), 1)));
    // At least this late would a's lease expire unrenewed.
    let expiry = db_ms(
        &cluster,
        "SELECT (EXTRACT(EPOCH FROM expires_at) * 1000)::FLOAT8 FROM tournament_leases \
         WHERE tournament_id = $1::UUID",
        &id,
    )
    .await;
    cluster.signal(0, "TERM");

    // b directs it now, taken before a's lease would have run out.
    let end = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if lease(&cluster, &id).await == Some(("b".to_owned(), 2)) {
            break;
        }
        assert!(tokio::time::Instant::now() < end, "b never took the lease");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let now = db_ms(
        &cluster,
        "SELECT (EXTRACT(EPOCH FROM now()) * 1000)::FLOAT8 WHERE $1::TEXT IS NOT NULL",
        &id,
    )
    .await;
    assert!(
        now < expiry,
        "taken {} ms after a's lease would have expired: not released",
        now - expiry
    );
    let status = cluster.wait_exit(0, Duration::from_secs(30)).await;
    assert!(
        status.is_some_and(|s| s.success()),
        "a exits cleanly: {status:?}"
    );

    let v = until(b, &id, "finished on b", |v| v["status"] == "finished").await;
    assert_eq!(
        crate::common::tour::round_one(&v),
        draw,
        "the same draw: {v:#}"
    );
    let ms = matches(&v);
    assert_eq!(ms.len(), 3, "n − 1 games: {v:#}");
    let mut games = std::collections::BTreeSet::new();
    for m in &ms {
        assert_eq!(m["status"], "finished", "{m}");
        let room = m["room"].as_str().expect("room");
        let stored = cluster.games_of(room).await;
        assert_eq!(stored.len(), 1, "one game in room {room}: {stored:?}");
        assert_eq!(m["game_id"].as_str(), Some(stored[0].as_str()), "{m}");
        games.insert(stored[0].clone());
    }
    assert_eq!(games.len(), 3, "one game per match");
    assert!(v["champion"].is_u64(), "{v:#}");
    assert_eq!(lease(&cluster, &id).await, Some(("b".to_owned(), 2)));
}
