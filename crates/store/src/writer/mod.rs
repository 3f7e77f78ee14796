//! Group commit: one writer task per SQL store applies every write.
//!
//! Callers send a [`WriteOp`] over a bounded channel with a oneshot for the reply. The writer
//! takes everything pending (up to [`MAX_GROUP`]) and applies it in ONE transaction, so a
//! single commit (one fsync) covers many callers and throughput grows with load.
//!
//! If that grouped transaction fails, the group is replayed in a new transaction with a
//! savepoint around each operation: an operation that fails is rolled back to its savepoint
//! and gets its own error, the others are committed together. So one bad request (say a
//! duplicate `seq`) never fails its neighbours.
//!
//! A single writer also means SQLite never sees two concurrent write transactions.
//!
//! A `COMMIT` that gets no answer (the connection failed with it on its way or its answer
//! outstanding) fails every request of its group with [`StoreError::CommitUnknown`]: the
//! group may be stored, so it is neither replayed nor reported as "nothing applied".
//!
//! Between two groups the writer can be held ([`Pauser::pause`]): SQLite's WAL checkpointer
//! runs its blocking `TRUNCATE` checkpoint then, instead of competing with a commit for the
//! write lock (`crate::checkpoint`).
//!
//! Fencing (cluster mode, docs/CLUSTER.md "Fencing"): a fenced request's first op is
//! [`WriteOp::CheckFence`]. Every path (one request, grouped, isolated) first locks the
//! lease rows of all the group's fences `FOR KEY SHARE` in ONE statement, in `room_code`
//! order (so two such transactions never deadlock), inside the transaction that then
//! writes; a request whose fence does not match fails alone with [`StoreError::Fenced`].
//! The row lock makes a concurrent takeover (which locks `FOR UPDATE`) wait for the
//! commit; a renewal (`FOR NO KEY UPDATE`) does not wait (`crate::pg_lease`).
//!
//! Pressure ([`Writer::pressure`], [`WritePressure`]): how many requests wait and how long
//! the current (or last) group has taken, read without waiting by cluster mode's load
//! shedding.
//!
//! Files: this one has the handle and the task's loop; `backend` the SQL each store runs,
//! `ops` the operations and their checks, `group` one group's commit (grouped, then
//! isolated), `gauge` the pressure.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use sqlx::Pool;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::error::{Result, StoreError};
use parchis_records::{Fence, RoomWrite};

mod backend;
mod gauge;
mod group;
mod ops;

pub(crate) use backend::Backend;
use gauge::Gauge;
pub use gauge::WritePressure;
use group::commit_group;
use ops::room_ops;
pub(crate) use ops::{
    check_batch, check_fence, check_follows, check_format, check_piece, Follows, LogEnd, StoredEnd,
    TailAppend, WriteOp, FOLD_EVERY,
};
use parchis_records::{EventRecord, GameRecord, RoomRecord};

/// Largest number of operations committed in one transaction.
pub(crate) const MAX_GROUP: usize = 512;
/// Under load, a group smaller than this waits [`LINGER`] for more requests before it
/// commits: fewer, larger commits cost less CPU per write at the price of ≤ 1 ms latency.
pub(crate) const LINGER_BELOW: usize = 32;
/// How long a small group waits for company (tokio timers round up to 1 ms).
pub(crate) const LINGER: Duration = Duration::from_micros(500);
/// The store counts as under load when its previous commit ended less than this ago;
/// otherwise (a lone write) a group commits at once.
pub(crate) const BUSY_WINDOW: Duration = Duration::from_millis(5);
/// Capacity of the request channel; senders wait (back-pressure) when it is full.
pub(crate) const CHANNEL_CAPACITY: usize = 4096;

/// One caller's write: one or more operations applied atomically (in one transaction or
/// savepoint), answered once.
struct Request {
    ops: Vec<WriteOp>,
    reply: oneshot::Sender<Result<bool>>,
}

/// A request to hold the writer between two groups: the writer answers with a sender and
/// waits until that sender is dropped.
type PauseRequest = oneshot::Sender<oneshot::Sender<()>>;

