//! SQLite WAL checkpoints in the background, and the WAL file kept within its limit.
//!
//! Every [`SqliteOptions::checkpoint_interval`] the [`Checkpointer`] copies committed WAL
//! pages into the database file with `PRAGMA wal_checkpoint(PASSIVE)` on a pooled
//! connection (it never blocks a commit). That alone does not shrink the WAL file: SQLite
//! starts the WAL over (and cuts the file back to `journal_size_limit`) only when a write
//! transaction begins right after a checkpoint that copied every frame while no reader used
//! the WAL. Under constant writes, or with readers coming and going, that moment never
//! comes, and the file grew to 177 MB with a 64 MiB limit (issue 14).
//!
//! So when the `-wal` file is larger than [`SqliteOptions::wal_limit_bytes`], the
//! checkpointer escalates: a PASSIVE checkpoint first (copies the bulk while writes go on),
//! then it holds the store's writer between two groups ([`crate::writer::Pauser`]) and runs
//! `PRAGMA wal_checkpoint(TRUNCATE)`, which waits up to [`SqliteOptions::truncate_wait`]
//! for readers of old pages to finish, copies the rest and truncates the file to zero bytes. If a reader
//! still holds the WAL after that wait, the writer goes on and the next tick tries again.
//! (`RESTART` is not a step of its own: it waits for readers just like `TRUNCATE`, but
//! leaves the file at its size until the next commit.)

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::SqlitePool;

use crate::writer::Pauser;

/// The busy timeout of every store connection, restored after a `TRUNCATE` checkpoint.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Options of a [`SqliteStore`](crate::SqliteStore)'s write-ahead log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Size in bytes the `<db>-wal` file is kept within: beyond it the background
    /// checkpointer truncates the WAL (see the module docs); also SQLite's
    /// `journal_size_limit`. Default 64 MiB. Between two checks the file may grow past it
    /// by what is written in one [`SqliteOptions::checkpoint_interval`].
    pub wal_limit_bytes: u64,
    /// How often the background checkpointer copies WAL pages into the database file and
    /// checks the WAL's size. Default 1 s.
    pub checkpoint_interval: Duration,
    /// How long a `TRUNCATE` checkpoint (the WAL over its limit) waits for readers of old
    /// WAL pages to finish, its busy timeout, while the writer is held: the longest pause
    /// it adds to a commit. Default 200 ms; at least 1 ms (see
    /// [`SqliteOptions::validate`]).
    pub truncate_wait: Duration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            wal_limit_bytes: 64 * 1024 * 1024,
            checkpoint_interval: Duration::from_secs(1),
            truncate_wait: Duration::from_millis(200),
        }
    }
}

/// The longest [`SqliteOptions::truncate_wait`]: the store's own busy timeout, beyond which
/// held commits would fail anyway.
pub const MAX_TRUNCATE_WAIT: Duration = BUSY_TIMEOUT;

/// A [`SqliteOptions`] value that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SqliteOptionsError {
    /// `truncate_wait` is zero (the checkpoint could never wait for a reader, so a WAL read
    /// all the time would never be truncated) or above [`MAX_TRUNCATE_WAIT`].
    #[error(
        "the SQLite TRUNCATE checkpoint wait must be 1 to {max} ms, not {0} ms",
        max = MAX_TRUNCATE_WAIT.as_millis()
    )]
    TruncateWait(u128),
    /// `checkpoint_interval` is zero.
    #[error("the SQLite checkpoint interval must be at least 1 ms")]
    CheckpointInterval,
}

impl SqliteOptions {
    /// Checks the options: a [`SqliteStore`](crate::SqliteStore) opened with options that
    /// fail here would not keep its WAL within its limit.
    pub fn validate(&self) -> Result<(), SqliteOptionsError> {
        if self.checkpoint_interval.is_zero() {
            return Err(SqliteOptionsError::CheckpointInterval);
        }
        if self.truncate_wait.is_zero() || self.truncate_wait > MAX_TRUNCATE_WAIT {
            return Err(SqliteOptionsError::TruncateWait(
                self.truncate_wait.as_millis(),
            ));
        }
        Ok(())
    }
}

/// The WAL file of the database file `db` (`<db>-wal`).
pub(crate) fn wal_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    PathBuf::from(name)
}

