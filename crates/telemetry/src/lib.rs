//! Telemetry of the Parchís server: below the rooms, the cluster and the gateway, and
//! depending on none of them (only on the engine's and the protocol's types it labels),
//! so nothing in it comes back up to the code that calls it:
//!
//! * [`names`]: every metric's name;
//! * [`recorder`]: the process-global Prometheus recorder, its buckets and help texts,
//!   and [`recorder::Cached`] handles for hot paths;
//! * [`observe`]: the operational events of rooms and connections, one log line (with
//!   `room`, `game`, `seat` and `conn` fields) and one metric each.

#![warn(missing_docs)]

pub mod names;
pub mod observe;
pub mod recorder;
