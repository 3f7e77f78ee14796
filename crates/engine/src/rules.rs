//! [`RuleSet`]: one value that decides every point of the rule matrix (reference §3),
//! and the named presets built from the seeds.
//!
//! The engine plays every preset built here (seeds 000–004); [`RuleSet::check_supported`]
//! refuses settings that do not fit together (the conflict named).
//!
//! Why one file of ~730 lines: most of it is the matrix itself, one documented field per
//! row, and the presets that fill it; the two read best side by side.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Named rule presets, one per seed document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Seed 000: the online game with rooms, two dice and a 15 s clock (default).
    Online,
    /// Seed 001: classic one-die rules.
    Classic,
    /// Seed 004: pair-play championship rules (one die, two teams).
    Pairs,
    /// Seed 002: US Parcheesi, two dice.
    Parcheesi,
    /// Seed 003: Parcheesi as described in seed 003.
    ParcheesiStrict,
}

impl Preset {
    /// Every preset.
    pub const ALL: [Preset; 5] = [
        Preset::Online,
        Preset::Classic,
        Preset::Pairs,
        Preset::Parcheesi,
        Preset::ParcheesiStrict,
    ];

    /// The preset's name, as on the wire and in the text notation (`"online"`).
    pub fn name(self) -> &'static str {
        match self {
            Preset::Online => "online",
            Preset::Classic => "classic",
            Preset::Pairs => "pairs",
            Preset::Parcheesi => "parcheesi",
            Preset::ParcheesiStrict => "parcheesi-strict",
        }
    }

    /// The full rule set of this preset.
    pub fn rules(self) -> RuleSet {
        RuleSet::preset(self)
    }

    /// Why the named variant (one of [`RuleSet::VARIANTS`]) is not played with this
    /// preset, quoting the seed where it says otherwise; `None` when it is (D-33). The
    /// variants are those seed 001 lists for its own one-die game, so only `classic`
    /// takes them: seed 004 (`pairs`) contradicts each one or lists none, and seeds 000,
    /// 002 and 003 list no variants at all.
    pub fn variant_refusal(self, variant: &str) -> Option<&'static str> {
        match (self, variant) {
            (Preset::Classic, _) => None,
            (Preset::Pairs, "murcia-12") => Some(
                "seed 004 counts 7: \"En el caso de que no tenga fichas en casa se contará 7\"",
            ),
            (Preset::Pairs, "two-out") => Some(
                "seed 004 brings out one: \"Al sacar el primer 5, solo se pone 1 ficha en la salida\"",
            ),
            (Preset::Pairs, "one-out") => Some(
                "seed 004 starts in the nest: \"Al comenzar el juego todas las fichas están en la casa de su color\"",
            ),
            (Preset::Pairs, "mixed-safe") => Some(
                "seed 004 mixes colours only with the partner: \"Se permite hacer barreras con fichas de distinto color, siempre que sea la de la pareja\"",
            ),
            (Preset::Pairs, "safe-only") => Some(
                "seed 004 allows blockades anywhere: \"Se permite formar barreras en cualquier lugar\"",
            ),
            (Preset::Pairs, _) => Some(
                "seed 004 is a championship's own rules and lists no variants; this one is seed 001's, for its one-player game",
            ),
            (Preset::Online, _) => Some(
                "seed 000 lists no variants; this one is seed 001's, for its one-die game",
            ),
            (Preset::Parcheesi | Preset::ParcheesiStrict, _) => Some(
                "seeds 002 and 003 list no variants; this one is seed 001's, for its one-die game",
            ),
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                format!("unknown preset {s:?} (expected online, classic, pairs, parcheesi or parcheesi-strict)")
            })
    }
}

/// Direction in which the turn passes, seen on the board (reference §3 "turn passes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnDirection {
    /// Yellow → green → red → blue (R-ORDER, seed 000 §5; "to the left" in 002/003).
    Clockwise,
    /// Yellow → blue → red → green ("to the right", seeds 001/004).
    CounterClockwise,
}