/// What a checkpoint did: `PRAGMA wal_checkpoint` returns (busy, frames in the WAL,
/// frames checkpointed); busy = 1 when it could not finish because of a reader or writer.
type Outcome = (i64, i64, i64);

/// The background task; see the module docs. Ends on [`Checkpointer::stop`], on drop, or
/// when the pool is closed.
pub(crate) struct Checkpointer {
    stop: tokio_util::sync::CancellationToken,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Checkpointer {
    /// Starts the task on the current tokio runtime, for the database whose WAL is `wal`.
    pub(crate) fn spawn(
        pool: SqlitePool,
        writer: Pauser,
        wal: PathBuf,
        options: SqliteOptions,
    ) -> Self {
        let stop = tokio_util::sync::CancellationToken::new();
        let token = stop.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(options.checkpoint_interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = token.cancelled() => break,
                    _ = tick.tick() => {}
                }
                if !round(&pool, &writer, &wal, &options).await {
                    break;
                }
            }
        });
        Checkpointer {
            stop,
            task: std::sync::Mutex::new(Some(task)),
        }
    }

    /// Stops the task and waits for a checkpoint in progress to finish.
    pub(crate) async fn stop(&self) {
        self.stop.cancel();
        let task = crate::writer::lock(&self.task).take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        // A store dropped without `close` must not leave its task running.
        self.stop.cancel();
    }
}

/// Size of the file at `path` in bytes (0 when missing).
fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// One tick: a PASSIVE checkpoint, then a TRUNCATE one if the WAL is over its limit.
/// Returns `false` once the pool is closed (the task ends).
async fn round(pool: &SqlitePool, writer: &Pauser, wal: &Path, options: &SqliteOptions) -> bool {
    let limit = options.wal_limit_bytes;
    let size = file_size(wal);
    match checkpoint(pool, "PASSIVE").await {
        Ok((_, frames, done)) => {
            tracing::trace!(
                wal_frames = frames,
                checkpointed = done,
                "sqlite checkpoint"
            );
        }
        Err(e) if pool.is_closed() => {
            tracing::debug!(error = %e, "sqlite checkpointer: pool closed");
            return false;
        }
        Err(e) => tracing::warn!(error = %e, "sqlite checkpoint failed"),
    }
    if size <= limit {
        return true;
    }
    let Some(held) = writer.pause().await else {
        return false; // the writer has stopped: the store is closing
    };
    let outcome = truncate(pool, options.truncate_wait).await;
    drop(held);
    match outcome {
        Ok((0, _, _)) => tracing::debug!(
            wal_bytes = size,
            limit_bytes = limit,
            after_bytes = file_size(wal),
            "sqlite WAL over its limit: truncated"
        ),
        Ok((_, frames, done)) => tracing::info!(
            wal_bytes = size,
            limit_bytes = limit,
            wal_frames = frames,
            checkpointed = done,
            "sqlite WAL over its limit, but a reader still uses it: retrying next tick"
        ),
        Err(e) if pool.is_closed() => {
            tracing::debug!(error = %e, "sqlite checkpointer: pool closed");
            return false;
        }
        Err(e) => tracing::warn!(error = %e, "sqlite truncating checkpoint failed"),
    }
    true
}

/// `PRAGMA wal_checkpoint(mode)` on any pooled connection.
async fn checkpoint(pool: &SqlitePool, mode: &str) -> sqlx::Result<Outcome> {
    sqlx::query_as::<_, Outcome>(&format!("PRAGMA wal_checkpoint({mode})"))
        .fetch_one(pool)
        .await
}

