//! Championships (issue 27) on the real server, bots at 0 ms: tournaments created,
//! closed and played to the end through the HTTP API (`docs/TOURNAMENTS.md`), the
//! director creating every match's room, starting it and reading its result back.

mod common;

use common::tour::{create, now_ms, view as get};
use common::{call, start, Server};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

/// How long a whole tournament of bots may take.
const WHOLE: Duration = Duration::from_secs(60);

/// Waits until `pred` holds of the view (or panics after [`WHOLE`]).
async fn until(addr: SocketAddr, id: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let end = tokio::time::Instant::now() + WHOLE;
    loop {
        let v = get(addr, id).await;
        if pred(&v) {
            return v;
        }
        if tokio::time::Instant::now() >= end {
            let mut games = Vec::new();
            for m in matches(&v).iter().filter(|m| m["status"] == "playing") {
                let g = m["game_id"].as_str().unwrap_or_default();
                let (_, game) = call(addr, "GET", &format!("/api/games/{g}"), None, "").await;
                games.push(json!({"game": g, "finished_at_ms": game["finished_at_ms"], "result": game["result"], "events": game["events"].as_array().map(Vec::len), "last": game["events"].as_array().and_then(|e| e.last().cloned())}));
            }
            panic!("{what}: never; games in play {games:?}; last view {v:#}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn finished(v: &Value) -> bool {
    v["status"] == "finished"
}

fn matches(v: &Value) -> &Vec<Value> {
    v["matches"].as_array().expect("matches")
}

/// Every match of a finished tournament was played in one stored, finished game whose
/// room is the match's; returns the game ids.
async fn every_game_stored(s: &Server, v: &Value) -> Vec<String> {
    let mut ids = Vec::new();
    for m in matches(v) {
        assert_eq!(m["status"], "finished", "{m}");
        let game = m["game_id"].as_str().expect("a played match has its game");
        let (status, g) = s.http("GET", &format!("/api/games/{game}"), None).await;
        assert_eq!(status, 200, "{g}");
        assert!(g["finished_at_ms"].is_i64(), "game {game} finished: {g}");
        assert_eq!(g["room"], m["room"], "{g}");
        // One game in the match's room: no match played twice.
        let room = m["room"].as_str().expect("room");
        let (status, list) = s
            .http("GET", &format!("/api/games?room={room}"), None)
            .await;
        assert_eq!(status, 200);
        assert_eq!(list["games"].as_array().expect("games").len(), 1, "{list}");
        assert!(m["winner"].is_u64(), "{m}");
        ids.push(game.to_owned());
    }
    let unique: BTreeSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "one game per match");
    ids
}

/// The final: the match of the last round; the champion is its winner.
fn assert_champion_won_the_final(v: &Value) {
    let last = matches(v)
        .iter()
        .max_by_key(|m| m["round"].as_u64())
        .expect("a final");
    assert!(v["champion"].is_u64(), "{v:#}");
    assert_eq!(v["champion"], last["winner"], "{v:#}");
}

fn pairs_knockout(n: u32) -> Value {
    json!({
        "name": format!("Club of {n}"),
        "preset": "pairs",
        "format": "knockout",
        "turn_clock_secs": 15,
        "spectator_delay_throws": 3,
        "bot_fill": {"up_to": n, "level": "random", "think_ms": 0},
    })
}

/// Seed 004 pairs, 5 teams of bots: three byes to the top seeds, 4 games (n − 1), the
/// champion the winner of the final.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_knockout_of_five_pairs_has_three_byes_and_four_games() {
    let s = start(common::test_config()).await;
    let org = common::sign_up_at(s.addr, "Organiser").await;
    let id = create(s.addr, &org, pairs_knockout(5)).await;
    let v = get(s.addr, &id).await;
    assert_eq!(v["status"], "registering");
    // `GET /api/me` names the account by the id the view names its organiser by.
    let (status, me) = call(s.addr, "GET", "/api/me", Some(&org), "").await;
    assert_eq!(status, 200, "{me}");
    assert!(me["id"].is_string(), "{me}");
    assert_eq!(v["organiser"], me["id"]);
    assert_eq!(
        (v["format"].as_str(), v["preset"].as_str()),
        (Some("knockout"), Some("pairs"))
    );
    let (status, closed) = call(
        s.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&org),
        "",
    )
    .await;
    assert_eq!(status, 200, "{closed}");
    let v = until(s.addr, &id, "finished", finished).await;
    assert_eq!(v["entrants"].as_array().unwrap().len(), 5);
    for e in v["entrants"].as_array().unwrap() {
        assert_eq!(e["players"].as_array().unwrap().len(), 2, "pairs: {e}");
    }
    assert_eq!(v["byes"].as_array().unwrap().len(), 3, "{v:#}");
    assert_eq!(matches(&v).len(), 4, "{v:#}");
    every_game_stored(&s, &v).await;
    assert_champion_won_the_final(&v);
    s.shutdown.cancel();
}

