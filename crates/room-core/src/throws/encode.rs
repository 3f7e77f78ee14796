//! Packing a game's log: each event becomes the smallest op that the decoder turns back
//! into exactly that event, checked here before it is written. An action's engine events
//! become the action (the engine's replay rebuilds them); `turn`, `game_started` and
//! `dice_revealed` have compact ops; anything else, or anything that would not come back
//! identical, is stored as its JSON (`LITERAL`), so packing never loses an event.

use super::state::{kind, State, KIND_MASK, POSITIONED, TIMED};
use super::wire::{put_bytes, put_i64, put_u64};
use super::FORMAT;
use crate::replay::LoggedEvent;
use parchis_engine::{action_at, Action, Event, Game, RuleSet};
use parchis_protocol::RoomEvent;

/// Packs a game's log in pieces: [`Encoder::push`] appends the ops of the next events
/// (a group commit's batch) after those already packed. The first push writes the
/// header (format byte [`FORMAT`], first seq, first time). Every
/// [`SNAPSHOT_EVERY`](super::state::SNAPSHOT_EVERY) throws, after a positioned op, a
/// `SNAPSHOT` op follows (not in a format-1 log an encoder resumed: it goes on as format
/// 1).
#[derive(Clone, Debug, Default)]
pub struct Encoder {
    state: Option<State>,
}

/// One op about to be written: its kind, its payload, and how many events it stands for.
struct Op {
    kind: u8,
    payload: Vec<u8>,
    events: usize,
}

impl Encoder {
    /// An encoder for a log not yet started.
    pub fn new() -> Encoder {
        Encoder::default()
    }

    /// An encoder that goes on after a log decoded into `state`.
    pub(super) fn resume(state: State) -> Encoder {
        Encoder { state: Some(state) }
    }

    /// Whether the game is still followed: no engine event so far had to be stored as
    /// JSON (every action is stored as an action).
    pub fn follows_game(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.game.is_some())
    }

    /// The seq the next pushed event must have, once the log has started.
    pub fn next_seq(&self) -> Option<u64> {
        self.state.as_ref().map(|s| s.next_seq)
    }

    /// Appends to `out` the ops of `events`, which follow the events already pushed
    /// (consecutive seqs; a gap is packed as it is, and the decoder renumbers from the
    /// first seq, so callers keep seqs consecutive as the store does).
    pub fn push(&mut self, events: &[LoggedEvent], out: &mut Vec<u8>) {
        let Some(first) = events.first() else {
            return;
        };
        let state = self.state.get_or_insert_with(|| {
            out.push(FORMAT);
            put_u64(out, first.seq);
            put_i64(out, first.at_ms);
            State::new(first.seq, first.at_ms, true)
        });
        let mut i = 0;
        while i < events.len() {
            let op = action_op(state, &events[i..])
                .or_else(|| event_op(&events[i]))
                .unwrap_or_else(|| literal(&events[i].event));
            if op.kind == kind::THROW {
                // Sets the throw number only: no event, no time; the action follows.
                out.push(kind::THROW);
                out.extend_from_slice(&op.payload);
                state.next_throw = events[i].throw_of().unwrap_or(state.next_throw);
                continue;
            }
            let last = &events[i + op.events - 1];
            let mut tag = op.kind & KIND_MASK;
            if last.positioned {
                tag |= POSITIONED;
            }
            let dt = events[i].at_ms.wrapping_sub(state.at_ms);
            if dt != 0 {
                tag |= TIMED;
            }
            out.push(tag);
            if dt != 0 {
                put_i64(out, dt);
            }
            out.extend_from_slice(&op.payload);
            if is_action(op.kind) {
                state.next_seq = last.seq + 1;
                state.at_ms = last.at_ms;
            } else {
                state.observe(&events[i]);
            }
            i += op.events;
            if state.snapshot_due(last.positioned) {
                // Written only when its game reads back as the same game; else tried
                // again after the next positioned op (the decoder keeps the same count).
                if let Some(bytes) = super::snapshot::op_bytes(state) {
                    out.extend_from_slice(&bytes);
                    state.rolls = 0;
                }
            }
        }
    }
}

impl LoggedEvent {
    /// The throw number of a `dice_rolled` room event.
    fn throw_of(&self) -> Option<u64> {
        match &self.event {
            RoomEvent::Game {
                event: Event::DiceRolled { .. },
                throw,
            } => *throw,
            _ => None,
        }
    }
}

fn is_action(kind: u8) -> bool {
    matches!(
        kind,
        kind::ROLL | kind::EXIT | kind::MOVE | kind::BONUS | kind::TIMEOUT | kind::ABANDON
    )
}

