//! Random identifiers: room codes and session tokens, from the OS CSPRNG.

use rand::rngs::OsRng;
use rand::RngCore;

/// Crockford base32 without I, L, O, U: unambiguous when read aloud or typed.
pub const CODE_ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Characters in a room code: 10 × 5 bits = 50 bits of randomness.
pub const CODE_LEN: usize = 10;

/// A new random room code (50 bits).
pub fn room_code() -> String {
    let mut bytes = [0u8; 8];
    OsRng.fill_bytes(&mut bytes);
    let mut v = u64::from_le_bytes(bytes);
    (0..CODE_LEN)
        .map(|_| {
            let c = CODE_ALPHABET[(v & 31) as usize] as char;
            v >>= 5;
            c
        })
        .collect()
}

/// Normalises a code typed by a person: upper case, `O`→`0`, `I`/`L`→`1`, dashes and
/// spaces dropped (Crockford's decoding rules).
pub fn normalise_code(code: &str) -> String {
    code.chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .map(|c| match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            c => c,
        })
        .collect()
}

/// The longest text taken for a room code (after [`normalise_code`]); codes are
/// [`CODE_LEN`] characters, the margin is for codes of other versions.
pub const MAX_CODE_CHARS: usize = 32;

/// Whether a normalised code can be a room's: 1 to [`MAX_CODE_CHARS`] ASCII letters and
/// digits. Anything else is an unknown room at once, without a lookup anywhere: a code
/// goes into NATS subjects (`P.room.<CODE>`), where a space, a control character or
/// 4 KB of text would break the node's NATS connection, and into database queries.
pub fn is_plausible_code(code: &str) -> bool {
    (1..=MAX_CODE_CHARS).contains(&code.len()) && code.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// `code` as an error message shows it: its first [`MAX_CODE_CHARS`] characters (a text
/// that is not a code may be kilobytes long).
pub fn shown_code(code: &str) -> String {
    code.chars().take(MAX_CODE_CHARS).collect()
}

/// A new session token: 256 random bits, lowercase hex.
pub fn session_token() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_short_alphanumeric_codes_are_plausible() {
        assert!(is_plausible_code(&room_code()));
        assert!(is_plausible_code(&normalise_code("7qk2-m9d4-tx")));
        for bad in [
            "",
            "AB.CD",
            "AB\0CD",
            "AB\nCD",
            "ÁB",
            "P.room.X",
            &"B".repeat(33),
        ] {
            assert!(!is_plausible_code(&normalise_code(bad)), "{bad:?}");
        }
        assert!(is_plausible_code(&"B".repeat(32)));
    }

    #[test]
    fn codes_use_the_alphabet_and_differ() {
        let a = room_code();
        let b = room_code();
        assert_eq!(a.len(), CODE_LEN);
        assert!(a.bytes().all(|c| CODE_ALPHABET.contains(&c)));
        assert_ne!(a, b);
        assert_eq!(normalise_code("ab-cd o1l"), "ABCD011");
    }

    #[test]
    fn tokens_are_256_bits() {
        let t = session_token();
        assert_eq!(t.len(), 64);
        assert_ne!(t, session_token());
    }
}
