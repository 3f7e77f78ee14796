//! The OpenAPI document: the checked-in `proto/openapi.json` must equal what the routes
//! generate (regenerate with `UPDATE_SCHEMA=1 cargo test -p parchis-server --test
//! openapi`), the server serves exactly it at `GET /api/openapi.json`, and it documents
//! every route of the HTTP API with its parameters and answers.

mod common;

use common::{start, test_config};
use serde_json::Value;
use std::path::PathBuf;

fn checked_in_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto/openapi.json")
}

fn generated() -> (String, Value) {
    let (api, complaints) = parchis_server::openapi();
    assert!(complaints.is_empty(), "aide complained: {complaints:?}");
    let text = parchis_server::api_doc::render(&api);
    let value = serde_json::from_str(&text).expect("the document is JSON");
    (text, value)
}

#[test]
fn checked_in_openapi_matches_the_code() {
    let (text, _) = generated();
    let path = checked_in_path();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &text).expect("write proto/openapi.json");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == text,
        "proto/openapi.json is out of date; regenerate with:\n  UPDATE_SCHEMA=1 cargo test -p parchis-server --test openapi"
    );
}

#[test]
fn every_route_is_documented_with_its_answers() {
    let (_, doc) = generated();
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().expect("paths");
    let mut operations: Vec<String> = paths
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| k.as_str() != "parameters")
                .map(move |(method, _)| format!("{} {path}", method.to_uppercase()))
        })
        .collect();
    operations.sort();
    assert_eq!(
        operations,
        [
            "DELETE /api/me",
            "DELETE /api/me/blocks/{username}",
            "DELETE /api/pairing/{ticket}",
            "DELETE /api/session",
            "DELETE /api/tournaments/{id}/entries/{entry}",
            "GET /admin/rooms",
            "GET /api/config",
            "GET /api/games",
            "GET /api/games/{id}",
            "GET /api/games/{id}/export",
            "GET /api/games/{id}/replay",
            "GET /api/leaderboard",
            "GET /api/me",
            "GET /api/me/blocks",
            "GET /api/openapi.json",
            "GET /api/pairing",
            "GET /api/pairing/{ticket}",
            "GET /api/players/{username}",
            "GET /api/rooms",
            "GET /api/rooms/{code}",
            "GET /api/tournaments",
            "GET /api/tournaments/{id}",
            "GET /api/tournaments/{id}/events",
            "GET /healthz",
            "GET /metrics",
            "GET /readyz",
            "POST /admin/accounts/{username}/ban",
            "POST /admin/accounts/{username}/password",
            "POST /admin/accounts/{username}/ratings/reset",
            "POST /admin/accounts/{username}/rename",
            "POST /admin/connections/{id}/disconnect",
            "POST /admin/debug/shed",
            "POST /admin/debug/stall",
            "POST /admin/rooms/{code}/close",
            "POST /api/accounts",
            "POST /api/accounts/recover",
            "POST /api/me/blocks/{username}",
            "POST /api/me/password",
            "POST /api/pairing",
            "POST /api/rooms",
            "POST /api/session",
            "POST /api/tournaments",
            "POST /api/tournaments/{id}/close",
            "POST /api/tournaments/{id}/entries",
            "POST /api/tournaments/{id}/entries/{entry}/confirm",
            "POST /api/tournaments/{id}/matches/{match}/referee",
            "POST /api/tournaments/{id}/referees",
        ]
    );
    // Every operation has an id, a tag, a 2xx and the request timeout's 408.
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("path item") {
            let responses = op["responses"].as_object().expect("responses");
            assert!(
                op["operationId"].is_string(),
                "{method} {path}: operationId"
            );
            assert!(op["tags"][0].is_string(), "{method} {path}: tag");
            assert!(
                responses.keys().any(|s| s.starts_with('2')),
                "{method} {path}: 2xx"
            );
            assert!(responses.contains_key("408"), "{method} {path}: 408");
            // Every 429 carries a required Retry-After.
            if let Some(limited) = responses.get("429") {
                assert_eq!(
                    limited["headers"]["Retry-After"]["required"], true,
                    "{method} {path}: Retry-After on 429"
                );
            }
        }
    }
    let create = &paths["/api/rooms"]["post"];
    assert_eq!(
        create["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/RoomSettings"
    );
    assert_ne!(
        create["requestBody"]["required"], true,
        "an empty body is allowed"
    );
    let statuses: Vec<&String> = create["responses"]
        .as_object()
        .expect("responses")
        .keys()
        .collect();
    assert_eq!(statuses, ["201", "400", "408", "413", "429", "500", "503"]);
    // Parameters come from the handlers' extractors.
    let room = &paths["/api/rooms/{code}"]["get"]["parameters"][0];
    assert_eq!(
        (&room["name"], &room["in"], &room["required"]),
        (&"code".into(), &"path".into(), &true.into())
    );
    let games: Vec<&str> = paths["/api/games"]["get"]["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(
        games,
        ["cursor", "limit", "result", "room", "rules", "since"]
    );
    // The admin API names its security scheme.
    assert_eq!(
        paths["/admin/rooms"]["get"]["security"][0]["admin_token"],
        serde_json::json!([])
    );
    assert_eq!(
        doc["components"]["securitySchemes"]["admin_token"]["scheme"],
        "bearer"
    );
    // The accounts: a JSON body, the CSRF check's 403, and the two schemes of a player
    // (the cookie or an account's token, either), distinct from the admin token.
    let sign_up = &paths["/api/accounts"]["post"];
    assert_eq!(sign_up["tags"][0], "accounts");
    assert_eq!(
        sign_up["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/Credentials"
    );
    let statuses: Vec<&String> = sign_up["responses"]
        .as_object()
        .expect("responses")
        .keys()
        .collect();
    assert_eq!(
        statuses,
        ["201", "400", "403", "408", "409", "413", "429", "500", "503"]
    );
    assert!(sign_up["responses"]["413"]["content"]["text/plain"].is_object());
    assert_eq!(
        paths["/api/me"]["get"]["security"],
        serde_json::json!([{"session_cookie": []}, {"account_token": []}])
    );
    assert!(paths["/api/me"]["get"]["responses"]["401"].is_object());
    let cookie = &doc["components"]["securitySchemes"]["session_cookie"];
    assert_eq!(
        (&cookie["type"], &cookie["in"], &cookie["name"]),
        (
            &"apiKey".into(),
            &"cookie".into(),
            &parchis_server::accounts::auth::COOKIE.into()
        )
    );
    assert_eq!(
        doc["components"]["securitySchemes"]["account_token"]["scheme"],
        "bearer"
    );
    let ban = &paths["/admin/accounts/{username}/ban"]["post"];
    assert_eq!(ban["tags"][0], "admin");
    assert_eq!(ban["security"][0]["admin_token"], serde_json::json!([]));
    assert!(ban["responses"]["403"].is_object(), "the CSRF check's 403");
    assert!(paths["/admin/accounts/{username}/rename"]["post"]["responses"]["409"].is_object());
    let player = &paths["/api/players/{username}"]["get"]["parameters"][0];
    assert_eq!(
        (&player["name"], &player["in"]),
        (&"username".into(), &"path".into())
    );
    // Every tag an operation uses is declared, with a description.
    let tags: Vec<&str> = doc["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("path item") {
            for tag in op["tags"].as_array().expect("tags") {
                let tag = tag.as_str().expect("tag");
                assert!(tags.contains(&tag), "{method} {path}: tag {tag} undeclared");
            }
        }
    }
    // The tournaments: the per-account limit's 409, the CSRF check's 403 on every
    // state-changing route, and the live view as Server-Sent Events whose every event
    // is named and carries the view's schema.
    let create = &paths["/api/tournaments"]["post"]["responses"];
    assert!(create["409"]["description"]
        .as_str()
        .is_some_and(|d| d.contains("too_many_tournaments")));
    for (path, item) in paths
        .iter()
        .filter(|(p, _)| p.starts_with("/api/tournaments"))
    {
        for (method, op) in item.as_object().expect("path item") {
            if method != "get" {
                let forbidden = op["responses"]["403"]["description"].as_str();
                assert!(
                    forbidden.is_some_and(|d| d.contains("origin_not_allowed")),
                    "{method} {path}: the CSRF check's 403"
                );
            }
            assert!(op["responses"]["500"].is_object(), "{method} {path}: 500");
        }
    }
    let stream = &paths["/api/tournaments/{id}/events"]["get"]["responses"]["200"]["content"];
    let event = &stream["text/event-stream"]["schema"];
    assert_eq!(event["properties"]["event"]["const"], "tournament");
    assert_eq!(
        event["properties"]["data"]["contentSchema"]["$ref"],
        "#/components/schemas/TournamentView"
    );
    assert!(
        stream.get("text/plain").is_none(),
        "the stream is not plain text"
    );
    // The AsyncAPI document names the same stream.
    let asyncapi = parchis_protocol::asyncapi::document();
    let channel = &asyncapi["channels"]["tournamentEvents"];
    assert_eq!(channel["address"], "/api/tournaments/{id}/events");
    assert!(paths.contains_key(channel["address"].as_str().expect("address")));
    assert_eq!(
        channel["messages"]["sse_tournament"]["$ref"],
        "#/components/messages/sse_tournament"
    );
    let message = &asyncapi["components"]["messages"]["sse_tournament"];
    assert_eq!(message["name"], "tournament");
    // Its payload's outline agrees with the view's schema: the fields it requires, and
    // the statuses.
    let view = &doc["components"]["schemas"]["TournamentView"];
    let required = view["required"].as_array().expect("required");
    for field in message["payload"]["required"].as_array().expect("required") {
        assert!(required.contains(field), "TournamentView requires {field}");
    }
    let status = view["properties"]["status"]["$ref"]
        .as_str()
        .and_then(|r| r.rsplit('/').next())
        .expect("status refers to Phase");
    let phases: Vec<&str> = doc["components"]["schemas"][status]["enum"]
        .as_array()
        .or_else(|| doc["components"]["schemas"][status]["oneOf"].as_array())
        .expect("the phases")
        .iter()
        .filter_map(|p| p.as_str().or_else(|| p["const"].as_str()))
        .collect();
    assert_eq!(
        serde_json::json!(phases),
        message["payload"]["properties"]["status"]["enum"]
    );
    // Schemas are the protocol's, in components.
    for name in [
        "HttpError",
        "RoomView",
        "GameDetail",
        "GameReplay",
        "CreateRoomResponse",
    ] {
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "schema {name}"
        );
    }
    // Parameter structs are inlined as parameters, not left as unused schemas.
    assert!(doc["components"]["schemas"]["GamesQuery"].is_null());
}

