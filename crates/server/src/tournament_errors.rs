//! The HTTP answers of the tournament routes' refusals (`crates/server/src/tournaments.rs`,
//! `proto/README.md` "Tournaments"): `400 bad_request`, `403 not_referee`, `404
//! unknown_tournament`, `409 tournament_refused`, `503 room_unavailable`, `500 internal`,
//! shared by the routes and by the cluster's forwarding of their commands
//! ([`crate::tournament_relay`]), which answers a forwarded command as the route would.

use axum::http::StatusCode;
use parchis_director::DirectorError;
use parchis_protocol::ErrorCode;
use parchis_store::StoreError;
use parchis_tournament::CommandError;

use crate::http::ApiError;

/// An error answer.
pub(crate) fn err(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> ApiError {
    ApiError::new(status, code, message)
}

/// `400 bad_request` with `message`.
pub(crate) fn bad(message: impl Into<String>) -> ApiError {
    err(StatusCode::BAD_REQUEST, ErrorCode::BadRequest, message)
}

/// `404 unknown_tournament`.
pub(crate) fn unknown() -> ApiError {
    let code = ErrorCode::UnknownTournament;
    err(StatusCode::NOT_FOUND, code, code.describe())
}

/// The answer of a store failure: `503 room_unavailable` when it is out of reach (or
/// keeps no tournaments), else `500 internal` (logged).
pub(crate) fn store_error(e: StoreError) -> ApiError {
    if e.is_unreachable() || matches!(e, StoreError::Unsupported(_)) {
        let code = ErrorCode::RoomUnavailable;
        return err(StatusCode::SERVICE_UNAVAILABLE, code, e.to_string());
    }
    tracing::error!(error = %e, "tournament store failed");
    let code = ErrorCode::Internal;
    err(StatusCode::INTERNAL_SERVER_ERROR, code, code.describe())
}

/// The HTTP answer of a director's refusal.
pub(crate) fn refused(e: DirectorError) -> ApiError {
    use CommandError as C;
    match e {
        DirectorError::NotFound(_) => unknown(),
        DirectorError::Settings(e) => bad(e.to_string()),
        DirectorError::Store(e) => store_error(e),
        DirectorError::Refused(c) => {
            let text = c.to_string();
            match c {
                C::NotOrganiser | C::NotReferee => {
                    err(StatusCode::FORBIDDEN, ErrorCode::NotReferee, text)
                }
                C::UnknownMatch(_) | C::UnknownEntrant(_) => {
                    err(StatusCode::NOT_FOUND, ErrorCode::UnknownTournament, text)
                }
                C::PartnerRequired
                | C::NoPartnerAllowed
                | C::OwnPartner
                | C::TeamName
                | C::BadPlaces(_)
                | C::Reason
                | C::BelowMinRating { .. } => bad(text),
                C::Internal(e) => {
                    tracing::error!(error = %e, "director's decision did not fold");
                    err(StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::Internal, text)
                }
                _ => err(StatusCode::CONFLICT, ErrorCode::TournamentRefused, text),
            }
        }
        DirectorError::TooManyOpen { .. } => err(
            StatusCode::CONFLICT,
            ErrorCode::TooManyTournaments,
            e.to_string(),
        ),
        DirectorError::Stopped | DirectorError::Elsewhere { .. } => err(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::RoomUnavailable,
            e.to_string(),
        ),
        e @ (DirectorError::Corrupt(_) | DirectorError::Unreadable(_)) => {
            tracing::error!(error = %e, "tournament unreadable");
            err(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                e.to_string(),
            )
        }
    }
}
