//! What a legal action does, before it is played: the piece, every square it lands on
//! (the bounce included), what it captures, the bonus it earns, whether it reaches the
//! goal, and the whole state after it. Clients draw these instead of knowing the
//! rules (the board in the browser knows only geometry).
//!
//! Computed by playing the action on a copy of the game, so a preview is exactly what
//! [`Game::apply`] would do.

use crate::action::{Action, ActionError, ErrorKind, Event};
use crate::board::{Colour, Location, GOAL};
use crate::game::Game;
use crate::position::BoardState;
use crate::types::PieceId;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The effect of one legal action ([`Game::preview`]).
///
/// JSON example (a six counting 7 in `classic`):
/// `{"action":{"type":"move","piece":0,"die":6},"colour":"yellow","piece":0,"from":"5",
/// "to":"12","path":["6","7","8","9","10","11","12"],"steps":7,"bounced":false,
/// "captures":[],"bonus":null,"goal":false,"position":{…}}`
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ActionPreview {
    /// The action, as it is sent back to play it.
    pub action: Action,
    /// The moving piece's colour (the player to act).
    pub colour: Colour,
    /// The moving piece, 0..=3 (for an exit: the nest piece that comes out).
    pub piece: u8,
    /// Where the piece stands now (`nest` for an exit).
    pub from: Location,
    /// Where it lands.
    pub to: Location,
    /// Every square it steps on, in order, the landing square last; after an overshoot
    /// the squares back down the home column (R-BOUNCE). An exit: just the exit square.
    pub path: Vec<Location>,
    /// Squares counted (a six counting 7 or 12 says 7 or 12; an exit 0).
    pub steps: u8,
    /// It overshoots the goal and runs back (R-BOUNCE).
    pub bounced: bool,
    /// The pieces it captures, sent to their nests (R-CAPTURE, R-EXIT-CAPTURE).
    pub captures: Vec<PieceId>,
    /// The bonus move it earns, in squares (20 for a capture, 10 for the goal; R-BONUS);
    /// the sum when it earns more than one.
    pub bonus: Option<u8>,
    /// The piece reaches the goal (R-GOAL).
    pub goal: bool,
    /// The whole game state after the action (and everything it sets off: the turn
    /// passing, a bonus forfeited, the game won), without the rule set, which does not
    /// change ([`BoardState`]).
    pub position: BoardState,
}

/// The squares a piece of `colour` standing on `from` steps on when it counts `steps`
/// squares forward, in order, ending where it lands; past the goal it runs back down its
/// home column (R-BOUNCE). Empty for a piece in the nest or the goal, for `steps == 0`,
/// or for a location that is not on `colour`'s path.
pub fn route(colour: Colour, from: Location, steps: u8) -> Vec<Location> {
    let Some(p) = from.to_progress(colour) else {
        return Vec::new();
    };
    if p == 0 || p >= GOAL {
        return Vec::new();
    }
    (1..=steps)
        .map(|s| {
            let x = u16::from(p) + u16::from(s);
            let q = if x > u16::from(GOAL) {
                2 * u16::from(GOAL) - x
            } else {
                x
            };
            Location::from_progress(colour, q.min(u16::from(GOAL)) as u8)
        })
        .collect()
}