/// Who rolls first (R-FIRST).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FirstPlayer {
    /// The room creator (seed 000).
    Creator,
    /// Highest opening roll (001, 002, 004).
    HighestRoll,
    /// Lowest opening roll (003).
    LowestRoll,
}

/// Which throw earns another throw in the same turn (R-DOUBLES).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RollAgainOn {
    /// Two equal dice.
    Doubles,
    /// A six on the single die.
    Six,
}

/// Penalty for the third repeat (doubles or six) in a row in one turn (R-THIRD).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThirdRepeat {
    /// The last moved piece goes to the nest unless it is in the home column or goal;
    /// the turn ends (000, 001, 004).
    LastMovedToNest,
    /// The most advanced piece (even in the home column) goes to the nest (002).
    MostAdvancedToNest,
    /// No penalty (003).
    None,
}

/// Which kind of piece pair forms a blockade (R-BLOCK).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockadeKind {
    /// Any two pieces on one square (000).
    AnyTwo,
    /// Two pieces of one colour (001, 002, 003).
    SameColour,
    /// Two pieces of one team (004).
    SameTeam,
}

/// What forces a player to open a blockade (R-OPEN).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpenOn {
    /// Rolling doubles (000, D-3).
    Doubles,
    /// Rolling a six (001, 004).
    Six,
    /// Nothing forces it (002, 003).
    Never,
}

/// What happens when a piece exits onto an exit square that holds other pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExitCapture {
    /// R-EXIT-CAPTURE as in seed 000: holding two pieces with an opponent's, capture it
    /// (of two opponents, the last arrived), +20; holding one piece, join it.
    Online,
    /// Seed 001: capture when the square holds two pieces with an opponent's.
    Classic,
    /// Seed 004: capture one (opponent team's before the partner's); no +20 when both
    /// pieces were other players'.
    Pairs,
    /// Seeds 002/003: capture a lone opponent on the entry square; a blockade bars entry.
    LoneOpponent,
}

/// When a bonus move (R-BONUS) is played (D-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BonusTiming {
    /// Right after the move that earned it, before any remaining die.
    Immediately,
    /// After all dice of the throw.
    AfterDice,
}

/// Which pieces may take a bonus move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BonusTakers {
    /// Only a piece standing on the ring (seed 000 §6-7).
    RingOnly,
    /// Any piece out of the nest and not in the goal.
    OutOfNestAndGoal,
}

/// The doubles bonus of Parcheesi (tops + bottoms = 14, in four parts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DoublesBonus {
    /// No doubles bonus.
    None,
    /// All four parts or none; roll again either way (002).
    AllOrNone,
    /// Play as many parts as possible; not using them all loses the re-roll (003).
    AsManyAsPossible,
}

/// Which die may be played when only one of two can be (R-MUST, D-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OneDiePlayable {
    /// Either die.
    Either,
    /// The larger die (003).
    Larger,
}

/// Landing on a safe square that holds one opponent piece (R-SAFE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SafeWithOpponent {
    /// Join it, forming a blockade (000, 001, 004).
    Join,
    /// Not allowed (002, 003).
    Forbidden,
}

/// When the game ends (R-WIN).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GameEnd {
    /// The first player with four pieces in the goal wins.
    FirstToFinish,
    /// Play on for second and third places (001).
    PlayOn,
    /// The first team with all eight pieces in the goal wins (004).
    FirstTeam,
}

