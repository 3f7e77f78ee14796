//! CSRF: a request that changes state (any method but `GET`, `HEAD` and `OPTIONS`) from
//! a browser page of another origin is refused 403 `origin_not_allowed`, by the same
//! allow-list as the WebSocket ([`crate::origin`]): its `Origin` must be allowed, and a
//! browser's `Sec-Fetch-Site: cross-site` without an allowed `Origin` is refused too.
//! Apps send no `Origin` and pass. With `SameSite=Lax` cookies this keeps another site's
//! forms and scripts from acting for a logged-in player.

use std::sync::Arc;

use axum::extract::{Extension, Request};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use parchis_protocol::ErrorCode;

use super::shared::Accounts;
use crate::http::ApiError;

/// The middleware (see the module docs); the allow-list is [`Accounts::allowed_origins`].
pub async fn check(
    Extension(accounts): Extension<Arc<Accounts>>,
    request: Request,
    next: Next,
) -> Response {
    if matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    ) {
        return next.run(request).await;
    }
    let headers = request.headers();
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let origin = headers
        .get(header::ORIGIN)
        .map(|v| v.to_str().unwrap_or("?"));
    let allowed_origins = &accounts.allowed_origins;
    let same_host = crate::origin::allowed(origin, text(header::HOST), allowed_origins);
    let cross_site = origin.is_none()
        && headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) == Some("cross-site");
    if !same_host || cross_site {
        tracing::info!(?origin, method = %request.method(), "cross-site request refused");
        return ApiError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::OriginNotAllowed,
            format!(
                "requests from {} may not change anything here",
                origin.unwrap_or("another site")
            ),
        )
        .into_response();
    }
    next.run(request).await
}
