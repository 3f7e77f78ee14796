//! What the account routes share ([`Accounts`], a request extension).

use super::{limits, password};

/// The bounded hasher and the rates of the account routes.
pub struct Accounts {
    /// Password hashing.
    pub hasher: password::Hasher,
    /// Sign-up and log-in rates.
    pub rates: limits::AccountRates,
}