/// Every point of the rule matrix (reference §3) as data. Build one with
/// [`RuleSet::preset`]; the fields are public so variants can be expressed, and
/// [`RuleSet::check_supported`] refuses settings that do not fit together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct RuleSet {
    /// The preset this rule set started from.
    pub preset: Preset,
    /// Dice per throw: 1 or 2.
    pub dice: u8,
    /// Fewest players (2).
    pub min_players: u8,
    /// Most players (4).
    pub max_players: u8,
    /// Players form two teams of partners sitting opposite (yellow+red vs blue+green).
    pub teams: bool,
    /// Who rolls first (R-FIRST).
    pub first_player: FirstPlayer,
    /// Turn order (R-ORDER).
    pub turn_direction: TurnDirection,
    /// What earns another throw (R-DOUBLES).
    pub roll_again_on: RollAgainOn,
    /// Penalty on the third repeat in a row (R-THIRD).
    pub third_repeat: ThirdRepeat,
    /// Seed 004: no R-THIRD penalty if the second six could not be played.
    pub third_repeat_needs_played_second: bool,
    /// A six counts this many squares when the player has no piece in the nest
    /// (001: 7; Murcia variant: 12); `None` when sixes count six.
    pub six_counts_when_nest_empty: Option<u8>,
    /// A die showing 5 brings a piece out (R-EXIT-1).
    pub exit_on_five: bool,
    /// Two dice summing to 5 bring a piece out (R-EXIT-1).
    pub exit_on_sum_five: bool,
    /// Double 5 brings two pieces out (R-EXIT-1, D-11).
    pub double_five_exits_two: bool,
    /// Variant (001): the first 5 brings two pieces out.
    pub two_out_on_first_five: bool,
    /// With `two_out_on_first_five`: a bonus the first exit earns (it captured) is played
    /// before the second piece comes out, as D-4 plays every bonus at once (D-32). Set by
    /// the `two-out` variant. `false` only in rule sets stored before D-32, whose JSON has
    /// no such field: those games replay as they were played, both pieces out first.
    #[serde(default)]
    pub two_out_bonus_between_exits: bool,
    /// Variant (001): each player starts with one piece on its exit square.
    pub start_with_one_out: bool,
    /// Exit onto an occupied exit square (R-EXIT-CAPTURE).
    pub exit_capture: ExitCapture,
    /// Which pairs form a blockade (R-BLOCK).
    pub blockade: BlockadeKind,
    /// Variant (001): two colours may form a blockade on a safe square.
    pub mixed_blockades_on_safe: bool,
    /// Variant (001): blockades only on safe squares.
    pub blockades_only_on_safe: bool,
    /// What forces a blockade open (R-OPEN).
    pub open_on: OpenOn,
    /// Parcheesi: a blockade's two pieces may not move together to a new square on doubles.
    pub no_moving_blockade_together: bool,
    /// Squares of the capture bonus (R-BONUS): 20.
    pub capture_bonus: u8,
    /// Squares of the goal bonus (R-BONUS): 10.
    pub goal_bonus: u8,
    /// The goal bonus is also earned by a player's last piece (not in 004).
    pub goal_bonus_for_last_piece: bool,
    /// When bonuses are played (D-4).
    pub bonus_timing: BonusTiming,
    /// Which pieces may take a bonus.
    pub bonus_takers: BonusTakers,
    /// Seed 004: landing on a lone partner piece, the mover chooses capture or blockade.
    pub partner_capture_choice: bool,
    /// Overshooting the goal bounces back down the home column (R-BOUNCE).
    pub bounce: bool,
    /// Variant (Murcia): exact count needed to enter the last safe square before the home column.
    pub exact_count_last_safe: bool,
    /// Parcheesi doubles bonus (14 in four parts).
    pub doubles_bonus: DoublesBonus,
    /// Which die when only one of two can be played (D-2).
    pub one_die_playable: OneDiePlayable,
    /// Landing on a safe square with a lone opponent piece (R-SAFE).
    pub safe_with_opponent: SafeWithOpponent,
    /// When the game ends (R-WIN).
    pub game_end: GameEnd,
}

impl Default for RuleSet {
    fn default() -> Self {
        RuleSet::online()
    }
}

