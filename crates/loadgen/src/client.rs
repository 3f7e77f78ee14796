//! The client side of the protocol the load generator needs: TCP connections from a
//! chosen source address, `POST /api/rooms`, WebSocket `join` and reading JSON frames.

use crate::cli::Node;
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::{timeout, Instant};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

/// What one `POST /api/rooms` got.
enum Created {
    /// The room's code.
    Code(String),
    /// 503: try again after this long.
    RetryAfter(Duration),
}

/// The `Retry-After` (whole seconds) of a response head: 1 s when absent, at most 5 s.
fn retry_after(head: &str) -> Duration {
    let secs = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("retry-after")
                .then(|| value.trim().parse::<u64>().ok())
                .flatten()
        })
        .unwrap_or(1);
    Duration::from_secs(secs.clamp(1, 5))
}

/// A client WebSocket.
pub type Ws = WebSocketStream<TcpStream>;

/// Source addresses (round-robin) and the count of open WebSockets.
#[derive(Default)]
pub struct Net {
    /// Addresses to bind before connecting (127.0.0.1 when empty).
    pub sources: Vec<Ipv4Addr>,
    next_source: AtomicU64,
    open: AtomicI64,
    open_peak: AtomicI64,
    create_retries: AtomicU64,
}

/// A `POST /api/rooms` answered 503 (`server_full`: every node full or shedding load) is
/// sent again after its `Retry-After` (1 s without one, at most 5 s), at most this often.
const CREATE_RETRIES: u32 = 30;

impl Net {
    /// Connections from `sources` in turn.
    pub fn new(sources: Vec<Ipv4Addr>) -> Net {
        Net {
            sources,
            ..Net::default()
        }
    }

    fn source(&self) -> Ipv4Addr {
        let n = self.sources.len().max(1) as u64;
        let i = self.next_source.fetch_add(1, Ordering::Relaxed) % n;
        self.sources
            .get(i as usize)
            .copied()
            .unwrap_or(Ipv4Addr::LOCALHOST)
    }

    /// WebSockets open now.
    pub fn open(&self) -> i64 {
        self.open.load(Ordering::Relaxed)
    }

    /// Most WebSockets open at once so far.
    pub fn peak(&self) -> i64 {
        self.open_peak.load(Ordering::Relaxed)
    }

    fn opened(&self) {
        let now = self.open.fetch_add(1, Ordering::Relaxed) + 1;
        self.open_peak.fetch_max(now, Ordering::Relaxed);
    }

    /// Room creations sent again after a 503.
    pub fn create_retries(&self) -> u64 {
        self.create_retries.load(Ordering::Relaxed)
    }

    /// A WebSocket of [`Net::open_ws`] was closed (or dropped).
    pub fn closed(&self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }

    /// A TCP connection to `node` from the next source address.
    pub async fn connect(&self, node: &Node) -> Result<TcpStream, String> {
        let socket = TcpSocket::new_v4().map_err(|e| format!("socket: {e}"))?;
        socket
            .bind(SocketAddr::new(IpAddr::V4(self.source()), 0))
            .map_err(|e| format!("bind: {e}"))?;
        let stream = timeout(Duration::from_secs(10), socket.connect(node.addr))
            .await
            .map_err(|_| "connect: timed out".to_string())?
            .map_err(|e| format!("connect: {e}"))?;
        stream
            .set_nodelay(true)
            .map_err(|e| format!("nodelay: {e}"))?;
        Ok(stream)
    }

    /// `POST /api/rooms` (four seats, private) on `node`; returns the room code. A 503
    /// is tried again after its `Retry-After`, at most [`CREATE_RETRIES`] times.
    pub async fn create_room(&self, node: &Node, turn_clock_secs: u64) -> Result<String, String> {
        let mut retries = 0;
        loop {
            match self.create_room_once(node, turn_clock_secs).await? {
                Created::Code(code) => return Ok(code),
                Created::RetryAfter(wait) if retries < CREATE_RETRIES => {
                    retries += 1;
                    self.create_retries.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(wait).await;
                }
                Created::RetryAfter(_) => {
                    return Err("create room: HTTP status \"503\" (retries exhausted)".into())
                }
            }
        }
    }

