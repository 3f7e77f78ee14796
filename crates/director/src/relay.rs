//! Cluster mode: a director's published views leave the node ([`ViewRelay`]), so that
//! the live subscription (`GET /api/tournaments/{id}/events`) is served by every node, not
//! only by the one directing the tournament (`docs/TOURNAMENTS.md`, "Cluster"). The
//! server implements it over NATS; single-node mode has none.

use parchis_tournament::TournamentView;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use uuid::Uuid;

/// Where a director's published views go besides its local subscribers.
pub trait ViewRelay: Send + Sync + 'static {
    /// Tournament `id`'s view once its log's last stored seq is `seq` (views of one
    /// director come in seq order; a reader keeps the highest seq it saw). Best effort: a
    /// lost message delays a remote subscriber, it loses nothing stored.
    fn published(
        &self,
        id: Uuid,
        seq: i64,
        view: Arc<TournamentView>,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>>;
}
