//! The stored-games API, read from the store (so games outlive their rooms and restarts):
//!
//! * `GET /api/games` — [`GameList`]: newest first, paged by an opaque cursor, filtered by
//!   room, rule set, result and start time ([`GamesQuery`]).
//! * `GET /api/games/{id}` — [`GameDetail`]: players, result and every stored event.
//! * `GET /api/games/{id}/export` — the text notation of `proto/GAME_EXPORT.md`.

use crate::api_doc;
use crate::client_addr::ClientAddr;
use crate::http::{ApiError, ApiPath};
use crate::state::AppState;
use aide::transform::TransformOperation;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use parchis_engine::Colour;
use parchis_protocol::{
    BotLevel, ErrorCode, GameDetail, GameEndReason, GameList, GamePlayer, GameResult, GameSummary,
    GamesQuery, ResultFilter, RoomEvent, StoredEvent, GAMES_PAGE_DEFAULT, GAMES_PAGE_MAX,
};
use parchis_room::ids::normalise_code;
use parchis_store::{GameQuery, GameRecord};

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::BadRequest, message)
}

fn store_failed(e: parchis_store::StoreError) -> ApiError {
    tracing::warn!(error = %e, "store failed serving a game");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::Internal,
        "the game store failed",
    )
}

/// The cursor of the page after `game`: `"<created_at_ms>.<id>"`, opaque to clients.
fn cursor_of(game: &GameRecord) -> String {
    format!("{}.{}", game.created_at_ms, game.id)
}

fn parse_cursor(cursor: &str) -> Result<(i64, uuid::Uuid), ApiError> {
    let bad = || bad_request(format!("{cursor:?} is not a cursor from next_cursor"));
    let (at, id) = cursor.split_once('.').ok_or_else(bad)?;
    Ok((
        at.parse().map_err(|_| bad())?,
        uuid::Uuid::parse_str(id).map_err(|_| bad())?,
    ))
}

/// The store query for `query`, checked.
///
/// # Errors
/// `400 bad_request`: a limit outside 1..=100, an unknown rule set, a malformed cursor.
fn store_query(query: &GamesQuery) -> Result<GameQuery, ApiError> {
    let limit = query.limit.unwrap_or(GAMES_PAGE_DEFAULT);
    if !(1..=GAMES_PAGE_MAX).contains(&limit) {
        return Err(bad_request(format!(
            "limit must be 1 to {GAMES_PAGE_MAX}, got {limit}"
        )));
    }
    let room_code = match query.room.as_deref() {
        Some(room) => {
            let code = normalise_code(room);
            if !parchis_room::ids::is_plausible_code(&code) {
                return Err(bad_request(format!(
                    "room must be a room code (letters and digits), got {:?}",
                    parchis_room::ids::shown_code(room)
                )));
            }
            Some(code)
        }
        None => None,
    };
    let preset = match &query.rules {
        // `+` in a query string reads as a space: `?rules=classic+two-out` means
        // `classic+two-out` (no rule-set name has a space). Stored games are searched, so
        // a name created before D-33 (a variant on another preset) is still accepted.
        Some(name) => Some(
            parchis_engine::RuleSet::from_stored_name(&name.trim().replace(' ', "+"))
                .map_err(bad_request)?
                .name(),
        ),
        None => None,
    };
    let (finished, reason) = match query.result {
        None => (None, None),
        Some(ResultFilter::Running) => (Some(false), None),
        Some(ResultFilter::Finished) => (Some(true), None),
        Some(ResultFilter::Completed) => (Some(true), Some(GameEndReason::Completed)),
        Some(ResultFilter::Abandoned) => (Some(true), Some(GameEndReason::Abandoned)),
        Some(ResultFilter::ClosedByAdmin) => (Some(true), Some(GameEndReason::ClosedByAdmin)),
    };
    Ok(GameQuery {
        room_code,
        preset,
        finished,
        reason: reason.map(|r| r.as_str().to_owned()),
        since_ms: query.since,
        before: query.cursor.as_deref().map(parse_cursor).transpose()?,
        // One more than the page: whether a next page exists.
        limit: limit + 1,
        // A private room's code is its invitation: its games are listed only to those
        // who name the room.
        public_only: query.room.is_none(),
    })
}

