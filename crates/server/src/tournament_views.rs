//! Cluster mode: every director's published views go out on `P.tview.<ID>`
//! ([`NatsRelay`], the directors' `ViewRelay`), with the last seq of the log they fold,
//! for the live subscribers of every node ([`crate::tournament_relay::remote_views`];
//! `docs/TOURNAMENTS.md`, "Cluster"). Best effort: a lost message delays a view, the
//! subscribers fold the store again now and then.

use parchis_cluster::Bus;
use parchis_director::ViewRelay;
use parchis_tournament::TournamentView;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tracing::debug;
use uuid::Uuid;

/// The version of `PublishedOwned`'s shape.
pub const VIEWS_VERSION: u32 = 1;

/// A published view on `P.tview.<ID>`.
#[derive(Serialize)]
struct Published<'a> {
    v: u32,
    tournament: Uuid,
    seq: i64,
    view: &'a TournamentView,
}

/// [`Published`] as read.
#[derive(Deserialize)]
pub(crate) struct PublishedOwned {
    /// [`VIEWS_VERSION`].
    pub v: u32,
    /// The tournament.
    pub tournament: Uuid,
    /// Its log's last seq the view folds.
    pub seq: i64,
    /// The view.
    pub view: TournamentView,
}

/// The directors' [`ViewRelay`] over NATS (`P.tview.<ID>`).
pub struct NatsRelay {
    bus: Bus,
}

impl NatsRelay {
    /// Publishes on `bus`.
    pub fn new(bus: Bus) -> NatsRelay {
        NatsRelay { bus }
    }
}

impl ViewRelay for NatsRelay {
    fn published(
        &self,
        id: Uuid,
        seq: i64,
        view: Arc<TournamentView>,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>> {
        let client = self.bus.client().clone();
        let subject = self.bus.tournament_view_subject(&id);
        let body = serde_json::to_vec(&Published {
            v: VIEWS_VERSION,
            tournament: id,
            seq,
            view: &view,
        });
        Box::pin(async move {
            let Ok(body) = body else { return };
            if let Err(e) = client.publish(subject, body.into()).await {
                debug!(tournament = %id, seq, error = %e, "tournament view not relayed");
            }
        })
    }
}