/// A TRUNCATE checkpoint that waits at most `wait` for readers, on one pooled connection
/// whose busy timeout is restored afterwards.
async fn truncate(pool: &SqlitePool, wait: Duration) -> sqlx::Result<Outcome> {
    let mut conn = pool.acquire().await?;
    let busy = |d: Duration| format!("PRAGMA busy_timeout = {}", d.as_millis());
    sqlx::query(&busy(wait)).execute(&mut *conn).await?;
    let outcome = sqlx::query_as::<_, Outcome>("PRAGMA wal_checkpoint(TRUNCATE)")
        .fetch_one(&mut *conn)
        .await;
    let restored = sqlx::query(&busy(BUSY_TIMEOUT)).execute(&mut *conn).await;
    if restored.is_err() {
        // A connection left with the short timeout would fail writes early: drop it.
        conn.detach();
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
    use sqlx::{Connection, SqliteConnection};

    #[test]
    fn options_reject_a_zero_or_too_long_truncate_wait_and_a_zero_interval() {
        assert_eq!(SqliteOptions::default().validate(), Ok(()));
        assert_eq!(
            SqliteOptions::default().truncate_wait,
            Duration::from_millis(200)
        );
        let wait = |ms| SqliteOptions {
            truncate_wait: Duration::from_millis(ms),
            ..SqliteOptions::default()
        };
        assert_eq!(wait(1).validate(), Ok(()));
        assert_eq!(wait(10_000).validate(), Ok(()));
        assert_eq!(wait(0).validate(), Err(SqliteOptionsError::TruncateWait(0)));
        assert_eq!(
            wait(10_001).validate(),
            Err(SqliteOptionsError::TruncateWait(10_001))
        );
        assert_eq!(
            wait(0).validate().map_err(|e| e.to_string()),
            Err("the SQLite TRUNCATE checkpoint wait must be 1 to 10000 ms, not 0 ms".into())
        );
        let no_interval = SqliteOptions {
            checkpoint_interval: Duration::ZERO,
            ..SqliteOptions::default()
        };
        assert_eq!(
            no_interval.validate(),
            Err(SqliteOptionsError::CheckpointInterval)
        );
    }

    /// A WAL database in `dir` with a few rows, and a reader connection holding a snapshot
    /// taken before more rows were committed (so the WAL cannot start over until it ends).
    async fn pinned_wal(dir: &Path) -> (SqlitePool, SqliteConnection, PathBuf) {
        let db = dir.join("pinned.db");
        let options = SqliteConnectOptions::new()
            .filename(&db)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await
            .expect("pool");
        sqlx::query("CREATE TABLE t (x BLOB)")
            .execute(&pool)
            .await
            .expect("table");
        let mut reader = SqliteConnection::connect_with(&options)
            .await
            .expect("reader");
        sqlx::query("BEGIN")
            .execute(&mut reader)
            .await
            .expect("begin");
        let _: i64 = sqlx::query_scalar("SELECT count(*) FROM t")
            .fetch_one(&mut reader)
            .await
            .expect("snapshot");
        for _ in 0..20 {
            sqlx::query("INSERT INTO t VALUES (randomblob(4096))")
                .execute(&pool)
                .await
                .expect("insert");
        }
        (pool, reader, wal_path(&db))
    }

    /// The wait is the configured one, not the store's 10 s busy timeout: with a 1 ms wait
    /// the checkpoint gives up (busy) while the reader still has 500 ms to go; with a 10 s
    /// wait it outlasts the same reader and truncates the WAL to nothing.
    #[tokio::test]
    async fn a_truncate_checkpoint_waits_for_readers_as_long_as_configured() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for (wait, truncated) in [(1, false), (10_000, true)] {
            let dir = tmp.path().join(format!("wait-{wait}"));
            std::fs::create_dir_all(&dir).expect("dir");
            let (pool, mut reader, wal) = pinned_wal(&dir).await;
            assert!(file_size(&wal) > 20 * 4096, "the inserts are in the WAL");
            let release = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(500)).await;
                sqlx::query("COMMIT")
                    .execute(&mut reader)
                    .await
                    .expect("end the read");
                reader
            });
            let (busy, _, _) = truncate(&pool, Duration::from_millis(wait))
                .await
                .expect("checkpoint");
            assert_eq!(busy == 0, truncated, "wait {wait} ms: busy = {busy}");
            assert_eq!(file_size(&wal) == 0, truncated, "wait {wait} ms");
            // The connection's own busy timeout is back to the store's.
            let mut conn = pool.acquire().await.expect("conn");
            let restored: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
                .fetch_one(&mut *conn)
                .await
                .expect("busy timeout");
            assert_eq!(restored, BUSY_TIMEOUT.as_millis() as i64);
            drop(conn);
            release.await.expect("reader").close().await.expect("close");
            pool.close().await;
        }
    }
}
