//! The core's effects performed on the rooms (those of this process, or in a cluster
//! those of the node running each: `Rooms::direct` and `close_room` route them there),
//! each idempotent at the room: a room is created under its deterministic code if absent, a start, pause, resume
//! or expulsion asked twice answers the same, a close of a room that no longer runs is a
//! close. What an effect learns (the room opened, the game started, the room closed) comes
//! back as the core's next [`Input`]s; a failed effect is logged and owed again (the
//! actor's sweep performs `outstanding()`).

use parchis_protocol::RoomSettings;
use parchis_room::Rooms;
use parchis_room_core::reserved::{DirectorCmd, DirectorRoom, Reservation};
use parchis_tournament::{Effect, Input, RoomSpec};
use tracing::{info, warn};
use uuid::Uuid;

/// The room settings of a match (`public: false`: a match's room is not offered to
/// strangers; spectators welcome, `spectator_delay_throws` behind).
pub fn room_settings(spec: &RoomSpec) -> RoomSettings {
    let think = spec
        .seats
        .iter()
        .filter_map(|s| s.bot.map(|b| b.think_ms))
        .max();
    RoomSettings {
        preset: spec.preset.clone(),
        seats: u8::try_from(spec.seats.len()).unwrap_or(4),
        turn_clock_secs: spec.turn_clock_secs,
        public: false,
        spectators: true,
        bot_think_ms: think.unwrap_or(
            RoomSettings::default()
                .bot_think_ms
                .min(spec.turn_clock_secs.saturating_mul(1000).saturating_sub(1)),
        ),
        spectator_delay_throws: u8::try_from(spec.spectator_delay_throws).unwrap_or(u8::MAX),
        ..RoomSettings::default()
    }
}

/// The reservations of a match's room: each account's uuid as its key, bots by level.
pub fn reservations(spec: &RoomSpec) -> DirectorRoom {
    DirectorRoom {
        reserved: spec
            .seats
            .iter()
            .map(|s| Reservation {
                colour: s.colour,
                reserved_for: s.account.map(|a| a.to_string()).unwrap_or_default(),
                name: s.name.clone(),
                bot: s.bot.map(|b| b.level),
                // Read by `Rooms::open_director_room` from the store (issue 26).
                rating: None,
            })
            .collect(),
        // The director starts the room itself (`StartRoom`) once it learns every entrant
        // is seated, so that a paused match is never started.
        start_when_seated: false,
    }
}

/// Performs `effect` for tournament `tournament` on `rooms`; returns the inputs it
/// learnt. `Publish` is the actor's own (it returns nothing here).
pub async fn perform(rooms: &Rooms, tournament: Uuid, effect: &Effect) -> Vec<Input> {
    match effect {
        Effect::CreateRoom(spec) => {
            let opened = rooms
                .open_director_room(&spec.room, room_settings(spec), reservations(spec))
                .await;
            match opened {
                Ok(how) => {
                    info!(%tournament, r#match = %spec.id, room = %spec.room, ?how, "match room open");
                    vec![Input::RoomOpened {
                        id: spec.id,
                        room: spec.room.clone(),
                    }]
                }
                Err(e) => {
                    warn!(%tournament, r#match = %spec.id, room = %spec.room, error = %e.message, "match room not created: owed");
                    Vec::new()
                }
            }
        }
        Effect::StartRoom { id, room, absent } => {
            let cmd = DirectorCmd::Start {
                absent: absent.clone(),
            };
            match rooms.direct(room, cmd).await {
                Ok(answer) => answer
                    .game_id
                    .map(|game_id| Input::GameStarted { id: *id, game_id })
                    .into_iter()
                    .collect(),
                Err(e) => {
                    warn!(%tournament, r#match = %id, %room, error = %e.message, "start refused: owed");
                    Vec::new()
                }
            }
        }
        Effect::PauseClock { id, room } => {
            direct(rooms, tournament, *id, room, DirectorCmd::PauseClock).await
        }
        Effect::ResumeClock { id, room } => {
            direct(rooms, tournament, *id, room, DirectorCmd::ResumeClock).await
        }
        Effect::Expel { id, room, colours } => {
            let cmd = DirectorCmd::Expel {
                colours: colours.clone(),
            };
            direct(rooms, tournament, *id, room, cmd).await
        }
        Effect::CloseRoom { room } => match rooms.close_room(room).await {
            Ok(_) => vec![Input::RoomClosed { room: room.clone() }],
            Err(e) => {
                warn!(%tournament, %room, error = %e.message, "close failed: owed");
                Vec::new()
            }
        },
        Effect::Publish => Vec::new(),
    }
}

async fn direct(
    rooms: &Rooms,
    tournament: Uuid,
    id: parchis_tournament::MatchId,
    room: &str,
    cmd: DirectorCmd,
) -> Vec<Input> {
    if let Err(e) = rooms.direct(room, cmd.clone()).await {
        warn!(%tournament, r#match = %id, %room, ?cmd, error = %e.message, "director command refused");
    }
    Vec::new()
}
