//! One WebSocket connection: a reader loop that validates frames (size, JSON, type, rate,
//! duplicate request ids) and forwards commands to its room actor, and a writer that drains
//! the connection's bounded outbound queue. The room never waits for a connection: a
//! connection whose queue overflows is kicked as a slow consumer.

use crate::ids::normalise_code;
use crate::room::{encode, ConnLink, Kick, Member, Refusal, RoomCmd, RoomHandle, SeatCmd};
use crate::state::AppState;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use parchis_protocol::{close_code, parse_client_message, ClientMessage, ErrorCode, ServerMessage};
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::{debug, Instrument};

/// Frames already queued for a connection are written to its socket together, up to about
/// this many bytes per write (tungstenite writes through once its buffer passes it).
const WRITE_BATCH_BYTES: usize = 16 * 1024;
/// At most this many queued frames are coalesced before a flush.
const WRITE_BATCH_FRAMES: usize = 64;

/// `GET /ws`: upgrades to a WebSocket with the configured size limits.
pub async fn upgrade(ws: WebSocketUpgrade, State(state): State<AppState>) -> Response {
    let cfg = state.config();
    let hard = cfg.hard_max_message_bytes.max(cfg.max_message_bytes);
    ws.read_buffer_size(cfg.read_buffer_bytes)
        .write_buffer_size(WRITE_BATCH_BYTES)
        .max_message_size(hard)
        .max_frame_size(hard)
        .on_upgrade(move |socket| {
            let conn = state.next_id();
            let span = tracing::info_span!("conn", conn);
            let tracker = state.tracker().clone();
            tracker.track_future(connection(socket, state, conn).instrument(span))
        })
}

struct Joined {
    code: String,
    handle: RoomHandle,
    member: Member,
}

struct Session {
    state: AppState,
    link: ConnLink,
    joined: Option<Joined>,
    seen: HashSet<u64>,
    seen_order: VecDeque<u64>,
    tokens: f64,
    refilled: Instant,
    errors: VecDeque<Instant>,
}

enum Flow {
    Continue,
    Close,
}

async fn connection(socket: WebSocket, state: AppState, conn: u64) {
    let cfg = state.config().clone();
    let (sink, mut stream) = socket.split();
    let (tx, rx) = mpsc::channel::<Arc<str>>(cfg.outbound_queue.max(1));
    let kick = Kick::default();
    let link = ConnLink {
        id: conn,
        tx,
        kick: kick.clone(),
    };
    let writer = tokio::spawn(writer(sink, rx, kick.clone()).in_current_span());
    let shutdown = state.shutdown_token();
    let mut session = Session {
        state,
        link,
        joined: None,
        seen: HashSet::new(),
        seen_order: VecDeque::new(),
        tokens: f64::from(cfg.commands_per_second.max(1) * 2),
        refilled: Instant::now(),
        errors: VecDeque::new(),
    };
    crate::observe::socket_opened(conn);
    session.state.connection_opened(conn, kick.clone());
    loop {
        tokio::select! {
            biased;
            _ = kick.kicked() => break,
            _ = shutdown.cancelled() => {
                kick.kick(close_code::GOING_AWAY, "server shutting down");
                break;
            }
            frame = stream.next() => match frame {
                Some(Ok(msg)) => {
                    if let Flow::Close = session.on_frame(msg).await {
                        break;
                    }
                }
                Some(Err(e)) => {
                    debug!(error = %e, "read error");
                    break;
                }
                None => break,
            },
        }
    }
    if let Some((code, reason)) = kick.reason() {
        if code != close_code::NORMAL && code != close_code::GOING_AWAY {
            let room = session.joined.as_ref().map(|j| j.code.as_str());
            crate::observe::kicked(conn, room, code, &reason);
        }
    }
    if let Some(j) = session.joined.take() {
        let _ = j.handle.sender().send(RoomCmd::Detach { conn }).await;
    }
    session.state.connection_closed(conn);
    kick.kick(close_code::NORMAL, "bye");
    drop(session);
    let _ = writer.await;
    crate::observe::socket_closed(conn);
}

