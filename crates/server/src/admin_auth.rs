//! The admin API's guard: the bearer token, compared in equal time, and the per-address
//! budget of wrong guesses (admission control). Used by every admin route, the debug
//! hooks included.

use crate::http::ApiError;
use crate::metrics::ADMIN_ACTIONS;
use crate::state::AppState;
use axum::http::{HeaderMap, StatusCode};
use parchis_protocol::ErrorCode;
use sha2::{Digest, Sha256};
use tracing::warn;

/// Equal-time comparison of two secrets (through their SHA-256 digests, so neither the
/// length nor the first differing byte shows in the timing).
fn same_secret(a: &str, b: &str) -> bool {
    let (da, db) = (Sha256::digest(a.as_bytes()), Sha256::digest(b.as_bytes()));
    da.iter()
        .zip(db.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// Checks the bearer token of an admin request for `action`.
///
/// # Errors
/// `404 admin_disabled` when no token is configured; `401 unauthorized` when the header
/// is missing, malformed or carries another token; `429 rate_limited` (every request,
/// whatever its token) from an address whose wrong tokens ran out
/// ([`parchis_admission::ADMIN_GUESSES_PER_MINUTE`]).
pub fn authorize(
    state: &AppState,
    client: std::net::IpAddr,
    headers: &HeaderMap,
    action: &str,
) -> Result<(), ApiError> {
    let Some(expected) = state.config().admin_token.as_deref() else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::AdminDisabled,
            ErrorCode::AdminDisabled.describe(),
        ));
    };
    // An address out of wrong tokens is not even compared (no guess gets through).
    state.admission().admin_attempt(client)?;
    let given = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(token) if same_secret(token, expected) => Ok(()),
        other => {
            let why = if other.is_some() {
                "wrong token"
            } else {
                "no token"
            };
            state.admission().admin_token_wrong(client);
            warn!(action, why, %client, "admin request refused");
            metrics::counter!(ADMIN_ACTIONS, "action" => "refused").increment(1);
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                ErrorCode::Unauthorized,
                ErrorCode::Unauthorized.describe(),
            ))
        }
    }
}
