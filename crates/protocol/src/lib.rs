//! # parchis-protocol
//!
//! The wire types of the Parchís server, shared by the server, its tests and (through the
//! JSON Schema in `proto/schema/`) any client:
//!
//! * [`ClientMessage`] / [`ServerMessage`]: JSON text frames on the WebSocket, tagged by
//!   `"type"` in snake_case. Every client command carries a request id `req` (echoed in the
//!   reply) and, for commands that change a room, the event sequence number `seq` it was
//!   based on. Every server game message carries the room's event `seq`, which only grows.
//! * [`ErrorCode`]: the closed set of error codes, stable snake_case strings.
//! * HTTP bodies: [`CreateRoomRequest`], [`CreateRoomResponse`], [`RoomList`], [`RoomView`],
//!   [`HttpError`], [`Readiness`]; the stored games' [`GameList`] (paged, filtered by
//!   [`GamesQuery`]) and [`GameDetail`]; the admin API's [`AdminRoomList`],
//!   [`AdminCloseRoom`], [`AdminDisconnect`]; the client's [`ClientConfig`].
//! * [`Emote`]: the fixed list of quick emotes (ids, never free text).
//! * [`parse_client_message`]: classifies bad input into typed errors (`bad_json`,
//!   `unknown_type`, `missing_field`, `bad_request`).
//!
//! `proto/README.md` documents the connection lifecycle and every message with an example.

mod accounts;
mod admin;
pub mod asyncapi;
mod dice;
mod emote;
mod error;
mod games;
mod http;
mod leaderboard;
mod messages;
mod pairing;
pub mod schema;
mod tournaments;

pub use accounts::{
    AdminBan, AdminRename, AdminResetPassword, BlockList, ChangePassword, Credentials,
    DeleteAccount, Me, PoolRating, Profile, RatingPoint, Recover, SessionToken, SignUp,
    MAX_PASSWORD_BYTES, MAX_USERNAME_CHARS, MIN_PASSWORD_CHARS, MIN_USERNAME_CHARS, RECOVERY_CODES,
};
pub use admin::{AdminCloseRoom, AdminDisconnect, AdminRoom, AdminRoomList, AdminSeat};
pub use dice::{ClientSeedEntry, DiceInfo, DiceMode, GameDice};
pub use emote::{AwaySeat, ClientConfig, Emote};
pub use error::{close_code, ErrorCode};
pub use games::{
    GameDetail, GameEndReason, GameList, GamePlayer, GameReplay, GameResult, GameSummary,
    GamesQuery, ReplayStep, ResultFilter, ResultReason, StepMove, StoredEvent, GAMES_PAGE_DEFAULT,
    GAMES_PAGE_MAX,
};
pub use http::{
    team_of, BoardView, BotLevel, ColourSquare, CreateRoomRequest, CreateRoomResponse, GameView,
    HttpError, ListedPlayer, OnAbandon, Readiness, ReadinessStatus, ReservedSeat, ReservedView,
    RoomList, RoomSettings, RoomStatus, RoomSummary, RoomView, SeatView, TEAMS,
};
pub use leaderboard::{
    Leaderboard, LeaderboardEntry, LeaderboardQuery, LEADERBOARD_LIMIT_DEFAULT,
    LEADERBOARD_LIMIT_MAX,
};
pub use messages::{
    parse_client_message, AbandonReason, ClientMessage, OpeningRollEntry, ParseError, Play, Role,
    RoomEvent, ServerMessage, TurnInfo,
};
pub use pairing::{
    PairingPool, PairingPools, PairingRequest, PairingStatus, PairingTicket, PAIRING_TICKET_IDLE_MS,
};
pub use tournaments::{NameReferee, RefereeCommand, RegisterEntry, TournamentCreated};

/// Re-exported engine types that appear on the wire.
pub use parchis_engine::{
    Action, ActionPreview, BoardState, Colour, Dice, Event, Location, Outcome, Position, Preset,
    RuleSet,
};

/// Longest display name accepted, in characters.
pub const MAX_NAME_CHARS: usize = 24;