async fn writer(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    mut rx: mpsc::Receiver<Arc<str>>,
    kick: Kick,
) {
    loop {
        let msg = tokio::select! {
            biased;
            _ = kick.kicked() => break,
            m = rx.recv() => m,
        };
        let Some(first) = msg else { break };
        crate::observe::outbound_depth(rx.len() + 1);
        let sent = tokio::select! {
            biased;
            _ = kick.kicked() => break,
            r = send_batch(&mut sink, first, &mut rx) => r,
        };
        if sent.is_err() {
            return;
        }
    }
    let Some((code, reason)) = kick.reason() else {
        return;
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        if code != close_code::SLOW_CONSUMER {
            while let Ok(m) = rx.try_recv() {
                sink.send(Message::Text(m.as_ref().into())).await?;
            }
        }
        if code != close_code::NORMAL {
            let closing = encode(&ServerMessage::Closing {
                code,
                reason: reason.clone(),
            });
            sink.send(Message::Text(closing.as_ref().into())).await?;
        }
        sink.send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await
    })
    .await;
}

/// Writes `first` and every frame already queued behind it (up to
/// [`WRITE_BATCH_FRAMES`]), then flushes once: the events, `ok` and `your_turn` that one
/// action produces reach the socket in one write instead of one write each.
async fn send_batch(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    first: Arc<str>,
    rx: &mut mpsc::Receiver<Arc<str>>,
) -> Result<(), axum::Error> {
    sink.feed(Message::Text(first.as_ref().into())).await?;
    for _ in 1..WRITE_BATCH_FRAMES {
        match rx.try_recv() {
            Ok(m) => sink.feed(Message::Text(m.as_ref().into())).await?,
            Err(_) => break,
        }
    }
    sink.flush().await
}

impl Session {
    fn send(&self, msg: &ServerMessage) {
        self.link.send(encode(msg));
    }

    /// Reports an error to the client; too many in the window closes the connection.
    fn error(&mut self, req: Option<u64>, code: ErrorCode, message: impl Into<String>) -> Flow {
        self.refuse(
            req,
            Refusal {
                code,
                message: message.into(),
                rule: None,
            },
        )
    }

    fn refuse(&mut self, req: Option<u64>, r: Refusal) -> Flow {
        crate::observe::refused(r.code);
        self.send(&r.to_message(req));
        let cfg = self.state.config();
        let now = Instant::now();
        self.errors.push_back(now);
        while self
            .errors
            .front()
            .is_some_and(|t| now.duration_since(*t) > cfg.error_window)
        {
            self.errors.pop_front();
        }
        if self.errors.len() > cfg.max_errors as usize {
            debug!("too many errors: closing");
            self.link
                .kick
                .kick(close_code::POLICY, "too many errors or commands");
            return Flow::Close;
        }
        Flow::Continue
    }

