//! The web client embedded in the binary is exactly the files in `web/`: every file there
//! is served by the real server, byte for byte, with its content type; `/` and the invite
//! route `/r/{code}` serve `index.html`.

use parchis_server::{AppState, ServerConfig};
use parchis_store::{MemoryStore, Store};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

struct Reply {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

async fn get(addr: SocketAddr, path: &str) -> Reply {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let body = buf[split + 4..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Reply {
        status,
        headers,
        body,
    }
}

fn web_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../web")
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

#[tokio::test]
async fn the_served_client_is_the_web_folder() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let store = Arc::new(MemoryStore::new()) as Arc<dyn Store>;
    let state = AppState::new(ServerConfig::default(), store);
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(parchis_server::run(listener, state, shutdown.clone()));

    let mut files: Vec<String> = std::fs::read_dir(web_dir())
        .expect("web/ exists")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.iter().any(|f| f == "index.html"), "web/index.html");
    assert!(files.iter().any(|f| f == "app.js"), "web/app.js");

    // Every file in web/ is embedded and served unchanged (a new file must be added to
    // static_files::ASSETS).
    for name in &files {
        let on_disk = std::fs::read(web_dir().join(name)).expect("read file");
        let r = get(addr, &format!("/{name}")).await;
        assert_eq!(r.status, 200, "GET /{name}");
        assert_eq!(r.body, on_disk, "GET /{name} serves web/{name} as it is");
        assert_eq!(
            r.headers.get("content-type").map(String::as_str),
            Some(content_type(name)),
            "content type of /{name}"
        );
        assert_eq!(
            r.headers.get("x-content-type-options").map(String::as_str),
            Some("nosniff")
        );
    }
    assert_eq!(
        parchis_server::static_files::ASSETS.len(),
        files.len(),
        "every embedded asset is a file of web/"
    );

    // The app shell at `/`, and at the invite route.
    let index = std::fs::read(web_dir().join("index.html")).expect("index");
    for path in ["/", "/r/ABCDEFGHJK", "/?room=ABCDEFGHJK"] {
        let r = get(addr, path).await;
        assert_eq!(r.status, 200, "GET {path}");
        assert_eq!(r.body, index, "GET {path} serves index.html");
        assert!(r.headers.contains_key("content-security-policy"));
    }
    // The client's modules are all referenced with absolute paths that are served.
    let app = String::from_utf8(get(addr, "/app.js").await.body).expect("utf-8");
    for module in [
        "./i18n.js",
        "./ctx.js",
        "./lobby.js",
        "./game.js",
        "./sound.js",
    ] {
        assert!(app.contains(module), "app.js imports {module}");
    }
    assert_eq!(get(addr, "/nope.js").await.status, 404);

    shutdown.cancel();
    let _ = task.await;
}
