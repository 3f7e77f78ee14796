//! One WebSocket connection: a reader loop that validates frames (size, JSON, type, rate,
//! duplicate request ids) and forwards commands to its room actor, and a writer that drains
//! the connection's bounded outbound queue. The room never waits for a connection: a
//! connection whose queue overflows, or whose frames are not written to the socket within
//! the write timeout, is kicked as a slow consumer.
//!
//! Liveness: the writer pings every `ping_interval`; a connection from which nothing
//! arrived for `ping_interval + pong_timeout` is dropped (4005) and its seat shows
//! disconnected. A connection that has not joined a room within `join` is closed (4004).
//! Framing violations close with 1009 (too big), 1002 (protocol) or 1007 (bad UTF-8).
//!
//! * `entry`: `join`, `watch`, `resume`, `claim` — to the room here, or (cluster mode) to its
//!   owner on another node.
//! * `session`: the session's state and its helpers (send, refuse, rate).
//! * `writer`: the socket's writer task.
//!
//! Why ~600 lines: the reader loop, the frame checks and the dispatch of each client
//! message (entries, seat commands, `claim`'s key) are one connection's flow in order.

mod entry;
mod session;
mod writer;

use self::entry::{Entry, Unserved};
use self::session::{Flow, Session};
use self::writer::{writer, WRITE_BATCH_BYTES};

use crate::client_addr::ClientAddr;
use crate::config::Timeouts;
use crate::names::display_name;
use crate::state::AppState;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use futures_util::stream::SplitStream;
use futures_util::StreamExt;
use parchis_cluster::routing::{self, Route};
use parchis_protocol::{close_code, parse_client_message, ClientMessage, ErrorCode, ServerMessage};
use parchis_room::ids::normalise_code;
use parchis_room::{ConnLink, Kick, Mutes, RoomCmd, SeatCmd, Unwritten};
use parchis_room_core::reserved::ticket_key;

/// Longest quick-pairing ticket a `claim` may carry, in characters.
pub const MAX_TICKET_CHARS: usize = 64;
use std::collections::{HashSet, VecDeque};
use std::net::{IpAddr, SocketAddr};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, Instrument};

/// `GET /ws`: upgrades to a WebSocket with the configured size limits. A page whose
/// `Origin` is not allowed ([`crate::origin`]) gets 403 `origin_not_allowed`.
pub async fn upgrade(
    ws: WebSocketUpgrade,
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    auth: axum_login::AuthSession<crate::accounts::auth::Backend>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    let cfg = state.config();
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let origin = headers
        .get(header::ORIGIN)
        .map(|v| v.to_str().unwrap_or("?"));
    if !crate::origin::allowed(origin, text(header::HOST), &cfg.allowed_origins) {
        debug!(%peer, ?origin, "websocket from a page of another origin refused");
        let body = parchis_protocol::HttpError {
            code: ErrorCode::OriginNotAllowed,
            message: format!("pages from {} may not connect", origin.unwrap_or_default()),
        };
        return (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
    }
    // The logged-in player, if the upgrade carries a session cookie or a bearer token
    // (an unreadable store: a guest, logged).
    let account = crate::accounts::auth::current(state.store(), &headers, uri.query(), &auth)
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "session not read on a websocket upgrade");
            None
        })
        .map(|(user, _)| user);
    // Whom the player blocked: their emotes are not sent to this connection.
    let mutes = match (&account, state.store().accounts()) {
        (Some(user), Some(accounts)) => accounts.blocked(user.id).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "blocks not read on a websocket upgrade");
            Vec::new()
        }),
        _ => Vec::new(),
    };
    let hard = cfg.hard_max_message_bytes.max(cfg.max_message_bytes);
    ws.read_buffer_size(cfg.read_buffer_bytes)
        .write_buffer_size(WRITE_BATCH_BYTES)
        .max_message_size(hard)
        .max_frame_size(hard)
        .on_upgrade(move |socket| {
            let conn = state.next_id();
            let id = account.as_ref().map(|a| a.id);
            let span = tracing::info_span!("conn", conn, %peer, %client, account = ?id);
            let tracker = state.tracker().clone();
            let who = Who {
                account,
                mutes: Mutes::of(mutes),
            };
            tracker.track_future(connection(socket, state, conn, client, who).instrument(span))
        })
}

