//! The accounts' behaviour (issue 26), the same on every backend: each case is written
//! once against `AccountStore` and instantiated by `backend_tests!` (tests/common) for
//! SQLite, PostgreSQL (`DATABASE_URL`) and memory.

#[macro_use]
mod common;

use common::{code, game, room, seat, Harness};
use parchis_store::{
    hash_token, AccountStore, Deletion, NewAccount, RoomStatus, SessionPool, StoreError,
};
use uuid::Uuid;

mod cases {
    use super::*;

    fn accounts(h: &Harness) -> &dyn AccountStore {
        h.store.accounts().expect("every backend keeps accounts")
    }

    /// A new account `name` (key: its lowercase) made at `at`, with codes `code-0`…`code-9`.
    fn new_account(name: &str, at: i64) -> NewAccount {
        NewAccount {
            id: Uuid::now_v7(),
            username: name.to_owned(),
            username_key: name.to_lowercase(),
            password_hash: format!("$argon2id$hash-of-{name}"),
            created_at_ms: at,
            recovery_code_hashes: (0..10).map(|i| hash_token(&format!("code-{i}"))).collect(),
        }
    }

    fn deletion(now_ms: i64) -> Deletion {
        Deletion {
            now_ms,
            reserve_until_ms: now_ms + 30 * 86_400_000,
            neutral_name: "deleted player".to_owned(),
        }
    }

    pub async fn accounts_are_created_once_per_key(h: &Harness) {
        let a = accounts(h);
        let ana = new_account("Ana_1", 1_000);
        a.create_account(&ana).await.expect("create");
        let got = a.account(ana.id).await.unwrap().expect("stored");
        assert_eq!(got.username, "Ana_1");
        assert_eq!(got.password_hash, ana.password_hash);
        assert_eq!(
            (got.created_at_ms, got.password_changed_at_ms),
            (1_000, 1_000)
        );
        assert_eq!((got.deleted_at_ms, got.banned_at_ms), (None, None));
        assert!(got.is_active());
        assert_eq!(a.account_by_key("ana_1").await.unwrap(), Some(got.clone()));
        assert_eq!(a.account_by_key("ana_2").await.unwrap(), None);
        assert_eq!(a.recovery_codes_left(ana.id).await.unwrap(), 10);

        // Another spelling with the same key is the same name: refused, nothing written.
        let twin = new_account("ANA_1", 2_000);
        match a.create_account(&twin).await {
            Err(StoreError::UsernameTaken(key)) => assert_eq!(key, "ana_1"),
            other => panic!("expected UsernameTaken, got {other:?}"),
        }
        assert_eq!(a.account(twin.id).await.unwrap(), None);
        assert_eq!(a.recovery_codes_left(twin.id).await.unwrap(), 0);
        match &a.session_pool() {
            SessionPool::Memory => assert_eq!(h.kind, common::Kind::Memory),
            SessionPool::Sqlite(_) => assert_eq!(h.kind, common::Kind::Sqlite),
            SessionPool::Postgres { schema, .. } => {
                assert_eq!(h.kind, common::Kind::Postgres);
                assert!(!schema.is_empty());
            }
        }
    }

    pub async fn recovery_codes_are_one_time(h: &Harness) {
        let a = accounts(h);
        let ana = new_account("ana", 1_000);
        a.create_account(&ana).await.unwrap();
        let code = hash_token("code-3");
        assert!(a
            .use_recovery_code(ana.id, &code, "new-hash", 2_000)
            .await
            .unwrap());
        let got = a.account(ana.id).await.unwrap().unwrap();
        assert_eq!(
            (got.password_hash.as_str(), got.password_changed_at_ms),
            ("new-hash", 2_000)
        );
        assert_eq!(a.recovery_codes_left(ana.id).await.unwrap(), 9);
        // Spent, unknown, or another account's: refused and nothing changes.
        for (id, code) in [
            (ana.id, code.clone()),
            (ana.id, hash_token("code-10")),
            (Uuid::now_v7(), hash_token("code-4")),
        ] {
            assert!(!a
                .use_recovery_code(id, &code, "other", 3_000)
                .await
                .unwrap());
        }
        let got = a.account(ana.id).await.unwrap().unwrap();
        assert_eq!(got.password_hash, "new-hash");
        assert_eq!(a.recovery_codes_left(ana.id).await.unwrap(), 9);
    }

