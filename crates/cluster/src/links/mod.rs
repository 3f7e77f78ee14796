//! What the routing stands on, below the node's state: the routing's tables (sessions'
//! routes, served rooms, relayed connections, gone edges, unknown codes: [`table`],
//! [`edge`], [`unknown`]), the wire between nodes ([`wire`], [`edge_msg`]), each relayed
//! link's checks ([`relay`]), the publishers toward edge nodes ([`publisher`]) and the
//! routing's counters ([`metrics`]). Nothing here takes a `NodeState`; the routing's code
//! that acts (`crate::routing`) does.

pub mod edge;
pub mod edge_msg;
pub mod metrics;
pub mod publisher;
pub mod relay;
pub mod table;
pub mod unknown;
pub mod wire;
