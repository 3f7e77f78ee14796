//! Fair dice through the real server (`docs/FAIR_DICE.md`): a throw depends only on the
//! seeds and its number, so a restart mid-game, or a disconnection before a throw, gives
//! the same dice as an uninterrupted game with the same seeds.

mod common;

use common::{start, start_on, Client, Server};
use parchis_engine::fair_dice::{ClientSeeds, Dice, ServerSeed};
use parchis_engine::Colour;
use parchis_server::ServerConfig;
use parchis_store::{MemoryStore, Store};
use serde_json::{json, Value};
use std::sync::Arc;

/// The test-only fixed server seed: every game on these servers has the same dice.
const SEED: [u8; 32] = [42; 32];

fn config() -> ServerConfig {
    ServerConfig {
        fixed_server_seed: Some(SEED),
        dice_seed: None,
        ..common::test_config()
    }
}

/// A classic game (one die, an opening roll) of Ana (yellow, client seed `ana-seed`)
/// and Luis (red, the default seed), started.
async fn seated(server: &Server) -> (String, Vec<Client>) {
    let code = server
        .create_room(
            json!({"preset": "classic", "seats": 2, "turn_clock_secs": 600,
                            "disconnect_grace_secs": 600}),
        )
        .await;
    let mut yellow = server.client().await;
    let req = yellow
        .cmd(
            json!({"type": "join", "room": code, "name": "Ana", "colour": "yellow",
                    "client_seed": "ana-seed"}),
        )
        .await;
    assert_eq!(yellow.reply(req).await["type"], "welcome");
    let mut red = server.client().await;
    red.join(&code, "Luis", Some("red")).await;
    yellow
        .until("red joined", |v| {
            v["event"]["type"] == "player_joined" && v["event"]["colour"] == "red"
        })
        .await;
    yellow.ok(json!({"type": "start"})).await;
    (code, vec![yellow, red])
}

/// The seat to act: its index in `clients` and its `your_turn`.
async fn to_act(server: &Server, code: &str, clients: &mut [Client]) -> (usize, Value) {
    let view = server.room(code).await;
    let turn = view["game"]["position"]["turn"]
        .as_str()
        .expect("turn")
        .to_owned();
    let seq = view["seq"].as_u64().expect("seq");
    let i = clients
        .iter()
        .position(|c| c.colour.as_deref() == Some(turn.as_str()))
        .expect("a client holds the turn");
    let t = clients[i]
        .until("your_turn", |v| {
            v["type"] == "your_turn" && v["seq"].as_u64() == Some(seq)
        })
        .await;
    (i, t)
}

/// The player to act rolls or plays its first legal action.
async fn act(c: &mut Client, t: &Value) {
    if t["must_roll"] == true {
        c.ok(json!({"type": "roll"})).await;
    } else {
        c.ok(json!({"type": "play", "action": t["legal"][0].clone()}))
            .await;
    }
}

/// A new connection resuming `old`'s seat with its token.
async fn reconnect(server: &Server, code: &str, old: Client) -> Client {
    let mut c = server.client().await;
    c.colour = old.colour.clone();
    c.token = old.token.clone();
    let req = c
        .cmd(
            json!({"type": "resume", "room": code, "token": old.token.clone().expect("token"),
                    "last_seq": old.seq}),
        )
        .await;
    drop(old);
    let w = c.reply(req).await;
    assert_eq!(w["type"], "welcome", "{w}");
    c
}

