//! What one organiser may make the server run (issue 31, `ServerConfig::tournaments`), on
//! the real server over HTTP: a `bot_fill` larger than the server's limit is refused
//! `400 bad_request`, and an account organising as many unfinished tournaments as it may
//! is refused `409 too_many_tournaments` (nothing stored) until one of them finishes;
//! other accounts are not affected. Both answers are the ones the OpenAPI document lists.

mod common;

use common::tour::{close, create, until, view};
use common::{call, sign_up_at, start, test_config};
use parchis_server::config::{AccountLimits, TournamentLimits};
use parchis_server::ServerConfig;
use serde_json::{json, Value};
use std::time::Duration;

fn settings(name: &str, up_to: u32) -> Value {
    json!({
        "name": name,
        "preset": "online",
        "table_size": 2,
        "advance": 1,
        "turn_clock_secs": 30,
        "spectator_delay_throws": 0,
        "bot_fill": {"up_to": up_to, "level": "random", "think_ms": 0},
    })
}

/// The statuses the checked-in OpenAPI document lists for `POST /api/tournaments`.
fn documented_statuses() -> Vec<String> {
    let (api, _) = parchis_server::openapi();
    let doc = serde_json::to_value(&api).expect("document");
    doc["paths"]["/api/tournaments"]["post"]["responses"]
        .as_object()
        .expect("responses")
        .keys()
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_organiser_is_limited_in_open_tournaments_and_bot_fill() {
    let s = start(ServerConfig {
        accounts: AccountLimits::unlimited(),
        tournaments: TournamentLimits {
            max_open_per_account: 2,
            max_bot_fill: 4,
        },
        ..test_config()
    })
    .await;
    let documented = documented_statuses();
    let organiser = sign_up_at(s.addr, "Organiser").await;
    let other = sign_up_at(s.addr, "Other").await;

    // A bot fill over the server's limit: 400, nothing created.
    let mut big = settings("Big", 5);
    big["registration_deadline_ms"] = json!(common::tour::now_ms() + 3_600_000);
    let (status, body) = call(
        s.addr,
        "POST",
        "/api/tournaments",
        Some(&organiser),
        &big.to_string(),
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["code"], "bad_request");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or_default()
            .contains("at most 4"),
        "{body}"
    );
    assert!(documented.contains(&"400".to_owned()));

    // Two open tournaments (one filled to the limit), then the third is refused.
    let first = create(s.addr, &organiser, settings("First", 2)).await;
    let second = create(s.addr, &organiser, settings("Second", 4)).await;
    let mut third = settings("Third", 2);
    third["registration_deadline_ms"] = json!(common::tour::now_ms() + 3_600_000);
    let refuse = || async {
        call(
            s.addr,
            "POST",
            "/api/tournaments",
            Some(&organiser),
            &third.to_string(),
        )
        .await
    };
    let (status, body) = refuse().await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["code"], "too_many_tournaments");
    assert!(documented.contains(&"409".to_owned()));
    let (_, listed) = call(s.addr, "GET", "/api/tournaments", None, "").await;
    let names: Vec<&str> = listed["tournaments"]
        .as_array()
        .expect("tournaments")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["Second", "First"], "the refused one was not stored");

    // Another account is not limited by this one's tournaments.
    create(s.addr, &other, settings("Other's", 2)).await;

    // Once one of the two has finished (its two bots played their match), one more fits.
    let drawn = close(s.addr, &organiser, &first).await;
    assert_eq!(drawn["status"], "running", "{drawn}");
    let done = until(
        s.addr,
        &first,
        "the first finishes",
        Duration::from_secs(60),
        |v| v["status"] == "finished",
    )
    .await;
    assert!(done["champion"].is_u64(), "{done}");
    assert_eq!(view(s.addr, &second).await["status"], "registering");
    let (status, body) = refuse().await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = refuse().await;
    assert_eq!(status, 409, "the limit holds again: {body}");
    s.shutdown.cancel();
}