    async fn create_room_once(&self, node: &Node, turn_clock_secs: u64) -> Result<Created, String> {
        let mut stream = self.connect(node).await?;
        let body =
            json!({"seats": 4, "turn_clock_secs": turn_clock_secs, "public": false}).to_string();
        let req = format!(
            "POST /api/rooms HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
            node.host,
            body.len(),
            body
        );
        stream
            .write_all(req.as_bytes())
            .await
            .map_err(|e| format!("http write: {e}"))?;
        let mut buf = Vec::with_capacity(1024);
        timeout(Duration::from_secs(30), stream.read_to_end(&mut buf))
            .await
            .map_err(|_| "http: timed out".to_string())?
            .map_err(|e| format!("http read: {e}"))?;
        let text = String::from_utf8_lossy(&buf);
        let status = text.split_whitespace().nth(1).unwrap_or("");
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        if status == "503" {
            return Ok(Created::RetryAfter(retry_after(head)));
        }
        if status != "201" {
            return Err(format!("create room: HTTP status {status:?}"));
        }
        // Tolerate a chunked body: the JSON object is between the first '{' and last '}'.
        let (start, end) = (body.find('{'), body.rfind('}'));
        let json = match (start, end) {
            (Some(s), Some(e)) if e > s => &body[s..=e],
            _ => return Err("create room: no JSON body".into()),
        };
        let v: Value = serde_json::from_str(json).map_err(|e| format!("create room: {e}"))?;
        v.get("code")
            .and_then(Value::as_str)
            .map(|c| Created::Code(c.to_string()))
            .ok_or_else(|| "create room: no code".into())
    }

    /// `GET path` on `node`; returns the HTTP status code.
    pub async fn get_status(&self, node: &Node, path: &str) -> Result<u16, String> {
        let mut stream = self.connect(node).await?;
        let req = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            node.host
        );
        stream
            .write_all(req.as_bytes())
            .await
            .map_err(|e| format!("http write: {e}"))?;
        let mut buf = Vec::with_capacity(512);
        timeout(Duration::from_secs(10), stream.read_to_end(&mut buf))
            .await
            .map_err(|_| "http: timed out".to_string())?
            .map_err(|e| format!("http read: {e}"))?;
        let text = String::from_utf8_lossy(&buf);
        text.split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "http: no status".into())
    }

    /// Opens a WebSocket to `node`'s `/ws` with small buffers (counted as open until
    /// [`Net::closed`]).
    pub async fn open_ws(&self, node: &Node) -> Result<Ws, String> {
        let stream = self.connect(node).await?;
        let url = format!("ws://{}/ws", node.host);
        let config = WebSocketConfig::default()
            .read_buffer_size(4096)
            .write_buffer_size(0)
            .max_write_buffer_size(1 << 20);
        let (ws, _) = timeout(
            Duration::from_secs(30),
            tokio_tungstenite::client_async_with_config(url, stream, Some(config)),
        )
        .await
        .map_err(|_| "handshake: timed out".to_string())?
        .map_err(|e| format!("handshake: {e}"))?;
        self.opened();
        Ok(ws)
    }

    /// Joins `code` through `node`; returns the client once `welcome` arrived.
    pub async fn join(&self, node: &Node, code: &str, name: &str) -> Result<Client, String> {
        let mut ws = self.open_ws(node).await?;
        let msg = json!({"type": "join", "req": 1, "room": code, "name": name});
        let result = async {
            ws.send(Message::text(msg.to_string()))
                .await
                .map_err(|e| format!("send join: {e}"))?;
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                match timeout(deadline - Instant::now(), next_json(&mut ws)).await {
                    Ok(Some(v)) => match type_of(&v) {
                        "welcome" => return Ok(seq_of(&v)),
                        "error" => {
                            let code = v.get("code").and_then(Value::as_str).unwrap_or("?");
                            return Err(format!("join refused: {code}"));
                        }
                        _ => {}
                    },
                    Ok(None) => return Err("join: connection closed".to_string()),
                    Err(_) => return Err("join: timed out".to_string()),
                }
            }
        }
        .await;
        match result {
            Ok(seq) => Ok(Client { ws, seq }),
            Err(e) => {
                self.closed();
                Err(e)
            }
        }
    }
}

/// Reads the next JSON text frame (other frames skipped); `None` when closed or on
/// error.
pub async fn next_json(ws: &mut Ws) -> Option<Value> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(t)) => return serde_json::from_str(t.as_str()).ok(),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => continue,
        }
    }
}

/// Reads the next text frame's bytes (other frames skipped); `None` when closed or on
/// error. The play loop reads its frames with this and [`Frame::parse`]: a frame's
/// `position` and `previews`, most of its bytes, are skipped without being built.
pub async fn next_text(ws: &mut Ws) -> Option<Utf8Bytes> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(t)) => return Some(t),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => continue,
        }
    }
}