/// The wire summary of a stored game. A result or reason the protocol does not know
/// (written by another version) is logged and shown as `null`.
fn summary(g: GameRecord) -> GameSummary {
    let dice = public_dice(&g);
    let result = g.result.and_then(|v| {
        serde_json::from_value::<GameResult>(v)
            .map_err(|e| tracing::warn!(game = %g.id, error = %e, "stored result unreadable"))
            .ok()
    });
    GameSummary {
        id: g.id.to_string(),
        room: g.room_code,
        preset: g.preset,
        created_at_ms: g.created_at_ms,
        finished_at_ms: g.finished_at_ms,
        result,
        reason: g.reason.as_deref().and_then(GameEndReason::parse),
        deadline_ms: g.deadline_ms,
        dice,
    }
}

/// The stored game, with the turn clock's deadline taken from its room while the game
/// runs there (the stored column is written at the start and on restore only; each
/// throw's deadline is durable in its `turn` event).
pub(crate) fn live_summary(state: &AppState, g: GameRecord) -> GameSummary {
    let live = state
        .room(&g.room_code)
        .map(|room| room.listing())
        .filter(|l| l.game_id == Some(g.id) && g.finished_at_ms.is_none());
    let mut summary = summary(g);
    if let Some(listing) = live {
        summary.deadline_ms = listing.deadline_ms;
    }
    summary
}

/// `GET /api/games`: stored games, newest first, at most `limit` (default 20, at most
/// 100) per page; `next_cursor` fetches the next page. Filters: `room`, `rules` (any
/// spelling of a rule set's name), `result` (`running`, `finished`, `completed`,
/// `abandoned`, `closed_by_admin`), `since` (unix ms, games started then or later).
/// Without `room`, only the games of public rooms are listed (a private room's code is
/// its invitation). `400 bad_request` for an unknown parameter or a bad value.
pub async fn list_games(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    query: Result<Query<GamesQuery>, QueryRejection>,
) -> Result<Json<GameList>, ApiError> {
    state.admission().game_read(client)?;
    let Query(query) = query.map_err(|e| bad_request(e.body_text()))?;
    let store_query = store_query(&query)?;
    let page = store_query.limit as usize - 1;
    let mut games = state
        .store()
        .find_games(&store_query)
        .await
        .map_err(store_failed)?;
    let next_cursor = (games.len() > page).then(|| {
        games.truncate(page);
        games.last().map(cursor_of)
    });
    Ok(Json(GameList {
        games: games.into_iter().map(|g| live_summary(&state, g)).collect(),
        next_cursor: next_cursor.flatten(),
    }))
}

/// The docs of [`list_games`].
pub fn list_games_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("listGames")
        .summary("Stored games, newest first, one page")
        .description(
            "Stored games (by start time, then id), `limit` per page (default 20, at most \
             100) and `next_cursor` for the next page. Without `room`, only the games of \
             public rooms; with it, that room's games (a private room's code is its \
             invitation).",
        )
        .tag("games")
        .response_with::<200, Json<GameList>, _>(|r| {
            let first = &[("id", "$response.body#/games/0/id")];
            api_doc::links(
                r.description("One page of games."),
                &[
                    ("GetGame", "getGame", first),
                    ("GetGameReplay", "getGameReplay", first),
                    ("ExportGame", "exportGame", first),
                    (
                        "NextPage",
                        "listGames",
                        &[("cursor", "$response.body#/next_cursor")],
                    ),
                ],
            )
        });
    api_doc::errors(
        op,
        &[
            (
                400,
                "bad_request: an unknown parameter, or a bad value (a limit outside 1 to 100, \
                 an unknown rule set or result, a room that is not a code, a cursor not from \
                 `next_cursor`).",
            ),
            (
                429,
                "rate_limited: this address's stored-game reads (or a connection limit).",
            ),
            (500, "internal: the game store failed."),
        ],
    )
}

/// The path of a stored game's routes (`/api/games/{id}`, its replay and export).
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
pub struct GameIdPath {
    /// The game's id, a UUID (as in `GameSummary.id`).
    #[schemars(extend("format" = "uuid"))]
    pub id: String,
}

