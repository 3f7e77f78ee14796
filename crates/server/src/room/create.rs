//! A room comes to life: the one constructor's input ([`room_init`], shared with the
//! restore) and [`create`], which stores a new room (with its first lease in cluster
//! mode), spawns its actor and registers it. In cluster mode the room's subject is served
//! (by the actor's start) before the creation is answered, so a first join through any
//! other node finds it.

use super::actor::{Actor, Unstarted};
use super::core::{Core, RoomInit};
use super::{now_ms, persist, Ms, Refusal};
use crate::cluster::ownership::lease;
use crate::dice::DiceSource;
use crate::ids;
use crate::state::AppState;
use parchis_protocol::{ErrorCode, RoomSettings};
use parchis_store::StoreError;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use tracing::{info, warn};

/// The room's bot randomness (never the dice): seeded from the configuration in tests,
/// from the OS otherwise.
pub(super) fn room_rng(state: &AppState) -> ChaCha20Rng {
    match state.config().dice_seed {
        Some(seed) => ChaCha20Rng::seed_from_u64(seed.wrapping_add(state.next_id())),
        None => ChaCha20Rng::from_entropy(),
    }
}

/// The one constructor's input for a room of `code` with `settings`.
pub(super) fn room_init(
    state: &AppState,
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
        rng: room_rng(state),
        dice,
        seed_rng: ChaCha20Rng::from_entropy(),
        id_rng: ChaCha20Rng::from_entropy(),
        // Replayed to a resuming client only while it fits well within its outbound
        // queue: a reload resumes from seq 0, and a long game's history would overflow
        // the queue and drop the connection as a slow consumer, again and again.
        history_len: state
            .config()
            .history
            .min(state.config().outbound_queue / 2),
        now: now_ms(),
        limits: super::core::RoomLimits::of(state.config()),
    }
}

/// Creates a room: stores it, spawns its actor on the server's tracker and registers its
/// handle. Returns the room code.
///
/// # Errors
/// `bad_request` for settings that name no rule set; `internal` if no code could be
/// allocated, the server is full, or the store fails.
pub async fn create(state: &AppState, settings: RoomSettings) -> Result<String, Refusal> {
    let rules = settings
        .rules()
        .map_err(|m| Refusal::new(ErrorCode::BadRequest, m))?;
    for _ in 0..4 {
        let code = ids::room_code();
        if state.room(&code).is_some() {
            continue;
        }
        let created_at_ms = now_ms();
        let record = persist::room_record(&code, &settings, created_at_ms);
        // Cluster mode: the room and its first lease in one transaction, so that no
        // sweeper claims the new room before its creator owns it.
        let stored = match state.cluster() {
            None => state.store().create_room(&record).await.map(|()| None),
            Some(c) => {
                let ttl = crate::cluster::ownership::ttl_ms(c);
                let node = c.node().as_str();
                let stored = state.store().create_room_leased(&record, node, ttl).await;
                if stored.is_ok() {
                    // Looked up before it existed (a guess): found from now on.
                    c.routing.unknown.forget(&code);
                }
                stored.map(Some)
            }
        };
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
                return Err(super::effect::WriteFailed::from(&e).refusal());
            }
        };
        // The server seed comes from the OS here, at the edge; the core gets it as a value.
        let dice = DiceSource::draw(state.config(), state.next_id()).map_err(|e| {
            tracing::warn!(room = %code, error = %e, "no dice for the room");
            Refusal::code(ErrorCode::Internal)
        })?;
        let core = Core::new(room_init(
            state,
            &code,
            settings,
            rules,
            created_at_ms,
            dice,
        ));
        if let Err(why) = Actor::new(state, core)
            .with_fence(fence.clone())
            .start()
            .await
        {
            // Never to run: a sweeper must not bring back a lobby nobody got the code of.
            if let Some(fence) = &fence {
                lease::retire(state, fence).await;
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
                if let Some(own) = crate::cluster::ownership::ownership(state) {
                    own.hold(f.clone());
                }
                info!(room = %code, node = %f.node, epoch = f.epoch, "room created");
            }
            None => info!(room = %code, "room created"),
        }
        return Ok(code);
    }
    Err(Refusal::new(
        ErrorCode::Internal,
        "could not allocate a room code",
    ))
}
