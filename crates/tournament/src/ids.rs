//! The director core's plain values: time as unix ms, entrant and match ids, the accounts
//! and players of an entrant, and the deterministic room code of a match.

use parchis_protocol::BotLevel;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// A point in time or a duration in unix milliseconds: the core's only notion of time
/// (it never reads a clock; every input comes with `now`).
pub type Ms = i64;

/// An entrant of one tournament (a pair in `pairs`, a player otherwise), numbered from 1
/// in order of registration; bot entrants added at the close take the next numbers.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct EntrantId(pub u32);

/// A match (one table, one game) of one tournament, numbered from 1 in the order the
/// rounds are drawn.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct MatchId(pub u32);

impl std::fmt::Display for EntrantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl std::fmt::Display for MatchId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A logged-in account as the accounts layer hands it in: its id, its display name and
/// its conservative rating (`None`: not rated yet).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Account {
    /// The account.
    pub id: Uuid,
    /// Display name.
    pub name: String,
    /// Conservative rating (the accounts issue's `mu - 3 sigma` style number), if rated.
    pub rating: Option<f64>,
}

/// An official of a tournament (its organiser or a referee it named): the account and
/// its username as the accounts layer hands it in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Official {
    /// The account.
    pub account: Uuid,
    /// Its username (empty in a tournament stored before names were kept).
    pub name: String,
}

/// One player of an entrant: an account, or a bot added by `bot_fill`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Player {
    /// The account; `None` for a bot.
    pub account: Option<Uuid>,
    /// Display name.
    pub name: String,
    /// The account's rating when it registered (`None`: unrated, or a bot).
    pub rating: Option<f64>,
    /// The bot, for a bot player.
    pub bot: Option<BotSpec>,
}

/// A bot player: its level and how long it waits before each roll and move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BotSpec {
    /// The bot's level (`crates/bots`).
    pub level: BotLevel,
    /// Think time before each roll and move, in ms.
    pub think_ms: u32,
}

impl Player {
    /// A player for an account.
    pub fn of(account: &Account) -> Player {
        Player {
            account: Some(account.id),
            name: account.name.clone(),
            rating: account.rating,
            bot: None,
        }
    }
}

/// Characters of a room code (Crockford base32 without I, L, O, U), the alphabet of
/// `parchis_room::ids::CODE_ALPHABET`, so a match's room code is a plausible room code.
const CODE_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Characters in a match's room code (as a room's: 10 × 5 bits).
pub const ROOM_CODE_LEN: usize = 10;

/// The room code of attempt `attempt` (0 first, one more per replay ordered) of match
/// `id` of tournament `tournament`: the first 50 bits of
/// SHA-256(`"parchis-tournament-room" ‖ tournament ‖ id ‖ attempt`) in the room alphabet.
///
/// Deterministic, so a `CreateRoom` effect retried after a crash names the same room and
/// the room layer's create-if-absent makes it create one game, never two.
pub fn room_code(tournament: Uuid, id: MatchId, attempt: u32) -> String {
    let mut h = Sha256::new();
    h.update(b"parchis-tournament-room");
    h.update(tournament.as_bytes());
    h.update(id.0.to_be_bytes());
    h.update(attempt.to_be_bytes());
    let digest = h.finalize();
    let mut v = u64::from_be_bytes([
        digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
    ]);
    (0..ROOM_CODE_LEN)
        .map(|_| {
            let c = CODE_ALPHABET[(v & 31) as usize] as char;
            v >>= 5;
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_codes_are_deterministic_and_differ_by_match_and_attempt() {
        let t = Uuid::from_u128(7);
        let a = room_code(t, MatchId(1), 0);
        assert_eq!(a, room_code(t, MatchId(1), 0));
        assert_eq!(a.len(), ROOM_CODE_LEN);
        assert!(a.bytes().all(|b| CODE_ALPHABET.contains(&b)));
        assert_ne!(a, room_code(t, MatchId(1), 1));
        assert_ne!(a, room_code(t, MatchId(2), 0));
        assert_ne!(a, room_code(Uuid::from_u128(8), MatchId(1), 0));
    }
}
