//! Passwords and the other secrets of accounts.
//!
//! Passwords are hashed with Argon2id at OWASP's parameters (19 MiB of memory, 2 passes,
//! 1 lane) on tokio's blocking threads, at most [`AccountLimits::concurrent_hashes`] at
//! once (a semaphore: the rest wait their turn, and the request timeout bounds the wait),
//! so a flood of log-ins cannot take the cores that run the rooms. A log-in for an unknown
//! user verifies the password against a dummy hash made at start, so it costs what a wrong
//! password costs. Passwords are never logged ([`parchis_protocol::Credentials`]'s `Debug`
//! hides them).
//!
//! Recovery codes and bearer tokens are random (80 and 256 bits), so a fast hash
//! ([`parchis_store::hash_token`], SHA-256) is enough to store them.
//!
//! [`AccountLimits::concurrent_hashes`]: crate::config::AccountLimits::concurrent_hashes

use std::sync::Arc;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use base64::Engine;
use parchis_protocol::{MAX_PASSWORD_BYTES, MIN_PASSWORD_CHARS, RECOVERY_CODES};
use rand::Rng;
use tokio::sync::Semaphore;

/// OWASP's Argon2id parameters: m = 19 MiB, t = 2, p = 1.
fn argon2() -> Argon2<'static> {
    // Fixed, valid parameters: `Params::new` cannot fail on them.
    let params = Params::new(19 * 1024, 2, 1, None).unwrap_or_default();
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// Why a new password was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    /// Under [`MIN_PASSWORD_CHARS`] characters.
    #[error("a password has at least {MIN_PASSWORD_CHARS} characters")]
    TooShort,
    /// Over [`MAX_PASSWORD_BYTES`] bytes.
    #[error("a password has at most {MAX_PASSWORD_BYTES} bytes")]
    TooLong,
}

/// Checks a new password's length (nothing else: any characters may be in it).
pub fn check_new(password: &str) -> Result<(), PasswordError> {
    if password.len() > MAX_PASSWORD_BYTES {
        Err(PasswordError::TooLong)
    } else if password.chars().count() < MIN_PASSWORD_CHARS {
        Err(PasswordError::TooShort)
    } else {
        Ok(())
    }
}

/// The hashing of passwords, bounded ([module docs](self)).
pub struct Hasher {
    permits: Arc<Semaphore>,
    /// The hash an unknown user's password is verified against.
    dummy: Arc<str>,
}

/// Hashing failed (a blocking task panicked or the semaphore closed): answered 500.
#[derive(Debug, thiserror::Error)]
#[error("password hashing failed")]
pub struct HashFailed;

impl Hasher {
    /// A hasher computing at most `concurrent` hashes at once (at least 1). Computes the
    /// dummy hash now (one Argon2id hash, tens of milliseconds).
    pub fn new(concurrent: usize) -> Hasher {
        let secret: [u8; 16] = rand::thread_rng().gen();
        let dummy = hash_now(&hex::encode(secret)).unwrap_or_default();
        Hasher {
            permits: Arc::new(Semaphore::new(concurrent.max(1))),
            dummy: dummy.into(),
        }
    }

    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, HashFailed> {
        let _permit = self.permits.acquire().await.map_err(|_| HashFailed)?;
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|_| HashFailed)
    }

    /// The Argon2id PHC string of `password`, with a fresh salt.
    ///
    /// # Errors
    /// [`HashFailed`].
    pub async fn hash(&self, password: String) -> Result<String, HashFailed> {
        self.blocking(move || hash_now(&password))
            .await?
            .ok_or(HashFailed)
    }

    /// Whether `password` matches `phc`; with `None` (no such user), verifies against the
    /// dummy hash and answers `false`, at the same cost.
    ///
    /// # Errors
    /// [`HashFailed`].
    pub async fn verify(&self, password: String, phc: Option<String>) -> Result<bool, HashFailed> {
        let known = phc.is_some();
        let phc = phc.unwrap_or_else(|| self.dummy.to_string());
        let matched = self
            .blocking(move || {
                // A password longer than the limit cannot match (and is not hashed).
                password.len() <= MAX_PASSWORD_BYTES
                    && PasswordHash::new(&phc).is_ok_and(|parsed| {
                        argon2()
                            .verify_password(password.as_bytes(), &parsed)
                            .is_ok()
                    })
            })
            .await?;
        Ok(known && matched)
    }
}

fn hash_now(password: &str) -> Option<String> {
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .ok()
        .map(|h| h.to_string())
}

/// Characters of recovery codes: lowercase letters and digits without look-alikes
/// (`0 o 1 l i`): 31 of them.
const CODE_ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";

/// [`RECOVERY_CODES`] fresh recovery codes, `xxxx-xxxx-xxxx-xxxx` (16 characters of 31:
/// 79 bits each).
pub fn recovery_codes() -> Vec<String> {
    let mut rng = rand::thread_rng();
    (0..RECOVERY_CODES)
        .map(|_| {
            let chars: Vec<char> = (0..16)
                .map(|_| char::from(CODE_ALPHABET[rng.gen_range(0..CODE_ALPHABET.len())]))
                .collect();
            chars
                .chunks(4)
                .map(|c| c.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join("-")
        })
        .collect()
}

/// The stored hash of a recovery code as typed: spaces and dashes dropped, lowercased.
pub fn code_hash(code: &str) -> String {
    let clean: String = code
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    parchis_store::hash_token(&clean)
}

/// A fresh bearer token: 32 random bytes, base64url without padding.
pub fn bearer_token() -> String {
    let bytes: [u8; 32] = rand::thread_rng().gen();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_unknown_users_never_match() {
        let hasher = Hasher::new(1);
        let phc = hasher.hash("correct horse".into()).await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        assert!(hasher
            .verify("correct horse".into(), Some(phc.clone()))
            .await
            .unwrap());
        assert!(!hasher
            .verify("wrong horse".into(), Some(phc))
            .await
            .unwrap());
        assert!(!hasher.verify("anything".into(), None).await.unwrap());
    }

    #[test]
    fn codes_are_ten_distinct_and_typed_any_way() {
        let codes = recovery_codes();
        assert_eq!(codes.len(), 10);
        let distinct: std::collections::HashSet<_> = codes.iter().collect();
        assert_eq!(distinct.len(), 10);
        let c = &codes[0];
        assert_eq!(c.len(), 19);
        assert_eq!(code_hash(c), code_hash(&c.to_uppercase().replace('-', " ")));
        assert_eq!(check_new("123456789"), Err(PasswordError::TooShort));
        assert_eq!(check_new("ñññññññññn"), Ok(()));
        assert_eq!(check_new(&"x".repeat(1025)), Err(PasswordError::TooLong));
    }
}
