//! The one replay function: a game's stored log → the [`Game`] it leads to and the room's
//! log state. Used by [`restore`](crate::restore), by the export in `http.rs` and by the
//! tests.

use crate::Ms;
use parchis_engine::{action_at, Colour, Event, Game, GameRecord, RuleSet};
use parchis_protocol::RoomEvent;

/// One room event as stored: its seq, its time (unix ms) and the event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedEvent {
    /// Position in the room's event stream.
    pub seq: u64,
    /// When it happened (unix ms).
    pub at_ms: Ms,
    /// The event as sent on the WebSocket.
    pub event: RoomEvent,
    /// Its live frame carried `position` (the game after its batch): the last event of a
    /// batch that moved the game, marked in the stored form
    /// ([`POSITION_KEY`](crate::persist::POSITION_KEY)). `false` for every event of a log
    /// written before the mark existed.
    pub positioned: bool,
}

/// Where a restore may start instead of a log's beginning (issue 28's snapshots,
/// `docs/STORAGE.md`): the state after the events up to seq `seq`, as the packed log's
/// `SNAPSHOT` op stores it. The events after it replay from `game`
/// ([`resume`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The last seq before it (the next event is `seq + 1`).
    pub seq: u64,
    /// The time of that event (unix ms).
    pub at_ms: Ms,
    /// The game after every event up to it.
    pub game: Game,
    /// The fair-dice number of the next throw (`docs/FAIR_DICE.md`): throws so far,
    /// opening rolls included.
    pub next_throw: u64,
    /// The deadline of the last `turn` event (unix ms), as [`replay`] reads it.
    pub last_turn_deadline: Option<Ms>,
    /// The referee's pause in force, as [`Replayed::paused`].
    pub paused: Option<(Colour, Ms)>,
}

/// Why a stored log does not replay.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The seqs have a gap or go backwards.
    #[error("event seq {got} follows seq {after}")]
    Gap {
        /// The previous seq.
        after: u64,
        /// The seq found.
        got: u64,
    },
    /// No `game_started` event.
    #[error("the log has no game_started event")]
    NoStart,
    /// The engine refuses a recorded action.
    #[error("{0}")]
    Engine(String),
    /// Replaying the actions produced other engine events than the stored ones.
    #[error("engine event {at} differs ({replayed} replayed, {stored} stored)")]
    Diverged {
        /// Index of the first differing engine event.
        at: usize,
        /// Engine events the replay produced.
        replayed: usize,
        /// Engine events stored.
        stored: usize,
    },
}

/// A replayed game.
#[derive(Clone, Debug)]
pub struct Replayed {
    /// The game after every stored action.
    pub game: Game,
    /// The engine's record of it (rule set, seats, first player, actions): the export
    /// prints it.
    pub record: GameRecord,
    /// Rule set, seated colours and first player, from `game_started`.
    pub start: (RuleSet, Vec<Colour>, Colour),
    /// The last seq of the log.
    pub seq: u64,
    /// The deadline of the last `turn` event (unix ms).
    pub last_turn_deadline: Option<Ms>,
    /// The referee's pause in force at the end of the log (a `clock_paused` after the
    /// last `turn`): the colour and what was left of its clock (ms).
    pub paused: Option<(Colour, Ms)>,
    /// The engine events, as stored (and as replayed).
    pub engine_events: Vec<Event>,
    /// For each [positioned](LoggedEvent::positioned) event, ascending by seq: its seq and
    /// the game its live frame's `position` showed (the game after every action whose
    /// stored events come at or before it).
    pub positions: Vec<(u64, Game)>,
}

