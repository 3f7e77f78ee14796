//! Telemetry of the Parchís server, a leaf crate that nothing in it has to come back up
//! from:
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
