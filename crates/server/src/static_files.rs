//! The web client's spot: `/` will serve the browser client (a later issue). Until then it
//! serves a short page that points to the API and the protocol documentation.

use crate::state::AppState;
use axum::response::Html;
use axum::routing::get;
use axum::Router;

/// Routes for the web client.
pub fn router() -> Router<AppState> {
    Router::new().route("/", get(index))
}

async fn index() -> Html<&'static str> {
    Html(
        "<!doctype html><meta charset=utf-8><title>Parchís</title>\
         <h1>Parchís server</h1>\
         <p>The web client is not built yet. Create a room with <code>POST /api/rooms</code>, \
         list rooms with <code>GET /api/rooms</code>, and play over the WebSocket at \
         <code>/ws</code> (see <code>proto/README.md</code>).</p>",
    )
}
