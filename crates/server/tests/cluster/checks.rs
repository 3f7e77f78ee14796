//! What every cluster test checks about a game: its stored log is gap-free and replays
//! through the engine (so nothing in it is forked or applied twice), every event a client
//! saw is stored exactly as it saw it, every acknowledged action is in the log, and no
//! player's actions were applied more often than it sent them.

use crate::driver::Player;
use crate::harness::Cluster;
use parchis_engine::{Action, Colour};
use parchis_protocol::RoomEvent;
use parchis_room_core::{replay, LoggedEvent, Replayed};
use serde_json::Value;
use std::collections::BTreeMap;

/// A stored game, read from the database.
pub struct Stored {
    pub id: String,
    /// `{"seq","at_ms","event"}` in seq order.
    pub events: Vec<Value>,
    pub replayed: Replayed,
}

impl Stored {
    /// Seq of the first stored event (`game_started` or the first opening roll).
    pub fn first_seq(&self) -> u64 {
        self.events[0]["seq"].as_u64().unwrap_or(0)
    }

    /// Seq of the last stored event.
    pub fn last_seq(&self) -> u64 {
        self.replayed.seq
    }

    /// Whether the game is over (its `game_won` is stored).
    pub fn finished(&self) -> bool {
        self.replayed.game.outcome().is_some()
    }

    /// How many `timed_out` engine events the log holds.
    pub fn timeouts(&self) -> usize {
        self.engine_events("timed_out")
    }

    /// How many engine events of type `kind` the log holds.
    pub fn engine_events(&self, kind: &str) -> usize {
        self.events
            .iter()
            .filter(|e| e["event"]["type"] == "game" && e["event"]["event"]["type"] == kind)
            .count()
    }

    /// Actions each colour took itself (rolls and plays; not timeouts or abandonments).
    pub fn own_actions(&self) -> BTreeMap<Colour, u64> {
        let mut n = BTreeMap::new();
        for (colour, action) in &self.replayed.record.actions {
            if !matches!(action, Action::Timeout | Action::Abandon { .. }) {
                *n.entry(*colour).or_default() += 1;
            }
        }
        n
    }
}

