//! The load monitor of load shedding ([`crate::held::shedding`]): the I/O edge that samples the
//! renewal clock and the store's write pressure, applies the pure decision and logs and
//! counts the changes; and the reason this node sheds, for `/readyz` and refusals.

use crate::held::shedding::{guard, Limits, Sample, Shed};
use crate::state::NodeState;
use parchis_telemetry::names as m;
use std::time::Duration;
use tokio::time::Instant;

/// The load monitor: every quarter `lease-renew-ms` (at least 25 ms), a [`Sample`] from
/// the renewal clock and the store's write pressure, and
/// [`decide`](crate::held::shedding::decide). Logs and counts the changes; ends at shutdown.
pub async fn monitor(state: NodeState) {
    let (Some(cluster), Some(own)) = (state.cluster().cloned(), state.ownership()) else {
        return;
    };
    let limits = Limits::for_leases(cluster.config.lease_ttl, cluster.config.lease_renew);
    let period = (cluster.config.lease_renew / 4).max(Duration::from_millis(25));
    let shutdown = state.shutdown_token();
    let mut every = tokio::time::interval(period);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let node = cluster.node().as_str().to_owned();
    metrics::gauge!(m::SHEDDING).set(0.0);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = every.tick() => {}
        }
        let now = Instant::now();
        let pressure = state.store().write_pressure();
        let sample = Sample {
            commit: pressure.commit,
            queued: pressure.queued,
            ..own.load.renewal_sample(now)
        };
        let sample = own.load.as_seen(sample, &limits, now);
        match own.load.step(&sample, &limits, now) {
            (Shed::Accepting, Shed::Shedding { why, .. }) => {
                tracing::warn!(
                    node = %node,
                    why = why.label(),
                    renewal_age_ms = sample.renewal_age.as_millis() as u64,
                    renewal_ms = sample.renewal_latency.as_millis() as u64,
                    commit_ms = sample.commit.as_millis() as u64,
                    queued = sample.queued,
                    "overloaded: shedding load (no new rooms, not ready)"
                );
                metrics::counter!(m::SHED_EPISODES, "why" => why.label()).increment(1);
                metrics::gauge!(m::SHEDDING).set(1.0);
            }
            (Shed::Shedding { since, .. }, Shed::Accepting) => {
                tracing::info!(
                    node = %node,
                    shed_ms = now.saturating_duration_since(since).as_millis() as u64,
                    "load back to normal: taking new rooms again"
                );
                metrics::gauge!(m::SHEDDING).set(0.0);
            }
            _ => {}
        }
    }
}

/// Why this node sheds load now, for `/readyz` and refusals; `None` when it does not
/// (or is no cluster node).
pub fn shedding_reason(state: &NodeState) -> Option<&'static str> {
    let own = state.ownership()?;
    if !own.load.is_shedding() {
        return None;
    }
    guard(&own.load.state).and_then(|s| match s {
        Shed::Shedding { why, .. } => Some(why.label()),
        Shed::Accepting => None,
    })
}
