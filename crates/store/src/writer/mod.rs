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

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;
use sqlx::{Connection, Database, Pool};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::error::{commit_error, Result, StoreError, WriteFailure};
use parchis_records::{Fence, RoomWrite};

mod ops;

pub(crate) use ops::{check_batch, check_fence, check_follows, Follows, WriteOp};
use ops::{fence_of, room_ops};
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

/// The SQL one backend runs for each [`WriteOp`].
#[async_trait]
pub(crate) trait Backend: Send + Sync + 'static {
    /// The sqlx database driver.
    type Db: Database;

    /// Applies one operation on `conn` (inside a transaction or savepoint) and maps
    /// constraint violations to domain errors. Returns whether a row was changed.
    async fn apply(conn: &mut <Self::Db as Database>::Connection, op: &WriteOp) -> Result<bool>;

    /// Applies several `AppendEvents` at once (the grouped fast path). On error, which
    /// append failed need not be known: the group is replayed one operation at a time.
    async fn append_all(
        conn: &mut <Self::Db as Database>::Connection,
        appends: &[(Uuid, &[EventRecord])],
    ) -> Result<()>;

    /// The last stored `seq` of each game in `games` (same order; `None`: empty log or no
    /// such game), in one statement.
    async fn last_seqs(
        conn: &mut <Self::Db as Database>::Connection,
        games: &[Uuid],
    ) -> Result<Vec<Option<i64>>>;

    /// Locks the lease rows of `rooms` (sorted, distinct) `FOR KEY SHARE` in one statement, in
    /// `room_code` order, and returns each existing row's `(room_code, owner, epoch)`.
    ///
    /// # Errors
    /// [`StoreError::Unsupported`] on a backend without leases.
    async fn lock_leases(
        conn: &mut <Self::Db as Database>::Connection,
        rooms: &[String],
    ) -> Result<Vec<(String, String, i64)>>;
}

/// The current `(owner, epoch)` of each locked lease row, by room.
type Owners = HashMap<String, (String, i64)>;

/// Locks the lease rows of every fence in `requests` (see [`Backend::lock_leases`]);
/// empty, without a statement, when no request is fenced.
async fn lock_fences<B: Backend>(
    conn: &mut <B::Db as Database>::Connection,
    requests: &[Vec<WriteOp>],
) -> Result<Owners> {
    let mut rooms: Vec<String> = requests
        .iter()
        .filter_map(|ops| fence_of(ops).map(|f| f.room_code.clone()))
        .collect();
    if rooms.is_empty() {
        return Ok(Owners::new());
    }
    rooms.sort_unstable();
    rooms.dedup();
    let rows = B::lock_leases(conn, &rooms).await?;
    Ok(rows
        .into_iter()
        .map(|(room, owner, epoch)| (room, (owner, epoch)))
        .collect())
}

/// One caller's write: one or more operations applied atomically (in one transaction or
/// savepoint), answered once.
struct Request {
    ops: Vec<WriteOp>,
    reply: oneshot::Sender<Result<bool>>,
}

/// A request to hold the writer between two groups: the writer answers with a sender and
/// waits until that sender is dropped.
type PauseRequest = oneshot::Sender<oneshot::Sender<()>>;

/// How loaded a store's writer is right now ([`Store::write_pressure`](crate::Store::write_pressure)).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WritePressure {
    /// Write requests waiting for the writer (not yet in a group).
    pub queued: usize,
    /// How long the group being committed has taken so far, or, when the writer is
    /// idle, how long the last group took if it ended less than [`COMMIT_REMEMBERED`]
    /// ago (zero after that: an idle writer is under no pressure).
    pub commit: Duration,
}

/// The writer task's timings, shared with its handle (microseconds since `base`).
struct Gauge {
    base: Instant,
    /// When the group in flight started (µs since `base`, + 1); 0: none in flight.
    started: AtomicU64,
    /// How long the last finished group took, µs.
    last: AtomicU64,
    /// When the last finished group ended (µs since `base`).
    ended: AtomicU64,
}

/// How long an idle writer's last commit time still counts as its pressure: a slow
/// commit followed by no writes at all must not leave the store looking loaded for good
/// (a node would shed load forever, `docs/CLUSTER.md`, "Load shedding").
pub const COMMIT_REMEMBERED: Duration = Duration::from_secs(1);

