//! What the account routes share ([`Accounts`], a request extension that
//! [`crate::app`] adds over the whole router, so that the routes themselves need no
//! state when they are built: [`crate::api_routes`]).

use std::sync::Arc;

use super::{limits, password};
use crate::state::AppState;

/// The largest body an account route reads (bytes); larger: 413.
pub const MAX_BODY_BYTES: usize = 4096;

/// The bounded hasher, the rates and the CSRF allow-list of the account routes.
pub struct Accounts {
    /// Password hashing.
    pub hasher: password::Hasher,
    /// Sign-up and log-in rates.
    pub rates: limits::AccountRates,
    /// The origins a state-changing request may come from (`ServerConfig::allowed_origins`,
    /// as for the WebSocket: [`crate::origin`]).
    pub allowed_origins: Vec<String>,
}

impl Accounts {
    /// The hasher, rates and allow-list of `state`'s configuration.
    pub fn of(state: &AppState) -> Arc<Accounts> {
        let config = state.config();
        let limits = &config.accounts;
        Arc::new(Accounts {
            hasher: password::Hasher::new(limits.concurrent_hashes),
            rates: limits::AccountRates::new(limits),
            allowed_origins: config.allowed_origins.clone(),
        })
    }
}