impl Game {
    /// What playing `action` would do, without changing `self`.
    ///
    /// # Errors
    /// The same [`ActionError`] as [`Game::apply`] for an illegal action, and
    /// `bad_piece` for an action that moves no piece (roll, timeout, abandon).
    pub fn preview(&self, action: &Action) -> Result<ActionPreview, ActionError> {
        if !matches!(
            action,
            Action::Exit | Action::Move { .. } | Action::Bonus { .. }
        ) {
            return Err(ActionError::new(
                ErrorKind::BadPiece,
                "R-MOVE",
                format!("`{action}` moves no piece: there is nothing to preview"),
            ));
        }
        let (next, events) = self.apply(action)?;
        let mut preview = ActionPreview {
            action: *action,
            colour: self.mover(),
            piece: 0,
            from: Location::Nest,
            to: Location::Nest,
            path: Vec::new(),
            steps: 0,
            bounced: false,
            captures: Vec::new(),
            bonus: None,
            goal: false,
            position: BoardState::from(&next),
        };
        let mut moved = false;
        for e in events {
            match e {
                Event::PieceExited {
                    colour: c,
                    piece,
                    square,
                } if !moved => {
                    moved = true;
                    preview.colour = c;
                    preview.piece = piece;
                    preview.to = Location::Ring(square);
                    preview.path = vec![preview.to];
                }
                Event::PieceMoved {
                    colour: c,
                    piece,
                    from,
                    to,
                    steps,
                    bounced,
                    ..
                } if !moved => {
                    moved = true;
                    preview.colour = c;
                    preview.piece = piece;
                    preview.from = from;
                    preview.to = to;
                    preview.steps = steps;
                    preview.bounced = bounced;
                    preview.path = route(c, from, steps);
                    preview.goal = to == Location::Goal;
                }
                Event::PieceCaptured {
                    colour: c, piece, ..
                } => preview.captures.push(PieceId { colour: c, piece }),
                Event::BonusEarned { amount, .. } => {
                    preview.bonus = Some(preview.bonus.unwrap_or(0).saturating_add(amount));
                }
                _ => {}
            }
        }
        Ok(preview)
    }

