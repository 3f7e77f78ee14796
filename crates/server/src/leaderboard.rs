//! `GET /api/leaderboard?preset=online&limit=50` (issue 26): a rating pool's players with
//! at least [`MIN_LEADERBOARD_GAMES`] rated games, best first by the conservative rating
//! μ − 3σ ([`Leaderboard`]).

use aide::transform::TransformOperation;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use parchis_engine::RuleSet;
use parchis_protocol::{
    ErrorCode, Leaderboard, LeaderboardEntry, LeaderboardQuery, LEADERBOARD_LIMIT_DEFAULT,
    LEADERBOARD_LIMIT_MAX,
};
use parchis_ratings::{Pool, MIN_LEADERBOARD_GAMES};

use crate::accounts::ratings::pool_rating;
use crate::api_doc;
use crate::client_addr::ClientAddr;
use crate::http::ApiError;
use crate::state::AppState;

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, ErrorCode::BadRequest, message)
}

fn store_failed(e: parchis_store::StoreError) -> ApiError {
    tracing::warn!(error = %e, "store failed serving the leaderboard");
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::Internal,
        "the store failed",
    )
}

/// The pool and the bounded limit of `query`; `400 bad_request` for a name that is not a
/// rule set or a limit outside 1 to [`LEADERBOARD_LIMIT_MAX`].
fn pool_and_limit(query: &LeaderboardQuery) -> Result<(Pool, u32), ApiError> {
    let name = query.preset.as_deref().unwrap_or("online").trim();
    if name.len() > parchis_ratings::pool::MAX_POOL_NAME {
        return Err(bad_request("preset: not a rule set (too long)"));
    }
    let rules = RuleSet::from_name(name).map_err(|e| bad_request(format!("preset: {e}")))?;
    let limit = query.limit.unwrap_or(LEADERBOARD_LIMIT_DEFAULT);
    if !(1..=LEADERBOARD_LIMIT_MAX).contains(&limit) {
        return Err(bad_request(format!(
            "limit must be 1 to {LEADERBOARD_LIMIT_MAX}, got {limit}"
        )));
    }
    Ok((Pool::of(&rules), limit))
}

/// `GET /api/leaderboard`: [`Leaderboard`] of the pool `preset` (default `online`), at
/// most `limit` players (default 50, 1 to 100). Banned and deleted accounts are left out
/// (so a page may hold fewer). `400 bad_request` for an unknown parameter, a name that is
/// not a rule set or a limit out of range; `429` past this address's read limit.
pub async fn leaderboard(
    State(state): State<AppState>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    query: Result<Query<LeaderboardQuery>, QueryRejection>,
) -> Result<Json<Leaderboard>, ApiError> {
    state.admission().game_read(client)?;
    let Query(query) = query.map_err(|e| bad_request(e.body_text()))?;
    let (pool, limit) = pool_and_limit(&query)?;
    let rows = state
        .store()
        .leaderboard(pool.as_str(), limit, i64::from(MIN_LEADERBOARD_GAMES))
        .await
        .map_err(store_failed)?;
    let mut players = Vec::with_capacity(rows.len());
    for row in &rows {
        let account = match state.store().accounts() {
            Some(accounts) => accounts
                .account(row.account_id)
                .await
                .map_err(store_failed)?,
            None => None,
        };
        let Some(account) = account.filter(|a| a.is_active()) else {
            continue;
        };
        let r = pool_rating(row);
        players.push(LeaderboardEntry {
            rank: players.len() as u32 + 1,
            username: account.username,
            mu: r.mu,
            sigma: r.sigma,
            games: r.games,
            display: r.display,
        });
    }
    Ok(Json(Leaderboard {
        pool: pool.as_str().to_owned(),
        players,
    }))
}

/// The docs of [`leaderboard`].
pub fn leaderboard_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    let op = op
        .id("getLeaderboard")
        .summary("A rating pool's best players")
        .description(
            "The players of the pool `preset` (a rule set's name, default `online`) with at \
             least 5 rated games, best first by the conservative rating μ − 3σ, then more \
             games; at most `limit` (default 50, 1 to 100).",
        )
        .tag("players")
        .response_with::<200, Json<Leaderboard>, _>(|r| r.description("The leaderboard."));
    api_doc::errors(
        op,
        &[
            (
                400,
                "bad_request: an unknown parameter, a preset that is not a rule set, or a \
                 limit outside 1 to 100.",
            ),
            (
                429,
                "rate_limited: this address's reads (or a connection limit).",
            ),
            (500, "internal: the store failed."),
        ],
    )
}