/// Eight pairs: 7 games over three rounds, the champion the winner of the final.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_knockout_of_eight_pairs_plays_seven_games_to_the_final() {
    let s = start(common::test_config()).await;
    let org = common::sign_up_at(s.addr, "Organiser").await;
    let id = create(s.addr, &org, pairs_knockout(8)).await;
    let (status, _) = call(
        s.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&org),
        "",
    )
    .await;
    assert_eq!(status, 200);
    let v = until(s.addr, &id, "finished", finished).await;
    assert_eq!(matches(&v).len(), 7, "{v:#}");
    assert!(v["byes"].as_array().unwrap().is_empty());
    let rounds: Vec<u64> = matches(&v)
        .iter()
        .map(|m| m["round"].as_u64().unwrap())
        .collect();
    assert_eq!(rounds.iter().filter(|&&r| r == 1).count(), 4);
    assert_eq!(rounds.iter().filter(|&&r| r == 2).count(), 2);
    assert_eq!(rounds.iter().filter(|&&r| r == 3).count(), 1);
    every_game_stored(&s, &v).await;
    assert_champion_won_the_final(&v);
    // The list shows it.
    let (status, list) = s.http("GET", "/api/tournaments", None).await;
    assert_eq!(status, 200);
    assert_eq!(list["tournaments"][0]["id"], json!(id), "{list}");
    s.shutdown.cancel();
}

/// Swiss, 6 individual entrants over 3 rounds: 9 games, no pairing repeated, nobody
/// with a bye (an even count).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swiss_of_six_over_three_rounds_repeats_no_pairing() {
    let s = start(common::test_config()).await;
    let org = common::sign_up_at(s.addr, "Organiser").await;
    let settings = json!({
        "name": "Swiss",
        "preset": "online",
        "format": "swiss",
        "rounds": 3,
        "spectator_delay_throws": 0,
        "bot_fill": {"up_to": 6, "level": "random", "think_ms": 0},
    });
    let id = create(s.addr, &org, settings).await;
    let (status, _) = call(
        s.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&org),
        "",
    )
    .await;
    assert_eq!(status, 200);
    let v = until(s.addr, &id, "finished", finished).await;
    assert_eq!(matches(&v).len(), 9, "{v:#}");
    let mut pairings = BTreeSet::new();
    for m in matches(&v) {
        let mut e: Vec<u64> = m["entrants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        e.sort_unstable();
        assert_eq!(e.len(), 2, "{m}");
        assert!(pairings.insert(e.clone()), "pairing {e:?} repeated: {v:#}");
    }
    for round in 1..=3u64 {
        let mut seen = BTreeSet::new();
        for m in matches(&v).iter().filter(|m| m["round"] == round) {
            for e in m["entrants"].as_array().unwrap() {
                assert!(seen.insert(e.as_u64().unwrap()), "twice in round {round}");
            }
        }
        assert_eq!(seen.len(), 6, "everyone plays round {round}");
    }
    assert!(v["byes"].as_array().unwrap().is_empty());
    every_game_stored(&s, &v).await;
    assert_eq!(v["standings"][0]["entrant"], v["champion"], "{v:#}");
    s.shutdown.cancel();
}

