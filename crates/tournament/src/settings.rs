//! A tournament's settings (the body of `POST /api/tournaments`) and their validation,
//! with one typed error per broken rule.

use crate::ids::{BotSpec, Ms};
use parchis_engine::RuleSet;
use parchis_protocol::BotLevel;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Most entrants one tournament takes (registrations beyond are refused; `bot_fill.up_to`
/// may not exceed it). Bounds the draw's and the swiss pairing's cost.
pub const MAX_ENTRANTS: u32 = 256;
/// Most swiss rounds.
pub const MAX_SWISS_ROUNDS: u32 = 20;
/// Longest tournament name, in characters.
pub const MAX_NAME_CHARS: usize = 80;
/// Latest registration deadline, counted from the creation: one year.
pub const MAX_DEADLINE_AHEAD_MS: Ms = 366 * 24 * 3600 * 1000;
/// Most throws a spectator may be kept behind.
pub const MAX_SPECTATOR_DELAY: u32 = 20;

fn default_preset() -> String {
    "pairs".to_owned()
}
fn default_clock() -> u32 {
    15
}
fn default_delay() -> u32 {
    3
}
fn default_no_show() -> u32 {
    5
}
fn default_level() -> BotLevel {
    BotLevel::Random
}

/// How the tournament is played.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Single elimination: in `pairs` one game per match, two teams per table; in
    /// individual presets tables of `table_size` players where the top `advance` go
    /// through. Byes go to the top seeds.
    #[default]
    Knockout,
    /// `rounds` rounds of two-entrant matches paired by score (Monrad), no repeat
    /// opponents while avoidable, at most one bye per entrant.
    Swiss,
}

/// Bot entrants added when registration closes, until there are `up_to` entrants (a bot
/// entrant in `pairs` is a team of two bots).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BotFill {
    /// Entrants wanted in all, 2 to [`MAX_ENTRANTS`].
    pub up_to: u32,
    /// The bots' level (default `random`).
    #[serde(default = "default_level")]
    pub level: BotLevel,
    /// Bot think time before each roll and move, in ms: 0 to 10000 and shorter than the
    /// turn clock (default 0).
    #[serde(default)]
    pub think_ms: u32,
}

impl BotFill {
    /// The bot every filled seat gets.
    pub fn spec(&self) -> BotSpec {
        BotSpec {
            level: self.level,
            think_ms: self.think_ms,
        }
    }
}

/// A tournament's settings, chosen at creation by its organiser.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Shown name, 1 to [`MAX_NAME_CHARS`] characters, no control characters.
    pub name: String,
    /// The rule set of every game, as `RuleSet::from_name` takes it (default `pairs`;
    /// any preset and variant is allowed). `pairs` (a rule set with teams) makes every
    /// entrant a team of two accounts.
    #[serde(default = "default_preset")]
    pub preset: String,
    /// `knockout` (default) or `swiss`.
    #[serde(default)]
    pub format: Format,
    /// Swiss only, and required there: rounds to play, 1 to [`MAX_SWISS_ROUNDS`]. Fewer
    /// are played when the entrants are too few to play them without repeats (n − 1
    /// rounds for an even count n, n for an odd one; `docs/TOURNAMENTS.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u32>,
    /// Registration closes and the draw is made at this time (unix ms), unless the
    /// organiser closes it earlier. After the creation time, at most a year ahead.
    pub registration_deadline_ms: Ms,
    /// The first round starts (its rooms open) at this time (unix ms), at or after the
    /// deadline; absent: as soon as the draw is made. Later rounds start as soon as the
    /// round before is decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time_ms: Option<Ms>,
    /// Seconds to roll and play each throw in every game (R-CLOCK), 1 to 600 (default 15).
    #[serde(default = "default_clock")]
    pub turn_clock_secs: u32,
    /// Accounts rated below this conservative rating, or unrated, may not register.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rating: Option<f64>,
    /// Fill the empty places with bot entrants at the close.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_fill: Option<BotFill>,
    /// Spectators see every game this many throws behind (default 3; 0 for friendly
    /// events), 0 to [`MAX_SPECTATOR_DELAY`]. Seed 004: "el equipo que reciba ayuda del
    /// público podrá ser DESCALIFICADO".
    #[serde(default = "default_delay")]
    pub spectator_delay_throws: u32,
    /// Individual knockout only: players per table, 2 to 4 within the preset's player
    /// range (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_size: Option<u8>,
    /// Individual knockout only: how many of a table go through (default 1, the winner):
    /// at least 1, fewer than `table_size`, and dividing it (so the qualifiers of
    /// `table_size / advance` tables fill one table of the next round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advance: Option<u8>,
    /// An entrant not seated this many minutes after its match's room opens forfeits
    /// the match, 1 to 120 (default 5).
    #[serde(default = "default_no_show")]
    pub no_show_minutes: u32,
}

