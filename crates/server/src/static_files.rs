//! The web client: plain HTML, CSS and ES modules from `web/` at the repository root,
//! embedded into the binary at compile time (`include_str!`), so running the server needs
//! nothing else. No build step: the files in `web/` are what the browser gets.
//!
//! Routes: `/` and `/index.html` (the app shell), `/r/{code}` (an invite link: the same
//! shell, which opens room `code`; `/?room=CODE` works too), one route per asset, and
//! `/FAIR_DICE.md`, the explanation of the fair dice the client links to
//! (`docs/FAIR_DICE.md`, as plain text).

use crate::state::AppState;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// One embedded file: its URL path, content type and contents.
#[derive(Clone, Copy, Debug)]
pub struct Asset {
    /// URL path, e.g. `/app.js`.
    pub path: &'static str,
    /// The file's name inside `web/`.
    pub file: &'static str,
    /// `Content-Type` header value.
    pub content_type: &'static str,
    /// The file's bytes.
    pub body: &'static str,
}

macro_rules! asset {
    ($file:literal, $ct:expr) => {
        Asset {
            path: concat!("/", $file),
            file: $file,
            content_type: $ct,
            body: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../web/", $file)),
        }
    };
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";

/// Every file of the web client, as embedded.
pub const ASSETS: &[Asset] = &[
    asset!("index.html", HTML),
    asset!("app.js", JS),
    asset!("board.js", JS),
    asset!("i18n.js", JS),
    asset!("net.js", JS),
    asset!("state.js", JS),
    asset!("sound.js", JS),
    asset!("fairdice.js", JS),
    asset!("prefs.js", JS),
    asset!("dialogs.js", JS),
    asset!("autoplay.js", JS),
    asset!("invite.js", JS),
    asset!("emotes.js", JS),
    asset!("fairpage.js", JS),
    asset!("ctx.js", JS),
    asset!("ui.js", JS),
    asset!("fairline.js", JS),
    asset!("session.js", JS),
    asset!("lobby.js", JS),
    asset!("room.js", JS),
    asset!("game.js", JS),
    asset!("result.js", JS),
    asset!("replay.js", JS),
    asset!("i18n_accounts.js", JS),
    asset!("account.js", JS),
    asset!("profile.js", JS),
    asset!("leaderboard.js", JS),
    asset!("chart.js", JS),
    asset!("pairing.js", JS),
    asset!("pairing_state.js", JS),
    asset!("i18n_tournaments.js", JS),
    asset!("tournament.js", JS),
    asset!("tournament_model.js", JS),
    asset!("tournament_alert.js", JS),
    asset!("style.css", CSS),
    asset!("favicon.svg", SVG),
];

/// `docs/FAIR_DICE.md`, served at `/FAIR_DICE.md` as plain text.
pub const FAIR_DICE: Asset = Asset {
    path: "/FAIR_DICE.md",
    file: "FAIR_DICE.md",
    content_type: "text/plain; charset=utf-8",
    body: include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/FAIR_DICE.md"
    )),
};

/// The embedded `index.html`.
pub fn index_html() -> &'static str {
    ASSETS[0].body
}

/// Content Security Policy of the client: only its own scripts, styles and WebSocket.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
                   img-src 'self' data:; connect-src 'self' ws: wss:; base-uri 'none'; \
                   frame-ancestors 'none'; form-action 'self'";

fn respond(asset: &Asset) -> Response {
    let mut res = asset.body.into_response();
    let h = res.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    // The files change only with the binary; revalidating keeps an upgrade visible.
    h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if asset.content_type == HTML {
        h.insert(
            axum::http::header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    res
}

/// Routes for the web client.
pub fn router() -> Router<AppState> {
    let index = ASSETS[0];
    let mut router = Router::new()
        .route("/", get(move || async move { respond(&index) }))
        .route("/r/{code}", get(move || async move { respond(&index) }))
        .route(FAIR_DICE.path, get(|| async { respond(&FAIR_DICE) }));
    for asset in ASSETS {
        let asset = *asset;
        router = router.route(asset.path, get(move || async move { respond(&asset) }));
    }
    router
}
