//! One tournament's director: a tokio task owning the core's state. For every input (an
//! HTTP command, the timer at `next_wake`, a room's report found by the sweep) it asks the
//! core for the events, appends them to the store after the last seq it knows, and only
//! then folds them in and performs their effects; what an effect learns is the next input.
//! Every [`SWEEP`] while a match is in play, and at start, it performs `outstanding()` and
//! reads the rooms' reports ([`crate::reports`]): after a kill -9 nothing is lost (rooms
//! are created under deterministic codes, reports are idempotent) and no match is played
//! twice. In cluster mode it holds its tournament's lease ([`crate::lease`]), renews it
//! from this loop, fences every append with it and stops as soon as it is lost; stopped
//! with the lease still held (a drain, a shutdown) it releases it, so another node takes
//! the tournament at once. Its published views also go to the [`ViewRelay`] (cluster
//! mode: every node's live subscribers).

use crate::effects;
use crate::error::DirectorError;
use crate::lease::{Held, Renewal};
use crate::log;
use crate::relay::ViewRelay;
use crate::reports;
use parchis_room::{now_ms, Rooms};
use parchis_store::StoreError;
use parchis_tournament::{Effect, Entry, Input, MatchStatus, Phase, Tournament, TournamentView};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// How often a running tournament with matches in play reads its rooms and performs what
/// it still owes.
pub const SWEEP: Duration = Duration::from_millis(200);
/// Longest sleep of an idle director (it also wakes for commands and at `next_wake`).
const IDLE: Duration = Duration::from_secs(30);
/// Inputs learnt from effects handled in a row at most (bounds one turn of the loop).
const MAX_FOLLOW_UPS: usize = 1024;

/// A command to a director.
#[derive(Debug)]
pub struct Command {
    /// What to do.
    pub input: Input,
    /// The outcome, once the events are durable (and their effects performed).
    pub reply: oneshot::Sender<Result<(), DirectorError>>,
}

/// One tournament's director.
pub struct Director {
    t: Tournament,
    /// The last stored seq.
    seq: i64,
    rooms: Rooms,
    view: watch::Sender<Arc<TournamentView>>,
    /// Cluster mode: the lease fencing every append (renewed from the loop).
    lease: Option<Held>,
    /// The lease was lost (another node directs now): the loop ends.
    lost: bool,
    /// Cluster mode: where published views go besides the local subscribers.
    relay: Option<Arc<dyn ViewRelay>>,
    /// Cancelled to stop this director between two inputs (a drain).
    stop: CancellationToken,
    /// The store knows the tournament finished (`finish_tournament`).
    marked_finished: bool,
}

impl Director {
    /// A director of `t`, whose log's last stored seq is `seq`; in cluster mode under
    /// `lease` (its appends fenced by it), its views also sent to `relay`. It stops
    /// between two inputs once `stop` is cancelled.
    pub fn new(
        t: Tournament,
        seq: i64,
        rooms: Rooms,
        lease: Option<Held>,
        relay: Option<Arc<dyn ViewRelay>>,
        stop: CancellationToken,
    ) -> (Director, watch::Receiver<Arc<TournamentView>>) {
        let (view, rx) = watch::channel(Arc::new(t.view()));
        (
            Director {
                t,
                seq,
                rooms,
                view,
                lease,
                lost: false,
                relay,
                stop,
                marked_finished: false,
            },
            rx,
        )
    }

    /// Runs until the command channel closes, the server shuts down or `stop` is
    /// cancelled; then releases the lease if it still holds it.
    pub async fn run(mut self, mut commands: mpsc::Receiver<Command>) {
        let id = self.t.id();
        let shutdown = self.rooms.shutdown_token();
        let stop = self.stop.clone();
        info!(tournament = %id, seq = self.seq, "director running");
        self.mark_finished().await;
        self.sweep().await;
        while !self.lost {
            let pause = self.pause();
            tokio::select! {
                cmd = commands.recv() => {
                    let Some(cmd) = cmd else { break };
                    let outcome = if self.lost {
                        Err(DirectorError::Stopped)
                    } else {
                        self.input(cmd.input).await
                    };
                    let _ = cmd.reply.send(outcome);
                }
                () = tokio::time::sleep(pause) => {
                    if self.t.next_wake().is_some_and(|w| w <= now_ms()) {
                        if let Err(e) = self.input(Input::Tick).await {
                            warn!(tournament = %id, error = %e, "tick failed");
                        }
                    }
                    self.renew().await;
                    if !self.lost {
                        self.sweep().await;
                    }
                }
                () = shutdown.cancelled() => break,
                () = stop.cancelled() => break,
            }
        }
        // Commands still queued are answered (not done) before the lease moves on.
        commands.close();
        while let Ok(cmd) = commands.try_recv() {
            let _ = cmd.reply.send(Err(DirectorError::Stopped));
        }
        if !self.lost {
            if let Some(held) = &self.lease {
                let store = self.rooms.store().clone();
                held.release(store.as_ref(), id).await;
            }
        }
        info!(tournament = %id, "director stopped");
    }

    /// How long to sleep: until the next wake, at most [`SWEEP`] while anything is in
    /// play or owed, else [`IDLE`].
    fn pause(&self) -> Duration {
        let busy = self.t.phase() == Phase::Running
            && (self.t.matches().any(|m| {
                matches!(
                    m.status,
                    MatchStatus::Ready | MatchStatus::Open | MatchStatus::Playing
                )
            }) || !self.t.stale_rooms().is_empty());
        let mut cap = if busy { SWEEP } else { IDLE };
        if let Some(held) = &self.lease {
            cap = cap.min(held.leasing.period());
        }
        match self.t.next_wake() {
            Some(w) => Duration::from_millis(u64::try_from(w - now_ms()).unwrap_or(0)).min(cap),
            None => cap,
        }
    }

