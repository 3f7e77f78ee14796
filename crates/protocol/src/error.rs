//! Error codes and WebSocket close codes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Every error the server reports, as a stable snake_case string on the wire.
///
/// The set is closed: clients may match on it exhaustively. The human-readable text travels
/// next to it in [`crate::ServerMessage::Error`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The text frame is not valid JSON.
    BadJson,
    /// The room's seats are reserved (a tournament table): only the drawn entrant may
    /// take each one, by claiming it; `join` is refused.
    SeatReserved,
    /// The referee paused the game's clock: nobody may roll or play until it is resumed.
    ClockPaused,
    /// A binary frame was sent; the protocol uses text frames only.
    BinaryFrame,
    /// The `type` field is missing or names no known message.
    UnknownType,
    /// A required field is missing.
    MissingField,
    /// A field has the wrong type or an invalid value (name too long, bad colour…).
    BadRequest,
    /// The frame is larger than the server's maximum message size (16 KiB by default).
    FrameTooLarge,
    /// No room has this code.
    UnknownRoom,
    /// No game has this id (HTTP `GET /api/games/{id}`).
    UnknownGame,
    /// The command names a room other than the one this connection joined.
    WrongRoom,
    /// The command needs a joined room (send `join`, `watch` or `resume` first).
    NotJoined,
    /// This connection already joined a room.
    AlreadyJoined,
    /// It is not this player's turn (or the clock ran out before the action arrived).
    NotYourTurn,
    /// The engine refused the action; `rule` names the rule of the reference.
    IllegalAction,
    /// The command was based on an event sequence number other than the room's latest.
    StaleSeq,
    /// A command with this request id was already received on this connection.
    DuplicateRequest,
    /// Spectators cannot act.
    SpectatorCannotAct,
    /// The colour is taken by another player.
    ColourTaken,
    /// Every seat of the room is taken.
    RoomFull,
    /// The game has started: players can no longer join, change colour or start.
    GameStarted,
    /// The game has not started yet.
    GameNotStarted,
    /// The game is over.
    GameOver,
    /// Only the room's creator may do this.
    NotCreator,
    /// At least two seated players are needed to start.
    NotEnoughPlayers,
    /// This room does not allow spectators.
    SpectatorsNotAllowed,
    /// A per-connection or per-address limit: too many commands per second, room
    /// creations, lookups by code, spectator joins or connections from one address. HTTP
    /// answers 429 with `Retry-After`.
    RateLimited,
    /// A server-wide limit: too many rooms, connections or games with bots. HTTP answers
    /// 503 with `Retry-After`.
    ServerFull,
    /// The room has as many spectators as it allows.
    TooManySpectators,
    /// The page's `Origin` is not allowed to open a WebSocket here (HTTP 403).
    OriginNotAllowed,
    /// The session token matches no seat of this room.
    BadToken,
    /// The server is shutting down.
    ShuttingDown,
    /// The room cannot take the command now; nothing was applied. Retry in a moment.
    /// Cluster mode: the room's owner is being replaced (a node died or handed the room
    /// over, `docs/CLUSTER.md`). Any mode: the server could not reach its database to
    /// store the command.
    RoomUnavailable,
    /// The server cannot tell whether the command was applied: the only error that may
    /// come with a change. Cluster mode: the node holding the socket forwarded the command
    /// but lost the room's owner before its answer came (`docs/CLUSTER.md`); any mode: the
    /// database's answer to the command's write was lost. Reconnect and `resume` (the
    /// events after your last `seq` tell what happened); sending it again is safe (a
    /// command applied already is refused as `stale_seq`).
    OutcomeUnknown,
    /// Admin API: the `Authorization: Bearer …` token is missing or wrong (401).
    Unauthorized,
    /// Admin API: disabled because `PARCHIS_ADMIN_TOKEN` is not set (404).
    AdminDisabled,
    /// Admin API: no open connection has this id (404).
    UnknownConnection,
    /// Accounts: the username (or a look-alike of it) is taken, or reserved for 30 days
    /// after its account was deleted (HTTP 409).
    UsernameTaken,
    /// Accounts: wrong username or password, the same answer for an unknown user (401).
    BadCredentials,
    /// Accounts: this needs a logged-in player (session cookie or bearer token; 401).
    NotLoggedIn,
    /// Accounts: no player has this username (404).
    UnknownPlayer,
    /// Accounts: the account is banned (403).
    AccountBanned,
    /// Quick pairing: no waiting or paired ticket has this id (it was never issued, left
    /// the pool, or was not polled for 30 s; 404).
    UnknownTicket,
    /// Quick pairing: this account already waits in a pool (409).
    AlreadyWaiting,
    /// Tournaments: no tournament (or no match or entrant of it) has this id (404).
    UnknownTournament,
    /// Tournaments: only the organiser (or, for a match, a referee it named) may do
    /// this (403).
    NotReferee,
    /// Tournaments: the director refused the request in the tournament's current state
    /// (registration closed, already registered, a match already decided…; the message
    /// says why; 409).
    TournamentRefused,
    /// Tournaments: the account organises as many unfinished tournaments as one account
    /// may (`--max-open-tournaments-per-account`, default 3); one must finish first (409).
    TooManyTournaments,
    /// An internal failure (a bug, corrupt stored data, a store that closed) that a retry
    /// would not mend; the command was not applied. A database out of reach is
    /// `room_unavailable`.
    Internal,
}

