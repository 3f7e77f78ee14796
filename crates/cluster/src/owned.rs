//! The kinds of actor this node runs under fenced leases: what ownership (renewal, the
//! sweeper's takeover, adoption, drain, a lost lease) needs of an actor, and nothing more.
//! Leases, epochs, fencing and failover are written against [`Owned`]; rooms are the first
//! kind ([`RoomKind`]). A championship's director is leased beside this, not through
//! it: its lease is a row of `tournament_leases` (`room_leases` references `rooms`),
//! handled by `parchis_director::lease` (docs/CLUSTER.md, "Tournaments").
//!
//! The node's kinds are a [`Kinds`]; the lease of code `c` belongs to [`Kinds::of`]`(c)`.
//! Today every `NodeState` builds `Kinds::rooms_only` from its rooms (`state.rs`, and the
//! `ClusterHost`'s per-call `NodeState`): registering a second kind means building the
//! node's `Kinds` with it ([`Kinds::new`]) in that one place.

use futures_util::future::BoxFuture;
use parchis_room::{Rehomed, RoomHandle};
use parchis_room::{RestoreError, Restored, RoomCmd, Rooms};
use parchis_store::Fence;
use std::sync::Arc;
use tokio::sync::oneshot;
use uuid::Uuid;

/// A kind of actor owned by lease. Calls are rare (a takeover, a drain, a lost lease),
/// never per frame.
pub trait Owned: Send + Sync + 'static {
    /// A short name of the kind, for logs (`room`).
    fn kind(&self) -> &'static str;

    /// Whether the lease of `code` is of this kind. The last kind registered in
    /// [`Kinds`] takes every code no other kind claims.
    fn claims(&self, code: &str) -> bool;

    /// Whether an actor of `code` runs on this node now.
    fn is_running(&self, code: &str) -> bool;

    /// Tells the actor of `code` running here, if any, to stop at once without writing
    /// anything (its lease is lost or taken over): it deregisters and its connections
    /// move on.
    fn stop(&self, code: &str, why: &'static str);

    /// Brings the actor of `code` up on this node from the store, its writes fenced by
    /// `fence` (a lease this node just acquired: a sweeper's claim or an adoption); the
    /// outcome says whether it runs, had already ended, or why it did not come up
    /// ([`RestoreError`]: the store failed, the stored state does not read or replay, it
    /// cannot be registered here, or a write was fenced).
    fn restore<'a>(&'a self, code: &'a str, fence: &'a Fence) -> BoxFuture<'a, Brought>;

    /// The codes of the actors of this kind running here.
    fn codes(&self) -> Vec<String>;

    /// Drain: the actor of `code` stops writing between two inputs, deregisters and
    /// releases its lease, and hands back its local connections (to be moved to whoever
    /// adopts it). `None` when it had already ended.
    fn hand_off<'a>(&'a self, code: &'a str) -> BoxFuture<'a, Option<Vec<Rehomed>>>;

    /// How many actors of this kind run here.
    fn count(&self) -> usize;

    /// Whether this node takes no more actors of this kind.
    fn is_full(&self) -> bool;
}

/// What [`Owned::restore`] did.
#[derive(Debug)]
pub struct Brought {
    /// What the actor runs, for logs (a room's game), when known.
    pub game: Option<Uuid>,
    /// Running, over, or why not.
    pub outcome: Result<Restored, RestoreError>,
}

/// The kinds owned on this node; the last one takes every code no other kind claims.
#[derive(Clone)]
pub struct Kinds {
    kinds: Arc<[Arc<dyn Owned>]>,
}

impl Kinds {
    /// The kinds of a node that runs `rooms` and nothing else yet.
    pub fn rooms_only(rooms: Rooms) -> Kinds {
        Kinds::new(vec![Arc::new(RoomKind::new(rooms))])
    }