impl RuleSet {
    /// The default preset `online` (seed 000, reference §2).
    pub fn online() -> RuleSet {
        RuleSet {
            preset: Preset::Online,
            dice: 2,
            min_players: 2,
            max_players: 4,
            teams: false,
            first_player: FirstPlayer::Creator,
            turn_direction: TurnDirection::Clockwise,
            roll_again_on: RollAgainOn::Doubles,
            third_repeat: ThirdRepeat::LastMovedToNest,
            third_repeat_needs_played_second: false,
            six_counts_when_nest_empty: None,
            exit_on_five: true,
            exit_on_sum_five: true,
            double_five_exits_two: true,
            two_out_on_first_five: false,
            two_out_bonus_between_exits: false,
            start_with_one_out: false,
            exit_capture: ExitCapture::Online,
            blockade: BlockadeKind::AnyTwo,
            mixed_blockades_on_safe: true,
            blockades_only_on_safe: false,
            open_on: OpenOn::Doubles,
            no_moving_blockade_together: false,
            capture_bonus: 20,
            goal_bonus: 10,
            goal_bonus_for_last_piece: true,
            bonus_timing: BonusTiming::Immediately,
            bonus_takers: BonusTakers::RingOnly,
            partner_capture_choice: false,
            bounce: true,
            exact_count_last_safe: false,
            doubles_bonus: DoublesBonus::None,
            one_die_playable: OneDiePlayable::Either,
            safe_with_opponent: SafeWithOpponent::Join,
            game_end: GameEnd::FirstToFinish,
        }
    }

    /// The rule set of a named preset (reference §3 matrix).
    // Long (86 lines): one arm per preset, one line per setting that differs from `online` (a column of the §3 matrix); split, a preset would no longer read as one column.
    pub fn preset(p: Preset) -> RuleSet {
        let online = RuleSet::online();
        match p {
            Preset::Online => online,
            Preset::Classic => RuleSet {
                preset: p,
                dice: 1,
                first_player: FirstPlayer::HighestRoll,
                turn_direction: TurnDirection::CounterClockwise,
                roll_again_on: RollAgainOn::Six,
                six_counts_when_nest_empty: Some(7),
                exit_on_sum_five: false,
                double_five_exits_two: false,
                exit_capture: ExitCapture::Classic,
                blockade: BlockadeKind::SameColour,
                mixed_blockades_on_safe: false,
                open_on: OpenOn::Six,
                bonus_takers: BonusTakers::OutOfNestAndGoal,
                bounce: false,
                game_end: GameEnd::PlayOn,
                ..online
            },
            Preset::Pairs => RuleSet {
                preset: p,
                dice: 1,
                min_players: 4,
                teams: true,
                first_player: FirstPlayer::HighestRoll,
                turn_direction: TurnDirection::CounterClockwise,
                roll_again_on: RollAgainOn::Six,
                third_repeat_needs_played_second: true,
                six_counts_when_nest_empty: Some(7),
                exit_on_sum_five: false,
                double_five_exits_two: false,
                exit_capture: ExitCapture::Pairs,
                blockade: BlockadeKind::SameTeam,
                mixed_blockades_on_safe: false,
                open_on: OpenOn::Six,
                goal_bonus_for_last_piece: false,
                bonus_takers: BonusTakers::OutOfNestAndGoal,
                partner_capture_choice: true,
                bounce: false,
                game_end: GameEnd::FirstTeam,
                ..online
            },
            Preset::Parcheesi | Preset::ParcheesiStrict => {
                let strict = p == Preset::ParcheesiStrict;
                RuleSet {
                    preset: p,
                    first_player: if strict {
                        FirstPlayer::LowestRoll
                    } else {
                        FirstPlayer::HighestRoll
                    },
                    third_repeat: if strict {
                        ThirdRepeat::None
                    } else {
                        ThirdRepeat::MostAdvancedToNest
                    },
                    exit_capture: ExitCapture::LoneOpponent,
                    blockade: BlockadeKind::SameColour,
                    mixed_blockades_on_safe: false,
                    open_on: OpenOn::Never,
                    no_moving_blockade_together: true,
                    bonus_timing: BonusTiming::AfterDice,
                    bonus_takers: BonusTakers::OutOfNestAndGoal,
                    bounce: false,
                    doubles_bonus: if strict {
                        DoublesBonus::AsManyAsPossible
                    } else {
                        DoublesBonus::AllOrNone
                    },
                    one_die_playable: if strict {
                        OneDiePlayable::Larger
                    } else {
                        OneDiePlayable::Either
                    },
                    safe_with_opponent: SafeWithOpponent::Forbidden,
                    ..online
                }
            }
        }
    }