/// Individual knockout, tables of 4 with the top 2 through: 8 players, two tables, then
/// a final of 4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_individual_knockout_of_tables_of_four_sends_the_top_two_through() {
    let s = start(common::test_config()).await;
    let org = common::sign_up_at(s.addr, "Organiser").await;
    let settings = json!({
        "name": "Tables",
        "preset": "online",
        "format": "knockout",
        "table_size": 4,
        "advance": 2,
        "spectator_delay_throws": 0,
        "bot_fill": {"up_to": 8, "level": "random", "think_ms": 0},
    });
    let id = create(s.addr, &org, settings).await;
    let (status, _) = call(
        s.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&org),
        "",
    )
    .await;
    assert_eq!(status, 200);
    let v = until(s.addr, &id, "finished", finished).await;
    assert_eq!(matches(&v).len(), 3, "{v:#}");
    let first: Vec<&Value> = matches(&v).iter().filter(|m| m["round"] == 1).collect();
    let last: Vec<&Value> = matches(&v).iter().filter(|m| m["round"] == 2).collect();
    assert_eq!((first.len(), last.len()), (2, 1));
    let mut through = BTreeSet::new();
    for m in &first {
        assert_eq!(m["entrants"].as_array().unwrap().len(), 4, "{m}");
        let places = m["places"].as_array().unwrap();
        assert_eq!(places.len(), 4, "{m}");
        through.insert(places[0].as_u64().unwrap());
        through.insert(places[1].as_u64().unwrap());
    }
    let finalists: BTreeSet<u64> = last[0]["entrants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_u64().unwrap())
        .collect();
    assert_eq!(
        finalists, through,
        "the top two of each table meet in the final"
    );
    every_game_stored(&s, &v).await;
    assert_champion_won_the_final(&v);
    s.shutdown.cancel();
}

/// Refusals: not logged in (401), bad settings (400 with the rule), a stranger closing
/// (403), an unknown tournament (404), a close with too few entrants (409).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_clear_errors() {
    let s = start(common::test_config()).await;
    let org = common::sign_up_at(s.addr, "Organiser").await;
    let other = common::sign_up_at(s.addr, "Stranger").await;
    let body = json!({"name": "X", "registration_deadline_ms": now_ms() + 60_000}).to_string();
    let (status, e) = call(s.addr, "POST", "/api/tournaments", None, &body).await;
    assert_eq!(
        (status, e["code"].as_str()),
        (401, Some("not_logged_in")),
        "{e}"
    );
    let bad = json!({"name": "", "registration_deadline_ms": now_ms() + 60_000}).to_string();
    let (status, e) = call(s.addr, "POST", "/api/tournaments", Some(&org), &bad).await;
    assert_eq!(
        (status, e["code"].as_str()),
        (400, Some("bad_request")),
        "{e}"
    );
    let (status, e) = call(s.addr, "POST", "/api/tournaments", Some(&org), "[1]").await;
    assert_eq!(status, 400, "{e}");
    let id = create(s.addr, &org, json!({"name": "Small"})).await;
    let (status, e) = call(
        s.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&other),
        "",
    )
    .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (403, Some("not_referee")),
        "{e}"
    );
    let (status, e) = call(
        s.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&org),
        "",
    )
    .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (409, Some("tournament_refused")),
        "{e}"
    );
    let unknown = uuid::Uuid::now_v7();
    let (status, e) = call(
        s.addr,
        "GET",
        &format!("/api/tournaments/{unknown}"),
        None,
        "",
    )
    .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (404, Some("unknown_tournament")),
        "{e}"
    );
    let (status, _) = call(s.addr, "GET", "/api/tournaments/not-a-uuid", None, "").await;
    assert_eq!(status, 400);
    s.shutdown.cancel();
}

/// Registration: a pair registers with a partner who confirms; a lone registration in
/// pairs is refused; the registrant withdraws before the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairs_register_confirm_and_withdraw() {
    let s = start(common::test_config()).await;
    let org = common::sign_up_at(s.addr, "Organiser").await;
    let ana = common::sign_up_at(s.addr, "Ana").await;
    let luis = common::sign_up_at(s.addr, "Luis").await;
    let id = create(s.addr, &org, json!({"name": "Pairs"})).await;
    let path = format!("/api/tournaments/{id}/entries");
    let (status, e) = call(s.addr, "POST", &path, Some(&ana), "{}").await;
    assert_eq!(
        (status, e["code"].as_str()),
        (400, Some("bad_request")),
        "{e}"
    );
    let (status, v) = call(
        s.addr,
        "POST",
        &path,
        Some(&ana),
        &json!({"partner": "luis"}).to_string(),
    )
    .await;
    assert_eq!(status, 201, "{v}");
    let team = &v["entrants"][0];
    assert_eq!(team["status"], "pending_partner", "{v}");
    let entry = team["id"].as_u64().unwrap();
    let (status, v) = call(
        s.addr,
        "POST",
        &format!("{path}/{entry}/confirm"),
        Some(&luis),
        "",
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["entrants"][0]["status"], "registered", "{v}");
    let names: Vec<&str> = v["entrants"][0]["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Ana", "Luis"]);
    let (status, v) = call(s.addr, "DELETE", &format!("{path}/{entry}"), Some(&ana), "").await;
    assert_eq!(status, 200, "{v}");
    assert!(v["entrants"].as_array().unwrap().is_empty(), "{v}");
    s.shutdown.cancel();
}

