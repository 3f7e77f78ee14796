//! Cluster mode's store side (docs/CLUSTER.md): leases with an epoch, fenced room writes,
//! the sweepers' claim and node heartbeats.
//!
//! Each case in `cases` is written once against `Arc<dyn Store>` and instantiated by
//! `backend_tests!` (tests/common) for PostgreSQL (when `DATABASE_URL` is set, else skipped
//! with a message) and the in-memory store; the `sqlite` module checks that SQLite refuses
//! leases and fences and runs unfenced room writes. Several "nodes" are several stores
//! opened on the same database (PostgreSQL) or the one memory store.
//!
//! Why one long file: it is a list of independent cluster cases, each written once for every backend; one test binary
//! also keeps the build short.

#[macro_use]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use common::{code, ev, game, room, seat, seqs, Harness, Kind};
use parchis_store::{
    EventRecord, Fence, GameEnd, GameStart, NodeRecord, RoomStatus, RoomStatusUpdate, RoomWrite,
    Store, StoreError,
};
use serde_json::json;
use uuid::Uuid;

/// A lease short enough to wait out in a test, long enough to outlast a stall of a busy
/// test machine between two statements.
const SHORT_TTL: i64 = 600;
/// Longer than `SHORT_TTL` plus the database's and the scheduler's slack.
const PAST_SHORT_TTL: Duration = Duration::from_millis(800);
/// A lease that does not expire during a test.
const LONG_TTL: i64 = 60_000;

mod cases {
    use super::*;

    /// Another node's store on the same data: a second connection pool and writer on
    /// PostgreSQL, the same store in memory.
    pub(super) async fn node(h: &Harness) -> Arc<dyn Store> {
        match h.kind {
            Kind::Memory => Arc::clone(&h.store),
            _ => h.reopen().await.expect("second store"),
        }
    }

    /// Closes a store made by [`node`] (never the harness's own).
    async fn close_node(h: &Harness, store: Arc<dyn Store>) {
        if !Arc::ptr_eq(&store, &h.store) {
            store.close().await;
        }
    }

    async fn new_room(s: &dyn Store, status: RoomStatus) -> String {
        let c = code();
        s.create_room(&room(&c, status, 1))
            .await
            .expect("create room");
        c
    }

    fn playing(at: i64) -> RoomStatusUpdate {
        RoomStatusUpdate {
            status: RoomStatus::Playing,
            started_at_ms: Some(at),
            finished_at_ms: None,
            updated_at_ms: at,
        }
    }

    fn start(c: &str, events: Vec<EventRecord>) -> RoomWrite {
        RoomWrite::Start(Box::new(GameStart {
            game: game(c, 20),
            room: playing(20),
            seats: vec![seat(c, "red", "Ana", true, 5)],
            events,
            log: None,
        }))
    }

    fn end(c: &str, game_id: Uuid, after_seq: i64) -> RoomWrite {
        RoomWrite::End(Box::new(GameEnd {
            game_id,
            room_code: c.to_owned(),
            after_seq,
            events: vec![ev(after_seq + 1, "end")],
            log: None,
            result: json!({"winner": "red"}),
            reason: "completed".to_owned(),
            finished_at_ms: 99,
            room: RoomStatusUpdate {
                status: RoomStatus::Finished,
                started_at_ms: Some(20),
                finished_at_ms: Some(99),
                updated_at_ms: 99,
            },
            rated: None,
        }))
    }

    fn append(game_id: Uuid, after_seq: i64, tag: &str) -> RoomWrite {
        RoomWrite::Append {
            game_id,
            after_seq,
            events: vec![ev(after_seq + 1, tag)],
        }
    }

    fn assert_fenced(result: parchis_store::Result<()>, fence: &Fence, now: Option<(&str, i64)>) {
        match result {
            Err(StoreError::Fenced {
                room,
                epoch,
                current,
            }) => {
                assert_eq!(room, fence.room_code);
                assert_eq!(epoch, fence.epoch);
                assert_eq!(current, now.map(|(n, e)| (n.to_owned(), e)));
            }
            other => panic!("expected Fenced, got {other:?}"),
        }
    }

    // Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
    pub async fn acquire_expire_and_retire(h: &Harness) {
        let s = &h.store;
        let c = new_room(s.as_ref(), RoomStatus::Open).await;
        assert_eq!(s.lease(&c).await.unwrap(), None);

        let a1 = s.acquire_lease(&c, "a", SHORT_TTL).await.unwrap();
        let a1 = a1.expect("a free room is acquired");
        assert_eq!(
            a1,
            Fence {
                room_code: c.clone(),
                node: "a".into(),
                epoch: 1
            }
        );
        assert_eq!(s.acquire_lease(&c, "b", SHORT_TTL).await.unwrap(), None);
        assert_eq!(
            s.acquire_lease(&c, "a", SHORT_TTL).await.unwrap(),
            None,
            "a held lease is not acquired again, even by its owner"
        );
        let lease = s.lease(&c).await.unwrap().expect("lease");
        assert_eq!((lease.owner.as_str(), lease.epoch), ("a", 1));
        assert!(!lease.retired);
        assert!(
            lease.expires_in_ms > 0 && lease.expires_in_ms <= SHORT_TTL,
            "{lease:?}"
        );

        tokio::time::sleep(PAST_SHORT_TTL).await;
        assert!(s.lease(&c).await.unwrap().unwrap().expires_in_ms < 0);
        let b2 = s.acquire_lease(&c, "b", SHORT_TTL).await.unwrap();
        assert_eq!(
            b2,
            Some(Fence {
                room_code: c.clone(),
                node: "b".into(),
                epoch: 2
            })
        );
        let b2 = b2.unwrap();

        match s.acquire_lease("NOSUCHRM", "a", SHORT_TTL).await {
            Err(StoreError::RoomNotFound(got)) => assert_eq!(got, "NOSUCHRM"),
            other => panic!("expected RoomNotFound, got {other:?}"),
        }

        // Retire: only by the current fence; then never acquired or claimed again.
        assert!(
            !s.retire_lease(&a1).await.unwrap(),
            "a stale fence retires nothing"
        );
        assert!(!s.lease(&c).await.unwrap().unwrap().retired);
        assert!(s.retire_lease(&b2).await.unwrap());
        let lease = s.lease(&c).await.unwrap().unwrap();
        assert!(lease.retired);
        assert_eq!((lease.owner.as_str(), lease.epoch), ("b", 2));
        tokio::time::sleep(PAST_SHORT_TTL).await;
        assert_eq!(s.acquire_lease(&c, "a", SHORT_TTL).await.unwrap(), None);
        let claimed = s.claim_expired("a", SHORT_TTL, 100).await.unwrap();
        assert!(
            claimed.iter().all(|f| f.room_code != c),
            "a retired room is claimed: {claimed:?}"
        );
        assert_eq!(s.lease(&c).await.unwrap().unwrap().epoch, 2);

        // A room created with its lease is owned from its first moment.
        let d = room(&code(), RoomStatus::Open, 2);
        let d1 = s.create_room_leased(&d, "a", LONG_TTL).await.unwrap();
        assert_eq!(
            (d1.room_code.as_str(), d1.node.as_str(), d1.epoch),
            (d.code.as_str(), "a", 1)
        );
        assert_eq!(
            s.acquire_lease(&d.code, "b", SHORT_TTL).await.unwrap(),
            None
        );
        assert!(s
            .claim_expired("b", SHORT_TTL, 100)
            .await
            .unwrap()
            .is_empty());
        assert!(matches!(
            s.create_room_leased(&d, "b", LONG_TTL).await,
            Err(StoreError::RoomExists(_))
        ));
        assert_eq!(s.lease(&d.code).await.unwrap().unwrap().owner, "a");
        assert_eq!(s.get_room(&d.code).await.unwrap().unwrap().room, d);
    }