/// Replays a game's stored log (ascending seq, gap-free) through the engine and checks the
/// replay produced the stored engine events (R-* rules live in the engine), allowing only
/// the `bonus_forfeited` reports a newer engine adds (`GameRecord::replay_matches`, D-31).
///
/// The game after each positioned event is tracked along ([`Replayed::positions`]): a
/// positioned event ends a batch, and a batch holds whole actions (at most one: a start or
/// an action), so its game is the one after the actions whose stored engine events all
/// come before it.
///
/// # Errors
/// [`ReplayError`]: a seq gap, no `game_started`, an action the engine refuses, or a
/// replay that diverges from the stored engine events.
pub fn replay(events: &[LoggedEvent]) -> Result<Replayed, ReplayError> {
    let mut start = None;
    let mut stored = Vec::new();
    // Each positioned event: its seq and how many stored engine events come up to it.
    let mut marks = Vec::new();
    let mut last_turn_deadline = None;
    let mut paused = None;
    let mut seq = 0u64;
    for (i, e) in events.iter().enumerate() {
        if i > 0 && e.seq != seq + 1 {
            return Err(ReplayError::Gap {
                after: seq,
                got: e.seq,
            });
        }
        seq = e.seq;
        match &e.event {
            RoomEvent::GameStarted {
                first, position, ..
            } => {
                start = Some((
                    position.rules,
                    position
                        .players
                        .iter()
                        .map(|p| p.colour)
                        .collect::<Vec<_>>(),
                    *first,
                ));
            }
            RoomEvent::Turn { deadline_ms, .. } => {
                last_turn_deadline = Some(*deadline_ms);
                paused = None;
            }
            RoomEvent::ClockPaused {
                colour,
                remaining_ms,
            } => paused = Some((*colour, *remaining_ms)),
            RoomEvent::Game { event, .. } => stored.push(*event),
            _ => {}
        }
        if e.positioned {
            marks.push((e.seq, stored.len()));
        }
    }
    let (rules, seats, first) = start.ok_or(ReplayError::NoStart)?;
    let record = GameRecord::from_events(rules, seats.clone(), first, &stored);
    let engine = |e: parchis_engine::RecordError| ReplayError::Engine(e.to_string());
    let mut positions = Vec::with_capacity(marks.len());
    let mut pending = marks.into_iter().peekable();
    let mut before = record.start().map_err(engine)?;
    // Stored engine events the actions so far account for (matched as
    // `GameRecord::replay_matches` does: a newer engine's extra `bonus_forfeited` reports
    // are not in the log, and an older engine's `third_doubles_penalty` may name the
    // partner, `GameRecord::event_matches`).
    let mut matched = 0;
    let (game, replayed) = record
        .replay_with(|after, produced| {
            for e in produced {
                if stored
                    .get(matched)
                    .is_some_and(|s| GameRecord::event_matches(e, s))
                {
                    matched += 1;
                }
            }
            // A mark before this action's last stored event shows the game before it.
            while let Some((seq, _)) = pending.next_if(|(_, at)| *at < matched) {
                positions.push((seq, before));
            }
            before = *after;
        })
        .map_err(engine)?;
    positions.extend(pending.map(|(seq, _)| (seq, game)));
    // Equal, except for `bonus_forfeited` reports a newer engine adds to an older log
    // (D-31): they change no state.
    if !GameRecord::replay_matches(&replayed, &stored) {
        let at = replayed
            .iter()
            .zip(&stored)
            .position(|(a, b)| a != b)
            .unwrap_or(replayed.len().min(stored.len()));
        return Err(ReplayError::Diverged {
            at,
            replayed: replayed.len(),
            stored: stored.len(),
        });
    }
    Ok(Replayed {
        game,
        record,
        start: (rules, seats, first),
        seq,
        last_turn_deadline,
        paused,
        engine_events: stored,
        positions,
    })
}

/// The game a restore's replayed events start from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Before {
    /// The seq before the first event the room keeps of the game (`game_started`'s less
    /// one, or the snapshot's).
    pub seq: u64,
    /// The game then (the start, or the snapshot's game).
    pub game: Game,
    /// Throws made before it: 0 at the start; at a snapshot its next throw number (not
    /// 0: the spectator delay counts from it, and only its differences matter).
    pub throws: u64,
}

/// What a restore needs of a stored game ([`resume`]): the game now, where the events it
/// replayed start, the clock, and the positions of their frames.
#[derive(Clone, Debug)]
pub struct Resumed {
    /// The game after every stored action.
    pub game: Game,
    /// The game the replayed events start from.
    pub before: Before,
    /// The last seq of the log.
    pub seq: u64,
    /// As [`Replayed::last_turn_deadline`], over the whole log.
    pub last_turn_deadline: Option<Ms>,
    /// As [`Replayed::paused`], over the whole log.
    pub paused: Option<(Colour, Ms)>,
    /// As [`Replayed::positions`], for the replayed events.
    pub positions: Vec<(u64, Game)>,
    /// The fair-dice number of the next throw (`docs/FAIR_DICE.md`).
    pub next_throw: u64,
    /// The seated colours, in board order.
    pub colours: Vec<Colour>,
}

