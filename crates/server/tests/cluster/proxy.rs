//! A loopback TCP proxy in front of a service (NATS, PostgreSQL) that a test can make
//! slow or take away:
//!
//! - [`delaying`]: holds everything one node sends for a fixed delay (in order; what the
//!   service sends back is not delayed): that node's subscriptions, replies and publishes
//!   reach NATS late, as on a loaded machine or a slow link, while every other node is on
//!   time;
//! - [`Proxy::cut`] closes every connection through the proxy and closes each new one at
//!   once (the service is gone, as when its host or the network fails) until
//!   [`Proxy::restore`], without touching the service itself (other tests share it);
//! - [`Proxy::stall`] holds every byte in both directions (the connections stay open,
//!   nothing is lost) until [`Proxy::unstall`], as a link that goes silent;
//! - [`Proxy::lose_next_commit_answer`] (PostgreSQL): the next `COMMIT` of a transaction
//!   that inserted rows reaches the database, but its answer never comes back: the proxy
//!   holds what the database answers and closes that connection (the commit is applied,
//!   the client sees the connection lost during `COMMIT`).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio::time::Instant;

/// A running proxy; it runs until the test's runtime ends.
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    cut: Arc<AtomicBool>,
    stalled: Arc<AtomicBool>,
    /// The forwarding task of every connection opened while not cut.
    conns: Arc<Mutex<Vec<AbortHandle>>>,
    lose: Arc<LoseCommit>,
}

/// [`Proxy::lose_next_commit_answer`]'s one shot, shared by the connections.
#[derive(Default)]
struct LoseCommit {
    /// The next qualifying `COMMIT` loses its answer.
    armed: AtomicBool,
    /// How many answers were lost so far.
    lost: std::sync::atomic::AtomicUsize,
    /// How many `COMMIT`s were picked to lose their answer (counted as the `COMMIT` is
    /// forwarded, before the hold).
    held: std::sync::atomic::AtomicUsize,
    /// The picked `COMMIT` lands late ([`Proxy::land_next_commit_late`]).
    late: AtomicBool,
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to `upstream`
    /// (`host:port`), delaying the client→upstream bytes by `delay` (zero: none).
    pub async fn start(upstream: String, delay: Duration) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let cut = Arc::new(AtomicBool::new(false));
        let conns: Arc<Mutex<Vec<AbortHandle>>> = Arc::new(Mutex::new(Vec::new()));
        let lose = Arc::new(LoseCommit::default());
        let stalled = Arc::new(AtomicBool::new(false));
        let (is_cut, tasks, losing) = (cut.clone(), conns.clone(), lose.clone());
        let stalling = stalled.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if is_cut.load(Ordering::SeqCst) {
                    // Refused: closed before a byte is forwarded.
                    drop(client);
                    continue;
                }
                let upstream = upstream.clone();
                let lose = losing.clone();
                let stall = stalling.clone();
                let task = tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(&upstream).await {
                        pipe(client, server, delay, lose, stall).await;
                    }
                });
                let mut tasks = tasks.lock().unwrap_or_else(|e| e.into_inner());
                tasks.retain(|t| !t.is_finished());
                if is_cut.load(Ordering::SeqCst) {
                    // Cut while it was being opened.
                    task.abort();
                } else {
                    tasks.push(task.abort_handle());
                }
            }
        });
        Proxy {
            addr,
            cut,
            stalled,
            conns,
            lose,
        }
    }

    /// Holds every byte, both ways, on every connection (open ones and new ones) until
    /// [`Proxy::unstall`]; then forwards them, in order.
    pub fn stall(&self) {
        self.stalled.store(true, Ordering::SeqCst);
    }

    /// Forwards again what [`Proxy::stall`] held, and whatever follows.
    pub fn unstall(&self) {
        self.stalled.store(false, Ordering::SeqCst);
    }

    /// Arms the one shot: the next `COMMIT` sent on a connection of the store's main pool
    /// (`application_name` `parchis-store`) whose transaction inserted rows
    /// (PostgreSQL's `INSERT 0 n` since its last `BEGIN`) and waits for its WAL flush
    /// (not a heartbeat's or a renewal's: `synchronous_commit = off`) is forwarded,
    /// what the database answers is held, and the connection is closed once the database
    /// had time to apply it (300 ms). Reads (no `INSERT`) are left alone.
    pub fn lose_next_commit_answer(&self) {
        self.lose.armed.store(true, Ordering::SeqCst);
    }

    /// Like [`Proxy::lose_next_commit_answer`], but the `COMMIT` itself is held: the
    /// client's side of the connection is closed at once (its `COMMIT` unanswered), and
    /// the `COMMIT` reaches the database only 500 ms later, so that a read made meanwhile
    /// on another connection does not see the write, which then lands (a transaction
    /// still committing when its connection was lost).
    pub fn land_next_commit_late(&self) {
        self.lose.late.store(true, Ordering::SeqCst);
        self.lose.armed.store(true, Ordering::SeqCst);
    }

    /// How many `COMMIT` answers were lost so far.
    pub fn lost_commit_answers(&self) -> usize {
        self.lose.lost.load(Ordering::SeqCst)
    }

    /// How many `COMMIT`s were picked to lose their answer, counted when the `COMMIT` is
    /// forwarded: the writer waits for that answer for the next 300 ms.
    pub fn held_commit_answers(&self) -> usize {
        self.lose.held.load(Ordering::SeqCst)
    }

    /// Closes every connection through the proxy; new ones are closed at once until
    /// [`Proxy::restore`].
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        let tasks = std::mem::take(&mut *self.conns.lock().unwrap_or_else(|e| e.into_inner()));
        // Aborting a connection's task drops both of its sockets (its pipe halves are
        // aborted with it).
        for t in tasks {
            t.abort();
        }
    }

    /// Forwards new connections again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

