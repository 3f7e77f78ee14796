//! Prometheus metrics of the routing: their names live with every other metric in
//! [`crate::metrics`] (described there); labels are closed sets (kinds, outcomes, causes).

pub use crate::metrics::{
    COMMANDS_FORWARDED, EDGE_GAPS, FRAMES_PUBLISHED, FRAMES_RELAYED, PUBLISH_FAILED, REATTACHES,
    REMOTE_ATTACHES, ROOM_REQUESTS,
};