/// Every throw of the room's stored game: `(number, colour, dice)`, opening roll first.
async fn throws(server: &Server, code: &str) -> Vec<(u64, String, Vec<u64>)> {
    let (_, list) = server
        .http("GET", &format!("/api/games?room={code}"), None)
        .await;
    let id = list["games"][0]["id"].as_str().expect("game id").to_owned();
    let (_, game) = server.http("GET", &format!("/api/games/{id}"), None).await;
    let dice = |v: &Value| -> Vec<u64> {
        v.as_array()
            .expect("dice")
            .iter()
            .filter_map(Value::as_u64)
            .collect()
    };
    let mut out = Vec::new();
    for e in game["events"].as_array().expect("events") {
        let ev = &e["event"];
        if ev["type"] == "opening_roll" {
            for r in ev["rolls"].as_array().expect("rolls") {
                let colour = r["colour"].as_str().unwrap_or_default().to_owned();
                out.push((
                    r["throw"].as_u64().expect("number"),
                    colour,
                    dice(&r["dice"]),
                ));
            }
        } else if ev["type"] == "game" && ev["event"]["type"] == "dice_rolled" {
            let colour = ev["event"]["colour"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            out.push((
                ev["throw"].as_u64().expect("number"),
                colour,
                dice(&ev["event"]["dice"]),
            ));
        }
    }
    out
}

const STEPS: usize = 60;

/// The same game without interruptions: its throws.
async fn uninterrupted() -> Vec<(u64, String, Vec<u64>)> {
    let server = start(config()).await;
    let (code, mut clients) = seated(&server).await;
    for _ in 0..STEPS {
        let (i, t) = to_act(&server, &code, &mut clients).await;
        act(&mut clients[i], &t).await;
    }
    throws(&server, &code).await
}

/// The throws are what the seeds give for their numbers, 0, 1, 2…
fn check_against_the_seeds(throws: &[(u64, String, Vec<u64>)]) {
    let seeds = ClientSeeds::new(vec![
        (Colour::Yellow, "ana-seed".into()),
        (Colour::Red, "red".into()),
    ])
    .expect("seeds");
    let dice = Dice::new(&ServerSeed(SEED), &seeds, 1);
    for (i, (k, _, d)) in throws.iter().enumerate() {
        assert_eq!(*k, i as u64, "throws are numbered in order");
        let want: Vec<u64> = dice.throw(*k).into_iter().map(u64::from).collect();
        assert_eq!(d, &want, "throw {k}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_mid_game_gives_the_same_dice() {
    let reference = uninterrupted().await;
    assert!(reference.len() > 20, "{} throws", reference.len());
    check_against_the_seeds(&reference);

    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let first = start_on(config(), store.clone()).await;
    let (code, mut clients) = seated(&first).await;
    for _ in 0..STEPS / 2 {
        let (i, t) = to_act(&first, &code, &mut clients).await;
        act(&mut clients[i], &t).await;
    }
    let before = throws(&first, &code).await;

    // A second server on the same store brings the game back, as after a crash (the
    // first is left alone, nobody talks to it any more; the SIGKILL of the real binary
    // is in tests/restart.rs); the players come back with their tokens.
    let second = start_on(config(), store).await;
    let mut resumed = Vec::new();
    for c in clients {
        resumed.push(reconnect(&second, &code, c).await);
    }
    for _ in STEPS / 2..STEPS {
        let (i, t) = to_act(&second, &code, &mut resumed).await;
        act(&mut resumed[i], &t).await;
    }
    let after = throws(&second, &code).await;
    assert!(after.len() > before.len(), "throws after the restart");
    assert_eq!(&after[..before.len()], &before[..]);
    assert_eq!(after, reference, "the same dice as without the restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnect_before_a_throw_gives_the_same_dice() {
    let reference = uninterrupted().await;
    let server = start(config()).await;
    let (code, mut clients) = seated(&server).await;
    let mut reconnects = 0;
    for _ in 0..STEPS {
        let (i, t) = to_act(&server, &code, &mut clients).await;
        if t["must_roll"] == true {
            // The player to throw drops the connection first and comes back, and the other
            // player's roll out of turn is refused: neither uses up a throw.
            let other = 1 - i;
            let seq = t["seq"].clone();
            clients[other]
                .refused(json!({"type": "roll", "seq": seq}), "not_your_turn")
                .await;
            let old = clients.remove(i);
            let c = reconnect(&server, &code, old).await;
            clients.insert(i, c);
            reconnects += 1;
            let (j, t) = to_act(&server, &code, &mut clients).await;
            assert_eq!(j, i);
            act(&mut clients[j], &t).await;
        } else {
            act(&mut clients[i], &t).await;
        }
    }
    assert!(reconnects > 10, "{reconnects} reconnections");
    assert_eq!(throws(&server, &code).await, reference);
}