    /// `Ok(())` when this rule set is playable: every combination of settings is
    /// checked (see [`RuleSet::validate`]).
    pub fn check_supported(&self) -> Result<(), String> {
        self.validate()
    }

    /// Checks that the settings fit together; the error names the conflict.
    pub fn validate(&self) -> Result<(), String> {
        let two = self.dice == 2;
        let conflicts: [(bool, &str); 19] = [
            (self.dice == 0 || self.dice > 2, "dice must be 1 or 2"),
            (self.min_players < 2 || self.max_players > 4 || self.min_players > self.max_players,
                "players must be 2 to 4, with min_players <= max_players"),
            (self.roll_again_on == RollAgainOn::Six && two, "roll_again_on = six needs one die"),
            (self.roll_again_on == RollAgainOn::Doubles && !two, "roll_again_on = doubles needs two dice"),
            (self.open_on == OpenOn::Six && two, "open_on = six needs one die"),
            (self.open_on == OpenOn::Doubles && !two, "open_on = doubles needs two dice"),
            (self.doubles_bonus != DoublesBonus::None && !two, "the doubles bonus needs two dice"),
            ((self.exit_on_sum_five || self.double_five_exits_two) && !two,
                "exit_on_sum_five and double_five_exits_two need two dice"),
            (!self.exit_on_five && !self.exit_on_sum_five, "pieces could never leave the nest: enable exit_on_five"),
            (self.six_counts_when_nest_empty.is_some() && two, "six_counts_when_nest_empty needs one die"),
            (self.six_counts_when_nest_empty.is_some_and(|x| x != 7 && x != 12),
                "a six counts 7 (classic) or 12 (Murcia)"),
            (self.teams != (self.game_end == GameEnd::FirstTeam),
                "teams and game_end = first_team go together"),
            (self.teams && (self.min_players != 4 || self.max_players != 4), "pair play needs exactly 4 players"),
            ((self.partner_capture_choice || self.exit_capture == ExitCapture::Pairs || self.blockade == BlockadeKind::SameTeam) && !self.teams,
                "partner rules (partner_capture_choice, exit_capture = pairs, blockade = same_team) need teams"),
            (self.mixed_blockades_on_safe && self.safe_with_opponent == SafeWithOpponent::Forbidden,
                "mixed_blockades_on_safe conflicts with safe_with_opponent = forbidden (two colours never share a safe square)"),
            (self.one_die_playable == OneDiePlayable::Larger && !two, "one_die_playable = larger needs two dice"),
            (self.capture_bonus > 40 || self.goal_bonus > 40, "bonuses are at most 40 squares"),
            (self.two_out_bonus_between_exits && !self.two_out_on_first_five,
                "two_out_bonus_between_exits needs two_out_on_first_five"),
            (self.two_out_bonus_between_exits && two,
                "two_out_bonus_between_exits needs one die (the first 5 is one die showing 5)"),
        ];
        match conflicts.iter().find(|(bad, _)| *bad) {
            Some((_, why)) => Err(format!("invalid rule set ({}): {why}", self.name())),
            None => Ok(()),
        }
    }

