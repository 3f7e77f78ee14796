//! The accept loop: every TCP connection is admitted ([`parchis_admission`]) before hyper
//! serves it, with a header-read timeout so trickled or idle HTTP connections (a WebSocket
//! upgrade too) are closed, and the TCP peer attached to each request as [`ConnectInfo`]
//! and the client's address ([`crate::client_addr`]) as [`ClientAddr`].
//!
//! A connection over a limit is still answered, cheaply: `/healthz` gets `ok`, the
//! operators' `/readyz` and `/metrics` get their real answer (at most
//! [`Limits::ops_reserved`] of them at once, beyond that a refusal), anything else a JSON
//! `rate_limited` (429) or `server_full` (503) error with `Retry-After`, then the socket
//! closes. At most [`Limits::max_refusals`] such answers are in flight; beyond that a
//! connection is closed at once, so descriptors stay free for health checks and clients.

use crate::client_addr::{client_addr, ClientAddr};
use crate::config::{Limits, ServerConfig};
use crate::state::AppState;
use axum::extract::ConnectInfo;
use axum::http::{header, HeaderValue, Request, Response, StatusCode};
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use parchis_admission::{ConnGuard, Denied};
use parchis_protocol::HttpError;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;
use tracing::{debug, warn};

/// Paths still served on a connection over a limit (within [`Limits::ops_reserved`]).
const OPS_PATHS: [&str; 2] = ["/readyz", "/metrics"];

/// How long a refused connection may take to send its request.
const REFUSAL_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// A TCP stream that holds its admission slot for as long as it lives, through the
/// WebSocket upgrade.
struct Admitted {
    tcp: TcpStream,
    _slot: Option<ConnGuard>,
}

impl AsyncRead for Admitted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_read(cx, buf)
    }
}

impl AsyncWrite for Admitted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }
}

/// Accepts connections on `listener` and serves `router` on them until `shutdown` fires;
/// then stops accepting and waits (up to 5 s) for in-flight HTTP requests. Upgraded
/// WebSockets are not waited for here: they watch the server's shutdown token themselves.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    state: AppState,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let http_conns = TaskTracker::new();
    let refusing = Arc::new(AtomicUsize::new(0));
    let ops = Arc::new(AtomicUsize::new(0));
    let cfg = state.config().clone();
    let Limits {
        max_refusals,
        ops_reserved,
        ..
    } = cfg.limits;
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => break,
            r = listener.accept() => r,
        };
        let (tcp, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                // Out of descriptors or a connection reset before accept: wait a little
                // instead of spinning.
                warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        if let Some(bytes) = cfg.send_buffer_bytes {
            let _ = socket2::SockRef::from(&tcp).set_send_buffer_size(bytes);
        }
        let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
        match state.admission().connect(peer.ip()) {
            Ok(slot) => serve_admitted(&http_conns, tcp, slot, peer, &router, &cfg, &shutdown),
            Err(denied) => {
                if refusing.load(Ordering::Relaxed) >= max_refusals {
                    drop(tcp);
                    continue;
                }
                debug!(%peer, %denied, "connection over a limit");
                refusing.fetch_add(1, Ordering::Relaxed);
                let refusing = refusing.clone();
                let ops = Ops {
                    router: router.clone(),
                    in_flight: ops.clone(),
                    reserved: ops_reserved,
                    peer,
                };
                tokio::spawn(async move {
                    refuse(tcp, denied, ops).await;
                    refusing.fetch_sub(1, Ordering::Relaxed);
                });
            }
        }
    }
    drop(listener);
    http_conns.close();
    let _ = tokio::time::timeout(Duration::from_secs(5), http_conns.wait()).await;
    Ok(())
}