    /// The kinds `kinds`, the last one the default. Must not be empty.
    pub fn new(kinds: Vec<Arc<dyn Owned>>) -> Kinds {
        assert!(!kinds.is_empty(), "a node owns at least one kind of actor");
        Kinds {
            kinds: kinds.into(),
        }
    }

    /// The kind the lease of `code` belongs to.
    pub fn of(&self, code: &str) -> &dyn Owned {
        let last = self.kinds.len() - 1;
        let i = self.kinds[..last]
            .iter()
            .position(|k| k.claims(code))
            .unwrap_or(last);
        self.kinds[i].as_ref()
    }

    /// Every kind.
    pub fn all(&self) -> impl Iterator<Item = &dyn Owned> {
        self.kinds.iter().map(|k| k.as_ref())
    }

    /// Actors of every kind running here.
    pub fn count(&self) -> usize {
        self.all().map(Owned::count).sum()
    }
}

/// Rooms as an owned kind: the registry of [`Rooms`], their restore, their `Stop` and
/// `Handoff` commands.
pub struct RoomKind {
    rooms: Rooms,
}

impl RoomKind {
    /// The kind of `rooms`.
    pub fn new(rooms: Rooms) -> RoomKind {
        RoomKind { rooms }
    }
}

/// Sends `cmd` to a room without waiting: at once when its queue has space, else from a
/// task of its own (the room reads its queue in order).
pub fn tell(tx: &tokio::sync::mpsc::Sender<RoomCmd>, cmd: RoomCmd) {
    match tx.try_send(cmd) {
        Ok(()) => {}
        Err(tokio::sync::mpsc::error::TrySendError::Full(cmd)) => {
            let tx = tx.clone();
            tokio::spawn(async move {
                let _ = tx.send(cmd).await;
            });
        }
        // The room already ended.
        Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => {}
    }
}