    pub async fn tokens_expire_and_fall_with_the_password(h: &Harness) {
        let a = accounts(h);
        let ana = new_account("ana", 1_000);
        a.create_account(&ana).await.unwrap();
        let (t1, t2) = (hash_token("t1"), hash_token("t2"));
        a.insert_token(&t1, ana.id, 1_000).await.unwrap();
        a.insert_token(&t2, ana.id, 1_000).await.unwrap();
        let idle = 10_000;
        let got = a.token_account(&t1, 5_000, idle).await.unwrap();
        assert_eq!(got.map(|r| r.id), Some(ana.id));
        assert_eq!(
            a.token_account(&hash_token("t3"), 5_000, idle)
                .await
                .unwrap(),
            None
        );
        // Used at 5 000 (more than a minute after 1 000? no: not touched), so idle from 1 000.
        assert_eq!(a.token_account(&t2, 11_001, idle).await.unwrap(), None);
        a.delete_token(&t1).await.unwrap();
        assert_eq!(a.token_account(&t1, 5_000, idle).await.unwrap(), None);

        // A token used after a minute is touched: still alive an idle period later.
        let t4 = hash_token("t4");
        a.insert_token(&t4, ana.id, 1_000).await.unwrap();
        assert!(a
            .token_account(&t4, 61_000, 70_000)
            .await
            .unwrap()
            .is_some());
        assert!(a
            .token_account(&t4, 130_000, 70_000)
            .await
            .unwrap()
            .is_some());

        assert!(a.set_password(ana.id, "h2", 140_000).await.unwrap());
        assert_eq!(a.token_account(&t4, 140_001, 70_000).await.unwrap(), None);
        assert!(!a.set_password(Uuid::now_v7(), "h2", 1).await.unwrap());
    }

    // Over 80 lines: one scenario (a seat, a game, the deletion and what it leaves) in order.
    pub async fn deletion_keeps_games_and_reserves_the_name(h: &Harness) {
        let a = accounts(h);
        let s = &h.store;
        let ana = new_account("ana", 1_000);
        let luis = new_account("luis", 1_000);
        a.create_account(&ana).await.unwrap();
        a.create_account(&luis).await.unwrap();
        let c = code();
        s.create_room(&room(&c, RoomStatus::Open, 1_000))
            .await
            .unwrap();
        let mut red = seat(&c, "red", "ana", true, 1_100);
        red.account_id = Some(ana.id);
        let blue = seat(&c, "blue", "Guest", false, 1_200);
        s.upsert_seat(&red).await.unwrap();
        s.upsert_seat(&blue).await.unwrap();
        let g = game(&c, 1_300);
        s.create_game(&g).await.unwrap();
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.seats, vec![red.clone(), blue.clone()]);
        assert_eq!(a.account_games(ana.id, 10).await.unwrap(), vec![g.clone()]);
        a.insert_token(&hash_token("t"), ana.id, 1_000)
            .await
            .unwrap();
        a.block(ana.id, luis.id, 1_000).await.unwrap();
        a.block(luis.id, ana.id, 1_000).await.unwrap();

        assert!(a.delete_account(ana.id, &deletion(5_000)).await.unwrap());
        assert!(!a.delete_account(ana.id, &deletion(6_000)).await.unwrap());
        let gone = a.account(ana.id).await.unwrap().expect("row kept");
        assert_eq!(gone.username, "deleted player");
        assert_eq!(gone.password_hash, "");
        assert_eq!(gone.deleted_at_ms, Some(5_000));
        assert!(!gone.is_active());
        assert_eq!(a.account_by_key("ana").await.unwrap(), None);
        assert_eq!(a.recovery_codes_left(ana.id).await.unwrap(), 0);
        assert_eq!(
            a.token_account(&hash_token("t"), 5_001, 100_000)
                .await
                .unwrap(),
            None
        );
        assert_eq!(a.blocked(luis.id).await.unwrap(), Vec::<Uuid>::new());
        assert!(!a.set_password(ana.id, "x", 6_000).await.unwrap());

        // The game stays readable; the seat has the neutral name and no account.
        let snap = s.get_room(&c).await.unwrap().unwrap();
        let mut scrubbed = red.clone();
        scrubbed.display_name = "deleted player".to_owned();
        scrubbed.account_id = None;
        assert_eq!(snap.seats, vec![scrubbed, blue]);
        assert_eq!(s.get_game(g.id).await.unwrap().map(|(g, _)| g), Some(g));