    /// `longest_expired_ms` sees the leases `claim_expired` would take, and only those.
    pub async fn longest_expired_lease(h: &Harness) {
        let s = &h.store;
        assert_eq!(s.longest_expired_ms().await.unwrap(), None, "no lease yet");
        let held = new_room(s.as_ref(), RoomStatus::Open).await;
        let held = s
            .acquire_lease(&held, "a", LONG_TTL)
            .await
            .unwrap()
            .unwrap();
        let open = new_room(s.as_ref(), RoomStatus::Open).await;
        s.acquire_lease(&open, "a", SHORT_TTL)
            .await
            .unwrap()
            .unwrap();
        // An expired lease of a finished room and a retired one are not claimable.
        let finished = new_room(s.as_ref(), RoomStatus::Finished).await;
        s.acquire_lease(&finished, "a", SHORT_TTL)
            .await
            .unwrap()
            .unwrap();
        let retired = new_room(s.as_ref(), RoomStatus::Open).await;
        let retired = s
            .acquire_lease(&retired, "a", SHORT_TTL)
            .await
            .unwrap()
            .unwrap();
        assert!(s.retire_lease(&retired).await.unwrap());
        assert_eq!(s.longest_expired_ms().await.unwrap(), None, "none expired");

        tokio::time::sleep(PAST_SHORT_TTL).await;
        // `open` expired at least PAST_SHORT_TTL - SHORT_TTL ago (200 ms; 100 of slack for
        // the clocks' granularity).
        let waited = s.longest_expired_ms().await.unwrap().expect("open expired");
        assert!(waited >= 100, "expired {waited} ms ago");
        let claimed = s.claim_expired("b", LONG_TTL, 100).await.unwrap();
        let claimed: Vec<&str> = claimed.iter().map(|f| f.room_code.as_str()).collect();
        assert_eq!(claimed, [open.as_str()]);
        assert_eq!(s.longest_expired_ms().await.unwrap(), None, "claimed");

        // A released lease is expired at once.
        assert!(s.release_lease(&held).await.unwrap());
        let waited = s.longest_expired_ms().await.unwrap().expect("released");
        assert!(waited >= 0, "{waited}");
        s.claim_expired("b", LONG_TTL, 100).await.unwrap();
        assert_eq!(s.longest_expired_ms().await.unwrap(), None, "claimed again");
    }

    pub async fn renew_keeps_own_and_release_hands_off(h: &Harness) {
        let s = &h.store;
        let (c1, c2, c3) = (
            new_room(s.as_ref(), RoomStatus::Open).await,
            new_room(s.as_ref(), RoomStatus::Playing).await,
            new_room(s.as_ref(), RoomStatus::Open).await,
        );
        let a_c1 = s.acquire_lease(&c1, "a", SHORT_TTL).await.unwrap().unwrap();
        let a_c2 = s.acquire_lease(&c2, "a", SHORT_TTL).await.unwrap().unwrap();
        let b_c3 = s.acquire_lease(&c3, "b", SHORT_TTL).await.unwrap().unwrap();
        let stale = Fence {
            node: "a".into(),
            ..b_c3.clone()
        };
        let mut mine = vec![a_c1.clone(), a_c2.clone()];
        mine.sort_by(|x, y| x.room_code.cmp(&y.room_code));

        let kept = s
            .renew_leases("a", SHORT_TTL, &[a_c2.clone(), stale.clone(), a_c1.clone()])
            .await
            .unwrap();
        assert_eq!(
            kept, mine,
            "own leases kept, in room order; another's dropped"
        );
        assert!(s
            .renew_leases("a", SHORT_TTL, &[])
            .await
            .unwrap()
            .is_empty());

        // Expired but taken by nobody: still ours.
        tokio::time::sleep(PAST_SHORT_TTL).await;
        assert!(s.lease(&c1).await.unwrap().unwrap().expires_in_ms < 0);
        let kept = s.renew_leases("a", LONG_TTL, &mine).await.unwrap();
        assert_eq!(kept, mine);
        let lease = s.lease(&c1).await.unwrap().unwrap();
        assert!(lease.expires_in_ms > LONG_TTL / 2, "{lease:?}");
        assert_eq!(s.acquire_lease(&c1, "b", SHORT_TTL).await.unwrap(), None);

        // Release: another node acquires at once.
        assert!(!s.release_lease(&stale).await.unwrap());
        assert!(s.release_lease(&a_c1).await.unwrap());
        let b_c1 = s.acquire_lease(&c1, "b", LONG_TTL).await.unwrap();
        assert_eq!(
            b_c1.as_ref().map(|f| (f.node.as_str(), f.epoch)),
            Some(("b", 2))
        );
        assert!(
            !s.release_lease(&a_c1).await.unwrap(),
            "an old epoch releases nothing"
        );
        assert_eq!(s.lease(&c1).await.unwrap().unwrap().owner, "b");
        let kept = s.renew_leases("a", LONG_TTL, &mine).await.unwrap();
        assert_eq!(
            kept,
            vec![a_c2.clone()],
            "the lost room is missing from the answer"
        );
        // The renewing node's id decides, not the fence's.
        assert!(s
            .renew_leases("b", LONG_TTL, &[a_c2])
            .await
            .unwrap()
            .is_empty());
        let _ = c3;
    }

    // Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
    pub async fn fenced_writes_refused_after_takeover(h: &Harness) {
        let s = &h.store;
        let c = new_room(s.as_ref(), RoomStatus::Open).await;
        let nobody = Fence {
            room_code: c.clone(),
            node: "a".into(),
            epoch: 1,
        };
        // No lease yet: no fence matches.
        let refused = s
            .write_room(
                &c,
                Some(&nobody),
                RoomWrite::UpsertSeat(seat(&c, "red", "A", true, 1)),
            )
            .await;
        assert_fenced(refused, &nobody, None);

        let a1 = s.acquire_lease(&c, "a", SHORT_TTL).await.unwrap().unwrap();
        assert_eq!(a1, nobody);
        let RoomWrite::Start(first) = start(&c, vec![ev(1, "a"), ev(2, "a")]) else {
            unreachable!()
        };
        let id = first.game.id;
        s.write_room(&c, Some(&a1), RoomWrite::Start(first))
            .await
            .expect("owner starts");
        for after in 2..5 {
            s.write_room(&c, Some(&a1), append(id, after, "a"))
                .await
                .expect("owner appends");
        }
        s.write_room(
            &c,
            Some(&a1),
            RoomWrite::UpsertSeat(seat(&c, "blue", "B", false, 6)),
        )
        .await
        .expect("owner seats");
        s.write_room(
            &c,
            Some(&a1),
            RoomWrite::SetDeadline {
                game_id: id,
                deadline_ms: Some(777),
            },
        )
        .await
        .expect("owner sets the deadline");
        // A write naming another room, or carrying another room's fence, escapes nothing.
        let other = new_room(s.as_ref(), RoomStatus::Open).await;
        assert!(matches!(
            s.write_room(
                &c,
                Some(&a1),
                RoomWrite::UpsertSeat(seat(&other, "red", "X", false, 1))
            )
            .await,
            Err(StoreError::InvalidWrite(_))
        ));
        assert!(matches!(
            s.write_room(&other, Some(&a1), RoomWrite::RoomStatus(playing(5)))
                .await,
            Err(StoreError::InvalidWrite(_))
        ));
        let before = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(seqs(&before.events), vec![1, 2, 3, 4, 5]);
        assert_eq!(before.seats.len(), 2);

        // The lease expires; node b takes the room over.
        tokio::time::sleep(PAST_SHORT_TTL).await;
        let b = node(h).await;
        let b2 = b.acquire_lease(&c, "b", LONG_TTL).await.unwrap().unwrap();
        assert_eq!(b2.epoch, 2);
        let stale_writes = vec![
            append(id, 5, "stale"),
            start(&c, vec![ev(1, "stale")]),
            end(&c, id, 5),
            RoomWrite::UpsertSeat(seat(&c, "green", "G", false, 7)),
            RoomWrite::DeleteSeat {
                colour: "blue".into(),
            },
            RoomWrite::SetDeadline {
                game_id: id,
                deadline_ms: None,
            },
            RoomWrite::RoomStatus(playing(1_000)),
        ];
        for write in stale_writes {
            let kind = write.kind();
            let result = s.write_room(&c, Some(&a1), write).await;
            assert!(
                matches!(result, Err(StoreError::Fenced { .. })),
                "{kind}: {result:?}"
            );
            assert_fenced(result, &a1, Some(("b", 2)));
        }
        let after = b.get_room(&c).await.unwrap().unwrap();
        assert_eq!(after, before, "nothing of the refused writes is stored");
        assert_eq!(s.list_games(&c).await.unwrap().len(), 1, "no second game");
        assert_eq!(after.game.as_ref().and_then(|g| g.deadline_ms), Some(777));

        // The new owner continues the gap-free log; a wrong epoch of its own is refused.
        b.write_room(&c, Some(&b2), append(id, 5, "b"))
            .await
            .expect("new owner appends");
        let wrong = Fence {
            epoch: 3,
            ..b2.clone()
        };
        assert_fenced(
            b.write_room(&c, Some(&wrong), append(id, 6, "x")).await,
            &wrong,
            Some(("b", 2)),
        );
        b.write_room(&c, Some(&b2), end(&c, id, 6))
            .await
            .expect("new owner ends");
        let (g, events) = b.get_game(id).await.unwrap().unwrap();
        assert_eq!(seqs(&events), (1..=7).collect::<Vec<_>>());
        assert_eq!(events[5], ev(6, "b"));
        assert!(g.is_finished());
        close_node(h, b).await;
    }