impl Gauge {
    fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.base).as_micros()).unwrap_or(u64::MAX)
    }

    fn begin(&self, at: Instant) {
        self.started
            .store(self.micros(at).saturating_add(1), Ordering::Relaxed);
    }

    fn end(&self, at: Instant, took: Duration) {
        let took = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.last.store(took, Ordering::Relaxed);
        self.ended.store(self.micros(at), Ordering::Relaxed);
        self.started.store(0, Ordering::Relaxed);
    }

    /// The in-flight group's age, else the last group's duration while it is recent
    /// ([`COMMIT_REMEMBERED`]), else zero.
    fn commit(&self, now: Instant) -> Duration {
        match self.started.load(Ordering::Relaxed) {
            0 => {
                let since = self
                    .micros(now)
                    .saturating_sub(self.ended.load(Ordering::Relaxed));
                if Duration::from_micros(since) < COMMIT_REMEMBERED {
                    Duration::from_micros(self.last.load(Ordering::Relaxed))
                } else {
                    Duration::ZERO
                }
            }
            started => {
                Duration::from_micros(self.micros(now).saturating_sub(started.saturating_sub(1)))
            }
        }
    }
}

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

/// Commits `requests` (each one or more ops) and returns one result per request, in order.
async fn commit_group<B: Backend>(
    pool: &Pool<B::Db>,
    requests: &[Vec<WriteOp>],
) -> Vec<Result<bool>> {
    match fast_path::<B>(pool, requests).await {
        Ok(results) => results.into_iter().map(Ok).collect(),
        // Nothing to isolate: the one request's error is its answer, unless it went the
        // grouped way (a lone append) and the database refused its events: that error
        // does not say which `seq` is a duplicate or that the game is missing, so the
        // precise path gives the answer (checks of ours, such as a fence, a log position
        // or a connection lost, are already the answer).
        Err(e)
            if requests.len() == 1
                && !(lone_append(&requests[0]).is_some() && refused_by_database(&e)) =>
        {
            vec![Err(e)]
        }
        // The COMMIT got no answer: the group may be stored. Replaying it would apply it
        // twice or misreport it (say, "unreachable" on a broken connection): every
        // request gets the unknown outcome.
        Err(e @ StoreError::CommitUnknown(_)) => {
            tracing::warn!(error = %e, size = requests.len(), "grouped commit unanswered");
            vec![Err(e); requests.len()]
        }
        Err(e) => {
            tracing::debug!(error = %e, size = requests.len(), "grouped commit failed; isolating");
            slow_path::<B>(pool, requests).await
        }
    }
}

/// The database refused a statement for a reason that sending it again would not mend (a
/// constraint, say), as opposed to our own checks and to connection trouble.
fn refused_by_database(e: &StoreError) -> bool {
    matches!(e, StoreError::Database(_)) && e.write_failure() == WriteFailure::Other
}

/// The events of a request that is one append (its fence aside): `(game, events,
/// follows)`.
fn lone_append(ops: &[WriteOp]) -> Option<(Uuid, &[EventRecord], Follows)> {
    let unfenced = &ops[usize::from(fence_of(ops).is_some())..];
    match unfenced {
        [WriteOp::AppendEvents {
            game_id,
            events,
            follows,
        }] => Some((*game_id, events.as_slice(), *follows)),
        _ => None,
    }
}

/// One transaction for the whole group: other ops in order, then all lone appends in one
/// go (their log positions checked in one statement first, their events inserted in one
/// statement).
///
/// Lone appends may be moved after the other ops because no other op reads or removes
/// events, and a game created in the same group is then already there for its events.
/// A group of one request that is not a lone append takes the precise path, whose error
/// is final; a lone append alone goes the grouped way too (one `INSERT` for its events
/// instead of one per event: most groups at low load are one action), and
/// [`commit_group`] takes the precise path for its answer if it fails.
async fn fast_path<B: Backend>(pool: &Pool<B::Db>, requests: &[Vec<WriteOp>]) -> Result<Vec<bool>> {
    let mut tx = pool.begin().await?;
    let owners = lock_fences::<B>(&mut tx, requests).await?;
    let mut changed = vec![true; requests.len()];
    let mut appends = Vec::new();
    let mut checks = Vec::new();
    for (i, ops) in requests.iter().enumerate() {
        match lone_append(ops) {
            Some((game_id, events, follows)) => {
                if let Some(fence) = fence_of(ops) {
                    check_fence(fence, owners.get(&fence.room_code))?;
                }
                check_batch(game_id, events)?;
                if follows != Follows::Any {
                    checks.push((game_id, follows, events));
                }
                appends.push((game_id, events));
            }
            None => changed[i] = apply_request::<B>(&mut tx, ops, &owners).await?,
        }
    }
    if !checks.is_empty() {
        let games: Vec<Uuid> = checks.iter().map(|c| c.0).collect();
        let lasts = B::last_seqs(&mut tx, &games).await?;
        // Two appends to one game in a group: the second follows the first.
        let mut running: std::collections::HashMap<Uuid, Option<i64>> = Default::default();
        for ((game_id, follows, events), last) in checks.into_iter().zip(lasts) {
            let last = *running.entry(game_id).or_insert(last);
            check_follows(game_id, follows, last, events)?;
            running.insert(game_id, events.last().map(|e| e.seq));
        }
    }
    if !appends.is_empty() {
        B::append_all(&mut tx, &appends).await?;
    }
    tx.commit().await.map_err(commit_error)?;
    Ok(changed)
}

