//! The spectator delay (issue 27, "no help from the public") against the real server:
//! real WebSocket players and a real WebSocket spectator of a room with
//! `spectator_delay_throws` 3. After every action the spectator (its queue drained by a
//! ping) has never been shown an event before 3 more throws were made after it (the
//! stored log is the truth), the games API shows a spectator only that part and a player
//! with its seat token everything, and at the end the spectator has every event of the
//! game, in order.

mod common;

use common::{assert_answers_ping, request_raw, seated_game, start, test_config, Client, Server};
use serde_json::{json, Value};

const DELAY: usize = 3;

/// The stored events of the game, as JSON, ascending by seq.
async fn stored(server: &Server, game_id: &str) -> Vec<(u64, Value)> {
    let (_, events) = server.stored_game(game_id).await;
    events
        .into_iter()
        .map(|mut e| {
            // The stored form's own keys (format version, position mark) are not sent.
            if let Value::Object(map) = &mut e.event {
                map.remove(parchis_room_core::persist::FORMAT_KEY);
                map.remove(parchis_room_core::persist::POSITION_KEY);
            }
            (e.seq as u64, e.event)
        })
        .collect()
}

fn is_throw(event: &Value) -> bool {
    event["type"] == "game" && event["event"]["type"] == "dice_rolled"
}

/// Throws in `log` up to and including seq `upto`.
fn throws_to(log: &[(u64, Value)], upto: u64) -> usize {
    log.iter()
        .take_while(|(s, _)| *s <= upto)
        .filter(|(_, e)| is_throw(e))
        .count()
}

/// `GET /api/games/{id}`'s events (seqs), with `headers`.
async fn api_seqs(server: &Server, game_id: &str, headers: &[&str]) -> Vec<u64> {
    let (status, body) = request_raw(
        server.addr,
        "GET",
        &format!("/api/games/{game_id}"),
        headers,
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let json: Value = serde_json::from_str(&body).expect("JSON");
    json["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["seq"].as_u64().expect("seq"))
        .collect()
}

/// The latest seq the spectator has been sent, by its welcome, events and presence
/// frames (its queue drained first).
async fn spectator_seq(watcher: &mut Client) -> u64 {
    assert_answers_ping(watcher).await;
    watcher.seq
}

#[tokio::test]
async fn a_spectator_never_sees_a_throw_before_n_more_throws_and_sees_all_at_the_end() {
    let server = start(test_config()).await;
    let settings = json!({
        "preset": "online", "seats": 2, "turn_clock_secs": 60,
        "spectator_delay_throws": DELAY,
    });
    let (code, mut players) = seated_game(&server, settings, &["yellow", "red"]).await;
    let view = server.room(&code).await;
    let game_id = view["game"]["game_id"]
        .as_str()
        .expect("game id")
        .to_owned();
    let mut watcher = server.client().await;
    let welcome = watcher.watch(&code).await;
    let welcomed_at = welcome["seq"].as_u64().expect("welcome seq");
    let token = players[0].token.clone().expect("yellow's token");
    let seat_header = format!("X-Parchis-Seat-Token: {token}");
    let (mut behind, mut steps) = (0, 0);
    while steps < 150 {
        let log = stored(&server, &game_id).await;
        if log.iter().any(|(_, e)| e["type"] == "dice_revealed") {
            break;
        }
        // The player to act (the latest `turn`) rolls or plays its first legal action.
        let (last, turn) = log
            .iter()
            .rev()
            .find(|(_, e)| e["type"] == "turn")
            .map(|(_, e)| (log.last().map_or(0, |l| l.0), e["colour"].clone()))
            .expect("a turn");
        let c = players
            .iter_mut()
            .find(|c| c.colour.as_deref() == turn.as_str())
            .expect("a player holds the turn");
        let t = c
            .until("your_turn", |v| {
                v["type"] == "your_turn" && v["seq"].as_u64() == Some(last)
            })
            .await;
        let cmd = if t["must_roll"] == true {
            json!({"type": "roll"})
        } else {
            json!({"type": "play", "action": t["legal"][0].clone()})
        };
        c.ok(cmd).await;
        steps += 1;
        // The stored log is what players have been sent; the spectator lags 3 throws.
        let log = stored(&server, &game_id).await;
        if log.iter().any(|(_, e)| e["type"] == "dice_revealed") {
            break;
        }
        let total = log.iter().filter(|(_, e)| is_throw(e)).count();
        let shown = spectator_seq(&mut watcher).await;
        let seen = throws_to(&log, shown);
        assert!(
            seen == 0 || seen + DELAY <= total,
            "step {steps}: the spectator saw throw {seen} of {total} (seq {shown})"
        );
        behind += usize::from(seen < total);
        // The games API: a spectator's part, and everything for a seated player.
        let public = api_seqs(&server, &game_id, &[]).await;
        assert_eq!(public.last().copied().unwrap_or(0), shown, "step {steps}");
        let seated = api_seqs(&server, &game_id, &[&seat_header]).await;
        assert_eq!(seated.len(), log.len(), "step {steps}");
        // The room view as spectators see it: no further than their stream.
        assert_eq!(server.room(&code).await["seq"].as_u64(), Some(shown));
    }
    assert!(behind > 10, "the spectator was behind {behind} times");
    // Play on to the end; the spectator then has every event of the game.
    let over = |log: &[(u64, Value)]| log.iter().any(|(_, e)| e["type"] == "dice_revealed");
    if !over(&stored(&server, &game_id).await) {
        let (won, _) = common::play_to_end(players).await;
        assert_eq!(won["type"], "game_won");
    }
    watcher
        .until("dice_revealed", |v| {
            v["type"] == "event" && v["event"]["type"] == "dice_revealed"
        })
        .await;
    // Everything after its welcome (the start, shown in the welcome's snapshot).
    let log: Vec<_> = stored(&server, &game_id)
        .await
        .into_iter()
        .filter(|(s, _)| *s > welcomed_at)
        .collect();
    let seen: Vec<(u64, Value)> = watcher
        .events
        .iter()
        .filter_map(|e| Some((e["seq"].as_u64()?, e["event"].clone())))
        .collect();
    assert!(log.len() > 100, "a whole game: {} events", log.len());
    assert_eq!(seen, log, "the spectator's stream is the whole stored game");
    let public = api_seqs(&server, &game_id, &[]).await;
    let whole = stored(&server, &game_id).await;
    let whole: Vec<u64> = whole.iter().map(|(s, _)| *s).collect();
    assert_eq!(public, whole, "a finished game is shown whole");
    server.shutdown.cancel();
}