/// Reads game `id` from the database and checks it is sound: seqs gap-free, the log
/// replays through the engine to the same engine events, the fair-dice throws are
/// numbered 0, 1, 2… once each.
pub async fn stored_game(cluster: &Cluster, id: &str) -> Stored {
    let events = cluster.stored_events(id).await;
    assert!(!events.is_empty(), "game {id} has no stored events");
    let log: Vec<LoggedEvent> = events
        .iter()
        .map(|e| LoggedEvent {
            seq: e["seq"].as_u64().expect("seq"),
            at_ms: e["at_ms"].as_i64().expect("at_ms"),
            event: serde_json::from_value::<RoomEvent>(e["event"].clone())
                .unwrap_or_else(|err| panic!("game {id}: stored event {e} is no RoomEvent: {err}")),
            positioned: e["positioned"] == true,
        })
        .collect();
    // As on the wire from here on: `{"seq","at_ms","event"}` (the mark is in `log`).
    let events: Vec<Value> = events
        .into_iter()
        .map(|mut e| {
            if let Some(o) = e.as_object_mut() {
                o.remove("positioned");
            }
            e
        })
        .collect();
    let first = log[0].seq;
    for (k, e) in log.iter().enumerate() {
        assert_eq!(e.seq, first + k as u64, "game {id}: stored seqs have a gap");
    }
    let replayed =
        replay(&log).unwrap_or_else(|e| panic!("game {id}: the stored log does not replay: {e}"));
    let (_, again) = replayed
        .record
        .replay()
        .unwrap_or_else(|e| panic!("game {id}: the engine record does not replay: {e}"));
    assert_eq!(
        again, replayed.engine_events,
        "game {id}: replaying gives the stored engine events"
    );
    // The start and every action end a batch whose frame carried the position: each is
    // marked in PostgreSQL, so a takeover's history carries the positions again.
    assert_eq!(
        replayed.positions.len(),
        replayed.record.actions.len() + 1,
        "game {id}: the start and each action are marked as positioned"
    );
    let throws: Vec<u64> = events
        .iter()
        .filter(|e| e["event"]["type"] == "game" && e["event"]["event"]["type"] == "dice_rolled")
        .filter_map(|e| e["event"]["throw"].as_u64())
        .collect();
    let opening: Vec<u64> = events
        .iter()
        .filter(|e| e["event"]["type"] == "opening_roll")
        .flat_map(|e| {
            e["event"]["rolls"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter_map(|r| r["throw"].as_u64())
        })
        .collect();
    let all: Vec<u64> = opening.into_iter().chain(throws).collect();
    let expected: Vec<u64> = (0..all.len() as u64).collect();
    assert_eq!(
        all, expected,
        "game {id}: throw numbers once each, in order (no throw doubled)"
    );
    Stored {
        id: id.to_owned(),
        events,
        replayed,
    }
}

/// Every game event each client saw is stored, at the same seq, identical (seq, time and
/// event); with `complete`, each client saw every stored event after its first `welcome`
/// (but for one whose game ended while it was away: it saw a prefix).
pub fn clients_match_log(stored: &Stored, players: &[&Player], complete: bool) {
    let by_seq: BTreeMap<u64, &Value> = stored
        .events
        .iter()
        .map(|e| (e["seq"].as_u64().unwrap_or(0), e))
        .collect();
    let first = stored.first_seq();
    for p in players {
        let seen: Vec<(&u64, &Value)> = p.events.range(first..).collect();
        for (seq, frame) in &seen {
            let Some(stored_frame) = by_seq.get(seq) else {
                panic!(
                    "game {}: {} saw event {seq} that is not stored (last stored {}): {frame}",
                    stored.id,
                    p.name,
                    stored.last_seq()
                );
            };
            assert_eq!(
                *frame, *stored_frame,
                "game {}: {} saw event {seq} other than the stored one",
                stored.id, p.name
            );
        }
        if complete && p.snapshots == 0 && !p.ended_away {
            let seqs: Vec<u64> = seen.iter().map(|(s, _)| **s).collect();
            // From its first welcome on (a spectator may come after the start).
            let from = first.max(p.joined_seq + 1);
            let all: Vec<u64> = (from..=stored.last_seq()).collect();
            assert_eq!(
                seqs, all,
                "game {}: {} saw every stored event",
                stored.id, p.name
            );
        }
    }
}

/// Every acknowledged roll or play is in the log (its `ok` seq is stored and was seen by
/// the player, as stored), and each colour's own actions in the log lie between what was
/// acknowledged and what was sent (nothing lost, nothing applied twice).
pub fn actions_accounted(stored: &Stored, players: &[&Player]) {
    let own = stored.own_actions();
    for p in players {
        let Some(colour) = p.colour.as_deref() else {
            continue;
        };
        let colour: Colour = colour.parse().expect("colour");
        for seq in &p.acks {
            assert!(
                *seq <= stored.last_seq(),
                "game {}: {}'s action acknowledged at seq {seq} is lost (last stored {})",
                stored.id,
                p.name,
                stored.last_seq()
            );
        }
        let applied = own.get(&colour).copied().unwrap_or(0);
        let acked = p.acks.len() as u64;
        assert!(
            acked <= applied && applied <= p.sent,
            "game {}: {} ({colour:?}) sent {} actions, {acked} acknowledged, {applied} in the log",
            stored.id,
            p.name,
            p.sent
        );
    }
}

/// All of the above for `room`'s latest game, with `players` its clients. Returns the
/// stored game.
pub async fn check_game(
    cluster: &Cluster,
    room: &str,
    players: &[&Player],
    complete: bool,
) -> Stored {
    let games = cluster.games_of(room).await;
    let id = games
        .last()
        .unwrap_or_else(|| panic!("room {room} has no stored game"));
    let stored = stored_game(cluster, id).await;
    clients_match_log(&stored, players, complete);
    actions_accounted(&stored, players);
    stored
}

/// What the clients went through, summed: reconnections, refused resumes, lost replies
/// (re-prompted or unanswered), slow replies, errors by code.
pub fn clients_summary<'a>(players: impl IntoIterator<Item = &'a Player>) -> String {
    let (mut reconnects, mut refusals, mut reprompts, mut unanswered, mut slow) = (0, 0, 0, 0, 0);
    let mut errors: BTreeMap<String, usize> = BTreeMap::new();
    for p in players {
        reconnects += p.sessions.len() - 1;
        refusals += p.resume_refusals;
        reprompts += p.reprompts;
        unanswered += p.unanswered;
        slow += p.slow.len();
        for e in &p.errors {
            let code = e["code"].as_str().unwrap_or("?").to_owned();
            *errors.entry(code).or_default() += 1;
        }
    }
    format!(
        "{reconnects} reconnections ({refusals} resumes refused first), replies lost: \
         {reprompts} re-prompted + {unanswered} unanswered, {slow} replies over 1 s, errors {errors:?}"
    )
}
