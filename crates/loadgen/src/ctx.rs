//! What every task of one load process shares: the settings, the nodes, the sockets, the
//! counters, and the two phase signals (play phase begun, end of the measured window).
//! Below `load` (which runs the phases) and `play` (one room's games), so both use it
//! without importing each other.

use crate::cli::{LoadArgs, Node};
use crate::client::Net;
use crate::stats::Stats;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// Settings and shared state every task needs.
pub struct Ctx {
    /// The run's settings.
    pub args: LoadArgs,
    /// The server nodes (`--url`), in order.
    pub nodes: Vec<Node>,
    /// Source addresses and open sockets.
    pub net: Net,
    /// Counters and histograms.
    pub stats: Stats,
    /// `true` once the play phase starts.
    go: watch::Receiver<bool>,
    /// End of the measured window (clients send nothing after it and close
    /// `crate::play::DRAIN` later); the window is the `--duration-secs` before it. `None`
    /// until every game has started: the window is placed after that.
    pub end: watch::Receiver<Option<Instant>>,
}

impl Ctx {
    /// The shared state of a run of `args` against `nodes`: `go` sees the play phase
    /// begin, `end` the end of the measured window once it is known.
    pub fn new(
        args: LoadArgs,
        nodes: Vec<Node>,
        go: watch::Receiver<bool>,
        end: watch::Receiver<Option<Instant>>,
    ) -> Ctx {
        Ctx {
            net: Net::new(args.source_addrs.clone()),
            args,
            nodes,
            stats: Stats::default(),
            go,
            end,
        }
    }
    /// End of the measured window, once known.
    pub fn end(&self) -> Option<Instant> {
        *self.end.borrow()
    }
    /// Whether a command sent at `at` falls in the measured window.
    pub fn measured(&self, at: Instant) -> bool {
        let window = Duration::from_secs(self.args.duration_secs);
        self.end().is_some_and(|end| at >= end - window)
    }
    /// Whether the play phase has begun.
    pub fn playing(&self) -> bool {
        *self.go.borrow()
    }
    /// A receiver that sees the play phase begin.
    pub fn go(&self) -> watch::Receiver<bool> {
        self.go.clone()
    }
}
