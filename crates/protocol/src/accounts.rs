//! Accounts, sessions and profiles (issue 26): the bodies of `/api/accounts`,
//! `/api/session`, `/api/me…`, `/api/players/{username}` and the accounts' admin routes
//! (`proto/README.md`, "Accounts").

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::games::GameSummary;

/// Fewest characters of a username.
pub const MIN_USERNAME_CHARS: usize = 3;
/// Most characters of a username.
pub const MAX_USERNAME_CHARS: usize = 20;
/// Fewest characters of a password.
pub const MIN_PASSWORD_CHARS: usize = 10;
/// Most bytes of a password (longer ones are refused before any hashing: bounded cost).
pub const MAX_PASSWORD_BYTES: usize = 1024;
/// Recovery codes given at sign-up.
pub const RECOVERY_CODES: usize = 10;

/// Body of `POST /api/accounts` (sign up) and `POST /api/session` (log in).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    /// 3 to 20 ASCII letters, digits, `_` or `-`; unique ignoring case and look-alikes;
    /// may not contain the word `bot`.
    #[schemars(length(min = 3, max = 20), regex(pattern = r"^[A-Za-z0-9_-]{3,20}$"))]
    pub username: String,
    /// At least 10 characters (at most 1024 bytes).
    #[schemars(length(min = 10))]
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    /// Never prints the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

/// One rating pool's rating (a pool is a rule set's full name: `online`, `classic`,
/// `classic+two-out`, `pairs`…). Filled by the ratings work; empty until then.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PoolRating {
    /// Weng-Lin μ.
    pub mu: f64,
    /// Weng-Lin σ.
    pub sigma: f64,
    /// Rated games played in the pool.
    pub games: u32,
    /// The number shown to players.
    pub display: i64,
}

/// The logged-in player (`GET /api/me`, and inside the sign-up answer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Me {
    /// The account's id (UUID): how other views name it (a tournament's `organiser`,
    /// its referees).
    pub id: String,
    /// The username.
    pub username: String,
    /// Sign-up time (unix ms).
    pub created_at_ms: i64,
    /// Ratings by pool (empty until the player plays rated games).
    pub ratings: BTreeMap<String, PoolRating>,
    /// Unused recovery codes.
    pub recovery_codes_left: u32,
}

/// Body of `201` to `POST /api/accounts`: the account, its session (cookie and token)
/// and its ten one-time recovery codes, shown this once and never again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SignUp {
    /// The new account.
    pub account: Me,
    /// Ten one-time recovery codes (`xxxx-xxxx-xxxx-xxxx`); one and a new password
    /// restore the account (`POST /api/accounts/recover`).
    pub recovery_codes: Vec<String>,
    /// A bearer token, as `POST /api/session` gives.
    pub token: String,
}

/// Body of `200` to `POST /api/session`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionToken {
    /// A bearer token for apps that cannot keep cookies (`Authorization: Bearer …` on
    /// HTTP and on the WebSocket upgrade, or `/ws?access_token=…`). It lives until log-out,
    /// a password change, or 30 days unused.
    pub token: String,
    /// The username logged in.
    pub username: String,
}

/// Body of `POST /api/me/password`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangePassword {
    /// The current password.
    pub password: String,
    /// The new one (at least 10 characters).
    #[schemars(length(min = 10))]
    pub new_password: String,
}

/// Body of `POST /api/accounts/recover`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recover {
    /// The account's username.
    #[schemars(length(min = 3, max = 20), regex(pattern = r"^[A-Za-z0-9_-]{3,20}$"))]
    pub username: String,
    /// One unused recovery code.
    pub code: String,
    /// The new password (at least 10 characters).
    #[schemars(length(min = 10))]
    pub new_password: String,
}

/// Body of `DELETE /api/me`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteAccount {
    /// The current password.
    pub password: String,
}

macro_rules! redacted_debug {
    ($($t:ty),*) => {$(
        impl std::fmt::Debug for $t {
            /// Never prints a password or a code.
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($t), " { .. }"))
            }
        }
    )*};
}
redacted_debug!(ChangePassword, Recover, DeleteAccount);

/// One point of a player's rating history (filled by the ratings work).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RatingPoint {
    /// The pool.
    pub pool: String,
    /// The rated game (UUID).
    pub game_id: String,
    /// When it ended (unix ms).
    pub at_ms: i64,
    /// The rating shown after it.
    pub display: i64,
}

/// Body of `GET /api/players/{username}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Profile {
    /// The username.
    pub username: String,
    /// Sign-up time (unix ms).
    pub created_at_ms: i64,
    /// Ratings by pool.
    pub ratings: BTreeMap<String, PoolRating>,
    /// The games of rooms where the player holds or held a seat as this account, newest
    /// first (at most 20).
    pub recent_games: Vec<GameSummary>,
    /// Rating history, oldest first (empty until the ratings work lands).
    pub history: Vec<RatingPoint>,
}

/// Body of `GET /api/me/blocks`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BlockList {
    /// The usernames this player blocks, oldest block first.
    pub usernames: Vec<String>,
}

/// Body of `POST /admin/accounts/{username}/password`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdminResetPassword {
    /// The new password (at least 10 characters).
    #[schemars(length(min = 10))]
    pub new_password: String,
}
redacted_debug!(AdminResetPassword);

/// Body of `POST /admin/accounts/{username}/rename`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdminRename {
    /// The new username (the rules of sign-up).
    #[schemars(length(min = 3, max = 20), regex(pattern = r"^[A-Za-z0-9_-]{3,20}$"))]
    pub username: String,
}

/// Body of `POST /admin/accounts/{username}/ban`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdminBan {
    /// `true` bans (log-in refused, sessions and tokens revoked), `false` lifts the ban.
    pub banned: bool,
}