/// The fields of a server frame the play loop reads (`proto/README.md`), borrowed from
/// the frame's text; every other field is skipped unparsed.
#[derive(Debug, Default, Deserialize)]
pub struct Frame<'a> {
    /// `type`.
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    /// `seq` (0 when absent or null).
    #[serde(default, deserialize_with = "u64_or_null")]
    pub seq: u64,
    /// `req` of an `ok` or `error`.
    #[serde(default)]
    pub req: Option<u64>,
    /// `code` of an `error`.
    #[serde(default, borrow)]
    pub code: Option<Cow<'a, str>>,
    /// `must_roll` of a `your_turn`.
    #[serde(default)]
    pub must_roll: bool,
    /// `legal` of a `your_turn` (small objects, sent back as they are).
    #[serde(default)]
    pub legal: Vec<Value>,
    /// `event` of an `event` frame: its `type` and, for a `game` event, the engine
    /// event's `type`.
    #[serde(default, borrow)]
    pub event: Option<EventHead<'a>>,
}

/// The `event` of an `event` frame, as far as [`Frame`] reads it.
#[derive(Debug, Default, Deserialize)]
pub struct EventHead<'a> {
    /// The room event's `type`.
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    /// A `game` event's engine event.
    #[serde(default, borrow)]
    pub event: Option<Box<EventHead<'a>>>,
}

fn u64_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.unwrap_or(0))
}

impl<'a> Frame<'a> {
    /// The frame in `text`; `None` when it is not a JSON object with a `type`.
    pub fn parse(text: &'a str) -> Option<Frame<'a>> {
        serde_json::from_str(text).ok()
    }

    /// Whether this `event` frame carries a `game_won` game event.
    pub fn is_game_won(&self) -> bool {
        self.event
            .as_ref()
            .and_then(|e| e.event.as_ref())
            .is_some_and(|g| g.kind == "game_won")
    }
}

/// The frame's `seq` (0 when absent).
pub fn seq_of(v: &Value) -> u64 {
    v.get("seq").and_then(Value::as_u64).unwrap_or(0)
}

/// The frame's `type` ("" when absent).
pub fn type_of(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("")
}

/// One seated client: its socket and the room's latest `seq` it has seen.
pub struct Client {
    /// The socket.
    pub ws: Ws,
    /// Latest `seq` seen on it.
    pub seq: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_reads_what_the_play_loop_needs_and_skips_the_rest() {
        let turn = r#"{"type":"your_turn","room":"AB","seq":7,"colour":"yellow","must_roll":false,"dice":[2,5],"legal":[{"type":"exit"},{"type":"move","piece":1,"die":2}],"previews":[{"position":{"players":[]}}],"deadline_ms":1}"#;
        let f = Frame::parse(turn).expect("frame");
        assert_eq!(
            (f.kind.as_ref(), f.seq, f.must_roll),
            ("your_turn", 7, false)
        );
        assert_eq!(
            f.legal,
            [
                json!({"type": "exit"}),
                json!({"type": "move", "piece": 1, "die": 2})
            ]
        );

        let won = r#"{"type":"event","room":"AB","seq":90,"at_ms":1,"event":{"type":"game","event":{"type":"game_won","winner":"red"}},"position":{"players":[]}}"#;
        let f = Frame::parse(won).expect("frame");
        assert_eq!(
            (f.kind.as_ref(), f.seq, f.is_game_won()),
            ("event", 90, true)
        );
        let turn_event = r#"{"type":"event","room":"AB","seq":91,"at_ms":1,"event":{"type":"turn","colour":"red","deadline_ms":1}}"#;
        assert!(!Frame::parse(turn_event).expect("frame").is_game_won());

        let err = r#"{"type":"error","req":null,"code":"rate_limited","message":"slow down","rule":null}"#;
        let f = Frame::parse(err).expect("frame");
        assert_eq!(
            (f.req, f.code.as_deref(), f.seq),
            (None, Some("rate_limited"), 0)
        );
        let ok = r#"{"type":"ok","req":1000001,"seq":12}"#;
        let f = Frame::parse(ok).expect("frame");
        assert_eq!((f.req, f.seq), (Some(1_000_001), 12));

        assert!(Frame::parse("not json").is_none());
        assert!(Frame::parse(r#"{"seq":1}"#).is_none());
    }

    #[test]
    fn retry_after_is_read_and_bounded() {
        let head =
            "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nRetry-After: 2";
        assert_eq!(retry_after(head), Duration::from_secs(2));
        assert_eq!(
            retry_after("HTTP/1.1 503 x\r\nretry-after: 60"),
            Duration::from_secs(5)
        );
        assert_eq!(retry_after("HTTP/1.1 503 x"), Duration::from_secs(1));
    }
}
