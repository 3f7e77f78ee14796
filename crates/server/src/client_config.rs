//! `GET /api/config`: what the web client needs to know about this server, today its
//! public base URL for invite links ([`ClientConfig`]).

use crate::state::AppState;
use aide::transform::TransformOperation;
use axum::extract::State;
use axum::Json;
use parchis_protocol::ClientConfig;

/// `GET /api/config`: `200` with [`ClientConfig`]. Never fails.
pub async fn get_config(State(state): State<AppState>) -> Json<ClientConfig> {
    Json(ClientConfig {
        public_url: invite_base(&state.config().public_url),
    })
}

/// The OpenAPI docs of [`get_config`].
pub fn get_config_docs(op: TransformOperation<'_>) -> TransformOperation<'_> {
    op.id("getClientConfig")
        .summary("What a client needs to know about this server")
        .description(
            "`public_url`: the base of invite links (the server's `--public-url`), or \
             `null` when it names no reachable host (a wildcard bind); clients then use \
             their page's own address.",
        )
        .tag("operations")
        .response_with::<200, Json<ClientConfig>, _>(|r| r.description("The configuration."))
}

/// The base of invite links from the configured public URL (no trailing `/`), or `None`
/// when it names no reachable host: the default built from a wildcard bind address
/// (`http://0.0.0.0:8080`, `http://[::]:8080`) or an empty one. Clients then use the
/// page's own address.
pub fn invite_base(public_url: &str) -> Option<String> {
    let base = public_url.trim().trim_end_matches('/');
    let origin = crate::origin::origin_of(base)?;
    let host = origin.split_once("://").map(|(_, a)| a).unwrap_or_default();
    let unspecified = host == "0.0.0.0" || host.starts_with("0.0.0.0:") || host.starts_with("[::]");
    (!unspecified).then(|| base.to_owned())
}

#[cfg(test)]
mod tests {
    use super::invite_base;

    #[test]
    fn wildcard_and_empty_urls_give_no_base() {
        assert_eq!(
            invite_base("https://parchis.example/"),
            Some("https://parchis.example".into())
        );
        assert_eq!(
            invite_base("http://192.168.1.20:8080"),
            Some("http://192.168.1.20:8080".into())
        );
        assert_eq!(invite_base("http://0.0.0.0:8080"), None);
        assert_eq!(invite_base("http://[::]:8080"), None);
        assert_eq!(invite_base(""), None);
        assert_eq!(invite_base("parchis.example"), None);
    }
}
