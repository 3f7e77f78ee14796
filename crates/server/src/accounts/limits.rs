//! Rate limits of sign-ups and log-ins (governor keyed token buckets, as the admission
//! limits of `parchis-admission`): per client address, and per username for log-ins and
//! recoveries from every address together. Answered 429 `rate_limited` with `Retry-After`
//! ([`parchis_admission::Denied`]). Each node counts for itself.

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use parchis_admission::Denied;

use crate::config::AccountLimits;

/// Keys kept before the limiters forget the ones whose buckets are full again.
const FORGET_ABOVE: usize = 10_000;

/// One keyed rate (`None`: unlimited).
struct Rate<K: Hash + Eq + Clone> {
    what: &'static str,
    limiter: Option<DefaultKeyedRateLimiter<K>>,
}

impl<K: Hash + Eq + Clone> Rate<K> {
    /// `n` per `period` (a burst of `n`); `u32::MAX` is unlimited.
    fn new(what: &'static str, n: u32, period: Duration) -> Rate<K> {
        let limiter = (n != u32::MAX)
            .then(|| NonZeroU32::new(n.max(1)))
            .flatten()
            .and_then(|n| Quota::with_period(period / n.get()).map(|q| q.allow_burst(n)))
            .map(RateLimiter::keyed);
        Rate { what, limiter }
    }

    fn check(&self, key: &K) -> Result<(), Denied> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        if limiter.len() > FORGET_ABOVE {
            limiter.retain_recent();
        }
        limiter
            .check_key(key)
            .map_err(|not_until| Denied::RateLimited {
                what: self.what,
                retry_after: not_until.wait_time_from(DefaultClock::default().now()),
            })
    }
}

/// The accounts' rates.
pub struct AccountRates {
    signups: Rate<IpAddr>,
    logins: Rate<IpAddr>,
    logins_per_username: Rate<String>,
}

impl AccountRates {
    /// The rates of `limits`.
    pub fn new(limits: &AccountLimits) -> AccountRates {
        const HOUR: Duration = Duration::from_secs(3600);
        AccountRates {
            signups: Rate::new("sign-ups per hour", limits.signups_per_hour, HOUR),
            logins: Rate::new(
                "log-in attempts per minute",
                limits.logins_per_minute,
                Duration::from_secs(60),
            ),
            logins_per_username: Rate::new(
                "log-in attempts for this username per hour",
                limits.logins_per_hour_per_username,
                HOUR,
            ),
        }
    }

    /// One sign-up from `ip`.
    ///
    /// # Errors
    /// [`Denied::RateLimited`].
    pub fn signup(&self, ip: IpAddr) -> Result<(), Denied> {
        self.signups.check(&ip)
    }

    /// One log-in or recovery attempt from `ip` for the username with key `key`.
    ///
    /// # Errors
    /// [`Denied::RateLimited`].
    pub fn login(&self, ip: IpAddr, key: &str) -> Result<(), Denied> {
        self.logins.check(&ip)?;
        self.logins_per_username.check(&key.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_run_out_per_key() {
        let rates = AccountRates::new(&AccountLimits {
            signups_per_hour: 5,
            logins_per_minute: 3,
            logins_per_hour_per_username: 2,
            concurrent_hashes: 1,
        });
        let (a, b) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        for _ in 0..5 {
            rates.signup(a).unwrap();
        }
        let Err(Denied::RateLimited { retry_after, .. }) = rates.signup(a) else {
            panic!("the sixth sign-up of an hour passed");
        };
        assert!(retry_after > Duration::from_secs(600), "{retry_after:?}");
        rates.signup(b).unwrap();
        rates.login(a, "ana").unwrap();
        rates.login(b, "ana").unwrap();
        assert!(rates.login(b, "ana").is_err(), "third try at one username");
        rates.login(a, "luis").unwrap();
        rates.login(a, "marta").unwrap();
        assert!(
            rates.login(a, "pepe").is_err(),
            "fourth try from one address"
        );
        let unlimited = AccountRates::new(&AccountLimits::unlimited());
        for _ in 0..100 {
            unlimited.signup(a).unwrap();
        }
    }
}