/// Who is on a connection: the logged-in player, if any, and the accounts they blocked.
struct Who {
    account: Option<crate::accounts::auth::User>,
    mutes: Mutes,
}

async fn connection(socket: WebSocket, state: AppState, conn: u64, ip: IpAddr, who: Who) {
    let Who { account, mutes } = who;
    let cfg = state.config().clone();
    let timeouts = cfg.timeouts.clone();
    let (sink, mut stream) = socket.split();
    let (tx, rx) = mpsc::channel::<parchis_room::Frame>(cfg.outbound_queue.max(1));
    let kick = Kick::default();
    let unwritten = Unwritten::default();
    let link = ConnLink {
        id: conn,
        tx,
        kick: kick.clone(),
        unwritten: unwritten.clone(),
        max_unwritten: cfg.outbound_queue_bytes,
        mutes,
    };
    let writer =
        tokio::spawn(writer(sink, rx, kick.clone(), timeouts.clone(), unwritten).in_current_span());
    let shutdown = state.shutdown_token();
    let mut session = Session {
        state,
        ip,
        account,
        link,
        joined: None,
        seen: HashSet::new(),
        seen_order: VecDeque::new(),
        tokens: f64::from(cfg.commands_per_second.max(1) * 2),
        refilled: Instant::now(),
        errors: VecDeque::new(),
    };
    parchis_telemetry::observe::socket_opened(conn);
    session.state.connection_opened(conn, kick.clone());
    read_loop(&mut session, &mut stream, &kick, &shutdown, &timeouts).await;
    close(session, conn, &kick, writer).await;
}

/// Reads frames until the connection is kicked, the server shuts down, the client goes
/// away or a read fails, or the liveness check finds it silent (or unjoined) too long.
async fn read_loop(
    session: &mut Session,
    stream: &mut SplitStream<WebSocket>,
    kick: &Kick,
    shutdown: &CancellationToken,
    timeouts: &Timeouts,
) {
    let silence = timeouts.ping_interval + timeouts.pong_timeout;
    let mut last_heard = Instant::now();
    // Unjoined since: the join timeout runs while this is set.
    let mut unjoined_since = Some(last_heard);
    let check = |last_heard: Instant, unjoined: Option<Instant>| {
        let alive = last_heard + silence;
        unjoined.map_or(alive, |t| alive.min(t + timeouts.join))
    };
    let liveness = tokio::time::sleep_until(check(last_heard, unjoined_since));
    tokio::pin!(liveness);
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
                    last_heard = Instant::now();
                    if let Flow::Close = session.on_frame(msg).await {
                        break;
                    }
                    match (&session.joined, unjoined_since) {
                        (Some(_), Some(_)) => unjoined_since = None,
                        (None, None) => {
                            unjoined_since = Some(Instant::now());
                            liveness.as_mut().reset(check(last_heard, unjoined_since));
                        }
                        _ => {}
                    }
                }
                Some(Err(e)) => {
                    let (code, reason) = read_error_close(e);
                    debug!(code, %reason, "read error");
                    kick.kick(code, &reason);
                    break;
                }
                None => break,
            },
            () = &mut liveness => {
                let now = Instant::now();
                if now >= last_heard + silence {
                    debug!("nothing heard, not even a pong: dropping");
                    kick.kick(close_code::PING_TIMEOUT, "no pong: connection presumed dead");
                    break;
                }
                if unjoined_since.is_some_and(|t| now >= t + timeouts.join) {
                    debug!("joined no room in time: closing");
                    kick.kick(close_code::JOIN_TIMEOUT, "join, watch or resume a room sooner");
                    break;
                }
                liveness.as_mut().reset(check(last_heard, unjoined_since));
            }
        }
    }
}