    /// Fenced appends of many rooms at once (grouped in one commit where the backend
    /// groups): each stale fence fails alone, every valid one is written.
    pub async fn grouped_fenced_appends_fail_alone(h: &Harness) {
        const ROOMS: usize = 24;
        let s = &h.store;
        let mut rooms = Vec::new();
        for i in 0..ROOMS {
            let c = new_room(s.as_ref(), RoomStatus::Open).await;
            let fence = s.acquire_lease(&c, "a", LONG_TTL).await.unwrap().unwrap();
            let RoomWrite::Start(st) = start(&c, vec![ev(1, "s")]) else {
                unreachable!()
            };
            let id = st.game.id;
            s.write_room(&c, Some(&fence), RoomWrite::Start(st))
                .await
                .unwrap();
            // Every third room's lease is lost (released and taken by b).
            let fence = if i % 3 == 0 {
                assert!(s.release_lease(&fence).await.unwrap());
                s.acquire_lease(&c, "b", LONG_TTL).await.unwrap().unwrap();
                Fence {
                    node: "a".into(),
                    epoch: 1,
                    room_code: c.clone(),
                }
            } else {
                fence
            };
            rooms.push((c, id, fence, i % 3 == 0));
        }
        for round in 1..=3 {
            let barrier = Arc::new(tokio::sync::Barrier::new(ROOMS));
            let mut tasks = tokio::task::JoinSet::new();
            for (c, id, fence, lost) in rooms.iter().cloned() {
                let (store, barrier) = (Arc::clone(s), Arc::clone(&barrier));
                tasks.spawn(async move {
                    barrier.wait().await;
                    let result = store
                        .write_room(&c, Some(&fence), append(id, round, "g"))
                        .await;
                    (lost, result)
                });
            }
            while let Some(joined) = tasks.join_next().await {
                let (lost, result) = joined.expect("task");
                if lost {
                    assert!(
                        matches!(result, Err(StoreError::Fenced { .. })),
                        "{result:?}"
                    );
                } else {
                    result.expect("a valid fence writes");
                }
            }
        }
        for (_, id, _, lost) in &rooms {
            let want: Vec<i64> = if *lost { vec![1] } else { vec![1, 2, 3, 4] };
            assert_eq!(seqs(&s.get_game(*id).await.unwrap().unwrap().1), want);
        }
    }

    /// THE RACE: the old owner keeps appending while another node takes the room over and
    /// reads its log. Every append the old owner was told is stored must be in the new
    /// owner's read (no fork), and nothing of it may come after that read.
    // Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
    pub async fn takeover_never_forks_the_log(h: &Harness) {
        const ITERATIONS: usize = 40;
        const ROOMS: usize = 4;
        let a = Arc::clone(&h.store);
        let b = node(h).await;
        let mut acked_total = 0;
        let mut fenced_total = 0;
        for iteration in 0..ITERATIONS {
            let mut rooms = Vec::new();
            for _ in 0..ROOMS {
                let c = new_room(a.as_ref(), RoomStatus::Open).await;
                // Expired the moment it is taken: the takeover may happen at any point.
                let fence = a.acquire_lease(&c, "a", 0).await.unwrap().unwrap();
                let RoomWrite::Start(st) = start(&c, vec![ev(1, "a")]) else {
                    unreachable!()
                };
                let id = st.game.id;
                a.write_room(&c, Some(&fence), RoomWrite::Start(st))
                    .await
                    .unwrap();
                rooms.push((c, id, fence));
            }
            // The old owner: one appender per room, until it is fenced.
            let mut appenders = tokio::task::JoinSet::new();
            for (c, id, fence) in rooms.iter().cloned() {
                let a = Arc::clone(&a);
                appenders.spawn(async move {
                    let mut acked = vec![1];
                    loop {
                        let after = *acked.last().unwrap_or(&0);
                        match a
                            .write_room(&c, Some(&fence), append(id, after, "old"))
                            .await
                        {
                            Ok(()) => {
                                acked.push(after + 1);
                                // The memory store never waits: let the taker (and the
                                // timers) run.
                                tokio::task::yield_now().await;
                            }
                            Err(StoreError::Fenced { current, .. }) => {
                                assert_eq!(current.map(|(n, _)| n), Some("b".to_owned()));
                                return (id, acked);
                            }
                            Err(e) => panic!("old owner's append failed: {e}"),
                        }
                    }
                });
            }
            // The new owner: takes every room (by claim or by acquire), then reads.
            tokio::time::sleep(Duration::from_millis((iteration % 5) as u64)).await;
            let wanted: BTreeSet<String> = rooms.iter().map(|r| r.0.clone()).collect();
            let mut taken: BTreeMap<String, Fence> = BTreeMap::new();
            while taken.len() < ROOMS {
                if iteration % 2 == 0 {
                    for f in b.claim_expired("b", LONG_TTL, 100).await.unwrap() {
                        assert!(wanted.contains(&f.room_code), "claimed a stranger: {f:?}");
                        taken.insert(f.room_code.clone(), f);
                    }
                } else {
                    let free: Vec<&String> =
                        wanted.iter().filter(|c| !taken.contains_key(*c)).collect();
                    for c in free {
                        if let Some(f) = b.acquire_lease(c, "b", LONG_TTL).await.unwrap() {
                            taken.insert(c.clone(), f);
                        }
                    }
                }
            }
            let mut reads = BTreeMap::new();
            for (_, id, _) in &rooms {
                let (_, events) = b.get_game(*id).await.unwrap().unwrap();
                reads.insert(*id, seqs(&events));
            }
            while let Some(joined) = appenders.join_next().await {
                let (id, acked) = joined.expect("appender");
                let read = &reads[&id];
                let n = read.len() as i64;
                assert_eq!(*read, (1..=n).collect::<Vec<_>>(), "gap-free");
                assert!(
                    acked.iter().all(|s| read.contains(s)),
                    "iteration {iteration}: acked {acked:?} but the new owner read {read:?}"
                );
                acked_total += acked.len() - 1;
                fenced_total += 1;
            }
            // Nothing was written after the read: the new owner continues right after it.
            for (c, id, _) in &rooms {
                let f = &taken[c];
                assert_eq!(f.epoch, 2);
                let last = *reads[id].last().unwrap_or(&0);
                b.write_room(c, Some(f), append(*id, last, "new"))
                    .await
                    .expect("the new owner's log is the one stored");
                assert!(b.retire_lease(f).await.unwrap());
            }
        }
        assert_eq!(fenced_total, ITERATIONS * ROOMS);
        assert!(
            acked_total > 0,
            "the old owner never got a write in: the race was not run"
        );
        close_node(h, b).await;
    }

    // Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
    pub async fn concurrent_claimers_take_each_room_once(h: &Harness) {
        let s = &h.store;
        let mut claimable = BTreeMap::new(); // room -> expected epoch
        let mut not_claimable = BTreeSet::new();
        for _ in 0..12 {
            let c = new_room(s.as_ref(), RoomStatus::Playing).await;
            s.acquire_lease(&c, "dead", 0).await.unwrap().unwrap();
            claimable.insert(c, 2); // expired: taken at the next epoch
        }
        for _ in 0..12 {
            let c = new_room(s.as_ref(), RoomStatus::Open).await;
            claimable.insert(c, 1); // no lease row at all
        }
        for _ in 0..4 {
            not_claimable.insert(new_room(s.as_ref(), RoomStatus::Finished).await);
            let f = new_room(s.as_ref(), RoomStatus::Finished).await;
            s.acquire_lease(&f, "dead", 0).await.unwrap().unwrap();
            not_claimable.insert(f);
            let live = new_room(s.as_ref(), RoomStatus::Playing).await;
            s.acquire_lease(&live, "alive", LONG_TTL)
                .await
                .unwrap()
                .unwrap();
            not_claimable.insert(live);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;

        let mut claimers = tokio::task::JoinSet::new();
        let barrier = Arc::new(tokio::sync::Barrier::new(3));
        let mut nodes = Vec::new();
        for n in 0..3 {
            let store = node(h).await;
            nodes.push(Arc::clone(&store));
            let barrier = Arc::clone(&barrier);
            claimers.spawn(async move {
                let me = format!("claimer-{n}");
                barrier.wait().await;
                let mut mine = Vec::new();
                loop {
                    let got = store.claim_expired(&me, LONG_TTL, 3).await.unwrap();
                    if got.is_empty() {
                        return mine;
                    }
                    assert!(got.len() <= 3);
                    assert!(got.iter().all(|f| f.node == me));
                    mine.extend(got);
                }
            });
        }
        let mut all: Vec<Fence> = Vec::new();
        while let Some(joined) = claimers.join_next().await {
            all.extend(joined.expect("claimer"));
        }
        let claimed: BTreeMap<String, i64> =
            all.iter().map(|f| (f.room_code.clone(), f.epoch)).collect();
        assert_eq!(
            claimed.len(),
            all.len(),
            "a room was claimed twice: {all:?}"
        );
        assert_eq!(claimed, claimable);
        for f in &all {
            let lease = s.lease(&f.room_code).await.unwrap().unwrap();
            assert_eq!(
                (lease.owner.as_str(), lease.epoch),
                (f.node.as_str(), f.epoch)
            );
        }
        for c in &not_claimable {
            let lease = s.lease(c).await.unwrap();
            assert!(
                lease
                    .as_ref()
                    .is_none_or(|l| l.owner == "dead" || l.owner == "alive"),
                "{c}: {lease:?}"
            );
        }
        assert!(s
            .claim_expired("late", LONG_TTL, 100)
            .await
            .unwrap()
            .is_empty());
        assert!(s
            .claim_expired("late", LONG_TTL, 0)
            .await
            .unwrap()
            .is_empty());
        for store in nodes {
            close_node(h, store).await;
        }
    }

    pub async fn heartbeats_list_live_nodes(h: &Harness) {
        let s = &h.store;
        let beat = |id: &str, rooms: u32, draining: bool| NodeRecord {
            node_id: id.to_owned(),
            rooms,
            draining,
            shedding: false,
        };
        s.heartbeat_node(&beat("a", 3, false)).await.unwrap();
        s.heartbeat_node(&beat("c", 1, true)).await.unwrap();
        s.heartbeat_node(&NodeRecord {
            shedding: true,
            ..beat("b", 1, false)
        })
        .await
        .unwrap();
        let ids = |nodes: &[parchis_store::NodeInfo]| {
            nodes.iter().map(|n| n.node_id.clone()).collect::<Vec<_>>()
        };
        let flags = |n: &parchis_store::NodeInfo| (n.rooms, n.draining, n.shedding);
        let live = s.live_nodes(10_000).await.unwrap();
        assert_eq!(ids(&live), ["b", "c", "a"], "by rooms, then id");
        assert_eq!(flags(&live[0]), (1, false, true), "b sheds, not draining");
        assert_eq!(flags(&live[1]), (1, true, false));
        assert_eq!(flags(&live[2]), (3, false, false));
        assert!(live.iter().all(|n| (0..10_000).contains(&n.seen_ms_ago)));

        s.heartbeat_node(&beat("a", 0, false)).await.unwrap();
        assert_eq!(ids(&s.live_nodes(10_000).await.unwrap()), ["a", "b", "c"]);

        tokio::time::sleep(PAST_SHORT_TTL).await;
        s.heartbeat_node(&beat("b", 2, true)).await.unwrap();
        let live = s.live_nodes(SHORT_TTL).await.unwrap();
        assert_eq!(ids(&live), ["b"], "only the nodes seen within max age");
        assert_eq!(flags(&live[0]), (2, true, false), "b stopped shedding");
        let old = s.live_nodes(10_000).await.unwrap();
        let a = old.iter().find(|n| n.node_id == "a").expect("a is listed");
        assert!(a.seen_ms_ago >= PAST_SHORT_TTL.as_millis() as i64, "{a:?}");

        s.forget_node("b").await.unwrap();
        s.forget_node("never-seen").await.unwrap();
        assert_eq!(ids(&s.live_nodes(10_000).await.unwrap()), ["a", "c"]);
    }

    /// Unfenced `write_room` does what the separate methods do (every backend).
    // Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
    pub async fn unfenced_write_room_is_the_old_methods(h: &Harness) {
        let s = &h.store;
        let c = new_room(s.as_ref(), RoomStatus::Open).await;
        let w = |write| s.write_room(&c, None, write);
        w(RoomWrite::UpsertSeat(seat(&c, "blue", "B", false, 3)))
            .await
            .unwrap();
        w(RoomWrite::UpsertSeat(seat(&c, "green", "G", false, 4)))
            .await
            .unwrap();
        w(RoomWrite::DeleteSeat {
            colour: "green".into(),
        })
        .await
        .unwrap();
        w(RoomWrite::DeleteSeat {
            colour: "green".into(),
        })
        .await
        .expect("deleting a missing seat is no error");
        let RoomWrite::Start(st) = start(&c, vec![ev(1, "s"), ev(2, "s")]) else {
            unreachable!()
        };
        let g = st.game.clone();
        w(RoomWrite::Start(st)).await.unwrap();
        w(append(g.id, 2, "a")).await.unwrap();
        w(RoomWrite::Append {
            game_id: g.id,
            after_seq: 3,
            events: Vec::new(),
        })
        .await
        .expect("an empty append is a no-op");
        assert!(matches!(
            w(append(g.id, 1, "x")).await,
            Err(StoreError::SeqMismatch { .. })
        ));
        w(RoomWrite::SetDeadline {
            game_id: g.id,
            deadline_ms: Some(500),
        })
        .await
        .unwrap();
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.room.status, RoomStatus::Playing);
        assert_eq!(snap.room.started_at_ms, Some(20));
        assert_eq!(
            snap.seats,
            vec![
                seat(&c, "blue", "B", false, 3),
                seat(&c, "red", "Ana", true, 5)
            ]
        );
        assert_eq!(snap.game.as_ref().map(|x| x.deadline_ms), Some(Some(500)));
        assert_eq!(snap.events, vec![ev(1, "s"), ev(2, "s"), ev(3, "a")]);
        assert!(matches!(
            w(RoomWrite::UpsertSeat(seat(
                "ELSEWHERE",
                "red",
                "X",
                false,
                1
            )))
            .await,
            Err(StoreError::InvalidWrite(_))
        ));
        w(end(&c, g.id, 3)).await.unwrap();
        assert!(matches!(
            w(end(&c, g.id, 4)).await,
            Err(StoreError::GameFinished(_))
        ));
        w(RoomWrite::RoomStatus(playing(1_234))).await.unwrap();
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.room.updated_at_ms, 1_234);
        assert_eq!(seqs(&snap.events), vec![1, 2, 3, 4]);
        let game = snap.game.unwrap();
        assert_eq!(game.reason.as_deref(), Some("completed"));
        assert_eq!(game.deadline_ms, None);
        assert!(matches!(
            s.write_room("NOSUCHRM", None, RoomWrite::RoomStatus(playing(1)))
                .await,
            Err(StoreError::RoomNotFound(_))
        ));
    }
}