/// What is wrong with a tournament's settings (the text is for the organiser).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// The name is empty, too long or has control characters.
    #[error("name must be 1 to {MAX_NAME_CHARS} characters without control characters")]
    Name,
    /// The preset is unknown or its variants conflict.
    #[error("preset: {0}")]
    Preset(String),
    /// `swiss` without `rounds`.
    #[error("a swiss tournament needs rounds (1 to {MAX_SWISS_ROUNDS})")]
    RoundsMissing,
    /// `rounds` out of range.
    #[error("rounds must be 1 to {MAX_SWISS_ROUNDS}, got {0}")]
    Rounds(u32),
    /// `rounds` given for a knockout.
    #[error("rounds applies to swiss tournaments only")]
    RoundsForKnockout,
    /// The deadline is not after the creation time.
    #[error("registration_deadline_ms {deadline} is not after now ({now})")]
    DeadlinePast {
        /// The deadline given.
        deadline: Ms,
        /// Now.
        now: Ms,
    },
    /// The deadline is more than a year ahead.
    #[error("registration_deadline_ms is more than a year ahead")]
    DeadlineTooFar,
    /// The start time is before the deadline.
    #[error("start_time_ms must be at or after registration_deadline_ms")]
    StartBeforeDeadline,
    /// The turn clock is out of range.
    #[error("turn_clock_secs must be 1 to 600, got {0}")]
    TurnClock(u32),
    /// The minimum rating is not a finite number.
    #[error("min_rating must be a finite number")]
    MinRating,
    /// `bot_fill.up_to` out of range.
    #[error("bot_fill.up_to must be 2 to {MAX_ENTRANTS}, got {0}")]
    BotFillUpTo(u32),
    /// `bot_fill.think_ms` out of range.
    #[error("bot_fill.think_ms must be 0 to 10000 and shorter than the turn clock, got {0}")]
    BotThink(u32),
    /// The spectator delay is out of range.
    #[error("spectator_delay_throws must be 0 to {MAX_SPECTATOR_DELAY}, got {0}")]
    SpectatorDelay(u32),
    /// `table_size` or `advance` given where they do not apply.
    #[error("table_size and advance apply to knockouts of individual presets only")]
    TablesNotIndividualKnockout,
    /// `table_size` outside 2–4 or the preset's player range.
    #[error("table_size must be {min} to {max} for this preset, got {got}")]
    TableSize {
        /// The size given.
        got: u8,
        /// Fewest players of the preset (and 2).
        min: u8,
        /// Most players of the preset (and 4).
        max: u8,
    },
    /// `advance` is 0, not below `table_size`, or does not divide it.
    #[error("advance must be at least 1, below table_size ({table}) and divide it, got {got}")]
    Advance {
        /// The advance given.
        got: u8,
        /// The table size.
        table: u8,
    },
    /// `no_show_minutes` out of range.
    #[error("no_show_minutes must be 1 to 120, got {0}")]
    NoShow(u32),
}

/// What the draw and the matches need from valid settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The rule set of every game.
    pub rules: RuleSet,
    /// Entrants are teams of two (seed 004: "los compañeros se sitúan en extremos
    /// opuestos del tablero").
    pub teams: bool,
    /// Entrants per table: 2 in `pairs` and in swiss, `table_size` in an individual
    /// knockout.
    pub table: u32,
    /// Entrants of a (non-final) knockout table who go through: `advance`, 1 in `pairs`.
    pub advance: u32,
}

