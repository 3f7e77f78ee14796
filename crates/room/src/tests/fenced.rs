//! The room actor under a fence, over the memory store (which keeps leases like
//! PostgreSQL): a write refused because another node acquired the lease stops the room
//! at once, and nothing of the refused step is stored or answered as done.

use crate::actor::test_room::link;
use crate::{ConnLink, Member, Refusal, RoomCmd, RoomHandle, Rooms, RoomsConfig, SingleNode};
use parchis_engine::Colour;
use parchis_protocol::RoomSettings;
use parchis_room_core::persist;
use parchis_store::{Fence, MemoryStore, Store};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;

/// The lobby `code`, created under node a's lease of 1 ms (expired, so claimable by
/// another node, as soon as the test sleeps) and running on a fresh state over a memory
/// store. Returns the store, the state and a's fence.
async fn a_lobby_under_an_expiring_lease(code: &str) -> (Arc<MemoryStore>, Rooms, Fence) {
    let store = Arc::new(MemoryStore::new());
    let dyn_store: Arc<dyn Store> = store.clone();
    let state = SingleNode::rooms(RoomsConfig::default(), dyn_store);
    let record = persist::room_record(code, &RoomSettings::default(), crate::now_ms());
    let fence = store
        .create_room_leased(&record, "a", 1)
        .await
        .expect("room and lease");
    let snapshot = store.get_room(code).await.expect("read").expect("stored");
    let restored = crate::restore(&state, &snapshot, Some(fence.clone()))
        .await
        .expect("the lobby runs");
    assert_eq!(restored, crate::Restored::Running);
    (store, state, fence)
}

/// Node b acquires the room's lease once a's has expired (20 ms on); b's fence.
async fn b_takes_the_lease(store: &MemoryStore, code: &str) -> Fence {
    tokio::time::sleep(Duration::from_millis(20)).await;
    store
        .acquire_lease(code, "b", 60_000)
        .await
        .expect("acquire")
        .expect("the expired lease is taken")
}

/// Sends the room a join of "ann" (request 1) for `colour` on `link`; the join's answer.
async fn join(
    handle: &RoomHandle,
    link: ConnLink,
    colour: Option<Colour>,
) -> oneshot::Receiver<Result<Member, Refusal>> {
    let (reply, answer) = oneshot::channel();
    handle
        .sender()
        .send(RoomCmd::Join {
            link,
            req: 1,
            name: "ann".into(),
            colour,
            client_seed: None,
            account: None,
            reply,
        })
        .await
        .expect("the room reads");
    answer
}

#[tokio::test]
async fn a_fenced_join_stops_the_room_and_stores_nothing() {
    let code = "FENCED01";
    let (store, state, fence) = a_lobby_under_an_expiring_lease(code).await;
    let thief = b_takes_the_lease(&store, code).await;
    assert_eq!(thief.epoch, fence.epoch + 1);

    let (tx, _frames) = tokio::sync::mpsc::channel(16);
    let handle = state.room(code).expect("registered");
    let answer = join(&handle, link(1, &tx), None).await;
    drop(handle);
    let refused = answer.await.expect("answered").expect_err("not seated");
    assert!(refused.message.contains("moved"), "{refused:?}");
    for _ in 0..100 {
        if state.room(code).is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(state.room(code).is_none(), "the room stopped here");
    let stored = store.get_room(code).await.expect("read").expect("stored");
    assert!(stored.seats.is_empty(), "nothing of the join stored");
    let lease = store.lease(code).await.expect("read").expect("lease");
    assert_eq!((lease.owner.as_str(), lease.epoch), ("b", thief.epoch));
}

#[tokio::test]
async fn a_command_whose_write_is_fenced_gets_room_unavailable_once() {
    let code = "FENCED02";
    let (store, state, _) = a_lobby_under_an_expiring_lease(code).await;
    let handle = state.room(code).expect("registered");
    let (tx, mut frames) = tokio::sync::mpsc::channel(64);
    let answer = join(&handle, link(1, &tx), Some(Colour::Red)).await;
    // The lease is not taken yet: the join is stored under the first fence.
    let member = answer.await.expect("answered").expect("seated");
    let mut seq = 0;
    while let Ok(frame) = frames.try_recv() {
        let v: serde_json::Value = serde_json::from_str(&frame).expect("JSON frame");
        seq = seq.max(v["seq"].as_u64().unwrap_or(0));
    }
    b_takes_the_lease(&store, code).await;

    handle
        .sender()
        .send(RoomCmd::Command {
            conn: 1,
            member,
            req: 2,
            seq,
            cmd: crate::SeatCmd::ChooseColour(Colour::Yellow),
            received: tokio::time::Instant::now(),
        })
        .await
        .expect("the room reads");
    drop(handle);
    let mut replies = Vec::new();
    // Until the room drops its links (or, bounded, the frames stop coming).
    while let Ok(Some(frame)) = tokio::time::timeout(Duration::from_secs(5), frames.recv()).await {
        let v: serde_json::Value = serde_json::from_str(&frame).expect("JSON frame");
        if v["req"] == 2 {
            replies.push(v);
        }
    }
    assert_eq!(replies.len(), 1, "one reply: {replies:?}");
    assert_eq!(replies[0]["type"], "error", "{replies:?}");
    assert_eq!(replies[0]["code"], "room_unavailable", "{replies:?}");
    assert!(state.room(code).is_none(), "the room stopped here");
    let stored = store.get_room(code).await.expect("read").expect("stored");
    let colours: Vec<&str> = stored.seats.iter().map(|s| s.colour.as_str()).collect();
    assert_eq!(colours, ["red"], "the refused colour change is not stored");
}
