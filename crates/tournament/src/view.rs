//! The tournament as `GET /api/tournaments/{id}` shows it (issue 27's contract:
//! `id`, `status`, `format`, `preset`, `entrants[{id, name, players}]`,
//! `matches[{id, round, entrants, status, game_id, winner}]`, `champion`, and more).

use crate::ids::{EntrantId, MatchId, Ms};
use crate::settings::{Format, Settings};
use crate::state::{EntrantStatus, MatchStatus, Phase, RefereeKind, Tournament};
use parchis_engine::Colour;
use parchis_protocol::BotLevel;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// One player of an entrant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlayerView {
    /// The account; `null` for a bot.
    #[schemars(with = "Option<String>")]
    pub account: Option<Uuid>,
    /// Shown name.
    pub name: String,
    /// The bot's level, for a bot.
    pub bot: Option<BotLevel>,
}

/// An entrant (withdrawn and dropped ones are not listed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EntrantView {
    /// Its id.
    pub id: EntrantId,
    /// Shown name.
    pub name: String,
    /// Its players, the registrant first.
    pub players: Vec<PlayerView>,
    /// `pending_partner`, `registered` or `disqualified`.
    pub status: EntrantStatus,
    /// Its seed (1 = best) once drawn.
    pub seed: Option<u32>,
}

/// A reserved seat of a match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeatView {
    /// The colour.
    pub colour: Colour,
    /// The entrant.
    pub entrant: EntrantId,
    /// The player's shown name.
    pub name: String,
    /// The player's account (`null` for a bot): the only one who may take the seat.
    #[schemars(with = "Option<String>")]
    pub account: Option<Uuid>,
}

/// A match with a game (byes are listed in `byes`, not here).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MatchView {
    /// Its id.
    pub id: MatchId,
    /// Its round (1-based).
    pub round: u32,
    /// Its position in the round: in a knockout, table `j` of round `r + 1` takes the
    /// qualifiers of tables `j·f … j·f + f − 1` of round `r` (`fan_in` = f).
    pub table: u32,
    /// Its entrants as drawn.
    pub entrants: Vec<EntrantId>,
    /// `pending`, `ready`, `open`, `playing`, `finished`, `forfeited` or `awarded`.
    pub status: MatchStatus,
    /// The current game, set as soon as it starts.
    #[schemars(with = "Option<String>")]
    pub game_id: Option<Uuid>,
    /// The winner, once decided.
    pub winner: Option<EntrantId>,
    /// Once decided: the entrants still in it, best first.
    pub places: Vec<EntrantId>,
    /// Entrants out of the match: no-shows and the disqualified.
    pub out: Vec<EntrantId>,
    /// Its room code, once open (watch it there).
    pub room: Option<String>,
    /// A referee paused its clock.
    pub paused: bool,
    /// When the absent forfeit (unix ms), while the room waits for them.
    pub no_show_deadline_ms: Option<Ms>,
    /// Games of earlier attempts, replaced by a replay the referee ordered.
    #[schemars(with = "Vec<String>")]
    pub replaced_games: Vec<Uuid>,
    /// The reserved seats.
    pub seats: Vec<SeatView>,
}

/// An entrant that went through a round without a game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ByeView {
    /// The round.
    pub round: u32,
    /// The entrant.
    pub entrant: EntrantId,
}

/// One line of the swiss standings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StandingView {
    /// The entrant.
    pub entrant: EntrantId,
    /// Points: one per win and per bye.
    pub points: u32,
    /// Sum of the points of the opponents met (the first tie-break).
    pub buchholz: u32,
    /// Byes received (at most one while avoidable).
    pub byes: u32,
}

/// A referee action, as the tournament page shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RefereeActionView {
    /// When (unix ms).
    pub at: Ms,
    /// The referee's account.
    #[schemars(with = "String")]
    pub by: Uuid,
    /// `pause`, `resume`, `award`, `disqualify` or `replay`.
    pub action: RefereeKind,
    /// The match concerned.
    pub match_id: Option<MatchId>,
    /// The entrant concerned.
    pub entrant: Option<EntrantId>,
    /// The reason given.
    pub reason: Option<String>,
}

/// An official of the tournament: who may close registration (the organiser) and use
/// the referee's controls (the organiser and its referees).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OfficialView {
    /// The account (compare with `GET /api/me`'s `id`).
    #[schemars(with = "String")]
    pub account: Uuid,
    /// Its username (empty for a tournament stored before names were kept).
    pub name: String,
}