/// The connection's end: records an abnormal kick, detaches from its room (here or on
/// its owner), forgets its route, closes the socket and waits for the writer.
async fn close(mut session: Session, conn: u64, kick: &Kick, writer: JoinHandle<()>) {
    if let Some((code, reason)) = kick.reason() {
        if code != close_code::NORMAL && code != close_code::GOING_AWAY {
            let room = session.joined.as_ref().map(|j| j.code.as_str());
            parchis_telemetry::observe::kicked(conn, room, code, &reason);
        }
    }
    if let Some(j) = session.joined.take() {
        match routing::route_of(&j.cell) {
            Route::Local { handle, .. } => {
                let _ = handle.sender().send(RoomCmd::Detach { conn }).await;
            }
            Route::Remote => {
                routing::forward::detach(session.state.node(), &j.code, conn, None).await;
            }
        }
    }
    if let Some(cluster) = session.state.cluster() {
        cluster.routing.forget(conn);
    }
    session.state.connection_closed(conn);
    kick.kick(close_code::NORMAL, "bye");
    drop(session);
    let _ = writer.await;
    parchis_telemetry::observe::socket_closed(conn);
}

/// The close code and reason for a frame the WebSocket layer could not read: 1009 for
/// a frame or message above the hard size limit, 1007 for a text frame that is not UTF-8,
/// 1002 for any other protocol violation, 1000 for a connection that just went away.
fn read_error_close(e: axum::Error) -> (u16, String) {
    use tokio_tungstenite::tungstenite::error::ProtocolError;
    use tokio_tungstenite::tungstenite::Error as WsError;
    let inner = e.into_inner();
    let Some(e) = inner.downcast_ref::<WsError>() else {
        return (close_code::NORMAL, "bye".into());
    };
    match e {
        WsError::Capacity(c) => (close_code::TOO_BIG, c.to_string()),
        WsError::Utf8(_) => (
            close_code::INVALID_PAYLOAD,
            "text frame is not UTF-8".into(),
        ),
        // The client went away without a close frame: nothing to tell it.
        WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
            (close_code::NORMAL, "bye".into())
        }
        WsError::Protocol(p) => (close_code::PROTOCOL_ERROR, p.to_string()),
        _ => (close_code::NORMAL, "bye".into()),
    }
}

/// The `req` of a frame, if it has one, read without validating the rest (for errors
/// found before parsing, such as `rate_limited`).
fn request_id(text: &str) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Req {
        req: Option<u64>,
    }
    serde_json::from_str::<Req>(text).ok().and_then(|r| r.req)
}