    /// [`Game::preview`] of every legal action, in the order of [`Game::legal_actions`].
    /// Empty while the game awaits a roll or has ended.
    pub fn previews(&self) -> Vec<ActionPreview> {
        self.legal_actions()
            .iter()
            .filter_map(|a| self.preview(a).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Dice, Position, RuleSet};

    fn ring(n: u8) -> Location {
        Location::Ring(n)
    }

    #[test]
    fn route_counts_squares_and_bounces_back_r_bounce() {
        // Yellow from its exit square 5, 3 squares: 6, 7, 8.
        assert_eq!(
            route(Colour::Yellow, ring(5), 3),
            vec![ring(6), ring(7), ring(8)]
        );
        // Yellow crosses 68 into its home column.
        assert_eq!(
            route(Colour::Yellow, ring(67), 3),
            vec![ring(68), Location::HomeColumn(1), Location::HomeColumn(2)]
        );
        // R-BOUNCE: from h5, 5 squares: h6, h7, goal, then back h7, h6.
        assert_eq!(
            route(Colour::Red, Location::HomeColumn(5), 5),
            vec![
                Location::HomeColumn(6),
                Location::HomeColumn(7),
                Location::Goal,
                Location::HomeColumn(7),
                Location::HomeColumn(6)
            ]
        );
        // Blue wraps from 68 to 1.
        assert_eq!(route(Colour::Blue, ring(68), 2), vec![ring(1), ring(2)]);
        assert!(route(Colour::Green, Location::Nest, 4).is_empty());
        assert!(route(Colour::Green, Location::Goal, 4).is_empty());
    }

    /// A game from the text notation's position.
    fn game(rules: RuleSet, pieces: &[(Colour, [Location; 4])], dice: &[u8]) -> Game {
        let seated: Vec<Colour> = pieces.iter().map(|(c, _)| *c).collect();
        let g = Game::new(rules, &seated, seated[0]).expect("game");
        let mut pos = Position::from(&g);
        for (c, locs) in pieces {
            let p = pos
                .players
                .iter_mut()
                .find(|p| p.colour == *c)
                .expect("seated");
            for (i, l) in locs.iter().enumerate() {
                p.pieces[i].at = *l;
            }
        }
        let g = Game::try_from(&pos).expect("valid position");
        let (g, _) = g
            .apply(&Action::Roll {
                dice: Dice::from_slice(dice).expect("dice"),
            })
            .expect("roll");
        g
    }

    #[test]
    fn classic_six_counts_seven_with_an_empty_nest() {
        // R-MOVE / seed 001: in `classic` a six counts 7 when no piece is in the nest.
        let rules = RuleSet::from_name("classic").expect("classic");
        let g = game(
            rules,
            &[
                (
                    Colour::Yellow,
                    [ring(5), ring(30), Location::HomeColumn(1), ring(60)],
                ),
                (Colour::Red, [Location::Nest; 4]),
            ],
            &[6],
        );
        let p = g
            .preview(&Action::Move {
                piece: 0,
                die: 6,
                capture: false,
            })
            .expect("legal");
        assert_eq!(p.steps, 7);
        assert_eq!(p.to, ring(12));
        assert_eq!(p.path.len(), 7);
        assert_eq!(p.path.last(), Some(&ring(12)));
        let after = p.position.players[0].pieces[0].at;
        assert_eq!(
            after,
            ring(12),
            "the position after agrees with the landing"
        );
    }

    #[test]
    fn capture_earns_twenty_and_goal_earns_ten_r_capture_r_goal() {
        let g = game(
            RuleSet::online(),
            &[
                (
                    Colour::Yellow,
                    [
                        ring(8),
                        Location::HomeColumn(4),
                        Location::Nest,
                        Location::Nest,
                    ],
                ),
                (
                    Colour::Red,
                    [ring(11), Location::Nest, Location::Nest, Location::Nest],
                ),
            ],
            &[3, 4],
        );
        let cap = g
            .preview(&Action::Move {
                piece: 0,
                die: 3,
                capture: false,
            })
            .expect("legal");
        assert_eq!(cap.to, ring(11));
        assert_eq!(
            cap.captures,
            vec![PieceId {
                colour: Colour::Red,
                piece: 0
            }]
        );
        assert_eq!(cap.bonus, Some(20));
        assert!(!cap.goal);
        let red_after = cap
            .position
            .players
            .iter()
            .find(|p| p.colour == Colour::Red);
        assert_eq!(red_after.map(|p| p.pieces[0].at), Some(Location::Nest));
        // h4 + 4 = goal (h7 is progress 71, goal 72).
        let goal = g
            .preview(&Action::Move {
                piece: 1,
                die: 4,
                capture: false,
            })
            .expect("legal");
        assert!(goal.goal);
        assert_eq!(goal.to, Location::Goal);
        assert_eq!(goal.bonus, Some(10));
        assert!(goal.captures.is_empty());
    }

    #[test]
    fn previews_match_apply_for_every_legal_action() {
        let g = game(
            RuleSet::online(),
            &[
                (
                    Colour::Yellow,
                    [ring(5), ring(20), Location::HomeColumn(6), Location::Nest],
                ),
                (
                    Colour::Blue,
                    [ring(25), Location::Nest, Location::Nest, Location::Nest],
                ),
            ],
            &[5, 5],
        );
        let previews = g.previews();
        assert_eq!(previews.len(), g.legal_actions().len());
        assert!(!previews.is_empty());
        for p in &previews {
            let (next, _) = g.apply(&p.action).expect("legal");
            assert_eq!(p.position, BoardState::from(&next));
            let at = p.position.players[0].pieces[p.piece as usize].at;
            assert_eq!(at, p.to, "{p:?}");
        }
        assert!(g
            .preview(&Action::Roll {
                dice: Dice::two(1, 2).expect("dice")
            })
            .is_err());
    }

    #[test]
    fn bounce_is_previewed_in_online_r_bounce() {
        let g = game(
            RuleSet::online(),
            &[
                (
                    Colour::Yellow,
                    [Location::HomeColumn(5), ring(30), ring(40), ring(50)],
                ),
                (Colour::Red, [Location::Nest; 4]),
            ],
            &[5, 1],
        );
        let p = g
            .preview(&Action::Move {
                piece: 0,
                die: 5,
                capture: false,
            })
            .expect("legal");
        assert!(p.bounced);
        assert_eq!(p.to, Location::HomeColumn(6));
        assert_eq!(p.path.len(), 5);
        assert_eq!(p.path[2], Location::Goal);
    }
}