    /// Cluster mode: renews the lease when due; a lost lease ends the loop (another node
    /// directs the tournament from the store from now on).
    async fn renew(&mut self) {
        let Some(held) = self.lease.as_mut().filter(|h| h.due()) else {
            return;
        };
        let store = self.rooms.store().clone();
        if held.renew(store.as_ref(), self.t.id()).await == Renewal::Lost {
            warn!(tournament = %self.t.id(), "tournament lease lost: director stops here");
            self.lost = true;
        }
    }

    /// Performs what the state still owes and feeds the rooms' reports.
    async fn sweep(&mut self) {
        if self.t.phase() != Phase::Running {
            return;
        }
        let owed: Vec<Effect> = self
            .t
            .outstanding()
            .into_iter()
            .filter(|e| *e != Effect::Publish)
            .collect();
        let mut learnt = VecDeque::new();
        for effect in &owed {
            learnt.extend(effects::perform(&self.rooms, self.t.id(), effect).await);
        }
        let store = self.rooms.store().clone();
        learnt.extend(reports::collect(&self.t, &self.rooms, store.as_ref()).await);
        self.follow_up(learnt).await;
    }

    /// Handles an input: stores its events, folds them in, performs their effects and the
    /// inputs those effects learn.
    async fn input(&mut self, input: Input) -> Result<(), DirectorError> {
        let learnt = self.step(input).await?;
        self.follow_up(learnt).await;
        Ok(())
    }

    async fn follow_up(&mut self, mut learnt: VecDeque<Input>) {
        let mut n = 0;
        while let Some(next) = learnt.pop_front() {
            n += 1;
            if n > MAX_FOLLOW_UPS {
                warn!(tournament = %self.t.id(), "too many follow-ups in a row: left for the sweep");
                break;
            }
            match self.step(next).await {
                Ok(more) => learnt.extend(more),
                Err(DirectorError::Refused(e)) => {
                    // A report that no longer applies (a replaced game, a room superseded).
                    tracing::debug!(tournament = %self.t.id(), error = %e, "report refused");
                }
                Err(e) => warn!(tournament = %self.t.id(), error = %e, "report not stored: owed"),
            }
        }
    }

    /// One input: decide, store, fold, perform. Returns the inputs the effects learnt.
    async fn step(&mut self, input: Input) -> Result<VecDeque<Input>, DirectorError> {
        if self.lost {
            return Err(DirectorError::Stopped);
        }
        let entries = self.t.handle(input, now_ms())?;
        if entries.is_empty() {
            return Ok(VecDeque::new());
        }
        self.store(&entries).await?;
        let effects = self.t.commit(&entries)?;
        self.mark_finished().await;
        let mut learnt = VecDeque::new();
        for effect in &effects {
            if *effect == Effect::Publish {
                self.publish().await;
            } else {
                learnt.extend(effects::perform(&self.rooms, self.t.id(), effect).await);
            }
        }
        Ok(learnt)
    }

    /// Once the tournament is finished, tells the store (once), so that no node restores
    /// or claims it again. A failure is logged and tried again after the next input or
    /// at the next start.
    async fn mark_finished(&mut self) {
        if self.marked_finished || self.t.phase() != Phase::Finished {
            return;
        }
        let store = self.rooms.store().clone();
        let marked = match log::tournaments(store.as_ref()) {
            Ok(ts) => ts.finish_tournament(self.t.id(), now_ms()).await,
            Err(e) => {
                warn!(tournament = %self.t.id(), error = %e, "tournament not marked finished");
                return;
            }
        };
        match marked {
            Ok(()) => {
                info!(tournament = %self.t.id(), "tournament marked finished");
                self.marked_finished = true;
            }
            Err(e) => {
                warn!(tournament = %self.t.id(), error = %e, "tournament not marked finished")
            }
        }
    }

    /// Publishes the current view to the local subscribers and the relay.
    async fn publish(&mut self) {
        let view = Arc::new(self.t.view());
        self.view.send_replace(view.clone());
        if let Some(relay) = &self.relay {
            relay.published(self.t.id(), self.seq, view).await;
        }
    }

    /// Appends `entries` after the last seq; on a seq mismatch (another writer), reloads
    /// the log so the next input decides on the stored state.
    async fn store(&mut self, entries: &[Entry]) -> Result<(), DirectorError> {
        let values = log::encode(entries)?;
        let store = self.rooms.store().clone();
        let appended = log::tournaments(store.as_ref())?
            .append_tournament(
                self.t.id(),
                self.seq,
                &values,
                self.lease.as_ref().map(|h| &h.fence),
            )
            .await;
        match appended {
            Ok(()) => {
                self.seq += entries.len() as i64;
                Ok(())
            }
            Err(e @ StoreError::TournamentSeqMismatch { .. }) => {
                warn!(tournament = %self.t.id(), error = %e, "log moved: reloading");
                let log = log::load(store.as_ref(), self.t.id()).await?;
                self.t = Tournament::from_entries(&log)?;
                self.seq = log.len() as i64;
                self.publish().await;
                Err(e.into())
            }
            Err(e @ StoreError::Fenced { .. }) => {
                warn!(tournament = %self.t.id(), error = %e, "append fenced: director stops here");
                self.lost = true;
                Err(DirectorError::Stopped)
            }
            Err(e) => Err(e.into()),
        }
    }
}