impl Owned for RoomKind {
    fn kind(&self) -> &'static str {
        "room"
    }

    fn claims(&self, _code: &str) -> bool {
        true
    }

    fn is_running(&self, code: &str) -> bool {
        self.rooms.room(code).is_some()
    }

    fn stop(&self, code: &str, why: &'static str) {
        if let Some(handle) = self.rooms.room(code) {
            tell(handle.sender(), RoomCmd::Stop { why });
        }
    }

    fn restore<'a>(&'a self, code: &'a str, fence: &'a Fence) -> BoxFuture<'a, Brought> {
        Box::pin(async move {
            let snapshot = match self.rooms.store().get_room(code).await {
                Ok(Some(s)) => s,
                Ok(None) => {
                    let outcome = Err(RestoreError::Unreadable("no stored room".into()));
                    return Brought {
                        game: None,
                        outcome,
                    };
                }
                Err(e) => {
                    let outcome = Err(RestoreError::Store(e.to_string()));
                    return Brought {
                        game: None,
                        outcome,
                    };
                }
            };
            let game = snapshot.game.as_ref().map(|g| g.id);
            let outcome = parchis_room::restore(&self.rooms, &snapshot, Some(fence.clone())).await;
            Brought { game, outcome }
        })
    }

    fn codes(&self) -> Vec<String> {
        self.rooms
            .all_rooms()
            .iter()
            .map(|h| h.code().to_owned())
            .collect()
    }

    fn hand_off<'a>(&'a self, code: &'a str) -> BoxFuture<'a, Option<Vec<Rehomed>>> {
        Box::pin(async move {
            let handle: RoomHandle = self.rooms.room(code)?;
            let (reply, conns) = oneshot::channel();
            handle
                .sender()
                .send(RoomCmd::Handoff { reply })
                .await
                .ok()?;
            // Dropped when the room ended otherwise (disposed) meanwhile.
            conns.await.ok()
        })
    }

    fn count(&self) -> usize {
        self.rooms.room_count()
    }

    fn is_full(&self) -> bool {
        self.rooms.is_full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_protocol::RoomSettings;
    use parchis_room::{RoomsConfig, SingleNode};
    use parchis_store::{MemoryStore, Store};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A second kind, as a championship director will be: codes `T-…`, nothing runs.
    struct Directors {
        stopped: AtomicUsize,
    }

    impl Owned for Directors {
        fn kind(&self) -> &'static str {
            "director"
        }
        fn claims(&self, code: &str) -> bool {
            code.starts_with("T-")
        }
        fn is_running(&self, _code: &str) -> bool {
            false
        }
        fn stop(&self, _code: &str, _why: &'static str) {
            self.stopped.fetch_add(1, Ordering::SeqCst);
        }
        fn restore<'a>(&'a self, _code: &'a str, _fence: &'a Fence) -> BoxFuture<'a, Brought> {
            Box::pin(async {
                Brought {
                    game: None,
                    outcome: Err(RestoreError::Register),
                }
            })
        }
        fn codes(&self) -> Vec<String> {
            Vec::new()
        }
        fn hand_off<'a>(&'a self, _code: &'a str) -> BoxFuture<'a, Option<Vec<Rehomed>>> {
            Box::pin(async { None })
        }
        fn count(&self) -> usize {
            0
        }
        fn is_full(&self) -> bool {
            true
        }
    }

    fn rooms() -> (Arc<MemoryStore>, Rooms) {
        let store = Arc::new(MemoryStore::new());
        let dyn_store: Arc<dyn Store> = store.clone();
        (store, SingleNode::rooms(RoomsConfig::default(), dyn_store))
    }

    #[test]
    fn a_lease_belongs_to_the_kind_that_claims_its_code_else_to_the_last() {
        let (_, rooms) = rooms();
        let directors = Arc::new(Directors {
            stopped: AtomicUsize::new(0),
        });
        let kinds = Kinds::new(vec![directors.clone(), Arc::new(RoomKind::new(rooms))]);
        assert_eq!(kinds.of("T-42").kind(), "director");
        assert_eq!(kinds.of("ABCDEFGH").kind(), "room");
        kinds.of("T-42").stop("T-42", "lease lost");
        assert_eq!(directors.stopped.load(Ordering::SeqCst), 1);
        assert!(kinds.of("T-42").is_full());
        assert!(!kinds.of("ABCDEFGH").is_full());
        assert_eq!(Kinds::rooms_only(self::rooms().1).of("T-42").kind(), "room");
    }

    #[tokio::test]
    async fn a_room_is_restored_under_its_fence_counted_and_stopped_by_a_hand_off() {
        let (store, rooms) = rooms();
        let kind = RoomKind::new(rooms.clone());
        let code = "KINDROOM";
        let record = parchis_room_core::persist::room_record(
            code,
            &RoomSettings::default(),
            parchis_room::now_ms(),
        );
        let fence = store
            .create_room_leased(&record, "a", 60_000)
            .await
            .expect("room and lease");
        assert!(!kind.is_running(code));
        let brought = kind.restore(code, &fence).await;
        assert_eq!(brought.game, None, "a lobby has no game");
        assert!(
            matches!(brought.outcome, Ok(Restored::Running)),
            "{brought:?}"
        );
        assert!(kind.is_running(code));
        assert_eq!(kind.codes(), vec![code.to_owned()]);
        assert_eq!(kind.count(), 1);
        // Under the single-node host nobody takes the connections back (the cluster's
        // host answers the hand-off once the lease is released): the room just stops.
        assert!(kind.hand_off(code).await.is_none());
        for _ in 0..100 {
            if !kind.is_running(code) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(!kind.is_running(code), "deregistered after the hand-off");
        assert_eq!(kind.count(), 0);
        let missing = kind.restore("NOSUCHRM", &fence).await;
        assert!(
            matches!(missing.outcome, Err(RestoreError::Unreadable(_))),
            "{missing:?}"
        );
        rooms.shutdown_token().cancel();
    }
}
