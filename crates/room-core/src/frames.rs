//! Building the `event` frames of a room's stream: the room event, the path of a moved
//! piece (so clients can draw the move without knowing the rules) and, on the last event
//! of a batch, the state after it (a [`BoardState`]: the position less its rule set, which
//! `game_started` carries).

use parchis_engine::{route, BoardState, Event, Game};
use parchis_protocol::{RoomEvent, ServerMessage};

/// The `event` message for `event` (seq `seq`, server time `at_ms`) in room `room`.
/// `after` is the game after the batch this event ends, when it ends one; its position
/// goes into the frame. A `piece_moved` game event carries its path
/// ([`parchis_engine::route`]).
pub fn event_message(
    room: &str,
    seq: u64,
    at_ms: i64,
    event: RoomEvent,
    after: Option<&Game>,
) -> ServerMessage {
    let path = match &event {
        RoomEvent::Game {
            event:
                Event::PieceMoved {
                    colour,
                    from,
                    steps,
                    ..
                },
            ..
        } => route(*colour, *from, *steps),
        _ => Vec::new(),
    };
    ServerMessage::Event {
        room: room.to_owned(),
        seq,
        at_ms,
        event,
        position: after.map(|g| Box::new(BoardState::from(g))),
        path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_engine::{Colour, Location, MoveKind, RuleSet};

    #[test]
    fn a_moved_piece_carries_its_path_and_the_last_event_the_position() {
        let moved = RoomEvent::Game {
            event: Event::PieceMoved {
                colour: Colour::Blue,
                piece: 1,
                from: Location::Ring(66),
                to: Location::Ring(2),
                steps: 4,
                by: MoveKind::Die,
                bounced: false,
                die: None,
            },
            throw: None,
        };
        let game = Game::new(
            RuleSet::online(),
            &[Colour::Yellow, Colour::Blue],
            Colour::Yellow,
        )
        .expect("game");
        let ServerMessage::Event { path, position, .. } =
            event_message("AB", 7, 1, moved, Some(&game))
        else {
            panic!("not an event");
        };
        let want: Vec<Location> = [67, 68, 1, 2].into_iter().map(Location::Ring).collect();
        assert_eq!(path, want);
        assert_eq!(position.map(|p| p.turn), Some(Colour::Yellow));
        let turn = RoomEvent::Turn {
            colour: Colour::Yellow,
            deadline_ms: 5,
        };
        let ServerMessage::Event { path, position, .. } = event_message("AB", 8, 1, turn, None)
        else {
            panic!("not an event");
        };
        assert!(path.is_empty());
        assert!(position.is_none());
    }
}
