//! A loopback TCP proxy in front of a service (NATS, PostgreSQL) that a test can make
//! slow or take away:
//!
//! - [`delaying`]: holds everything one node sends for a fixed delay (in order; what the
//!   service sends back is not delayed): that node's subscriptions, replies and publishes
//!   reach NATS late, as on a loaded machine or a slow link, while every other node is on
//!   time;
//! - [`Proxy::cut`] closes every connection through the proxy and closes each new one at
//!   once (the service is gone, as when its host or the network fails) until
//!   [`Proxy::restore`], without touching the service itself (other tests share it).

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
    /// The forwarding task of every connection opened while not cut.
    conns: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to `upstream`
    /// (`host:port`), delaying the client→upstream bytes by `delay` (zero: none).
    pub async fn start(upstream: String, delay: Duration) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let cut = Arc::new(AtomicBool::new(false));
        let conns: Arc<Mutex<Vec<AbortHandle>>> = Arc::new(Mutex::new(Vec::new()));
        let (is_cut, tasks) = (cut.clone(), conns.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if is_cut.load(Ordering::SeqCst) {
                    // Refused: closed before a byte is forwarded.
                    drop(client);
                    continue;
                }
                let upstream = upstream.clone();
                let task = tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(&upstream).await {
                        pipe(client, server, delay).await;
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
        Proxy { addr, cut, conns }
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

async fn pipe(client: TcpStream, server: TcpStream, delay: Duration) {
    let (mut client_rd, mut client_wr) = client.into_split();
    let (mut server_rd, mut server_wr) = server.into_split();
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
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
    let writer = tokio::spawn(async move {
        while let Some((at, bytes)) = rx.recv().await {
            tokio::time::sleep_until(at).await;
            if server_wr.write_all(&bytes).await.is_err() {
                break;
            }
        }
    });
    // Aborts the halves when this future is dropped (the connection's task aborted) as
    // well as when the upstream closes.
    let _halves = AbortOnDrop([reader.abort_handle(), writer.abort_handle()]);
    let _ = tokio::io::copy(&mut server_rd, &mut client_wr).await;
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