/// The errors of every route of one stored game ([`load_game`]), besides `extra`.
pub(crate) fn game_errors<'t>(
    op: TransformOperation<'t>,
    extra: &[(u16, &str)],
) -> TransformOperation<'t> {
    let op = api_doc::optional_header(
        api_doc::errors(op, extra),
        "X-Parchis-Seat-Token",
        "The session token of one of the game's seats: a player of a running game with a \
         spectator delay reads all of it; anyone else reads only what spectators were shown.",
    );
    api_doc::errors(
        op,
        &[
            (
                400,
                "bad_request: the id is not a UUID (or not UTF-8 once percent-decoded).",
            ),
            (
                403,
                "spectators_not_allowed: the game runs in a room that allows no spectators \
                 (readable once it has ended).",
            ),
            (404, "unknown_game: no game has this id."),
            (
                429,
                "rate_limited: this address's stored-game reads (or a connection limit).",
            ),
            (
                500,
                "internal: the game store failed, or the stored game does not read back.",
            ),
        ],
    )
}

/// The docs of [`get_game`].
pub fn get_game_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("getGame")
        .summary("One stored game with every event")
        .description(
            "Players (with their bot level), preset, result, fair dice and every stored \
             event with its `seq`, exactly as sent on the WebSocket.",
        )
        .tag("games")
        .response_with::<200, Json<GameDetail>, _>(|r| {
            let this = &[("id", "$response.body#/id")];
            api_doc::links(
                r.description("The game."),
                &[
                    ("GetGameReplay", "getGameReplay", this),
                    ("ExportGame", "exportGame", this),
                ],
            )
        });
    game_errors(op, &[])
}

/// The docs of [`export_game`].
pub fn export_game_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("exportGame")
        .summary("One stored game in the text notation")
        .description(
            "The game in the notation of `proto/GAME_EXPORT.md`, with tags `Room`, `Game`, \
             `Date`, `Result`, `Termination`, one per player and one per bot seat, and the \
             fair dice's tags.",
        )
        .tag("games")
        .response_with::<200, String, _>(|r| r.description("The game as text (`text/plain`)."));
    game_errors(op, &[])
}

fn parse_game_id(id: &str) -> Result<uuid::Uuid, ApiError> {
    uuid::Uuid::parse_str(id)
        .map_err(|e| bad_request(format!("{id:?} is not a game id (UUID): {e}")))
}

/// A stored game for the game endpoints: its row, its events read back in whichever
/// format it was stored (its packed log unpacked, or its JSON rows), its room's seats.
pub(crate) type StoredGame = (
    GameRecord,
    Vec<parchis_room_core::LoggedEvent>,
    Vec<parchis_store::SeatRecord>,
);

/// The stored game `id`, its events and its room's seats, for the game endpoints; one of
/// `client`'s stored-game reads ([`parchis_admission::Admission::game_read`]).
///
/// # Errors
/// `429 rate_limited` past the reads' budget, `400 bad_request` for a malformed id, `404 unknown_game`, `403 spectators_not_allowed`
/// while the game runs in a room that allows no spectators (it would show what a
/// `watch` of the room is refused), `500` when the store fails.
///
/// A running game of a room with a spectator delay (`spectator_delay_throws` N > 0) is
/// cut to what its spectators were shown (the events older than N throws), unless
/// `headers` carry the session token of one of its seats ([`SEAT_TOKEN_HEADER`]).
pub(crate) async fn load_game(
    state: &AppState,
    client: std::net::IpAddr,
    id: &str,
    headers: &HeaderMap,
) -> Result<StoredGame, ApiError> {
    state.admission().game_read(client)?;
    let id = parse_game_id(id)?;
    let stored = state
        .store()
        .get_game_log(id)
        .await
        .map_err(store_failed)?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                ErrorCode::UnknownGame,
                format!("no game has id {id}"),
            )
        })?;
    // Either format: the packed log (issue 28) unpacked by the engine's replay, or the rows.
    let events = parchis_room_core::persist::game_events(&stored)
        .map_err(|e| corrupt(&stored.game, e.to_string()))?;
    let game = stored.game;
    let room = state
        .store()
        .get_room(&game.room_code)
        .await
        .map_err(store_failed)?;
    // A room that allows no spectators shows its running game to nobody over HTTP
    // either (its players have their sockets); the game is readable once it ends.
    let spectators = room
        .as_ref()
        .and_then(|r| parchis_room_core::persist::settings_from(&r.room.settings).ok())
        .is_none_or(|(settings, _)| settings.spectators);
    if !spectators && !game.is_finished() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::SpectatorsNotAllowed,
            "this room does not allow spectators: its game can be read once it has ended",
        ));
    }
    let delay = room
        .as_ref()
        .and_then(|r| parchis_room_core::persist::settings_from(&r.room.settings).ok())
        .map_or(0, |(settings, _)| settings.spectator_delay_throws);
    let seats = room.map(|r| r.seats).unwrap_or_default();
    let events = if delay > 0 && !game.is_finished() && !is_seated(headers, &seats) {
        spectators_part(events, delay)
    } else {
        events
    };
    Ok((game, events, seats))
}

