//! Helpers shared by the rules tests: positions and actions in the text notation.

#![allow(dead_code)] // each test file uses its own subset

use parchis_engine::{Action, ActionError, Event, Game};

/// Parses and validates a position, panicking with the reason.
pub fn game(s: &str) -> Game {
    s.parse().unwrap_or_else(|e| panic!("position {s:?}: {e}"))
}

/// Applies an action written as text; panics when it is illegal.
pub fn act(g: &Game, a: &str) -> (Game, Vec<Event>) {
    let action: Action = a.parse().unwrap_or_else(|e| panic!("action {a:?}: {e}"));
    g.apply(&action).unwrap_or_else(|e| panic!("{g}: {a}: {e}"))
}

/// Throws two dice.
pub fn roll(g: &Game, a: u8, b: u8) -> (Game, Vec<Event>) {
    act(g, &format!("roll {a},{b}"))
}

/// The legal actions as sorted text.
pub fn legal(g: &Game) -> Vec<String> {
    let mut v: Vec<String> = g.legal_actions().iter().map(|a| a.to_string()).collect();
    v.sort();
    v
}

/// The error of an action that must be illegal.
pub fn refuse(g: &Game, a: &str) -> ActionError {
    let action: Action = a.parse().expect("action");
    g.apply(&action).expect_err("action should be illegal")
}
