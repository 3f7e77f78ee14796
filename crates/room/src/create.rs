//! A room comes to life: the one constructor's input (`room_init`, shared with the
//! restore) and [`create`], which stores a new room (with its first lease in cluster
//! mode), spawns its actor and registers it. In cluster mode the room's subject is served
//! (by the actor's start) before the creation is answered, so a first join through any
//! other node finds it.

use crate::actor::{write_failed, Actor, Unstarted};
use crate::ids;
use crate::rooms::Rooms;
use crate::{now_ms, Ms, Refusal};
use parchis_protocol::{ErrorCode, RoomSettings};
use parchis_room_core::core::{Core, RoomInit};
use parchis_room_core::dice::DiceSource;
use parchis_room_core::persist;
use parchis_store::StoreError;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use tracing::{info, warn};

/// The room's bot randomness (never the dice): seeded from the configuration in tests,
/// from the OS otherwise.
pub(crate) fn room_rng(rooms: &Rooms) -> ChaCha20Rng {
    match rooms.config().dice.dice_seed {
        Some(seed) => ChaCha20Rng::seed_from_u64(seed.wrapping_add(rooms.next_id())),
        None => ChaCha20Rng::from_entropy(),
    }
}

/// The one constructor's input for a room of `code` with `settings`.
pub(crate) fn room_init(
    rooms: &Rooms,
    code: &str,
    settings: RoomSettings,
    rules: parchis_engine::RuleSet,
    created_at_ms: Ms,
    dice: DiceSource,
) -> RoomInit {
    RoomInit {
        code: code.to_owned(),
        settings,
        rules,
        created_at_ms,
        rng: room_rng(rooms),
        dice,
        seed_rng: ChaCha20Rng::from_entropy(),
        id_rng: ChaCha20Rng::from_entropy(),
        // Already within half a connection's outbound queue ([`crate::RoomsConfig`]).
        history_len: rooms.config().history_len,
        now: now_ms(),
        limits: rooms.config().limits,
        observer: rooms.observer().clone(),
    }
}

/// Creates a room: stores it, spawns its actor on the server's tracker and registers its
/// handle. Returns the room code.
///
/// # Errors
/// `bad_request` for settings that name no rule set; `internal` if no code could be
/// allocated, the server is full, or the store fails.
pub async fn create(rooms: &Rooms, settings: RoomSettings) -> Result<String, Refusal> {
    let rules = settings
        .rules()
        .map_err(|m| Refusal::new(ErrorCode::BadRequest, m))?;
    for _ in 0..4 {
        let code = ids::room_code();
        if rooms.room(&code).is_some() {
            continue;
        }
        let created_at_ms = now_ms();
        let record = persist::room_record(&code, &settings, created_at_ms);
        // Cluster mode: the room and its first lease in one transaction, so that no
        // sweeper claims the new room before its creator owns it.
        let stored = rooms.host().store_new(rooms, &record).await;
        let fence = match stored {
            Ok(fence) => fence,
            Err(StoreError::RoomExists(_)) => continue,
            Err(e) => {
                warn!(
                    room = %code,
                    error = %e,
                    failure = ?e.write_failure(),
                    "store failed creating a room"
                );
                // The database out of reach: `room_unavailable`, try again in a moment.
                return Err(write_failed(&e).refusal());
            }
        };
        run_new(rooms, &code, settings, rules, created_at_ms, fence, None).await?;
        return Ok(code);
    }
    Err(Refusal::new(
        ErrorCode::Internal,
        "could not allocate a room code",
    ))
}

/// Runs a room just stored with `fence` (by [`Host::store_new`](crate::Host::store_new)):
/// draws its dice, builds its core (a director's room with `director`'s reservations),
/// starts its actor and has its lease renewed.
///
/// # Errors
/// `internal` without dice, `server_full`, or `internal` when the cluster's bus did not
/// take the room (its lease is then retired).
pub(crate) async fn run_new(
    rooms: &Rooms,
    code: &str,
    settings: RoomSettings,
    rules: parchis_engine::RuleSet,
    created_at_ms: Ms,
    fence: Option<parchis_store::Fence>,
    director: Option<parchis_room_core::reserved::DirectorRoom>,
) -> Result<(), Refusal> {
    // The server seed comes from the OS here, at the edge; the core gets it as a value.
    let dice = DiceSource::draw(&rooms.config().dice, rooms.next_id()).map_err(|e| {
        tracing::warn!(room = %code, error = %e, "no dice for the room");
        Refusal::code(ErrorCode::Internal)
    })?;
    let mut core = Core::new(room_init(rooms, code, settings, rules, created_at_ms, dice));
    if let Some(director) = director {
        core.set_director(director);
    }
    if let Err(why) = Actor::new(rooms, core)
        .with_fence(fence.clone())
        .start()
        .await
    {
        // Never to run: a sweeper must not bring back a lobby nobody got the code of.
        if let Some(fence) = &fence {
            rooms.host().never_ran(rooms, fence).await;
        }
        return Err(match why {
            Unstarted::Full => Refusal::new(ErrorCode::ServerFull, "too many rooms"),
            Unstarted::Unserved => Refusal::new(
                ErrorCode::Internal,
                "the cluster's message bus did not take the room",
            ),
        });
    }
    match &fence {
        Some(f) => {
            // Renewed from now on. (A claimed or adopted room is held by the takeover
            // from its acquisition on, and not again here: it may have been lost
            // while it was restored.)
            rooms.host().created(rooms, f);
            info!(room = %code, node = %f.node, epoch = f.epoch, "room created");
        }
        None => info!(room = %code, "room created"),
    }
    Ok(())
}