    fn take_token(&mut self) -> bool {
        let rate = f64::from(self.state.config().commands_per_second.max(1));
        let now = Instant::now();
        let elapsed = now.duration_since(self.refilled).as_secs_f64();
        self.refilled = now;
        self.tokens = (self.tokens + elapsed * rate).min(rate * 2.0);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    async fn on_frame(&mut self, msg: Message) -> Flow {
        let received = Instant::now();
        let text = match msg {
            Message::Text(t) => t,
            Message::Binary(_) => {
                return self.error(
                    None,
                    ErrorCode::BinaryFrame,
                    ErrorCode::BinaryFrame.describe(),
                )
            }
            Message::Ping(_) | Message::Pong(_) => return Flow::Continue,
            Message::Close(_) => return Flow::Close,
        };
        let max = self.state.config().max_message_bytes;
        if text.len() > max {
            return self.error(
                None,
                ErrorCode::FrameTooLarge,
                format!("frame of {} bytes; the limit is {max}", text.len()),
            );
        }
        if !self.take_token() {
            return self.error(
                None,
                ErrorCode::RateLimited,
                ErrorCode::RateLimited.describe(),
            );
        }
        let msg = match parse_client_message(text.as_str()) {
            Ok(m) => m,
            Err(e) => return self.error(e.req, e.code, e.message),
        };
        let req = msg.req();
        if !self.seen.insert(req) {
            return self.error(
                Some(req),
                ErrorCode::DuplicateRequest,
                format!("request id {req} was already used on this connection"),
            );
        }
        self.seen_order.push_back(req);
        if self.seen_order.len() > 4096 {
            if let Some(old) = self.seen_order.pop_front() {
                self.seen.remove(&old);
            }
        }
        self.dispatch(msg, received).await
    }

    async fn dispatch(&mut self, msg: ClientMessage, received: Instant) -> Flow {
        let req = msg.req();
        if let ClientMessage::Ping { req } = msg {
            self.send(&ServerMessage::Pong { req });
            return Flow::Continue;
        }
        let room = normalise_code(msg.room().unwrap_or_default());
        let entry = matches!(
            msg,
            ClientMessage::Join { .. } | ClientMessage::Watch { .. } | ClientMessage::Resume { .. }
        );
        if entry {
            if self.joined.is_some() {
                return self.error(
                    Some(req),
                    ErrorCode::AlreadyJoined,
                    ErrorCode::AlreadyJoined.describe(),
                );
            }
            let Some(handle) = self.state.room(&room) else {
                return self.error(
                    Some(req),
                    ErrorCode::UnknownRoom,
                    format!("no room has code {room:?}"),
                );
            };
            let (reply, answer) = oneshot::channel();
            let link = self.link.clone();
            let cmd = match msg {
                ClientMessage::Join { name, colour, .. } => RoomCmd::Join {
                    link,
                    req,
                    name,
                    colour,
                    reply,
                },
                ClientMessage::Watch { .. } => RoomCmd::Watch { link, req, reply },
                ClientMessage::Resume {
                    token, last_seq, ..
                } => RoomCmd::Resume {
                    link,
                    req,
                    token,
                    last_seq,
                    reply,
                },
                _ => return Flow::Continue,
            };
            if handle.sender().send(cmd).await.is_err() {
                return self.error(Some(req), ErrorCode::UnknownRoom, "the room has closed");
            }
            return match answer.await {
                Ok(Ok(member)) => {
                    self.joined = Some(Joined {
                        code: room,
                        handle,
                        member,
                    });
                    Flow::Continue
                }
                Ok(Err(refusal)) => self.refuse(Some(req), refusal),
                Err(_) => self.error(Some(req), ErrorCode::UnknownRoom, "the room has closed"),
            };
        }
        let Some(joined) = &self.joined else {
            let code = if self.state.room(&room).is_some() {
                ErrorCode::NotJoined
            } else {
                ErrorCode::UnknownRoom
            };
            return self.error(Some(req), code, code.describe());
        };
        if joined.code != room {
            return self.error(
                Some(req),
                ErrorCode::WrongRoom,
                format!("this connection joined room {}, not {room:?}", joined.code),
            );
        }
        let (seq, cmd) = match msg {
            ClientMessage::ChooseColour { seq, colour, .. } => (seq, SeatCmd::ChooseColour(colour)),
            ClientMessage::Start { seq, .. } => (seq, SeatCmd::Start),
            ClientMessage::Roll { seq, .. } => (seq, SeatCmd::Roll),
            ClientMessage::Play { seq, action, .. } => (seq, SeatCmd::Play(action)),
            ClientMessage::Leave { seq, .. } => (seq, SeatCmd::Leave),
            _ => return Flow::Continue,
        };
        let command = RoomCmd::Command {
            conn: self.link.id,
            member: joined.member,
            req,
            seq,
            cmd,
            received,
        };
        if joined.handle.sender().send(command).await.is_err() {
            self.joined = None;
            return self.error(Some(req), ErrorCode::UnknownRoom, "the room has closed");
        }
        if cmd == SeatCmd::Leave {
            self.joined = None;
        }
        Flow::Continue
    }
}