#[tokio::test]
async fn the_server_serves_the_checked_in_document() {
    let server = start(test_config()).await;
    let (status, served) = server.http("GET", "/api/openapi.json", None).await;
    assert_eq!(status, 200);
    let (_, generated) = generated();
    assert_eq!(served, generated);
    server.shutdown.cancel();
}

/// A path segment that is not UTF-8 once percent-decoded is refused in JSON, as the
/// document says (`400` `HttpError`), not with the framework's plain text.
#[tokio::test]
async fn a_path_that_is_not_utf8_is_a_documented_json_400() {
    let server = start(test_config()).await;
    let (_, doc) = generated();
    for (method, path, route) in [
        ("GET", "/api/rooms/%FF", "/api/rooms/{code}"),
        ("GET", "/api/games/%FF", "/api/games/{id}"),
        ("GET", "/api/games/%FF/replay", "/api/games/{id}/replay"),
        ("GET", "/api/games/%FF/export", "/api/games/{id}/export"),
        ("GET", "/api/players/%FF", "/api/players/{username}"),
    ] {
        let (status, body) = server.http(method, path, None).await;
        assert_eq!(status, 400, "{path}");
        assert_eq!(body["code"], "bad_request", "{path}: {body}");
        let documented = &doc["paths"][route][method.to_lowercase()]["responses"]["400"];
        assert!(documented.is_object(), "{method} {route} documents 400");
    }
    server.shutdown.cancel();
}