    /// The named options (variants of seed 001) this rule set switches on or off
    /// relative to its preset, as `+name` suffixes.
    pub const VARIANTS: [&'static str; 6] = [
        "murcia-12",
        "two-out",
        "one-out",
        "mixed-safe",
        "safe-only",
        "murcia-exact",
    ];

    /// Switches a named variant on (see [`RuleSet::VARIANTS`]).
    pub fn with_variant(mut self, name: &str) -> Result<RuleSet, String> {
        match name {
            "murcia-12" => self.six_counts_when_nest_empty = Some(12),
            "two-out" => {
                self.two_out_on_first_five = true;
                self.two_out_bonus_between_exits = true; // D-32
            }
            "one-out" => self.start_with_one_out = true,
            "mixed-safe" => self.mixed_blockades_on_safe = true,
            "safe-only" => self.blockades_only_on_safe = true,
            "murcia-exact" => self.exact_count_last_safe = true,
            other => {
                return Err(format!(
                    "unknown variant {other:?} (expected one of {})",
                    RuleSet::VARIANTS.join(", ")
                ))
            }
        }
        Ok(self)
    }

    fn variant_on(&self, name: &str) -> bool {
        match name {
            "murcia-12" => self.six_counts_when_nest_empty == Some(12),
            "two-out" => self.two_out_on_first_five,
            "one-out" => self.start_with_one_out,
            "mixed-safe" => self.mixed_blockades_on_safe,
            "safe-only" => self.blockades_only_on_safe,
            "murcia-exact" => self.exact_count_last_safe,
            _ => false,
        }
    }

    /// The rule set's name: the preset, then `+variant` for each variant it adds, e.g.
    /// `classic+murcia-12+two-out`. Settings changed outside the named variants are not
    /// named (the JSON position carries every field).
    pub fn name(&self) -> String {
        let base = self.preset.rules();
        let mut s = self.preset.name().to_string();
        for v in RuleSet::VARIANTS {
            if self.variant_on(v) && !base.variant_on(v) {
                s.push('+');
                s.push_str(v);
            }
        }
        s
    }

    /// Parses a rule-set name (`classic+murcia-12+two-out`) for a new game and validates
    /// the combination. A variant is accepted only on a preset it was written for
    /// ([`Preset::variant_refusal`], D-33): the error names the rule set, the variant,
    /// the preset and the seed's reason.
    pub fn from_name(name: &str) -> Result<RuleSet, String> {
        RuleSet::parse_name(name, true)
    }

    /// As [`RuleSet::from_name`], but without D-33's check of variants against their
    /// preset: for names stored before that check (a room's settings, a game record's
    /// `Preset` tag), so that games created then still read and replay. New games use
    /// [`RuleSet::from_name`].
    pub fn from_stored_name(name: &str) -> Result<RuleSet, String> {
        RuleSet::parse_name(name, false)
    }