/// One transaction with a savepoint per request, so each failing request fails alone.
async fn slow_path<B: Backend>(pool: &Pool<B::Db>, requests: &[Vec<WriteOp>]) -> Vec<Result<bool>> {
    let mut results: Vec<Result<bool>> = Vec::with_capacity(requests.len());
    // If the transaction itself breaks, every request fails with that error, except those
    // that already failed for a reason of their own.
    let fail_all = |results: Vec<Result<bool>>, e: StoreError| -> Vec<Result<bool>> {
        let remaining = requests.len() - results.len();
        results
            .into_iter()
            .map(|r| r.and(Err(e.clone())))
            .chain(std::iter::repeat_with(|| Err(e.clone())).take(remaining))
            .collect()
    };
    let mut tx = match pool.begin().await {
        Ok(tx) => tx,
        Err(e) => return fail_all(results, e.into()),
    };
    let owners = match lock_fences::<B>(&mut tx, requests).await {
        Ok(owners) => owners,
        Err(e) => return fail_all(results, e),
    };
    for ops in requests {
        let mut savepoint = match Connection::begin(&mut *tx).await {
            Ok(sp) => sp,
            Err(e) => return fail_all(results, e.into()),
        };
        match apply_request::<B>(&mut savepoint, ops, &owners).await {
            Ok(changed) => match savepoint.commit().await {
                Ok(()) => results.push(Ok(changed)),
                Err(e) => return fail_all(results, e.into()),
            },
            Err(e) => {
                if let Err(rb) = savepoint.rollback().await {
                    return fail_all(results, rb.into());
                }
                results.push(Err(e));
            }
        }
    }
    if let Err(e) = tx.commit().await {
        let e = commit_error(e);
        tracing::warn!(error = %e, "isolated group commit failed");
        return fail_all(results, e);
    }
    results
}

/// Applies one request's ops in order on `conn` (the caller's transaction or savepoint
/// makes them atomic), its fence checked against `owners` (locked by [`lock_fences`] in
/// the same transaction). Returns the last op's "changed" flag.
async fn apply_request<B: Backend>(
    conn: &mut <B::Db as Database>::Connection,
    ops: &[WriteOp],
    owners: &Owners,
) -> Result<bool> {
    let mut changed = true;
    for op in ops {
        changed = match op {
            WriteOp::CheckFence(fence) => {
                check_fence(fence, owners.get(&fence.room_code))?;
                true
            }
            op => apply_checked::<B>(conn, op).await?,
        };
    }
    Ok(changed)
}

/// Applies one op, first rejecting an append batch that repeats a `seq` or does not
/// follow the stored log.
async fn apply_checked<B: Backend>(
    conn: &mut <B::Db as Database>::Connection,
    op: &WriteOp,
) -> Result<bool> {
    if let WriteOp::AppendEvents {
        game_id,
        events,
        follows,
    } = op
    {
        check_batch(*game_id, events)?;
        if *follows != Follows::Any {
            let last = B::last_seqs(conn, &[*game_id]).await?;
            check_follows(*game_id, *follows, last.first().copied().flatten(), events)?;
        }
    }
    B::apply(conn, op).await
}

#[cfg(test)]
mod gauge_tests {
    use super::*;

    fn gauge(base: Instant) -> Gauge {
        Gauge {
            base,
            started: AtomicU64::new(0),
            last: AtomicU64::new(0),
            ended: AtomicU64::new(0),
        }
    }

    #[test]
    fn an_idle_writers_slow_commit_stops_counting_after_a_while() {
        let base = Instant::now();
        let g = gauge(base);
        let t = |ms: u64| base + Duration::from_millis(ms);
        g.begin(t(100));
        assert_eq!(g.commit(t(250)), Duration::from_millis(150), "in flight");
        g.end(t(400), Duration::from_millis(300));
        assert_eq!(g.commit(t(500)), Duration::from_millis(300), "just ended");
        assert_eq!(
            g.commit(t(400) + COMMIT_REMEMBERED - Duration::from_millis(1)),
            Duration::from_millis(300)
        );
        assert_eq!(
            g.commit(t(400) + COMMIT_REMEMBERED),
            Duration::ZERO,
            "an idle writer is under no pressure"
        );
    }
}
