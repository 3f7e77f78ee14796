//! The lease thread (`docs/CLUSTER.md`, "Lease thread"): the renewer and the heartbeat
//! run on an OS thread of their own (`parchis-leases`), on a current-thread tokio runtime
//! of their own, with lease connections of their own opened on that runtime
//! ([`parchis_store::Store::open_lease_keeper`]: their sockets are polled by it). So no
//! amount of work on the main runtime (a mass disconnect, presence, fan-out, writes) can
//! delay a renewal: before this, a burst that kept the main runtime's two workers busy
//! for a TTL made a node lose every lease (issue #13).
//!
//! What the renewer decides is unchanged ([`super::lease::judge`], a pure function); the
//! fencing is the store's and the same whichever runtime sends the statement.

use super::{lease, node};
use crate::state::NodeState;
use parchis_store::{LeaseKeeper, ViaStore};

/// Starts the lease thread; the server's tracker waits for it at shutdown (it ends when
/// the shutdown token is cancelled). Should the thread or its runtime not start, the
/// renewer and the heartbeat run on the main runtime instead (as before issue #13),
/// logged as an error.
pub fn start(state: &NodeState) {
    let main = tokio::runtime::Handle::current();
    let (done, ended) = tokio::sync::oneshot::channel::<()>();
    let on_thread = state.clone();
    let spawned = std::thread::Builder::new()
        .name("parchis-leases".into())
        .spawn(move || {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime.block_on(run(on_thread)),
                Err(e) => {
                    tracing::error!(error = %e, "no runtime for the lease thread: leases renewed on the main runtime");
                    let tracker = on_thread.tracker().clone();
                    tracker.spawn_on(run(on_thread), &main);
                }
            }
            let _ = done.send(());
        });
    match spawned {
        Ok(_) => {
            state.tracker().spawn(async move {
                let _ = ended.await;
            });
        }
        Err(e) => {
            tracing::error!(error = %e, "no lease thread: leases renewed on the main runtime");
            state.tracker().spawn(run(state.clone()));
        }
    }
}

/// Opens the keeper on the current runtime, then runs the renewer and the heartbeat on it
/// until shutdown.
async fn run(state: NodeState) {
    let keeper: Box<dyn LeaseKeeper> = match state.store().open_lease_keeper().await {
        Ok(Some(keeper)) => keeper,
        Ok(None) => Box::new(ViaStore(state.store().clone())),
        Err(e) => {
            tracing::error!(error = %e, "lease connections not opened: renewing on the store's lease pool");
            Box::new(ViaStore(state.store().clone()))
        }
    };
    tokio::join!(
        lease::renewer(state.clone(), &*keeper),
        node::heartbeat(state.clone(), &*keeper)
    );
}
