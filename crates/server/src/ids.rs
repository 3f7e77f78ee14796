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