/// The action whose engine events start `events`, if replaying it on the followed game
/// gives exactly those events (throw numbers, one time, a position mark on the last one
/// only); then the state's game is the game after it. A `THROW` op first when only the
/// throw number differs.
fn action_op(state: &mut State, events: &[LoggedEvent]) -> Option<Op> {
    let game = state.game.as_ref()?;
    let engine: Vec<Event> = events
        .iter()
        .map_while(|e| match &e.event {
            RoomEvent::Game { event, .. } => Some(*event),
            _ => None,
        })
        .collect();
    let action = action_at(game.rules(), &engine, 0)?;
    let mut after: Game = *game;
    let produced = after.play(&action).ok()?;
    let n = produced.len();
    if n == 0 || n > engine.len() {
        return None;
    }
    let covered = &events[..n];
    let same_time = covered.iter().all(|e| e.at_ms == covered[0].at_ms);
    let marks_inside = covered[..n - 1].iter().any(|e| e.positioned);
    if !same_time || marks_inside {
        return None;
    }
    if let Some(t) = events[0].throw_of() {
        if t != state.next_throw {
            let mut payload = Vec::new();
            put_u64(&mut payload, t);
            return Some(Op {
                kind: kind::THROW,
                payload,
                events: 1,
            });
        }
    }
    let mut probe = state.clone();
    let rebuilt = probe.wrap(produced);
    if rebuilt.iter().zip(covered).any(|(r, e)| *r != e.event) {
        return None;
    }
    let (kind, payload) = action_bytes(&action)?;
    state.game = Some(after);
    state.next_throw = probe.next_throw;
    state.rolls = probe.rolls;
    Some(Op {
        kind,
        payload,
        events: n,
    })
}

/// An action's op kind and payload; `None` for values the packing has no room for.
fn action_bytes(action: &Action) -> Option<(u8, Vec<u8>)> {
    let piece_byte =
        |piece: u8, capture: bool| (piece <= 3).then_some(piece | (u8::from(capture) << 2));
    Some(match *action {
        Action::Roll { dice } => {
            let v = dice.values();
            let second = v.get(1).copied().unwrap_or(0);
            (kind::ROLL, vec![v[0] | (second << 4)])
        }
        Action::Exit => (kind::EXIT, Vec::new()),
        Action::Move {
            piece,
            die,
            capture,
        } => {
            if die > 15 {
                return None;
            }
            (kind::MOVE, vec![piece_byte(piece, capture)? | (die << 3)])
        }
        Action::Bonus {
            piece,
            amount,
            capture,
        } => (kind::BONUS, vec![piece_byte(piece, capture)?, amount]),
        Action::Timeout => (kind::TIMEOUT, Vec::new()),
        Action::Abandon { colour } => (kind::ABANDON, vec![colour.index() as u8]),
    })
}

/// The compact op of a room event that has one, if it decodes back to the same event.
fn event_op(e: &LoggedEvent) -> Option<Op> {
    let mut payload = Vec::new();
    let kind = match &e.event {
        RoomEvent::Turn {
            colour,
            deadline_ms,
        } => {
            payload.push(colour.index() as u8);
            put_i64(&mut payload, deadline_ms.checked_sub(e.at_ms)?);
            kind::TURN
        }
        RoomEvent::DiceRevealed { server_seed } => {
            let raw = hex::decode(server_seed).ok()?;
            if raw.len() != 32 || hex::encode(&raw) != *server_seed {
                return None;
            }
            payload = raw;
            kind::DICE_REVEALED
        }
        RoomEvent::GameStarted {
            game_id,
            first,
            position,
            dice,
        } => {
            let id = uuid::Uuid::parse_str(game_id).ok()?;
            if id.hyphenated().to_string() != *game_id {
                return None;
            }
            let seats: Vec<_> = position.players.iter().map(|p| p.colour).collect();
            let start = Game::new(position.rules, &seats, *first).ok()?;
            if start.to_position() != *position {
                return None;
            }
            payload.extend_from_slice(id.as_bytes());
            payload.push(first.index() as u8);
            payload.push(seats.len() as u8);
            payload.extend(seats.iter().map(|c| c.index() as u8));
            rules_bytes(&position.rules, &mut payload)?;
            match dice {
                None => payload.push(0),
                Some(info) => {
                    payload.push(1);
                    put_bytes(&mut payload, &serde_json::to_vec(info).ok()?);
                }
            }
            kind::GAME_STARTED
        }
        _ => return None,
    };
    Some(Op {
        kind,
        payload,
        events: 1,
    })
}

/// A rule set: by its stored name (0, then the name) when that name reads back as the
/// same rules, else as JSON (1, then the JSON).
fn rules_bytes(rules: &RuleSet, out: &mut Vec<u8>) -> Option<()> {
    let name = rules.name();
    if RuleSet::from_stored_name(&name).ok() == Some(*rules) {
        out.push(0);
        put_bytes(out, name.as_bytes());
    } else {
        out.push(1);
        put_bytes(out, &serde_json::to_vec(rules).ok()?);
    }
    Some(())
}

/// The fallback op: the event's JSON.
fn literal(event: &RoomEvent) -> Op {
    let mut payload = Vec::new();
    put_bytes(&mut payload, &serde_json::to_vec(event).unwrap_or_default());
    Op {
        kind: kind::LITERAL,
        payload,
        events: 1,
    }
}