/// Every state-changing operation sent from a browser page of another origin is answered
/// as the document says: the CSRF check's `403 origin_not_allowed` where the route has
/// it (accounts, quick pairing, tournaments, the admin accounts' routes), and that `403`
/// is documented; the others answer something documented too. Path parameters get
/// well-formed values (an all-zero UUID, `1`, a plausible name or code).
#[tokio::test]
async fn a_cross_origin_request_to_any_route_gets_a_documented_answer() {
    let server = start(parchis_server::ServerConfig {
        admin_token: Some("openapi-test-admin-token".into()),
        ..test_config()
    })
    .await;
    let (_, doc) = generated();
    let mut refused = Vec::new();
    for (route, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            if method == "get" {
                continue;
            }
            let path = route
                .replace("{id}", "00000000-0000-0000-0000-000000000000")
                .replace("{entry}", "1")
                .replace("{match}", "1")
                .replace("{username}", "nobody")
                .replace("{code}", "ABCDEF")
                .replace("{ticket}", "0123456789abcdef0123456789abcdef");
            let headers = [
                "Origin: https://elsewhere.example",
                "Sec-Fetch-Site: cross-site",
                "Content-Type: application/json",
                "Authorization: Bearer openapi-test-admin-token",
            ];
            let (status, body) =
                common::request_raw(server.addr, &method.to_uppercase(), &path, &headers, "{}")
                    .await;
            let documented = &op["responses"][status.to_string()];
            assert!(
                documented.is_object(),
                "{} {route}: {status} is not documented ({body})",
                method.to_uppercase()
            );
            if status == 403 && body.contains("origin_not_allowed") {
                assert!(
                    documented["description"]
                        .as_str()
                        .is_some_and(|d| d.contains("origin_not_allowed")),
                    "{} {route}: the 403's description names origin_not_allowed",
                    method.to_uppercase()
                );
                refused.push(format!("{} {route}", method.to_uppercase()));
            }
        }
    }
    // The CSRF check covers these (the tournaments' and pairing's writes among them).
    for op in [
        "POST /api/accounts",
        "POST /api/pairing",
        "POST /api/tournaments",
        "POST /api/tournaments/{id}/close",
        "DELETE /api/tournaments/{id}/entries/{entry}",
        "POST /admin/accounts/{username}/ratings/reset",
    ] {
        assert!(
            refused.iter().any(|r| r == op),
            "{op} is not CSRF-checked: {refused:?}"
        );
    }
    server.shutdown.cancel();
}
