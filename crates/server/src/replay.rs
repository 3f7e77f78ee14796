//! `GET /api/games/{id}/replay`: a stored game, step by step, for the web client's replay
//! viewer. Each step is one action of the game (a roll, a move, a timeout, an
//! abandonment) with the engine events it caused and the board state after it (the
//! position less its rule set, which the replay gives once), so the viewer draws
//! positions and knows no rules. Rebuilt from the stored events by replaying
//! their actions through the engine (the log is read by [`parchis_room_core::replay()`]).

use crate::client_addr::ClientAddr;
use crate::games::{game_errors, live_summary, load_game, players, GameIdPath};
use crate::http::{ApiError, ApiPath};
use crate::state::AppState;
use aide::transform::TransformOperation;
use axum::extract::{Extension, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use parchis_engine::{Action, BoardState, Colour, Event, GameRecord, Location, RuleSet};
use parchis_protocol::{BoardView, ErrorCode, GameReplay, ReplayStep, StepMove};

/// The steps of a game started with `rules`, `seats` and `first` whose engine events were
/// `events`: step 0 is the initial position, then one per action.
///
/// # Errors
/// A text when the events do not replay (an illegal action, a bad setup).
pub fn replay_steps(
    rules: RuleSet,
    seats: Vec<Colour>,
    first: Colour,
    events: &[Event],
) -> Result<Vec<ReplayStep>, String> {
    let record = GameRecord::from_events(rules, seats, first, events);
    let mut game = record.start().map_err(|e| e.to_string())?;
    let mut steps = vec![ReplayStep {
        colour: None,
        action: None,
        dice: None,
        log: Vec::new(),
        moves: Vec::new(),
        position: BoardState::from(&game),
    }];
    for (i, (colour, action)) in record.actions.iter().enumerate() {
        let log = game
            .play(action)
            .map_err(|e| format!("action {i} ({colour} {action}): {e}"))?;
        let mut moves: Vec<StepMove> = Vec::new();
        for e in &log {
            match *e {
                Event::PieceExited { colour, square, .. } => moves.push(StepMove {
                    colour,
                    from: Location::Nest,
                    to: Location::Ring(square),
                    captures: Vec::new(),
                }),
                Event::PieceMoved {
                    colour, from, to, ..
                } => moves.push(StepMove {
                    colour,
                    from,
                    to,
                    captures: Vec::new(),
                }),
                Event::PieceCaptured { square, .. } => {
                    if let Some(m) = moves.last_mut() {
                        m.captures.push(Location::Ring(square));
                    }
                }
                _ => {}
            }
        }
        steps.push(ReplayStep {
            colour: Some(*colour),
            action: Some(*action),
            dice: match action {
                Action::Roll { dice } => Some(dice.values().to_vec()),
                _ => None,
            },
            log,
            moves,
            position: BoardState::from(&game),
        });
    }
    Ok(steps)
}

/// The docs of [`get_replay`].
pub fn get_replay_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("getGameReplay")
        .summary("One stored game, step by step")
        .description(
            "For a replay viewer: step 0 is the start, then one step per action (a roll, a \
             move, a timeout, an abandonment) with its engine events, the moves and the \
             board after it; the rule set is given once.",
        )
        .tag("games")
        .response_with::<200, axum::Json<GameReplay>, _>(|r| r.description("The replay."));
    game_errors(op, &[])
}

/// `GET /api/games/{id}/replay`: the stored game as [`GameReplay`]. `400 bad_request` for a
/// malformed id, `404 unknown_game`, `403 spectators_not_allowed` while a game of a room
/// without spectators runs, `429 rate_limited` past the address's stored-game reads,
/// `500 internal` when the stored events do not replay.
///
/// The replay (every action through the engine) and its JSON (hundreds of KB for a long
/// game) are built on a blocking thread: the async workers, which serve every socket and
/// room, do not wait for them.
pub async fn get_replay(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    ApiPath(GameIdPath { id }): ApiPath<GameIdPath>,
    headers: axum::http::HeaderMap,
) -> Result<Response, ApiError> {
    let (game, events, seats) = load_game(&state, client, &id, &headers).await?;
    let game_summary = live_summary(&state, game.clone());
    let built = tokio::task::spawn_blocking(move || build(game, &events, seats, game_summary))
        .await
        .map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                format!("the replay was not built: {e}"),
            )
        })?;
    let body = built?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// The replay of a stored game, serialised: `(game, events, seats)` as read, `summary`
/// the game's wire summary.
fn build(
    game: parchis_store::GameRecord,
    log: &[parchis_room_core::LoggedEvent],
    seats: Vec<parchis_store::SeatRecord>,
    summary: parchis_protocol::GameSummary,
) -> Result<Vec<u8>, ApiError> {
    let corrupt = |message: String| {
        tracing::error!(room = %game.room_code, game = %game.id, %message, "stored game does not replay");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Internal,
            message,
        )
    };
    // The server's one replay of a stored log (checks seqs and the engine events).
    let replayed = parchis_room_core::replay(log).map_err(|e| corrupt(e.to_string()))?;
    let (rules, seated, first) = replayed.start;
    let engine_events = replayed.engine_events;
    let steps = replay_steps(rules, seated, first, &engine_events).map_err(corrupt)?;
    let replay = GameReplay {
        game: summary,
        players: players(seats),
        rules,
        board: BoardView::default(),
        steps,
    };
    serde_json::to_vec(&replay).map_err(|e| corrupt(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_engine::{Dice, Game, Position};

    #[test]
    fn steps_replay_every_action_with_its_position() {
        let mut g = Game::new(
            RuleSet::online(),
            &[Colour::Yellow, Colour::Red],
            Colour::Yellow,
        )
        .expect("game");
        let mut events = Vec::new();
        let rolls = [(5, 3), (2, 4), (5, 5), (1, 2), (6, 3)];
        for (a, b) in rolls {
            if g.outcome().is_some() {
                break;
            }
            events.extend(
                g.play(&Action::Roll {
                    dice: Dice::two(a, b).expect("dice"),
                })
                .expect("roll"),
            );
            while let Some(a) = g.legal_actions().first().copied() {
                events.extend(g.play(&a).expect("legal"));
            }
        }
        let steps = replay_steps(
            RuleSet::online(),
            vec![Colour::Yellow, Colour::Red],
            Colour::Yellow,
            &events,
        )
        .expect("replays");
        assert_eq!(steps[0].action, None);
        let last = steps
            .last()
            .map(|s| Position::from_state(RuleSet::online(), s.position.clone()));
        assert_eq!(last, Some(Position::from(&g)));
        let replayed: Vec<Event> = steps.iter().flat_map(|s| s.log.clone()).collect();
        assert_eq!(replayed, events, "the steps' logs are the stored events");
        // Step 1 is yellow's roll of 5,3; step 2 its exit onto square 5.
        assert_eq!(steps[1].dice, Some(vec![5, 3]));
        assert_eq!(steps[2].moves[0].to, Location::Ring(5));
        assert_eq!(steps[2].moves[0].from, Location::Nest);
    }
}
