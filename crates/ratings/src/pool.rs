//! Rating pools: one per rule set, named by the rule set's canonical full name.

use std::fmt;

use parchis_engine::RuleSet;
use serde::{Deserialize, Serialize};

/// Longest pool name accepted from outside, in bytes (the longest real name,
/// `classic+murcia-12+two-out+one-out+mixed-safe+safe-only+murcia-exact`, is shorter).
pub const MAX_POOL_NAME: usize = 96;

/// A rating pool: the canonical full name of a rule set ([`RuleSet::name`]), e.g.
/// `online`, `classic+two-out`, `pairs`. Players have one rating per pool. Built only from
/// a rule set or a name that parses as one, so a stored pool always names real rules.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Pool(String);

/// A pool name that is not a rule set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    /// Longer than [`MAX_POOL_NAME`] bytes.
    #[error("a pool name has at most {MAX_POOL_NAME} bytes, got {0}")]
    TooLong(usize),
    /// Not a preset with known variants (the engine's reason).
    #[error("not a rule set: {0}")]
    NotRules(String),
}

impl Pool {
    /// The pool of games played under `rules`.
    pub fn of(rules: &RuleSet) -> Pool {
        Pool(rules.name())
    }

    /// The pool named `name`, written in canonical form (variants in the engine's order:
    /// `classic+two-out+murcia-12` is `classic+murcia-12+two-out`).
    ///
    /// # Errors
    /// [`PoolError::TooLong`], or [`PoolError::NotRules`] when `name` is not a preset
    /// with known, compatible variants ([`RuleSet::from_name`]).
    pub fn parse(name: &str) -> Result<Pool, PoolError> {
        if name.len() > MAX_POOL_NAME {
            return Err(PoolError::TooLong(name.len()));
        }
        RuleSet::from_name(name)
            .map(|rules| Pool::of(&rules))
            .map_err(PoolError::NotRules)
    }

    /// The name, as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the pool's games are played by two teams (`pairs`): partners are rated as
    /// one team.
    pub fn teams(&self) -> bool {
        RuleSet::from_name(&self.0).is_ok_and(|r| r.teams)
    }
}

impl fmt::Display for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Pool {
    type Error = PoolError;
    fn try_from(s: String) -> Result<Pool, PoolError> {
        Pool::parse(&s)
    }
}

impl From<Pool> for String {
    fn from(p: Pool) -> String {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_are_canonical_rule_set_names() {
        assert_eq!(Pool::parse("online").unwrap().as_str(), "online");
        assert_eq!(
            Pool::parse("classic+two-out+murcia-12").unwrap().as_str(),
            "classic+murcia-12+two-out"
        );
        assert_eq!(Pool::of(&RuleSet::online()).as_str(), "online");
        assert!(Pool::parse("pairs").unwrap().teams());
        assert!(!Pool::parse("classic").unwrap().teams());
        assert!(matches!(Pool::parse("chess"), Err(PoolError::NotRules(_))));
        assert!(matches!(
            Pool::parse(&"a".repeat(200)),
            Err(PoolError::TooLong(200))
        ));
    }
}
