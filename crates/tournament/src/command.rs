//! What the director core is asked ([`Input`]) and why it refuses ([`CommandError`]).

use crate::ids::{Account, EntrantId, MatchId};
use crate::state::{FoldError, MatchStatus};
use parchis_engine::Colour;
use uuid::Uuid;

/// Longest reason a referee may give, and longest team name, in characters.
pub const MAX_REASON_CHARS: usize = 300;
/// Longest team name, in characters.
pub const MAX_TEAM_NAME_CHARS: usize = 60;

/// Something that happened to the tournament or was asked of it. Every input comes with
/// the time as a value (`now`, unix ms) to [`crate::Tournament::handle`].
///
/// Serde (tagged by `input`, snake case): a cluster node that does not direct the
/// tournament forwards the input to the node that does (`docs/TOURNAMENTS.md`, "Cluster").
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum Input {
    /// The organiser names a referee.
    NameReferee {
        /// Who asks (must be the organiser).
        by: Uuid,
        /// The new referee.
        account: Uuid,
        /// The new referee's username (shown in the view's `referees`).
        name: String,
    },
    /// A logged-in player registers: with a partner (who must confirm) in `pairs`, alone
    /// otherwise.
    Register {
        /// The registrant.
        account: Account,
        /// The partner (teams only).
        partner: Option<Account>,
        /// The team's shown name (default "A & B"; teams only).
        team_name: Option<String>,
    },
    /// The partner of a pending team confirms.
    ConfirmPartner {
        /// The partner's account.
        account: Uuid,
    },
    /// A player withdraws (its team with it) before the close.
    Unregister {
        /// The account.
        account: Uuid,
    },
    /// The organiser closes registration now and the draw is made.
    Close {
        /// Who asks (must be the organiser).
        by: Uuid,
    },
    /// Time passed: the deadline, round starts and no-show times due at `now` act.
    Tick,
    /// The driver created the room of a match ([`crate::Effect::CreateRoom`]).
    RoomOpened {
        /// The match.
        id: MatchId,
        /// The room code created.
        room: String,
    },
    /// The driver closed a superseded room ([`crate::Effect::CloseRoom`]).
    RoomClosed {
        /// The room code.
        room: String,
    },
    /// A player took its reserved seat in a match's room.
    Seated {
        /// The match.
        id: MatchId,
        /// The account.
        account: Uuid,
    },
    /// A match's game started in its room.
    GameStarted {
        /// The match.
        id: MatchId,
        /// The game.
        game_id: Uuid,
    },
    /// A match's game ended: its standings (the engine's ranking: finish order, then
    /// pieces in the goal, then squares still to travel), best first, as colours.
    GameFinished {
        /// The match.
        id: MatchId,
        /// The game.
        game_id: Uuid,
        /// The colours, best first (a colour may be missing: its entrant ranks last).
        places: Vec<Colour>,
    },
    /// A referee pauses a match's clock.
    Pause {
        /// The referee.
        by: Uuid,
        /// The match.
        id: MatchId,
    },
    /// A referee resumes a match's clock.
    Resume {
        /// The referee.
        by: Uuid,
        /// The match.
        id: MatchId,
    },
    /// A referee awards a match.
    Award {
        /// The referee.
        by: Uuid,
        /// The match.
        id: MatchId,
        /// Entrants of the match, best first (the first wins; those not listed rank
        /// after them, by seed).
        places: Vec<EntrantId>,
        /// Shown to everyone.
        reason: String,
    },
    /// A referee disqualifies an entrant.
    Disqualify {
        /// The referee.
        by: Uuid,
        /// The entrant.
        entrant: EntrantId,
        /// Shown to everyone.
        reason: String,
    },
    /// A referee orders a match replayed.
    Replay {
        /// The referee.
        by: Uuid,
        /// The match.
        id: MatchId,
        /// Shown to everyone.
        reason: String,
    },
}

/// Why an input was refused (the text is for the client; nothing was stored).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CommandError {
    /// Only the organiser may do this.
    #[error("only the organiser may do this")]
    NotOrganiser,
    /// Only the organiser or a named referee may do this.
    #[error("only a referee of this tournament may do this")]
    NotReferee,
    /// Registration is closed.
    #[error("registration is closed")]
    RegistrationClosed,
    /// The account already plays for an entrant.
    #[error("account {0} is already registered")]
    AlreadyRegistered(Uuid),
    /// A team preset needs a partner.
    #[error("this tournament is for pairs: register with a partner")]
    PartnerRequired,
    /// An individual preset takes no partner.
    #[error("this tournament is individual: register alone")]
    NoPartnerAllowed,
    /// The partner is the registrant.
    #[error("a player cannot be its own partner")]
    OwnPartner,
    /// A player's rating is below the minimum (or it is unrated).
    #[error("{name} is rated {rating:?}, below the minimum {min}")]
    BelowMinRating {
        /// The player's name.
        name: String,
        /// Its rating (`None`: unrated).
        rating: Option<f64>,
        /// The minimum.
        min: f64,
    },
    /// The team name is empty, too long or has control characters.
    #[error("team name must be 1 to {MAX_TEAM_NAME_CHARS} characters without control characters")]
    TeamName,
    /// The tournament has all the entrants it takes ([`crate::settings::MAX_ENTRANTS`]
    /// live, four times as many registrations in all, withdrawn ones included).
    #[error("the tournament is full")]
    Full,
    /// The account is not registered.
    #[error("not registered")]
    NotRegistered,
    /// The account has no team waiting for its confirmation.
    #[error("no team waits for this account's confirmation")]
    NothingToConfirm,
    /// Closing now would leave fewer than two entrants.
    #[error("{0} entrants: at least two are needed to close")]
    TooFewEntrants(usize),
    /// The tournament is not running.
    #[error("the tournament is not running")]
    NotRunning,
    /// No such match.
    #[error("no match {0}")]
    UnknownMatch(MatchId),
    /// No such entrant.
    #[error("no entrant {0}")]
    UnknownEntrant(EntrantId),
    /// The account or entrant has no seat in that match (or forfeited it).
    #[error("not in match {0}")]
    NotInMatch(MatchId),
    /// The match is not in a state that allows this.
    #[error("match {id} is {status:?}")]
    MatchState {
        /// The match.
        id: MatchId,
        /// Its status.
        status: MatchStatus,
    },
    /// The room is not this match's current room.
    #[error("room {0} is not the current room of the match")]
    WrongRoom(String),
    /// A result for a game that is not the match's current game (a replaced one).
    #[error("game {0} is not the current game of the match")]
    StaleGame(Uuid),
    /// The places do not fit the match.
    #[error("places: {0}")]
    BadPlaces(String),
    /// The reason is empty, too long or has control characters other than newlines.
    #[error("a reason of 1 to {MAX_REASON_CHARS} characters is required")]
    Reason,
    /// The match's round is over (a later round was drawn).
    #[error("match {0} belongs to a finished round")]
    RoundOver(MatchId),
    /// The entrant is already out (withdrawn, dropped or disqualified).
    #[error("entrant {0} is already out")]
    AlreadyOut(EntrantId),
    /// A decided event did not fold: a bug, reported rather than stored.
    #[error("internal: {0}")]
    Internal(FoldError),
}

/// Checks a referee's reason.
pub fn check_reason(reason: &str) -> Result<String, CommandError> {
    let r = reason.trim();
    if r.is_empty()
        || r.chars().count() > MAX_REASON_CHARS
        || r.chars().any(|c| c.is_control() && c != '\n')
    {
        return Err(CommandError::Reason);
    }
    Ok(r.to_owned())
}
