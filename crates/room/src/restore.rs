//! Restart recovery: a stored room (seats, game log) becomes a live room again through
//! the same constructor as a new one, its game rebuilt by [`resume`] (a packed log from
//! its last snapshot on, `docs/STORAGE.md`).

use crate::actor::Actor;
use crate::create::room_init;
use crate::now_ms;
use crate::rooms::Rooms;
use parchis_room_core::core::Core;
use parchis_room_core::dice::DiceSource;
use parchis_room_core::persist::{self, Unreadable};
use parchis_room_core::replay::{resume, LoggedEvent, ReplayError, Resumed, Snapshot};
use parchis_room_core::throws::{decode_tail, Encoder};
use parchis_room_core::Restored;
use parchis_store::RoomStatus as StoredStatus;
use tracing::{info, Instrument};

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

/// Brings back one stored room after a restart: seats (with their token hashes, so old
/// session tokens `resume`), the game rebuilt by replaying its events through the engine
/// (a packed log's from its last snapshot: the resume history then starts there),
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
    rooms: &Rooms,
    snapshot: &parchis_store::RoomSnapshot,
    fence: Option<parchis_store::Fence>,
) -> Result<Restored, RestoreError> {
    let code = snapshot.room.code.clone();
    // A room that already runs here is not restored a second time: its restore would
    // write (the fresh clock's `turn`) behind the running room's back, and then fail to
    // register, leaving the running room one seq behind its log.
    if rooms.room(&code).is_some() {
        return Err(RestoreError::Register);
    }
    let (settings, rules) = persist::settings_from(&snapshot.room.settings)?;
    let now = now_ms();
    let game = match (&snapshot.game, snapshot.room.status) {
        (Some(record), StoredStatus::Playing) => {
            // Either format: the packed log (issue 28) if the game has one, from its last
            // snapshot with the spectator delay's throws after it; else its rows.
            let delay = u64::from(settings.spectator_delay_throws);
            let (log, from, encoder) = restore_log(snapshot, delay)?;
            let replayed = resume(from.as_ref(), &log)?;
            Some((record, log, replayed, encoder))
        }
        _ => None,
    };
    let dice = restored_dice(rooms, game.as_ref().map(|(r, _, p, _)| (*r, p)))?;
    let mut core = Core::new(room_init(
        rooms,
        &code,
        settings,
        rules,
        snapshot.room.created_at_ms,
        dice,
    ));
    // A tournament director's room keeps its reservations (stored beside the settings).
    if let Some(director) = persist::director_from(&snapshot.room.settings)? {
        core.set_director(director);
    }
    for record in &snapshot.seats {
        core.restore_seat(persist::seat_from(record)?, now);
    }
    crate::seat_ratings::read_ratings(rooms, &mut core).await;
    let Some((record, log, replayed, encoder)) = game else {
        core.lobby_restored();
        info!(room = %code, seats = core.seats().len(), "lobby restored");
        return Actor::new(rooms, core)
            .with_fence(fence)
            .start()
            .await
            .map(|()| Restored::Running)
            .map_err(|_| RestoreError::Register);
    };
    if record.is_finished() {
        return close_finished(rooms, &code, fence.as_ref(), record, now).await;
    }
    core.resume_log(encoder);
    let (restored, effects) = core.restore_game(record.id, &log, replayed, record.deadline_ms, now);
    let mut actor = Actor::new(rooms, core).with_fence(fence);
    let span = tracing::info_span!("room", room = %code, game = %record.id);
    actor.execute(effects).instrument(span).await;
    restore_written(&mut actor)?;
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

/// Closes the room of a restored game that had already ended.
async fn close_finished(
    rooms: &Rooms,
    code: &str,
    fence: Option<&parchis_store::Fence>,
    record: &parchis_store::GameRecord,
    now: crate::Ms,
) -> Result<Restored, RestoreError> {
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
    match rooms.store().write_room(code, fence, write).await {
        Ok(()) => {}
        Err(parchis_store::StoreError::Fenced { .. }) => return Err(RestoreError::Fenced),
        Err(e) => {
            tracing::warn!(room = %code, game = %record.id, error = %e, "store failed closing a finished room")
        }
    }
    info!(room = %code, game = %record.id, "restored game had already ended: room closed");
    Ok(Restored::Over)
}

/// Whether the restore's own writes (the fresh clock's `turn`) went through: not in doubt
/// (the actor rebuilding), fenced (the actor stopping) or failed.
fn restore_written(actor: &mut Actor) -> Result<(), RestoreError> {
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
    Ok(())
}

/// [`restore_log`]'s answer: the events, the snapshot they follow, the encoder.
pub(crate) type RestoreLog = (Vec<LoggedEvent>, Option<Snapshot>, Option<Encoder>);

/// A stored game's log as a restore reads it: a packed log from its last snapshot
/// followed by at least `min_throws` throws, the events after it and that snapshot
/// ([`decode_tail`]: only those events are replayed; the whole log when it has none), or
/// the JSON rows whole; with the encoder that packs what follows (`None` for rows).
pub(crate) fn restore_log(
    snapshot: &parchis_store::RoomSnapshot,
    min_throws: u64,
) -> Result<RestoreLog, RestoreError> {
    match snapshot.log.as_ref() {
        Some(log) => {
            let tail = decode_tail(&log.bytes, min_throws)
                .map_err(|e| RestoreError::Unreadable(format!("packed game log: {e}")))?;
            Ok((tail.events, tail.from, Some(tail.encoder)))
        }
        None => Ok((persist::events_from(&snapshot.events)?, None, None)),
    }
}

/// The dice of a restored room (`docs/FAIR_DICE.md`). A game's dice come back from its
/// stored seeds at the throw its log reached, so the next throw is the one it would have
/// been without the restart; a game stored before fair dice gets new seeds marked `test`.
/// A lobby draws a new server seed (nothing was thrown yet; its commitment changes and
/// the client seeds given before the restart are forgotten).
fn restored_dice(
    rooms: &Rooms,
    game: Option<(&parchis_store::GameRecord, &Resumed)>,
) -> Result<DiceSource, RestoreError> {
    let unreadable =
        |e: parchis_room_core::dice::DiceError| RestoreError::Unreadable(format!("dice: {e}"));
    let Some((record, replayed)) = game else {
        return DiceSource::draw(&rooms.config().dice, rooms.next_id()).map_err(unreadable);
    };
    let per_throw = usize::from(replayed.game.rules().dice.clamp(1, 2));
    let colours = &replayed.colours;
    match &record.dice {
        Some(stored) => DiceSource::restored(stored, per_throw, replayed.next_throw),
        None => DiceSource::legacy(&rooms.config().dice, rooms.next_id(), colours, per_throw),
    }
    .map_err(unreadable)
}
