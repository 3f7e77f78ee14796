//! Tournaments' event logs (issue 27), the same on every backend: each case is written
//! once against `TournamentStore` and instantiated by `backend_tests!` (tests/common) for
//! SQLite, PostgreSQL (`DATABASE_URL`) and memory.

#[macro_use]
mod common;

use common::Harness;
use parchis_store::{Fence, StoreError, TournamentStore};
use serde_json::json;
use uuid::Uuid;

mod cases {
    use super::*;

    fn tournaments(h: &Harness) -> &dyn TournamentStore {
        h.store
            .tournaments()
            .expect("every backend keeps tournaments")
    }

    pub async fn logs_append_in_order_and_refuse_a_second_writer(h: &Harness) {
        let t = tournaments(h);
        let id = Uuid::now_v7();
        t.create_tournament(id, 1_000, &json!({"seq": 1, "created": true}))
            .await
            .expect("create");
        match t
            .create_tournament(id, 2_000, &json!({"again": true}))
            .await
        {
            Err(StoreError::TournamentExists(got)) => assert_eq!(got, id),
            other => panic!("a second create must be refused, got {other:?}"),
        }
        t.append_tournament(id, 1, &[json!({"n": 2}), json!({"n": 3})], None)
            .await
            .expect("append after 1");
        // A writer that believes seq 1 is last (it missed 2 and 3) writes nothing.
        match t.append_tournament(id, 1, &[json!({"n": 99})], None).await {
            Err(StoreError::TournamentSeqMismatch {
                tournament,
                after,
                last,
            }) => {
                assert_eq!((tournament, after, last), (id, 1, Some(3)));
            }
            other => panic!("a stale append must be refused, got {other:?}"),
        }
        t.append_tournament(id, 3, &[json!({"n": 4})], None)
            .await
            .expect("append after 3");
        assert_eq!(
            t.tournament_log(id).await.unwrap(),
            vec![
                json!({"seq": 1, "created": true}),
                json!({"n": 2}),
                json!({"n": 3}),
                json!({"n": 4}),
            ]
        );
        // An unknown tournament has an empty log and takes no append.
        let other = Uuid::now_v7();
        assert_eq!(
            t.tournament_log(other).await.unwrap(),
            Vec::<serde_json::Value>::new()
        );
        match t.append_tournament(other, 0, &[json!({})], None).await {
            Err(StoreError::TournamentSeqMismatch { last: None, .. }) => {}
            other => panic!("an append to no tournament must be refused, got {other:?}"),
        }
        // The log survives a reopen of the store.
        if let Some(again) = h.reopen().await {
            let log = again
                .tournaments()
                .unwrap()
                .tournament_log(id)
                .await
                .unwrap();
            assert_eq!(log.len(), 4);
            assert_eq!(log[3], json!({"n": 4}));
            again.close().await;
        }
    }

    pub async fn tournaments_are_listed_newest_first(h: &Harness) {
        let t = tournaments(h);
        let ids: Vec<Uuid> = (0..3).map(|_| Uuid::now_v7()).collect();
        for (i, id) in ids.iter().enumerate() {
            t.create_tournament(*id, 1_000 + i as i64, &json!({"i": i}))
                .await
                .unwrap();
        }
        assert_eq!(
            t.tournament_ids(10).await.unwrap(),
            vec![ids[2], ids[1], ids[0]]
        );
        assert_eq!(t.tournament_ids(2).await.unwrap(), vec![ids[2], ids[1]]);
    }

    /// The director's appends carry its tournament lease's fence (`tournament_leases`):
    /// the lease is taken when free, renewed by its holder under the same epoch, refused to
    /// another node until it expires, then taken with the next epoch, which fences the
    /// old holder's appends.
    pub async fn fenced_appends_stop_with_the_lease(h: &Harness) {
        let t = tournaments(h);
        let id = Uuid::now_v7();
        t.create_tournament(id, 1_000, &json!({"n": 1}))
            .await
            .unwrap();
        let fence = t
            .acquire_tournament_lease(id, "node-a", 60_000)
            .await
            .unwrap()
            .expect("a free lease is acquired");
        assert_eq!((fence.node.as_str(), fence.epoch), ("node-a", 1));
        let renewed = t
            .acquire_tournament_lease(id, "node-a", 60_000)
            .await
            .unwrap();
        assert_eq!(renewed.as_ref(), Some(&fence), "a renewal keeps the epoch");
        assert_eq!(
            t.acquire_tournament_lease(id, "node-b", 60_000)
                .await
                .unwrap(),
            None,
            "a held lease is not taken"
        );
        assert_eq!(
            t.tournament_lease_owner(id).await.unwrap().as_deref(),
            Some("node-a")
        );
        t.append_tournament(id, 1, &[json!({"n": 2})], Some(&fence))
            .await
            .expect("the owner appends");
        let intruder = Fence {
            node: "node-b".to_owned(),
            ..fence.clone()
        };
        assert!(matches!(
            t.append_tournament(id, 2, &[json!({"n": 3})], Some(&intruder))
                .await,
            Err(StoreError::Fenced { .. })
        ));
        // node-a's lease runs out (a 1 ms renewal); node-b takes it under epoch 2.
        t.acquire_tournament_lease(id, "node-a", 1).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let taken = t
            .acquire_tournament_lease(id, "node-b", 60_000)
            .await
            .unwrap()
            .expect("an expired lease is taken");
        assert_eq!((taken.node.as_str(), taken.epoch), ("node-b", 2));
        match t
            .append_tournament(id, 2, &[json!({"n": 3})], Some(&fence))
            .await
        {
            Err(StoreError::Fenced { epoch, current, .. }) => {
                assert_eq!(epoch, 1);
                assert_eq!(current, Some(("node-b".to_owned(), 2)));
            }
            other => panic!("the old holder must be fenced, got {other:?}"),
        }
        t.append_tournament(id, 2, &[json!({"n": 3})], Some(&taken))
            .await
            .expect("the new holder appends");
        assert_eq!(t.tournament_log(id).await.unwrap().len(), 3);
    }

