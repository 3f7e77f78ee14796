//! Restart recovery: a stored room (seats, game log) becomes a live room again through
//! the same constructor as a new one, its game rebuilt by [`replay`](super::replay()).

use super::actor::Actor;
use super::bots::SeatBot;
use super::core::{Core, Effect, EventsCommit, Seat, Then};
use super::create::room_init;
use super::persist::{self, StoredSeat, Unreadable, Write};
use super::replay::{replay, LoggedEvent, ReplayError, Replayed};
use super::{encode, now_ms, Ms};
use crate::dice::DiceSource;
use crate::state::AppState;
use parchis_engine::SeatStatus;
use parchis_protocol::{RoomEvent, RoomStatus};
use parchis_store::RoomStatus as StoredStatus;
use rand::Rng;
use std::collections::VecDeque;
use tracing::{info, Instrument};
use uuid::Uuid;

/// Why a stored room could not be brought back. The room then stays closed: it is not
/// registered, and its stored rows are left untouched for an operator to inspect.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// A stored value does not parse (settings, colour, preset, event JSON).
    #[error("stored data unreadable: {0}")]
    Unreadable(String),
    /// Replaying the stored actions through the engine failed or produced other events.
    #[error("replay diverges from the stored events: {0}")]
    Diverged(String),
    /// The room code is taken or the server is full, or (cluster mode) its subject could
    /// not be served.
    #[error("could not register the room")]
    Register,
    /// A write of the restore failed in the store (nothing of it was written).
    #[error("store: {0}")]
    Store(String),
    /// Cluster mode: a write of the restore was refused by the room's fence (another node
    /// acquired the room meanwhile).
    #[error("fenced: another node owns the room")]
    Fenced,
}

impl From<Unreadable> for RestoreError {
    fn from(e: Unreadable) -> Self {
        RestoreError::Unreadable(e.to_string())
    }
}

impl From<ReplayError> for RestoreError {
    fn from(e: ReplayError) -> Self {
        RestoreError::Diverged(e.to_string())
    }
}

/// What became of a restored room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restored {
    /// It runs on.
    Running,
    /// It had already ended (a crash between its last event and the room's status, in a
    /// store written before game ends were one transaction): the room closes.
    Over,
}

impl Core {
    /// Puts back a stored seat: disconnected, with a fresh grace period (bots need none).
    pub fn restore_seat(&mut self, stored: StoredSeat, now: Ms) {
        let grace = i64::from(self.settings.disconnect_grace_secs) * 1000;
        let bot = stored.bot.map(|level| SeatBot::new(level, self.rng.gen()));
        self.seats.push(Seat {
            id: self.next_seat_id,
            colour: stored.colour,
            name: stored.name,
            // A bot seat's stored hash, if any, is the person it took over from: it reads
            // the result once the room is gone, but never resumes the seat.
            token_hash: if bot.is_some() {
                String::new()
            } else {
                stored.token_hash
            },
            creator: stored.creator,
            joined_at_ms: stored.joined_at_ms,
            conn: None,
            reattached: false,
            grace_until: bot.is_none().then_some(now + grace),
            abandoned: false,
            bot,
            client_seed: None,
            stale_seqs: false,
        });
        self.next_seat_id += 1;
        self.idle_since = None;
    }

    /// The stored seats were put back without a game: this lobby's event seq starts
    /// again at 0 (lobby events are not stored), so the seqs its players' clients saw
    /// before name other events here. Each restored seat's next `resume` gets a snapshot
    /// whatever its `last_seq`, and reattaches from before are refused (their clients
    /// resume or watch again).
    pub fn lobby_restored(&mut self) {
        self.lobby_restored = true;
        for seat in &mut self.seats {
            seat.stale_seqs = true;
        }
    }