/// The `type`s of the stored events of game `game`.
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

/// The referee (here the organiser) pauses and resumes a game's clock (stored as
/// `clock_paused` / `clock_resumed`), orders a match replayed (a new room; the old game
/// kept in `replaced_games`), disqualifies an entrant (its opponent advances) and awards
/// a match with a reason; every action is listed in `referee_actions`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_referee_pauses_resumes_replays_disqualifies_and_awards() {
    let s = start(common::test_config()).await;
    let org = common::sign_up_at(s.addr, "Organiser").await;
    let stranger = common::sign_up_at(s.addr, "Stranger").await;
    let settings = json!({
        "name": "Refereed",
        "preset": "pairs",
        "spectator_delay_throws": 0,
        // Slow enough bots that every game is still running when the referee acts.
        "bot_fill": {"up_to": 4, "level": "random", "think_ms": 200},
    });
    let id = create(s.addr, &org, settings).await;
    let (status, _) = call(
        s.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&org),
        "",
    )
    .await;
    assert_eq!(status, 200);
    let v = until(s.addr, &id, "round 1 playing", |v| {
        matches(v)
            .iter()
            .filter(|m| m["status"] == "playing")
            .count()
            == 2
    })
    .await;
    let (m1, m2) = (matches(&v)[0].clone(), matches(&v)[1].clone());
    let referee = |m: &Value| format!("/api/tournaments/{id}/matches/{}/referee", m["id"]);

    // A stranger may not.
    let (status, e) = call(
        s.addr,
        "POST",
        &referee(&m1),
        Some(&stranger),
        r#"{"action":"pause"}"#,
    )
    .await;
    assert_eq!(
        (status, e["code"].as_str()),
        (403, Some("not_referee")),
        "{e}"
    );
    // Pause and resume: the room stores both.
    let (status, v) = call(
        s.addr,
        "POST",
        &referee(&m1),
        Some(&org),
        r#"{"action":"pause"}"#,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(matches(&v)[0]["paused"], true, "{v:#}");
    let game1 = m1["game_id"].as_str().unwrap().to_owned();
    assert!(event_types(s.addr, &game1)
        .await
        .contains(&"clock_paused".to_owned()));
    let (status, v) = call(
        s.addr,
        "POST",
        &referee(&m1),
        Some(&org),
        r#"{"action":"resume"}"#,
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(matches(&v)[0]["paused"], false, "{v:#}");
    assert!(event_types(s.addr, &game1)
        .await
        .contains(&"clock_resumed".to_owned()));

    // Replay: a new room and game; the old game is kept aside.
    let body = json!({"action": "replay", "reason": "dice dispute"}).to_string();
    let (status, v) = call(s.addr, "POST", &referee(&m1), Some(&org), &body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(matches(&v)[0]["replaced_games"], json!([game1]), "{v:#}");
    assert_ne!(matches(&v)[0]["room"], m1["room"], "a new room");
    let v = until(s.addr, &id, "the replay playing", |v| {
        matches(v)[0]["status"] == "playing" && matches(v)[0]["game_id"] != json!(game1)
    })
    .await;
    assert_ne!(matches(&v)[0]["room"], m1["room"]);

    // Disqualify match 1's second entrant: the first goes through.
    let loser = m1["entrants"][1].as_u64().unwrap();
    let body = json!({"action": "disqualify", "entrant": loser, "reason": "help from the public"})
        .to_string();
    let (status, v) = call(s.addr, "POST", &referee(&m1), Some(&org), &body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(matches(&v)[0]["winner"], m1["entrants"][0], "{v:#}");

    // Award match 2 to its second entrant.
    let winner = m2["entrants"][1].as_u64().unwrap();
    let body =
        json!({"action": "award", "winner": winner, "reason": "agreed by both teams"}).to_string();
    let (status, v) = call(s.addr, "POST", &referee(&m2), Some(&org), &body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        (
            matches(&v)[1]["status"].as_str(),
            matches(&v)[1]["winner"].as_u64()
        ),
        (Some("awarded"), Some(winner)),
        "{v:#}"
    );

    // The final is drawn between them; awarded too, it crowns its winner.
    let v = until(s.addr, &id, "the final", |v| matches(v).len() == 3).await;
    let fin = matches(&v)[2].clone();
    let finalists: BTreeSet<u64> = fin["entrants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_u64().unwrap())
        .collect();
    assert_eq!(
        finalists,
        BTreeSet::from([m1["entrants"][0].as_u64().unwrap(), winner])
    );
    let body = json!({"action": "award", "winner": winner, "reason": "time"}).to_string();
    let (status, v) = call(s.addr, "POST", &referee(&fin), Some(&org), &body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["status"], "finished");
    assert_eq!(v["champion"].as_u64(), Some(winner));
    let kinds: Vec<&str> = v["referee_actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["pause", "resume", "replay", "disqualify", "award", "award"],
        "{v:#}"
    );
    assert_eq!(v["referee_actions"][2]["reason"], "dice dispute");
    s.shutdown.cancel();
}

/// Issue 26: a championship's claimed seat shows the entrant account's display rating in
/// the tournament's pool. Ana and Luis play a rated `online` game first (so both have a
/// rating there), then register in an individual knockout of tables of two; each claims
/// the seat of the match's room and the room's seats show the profiles' display ratings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claimed_championship_seat_shows_the_entrants_rating() {
    let s = common::accounts_server().await;
    let org = common::sign_up_at(s.addr, "Organiser").await;
    let ana = common::sign_up_at(s.addr, "Ana").await;
    let luis = common::sign_up_at(s.addr, "Luis").await;
    let rated = s
        .create_room(json!({"preset": "online", "seats": 2, "rated": true}))
        .await;
    let mut clients = Vec::new();
    for (token, colour) in [(&ana, "yellow"), (&luis, "red")] {
        let mut c = common::logged_in(s.addr, token).await;
        c.join(&rated, "ignored", Some(colour)).await;
        clients.push(c);
    }
    clients[0]
        .until("red's join", |v| v["seq"].as_u64() == Some(2))
        .await;
    clients[0].ok(json!({"type": "start"})).await;
    let (won, _) = common::play_to_end(clients).await;
    assert_eq!(won["reason"], "goal", "{won}");
    let mut display = std::collections::BTreeMap::new();
    for name in ["Ana", "Luis"] {
        let (status, p) = s.http("GET", &format!("/api/players/{name}"), None).await;
        assert_eq!(status, 200, "{p}");
        let d = p["ratings"]["online"]["display"].clone();
        assert!(d.is_i64(), "{p}");
        display.insert(name, d);
    }

    let settings = json!({
        "name": "Rated seats",
        "preset": "online",
        "format": "knockout",
        "table_size": 2,
        "spectator_delay_throws": 0,
    });
    let id = create(s.addr, &org, settings).await;
    let path = format!("/api/tournaments/{id}/entries");
    for token in [&ana, &luis] {
        let (status, v) = call(s.addr, "POST", &path, Some(token), "{}").await;
        assert_eq!(status, 201, "{v}");
    }
    let (status, v) = call(
        s.addr,
        "POST",
        &format!("/api/tournaments/{id}/close"),
        Some(&org),
        "",
    )
    .await;
    assert_eq!(status, 200, "{v}");
    let v = until(s.addr, &id, "the match's room", |v| {
        matches(v).first().is_some_and(|m| m["room"].is_string())
    })
    .await;
    let room = matches(&v)[0]["room"].as_str().expect("room").to_owned();
    let mut seated = Vec::new();
    for token in [&ana, &luis] {
        let mut c = common::logged_in(s.addr, token).await;
        let req = c.cmd(json!({"type": "claim", "room": room})).await;
        let welcome = c.reply(req).await;
        assert_eq!(welcome["type"], "welcome", "{welcome}");
        seated.push(c);
    }
    let view = s.room(&room).await;
    let mut shown: Vec<(Value, Value)> = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .map(|x| (x["name"].clone(), x["rating"].clone()))
        .collect();
    shown.sort_by_key(|(name, _)| name.to_string());
    assert_eq!(
        shown,
        [
            (json!("Ana"), display["Ana"].clone()),
            (json!("Luis"), display["Luis"].clone())
        ],
        "{view}"
    );
    s.shutdown.cancel();
}
