//! The AsyncAPI 3.0 document of the WebSocket protocol (`proto/asyncapi.json`), generated
//! from the same types as `proto/schema/`: one message per variant of [`ClientMessage`]
//! (what the server receives) and of [`ServerMessage`] (what it sends), their schemas in
//! JSON Schema draft-07 (the AsyncAPI schema format's base), the close codes
//! ([`close_code::ALL`]) and the order rules (`req`, `seq`, `resume`, `stale_seq`).
//!
//! It also lists the one other stream a client subscribes to, a tournament's live view
//! (`GET /api/tournaments/{id}/events`, Server-Sent Events over HTTP): the channel
//! `tournamentEvents`, whose message `tournament` carries the view. The view's type lives
//! in `parchis-tournament`, which depends on this crate, so its schema is referred to
//! (`proto/schema/tournament_view.json`, the OpenAPI document's `TournamentView`) rather
//! than inlined; the server's OpenAPI drift test checks that both documents name the same
//! route and event.
//!
//! Regenerate with `UPDATE_SCHEMA=1 cargo test -p parchis-protocol --test asyncapi`.

use crate::{close_code, ClientMessage, ServerMessage};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};

/// The order rules of the protocol, as the channel's description (`proto/README.md`,
/// "WebSocket: framing and envelopes" and "Connection lifecycle", says the same at length).
const ORDER_RULES: &str = "\
Text frames only, each one JSON object tagged by `type`. Every command carries `req`, a \
request id unique on the connection: its one reply (`ok`, `error` or `welcome`) echoes it; \
reusing one gets `duplicate_request` and nothing is applied.\n\n\
**seq.** Room events (`event`) are numbered 1, 2, 3… with no gaps, the same for players \
and spectators; every message about a room carries the room's latest `seq` (`welcome`, \
`ok`, `your_turn`, `presence` without adding one). Commands that change a room carry \
`seq`, the latest event the client has seen: a command whose `seq` is not the room's \
latest gets `stale_seq` (read the new events, then decide again); `leave` is never stale. \
A command already applied and sent again is refused `stale_seq`, so resending is always \
safe.\n\n\
**One order of refusals** for a player's command: an expired turn clock is applied first \
(the turn passes); then a `roll` or `play` of a player whose turn it is not gets \
`not_your_turn`, whatever its `seq`; only then is `seq` checked (`stale_seq`); then the \
command itself (`illegal_action`, `colour_taken`, …).\n\n\
**resume.** After a dropped connection (or a close with 1012, 4001, 4003) open a new socket \
and send `resume` with the session token of the `welcome` and the last `seq` seen: the \
answer is `welcome` (same seat), then the missed events in order, or a full snapshot in \
the `welcome` when they are too old or too many; `your_turn` again if it is your turn. A \
second connection resuming the same seat takes over (the older one is closed with 4000).\n\n\
**Closing.** Before closing for any reason but 1000 the server sends `closing` with the \
same code and reason. Close codes are listed in `x-close-codes`.";

/// The address of a tournament's live view (an HTTP route of the OpenAPI document).
pub const TOURNAMENT_EVENTS_ADDRESS: &str = "/api/tournaments/{id}/events";

/// The tournament channel's description.
const TOURNAMENT_EVENTS: &str = "\
A tournament's live view, as Server-Sent Events (`text/event-stream`) over a plain HTTP \
`GET` (no WebSocket): the OpenAPI operation `tournamentEvents`. Every event is named \
`tournament` (`event: tournament`) and its `data` is one line of JSON, the tournament's \
whole view: at once on subscribing, then after every change (a registration, the draw, a \
room opened, a game started or finished, a referee's decision). Views in between may be \
skipped: each event is the latest view, never a delta. Comment lines (`:`) keep the \
connection alive; the stream ends when the server shuts down (reconnect, and the first \
event is the view then). An unknown id is `404 unknown_tournament` before any event.";

/// The schema generator of the document: draft-07, definitions under
/// `#/components/schemas/`.
fn generator() -> SchemaGenerator {
    SchemaGenerator::new(SchemaSettings::draft07().with(|s| {
        s.definitions_path = "#/components/schemas/".into();
    }))
}

/// The messages of one tagged enum `T`: `(name, message)` per variant, the name being its
/// `type`, each with the variant's description as summary and its schema as payload.
fn messages<T: JsonSchema>(generator: &mut SchemaGenerator, prefix: &str) -> Vec<(String, Value)> {
    let root = generator.root_schema_for::<T>();
    let variants = root
        .get("oneOf")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    variants
        .into_iter()
        .filter_map(|variant| {
            let tag = variant
                .pointer("/properties/type/const")
                .and_then(Value::as_str)?
                .to_owned();
            let summary = variant
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let message = json!({
                "name": tag,
                "title": format!("{prefix} {tag}"),
                "summary": summary,
                "contentType": "application/json",
                "payload": variant,
            });
            Some((format!("{prefix}_{tag}"), message))
        })
        .collect()
}