        // The name is reserved for its period, then free.
        let early = new_account("ANA", 5_000 + 30 * 86_400_000 - 1);
        assert!(matches!(
            a.create_account(&early).await,
            Err(StoreError::UsernameTaken(_))
        ));
        assert!(matches!(
            a.rename_account(luis.id, "Ana", "ana", 6_000).await,
            Err(StoreError::UsernameTaken(_))
        ));
        let later = new_account("ANA", 5_000 + 30 * 86_400_000);
        a.create_account(&later).await.expect("reservation over");
        assert_eq!(
            a.account_by_key("ana").await.unwrap().map(|r| r.id),
            Some(later.id)
        );
    }

    pub async fn rename_and_ban(h: &Harness) {
        let a = accounts(h);
        let s = &h.store;
        let ana = new_account("ana", 1_000);
        let luis = new_account("luis", 1_000);
        a.create_account(&ana).await.unwrap();
        a.create_account(&luis).await.unwrap();
        let c = code();
        s.create_room(&room(&c, RoomStatus::Open, 1_000))
            .await
            .unwrap();
        let mut red = seat(&c, "red", "ana", true, 1_100);
        red.account_id = Some(ana.id);
        s.upsert_seat(&red).await.unwrap();

        assert!(matches!(
            a.rename_account(ana.id, "Luis", "luis", 2_000).await,
            Err(StoreError::UsernameTaken(_))
        ));
        assert!(a
            .rename_account(ana.id, "Anita", "anita", 2_000)
            .await
            .unwrap());
        assert!(!a
            .rename_account(Uuid::now_v7(), "x", "x", 2_000)
            .await
            .unwrap());
        assert_eq!(
            a.account_by_key("anita").await.unwrap().map(|r| r.username),
            Some("Anita".to_owned())
        );
        assert_eq!(a.account_by_key("ana").await.unwrap(), None);
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.seats[0].display_name, "Anita");
        assert_eq!(snap.seats[0].account_id, Some(ana.id));

        let t = hash_token("t");
        a.insert_token(&t, ana.id, 2_000).await.unwrap();
        assert!(a.set_banned(ana.id, Some(3_000)).await.unwrap());
        let banned = a.account(ana.id).await.unwrap().unwrap();
        assert_eq!(banned.banned_at_ms, Some(3_000));
        assert!(!banned.is_active());
        assert_eq!(a.token_account(&t, 3_001, 100_000).await.unwrap(), None);
        assert!(a.set_banned(ana.id, None).await.unwrap());
        assert!(a.account(ana.id).await.unwrap().unwrap().is_active());
    }

    pub async fn blocks_are_kept_in_order(h: &Harness) {
        let a = accounts(h);
        let [ana, luis, marta] = ["ana", "luis", "marta"].map(|n| new_account(n, 1_000));
        for x in [&ana, &luis, &marta] {
            a.create_account(x).await.unwrap();
        }
        a.block(ana.id, marta.id, 2_000).await.unwrap();
        a.block(ana.id, luis.id, 3_000).await.unwrap();
        a.block(ana.id, marta.id, 4_000).await.unwrap();
        assert_eq!(a.blocked(ana.id).await.unwrap(), vec![marta.id, luis.id]);
        assert_eq!(a.blocked(luis.id).await.unwrap(), Vec::<Uuid>::new());
        assert!(a.unblock(ana.id, marta.id).await.unwrap());
        assert!(!a.unblock(ana.id, marta.id).await.unwrap());
        assert_eq!(a.blocked(ana.id).await.unwrap(), vec![luis.id]);
    }

    pub async fn account_games_newest_first(h: &Harness) {
        let a = accounts(h);
        let s = &h.store;
        let ana = new_account("ana", 1_000);
        a.create_account(&ana).await.unwrap();
        let mut expected = Vec::new();
        for i in 0..3 {
            let c = code();
            s.create_room(&room(&c, RoomStatus::Open, 1_000))
                .await
                .unwrap();
            let mut st = seat(&c, "red", "ana", true, 1_100);
            st.account_id = (i != 1).then_some(ana.id);
            s.upsert_seat(&st).await.unwrap();
            let g = game(&c, 2_000 + i);
            s.create_game(&g).await.unwrap();
            if i != 1 {
                expected.insert(0, g);
            }
        }
        assert_eq!(a.account_games(ana.id, 10).await.unwrap(), expected);
        assert_eq!(a.account_games(ana.id, 1).await.unwrap(), expected[..1]);
        assert_eq!(
            a.account_games(Uuid::now_v7(), 10).await.unwrap(),
            Vec::new()
        );
    }
}

backend_tests!(
    [sqlite, postgres, memory]
    [
        accounts_are_created_once_per_key,
        recovery_codes_are_one_time,
        tokens_expire_and_fall_with_the_password,
        deletion_keeps_games_and_reserves_the_name,
        rename_and_ban,
        blocks_are_kept_in_order,
        account_games_newest_first,
    ]
);
