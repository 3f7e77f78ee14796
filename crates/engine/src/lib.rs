//! # parchis-engine
//!
//! The pure, deterministic Parchís rules engine: no I/O, no clock, no randomness (dice
//! are inputs). Given a [`Game`], [`Game::legal_actions`] lists every legal action and
//! [`Game::apply`] returns the new state with the [`Event`]s it caused, or an
//! [`ActionError`] naming the violated rule id of the reference (`R-*`, `D-*`).
//!
//! ```
//! use parchis_engine::{Action, Colour, Dice, Game, RuleSet};
//! let game = Game::new(RuleSet::online(), &[Colour::Yellow, Colour::Red], Colour::Yellow).unwrap();
//! let (game, _events) = game.apply(&Action::Roll { dice: Dice::two(5, 3).unwrap() }).unwrap();
//! // R-EXIT-1: with a 5 and a piece in the nest, the exit comes first.
//! assert_eq!(game.legal_actions(), vec![Action::Exit]);
//! ```

#![allow(clippy::needless_range_loop)] // board loops index several parallel arrays

mod action;
mod board;
pub mod fair_dice;
mod game;
mod notation;
mod position;
mod preview;
mod record;
mod rules;
mod standings;
mod types;

pub use action::{Action, ActionError, BonusReason, ErrorKind, Event, MoveKind};
pub use board::{is_safe, Colour, Location, COLOURS, HOME_COLUMN, PIECES, RING};
pub use game::{Expect, Game, SetupError};
pub use notation::NotationError;
pub use position::{
    BoardState, HeldBlockade, PieceState, PlayerPosition, Position, PositionError, StagePosition,
};
pub use preview::{route, ActionPreview};
pub use record::{action_at, result_tag, GameRecord, RecordError};
pub use rules::{
    BlockadeKind, BonusTakers, BonusTiming, DoublesBonus, ExitCapture, FirstPlayer, GameEnd,
    OneDiePlayable, OpenOn, Preset, RollAgainOn, RuleSet, SafeWithOpponent, ThirdRepeat,
    TurnDirection,
};
pub use standings::{standings, Standing};
pub use types::{Dice, Outcome, PieceId, SeatStatus, WinReason};