    /// Puts back a replayed game (`log` is the stored log it was replayed from;
    /// `stored_deadline` the games table's copy). The player to act gets a fresh full
    /// clock from `now` (R-CLOCK: nobody loses a throw because a server died or a room
    /// moved, however little of the old clock was left, and every seat comes back
    /// disconnected), announced by a new `turn` event (the returned effects store it
    /// first); a stored deadline at least that far ahead is kept as it is.
    pub fn restore_game(
        &mut self,
        id: Uuid,
        log: &[LoggedEvent],
        replayed: Replayed,
        stored_deadline: Option<Ms>,
        now: Ms,
    ) -> (Restored, Vec<Effect>) {
        let game = replayed.game;
        // The game's own rule set (from its `game_started` position) is authoritative.
        self.rules = *game.rules();
        for seat in &mut self.seats {
            if game.seat(seat.colour) != SeatStatus::Playing {
                seat.abandoned = true;
                seat.grace_until = None;
            }
        }
        self.seq = replayed.seq;
        self.history = self.frames(log, &replayed.positions);
        self.game_id = Some(id);
        self.game = Some(game);
        if let Some(outcome) = game.outcome() {
            self.status = RoomStatus::Finished;
            self.deadline = None;
            for seat in &mut self.seats {
                seat.grace_until = None;
            }
            let end = persist::game_end(id, &self.code, self.seq, Vec::new(), &outcome, now);
            let reason = persist::reason_text(&outcome);
            let preset = self.settings.preset.clone();
            crate::observe::game_finished(&self.code, id, &preset, reason, Some(outcome.winner));
            return (
                Restored::Over,
                vec![Effect::Store(Write::End(Box::new(end)))],
            );
        }
        self.status = RoomStatus::Playing;
        // The last `turn` event is authoritative (it is written with the action); the
        // games table's column is a convenience copy that may lag behind it.
        let fresh = self.fresh_deadline(now);
        match replayed.last_turn_deadline.or(stored_deadline) {
            Some(ms) if ms >= fresh => {
                self.deadline = Some(ms);
                (Restored::Running, Vec::new())
            }
            _ => {
                // Time the server was down (or the room had no owner) is not held against
                // the player to act, nor is the time it takes them to reconnect: a fresh
                // full clock, however much of the old one was left.
                let d = fresh;
                let turn = RoomEvent::Turn {
                    colour: game.turn(),
                    deadline_ms: d,
                };
                self.stage_events(EventsCommit {
                    game: None,
                    events: vec![turn],
                    at_ms: now,
                    deadline: Some(d),
                    turn: false,
                    action: None,
                    thrown: false,
                    then: Then::Nothing,
                });
                let mut effects = std::mem::take(&mut self.out);
                effects.insert(
                    0,
                    Effect::Store(Write::SetDeadline {
                        game_id: id,
                        deadline_ms: Some(d),
                    }),
                );
                (Restored::Running, effects)
            }
        }
    }

    /// The last `history_len` events of `log` as the frames sent for them: a positioned
    /// event's frame carries the game `positions` (from [`replay`]) has for its seq, as the
    /// live frame did; a log written before positioned events were marked has none.
    fn frames(
        &self,
        log: &[LoggedEvent],
        positions: &[(u64, parchis_engine::Game)],
    ) -> VecDeque<(u64, std::sync::Arc<str>)> {
        let skip = log.len().saturating_sub(self.history_len);
        log[skip..]
            .iter()
            .map(|e| {
                let after = positions
                    .binary_search_by_key(&e.seq, |(seq, _)| *seq)
                    .ok()
                    .map(|i| &positions[i].1);
                let frame = encode(&crate::frames::event_message(
                    &self.code,
                    e.seq,
                    e.at_ms,
                    e.event.clone(),
                    after,
                ));
                (e.seq, frame)
            })
            .collect()
    }
}