/// Handle to a running writer task.
pub(crate) struct Writer {
    sender: Mutex<Option<mpsc::Sender<Request>>>,
    pauses: mpsc::Sender<PauseRequest>,
    task: Mutex<Option<JoinHandle<()>>>,
    gauge: Arc<Gauge>,
}

/// Holds a [`Writer`] between two groups on request (cloneable, for a background task).
#[derive(Clone)]
pub(crate) struct Pauser {
    pauses: mpsc::Sender<PauseRequest>,
}

/// While alive, the writer commits nothing (requests queue up, with back-pressure once
/// [`CHANNEL_CAPACITY`] are waiting). Dropping it lets the writer go on.
pub(crate) struct Paused {
    _resume: oneshot::Sender<()>,
}

impl Pauser {
    /// Waits until the writer has finished its current group and holds it there. `None`
    /// once the writer task has ended.
    pub(crate) async fn pause(&self) -> Option<Paused> {
        let (ask, answer) = oneshot::channel();
        self.pauses.send(ask).await.ok()?;
        answer.await.ok().map(|resume| Paused { _resume: resume })
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded values stay consistent even if a holder panicked: recover them.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Writer {
    /// Spawns the writer task on the current tokio runtime.
    pub(crate) fn spawn<B: Backend>(pool: Pool<B::Db>) -> Self {
        let (sender, receiver) = mpsc::channel(CHANNEL_CAPACITY);
        let (pauses, pause_requests) = mpsc::channel(1);
        let gauge = Arc::new(Gauge {
            base: Instant::now(),
            started: AtomicU64::new(0),
            last: AtomicU64::new(0),
            ended: AtomicU64::new(0),
        });
        let task = tokio::spawn(run::<B>(pool, receiver, pause_requests, Arc::clone(&gauge)));
        Writer {
            sender: Mutex::new(Some(sender)),
            pauses,
            task: Mutex::new(Some(task)),
            gauge,
        }
    }

    /// How many requests wait and how long the current (or last) group has taken.
    pub(crate) fn pressure(&self) -> WritePressure {
        let queued = lock(&self.sender)
            .as_ref()
            .map_or(0, |s| s.max_capacity() - s.capacity());
        WritePressure {
            queued,
            commit: self.gauge.commit(Instant::now()),
        }
    }

    /// A handle that can hold this writer between two groups.
    pub(crate) fn pauser(&self) -> Pauser {
        Pauser {
            pauses: self.pauses.clone(),
        }
    }

    /// Submits `op` and waits until it is committed (or failed).
    async fn submit(&self, op: WriteOp) -> Result<bool> {
        self.submit_all(vec![op]).await
    }

    /// Submits `ops` as one atomic unit and waits until it is committed (or failed).
    async fn submit_all(&self, ops: Vec<WriteOp>) -> Result<bool> {
        let sender = lock(&self.sender).clone().ok_or(StoreError::Closed)?;
        let (reply, answer) = oneshot::channel();
        sender
            .send(Request { ops, reply })
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    pub(crate) async fn create_room(&self, room: &RoomRecord) -> Result<()> {
        self.submit(WriteOp::CreateRoom(room.clone()))
            .await
            .map(drop)
    }

    /// One room write, unfenced and unchecked: what the separate write methods do.
    /// Returns whether a row was changed (for `delete_seat`).
    pub(crate) async fn room(&self, room_code: &str, write: RoomWrite) -> Result<bool> {
        match room_ops(room_code, write)? {
            ops if ops.is_empty() => Ok(false),
            ops => self.submit_all(ops).await,
        }
    }

    /// [`Store::write_room`](crate::Store::write_room): the write's records must name
    /// `room_code`; with a fence, its check is the request's first op.
    pub(crate) async fn write_room(
        &self,
        room_code: &str,
        fence: Option<&Fence>,
        write: RoomWrite,
    ) -> Result<()> {
        write
            .check_room(room_code, fence)
            .map_err(StoreError::InvalidWrite)?;
        let Some(fence) = fence else {
            return self.room(room_code, write).await.map(drop);
        };
        let ops = room_ops(room_code, write)?;
        if ops.is_empty() {
            return Ok(());
        }
        let mut all = Vec::with_capacity(ops.len() + 1);
        all.push(WriteOp::CheckFence(fence.clone()));
        all.extend(ops);
        let result = self.submit_all(all).await.map(drop);
        if let Err(StoreError::Fenced { current, .. }) = &result {
            tracing::warn!(
                room = room_code,
                node = %fence.node,
                epoch = fence.epoch,
                current = ?current,
                "room write fenced: the lease has moved on"
            );
        }
        result
    }

    pub(crate) async fn create_game(&self, game: &GameRecord) -> Result<()> {
        self.submit(WriteOp::CreateGame(game.clone()))
            .await
            .map(drop)
    }

    pub(crate) async fn append_events(
        &self,
        game_id: Uuid,
        events: Vec<EventRecord>,
    ) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        self.submit(WriteOp::AppendEvents {
            game_id,
            events,
            follows: Follows::Any,
        })
        .await
        .map(drop)
    }

    pub(crate) async fn finish_game(
        &self,
        game_id: Uuid,
        result: &Value,
        reason: &str,
        finished_at_ms: i64,
    ) -> Result<()> {
        self.submit(WriteOp::FinishGame {
            game_id,
            result: result.clone(),
            reason: reason.to_owned(),
            finished_at_ms,
        })
        .await
        .map(drop)
    }

    /// `Err(Closed)` once [`Writer::close`] was called or the writer task has ended.
    pub(crate) fn check_open(&self) -> Result<()> {
        let open = lock(&self.sender).as_ref().is_some_and(|s| !s.is_closed());
        if open {
            Ok(())
        } else {
            Err(StoreError::Closed)
        }
    }

    /// Stops accepting writes and waits for the task to finish what was submitted.
    pub(crate) async fn close(&self) {
        drop(lock(&self.sender).take());
        let task = lock(&self.task).take();
        if let Some(task) = task {
            if let Err(e) = task.await {
                tracing::error!(error = %e, "store writer task ended abnormally");
            }
        }
    }
}

async fn run<B: Backend>(
    pool: Pool<B::Db>,
    mut receiver: mpsc::Receiver<Request>,
    mut pauses: mpsc::Receiver<PauseRequest>,
    gauge: Arc<Gauge>,
) {
    let mut pending = Vec::with_capacity(MAX_GROUP);
    let mut last_commit: Option<Instant> = None;
    loop {
        // A pause goes before the next group (`recv_many` is cancel-safe: nothing is lost).
        let received = tokio::select! {
            biased;
            Some(ask) = pauses.recv() => {
                let (resume, resumed) = oneshot::channel::<()>();
                if ask.send(resume).is_ok() {
                    // Ends when the holder drops its `Paused` (nothing is ever sent).
                    let _ = resumed.await;
                }
                continue;
            }
            n = receiver.recv_many(&mut pending, MAX_GROUP) => n,
        };
        if received == 0 {
            break;
        }
        let busy = last_commit.is_some_and(|t| t.elapsed() < BUSY_WINDOW);
        if busy && pending.len() < LINGER_BELOW {
            tokio::time::sleep(LINGER).await;
            while pending.len() < MAX_GROUP {
                match receiver.try_recv() {
                    Ok(r) => pending.push(r),
                    Err(_) => break,
                }
            }
        }
        let group = std::mem::replace(&mut pending, Vec::with_capacity(MAX_GROUP));
        let started = Instant::now();
        gauge.begin(started);
        let size = group.len();
        let (ops, replies): (Vec<Vec<WriteOp>>, Vec<_>) =
            group.into_iter().map(|r| (r.ops, r.reply)).unzip();
        let results = commit_group::<B>(&pool, &ops).await;
        gauge.end(Instant::now(), started.elapsed());
        // Names as in parchis-server's `metrics` module (`/metrics`).
        metrics::histogram!("parchis_store_commit_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        metrics::histogram!("parchis_store_commit_group_size").record(size as f64);
        tracing::trace!(
            size,
            elapsed_us = started.elapsed().as_micros() as u64,
            "group committed"
        );
        for (reply, result) in replies.into_iter().zip(results) {
            // The caller may have stopped waiting; its write is committed all the same.
            let _ = reply.send(result);
        }
        last_commit = Some(Instant::now());
    }
    tracing::debug!("store writer stopped");
}