/// `GET /api/tournaments/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TournamentView {
    /// Its id.
    #[schemars(with = "String")]
    pub id: Uuid,
    /// Shown name.
    pub name: String,
    /// `registering`, `running` or `finished`.
    pub status: Phase,
    /// `knockout` or `swiss`.
    pub format: Format,
    /// The rule set name of every game.
    pub preset: String,
    /// The organiser's account.
    #[schemars(with = "String")]
    pub organiser: Uuid,
    /// The organiser's account and username: the only one who may close registration
    /// and name referees; a referee too.
    pub organiser_official: OfficialView,
    /// The referees the organiser named (account and username), in account order; with
    /// the organiser, the only ones who may use the referee's controls.
    pub referees: Vec<OfficialView>,
    /// The settings as created.
    pub settings: Settings,
    /// Rounds to play (0 before the draw).
    pub rounds: u32,
    /// The round being played (0 before the draw).
    pub current_round: u32,
    /// Knockout: tables feeding one table of the next round (0 for swiss).
    pub fan_in: u32,
    /// Entrants (not withdrawn or dropped), by id.
    pub entrants: Vec<EntrantView>,
    /// Every match with a game, by id.
    pub matches: Vec<MatchView>,
    /// Byes by round.
    pub byes: Vec<ByeView>,
    /// Swiss standings, best first (empty for a knockout).
    pub standings: Vec<StandingView>,
    /// Every referee action, oldest first.
    pub referee_actions: Vec<RefereeActionView>,
    /// The champion, once finished.
    pub champion: Option<EntrantId>,
    /// Why nothing was played (fewer than two entrants at the close).
    pub cancelled: Option<String>,
}

impl Tournament {
    /// The tournament's public view.
    pub fn view(&self) -> TournamentView {
        let entrants = self
            .entrants()
            .filter(|e| !matches!(e.status, EntrantStatus::Withdrawn | EntrantStatus::Dropped))
            .map(|e| EntrantView {
                id: e.id,
                name: e.name.clone(),
                players: e
                    .players
                    .iter()
                    .map(|p| PlayerView {
                        account: p.account,
                        name: p.name.clone(),
                        bot: p.bot.map(|b| b.level),
                    })
                    .collect(),
                status: e.status,
                seed: e.seed,
            })
            .collect();
        let matches = self
            .matches()
            .filter(|m| m.status != MatchStatus::Bye)
            .map(|m| MatchView {
                id: m.id,
                round: m.round,
                table: m.table,
                entrants: m.entrants.clone(),
                status: m.status,
                game_id: m.game_id,
                winner: m.winner(),
                places: m.places.clone(),
                out: m.out.iter().copied().collect(),
                room: m.room.clone(),
                paused: m.paused,
                no_show_deadline_ms: self.no_show_deadline(m),
                replaced_games: m.replaced_games.clone(),
                seats: m
                    .seats
                    .iter()
                    .filter_map(|s| {
                        let p = self.entrant(s.entrant)?.players.get(s.player as usize)?;
                        Some(SeatView {
                            colour: s.colour,
                            entrant: s.entrant,
                            name: p.name.clone(),
                            account: p.account,
                        })
                    })
                    .collect(),
            })
            .collect();
        let byes = self
            .matches()
            .filter(|m| m.status == MatchStatus::Bye)
            .flat_map(|m| {
                m.entrants.iter().map(|&entrant| ByeView {
                    round: m.round,
                    entrant,
                })
            })
            .collect();
        TournamentView {
            id: self.id(),
            name: self.settings().name.clone(),
            status: self.phase(),
            format: self.settings().format,
            preset: self.shape().rules.name(),
            organiser: self.organiser(),
            organiser_official: self.official(self.organiser()),
            referees: self.referees().iter().map(|&a| self.official(a)).collect(),
            settings: self.settings().clone(),
            rounds: self.total_rounds(),
            current_round: self.current_round().map_or(0, |r| r.number),
            fan_in: self.layout().map_or(0, |l| l.fan_in),
            entrants,
            matches,
            byes,
            standings: self.standings(),
            referee_actions: self
                .referee_log()
                .iter()
                .map(|a| RefereeActionView {
                    at: a.at,
                    by: a.by,
                    action: a.kind,
                    match_id: a.match_id,
                    entrant: a.entrant,
                    reason: a.reason.clone(),
                })
                .collect(),
            champion: self.champion(),
            cancelled: self.cancelled().map(str::to_owned),
        }
    }

    /// The official `account` as the view shows it.
    fn official(&self, account: Uuid) -> OfficialView {
        OfficialView {
            account,
            name: self.official_name(account).to_owned(),
        }
    }

    /// The swiss standings, best first (empty for a knockout or before the draw).
    pub fn standings(&self) -> Vec<StandingView> {
        if self.settings().format != Format::Swiss {
            return Vec::new();
        }
        let tally = self.tally();
        let active: Vec<EntrantId> = self
            .seeds()
            .iter()
            .copied()
            .filter(|&e| !self.is_disqualified(e))
            .collect();
        tally
            .standings(&active)
            .into_iter()
            .map(|e| StandingView {
                entrant: e,
                points: tally.score_of(e),
                buchholz: tally.buchholz(e),
                byes: tally.byes.get(&e).copied().unwrap_or(0),
            })
            .collect()
    }
}