/// A [`Proxy`] to `upstream` that delays what clients send by `delay`; its address.
pub async fn delaying(upstream: String, delay: Duration) -> SocketAddr {
    Proxy::start(upstream, delay).await.addr
}

/// Whether `haystack` contains `needle`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Waits while `stall` is set.
async fn held(stall: &AtomicBool) {
    while stall.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn pipe(
    client: TcpStream,
    server: TcpStream,
    delay: Duration,
    lose: Arc<LoseCommit>,
    stall: Arc<AtomicBool>,
) {
    let (mut client_rd, mut client_wr) = client.into_split();
    let (mut server_rd, mut server_wr) = server.into_split();
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    // This connection's transaction inserted rows since its last BEGIN.
    let inserted = Arc::new(AtomicBool::new(false));
    // The database's answers are no longer forwarded; then the connection closes.
    let hold = Arc::new(AtomicBool::new(false));
    let close = Arc::new(tokio::sync::Notify::new());
    // The client's side closes now (a `COMMIT` landing late).
    let cut_client = Arc::new(tokio::sync::Notify::new());
    let reader = tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = client_rd.read(&mut buf).await {
            if n == 0
                || tx
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .is_err()
            {
                break;
            }
        }
    });
    let (saw_insert, holding, closing) = (inserted.clone(), hold.clone(), close.clone());
    let cutting = cut_client.clone();
    let stall_up = stall.clone();
    let writer = tokio::spawn(async move {
        // A connection of the store's main pool (its startup names the application): not
        // the lease pool's (`parchis-store-lease`).
        let mut main_pool = false;
        // The transaction does not wait for its WAL flush: a heartbeat or a renewal, not
        // a game write.
        let mut async_commit = false;
        while let Some((at, bytes)) = rx.recv().await {
            tokio::time::sleep_until(at).await;
            held(&stall_up).await;
            main_pool |= contains(&bytes, b"parchis-store\0");
            if contains(&bytes, b"BEGIN") {
                saw_insert.store(false, Ordering::SeqCst);
                async_commit = false;
            }
            async_commit |= contains(&bytes, b"synchronous_commit");
            let lost = main_pool
                && !async_commit
                && contains(&bytes, b"COMMIT\0")
                && saw_insert.load(Ordering::SeqCst)
                && lose.armed.swap(false, Ordering::SeqCst);
            if lost {
                holding.store(true, Ordering::SeqCst);
                lose.held.fetch_add(1, Ordering::SeqCst);
            }
            if lost && lose.late.swap(false, Ordering::SeqCst) {
                // The client loses the connection with its COMMIT sent; the COMMIT lands
                // 500 ms later.
                cutting.notify_one();
                tokio::time::sleep(Duration::from_millis(500)).await;
                let _ = server_wr.write_all(&bytes).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
                lose.lost.fetch_add(1, Ordering::SeqCst);
                closing.notify_one();
                break;
            }
            if server_wr.write_all(&bytes).await.is_err() {
                break;
            }
            if lost {
                // Applied by now; the answer is held, and the connection goes.
                tokio::time::sleep(Duration::from_millis(300)).await;
                lose.lost.fetch_add(1, Ordering::SeqCst);
                closing.notify_one();
                break;
            }
        }
    });
    // Aborts the halves when this future is dropped (the connection's task aborted) as
    // well as when the upstream closes.
    let _halves = AbortOnDrop([reader.abort_handle(), writer.abort_handle()]);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = tokio::select! {
            read = server_rd.read(&mut buf) => match read {
                Ok(n) if n > 0 => n,
                _ => break,
            },
            _ = close.notified() => break,
            _ = cut_client.notified() => {
                let _ = client_wr.shutdown().await;
                continue;
            }
        };
        if contains(&buf[..n], b"INSERT 0 ") {
            inserted.store(true, Ordering::SeqCst);
        }
        if hold.load(Ordering::SeqCst) {
            continue;
        }
        held(&stall).await;
        if client_wr.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
}

/// Aborts its tasks when dropped.
struct AbortOnDrop([AbortHandle; 2]);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}