/// The header by which a player of a running game shows its seat's session token, to read
/// the whole game despite the room's spectator delay.
pub const SEAT_TOKEN_HEADER: &str = "x-parchis-seat-token";

/// Whether the request carries the session token of one of `seats`.
fn is_seated(headers: &HeaderMap, seats: &[parchis_store::SeatRecord]) -> bool {
    headers
        .get(SEAT_TOKEN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(parchis_store::hash_token)
        .is_some_and(|hash| {
            seats
                .iter()
                .any(|s| !s.token_hash.is_empty() && s.token_hash == hash)
        })
}

/// The part of a running game's stored `events` that its spectators have been shown
/// with a delay of `delay` throws (`parchis_room_core::delay`'s rule, the live stream's).
fn spectators_part(
    mut events: Vec<parchis_room_core::LoggedEvent>,
    delay: u8,
) -> Vec<parchis_room_core::LoggedEvent> {
    let shown = parchis_room_core::delay::visible_prefix(events.iter().map(|e| &e.event), delay);
    events.truncate(shown);
    events
}

fn bot_level(name: Option<&str>) -> Option<BotLevel> {
    name.and_then(|n| serde_json::from_value(serde_json::Value::String(n.to_owned())).ok())
}

/// The stored seats as players (a seat whose colour does not parse is left out).
pub(crate) fn players(seats: Vec<parchis_store::SeatRecord>) -> Vec<GamePlayer> {
    seats
        .into_iter()
        .filter_map(|s| {
            Some(GamePlayer {
                colour: s.colour.parse::<Colour>().ok()?,
                bot: bot_level(s.bot.as_deref()),
                name: s.display_name,
                creator: s.is_creator,
            })
        })
        .collect()
}

fn corrupt(game: &GameRecord, message: String) -> ApiError {
    tracing::error!(room = %game.room_code, game = %game.id, %message, "stored game unreadable");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::Internal,
        message,
    )
}

/// The stored events (read through the room's one persistence mapping, whatever their
/// format) as `(seq, at_ms, event)`.
fn room_events(events: Vec<parchis_room_core::LoggedEvent>) -> Vec<(i64, i64, RoomEvent)> {
    events
        .into_iter()
        .map(|e| (e.seq as i64, e.at_ms, e.event))
        .collect()
}

/// `GET /api/games/{id}`: one stored game ([`GameDetail`]): players (with their bot
/// level), result and every event with its seq. `400 bad_request` for a malformed id,
/// `404 unknown_game`, `403 spectators_not_allowed` while a game of a room without
/// spectators runs.
pub async fn get_game(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    ApiPath(GameIdPath { id }): ApiPath<GameIdPath>,
    headers: HeaderMap,
) -> Result<Json<GameDetail>, ApiError> {
    let (game, events, seats) = load_game(&state, client, &id, &headers).await?;
    let events = room_events(events);
    Ok(Json(GameDetail {
        game: live_summary(&state, game),
        players: players(seats),
        events: events
            .into_iter()
            .map(|(seq, at_ms, event)| StoredEvent { seq, at_ms, event })
            .collect(),
    }))
}

