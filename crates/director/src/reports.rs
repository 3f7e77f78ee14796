//! What happened in a tournament's rooms, as the core's inputs: read back from the rooms
//! (seats taken: from the room's view, here or on the node running it) and from the store (games started and finished), so that a
//! report missed while the director was down (a kill -9, a failover) is learnt again on
//! the next sweep. Every report is idempotent at the core: told twice, it stores nothing.
//!
//! A finished game's places are the engine's standings (D-40: finish order, then pieces
//! in the goal, then squares still to travel; abandoned seats last) of the game replayed
//! from its stored log, never the colours' order.

use parchis_engine::{standings, Colour};
use parchis_protocol::GameResult;
use parchis_room::Rooms;
use parchis_store::{GameRecord, Store};
use parchis_tournament::{Input, Match, MatchStatus, Tournament};
use tracing::warn;

/// The inputs the rooms and games of `t`'s open and playing matches call for now.
pub async fn collect(t: &Tournament, rooms: &Rooms, store: &dyn Store) -> Vec<Input> {
    let mut out = Vec::new();
    for m in t.matches() {
        if !matches!(m.status, MatchStatus::Open | MatchStatus::Playing) {
            continue;
        }
        let Some(room) = m.room.as_deref() else {
            continue;
        };
        if m.status == MatchStatus::Open {
            out.extend(seated(t, m, rooms, room).await);
        }
        match current_game(m, store, room).await {
            Ok(Some(game)) => {
                if m.game_id != Some(game.id) {
                    out.push(Input::GameStarted {
                        id: m.id,
                        game_id: game.id,
                    });
                }
                if game.is_finished() && game.reason.as_deref() != Some("closed_by_admin") {
                    match places(store, &game).await {
                        Ok(places) => out.push(Input::GameFinished {
                            id: m.id,
                            game_id: game.id,
                            places,
                        }),
                        Err(e) => {
                            warn!(tournament = %t.id(), r#match = %m.id, game = %game.id, error = %e, "finished game unreadable")
                        }
                    }
                }
            }
            Ok(None) => {}
            Err(e) => {
                warn!(tournament = %t.id(), r#match = %m.id, %room, error = %e, "games of the match's room unreadable")
            }
        }
    }
    out
}

/// `Seated` for every reserved person's seat taken in the running room.
async fn seated(t: &Tournament, m: &Match, rooms: &Rooms, room: &str) -> Vec<Input> {
    // Here, or (cluster mode) asked of the node running the room.
    let Some(view) = rooms.room_view(room).await else {
        return Vec::new();
    };
    m.seats
        .iter()
        .filter(|s| {
            view.seats
                .iter()
                .any(|v| v.colour == s.colour && v.bot.is_none() && !v.abandoned)
        })
        .filter_map(|s| {
            t.entrant(s.entrant)?
                .players
                .get(usize::from(s.player))?
                .account
        })
        .filter(|account| !m.seated.contains(account))
        .map(|account| Input::Seated { id: m.id, account })
        .collect()
}

/// The match's current game in its room: the newest game of the room that is not a
/// replaced one.
async fn current_game(
    m: &Match,
    store: &dyn Store,
    room: &str,
) -> Result<Option<GameRecord>, parchis_store::StoreError> {
    let games = store.list_games(room).await?;
    Ok(games
        .into_iter()
        .filter(|g| !m.replaced_games.contains(&g.id))
        .max_by_key(|g| (g.created_at_ms, g.id)))
}

/// The places of finished `game`, best first, from its replayed log. When the stored log
/// does not replay (a replay that refuses a move the live game made: a bug reported
/// apart), the stored result's winner (and partner) come first and the other colours
/// are left out: the core ranks them after, in table order.
async fn places(store: &dyn Store, game: &GameRecord) -> Result<Vec<Colour>, String> {
    let stored = store
        .get_game_log(game.id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("game vanished")?;
    // Either format: the packed log (issue 28) or the JSON rows of an older game.
    let log = parchis_room_core::persist::game_events(&stored).map_err(|e| e.to_string())?;
    match parchis_room_core::replay(&log) {
        Ok(replayed) => Ok(standings(&replayed.game, &[])
            .into_iter()
            .map(|s| s.colour)
            .collect()),
        Err(e) => {
            warn!(game = %game.id, error = %e, "stored game does not replay: places from its result");
            let result: GameResult = game
                .result
                .clone()
                .ok_or("finished without a result")
                .and_then(|r| serde_json::from_value(r).map_err(|_| "unreadable result"))?;
            Ok(result.winner.into_iter().chain(result.partner).collect())
        }
    }
}