/// The whole AsyncAPI 3.0 document.
pub fn document() -> Value {
    let mut generator = generator();
    let client = messages::<ClientMessage>(&mut generator, "client");
    let server = messages::<ServerMessage>(&mut generator, "server");
    let schemas: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    let refs = |list: &[(String, Value)]| -> Vec<Value> {
        list.iter()
            .map(|(name, _)| json!({ "$ref": format!("#/channels/play/messages/{name}") }))
            .collect()
    };
    let channel_messages: Map<String, Value> = client
        .iter()
        .chain(server.iter())
        .map(|(name, _)| {
            (
                name.clone(),
                json!({ "$ref": format!("#/components/messages/{name}") }),
            )
        })
        .collect();
    let mut components_messages: Map<String, Value> =
        client.iter().chain(server.iter()).cloned().collect();
    components_messages.insert("sse_tournament".into(), tournament_view_message());
    let close_codes: Vec<Value> = close_code::ALL
        .iter()
        .map(|(code, name, meaning)| json!({ "code": code, "name": name, "meaning": meaning }))
        .collect();
    json!({
        "asyncapi": "3.0.0",
        "info": {
            "title": "Parchís server WebSocket protocol",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Play over one WebSocket per client at `/ws`: commands from the \
                client, replies, room events and turn prompts from the server. Rooms are \
                created and read over HTTP (`proto/openapi.json`); the prose reference with \
                an example of every message is `proto/README.md`."
        },
        "defaultContentType": "application/json",
        "servers": {
            "local": {
                "host": "127.0.0.1:8080",
                "protocol": "ws",
                "description": "A server started with `cargo run -p parchis-server`; use `wss` \
                    behind TLS."
            },
            "local_http": {
                "host": "127.0.0.1:8080",
                "protocol": "http",
                "description": "The same server's HTTP API (Server-Sent Events); `https` \
                    behind TLS."
            }
        },
        "channels": {
            "play": {
                "address": "/ws",
                "title": "The game connection",
                "description": ORDER_RULES,
                "servers": [{ "$ref": "#/servers/local" }],
                "messages": channel_messages,
                "x-close-codes": close_codes,
            },
            "tournamentEvents": {
                "address": TOURNAMENT_EVENTS_ADDRESS,
                "title": "A tournament's live view (Server-Sent Events)",
                "description": TOURNAMENT_EVENTS,
                "servers": [{ "$ref": "#/servers/local_http" }],
                "parameters": {
                    "id": { "description": "The tournament's id (a UUID)." }
                },
                "messages": {
                    "sse_tournament": { "$ref": "#/components/messages/sse_tournament" }
                },
            }
        },
        "operations": {
            "receiveCommand": {
                "action": "receive",
                "channel": { "$ref": "#/channels/play" },
                "summary": "A client command (the server receives it).",
                "messages": refs(&client),
            },
            "sendServerMessage": {
                "action": "send",
                "channel": { "$ref": "#/channels/play" },
                "summary": "A reply, room event, turn prompt, presence, pong or closing notice \
                    (the server sends it).",
                "messages": refs(&server),
            },
            "sendTournamentView": {
                "action": "send",
                "channel": { "$ref": "#/channels/tournamentEvents" },
                "summary": "The tournament's view, at once and after every change (the server \
                    sends it).",
                "messages": [
                    { "$ref": "#/channels/tournamentEvents/messages/sse_tournament" }
                ],
            }
        },
        "components": {
            "messages": components_messages,
            "schemas": schemas,
        }
    })
}

/// The message of the `tournamentEvents` channel: one Server-Sent Event `tournament`.
fn tournament_view_message() -> Value {
    json!({
        "name": "tournament",
        "title": "SSE tournament",
        "summary": "The tournament's whole view (`event: tournament`, the view as JSON in \
            `data`).",
        "contentType": "application/json",
        "payload": {
            "type": "object",
            "title": "TournamentView",
            "description": "The tournament's view, as `GET /api/tournaments/{id}` answers it. \
                Its JSON Schema: `proto/schema/tournament_view.json`, and \
                `#/components/schemas/TournamentView` of `proto/openapi.json`.",
            "required": ["id", "name", "status", "entrants", "matches"],
            "properties": {
                "id": { "type": "string", "description": "The tournament's id." },
                "status": {
                    "type": "string",
                    "enum": ["registering", "running", "finished"]
                }
            }
        }
    })
}

/// [`document`] as checked in: pretty JSON ending in a newline.
pub fn render() -> String {
    let mut text = serde_json::to_string_pretty(&document()).unwrap_or_default();
    text.push('\n');
    text
}