impl Session {
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
                request_id(text.as_str()),
                ErrorCode::RateLimited,
                "too many commands per second; slow down",
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
            ClientMessage::Join { .. }
                | ClientMessage::Watch { .. }
                | ClientMessage::Resume { .. }
                | ClientMessage::Claim { .. }
        );
        if entry {
            return self.enter(msg, req, room).await;
        }
        self.seat_command(msg, req, room, received).await
    }

    /// `join`, `watch` or `resume`: refused if this connection already joined, if its
    /// address is over its limits or if the code cannot be a room's; else to the room here,
    /// on its owner (cluster mode) or answered as unserved.
    async fn enter(&mut self, msg: ClientMessage, req: u64, room: String) -> Flow {
        if self.joined.is_some() {
            return self.error(
                Some(req),
                ErrorCode::AlreadyJoined,
                ErrorCode::AlreadyJoined.describe(),
            );
        }
        let admission = self.state.admission();
        let limited = admission.lookup(self.ip).and_then(|()| match msg {
            ClientMessage::Watch { .. } => admission.watch(self.ip),
            _ => Ok(()),
        });
        if let Err(denied) = limited {
            return self.error(Some(req), denied.code(), denied.to_string());
        }
        if !parchis_room::ids::is_plausible_code(&room) {
            // Never looked up (NATS subjects, the store): no room has such a code.
            return self.error(
                Some(req),
                ErrorCode::UnknownRoom,
                ErrorCode::UnknownRoom.describe(),
            );
        }
        let entry =
            match msg {
                ClientMessage::Join {
                    name,
                    colour,
                    client_seed,
                    ..
                } => match (&self.account, display_name(&name)) {
                    // A logged-in player's seat shows their username, whatever name was sent.
                    (Some(account), _) => Entry::Join {
                        name: account.username.clone(),
                        colour,
                        client_seed,
                        account: Some(account.id),
                        ratings: self.display_ratings(account.id).await,
                    },
                    (None, Ok(name)) => Entry::Join {
                        name,
                        colour,
                        client_seed,
                        account: None,
                        ratings: Default::default(),
                    },
                    (None, Err(e)) => {
                        return self.error(Some(req), ErrorCode::BadRequest, e.to_string())
                    }
                },
                ClientMessage::Watch { .. } => Entry::Watch,
                ClientMessage::Resume {
                    token, last_seq, ..
                } => match (token, &self.account) {
                    (Some(token), _) => Entry::Resume {
                        token,
                        last_seq,
                        account: None,
                    },
                    // A logged-in player's seat, from any device (issue 26).
                    (None, Some(account)) => Entry::Resume {
                        token: String::new(),
                        last_seq,
                        account: Some(account.id),
                    },
                    (None, None) => return self.error(
                        Some(req),
                        ErrorCode::BadToken,
                        "resume with your seat's token, or log in to resume your account's seat",
                    ),
                },
                ClientMessage::Claim {
                    ticket,
                    client_seed,
                    ..
                } => match self.claim_key(ticket.as_deref()) {
                    Ok(key) => Entry::Claim { key, client_seed },
                    Err((code, message)) => return self.error(Some(req), code, message),
                },
                _ => return Flow::Continue,
            };
        match self.state.room(&room) {
            Some(handle) => self.local_entry(handle, room, req, entry).await,
            None if self.state.cluster().is_some() => self.remote_entry(room, req, entry).await,
            None => self.unserved(room, req, &entry, Unserved::Unknown).await,
        }
    }

    /// The reservation key of a `claim`: the ticket's ([`ticket_key`], 1 to
    /// [`MAX_TICKET_CHARS`] characters of `A-Z a-z 0-9 _ -`), else the logged-in
    /// account's id; a guest without a ticket is refused `not_logged_in`.
    fn claim_key(&self, ticket: Option<&str>) -> Result<String, (ErrorCode, String)> {
        match (ticket, &self.account) {
            (Some(t), _) => {
                let plausible = (1..=MAX_TICKET_CHARS).contains(&t.len())
                    && t.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if plausible {
                    Ok(ticket_key(t))
                } else {
                    Err((
                        ErrorCode::BadRequest,
                        format!("a ticket is 1 to {MAX_TICKET_CHARS} of A-Z a-z 0-9 _ -"),
                    ))
                }
            }
            (None, Some(account)) => Ok(account.id.to_string()),
            (None, None) => Err((
                ErrorCode::NotLoggedIn,
                "claim a seat with your quick-pairing ticket, or log in to claim your account's"
                    .into(),
            )),
        }
    }

    /// A seat's command (`choose_colour` … `rematch`) for the room this connection joined:
    /// to its actor here or to its owner; a `leave` that went through unjoins the session.
    async fn seat_command(
        &mut self,
        msg: ClientMessage,
        req: u64,
        room: String,
        received: Instant,
    ) -> Flow {
        let Some(joined) = &self.joined else {
            return self.not_joined(req, &room).await;
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
            ClientMessage::ClientSeed { seq, seed, .. } => (seq, SeatCmd::ClientSeed(seed)),
            ClientMessage::Start { seq, .. } => (seq, SeatCmd::Start),
            ClientMessage::Roll { seq, .. } => (seq, SeatCmd::Roll),
            ClientMessage::Play { seq, action, .. } => (seq, SeatCmd::Play(action)),
            ClientMessage::Leave { seq, .. } => (seq, SeatCmd::Leave),
            ClientMessage::Rematch { seq, .. } => (seq, SeatCmd::Rematch),
            // Emotes carry no seq: the room never checks theirs.
            ClientMessage::Emote { emote, .. } => (0, SeatCmd::Emote(emote)),
            _ => return Flow::Continue,
        };
        let leaving = cmd == SeatCmd::Leave;
        let conn = self.link.id;
        match routing::route_of(&joined.cell) {
            Route::Local { handle, member } if leaving => {
                let (outcome, left) = tokio::sync::oneshot::channel();
                let command = RoomCmd::Leave {
                    conn,
                    member,
                    req,
                    seq,
                    received,
                    outcome,
                };
                if handle.sender().send(command).await.is_err() {
                    return self.room_gone(req);
                }
                // The room answers the client itself; the session unjoins only once the
                // leave is stored and answered `ok`: a refused one keeps it joined (the
                // player still holds the seat and may send `leave` again).
                if left.await != Ok(true) {
                    return Flow::Continue;
                }
            }
            Route::Local { handle, member } => {
                let command = RoomCmd::Command {
                    conn,
                    member,
                    req,
                    seq,
                    cmd,
                    received,
                };
                if handle.sender().send(command).await.is_err() {
                    return self.room_gone(req);
                }
            }
            Route::Remote if leaving => {
                let code = joined.code.clone();
                // As on the owner's node: the session unjoins only once the leave is
                // stored and answered `ok`; refused (or its outcome unknown) it stays.
                match routing::forward::leave(self.state.node(), &code, conn, req, seq).await {
                    Ok(true) => {}
                    Ok(false) => return Flow::Continue,
                    Err(refusal) => return self.refuse(Some(req), refusal),
                }
            }
            Route::Remote => {
                let code = joined.code.clone();
                if let routing::forward::Forwarded::Refused(refusal) =
                    routing::forward::command(self.state.node(), &code, conn, req, seq, cmd).await
                {
                    return self.refuse(Some(req), refusal);
                }
            }
        }
        if leaving {
            self.joined = None;
            if let Some(cluster) = self.state.cluster() {
                cluster.routing.forget_cell(conn);
            }
        }
        Flow::Continue
    }

    /// A seat's command on a connection that joined no room: `not_joined` or
    /// `unknown_room` tells whether the code exists: a lookup by code like a `join`,
    /// limited alike (and in cluster mode it asks NATS).
    async fn not_joined(&mut self, req: u64, room: &str) -> Flow {
        if let Err(denied) = self.state.admission().lookup(self.ip) {
            return self.error(Some(req), denied.code(), denied.to_string());
        }
        let code = if parchis_room::ids::is_plausible_code(room)
            && entry::served_somewhere(&self.state, room).await
        {
            ErrorCode::NotJoined
        } else {
            ErrorCode::UnknownRoom
        };
        self.error(Some(req), code, code.describe())
    }

    /// The local actor took no command: `room_unavailable` in cluster mode, else the
    /// room has closed and the session leaves it.
    fn room_gone(&mut self, req: u64) -> Flow {
        if self.state.cluster().is_some() {
            // The room stopped here and is moving: the session follows it.
            return self.error(
                Some(req),
                ErrorCode::RoomUnavailable,
                ErrorCode::RoomUnavailable.describe(),
            );
        }
        self.joined = None;
        self.error(Some(req), ErrorCode::UnknownRoom, "the room has closed")
    }
}