backend_tests!(
    [postgres, memory]
    [
        acquire_expire_and_retire,
        longest_expired_lease,
        renew_keeps_own_and_release_hands_off,
        fenced_writes_refused_after_takeover,
        grouped_fenced_appends_fail_alone,
        takeover_never_forks_the_log,
        concurrent_claimers_take_each_room_once,
        heartbeats_list_live_nodes,
        unfenced_write_room_is_the_old_methods,
    ]
);

mod sqlite {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unfenced_write_room_is_the_old_methods() {
        let h = Harness::sqlite().await;
        crate::cases::unfenced_write_room_is_the_old_methods(&h).await;
        h.finish().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn leases_are_unsupported() {
        let h = Harness::sqlite().await;
        let s = &h.store;
        let c = code();
        s.create_room(&room(&c, RoomStatus::Open, 1)).await.unwrap();
        let fence = Fence {
            room_code: c.clone(),
            node: "a".into(),
            epoch: 1,
        };
        let node = NodeRecord {
            node_id: "a".into(),
            rooms: 0,
            draining: false,
            shedding: false,
        };
        let unsupported = |r: Result<(), StoreError>, what: &str| match r {
            Err(StoreError::Unsupported(msg)) => {
                assert_eq!(msg, "cluster mode needs PostgreSQL", "{what}")
            }
            other => panic!("{what}: expected Unsupported, got {other:?}"),
        };
        unsupported(s.acquire_lease(&c, "a", 1).await.map(drop), "acquire");
        unsupported(s.claim_expired("a", 1, 1).await.map(drop), "claim");
        unsupported(s.longest_expired_ms().await.map(drop), "longest expired");
        unsupported(
            s.renew_leases("a", 1, std::slice::from_ref(&fence))
                .await
                .map(drop),
            "renew",
        );
        unsupported(s.release_lease(&fence).await.map(drop), "release");
        unsupported(s.retire_lease(&fence).await.map(drop), "retire");
        unsupported(s.lease(&c).await.map(drop), "lease");
        unsupported(s.heartbeat_node(&node).await, "heartbeat");
        unsupported(s.live_nodes(1).await.map(drop), "live nodes");
        unsupported(s.forget_node("a").await, "forget");
        let r = room(&code(), RoomStatus::Open, 1);
        unsupported(
            s.create_room_leased(&r, "a", 1).await.map(drop),
            "create leased",
        );
        assert_eq!(s.get_room(&r.code).await.unwrap(), None);
        let seat_write = RoomWrite::UpsertSeat(seat(&c, "red", "A", true, 1));
        unsupported(
            s.write_room(&c, Some(&fence), seat_write).await,
            "fenced write",
        );
        assert!(s.get_room(&c).await.unwrap().unwrap().seats.is_empty());
        h.finish().await;
    }
}