/// Brings back one stored room after a restart: seats (with their token hashes, so old
/// session tokens `resume`), the game rebuilt by replaying its events through the engine,
/// the event seq counter and the turn clock, then spawns and registers its actor.
///
/// Every seat starts disconnected with a fresh grace period, and the current player gets
/// a fresh full clock from the restore, announced by a new `turn` event (the old clock,
/// passed or not, is not held against them: they may first have to reconnect).
///
/// In cluster mode `fence` is the lease this node acquired for the room (a claim or an
/// adoption): the restored actor writes through it, like every owner
/// (`docs/CLUSTER.md`, "Failover"). `None` on a single node.
///
/// Returns [`Restored::Running`] when the room runs again, [`Restored::Over`] when its
/// game had already ended (the room is closed, nothing registered).
///
/// # Errors
/// [`RestoreError`] when the stored rows do not parse or the replay diverges from the
/// stored events, or a write of the restore fails; the room is then not registered (it
/// stays closed).
pub async fn restore(
    state: &AppState,
    snapshot: &parchis_store::RoomSnapshot,
    fence: Option<parchis_store::Fence>,
) -> Result<Restored, RestoreError> {
    let code = snapshot.room.code.clone();
    // A room that already runs here is not restored a second time: its restore would
    // write (the fresh clock's `turn`) behind the running room's back, and then fail to
    // register, leaving the running room one seq behind its log.
    if state.room(&code).is_some() {
        return Err(RestoreError::Register);
    }
    let (settings, rules) = persist::settings_from(&snapshot.room.settings)?;
    let now = now_ms();
    let game = match (&snapshot.game, snapshot.room.status) {
        (Some(record), StoredStatus::Playing) => {
            let log = persist::events_from(&snapshot.events)?;
            let replayed = replay(&log)?;
            Some((record, log, replayed))
        }
        _ => None,
    };
    let dice = restored_dice(state, game.as_ref().map(|(r, l, p)| (*r, l.as_slice(), p)))?;
    let mut core = Core::new(room_init(
        state,
        &code,
        settings,
        rules,
        snapshot.room.created_at_ms,
        dice,
    ));
    for record in &snapshot.seats {
        core.restore_seat(persist::seat_from(record)?, now);
    }
    let Some((record, log, replayed)) = game else {
        core.lobby_restored();
        info!(room = %code, seats = core.seats().len(), "lobby restored");
        return Actor::new(state, core)
            .with_fence(fence)
            .start()
            .await
            .map(|()| Restored::Running)
            .map_err(|_| RestoreError::Register);
    };
    if record.is_finished() {
        // A store written before game ends were one transaction: the result is stored
        // but the room still says playing. Close it.
        let at = record.finished_at_ms.unwrap_or(now);
        let update = parchis_store::RoomStatusUpdate {
            status: StoredStatus::Finished,
            started_at_ms: None,
            finished_at_ms: Some(at),
            updated_at_ms: now,
        };
        let write = parchis_store::RoomWrite::RoomStatus(update);
        match state.store().write_room(&code, fence.as_ref(), write).await {
            Ok(()) => {}
            Err(parchis_store::StoreError::Fenced { .. }) => return Err(RestoreError::Fenced),
            Err(e) => {
                tracing::warn!(room = %code, game = %record.id, error = %e, "store failed closing a finished room")
            }
        }
        info!(room = %code, game = %record.id, "restored game had already ended: room closed");
        return Ok(Restored::Over);
    }
    let (restored, effects) = core.restore_game(record.id, &log, replayed, record.deadline_ms, now);
    let mut actor = Actor::new(state, core).with_fence(fence);
    let span = tracing::info_span!("room", room = %code, game = %record.id);
    actor.execute(effects).instrument(span).await;
    if actor.is_rebuilding() {
        // The fresh clock's `turn` may be stored: this restore's core may be behind.
        return Err(RestoreError::Store(
            "a write of the restore got no answer".into(),
        ));
    }
    if actor.is_stopping() {
        return Err(RestoreError::Fenced);
    }
    if let Some(e) = actor.persist_error.take() {
        return Err(RestoreError::Store(e));
    }
    if let Restored::Over = restored {
        info!(room = %code, game = %record.id, "restored game had already ended: room closed");
        return Ok(Restored::Over);
    }
    let core = actor.core();
    info!(
        room = %code,
        game = %record.id,
        seq = core.seq(),
        deadline_ms = core.deadline(),
        "game restored"
    );
    actor
        .start()
        .await
        .map(|()| Restored::Running)
        .map_err(|_| RestoreError::Register)
}

/// The dice of a restored room (`docs/FAIR_DICE.md`). A game's dice come back from its
/// stored seeds at the throw its log reached, so the next throw is the one it would have
/// been without the restart; a game stored before fair dice gets new seeds marked `test`.
/// A lobby draws a new server seed (nothing was thrown yet; its commitment changes and
/// the client seeds given before the restart are forgotten).
fn restored_dice(
    state: &AppState,
    game: Option<(&parchis_store::GameRecord, &[LoggedEvent], &Replayed)>,
) -> Result<DiceSource, RestoreError> {
    let unreadable = |e: crate::dice::DiceError| RestoreError::Unreadable(format!("dice: {e}"));
    let Some((record, log, replayed)) = game else {
        return DiceSource::draw(state.config(), state.next_id()).map_err(unreadable);
    };
    let (rules, colours, _) = &replayed.start;
    let per_throw = usize::from(rules.dice.clamp(1, 2));
    let events: Vec<RoomEvent> = log.iter().map(|e| e.event.clone()).collect();
    let throws = crate::dice::throws_in(&events);
    match &record.dice {
        Some(stored) => DiceSource::restored(stored, per_throw, throws),
        None => DiceSource::legacy(state.config(), state.next_id(), colours, per_throw),
    }
    .map_err(unreadable)
}