impl Settings {
    /// Settings with every default and the given name and deadline.
    pub fn new(name: &str, registration_deadline_ms: Ms) -> Settings {
        Settings {
            name: name.to_owned(),
            preset: default_preset(),
            format: Format::Knockout,
            rounds: None,
            registration_deadline_ms,
            start_time_ms: None,
            turn_clock_secs: default_clock(),
            min_rating: None,
            bot_fill: None,
            spectator_delay_throws: default_delay(),
            table_size: None,
            advance: None,
            no_show_minutes: default_no_show(),
        }
    }

    /// Checks every field for a tournament created at `now`; the error names the first
    /// broken rule.
    pub fn validate(&self, now: Ms) -> Result<Shape, SettingsError> {
        let name = self.name.trim();
        if name.is_empty()
            || name.chars().count() > MAX_NAME_CHARS
            || name.chars().any(char::is_control)
        {
            return Err(SettingsError::Name);
        }
        if self.registration_deadline_ms <= now {
            return Err(SettingsError::DeadlinePast {
                deadline: self.registration_deadline_ms,
                now,
            });
        }
        if self.registration_deadline_ms - now > MAX_DEADLINE_AHEAD_MS {
            return Err(SettingsError::DeadlineTooFar);
        }
        if self
            .start_time_ms
            .is_some_and(|s| s < self.registration_deadline_ms)
        {
            return Err(SettingsError::StartBeforeDeadline);
        }
        self.check_numbers()?;
        self.shape()
    }

    fn check_numbers(&self) -> Result<(), SettingsError> {
        if !(1..=600).contains(&self.turn_clock_secs) {
            return Err(SettingsError::TurnClock(self.turn_clock_secs));
        }
        if self.min_rating.is_some_and(|r| !r.is_finite()) {
            return Err(SettingsError::MinRating);
        }
        if let Some(fill) = self.bot_fill {
            if !(2..=MAX_ENTRANTS).contains(&fill.up_to) {
                return Err(SettingsError::BotFillUpTo(fill.up_to));
            }
            if fill.think_ms > 10_000
                || u64::from(fill.think_ms) >= u64::from(self.turn_clock_secs) * 1000
            {
                return Err(SettingsError::BotThink(fill.think_ms));
            }
        }
        if self.spectator_delay_throws > MAX_SPECTATOR_DELAY {
            return Err(SettingsError::SpectatorDelay(self.spectator_delay_throws));
        }
        if !(1..=120).contains(&self.no_show_minutes) {
            return Err(SettingsError::NoShow(self.no_show_minutes));
        }
        Ok(())
    }

    /// The rule set, the format's rounds and the tables (no time checks): what a stored
    /// tournament's settings are read back with.
    pub fn shape(&self) -> Result<Shape, SettingsError> {
        let rules = RuleSet::from_name(self.preset.trim()).map_err(SettingsError::Preset)?;
        match (self.format, self.rounds) {
            (Format::Swiss, None) => return Err(SettingsError::RoundsMissing),
            (Format::Swiss, Some(r)) if !(1..=MAX_SWISS_ROUNDS).contains(&r) => {
                return Err(SettingsError::Rounds(r))
            }
            (Format::Knockout, Some(_)) => return Err(SettingsError::RoundsForKnockout),
            _ => {}
        }
        let individual_knockout = self.format == Format::Knockout && !rules.teams;
        if !individual_knockout {
            if self.table_size.is_some() || self.advance.is_some() {
                return Err(SettingsError::TablesNotIndividualKnockout);
            }
            return Ok(Shape {
                rules,
                teams: rules.teams,
                table: 2,
                advance: 1,
            });
        }
        let (min, max) = (rules.min_players.max(2), rules.max_players.min(4));
        let table = self.table_size.unwrap_or(max);
        if table < min || table > max {
            return Err(SettingsError::TableSize {
                got: table,
                min,
                max,
            });
        }
        let advance = self.advance.unwrap_or(1);
        if advance == 0 || advance >= table || !table.is_multiple_of(advance) {
            return Err(SettingsError::Advance {
                got: advance,
                table,
            });
        }
        Ok(Shape {
            rules,
            teams: false,
            table: u32::from(table),
            advance: u32::from(advance),
        })
    }
}