/// Serves HTTP (and WebSocket upgrades) on admitted connection `tcp`, which holds its
/// admission `slot` for as long as it lives; an in-flight request is finished on
/// `shutdown`.
fn serve_admitted(
    http_conns: &TaskTracker,
    tcp: TcpStream,
    slot: ConnGuard,
    peer: SocketAddr,
    router: &Router,
    cfg: &ServerConfig,
    shutdown: &CancellationToken,
) {
    let io = TokioIo::new(Admitted {
        tcp,
        _slot: Some(slot),
    });
    let router = router.clone();
    let trusted = cfg.limits.trusted_proxies.clone();
    let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
        let forwarded = req
            .headers()
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok());
        let client = client_addr(peer.ip(), forwarded, &trusted);
        req.extensions_mut().insert(ClientAddr(client));
        req.extensions_mut().insert(ConnectInfo(peer));
        router.clone().oneshot(req)
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(cfg.timeouts.header_read);
    let conn = http.serve_connection(io, service).with_upgrades();
    let stop = shutdown.clone();
    http_conns.spawn(async move {
        let mut conn = std::pin::pin!(conn);
        let ended = tokio::select! {
            r = conn.as_mut() => r,
            _ = stop.cancelled() => {
                // Finish the request in flight, then close.
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        };
        if let Err(e) = ended {
            debug!(%peer, error = %e, "http connection ended");
        }
    });
}

/// What a connection over a limit needs to serve an operator's request.
struct Ops {
    router: Router,
    /// Operator requests being served on refused connections (≤ `reserved`).
    in_flight: Arc<AtomicUsize>,
    /// [`Limits::ops_reserved`].
    reserved: usize,
    peer: SocketAddr,
}

impl Ops {
    /// Takes one of the `reserved` slots; `None` when all are in use.
    fn slot(&self) -> Option<OpsSlot> {
        self.in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.reserved).then_some(n + 1)
            })
            .ok()
            .map(|_| OpsSlot(self.in_flight.clone()))
    }
}

/// One operator request in flight; gives its slot back when dropped.
struct OpsSlot(Arc<AtomicUsize>);

impl Drop for OpsSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Answers one request on a connection over a limit, then closes it: `/readyz` and
/// `/metrics` through the router while a [`Limits::ops_reserved`] slot is free, anything else
/// with [`refusal`].
async fn refuse(tcp: TcpStream, denied: Denied, ops: Ops) {
    let io = TokioIo::new(Admitted { tcp, _slot: None });
    let ops = Arc::new(ops);
    let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
        let denied = denied.clone();
        let ops = ops.clone();
        async move {
            let slot = OPS_PATHS
                .contains(&req.uri().path())
                .then(|| ops.slot())
                .flatten();
            let Some(_slot) = slot else {
                return Ok::<_, std::convert::Infallible>(refusal(req.uri().path(), &denied));
            };
            req.extensions_mut().insert(ClientAddr(ops.peer.ip()));
            req.extensions_mut().insert(ConnectInfo(ops.peer));
            let mut response = ops.router.clone().oneshot(req).await?;
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            Ok(response)
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(REFUSAL_HEADER_TIMEOUT)
        .keep_alive(false);
    let _ = tokio::time::timeout(
        REFUSAL_HEADER_TIMEOUT * 2,
        http.serve_connection(io, service),
    )
    .await;
}

/// The answer to a request on a connection over a limit.
pub fn refusal(path: &str, denied: &Denied) -> Response<axum::body::Body> {
    if path == "/healthz" {
        return Response::new(axum::body::Body::from("ok"));
    }
    let status = match denied {
        Denied::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        Denied::ServerFull { .. } => StatusCode::SERVICE_UNAVAILABLE,
    };
    let body = HttpError {
        code: denied.code(),
        message: denied.to_string(),
    };
    let mut response = Response::new(axum::body::Body::from(
        serde_json::to_vec(&body).unwrap_or_default(),
    ));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::RETRY_AFTER,
        HeaderValue::from(denied.retry_after_secs()),
    );
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(reserved: usize) -> Ops {
        Ops {
            router: Router::new(),
            in_flight: Arc::new(AtomicUsize::new(0)),
            reserved,
            peer: SocketAddr::from(([127, 0, 0, 1], 1)),
        }
    }

    #[test]
    fn operator_requests_over_a_limit_take_at_most_the_reserved_slots() {
        for reserved in [0, 1, 2, 4] {
            let ops = ops(reserved);
            let held: Vec<OpsSlot> = std::iter::from_fn(|| ops.slot()).take(10).collect();
            assert_eq!(held.len(), reserved, "reserve of {reserved}");
            assert_eq!(ops.in_flight.load(Ordering::Acquire), reserved);
            drop(held);
            assert_eq!(ops.in_flight.load(Ordering::Acquire), 0, "slots given back");
            assert_eq!(ops.slot().is_some(), reserved > 0);
        }
    }
}
