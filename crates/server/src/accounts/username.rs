//! Usernames: what an account may be called, and the key that makes two names one.
//!
//! A username has [`MIN_USERNAME_CHARS`] to [`MAX_USERNAME_CHARS`] ASCII letters, digits,
//! `_` or `-`, and, like a display name ([`crate::names`]), no word of it read through the
//! Unicode confusables skeleton (UTS #39) may be `bot` or `bots`. Its key is that skeleton
//! lowercased, read through the skeleton again and lowercased again: `Ana`, `ANA` and
//! `Αna` (Greek capital alpha) are one name, and so are `l1`, `lI` and `ll` (the skeleton
//! reads `1` and `I` as `l`; it also reads `m` as `rn`).

use parchis_protocol::{MAX_USERNAME_CHARS, MIN_USERNAME_CHARS};

/// A username accepted: as typed, and its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Username {
    /// As typed.
    pub name: String,
    /// Its key: unique among live accounts.
    pub key: String,
}

/// Why a username was refused (the text goes to the client as a `bad_request`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsernameError {
    /// Too short or too long.
    #[error("a username has {MIN_USERNAME_CHARS} to {MAX_USERNAME_CHARS} characters")]
    Length,
    /// A character other than ASCII letters, digits, `_` and `-`.
    #[error("a username has only ASCII letters, digits, '_' and '-'")]
    Characters,
    /// Contains the word `bot`.
    #[error("a username may not contain the word \"bot\": only bots are called that")]
    ImitatesBot,
}

/// The key of any name (see the module docs); also used to look a username up.
pub fn key(name: &str) -> String {
    use unicode_security::confusable_detection::skeleton;
    // Read through the skeleton before and after lowercasing: `I` imitates `l`, and a
    // lowercased look-alike may imitate another letter than its capital did.
    let once = skeleton(name).collect::<String>().to_lowercase();
    skeleton(&once).collect::<String>().to_lowercase()
}

/// Checks a username (see the module docs).
///
/// ```
/// use parchis_server::accounts::username::{check, UsernameError};
/// assert_eq!(check("Ana_1").map(|u| u.key), Ok("ana_l".to_owned()));
/// assert_eq!(check("ab"), Err(UsernameError::Length));
/// assert_eq!(check("Ana María"), Err(UsernameError::Characters));
/// assert_eq!(check("greedy-BOT"), Err(UsernameError::ImitatesBot));
/// ```
pub fn check(raw: &str) -> Result<Username, UsernameError> {
    let chars = raw.chars().count();
    if !(MIN_USERNAME_CHARS..=MAX_USERNAME_CHARS).contains(&chars) {
        return Err(UsernameError::Length);
    }
    if !raw
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(UsernameError::Characters);
    }
    let key = key(raw);
    let imitates = key
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| word == "bot" || word == "bots");
    if imitates {
        return Err(UsernameError::ImitatesBot);
    }
    Ok(Username {
        name: raw.to_owned(),
        key,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_share_a_key() {
        let a = check("Ana-01").unwrap().key;
        for twin in ["ana-01", "ANA-O1", "Ana-0l", "AnA-OI"] {
            assert_eq!(check(twin).unwrap().key, a, "{twin}");
        }
        assert_ne!(check("Ana-02").unwrap().key, a);
        // Lookups by a non-ASCII spelling find the same key.
        assert_eq!(key("Αna-01"), a);
    }

    #[test]
    fn bounds_and_words() {
        assert!(check("abc").is_ok());
        assert!(check("a".repeat(20).as_str()).is_ok());
        assert_eq!(check(&"a".repeat(21)), Err(UsernameError::Length));
        assert_eq!(check("añaa"), Err(UsernameError::Characters));
        assert_eq!(check("x bot"), Err(UsernameError::Characters));
        assert_eq!(check("bots_r_us"), Err(UsernameError::ImitatesBot));
        assert_eq!(check("b0t"), Err(UsernameError::ImitatesBot));
        assert!(check("robotics").is_ok());
    }
}