    /// A released lease (a drained node's) is taken by another node at once, under the
    /// next epoch, and the old holder is fenced; a release at a stale epoch changes
    /// nothing.
    pub async fn a_released_lease_is_taken_at_once(h: &Harness) {
        let t = tournaments(h);
        let id = Uuid::now_v7();
        t.create_tournament(id, 1_000, &json!({"n": 1}))
            .await
            .unwrap();
        let fence = t
            .acquire_tournament_lease(id, "node-a", 60_000)
            .await
            .unwrap()
            .expect("a free lease is acquired");
        t.release_tournament_lease(id, &fence).await.unwrap();
        let taken = t
            .acquire_tournament_lease(id, "node-b", 60_000)
            .await
            .unwrap()
            .expect("a released lease is taken at once");
        assert_eq!((taken.node.as_str(), taken.epoch), ("node-b", 2));
        assert!(matches!(
            t.append_tournament(id, 1, &[json!({"n": 2})], Some(&fence))
                .await,
            Err(StoreError::Fenced { .. })
        ));
        // node-a's late release of its old epoch leaves node-b's lease alone.
        t.release_tournament_lease(id, &fence).await.unwrap();
        assert_eq!(
            t.tournament_lease_owner(id).await.unwrap().as_deref(),
            Some("node-b")
        );
        assert_eq!(
            t.acquire_tournament_lease(id, "node-a", 60_000)
                .await
                .unwrap(),
            None
        );
    }

    /// Finished tournaments are not restored: the unfinished ones come oldest first,
    /// however many finished ones are newer or older.
    pub async fn finished_tournaments_are_not_restored(h: &Harness) {
        let t = tournaments(h);
        let mut ids = Vec::new();
        for at in [1_000, 2_000, 3_000, 4_000] {
            let id = Uuid::now_v7();
            t.create_tournament(id, at, &json!({"n": 1})).await.unwrap();
            ids.push(id);
        }
        t.finish_tournament(ids[0], 5_000).await.unwrap();
        t.finish_tournament(ids[2], 5_000).await.unwrap();
        t.finish_tournament(ids[2], 6_000).await.unwrap();
        assert_eq!(
            t.unfinished_tournament_ids(10).await.unwrap(),
            vec![ids[1], ids[3]]
        );
        assert_eq!(t.unfinished_tournament_ids(1).await.unwrap(), vec![ids[1]]);
    }

    /// The claim loop's list: unfinished tournaments nobody directs (no lease, or an
    /// expired or released one), oldest first; directed and finished ones take no place
    /// in the limit.
    pub async fn only_unfinished_undirected_tournaments_are_claimable(h: &Harness) {
        let t = tournaments(h);
        let mut ids = Vec::new();
        for at in [1_000, 2_000, 3_000, 4_000] {
            let id = Uuid::now_v7();
            t.create_tournament(id, at, &json!({"n": 1})).await.unwrap();
            ids.push(id);
        }
        // The oldest finished, the second directed, the third's lease released.
        t.finish_tournament(ids[0], 5_000).await.unwrap();
        t.acquire_tournament_lease(ids[1], "node-a", 60_000)
            .await
            .unwrap()
            .expect("free");
        let fence = t
            .acquire_tournament_lease(ids[2], "node-a", 60_000)
            .await
            .unwrap()
            .expect("free");
        t.release_tournament_lease(ids[2], &fence).await.unwrap();
        assert_eq!(
            t.claimable_tournament_ids(10).await.unwrap(),
            vec![ids[2], ids[3]]
        );
        assert_eq!(t.claimable_tournament_ids(1).await.unwrap(), vec![ids[2]]);
    }

    /// SQLite has no leases: a fenced append is refused, an unfenced one works.
    pub async fn sqlite_refuses_fenced_appends(h: &Harness) {
        let t = tournaments(h);
        let id = Uuid::now_v7();
        t.create_tournament(id, 1_000, &json!({"n": 1}))
            .await
            .unwrap();
        let fence = Fence {
            room_code: "tournament".to_owned(),
            node: "a".to_owned(),
            epoch: 1,
        };
        assert!(matches!(
            t.append_tournament(id, 1, &[json!({"n": 2})], Some(&fence))
                .await,
            Err(StoreError::Unsupported(_))
        ));
        assert_eq!(t.tournament_log(id).await.unwrap().len(), 1);
    }
}

backend_tests!(
    [sqlite, postgres, memory]
    [
        logs_append_in_order_and_refuse_a_second_writer,
        tournaments_are_listed_newest_first,
        finished_tournaments_are_not_restored,
    ]
);

mod fenced {
    backend_tests!(
        [postgres, memory]
        [
            fenced_appends_stop_with_the_lease,
            a_released_lease_is_taken_at_once,
            only_unfinished_undirected_tournaments_are_claimable,
        ]
    );
}

mod unfenced {
    backend_tests!([sqlite][sqlite_refuses_fenced_appends]);
}
