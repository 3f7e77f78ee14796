//! Quick pairing's pool in the database (issue 26, cluster mode, PostgreSQL only):
//! tickets entered once per account, polled (`polled_ms` only forward), cancelled; the
//! matcher's lease and its fenced writes. SQLite and memory keep no pool
//! (`Store::pairing()` is `None`: a single node keeps its pool in memory).

#[macro_use]
mod common;

use common::Harness;
use parchis_store::{Entered, PairingStore, StoreError, StoredTicket};
use serde_json::json;
use uuid::Uuid;

fn ticket(id: &str, account: Option<Uuid>, polled_ms: i64) -> StoredTicket {
    StoredTicket {
        id: id.to_owned(),
        account,
        waiting: true,
        polled_ms,
        body: json!({"id": id}),
    }
}

mod cases {
    use super::*;

    pub async fn no_pool_without_a_cluster_database(h: &Harness) {
        assert!(h.store.pairing().is_none());
    }

    pub async fn tickets_are_entered_polled_left_and_written_under_the_lease(h: &Harness) {
        let p: &dyn PairingStore = h.store.pairing().expect("postgres keeps the pool");
        let ana = Uuid::now_v7();
        assert_eq!(
            p.enter_pairing(&ticket("t1", Some(ana), 100), 10)
                .await
                .unwrap(),
            Entered::Stored
        );
        // One waiting ticket per account; guests are not limited; at most `max`.
        assert_eq!(
            p.enter_pairing(&ticket("t2", Some(ana), 100), 10)
                .await
                .unwrap(),
            Entered::AlreadyWaiting
        );
        assert_eq!(
            p.enter_pairing(&ticket("g1", None, 100), 10).await.unwrap(),
            Entered::Stored
        );
        assert_eq!(
            p.enter_pairing(&ticket("g2", None, 100), 2).await.unwrap(),
            Entered::Full
        );
        // A poll moves `polled_ms` forward only.
        let polled = p.poll_pairing("t1", 500).await.unwrap().expect("held");
        assert_eq!((polled.polled_ms, polled.account), (500, Some(ana)));
        let polled = p.poll_pairing("t1", 200).await.unwrap().expect("held");
        assert_eq!(polled.polled_ms, 500);
        assert!(p.poll_pairing("nope", 1).await.unwrap().is_none());
        assert!(p.leave_pairing("g1").await.unwrap());
        assert!(!p.leave_pairing("g1").await.unwrap());

        // The lease: taken by a, refused to b while a holds it.
        let a = p
            .acquire_pairing_lease("node-a", 60_000)
            .await
            .unwrap()
            .expect("free");
        let again = p
            .acquire_pairing_lease("node-a", 60_000)
            .await
            .unwrap()
            .expect("ours");
        assert_eq!(again.epoch, a.epoch);
        assert!(p
            .acquire_pairing_lease("node-b", 60_000)
            .await
            .unwrap()
            .is_none());
        // a's write: t1 paired (no longer waiting: Ana may enter again), a new ticket,
        // a delete that a poll since outruns (kept).
        let paired = StoredTicket {
            waiting: false,
            body: json!({"paired": true}),
            ..ticket("t1", Some(ana), 100)
        };
        p.write_pairing(
            &a,
            &[ticket("n1", None, 600)],
            &[paired],
            &[("t1".to_owned(), 100)],
        )
        .await
        .unwrap();
        let rows = p.pairing_tickets().await.unwrap();
        let t1 = rows
            .iter()
            .find(|t| t.id == "t1")
            .expect("polled since: kept");
        assert_eq!((t1.waiting, t1.polled_ms), (false, 500));
        assert_eq!(t1.body, json!({"paired": true}));
        assert!(rows.iter().any(|t| t.id == "n1"));
        assert_eq!(
            p.enter_pairing(&ticket("t3", Some(ana), 700), 10)
                .await
                .unwrap(),
            Entered::Stored
        );
        // The lease expires; b takes it (epoch + 1) and a's writes are refused.
        p.acquire_pairing_lease("node-a", 1).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let b = p
            .acquire_pairing_lease("node-b", 60_000)
            .await
            .unwrap()
            .expect("expired");
        assert_eq!(b.epoch, a.epoch + 1);
        match p
            .write_pairing(&a, &[], &[], &[("n1".to_owned(), 600)])
            .await
        {
            Err(StoreError::Fenced { .. }) => {}
            other => panic!("a stale matcher must be fenced, got {other:?}"),
        }
        assert!(
            p.poll_pairing("n1", 601).await.unwrap().is_some(),
            "nothing deleted"
        );
        p.write_pairing(&b, &[], &[], &[("n1".to_owned(), 601)])
            .await
            .unwrap();
        assert!(p.poll_pairing("n1", 602).await.unwrap().is_none());
    }
}

backend_tests!([postgres][tickets_are_entered_polled_left_and_written_under_the_lease]);

mod single_node {
    backend_tests!([sqlite, memory][no_pool_without_a_cluster_database]);
}