impl ErrorCode {
    /// The stable wire string, e.g. `"stale_seq"`.
    pub fn as_str(self) -> &'static str {
        use ErrorCode::*;
        match self {
            BadJson => "bad_json",
            SeatReserved => "seat_reserved",
            ClockPaused => "clock_paused",
            BinaryFrame => "binary_frame",
            UnknownType => "unknown_type",
            MissingField => "missing_field",
            BadRequest => "bad_request",
            FrameTooLarge => "frame_too_large",
            UnknownRoom => "unknown_room",
            UnknownGame => "unknown_game",
            WrongRoom => "wrong_room",
            NotJoined => "not_joined",
            AlreadyJoined => "already_joined",
            NotYourTurn => "not_your_turn",
            IllegalAction => "illegal_action",
            StaleSeq => "stale_seq",
            DuplicateRequest => "duplicate_request",
            SpectatorCannotAct => "spectator_cannot_act",
            ColourTaken => "colour_taken",
            RoomFull => "room_full",
            GameStarted => "game_started",
            GameNotStarted => "game_not_started",
            GameOver => "game_over",
            NotCreator => "not_creator",
            NotEnoughPlayers => "not_enough_players",
            SpectatorsNotAllowed => "spectators_not_allowed",
            RateLimited => "rate_limited",
            ServerFull => "server_full",
            TooManySpectators => "too_many_spectators",
            OriginNotAllowed => "origin_not_allowed",
            BadToken => "bad_token",
            ShuttingDown => "shutting_down",
            RoomUnavailable => "room_unavailable",
            OutcomeUnknown => "outcome_unknown",
            Unauthorized => "unauthorized",
            AdminDisabled => "admin_disabled",
            UnknownConnection => "unknown_connection",
            UsernameTaken => "username_taken",
            BadCredentials => "bad_credentials",
            NotLoggedIn => "not_logged_in",
            UnknownPlayer => "unknown_player",
            AccountBanned => "account_banned",
            UnknownTicket => "unknown_ticket",
            AlreadyWaiting => "already_waiting",
            UnknownTournament => "unknown_tournament",
            NotReferee => "not_referee",
            TournamentRefused => "tournament_refused",
            TooManyTournaments => "too_many_tournaments",
            Internal => "internal",
        }
    }

    /// A default human-readable description.
    pub fn describe(self) -> &'static str {
        use ErrorCode::*;
        match self {
            BadJson => "the frame is not valid JSON",
            SeatReserved => "the seats of this room are reserved (a championship's entrants, a quick pairing's players): `claim` yours",
            ClockPaused => "the referee paused the game: wait for the clock to be resumed",
            BinaryFrame => "binary frames are not supported; send JSON text frames",
            UnknownType => "unknown or missing message type",
            MissingField => "a required field is missing",
            BadRequest => "a field has an invalid value",
            FrameTooLarge => "the frame exceeds the maximum message size",
            UnknownRoom => "no room has this code",
            UnknownGame => "no game has this id",
            WrongRoom => "this connection joined another room",
            NotJoined => "join, watch or resume a room first",
            AlreadyJoined => "this connection already joined a room",
            NotYourTurn => "it is not your turn",
            IllegalAction => "the rules do not allow this action",
            StaleSeq => "the command is based on an outdated sequence number",
            DuplicateRequest => "this request id was already used on this connection",
            SpectatorCannotAct => "spectators cannot act",
            ColourTaken => "that colour is taken",
            RoomFull => "every seat is taken",
            GameStarted => "the game has already started",
            GameNotStarted => "the game has not started",
            GameOver => "the game is over",
            NotCreator => "only the room creator can do this",
            NotEnoughPlayers => "at least two players are needed",
            SpectatorsNotAllowed => "this room does not allow spectators",
            RateLimited => "too many requests; slow down",
            ServerFull => "the server is full; try again later",
            TooManySpectators => "the room has as many spectators as it allows",
            OriginNotAllowed => "pages from this origin may not connect",
            BadToken => "the session token matches no seat in this room",
            ShuttingDown => "the server is shutting down",
            RoomUnavailable => {
                "the room is moving to another server; nothing was applied: retry in a moment"
            }
            OutcomeUnknown => {
                "the server cannot tell whether the command was applied: resume; the events \
                 tell what happened"
            }
            Unauthorized => "a valid admin token is required (Authorization: Bearer …)",
            AdminDisabled => "admin actions are disabled: PARCHIS_ADMIN_TOKEN is not set",
            UnknownConnection => "no open connection has this id",
            UsernameTaken => "this username is taken",
            BadCredentials => "wrong username or password",
            NotLoggedIn => "log in first",
            UnknownPlayer => "no player has this username",
            AccountBanned => "this account is banned",
            UnknownTicket => "no quick-pairing ticket has this id (left, or not polled for 30 s)",
            AlreadyWaiting => "this account already waits in a quick-pairing pool",
            UnknownTournament => "no tournament, match or entrant has this id",
            NotReferee => "only the organiser or a referee of this tournament may do this",
            TournamentRefused => "the tournament refused this in its current state",
            TooManyTournaments => {
                "this account organises as many unfinished tournaments as it may: one must finish first"
            }
            Internal => "internal server error; the command was not applied",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// WebSocket close codes the server uses (see `proto/README.md`).
pub mod close_code {
    /// Normal closure (the client left, or the server closed an idle finished room).
    pub const NORMAL: u16 = 1000;
    /// The server is shutting down.
    pub const GOING_AWAY: u16 = 1001;
    /// A WebSocket protocol violation (bad framing, unmasked client frame, bad opcode…).
    pub const PROTOCOL_ERROR: u16 = 1002;
    /// A text frame that is not valid UTF-8.
    pub const INVALID_PAYLOAD: u16 = 1007;
    /// Sustained abuse: too many errors or too many commands per second.
    pub const POLICY: u16 = 1008;
    /// A frame above the hard size limit.
    pub const TOO_BIG: u16 = 1009;
    /// Cluster mode: the room moved to another node and this connection could not follow
    /// it; reconnect (to any node) and `resume` with the session token and last `seq`.
    pub const SERVICE_RESTART: u16 = 1012;
    /// Another connection took over this seat (another tab).
    pub const SESSION_REPLACED: u16 = 4000;
    /// The client did not read its messages fast enough: too many bytes queued for it, or
    /// a frame not written within the write timeout.
    pub const SLOW_CONSUMER: u16 = 4001;
    /// An administrator closed the room (its game, if running, ended `closed_by_admin`).
    pub const CLOSED_BY_ADMIN: u16 = 4002;
    /// An administrator disconnected this connection (a player may `resume`).
    pub const DISCONNECTED_BY_ADMIN: u16 = 4003;
    /// The connection joined no room within the join timeout.
    pub const JOIN_TIMEOUT: u16 = 4004;
    /// Nothing (not even a pong) arrived within the ping interval plus the pong timeout.
    pub const PING_TIMEOUT: u16 = 4005;

    /// Every close code above with its name and meaning, in code order, for the
    /// AsyncAPI document (`proto/asyncapi.json`, [`crate::asyncapi`]).
    pub const ALL: &[(u16, &str, &str)] = &[
        (NORMAL, "normal", "Normal closure (the client left, or the server closed an idle finished room)."),
        (GOING_AWAY, "going_away", "The server is shutting down."),
        (PROTOCOL_ERROR, "protocol_error", "A WebSocket protocol violation (bad framing, unmasked client frame, bad opcode…)."),
        (INVALID_PAYLOAD, "invalid_payload", "A text frame that is not valid UTF-8."),
        (POLICY, "policy", "Sustained abuse: more errors than allowed in the error window, rate-limited commands included."),
        (TOO_BIG, "too_big", "A frame above the hard size limit (four times the message limit)."),
        (SERVICE_RESTART, "service_restart", "The room moved to another node (cluster mode) or was rebuilt from its stored log: reconnect (to any node) and `resume` with the session token and last `seq`."),
        (SESSION_REPLACED, "session_replaced", "Another connection took over this seat (another tab)."),
        (SLOW_CONSUMER, "slow_consumer", "The client did not read its messages fast enough: too many bytes queued for it, or a frame not written within the write timeout (it may `resume`)."),
        (CLOSED_BY_ADMIN, "closed_by_admin", "An administrator closed the room (its game, if running, ended `closed_by_admin`)."),
        (DISCONNECTED_BY_ADMIN, "disconnected_by_admin", "An administrator disconnected this connection (a player may `resume`)."),
        (JOIN_TIMEOUT, "join_timeout", "The connection joined, watched or resumed no room within the join timeout."),
        (PING_TIMEOUT, "ping_timeout", "Nothing (not even a pong) arrived within the ping interval plus the pong timeout."),
    ];
}
