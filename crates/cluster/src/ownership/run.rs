//! Starting and ending cluster mode's ownership on this node: the background tasks and the
//! clean exit.

use super::{lease_thread, monitor, node, partition, sweeper};
use crate::state::NodeState;

/// Starts cluster mode's background tasks on the server's tracker: the lease renewer and
/// the node heartbeat on the lease thread ([`lease_thread`]), the load monitor, the
/// sweeper, the `P.node.<NODE>` service and the NATS partition watch
/// ([`partition`]) on the main runtime. They end when the server
/// shuts down. Does nothing on a single node.
pub fn start(state: &NodeState) {
    if state.cluster().is_none() {
        return;
    }
    let tracker = state.tracker();
    lease_thread::start(state);
    tracker.spawn(monitor::monitor(state.clone()));
    tracker.spawn(sweeper::sweeper(state.clone()));
    tracker.spawn(node::serve(state.clone()));
    tracker.spawn(partition::watch(state.clone()));
}

/// Clean exit: removes this node's heartbeat row so placement stops considering it.
pub async fn leave(state: &NodeState) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    if let Err(e) = state.store().forget_node(cluster.node().as_str()).await {
        tracing::warn!(node = %cluster.node(), error = %e, "could not remove the node's heartbeat");
    }
}
