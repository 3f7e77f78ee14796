//! A TCP proxy in front of NATS that holds everything one node sends for a fixed delay
//! (in order; what NATS sends back is not delayed): that node's subscriptions, replies
//! and publishes reach NATS late, as on a loaded machine or a slow link, while every other
//! node is on time.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Listens on a free loopback port and forwards each connection to `upstream`
/// (`host:port`), delaying the client→upstream bytes by `delay`. Returns its address;
/// the proxy runs until the test's runtime ends.
pub async fn delaying(upstream: String, delay: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
    let addr = listener.local_addr().expect("proxy address");
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream = upstream.clone();
            tokio::spawn(async move {
                if let Ok(server) = TcpStream::connect(&upstream).await {
                    pipe(client, server, delay).await;
                }
            });
        }
    });
    addr
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
    let _ = tokio::io::copy(&mut server_rd, &mut client_wr).await;
    reader.abort();
    writer.abort();
}
