//! `--metrics-dir`: every node's `GET /metrics` saved when the measured window ends, so a
//! run's report comes with the servers' own counters of that moment (connections kicked by
//! close code, refusals by code, shedding, lease renewals …), before the clients close.

use crate::cli::parse_url;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// The body of an HTTP response (everything after the head), if its status is 200.
pub fn body_of_ok(response: &str) -> Result<&str, String> {
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| "no end of the response head".to_string())?;
    match head.split_whitespace().nth(1) {
        Some("200") => Ok(body),
        other => Err(format!("HTTP status {other:?}")),
    }
}

/// `GET /metrics` of the node at `url`, as text. HTTP/1.0, so the body is not chunked
/// and ends with the connection.
async fn fetch(url: &str) -> Result<String, String> {
    let node = parse_url(url)?;
    let exchange = async {
        let mut stream = TcpStream::connect(node.addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let req = format!("GET /metrics HTTP/1.0\r\nHost: {}\r\n\r\n", node.host);
        stream
            .write_all(req.as_bytes())
            .await
            .map_err(|e| format!("write: {e}"))?;
        let mut buf = Vec::new();
        stream
            .read_to_end(&mut buf)
            .await
            .map_err(|e| format!("read: {e}"))?;
        Ok::<_, String>(buf)
    };
    let buf = timeout(Duration::from_secs(10), exchange)
        .await
        .map_err(|_| "timed out".to_string())??;
    let text = String::from_utf8_lossy(&buf);
    body_of_ok(&text).map(str::to_owned)
}

/// Saves each of `urls`' `/metrics` as `dir/node-<i>.prom` (all at once). A node that
/// does not answer is reported on stderr and skipped: the run goes on.
pub async fn save(urls: &[String], dir: &Path) {
    if let Err(e) = tokio::fs::create_dir_all(dir).await {
        eprintln!("parchis-loadgen: metrics dir {}: {e}", dir.display());
        return;
    }
    let fetches = urls.iter().map(|u| fetch(u));
    let bodies = futures_util::future::join_all(fetches).await;
    for (i, body) in bodies.into_iter().enumerate() {
        let path = dir.join(format!("node-{i}.prom"));
        let written = match body {
            Ok(text) => tokio::fs::write(&path, text)
                .await
                .map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            eprintln!(
                "parchis-loadgen: metrics of node {i} ({}): {e}",
                path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_200_has_a_body() {
        let ok = "HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\n# TYPE a counter\na 1\n";
        assert_eq!(body_of_ok(ok), Ok("# TYPE a counter\na 1\n"));
        assert!(body_of_ok("HTTP/1.0 404 Not Found\r\n\r\n")
            .unwrap_err()
            .contains("404"));
        assert!(body_of_ok("HTTP/1.0 200 OK\r\n").is_err());
    }
}
