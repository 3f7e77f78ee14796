//! The checked-in AsyncAPI document `proto/asyncapi.json` must equal what the code
//! generates. Regenerate with `UPDATE_SCHEMA=1 cargo test -p parchis-protocol --test asyncapi`.

use parchis_protocol::{asyncapi, close_code};
use serde_json::Value;
use std::path::PathBuf;

#[test]
fn checked_in_asyncapi_matches_the_code() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto/asyncapi.json");
    let text = asyncapi::render();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &text).expect("write proto/asyncapi.json");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == text,
        "proto/asyncapi.json is out of date; regenerate with:\n  UPDATE_SCHEMA=1 cargo test -p parchis-protocol --test asyncapi"
    );
}

fn names(doc: &Value, operation: &str) -> Vec<String> {
    doc["operations"][operation]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["$ref"].as_str())
        .map(|r| r.rsplit('/').next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn every_message_and_close_code_is_in_the_document() {
    let doc = asyncapi::document();
    assert_eq!(doc["asyncapi"], "3.0.0");
    assert_eq!(doc["channels"]["play"]["address"], "/ws");
    assert_eq!(
        names(&doc, "receiveCommand"),
        [
            "client_join",
            "client_watch",
            "client_resume",
            "client_claim",
            "client_choose_colour",
            "client_client_seed",
            "client_start",
            "client_roll",
            "client_play",
            "client_leave",
            "client_rematch",
            "client_emote",
            "client_ping",
        ]
    );
    assert_eq!(
        names(&doc, "sendServerMessage"),
        [
            "server_welcome",
            "server_ok",
            "server_error",
            "server_event",
            "server_your_turn",
            "server_presence",
            "server_emote",
            "server_renamed",
            "server_rating",
            "server_pong",
            "server_closing",
        ]
    );
    // Every message reference resolves, and its payload is tagged by its `type`.
    for name in names(&doc, "receiveCommand")
        .into_iter()
        .chain(names(&doc, "sendServerMessage"))
    {
        let message = &doc["components"]["messages"][&name];
        let tag = message["name"].as_str().expect("name");
        assert_eq!(message["payload"]["properties"]["type"]["const"], tag);
        assert!(name.ends_with(tag));
    }
    // Every schema a message refers to is in components.
    let text = doc.to_string();
    for piece in text.split("\"#/components/schemas/").skip(1) {
        let name = piece.split('"').next().unwrap_or_default();
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "schema {name}"
        );
    }
    let codes: Vec<u64> = doc["channels"]["play"]["x-close-codes"]
        .as_array()
        .expect("close codes")
        .iter()
        .filter_map(|c| c["code"].as_u64())
        .collect();
    assert_eq!(
        codes,
        [1000, 1001, 1002, 1007, 1008, 1009, 1012, 4000, 4001, 4002, 4003, 4004, 4005, 4006]
    );
    assert_eq!(close_code::ALL.len(), codes.len());
    // The tournament's live view: its own channel (Server-Sent Events over HTTP), one
    // message, the event's name.
    let sse = &doc["channels"]["tournamentEvents"];
    assert_eq!(sse["address"], asyncapi::TOURNAMENT_EVENTS_ADDRESS);
    assert_eq!(sse["servers"][0]["$ref"], "#/servers/local_http");
    assert_eq!(doc["servers"]["local_http"]["protocol"], "http");
    assert_eq!(names(&doc, "sendTournamentView"), ["sse_tournament"]);
    let message = &doc["components"]["messages"]["sse_tournament"];
    assert_eq!(message["name"], "tournament");
    assert_eq!(
        message["payload"]["properties"]["status"]["enum"][2],
        "finished"
    );
    let rules = doc["channels"]["play"]["description"]
        .as_str()
        .expect("rules");
    for word in ["stale_seq", "resume", "not_your_turn", "`seq`"] {
        assert!(rules.contains(word), "order rules mention {word}");
    }
}
