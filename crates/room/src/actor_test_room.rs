//! Test fixtures shared by the actor's and the ownership's unit tests: a test connection's
//! link and an actor (not running: the test drives it) of a fresh lobby over a memory
//! store.

use super::Actor;
use crate::create::room_init;
use crate::rooms::RoomsConfig;
use crate::Frame;
use crate::SingleNode;
use crate::{now_ms, ConnId, ConnLink, Kick, Unwritten};
use parchis_protocol::RoomSettings;
use parchis_room_core::core::Core;
use parchis_room_core::persist;
use parchis_store::MemoryStore;
use std::sync::Arc;
use tokio::sync::mpsc;

/// A link for connection `id` that queues into `tx`, with a 1 MiB unwritten bound.
pub(crate) fn link(id: ConnId, tx: &mpsc::Sender<Frame>) -> ConnLink {
    ConnLink {
        id,
        tx: tx.clone(),
        kick: Kick::default(),
        unwritten: Unwritten::default(),
        max_unwritten: 1 << 20,
        mutes: Default::default(),
    }
}

/// An actor of room `code`, a lobby with the default settings, stored in a fresh memory
/// store.
pub(crate) async fn lobby_actor(code: &str) -> Actor {
    let store: Arc<dyn parchis_store::Store> = Arc::new(MemoryStore::new());
    let rooms = SingleNode::rooms(RoomsConfig::default(), store.clone());
    let settings = RoomSettings::default();
    let rules = settings.rules().expect("rules");
    store
        .create_room(&persist::room_record(code, &settings, now_ms()))
        .await
        .expect("room record");
    let dice = parchis_room_core::dice::DiceSource::draw(&rooms.config().dice, 1).expect("dice");
    let init = room_init(&rooms, code, settings, rules, now_ms(), dice);
    Actor::new(&rooms, Core::new(init))
}