/// `"YYYY.MM.DD"` (UTC) of a unix time in ms: the `Date` tag of an export.
pub fn date_tag(ms: i64) -> String {
    // Days to civil date (H. Hinnant's algorithm), proleptic Gregorian calendar.
    let z = ms.div_euclid(86_400_000) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

/// `Yellow` for yellow: a colour's tag name.
fn colour_tag(colour: Colour) -> String {
    let name = colour.name();
    let mut chars = name.chars();
    chars
        .next()
        .map(|f| f.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// `GET /api/games/{id}/export`: the game in the text notation of `proto/GAME_EXPORT.md`
/// (`text/plain`), with tags `Room`, `Game`, `Date` (the start, UTC, `YYYY.MM.DD`),
/// `Result` (`*` while it runs or when closed by an admin), `Termination` (the stored
/// reason, once finished), one tag per player named after its colour (`[Yellow "Ana"]`)
/// and, for a seat a bot played, one more with its level (`[RedBot "greedy"]`).
pub async fn export_game(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    ApiPath(GameIdPath { id }): ApiPath<GameIdPath>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (game, log, seats) = load_game(&state, client, &id, &headers).await?;
    // The server's one replay of a stored log (checks seqs and the engine events).
    let replayed = parchis_room_core::replay(&log).map_err(|e| corrupt(&game, e.to_string()))?;
    let mut record = replayed.record;
    let replayed = replayed.game;
    let mut opening = Vec::new();
    let mut first_roll_throw = None;
    for e in &log {
        match &e.event {
            RoomEvent::OpeningRoll { rolls, .. } => {
                for r in rolls {
                    let dice: Vec<String> = r.dice.iter().map(u8::to_string).collect();
                    let k = r.throw.map(|k| k.to_string()).unwrap_or_else(|| "?".into());
                    opening.push(format!("{k} {} {}", r.colour.letter(), dice.join(",")));
                }
            }
            RoomEvent::Game { throw, .. } if first_roll_throw.is_none() => {
                first_roll_throw = *throw;
            }
            _ => {}
        }
    }
    record.tags.push(("Room".into(), game.room_code.clone()));
    if let Some(d) = public_dice(&game) {
        parchis_room_core::dice::export_tags(&mut record.tags, &d, &opening, first_roll_throw);
    }
    record.tags.push(("Game".into(), game.id.to_string()));
    record
        .tags
        .push(("Date".into(), date_tag(game.created_at_ms)));
    record.tags.push((
        "Result".into(),
        parchis_engine::result_tag(&replayed).unwrap_or_else(|| "*".into()),
    ));
    if let Some(reason) = &game.reason {
        record.tags.push(("Termination".into(), reason.clone()));
    }
    for seat in &seats {
        let Ok(colour) = seat.colour.parse::<Colour>() else {
            continue;
        };
        record
            .tags
            .push((colour_tag(colour), seat.display_name.clone()));
        if let Some(level) = &seat.bot {
            record
                .tags
                .push((format!("{}Bot", colour_tag(colour)), level.clone()));
        }
    }
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; charset=utf-8",
        )],
        record.to_string(),
    )
        .into_response())
}

/// A stored game's public dice ([`parchis_room_core::dice::public`]); an unreadable record
/// is logged and the game shown without dice.
fn public_dice(g: &parchis_store::GameRecord) -> Option<parchis_protocol::GameDice> {
    parchis_room_core::dice::public(g).unwrap_or_else(|e| {
        tracing::error!(game = %g.id, error = %e, "stored dice unreadable");
        None
    })
}

#[cfg(test)]
mod tests {
    use super::date_tag;

    #[test]
    fn date_tags_are_utc_calendar_days() {
        assert_eq!(date_tag(0), "1970.01.01");
        assert_eq!(date_tag(1_767_225_600_000), "2026.01.01");
        assert_eq!(date_tag(1_767_225_599_999), "2025.12.31");
        assert_eq!(date_tag(951_782_400_000), "2000.02.29");
        assert_eq!(date_tag(4_107_542_400_000), "2100.03.01");
    }
}