/// A restore's replay: the events of a stored log after `from` (a snapshot the packed
/// log's decoder read them from, [`crate::throws::decode_tail`]) replayed from its game,
/// or, without one, the whole log by [`replay`].
///
/// # Errors
/// As [`replay`]; after a snapshot also a `game_started` (a log with a snapshot has its
/// start before it).
pub fn resume(from: Option<&Snapshot>, events: &[LoggedEvent]) -> Result<Resumed, ReplayError> {
    let throws = crate::dice::throws_in(events.iter().map(|e| &e.event));
    let Some(from) = from else {
        let replayed = replay(events)?;
        let game_started = events
            .iter()
            .find(|e| matches!(e.event, RoomEvent::GameStarted { .. }))
            .map_or(0, |e| e.seq.saturating_sub(1));
        let start = replayed
            .record
            .start()
            .map_err(|e| ReplayError::Engine(e.to_string()))?;
        return Ok(Resumed {
            game: replayed.game,
            before: Before {
                seq: game_started,
                game: start,
                throws: 0,
            },
            seq: replayed.seq,
            last_turn_deadline: replayed.last_turn_deadline,
            paused: replayed.paused,
            positions: replayed.positions,
            next_throw: throws,
            colours: replayed.start.1,
        });
    };
    let after = replay_after(from, events)?;
    Ok(Resumed {
        next_throw: throws.max(from.next_throw),
        ..after
    })
}

/// The events after snapshot `from` replayed from its game, as [`replay`] replays a whole
/// log: each action read from the stored engine events ([`action_at`], as
/// [`GameRecord::from_events`] reads them), played, and the replay checked against them.
fn replay_after(from: &Snapshot, events: &[LoggedEvent]) -> Result<Resumed, ReplayError> {
    let mut stored = Vec::new();
    let mut marks = Vec::new();
    let mut last_turn_deadline = from.last_turn_deadline;
    let mut paused = from.paused;
    let mut seq = from.seq;
    for e in events {
        if e.seq != seq + 1 {
            return Err(ReplayError::Gap {
                after: seq,
                got: e.seq,
            });
        }
        seq = e.seq;
        match &e.event {
            RoomEvent::GameStarted { .. } => {
                return Err(ReplayError::Engine(format!(
                    "a game_started (seq {seq}) after the snapshot at seq {}",
                    from.seq
                )))
            }
            RoomEvent::Turn { deadline_ms, .. } => {
                last_turn_deadline = Some(*deadline_ms);
                paused = None;
            }
            RoomEvent::ClockPaused {
                colour,
                remaining_ms,
            } => paused = Some((*colour, *remaining_ms)),
            RoomEvent::Game { event, .. } => stored.push(*event),
            _ => {}
        }
        if e.positioned {
            marks.push((e.seq, stored.len()));
        }
    }
    let (game, positions) = replay_actions(from.game, &stored, marks)?;
    Ok(Resumed {
        game,
        before: Before {
            seq: from.seq,
            game: from.game,
            throws: from.next_throw.max(1),
        },
        seq,
        last_turn_deadline,
        paused,
        positions,
        next_throw: from.next_throw,
        colours: Colour::ALL
            .into_iter()
            .filter(|&c| from.game.seat(c) != parchis_engine::SeatStatus::Empty)
            .collect(),
    })
}

/// Plays the actions of `stored` engine events from `start` (each read with
/// [`action_at`], as [`GameRecord::from_events`] reads them) and checks the replay gave
/// them back (as [`replay`]); `marks`: each positioned event's seq and how many stored
/// engine events come up to it. Returns the game after them and each mark's game.
fn replay_actions(
    start: Game,
    stored: &[Event],
    marks: Vec<(u64, usize)>,
) -> Result<(Game, Vec<(u64, Game)>), ReplayError> {
    let rules = *start.rules();
    let mut game = start;
    let mut replayed = Vec::with_capacity(stored.len());
    let mut positions = Vec::with_capacity(marks.len());
    let mut pending = marks.into_iter().peekable();
    // Stored events the actions so far account for (as in `replay`).
    let mut i = 0;
    while i < stored.len() {
        let Some(action) = action_at(&rules, stored, i) else {
            i += 1; // a consequence of an earlier action
            continue;
        };
        let before = game;
        let produced = game
            .play(&action)
            .map_err(|e| ReplayError::Engine(format!("action {action}: {e}")))?;
        let mut j = i;
        for e in &produced {
            if stored
                .get(j)
                .is_some_and(|s| GameRecord::event_matches(e, s))
            {
                j += 1;
            }
        }
        i = j.max(i + 1);
        // A mark before this action's last stored event shows the game before it.
        while let Some((seq, _)) = pending.next_if(|(_, at)| *at < i) {
            positions.push((seq, before));
        }
        replayed.extend(produced);
    }
    positions.extend(pending.map(|(seq, _)| (seq, game)));
    if !GameRecord::replay_matches(&replayed, stored) {
        let at = replayed
            .iter()
            .zip(stored)
            .position(|(a, b)| a != b)
            .unwrap_or(replayed.len().min(stored.len()));
        return Err(ReplayError::Diverged {
            at,
            replayed: replayed.len(),
            stored: stored.len(),
        });
    }
    Ok((game, positions))
}