    fn parse_name(name: &str, check_variants: bool) -> Result<RuleSet, String> {
        let mut parts = name.split('+');
        let preset: Preset = parts.next().unwrap_or_default().parse()?;
        let mut rules = preset.rules();
        for v in parts {
            rules = rules.with_variant(v)?;
            if let Some(why) = preset.variant_refusal(v).filter(|_| check_variants) {
                return Err(format!(
                    "invalid rule set ({name}): the variant {v} is not played with {preset} \
                     (D-33: variants are classic's, seed 001): {why}"
                ));
            }
        }
        rules.validate()?;
        Ok(rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_round_trip_by_name() {
        for p in Preset::ALL {
            assert_eq!(p.name().parse::<Preset>(), Ok(p));
            assert_eq!(p.rules().preset, p);
        }
    }

    #[test]
    fn matrix_rows_differ_where_the_reference_says() {
        let classic = Preset::Classic.rules();
        assert_eq!(classic.dice, 1);
        assert_eq!(classic.six_counts_when_nest_empty, Some(7));
        assert_eq!(
            Preset::ParcheesiStrict.rules().one_die_playable,
            OneDiePlayable::Larger
        );
        assert_eq!(
            Preset::Parcheesi.rules().bonus_timing,
            BonusTiming::AfterDice
        );
        for p in Preset::ALL {
            assert_eq!(p.rules().validate(), Ok(()), "{p}");
        }
    }
}

#[cfg(test)]
mod variant_tests {
    use super::*;

    #[test]
    fn d33_variants_are_classics_only() {
        for v in RuleSet::VARIANTS {
            assert_eq!(Preset::Classic.variant_refusal(v), None, "{v}");
            for p in [
                Preset::Online,
                Preset::Pairs,
                Preset::Parcheesi,
                Preset::ParcheesiStrict,
            ] {
                let name = format!("{p}+{v}");
                let e = RuleSet::from_name(&name).unwrap_err();
                assert!(
                    e.contains(&format!("the variant {v} is not played with {p}")),
                    "{e}"
                );
            }
        }
        let e = RuleSet::from_name("pairs+safe-only").unwrap_err();
        assert!(
            e.contains("Se permite formar barreras en cualquier lugar"),
            "{e}"
        );
        // Stored names of games created before D-33 still read.
        let r = RuleSet::from_stored_name("pairs+safe-only").unwrap();
        assert!(r.blockades_only_on_safe);
        assert_eq!(r.name(), "pairs+safe-only");
    }

    #[test]
    fn variants_round_trip_through_names() {
        let r = RuleSet::from_name("classic+murcia-12+two-out").unwrap();
        assert_eq!(r.six_counts_when_nest_empty, Some(12));
        assert!(r.two_out_on_first_five);
        assert_eq!(r.name(), "classic+murcia-12+two-out");
        assert_eq!(RuleSet::from_name(&r.name()), Ok(r));
    }

    #[test]
    fn invalid_combinations_name_the_conflict() {
        // D-33: the preset check comes first; the stored-name reader still validates.
        let e = RuleSet::from_name("online+murcia-12").unwrap_err();
        assert!(e.contains("murcia-12 is not played with online"), "{e}");
        let e = RuleSet::from_stored_name("online+murcia-12").unwrap_err();
        assert!(
            e.contains("six_counts_when_nest_empty needs one die"),
            "{e}"
        );
        let e = RuleSet::from_stored_name("parcheesi+mixed-safe").unwrap_err();
        assert!(e.contains("safe_with_opponent = forbidden"), "{e}");
        let e = RuleSet::from_name("classic+flying").unwrap_err();
        assert!(e.contains("unknown variant"), "{e}");
        let mut r = RuleSet::online();
        r.teams = true;
        assert!(r.validate().unwrap_err().contains("teams and game_end"));
    }
}

impl RuleSet {
    /// R-FIRST for the presets that roll for it: given each seated colour's opening roll
    /// (the sum of its dice), the colour that starts — the highest roll (seeds 001, 002,
    /// 004) or the lowest (seed 003). `None` when the deciding roll is tied (those
    /// players roll again) or when the creator starts (seed 000).
    pub fn first_by_roll(&self, rolls: &[(crate::Colour, u8)]) -> Option<crate::Colour> {
        let pick = match self.first_player {
            FirstPlayer::Creator => return None,
            FirstPlayer::HighestRoll => rolls.iter().map(|r| r.1).max()?,
            FirstPlayer::LowestRoll => rolls.iter().map(|r| r.1).min()?,
        };
        let mut best = rolls.iter().filter(|r| r.1 == pick);
        match (best.next(), best.next()) {
            (Some(&(c, _)), None) => Some(c),
            _ => None,
        }
    }
}

impl From<Preset> for RuleSet {
    fn from(p: Preset) -> RuleSet {
        p.rules()
    }
}
