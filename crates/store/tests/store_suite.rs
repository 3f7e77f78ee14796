//! One behavioural suite for every backend.
//!
//! Each case in `cases` is written once against `Arc<dyn Store>` and instantiated by
//! `backend_tests!` (tests/common) for SQLite (always, in a temp dir), PostgreSQL (when `DATABASE_URL` is set, else
//! skipped with a message) and the in-memory store.
//!
//! Why one long file: it is a list of independent cases, each written once for every backend; one test binary
//! also keeps the build short.

#[macro_use]
mod common;

use std::sync::Arc;

use common::{code, ev, game, room, seat, seqs, Harness, Kind};
use parchis_store::{
    GameEnd, GameQuery, GameRecord, GameStart, RoomStatus, RoomStatusUpdate, StoreError,
};
use serde_json::json;
use uuid::Uuid;

mod cases {
    use super::*;

    /// A new playing room with `games` games in it; their ids, in creation order.
    async fn playing_room_with_games(h: &Harness, games: usize) -> Vec<Uuid> {
        let c = code();
        h.store
            .create_room(&room(&c, RoomStatus::Playing, 1))
            .await
            .unwrap();
        let mut ids = Vec::new();
        for i in 0..games {
            let g = game(&c, 10 + i as i64);
            h.store.create_game(&g).await.unwrap();
            ids.push(g.id);
        }
        ids
    }

    // Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
    pub async fn rooms_and_seats_round_trip(h: &Harness) {
        let s = &h.store;
        let c = code();
        let r = room(&c, RoomStatus::Open, 1_000);
        s.create_room(&r).await.expect("create room");

        let snap = s
            .get_room(&c)
            .await
            .expect("get room")
            .expect("room exists");
        assert_eq!(snap.room, r);
        assert!(snap.seats.is_empty());
        assert_eq!(snap.game, None);
        assert!(snap.events.is_empty());

        match s.create_room(&room(&c, RoomStatus::Playing, 2_000)).await {
            Err(StoreError::RoomExists(got)) => assert_eq!(got, c),
            other => panic!("expected RoomExists, got {other:?}"),
        }
        // The failed create changed nothing.
        assert_eq!(s.get_room(&c).await.unwrap().unwrap().room, r);

        // Joined out of colour order; listing is by joined_at_ms then colour.
        let red = seat(&c, "red", "Ana", true, 1_100);
        let blue = seat(&c, "blue", "Luis", false, 1_200);
        let green = seat(&c, "green", "Marta", false, 1_200);
        for st in [&blue, &red, &green] {
            s.upsert_seat(st).await.expect("upsert seat");
        }
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.seats, vec![red.clone(), blue.clone(), green.clone()]);

        // Upsert replaces the seat with the same colour.
        let blue2 = seat(&c, "blue", "Luisa", false, 1_300);
        assert_ne!(blue2.token_hash, blue.token_hash);
        s.upsert_seat(&blue2).await.expect("replace seat");
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.seats, vec![red.clone(), green.clone(), blue2.clone()]);
        assert_eq!(snap.seats[2].token_hash.len(), 64);

        assert!(s.delete_seat(&c, "green").await.expect("delete seat"));
        assert!(!s.delete_seat(&c, "green").await.expect("delete again"));
        assert!(!s
            .delete_seat("NOPE", "red")
            .await
            .expect("delete in missing room"));
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.seats, vec![red.clone(), blue2.clone()]);

        // A bot seat keeps its level; replacing a person by a bot (and back) updates it.
        let mut bot = seat(&c, "yellow", "Greedy bot", false, 1_400);
        bot.bot = Some("greedy".to_owned());
        s.upsert_seat(&bot).await.expect("upsert bot seat");
        let mut blue_bot = blue2.clone();
        blue_bot.bot = Some("expectimax".to_owned());
        s.upsert_seat(&blue_bot).await.expect("bot takes over blue");
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.seats, vec![red.clone(), blue_bot, bot.clone()]);
        assert_eq!(snap.seats[1].bot.as_deref(), Some("expectimax"));
        assert_eq!(snap.seats[2].bot.as_deref(), Some("greedy"));
        s.upsert_seat(&blue2).await.expect("person again");
        assert!(s.delete_seat(&c, "yellow").await.expect("delete bot seat"));
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.seats, vec![red, blue2]);
        assert_eq!(snap.seats[1].bot, None);

        match s.upsert_seat(&seat("MISSING1", "red", "X", false, 1)).await {
            Err(StoreError::RoomNotFound(got)) => assert_eq!(got, "MISSING1"),
            other => panic!("expected RoomNotFound, got {other:?}"),
        }

        let update = RoomStatusUpdate {
            status: RoomStatus::Playing,
            started_at_ms: Some(5_000),
            finished_at_ms: None,
            updated_at_ms: 5_000,
        };
        s.update_room_status(&c, update)
            .await
            .expect("update status");
        let got = s.get_room(&c).await.unwrap().unwrap().room;
        assert_eq!(got.status, RoomStatus::Playing);
        assert_eq!(got.started_at_ms, Some(5_000));
        assert_eq!(got.finished_at_ms, None);
        assert_eq!(got.updated_at_ms, 5_000);
        assert_eq!(got.created_at_ms, 1_000);
        assert_eq!(got.settings, r.settings);

        match s.update_room_status("MISSING2", update).await {
            Err(StoreError::RoomNotFound(got)) => assert_eq!(got, "MISSING2"),
            other => panic!("expected RoomNotFound, got {other:?}"),
        }
        assert_eq!(s.get_room("MISSING3").await.expect("get missing"), None);
    }

    pub async fn append_and_load_in_order(h: &Harness) {
        let s = &h.store;
        let c = code();
        s.create_room(&room(&c, RoomStatus::Playing, 10))
            .await
            .unwrap();
        let g = game(&c, 20);
        s.create_game(&g).await.expect("create game");

        s.append_events(g.id, vec![ev(1, "a"), ev(2, "a"), ev(3, "a")])
            .await
            .expect("batch 1");
        s.append_events(g.id, vec![ev(4, "b")])
            .await
            .expect("batch 2");
        // Given out of order; read back by seq.
        s.append_events(g.id, vec![ev(6, "c"), ev(5, "c")])
            .await
            .expect("batch 3");
        s.append_events(g.id, vec![])
            .await
            .expect("empty batch is a no-op");

        let (got_game, events) = s.get_game(g.id).await.expect("get game").expect("exists");
        assert_eq!(got_game, g);
        assert_eq!(seqs(&events), vec![1, 2, 3, 4, 5, 6]);
        let expected = vec![
            ev(1, "a"),
            ev(2, "a"),
            ev(3, "a"),
            ev(4, "b"),
            ev(5, "c"),
            ev(6, "c"),
        ];
        assert_eq!(events, expected);

        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.game, Some(g.clone()));
        assert_eq!(snap.events, expected);

        let ghost = Uuid::new_v4();
        match s.append_events(ghost, vec![ev(1, "x")]).await {
            Err(StoreError::GameNotFound(id)) => assert_eq!(id, ghost),
            other => panic!("expected GameNotFound, got {other:?}"),
        }
        assert_eq!(s.get_game(ghost).await.expect("get missing game"), None);
    }

    pub async fn duplicate_seq_rejects_whole_batch(h: &Harness) {
        let s = &h.store;
        let c = code();
        s.create_room(&room(&c, RoomStatus::Playing, 10))
            .await
            .unwrap();
        let g = game(&c, 20);
        s.create_game(&g).await.unwrap();
        s.append_events(g.id, vec![ev(1, "a"), ev(2, "a")])
            .await
            .unwrap();

        // 3 and 4 are new, 2 is not: nothing of the batch may be written.
        match s
            .append_events(g.id, vec![ev(3, "b"), ev(2, "b"), ev(4, "b")])
            .await
        {
            Err(StoreError::DuplicateSeq { game_id, seq }) => {
                assert_eq!(game_id, g.id);
                assert_eq!(seq, 2);
            }
            other => panic!("expected DuplicateSeq, got {other:?}"),
        }
        // A seq repeated inside one batch.
        match s.append_events(g.id, vec![ev(5, "c"), ev(5, "d")]).await {
            Err(StoreError::DuplicateSeq { game_id, seq }) => {
                assert_eq!(game_id, g.id);
                assert_eq!(seq, 5);
            }
            other => panic!("expected DuplicateSeq, got {other:?}"),
        }
        let (_, events) = s.get_game(g.id).await.unwrap().unwrap();
        assert_eq!(events, vec![ev(1, "a"), ev(2, "a")]);

        // The log is still writable and the rejected seqs are free.
        s.append_events(g.id, vec![ev(3, "e"), ev(4, "e")])
            .await
            .expect("append after rejection");
        let (_, events) = s.get_game(g.id).await.unwrap().unwrap();
        assert_eq!(events, vec![ev(1, "a"), ev(2, "a"), ev(3, "e"), ev(4, "e")]);

        // The same seq in another game is fine.
        let g2 = game(&c, 30);
        s.create_game(&g2).await.unwrap();
        s.append_events(g2.id, vec![ev(1, "other")])
            .await
            .expect("same seq, other game");
        assert_eq!(
            s.get_game(g2.id).await.unwrap().unwrap().1,
            vec![ev(1, "other")]
        );
    }

    // Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
    pub async fn load_unfinished_returns_exactly_unfinished_rooms(h: &Harness) {
        let s = &h.store;
        assert!(s.load_unfinished().await.expect("load empty").is_empty());

        // Created in this order: open (no game), finished, playing, playing with two games.
        let (a, b, c, d) = (code(), code(), code(), code());
        s.create_room(&room(&a, RoomStatus::Open, 100))
            .await
            .unwrap();
        s.create_room(&room(&b, RoomStatus::Finished, 200))
            .await
            .unwrap();
        s.create_room(&room(&c, RoomStatus::Playing, 300))
            .await
            .unwrap();
        s.create_room(&room(&d, RoomStatus::Open, 400))
            .await
            .unwrap();
        s.upsert_seat(&seat(&a, "yellow", "A1", true, 101))
            .await
            .unwrap();
        s.upsert_seat(&seat(&b, "yellow", "B1", true, 201))
            .await
            .unwrap();
        s.upsert_seat(&seat(&c, "red", "C1", true, 301))
            .await
            .unwrap();
        s.upsert_seat(&seat(&c, "green", "C2", false, 302))
            .await
            .unwrap();
        s.upsert_seat(&seat(&d, "blue", "D1", true, 401))
            .await
            .unwrap();

        let gb = game(&b, 210);
        s.create_game(&gb).await.unwrap();
        s.append_events(gb.id, vec![ev(1, "b")]).await.unwrap();
        s.finish_game(gb.id, &json!({"winner": "yellow"}), "completed", 290)
            .await
            .unwrap();

        let gc = game(&c, 310);
        s.create_game(&gc).await.unwrap();
        s.append_events(gc.id, vec![ev(1, "c"), ev(2, "c")])
            .await
            .unwrap();
        s.append_events(gc.id, vec![ev(3, "c")]).await.unwrap();

        // d: an old finished game and a newer running one; only the newer is current.
        let d_old = game(&d, 410);
        let d_new = game(&d, 420);
        s.create_game(&d_new).await.unwrap();
        s.create_game(&d_old).await.unwrap();
        s.append_events(d_old.id, vec![ev(1, "d-old"), ev(2, "d-old")])
            .await
            .unwrap();
        s.finish_game(d_old.id, &json!({"winner": "blue"}), "completed", 415)
            .await
            .unwrap();
        s.append_events(d_new.id, vec![ev(1, "d-new")])
            .await
            .unwrap();
        s.update_room_status(
            &d,
            RoomStatusUpdate {
                status: RoomStatus::Playing,
                started_at_ms: Some(420),
                finished_at_ms: None,
                updated_at_ms: 420,
            },
        )
        .await
        .unwrap();

        let snaps = s.load_unfinished().await.expect("load unfinished");
        let codes: Vec<&str> = snaps.iter().map(|x| x.room.code.as_str()).collect();
        assert_eq!(codes, vec![a.as_str(), c.as_str(), d.as_str()]);

        let sa = &snaps[0];
        assert_eq!(sa.room.status, RoomStatus::Open);
        assert_eq!(sa.seats, vec![seat(&a, "yellow", "A1", true, 101)]);
        assert_eq!(sa.game, None);
        assert!(sa.events.is_empty());

        let sc = &snaps[1];
        assert_eq!(sc.room, room(&c, RoomStatus::Playing, 300));
        assert_eq!(
            sc.seats,
            vec![
                seat(&c, "red", "C1", true, 301),
                seat(&c, "green", "C2", false, 302)
            ]
        );
        assert_eq!(sc.game, Some(gc.clone()));
        assert_eq!(sc.events, vec![ev(1, "c"), ev(2, "c"), ev(3, "c")]);

        let sd = &snaps[2];
        assert_eq!(sd.room.status, RoomStatus::Playing);
        assert_eq!(sd.room.started_at_ms, Some(420));
        assert_eq!(sd.game.as_ref().map(|g| g.id), Some(d_new.id));
        assert_eq!(sd.events, vec![ev(1, "d-new")]);

        // Finishing c's room removes it from the set.
        s.update_room_status(
            &c,
            RoomStatusUpdate {
                status: RoomStatus::Finished,
                started_at_ms: Some(310),
                finished_at_ms: Some(999),
                updated_at_ms: 999,
            },
        )
        .await
        .unwrap();
        let codes: Vec<String> = s
            .load_unfinished()
            .await
            .unwrap()
            .into_iter()
            .map(|x| x.room.code)
            .collect();
        assert_eq!(codes, vec![a.clone(), d.clone()]);

        // A finished room is still readable on its own, with its last game.
        let sb = s.get_room(&b).await.unwrap().expect("finished room");
        assert_eq!(sb.room.status, RoomStatus::Finished);
        assert_eq!(sb.game.as_ref().map(|g| g.id), Some(gb.id));
        assert_eq!(sb.events, vec![ev(1, "b")]);
    }

    pub async fn finish_game_stores_result_once(h: &Harness) {
        let s = &h.store;
        let c = code();
        s.create_room(&room(&c, RoomStatus::Playing, 10))
            .await
            .unwrap();
        let g = game(&c, 20);
        s.create_game(&g).await.unwrap();
        s.set_deadline(g.id, Some(50_000)).await.unwrap();
        let (before, _) = s.get_game(g.id).await.unwrap().unwrap();
        assert!(!before.is_finished());

        let result = json!({"standings": ["red", "blue"], "turns": 87});
        s.finish_game(g.id, &result, "completed", 60_000)
            .await
            .expect("finish");
        let (after, _) = s.get_game(g.id).await.unwrap().unwrap();
        assert!(after.is_finished());
        assert_eq!(after.finished_at_ms, Some(60_000));
        assert_eq!(after.result, Some(result.clone()));
        assert_eq!(after.reason.as_deref(), Some("completed"));
        assert_eq!(after.deadline_ms, None, "finishing clears the turn clock");
        assert_eq!(after.rules, g.rules);
        assert_eq!(after.created_at_ms, 20);

        match s
            .finish_game(g.id, &json!({"other": true}), "abandoned", 70_000)
            .await
        {
            Err(StoreError::GameFinished(id)) => assert_eq!(id, g.id),
            other => panic!("expected GameFinished, got {other:?}"),
        }
        let (again, _) = s.get_game(g.id).await.unwrap().unwrap();
        assert_eq!(again, after, "the first result is kept");

        let ghost = Uuid::new_v4();
        match s.finish_game(ghost, &json!(null), "x", 1).await {
            Err(StoreError::GameNotFound(id)) => assert_eq!(id, ghost),
            other => panic!("expected GameNotFound, got {other:?}"),
        }
    }

    pub async fn list_games_oldest_first(h: &Harness) {
        let s = &h.store;
        let (c, other) = (code(), code());
        s.create_room(&room(&c, RoomStatus::Playing, 10))
            .await
            .unwrap();
        s.create_room(&room(&other, RoomStatus::Playing, 10))
            .await
            .unwrap();
        let g2 = game(&c, 200);
        let g1 = game(&c, 100);
        let g3 = game(&c, 300);
        for g in [&g2, &g3, &g1] {
            s.create_game(g).await.unwrap();
        }
        s.create_game(&game(&other, 150)).await.unwrap();

        let listed = s.list_games(&c).await.expect("list games");
        assert_eq!(listed, vec![g1.clone(), g2.clone(), g3.clone()]);
        assert!(s
            .list_games("NOROOM")
            .await
            .expect("list unknown")
            .is_empty());

        match s.create_game(&g2).await {
            Err(StoreError::GameExists(id)) => assert_eq!(id, g2.id),
            other => panic!("expected GameExists, got {other:?}"),
        }
        match s.create_game(&game("NOROOM", 1)).await {
            Err(StoreError::RoomNotFound(got)) => assert_eq!(got, "NOROOM"),
            other => panic!("expected RoomNotFound, got {other:?}"),
        }
        assert_eq!(s.list_games(&c).await.unwrap().len(), 3);
    }

    /// `find_games`: every filter, their combination, newest-first order with ties broken
    /// by id, and paging by the last key of a page until it runs out.
    // Over 80 lines: one scenario, its steps and their checks in order (a test reads top to bottom).
    pub async fn find_games_filters_and_pages(h: &Harness) {
        let s = &h.store;
        let (c, other) = (code(), code());
        for r in [&c, &other] {
            s.create_room(&room(r, RoomStatus::Playing, 10))
                .await
                .unwrap();
        }
        let with = |room: &str, at: i64, preset: &str| GameRecord {
            preset: preset.to_owned(),
            ..game(room, at)
        };
        let g1 = with(&c, 100, "classic");
        let g2 = with(&c, 200, "online");
        let g3 = with(&other, 300, "classic");
        let g4 = with(&other, 300, "classic");
        let g5 = with(&c, 400, "classic+two-out");
        for g in [&g1, &g2, &g3, &g4, &g5] {
            s.create_game(g).await.unwrap();
        }
        for (g, reason, at) in [
            (&g1, "completed", 150),
            (&g3, "abandoned", 350),
            (&g5, "closed_by_admin", 450),
        ] {
            s.finish_game(g.id, &json!({"reason": reason}), reason, at)
                .await
                .unwrap();
        }
        let q = |f: &dyn Fn(&mut GameQuery)| {
            let mut query = GameQuery {
                limit: 10,
                ..GameQuery::default()
            };
            f(&mut query);
            query
        };
        let ids = |games: Vec<GameRecord>| games.into_iter().map(|g| g.id).collect::<Vec<_>>();
        let (hi, lo) = if g3.id > g4.id {
            (&g3, &g4)
        } else {
            (&g4, &g3)
        };
        let newest_first = vec![g5.id, hi.id, lo.id, g2.id, g1.id];
        assert_eq!(ids(s.find_games(&q(&|_| {})).await.unwrap()), newest_first);

        // Pages of 2, each after the previous page's last key.
        let mut seen = Vec::new();
        let mut before = None;
        for expected in [2, 2, 1, 0] {
            let page = s
                .find_games(&q(&|query| {
                    query.limit = 2;
                    query.before = before;
                }))
                .await
                .unwrap();
            assert_eq!(page.len(), expected, "page after {before:?}");
            before = page.last().map(|g| (g.created_at_ms, g.id));
            seen.extend(ids(page));
        }
        assert_eq!(seen, newest_first, "pages cover everything once, in order");

        let preset = q(&|query| query.preset = Some("classic".into()));
        assert_eq!(
            ids(s.find_games(&preset).await.unwrap()),
            vec![hi.id, lo.id, g1.id]
        );
        let finished = q(&|query| query.finished = Some(true));
        assert_eq!(
            ids(s.find_games(&finished).await.unwrap()),
            vec![g5.id, g3.id, g1.id]
        );
        let running = q(&|query| query.finished = Some(false));
        assert_eq!(
            ids(s.find_games(&running).await.unwrap()),
            vec![g4.id, g2.id]
        );
        let abandoned = q(&|query| query.reason = Some("abandoned".into()));
        assert_eq!(ids(s.find_games(&abandoned).await.unwrap()), vec![g3.id]);
        let since = q(&|query| query.since_ms = Some(300));
        assert_eq!(
            ids(s.find_games(&since).await.unwrap()),
            vec![g5.id, hi.id, lo.id]
        );
        let room_done = q(&|query| {
            query.room_code = Some(c.clone());
            query.finished = Some(true);
        });
        assert_eq!(
            ids(s.find_games(&room_done).await.unwrap()),
            vec![g5.id, g1.id]
        );
        let nothing = q(&|query| query.room_code = Some("NOROOM".into()));
        assert!(s.find_games(&nothing).await.unwrap().is_empty());

        // Public rooms only: a private room's game is left out of a listing, but found
        // by its room's code; "public" absent or true is public, only false is not.
        let private = code();
        let mut r = room(&private, RoomStatus::Playing, 500);
        r.settings = json!({"public": false, "seats": 2});
        s.create_room(&r).await.unwrap();
        let explicit = code();
        let mut r = room(&explicit, RoomStatus::Playing, 500);
        r.settings = json!({"public": true});
        s.create_room(&r).await.unwrap();
        let (hidden, shown) = (game(&private, 600), game(&explicit, 700));
        for g in [&hidden, &shown] {
            s.create_game(g).await.unwrap();
        }
        let all = ids(s.find_games(&q(&|_| {})).await.unwrap());
        assert_eq!(&all[..2], &[shown.id, hidden.id]);
        let listed = ids(s
            .find_games(&q(&|query| query.public_only = true))
            .await
            .unwrap());
        let mut expected = vec![shown.id];
        expected.extend(&newest_first);
        assert_eq!(listed, expected, "the private room's game is not listed");
        let by_code = q(&|query| query.room_code = Some(private.clone()));
        assert_eq!(ids(s.find_games(&by_code).await.unwrap()), vec![hidden.id]);
    }

    pub async fn deadlines_are_set_and_cleared(h: &Harness) {
        let s = &h.store;
        let c = code();
        s.create_room(&room(&c, RoomStatus::Playing, 10))
            .await
            .unwrap();
        let g = game(&c, 20);
        s.create_game(&g).await.unwrap();
        assert_eq!(s.get_game(g.id).await.unwrap().unwrap().0.deadline_ms, None);

        let deadline = 1_893_456_000_123_i64; // beyond i32 range on purpose
        s.set_deadline(g.id, Some(deadline))
            .await
            .expect("set deadline");
        assert_eq!(
            s.get_game(g.id).await.unwrap().unwrap().0.deadline_ms,
            Some(deadline)
        );
        let snaps = s.load_unfinished().await.unwrap();
        let snap = snaps
            .iter()
            .find(|x| x.room.code == c)
            .expect("room loaded");
        assert_eq!(
            snap.game.as_ref().and_then(|g| g.deadline_ms),
            Some(deadline)
        );

        s.set_deadline(g.id, Some(deadline + 30_000)).await.unwrap();
        assert_eq!(
            s.get_game(g.id).await.unwrap().unwrap().0.deadline_ms,
            Some(deadline + 30_000)
        );
        s.set_deadline(g.id, None).await.expect("clear deadline");
        assert_eq!(s.get_game(g.id).await.unwrap().unwrap().0.deadline_ms, None);

        let ghost = Uuid::new_v4();
        match s.set_deadline(ghost, Some(1)).await {
            Err(StoreError::GameNotFound(id)) => assert_eq!(id, ghost),
            other => panic!("expected GameNotFound, got {other:?}"),
        }
    }

    /// 50 rooms append 40 events each, one at a time, all at once; every event must be
    /// stored exactly once and read back in order.
    pub async fn many_rooms_append_concurrently(h: &Harness) {
        const ROOMS: usize = 50;
        const EVENTS: i64 = 40;
        let mut games = Vec::new();
        for i in 0..ROOMS {
            let c = code();
            h.store
                .create_room(&room(&c, RoomStatus::Playing, i as i64))
                .await
                .unwrap();
            let g = game(&c, 1_000 + i as i64);
            h.store.create_game(&g).await.unwrap();
            games.push((c, g.id));
        }
        let start = Arc::new(tokio::sync::Barrier::new(ROOMS));
        let mut tasks = tokio::task::JoinSet::new();
        for (i, (_, game_id)) in games.iter().cloned().enumerate() {
            let store = Arc::clone(&h.store);
            let start = Arc::clone(&start);
            tasks.spawn(async move {
                start.wait().await;
                let tag = format!("room-{i}");
                let mut seq = 1;
                while seq <= EVENTS {
                    // Mostly single events, sometimes a pair, as a game would.
                    if seq % 7 == 0 && seq < EVENTS {
                        store
                            .append_events(game_id, vec![ev(seq, &tag), ev(seq + 1, &tag)])
                            .await
                            .expect("append pair");
                        seq += 2;
                    } else {
                        store
                            .append_events(game_id, vec![ev(seq, &tag)])
                            .await
                            .expect("append");
                        seq += 1;
                    }
                    if seq % 10 == 0 {
                        store
                            .set_deadline(game_id, Some(seq))
                            .await
                            .expect("deadline");
                    }
                }
            });
        }
        while let Some(joined) = tasks.join_next().await {
            joined.expect("append task panicked");
        }

        let expected_seqs: Vec<i64> = (1..=EVENTS).collect();
        for (i, (_, game_id)) in games.iter().enumerate() {
            let (g, events) = h.store.get_game(*game_id).await.unwrap().expect("game");
            assert_eq!(seqs(&events), expected_seqs, "room {i}");
            let tag = format!("room-{i}");
            for e in &events {
                assert_eq!(*e, ev(e.seq, &tag), "room {i} event {}", e.seq);
            }
            assert_eq!(g.deadline_ms, Some(40));
        }
        let snaps = h.store.load_unfinished().await.unwrap();
        assert_eq!(snaps.len(), ROOMS);
        let total: usize = snaps.iter().map(|x| x.events.len()).sum();
        assert_eq!(total, ROOMS * EVENTS as usize);
    }

    /// Racing writers submit the same seq: in whatever groups they land, exactly one per game
    /// wins, the loser gets DuplicateSeq, and no innocent neighbour fails.
    pub async fn group_commit_isolates_failures(h: &Harness) {
        const GAMES: usize = 30;
        const CONTESTED: usize = 10;
        let ids = playing_room_with_games(h, GAMES).await;
        let ghost = Uuid::new_v4();
        let writers = GAMES + CONTESTED + 1;
        let start = Arc::new(tokio::sync::Barrier::new(writers));
        let mut tasks = tokio::task::JoinSet::new();
        // One writer per game, a second writer for the first CONTESTED games, one for a ghost.
        let jobs = ids
            .iter()
            .map(|id| (*id, "first"))
            .chain(ids.iter().take(CONTESTED).map(|id| (*id, "second")))
            .chain(std::iter::once((ghost, "ghost")));
        for (id, tag) in jobs {
            let store = Arc::clone(&h.store);
            let start = Arc::clone(&start);
            tasks.spawn(async move {
                start.wait().await;
                (
                    id,
                    tag,
                    store.append_events(id, vec![ev(1, tag), ev(2, tag)]).await,
                )
            });
        }
        let mut ok = 0;
        let mut dup = 0;
        while let Some(joined) = tasks.join_next().await {
            let (id, tag, result) = joined.expect("task panicked");
            match result {
                Ok(()) => ok += 1,
                Err(StoreError::DuplicateSeq { game_id, seq }) => {
                    assert_eq!(game_id, id);
                    assert!(seq == 1 || seq == 2, "seq {seq}");
                    dup += 1;
                }
                Err(StoreError::GameNotFound(g)) => {
                    assert_eq!((g, tag), (ghost, "ghost"));
                }
                Err(e) => panic!("unexpected error for {tag}: {e}"),
            }
        }
        assert_eq!(ok, GAMES);
        assert_eq!(dup, CONTESTED);
        for (i, id) in ids.iter().enumerate() {
            let (_, events) = h.store.get_game(*id).await.unwrap().unwrap();
            assert_eq!(seqs(&events), vec![1, 2], "game {i}");
            // Both events come from the same (winning) writer.
            assert_eq!(events[0].event["tag"], events[1].event["tag"], "game {i}");
            if i >= CONTESTED {
                assert_eq!(events[0].event["tag"], "first");
            }
        }
    }

    /// Event payloads come back exactly as appended when many games' appends share one
    /// grouped statement: escapes, non-ASCII text, nesting, number limits, null and bool.
    pub async fn grouped_event_payloads_round_trip(h: &Harness) {
        const GAMES: usize = 24;
        let ids = playing_room_with_games(h, GAMES).await;
        let payload = |i: usize, seq: i64| {
            json!({
                "type": "piece_moved",
                "quote": "a \"quoted\" word, a \\ backslash, a tab\t and a newline\n",
                "text": format!("Parchís ñ 🎲 game {i}"),
                "nested": {"path": [1, 2, [3, {"deep": null}]], "ok": true, "no": false},
                "min": i64::MIN, "max": i64::MAX, "neg": -5, "float": 0.25,
                "seq": seq, "empty": {}, "none": [],
            })
        };
        let start = Arc::new(tokio::sync::Barrier::new(GAMES));
        let mut tasks = tokio::task::JoinSet::new();
        for (i, id) in ids.iter().copied().enumerate() {
            let (store, start) = (Arc::clone(&h.store), Arc::clone(&start));
            let batch: Vec<_> = (1..=3)
                .map(|seq| parchis_store::EventRecord {
                    seq,
                    event: payload(i, seq),
                    created_at_ms: 1_000 + seq,
                })
                .collect();
            tasks.spawn(async move {
                start.wait().await;
                store.append_events(id, batch).await.expect("append");
            });
        }
        while let Some(joined) = tasks.join_next().await {
            joined.expect("append task panicked");
        }
        for (i, id) in ids.iter().enumerate() {
            let (_, events) = h.store.get_game(*id).await.unwrap().expect("game");
            assert_eq!(seqs(&events), vec![1, 2, 3], "game {i}");
            for e in &events {
                assert_eq!(e.event, payload(i, e.seq), "game {i} seq {}", e.seq);
                assert_eq!(e.created_at_ms, 1_000 + e.seq);
            }
        }
    }

    /// Ties on time are broken by comparing text bytewise on every backend
    /// ("B…" < "a…", "Yellow" < "blue"), whatever the database's collation.
    pub async fn text_order_is_bytewise(h: &Harness) {
        let s = &h.store;
        let r = code().to_lowercase();
        let (lower, upper) = (format!("a{r}"), format!("B{r}"));
        s.create_room(&room(&lower, RoomStatus::Open, 50))
            .await
            .unwrap();
        s.create_room(&room(&upper, RoomStatus::Open, 50))
            .await
            .unwrap();
        let codes: Vec<String> = s
            .load_unfinished()
            .await
            .unwrap()
            .into_iter()
            .map(|x| x.room.code)
            .collect();
        assert_eq!(codes, vec![upper.clone(), lower.clone()]);

        s.upsert_seat(&seat(&lower, "blue", "b", false, 60))
            .await
            .unwrap();
        s.upsert_seat(&seat(&lower, "Yellow", "y", false, 60))
            .await
            .unwrap();
        let colours: Vec<String> = s
            .get_room(&lower)
            .await
            .unwrap()
            .unwrap()
            .seats
            .into_iter()
            .map(|x| x.colour)
            .collect();
        assert_eq!(colours, vec!["Yellow".to_owned(), "blue".to_owned()]);
    }

    pub async fn survives_reopen(h: &Harness) {
        let Some(_) = h.url else {
            return; // memory: nothing to reopen
        };
        let c = code();
        let g = game(&c, 20);
        h.store
            .create_room(&room(&c, RoomStatus::Playing, 10))
            .await
            .unwrap();
        h.store
            .upsert_seat(&seat(&c, "red", "Ana", true, 11))
            .await
            .unwrap();
        h.store.create_game(&g).await.unwrap();
        h.store
            .append_events(g.id, vec![ev(1, "x"), ev(2, "x")])
            .await
            .unwrap();
        h.store.set_deadline(g.id, Some(123_456)).await.unwrap();

        let other = h.reopen().await.expect("reopenable");
        let snap = other
            .get_room(&c)
            .await
            .unwrap()
            .expect("room after reopen");
        assert_eq!(snap.room, room(&c, RoomStatus::Playing, 10));
        assert_eq!(snap.seats, vec![seat(&c, "red", "Ana", true, 11)]);
        assert_eq!(
            snap.game.as_ref().and_then(|g| g.deadline_ms),
            Some(123_456)
        );
        assert_eq!(snap.events, vec![ev(1, "x"), ev(2, "x")]);
        // Both handles write to the same database.
        other.append_events(g.id, vec![ev(3, "y")]).await.unwrap();
        assert_eq!(
            seqs(&h.store.get_game(g.id).await.unwrap().unwrap().1),
            vec![1, 2, 3]
        );
        other.close().await;
    }

    pub async fn closed_store_refuses_calls(h: &Harness) {
        h.store
            .ping()
            .await
            .expect("an open store answers the ping");
        let c = code();
        h.store
            .create_room(&room(&c, RoomStatus::Open, 1))
            .await
            .unwrap();
        h.store.close().await;
        match h
            .store
            .create_room(&room(&code(), RoomStatus::Open, 2))
            .await
        {
            Err(StoreError::Closed) => {}
            other => panic!("expected Closed, got {other:?}"),
        }
        match h.store.get_room(&c).await {
            Err(StoreError::Closed) => {}
            other => panic!("expected Closed, got {other:?}"),
        }
        assert!(
            matches!(h.store.ping().await, Err(StoreError::Closed)),
            "a closed store is not ready"
        );
        h.store.close().await; // twice is harmless
        if h.kind != Kind::Memory {
            // The write made before closing is durable.
            let other = h.reopen().await.expect("reopenable");
            assert!(other.get_room(&c).await.unwrap().is_some());
            other.close().await;
        }
    }

    /// A started game in a new open room: seats none, first events `1..=n`.
    async fn started(h: &Harness, n: i64) -> (String, Uuid) {
        let c = code();
        h.store
            .create_room(&room(&c, RoomStatus::Open, 1))
            .await
            .unwrap();
        let g = game(&c, 10);
        let id = g.id;
        let start = GameStart {
            game: g,
            room: RoomStatusUpdate {
                status: RoomStatus::Playing,
                started_at_ms: Some(10),
                finished_at_ms: None,
                updated_at_ms: 10,
            },
            seats: Vec::new(),
            events: (1..=n).map(|s| ev(s, "start")).collect(),
            log: None,
        };
        h.store.start_game(start).await.expect("start");
        (c, id)
    }

    async fn log(h: &Harness, id: Uuid) -> Vec<i64> {
        seqs(&h.store.get_game(id).await.unwrap().unwrap().1)
    }

    pub async fn append_after_refuses_what_does_not_follow(h: &Harness) {
        let s = &h.store;
        let (_, id) = started(h, 3).await;
        s.append_after(id, 3, vec![ev(4, "a"), ev(5, "a")])
            .await
            .expect("follows");
        let refused = [
            (3, vec![ev(4, "again")]),         // applied twice
            (5, vec![ev(7, "gap")]),           // a gap
            (5, vec![ev(6, "b"), ev(8, "b")]), // a gap inside the batch
            (6, vec![ev(7, "ahead")]),         // based on a seq not stored
        ];
        for (after, events) in refused {
            match s.append_after(id, after, events).await {
                Err(StoreError::SeqMismatch { game_id, .. }) => assert_eq!(game_id, id),
                other => panic!("expected SeqMismatch after {after}, got {other:?}"),
            }
        }
        assert_eq!(log(h, id).await, vec![1, 2, 3, 4, 5]);
        // A game with an empty log has nothing to follow.
        let c = code();
        s.create_room(&room(&c, RoomStatus::Playing, 1))
            .await
            .unwrap();
        let g = game(&c, 1);
        s.create_game(&g).await.unwrap();
        assert!(matches!(
            s.append_after(g.id, 0, vec![ev(1, "x")]).await,
            Err(StoreError::SeqMismatch { last: None, .. })
        ));
        match s.append_after(Uuid::new_v4(), 0, vec![ev(1, "x")]).await {
            Err(StoreError::GameNotFound(_)) | Err(StoreError::SeqMismatch { .. }) => {}
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    pub async fn grouped_appends_check_each_position(h: &Harness) {
        let mut games = Vec::new();
        for _ in 0..12 {
            games.push(started(h, 2).await.1);
        }
        // Submitted together (one group on SQL backends); game 5's append is stale.
        let tasks: Vec<_> = games
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let store = Arc::clone(&h.store);
                let id = *id;
                let after = if i == 5 { 1 } else { 2 };
                tokio::spawn(async move { store.append_after(id, after, vec![ev(3, "g")]).await })
            })
            .collect();
        for (i, t) in tasks.into_iter().enumerate() {
            let r = t.await.unwrap();
            if i == 5 {
                assert!(matches!(r, Err(StoreError::SeqMismatch { .. })), "{r:?}");
            } else {
                r.expect("follows");
            }
        }
        for (i, id) in games.iter().enumerate() {
            let want = if i == 5 { vec![1, 2] } else { vec![1, 2, 3] };
            assert_eq!(log(h, *id).await, want);
        }
    }

    pub async fn start_game_is_all_or_nothing(h: &Harness) {
        let s = &h.store;
        let c = code();
        let r = room(&c, RoomStatus::Open, 1);
        s.create_room(&r).await.unwrap();
        let playing = RoomStatusUpdate {
            status: RoomStatus::Playing,
            started_at_ms: Some(20),
            finished_at_ms: None,
            updated_at_ms: 20,
        };
        let g = game(&c, 20);
        let mut bot = seat(&c, "red", "Greedy bot 1", false, 20);
        bot.bot = Some("greedy".into());
        let start = |events: Vec<parchis_store::EventRecord>| GameStart {
            game: g.clone(),
            room: playing,
            seats: vec![bot.clone()],
            events,
            log: None,
        };
        for bad in [vec![ev(5, "s"), ev(7, "s")], Vec::new()] {
            assert!(matches!(
                s.start_game(start(bad)).await,
                Err(StoreError::SeqMismatch { .. })
            ));
            let snap = s.get_room(&c).await.unwrap().unwrap();
            assert_eq!(snap.room, r, "the room is untouched");
            assert!(snap.seats.is_empty() && snap.game.is_none() && snap.events.is_empty());
        }
        s.start_game(start(vec![ev(5, "s"), ev(6, "s")]))
            .await
            .expect("start");
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.room.status, RoomStatus::Playing);
        assert_eq!(snap.room.started_at_ms, Some(20));
        assert_eq!(snap.seats, vec![bot.clone()]);
        assert_eq!(snap.game.as_ref().map(|x| x.id), Some(g.id));
        assert_eq!(seqs(&snap.events), vec![5, 6]);
        match s.start_game(start(vec![ev(1, "again")])).await {
            Err(StoreError::GameExists(id)) => assert_eq!(id, g.id),
            other => panic!("expected GameExists, got {other:?}"),
        }
        assert_eq!(log(h, g.id).await, vec![5, 6]);
    }

    pub async fn end_game_is_all_or_nothing(h: &Harness) {
        let s = &h.store;
        let (c, id) = started(h, 2).await;
        let end = |after_seq: i64| GameEnd {
            game_id: id,
            room_code: c.clone(),
            after_seq,
            events: vec![ev(after_seq + 1, "won")],
            log: None,
            result: json!({"winner": "red"}),
            reason: "completed".into(),
            finished_at_ms: 99,
            room: RoomStatusUpdate {
                status: RoomStatus::Finished,
                started_at_ms: Some(10),
                finished_at_ms: Some(99),
                updated_at_ms: 99,
            },
            rated: None,
        };
        assert!(matches!(
            s.end_game(end(1)).await,
            Err(StoreError::SeqMismatch { .. })
        ));
        let (g, events) = s.get_game(id).await.unwrap().unwrap();
        assert!(!g.is_finished(), "nothing of the refused end was written");
        assert_eq!(seqs(&events), vec![1, 2]);
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.room.status, RoomStatus::Playing);

        s.end_game(end(2)).await.expect("end");
        let (g, events) = s.get_game(id).await.unwrap().unwrap();
        assert_eq!(g.finished_at_ms, Some(99));
        assert_eq!(g.result, Some(json!({"winner": "red"})));
        assert_eq!(g.reason.as_deref(), Some("completed"));
        assert_eq!(seqs(&events), vec![1, 2, 3]);
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.room.status, RoomStatus::Finished);
        assert_eq!(snap.room.finished_at_ms, Some(99));
        assert!(matches!(
            s.end_game(end(3)).await,
            Err(StoreError::GameFinished(_))
        ));
        assert_eq!(log(h, id).await, vec![1, 2, 3]);
    }
    /// A `RoomWrite::Batch` is one transaction: a seat moving to another colour (delete
    /// the old row, insert the new) lands whole, and a batch whose last write fails
    /// (an append that does not follow the log) leaves every row as it was.
    pub async fn a_batch_of_room_writes_is_all_or_nothing(h: &Harness) {
        use parchis_store::RoomWrite;
        let s = &h.store;
        let (c, id) = started(h, 2).await;
        for st in [
            seat(&c, "red", "Ana", true, 1_100),
            seat(&c, "blue", "Luis", false, 1_200),
        ] {
            s.upsert_seat(&st).await.expect("seat");
        }
        let before = s.get_room(&c).await.unwrap().unwrap().seats;
        assert_eq!(before.len(), 2);
        let moved = {
            let mut m = before[0].clone();
            m.colour = "green".into();
            m
        };
        let old = before[0].colour.clone();
        s.write_room(
            &c,
            None,
            RoomWrite::Batch(vec![
                RoomWrite::DeleteSeat {
                    colour: old.clone(),
                },
                RoomWrite::UpsertSeat(moved.clone()),
            ]),
        )
        .await
        .expect("the colour change");
        let seats = s.get_room(&c).await.unwrap().unwrap().seats;
        assert!(seats.iter().all(|st| st.colour != old), "{seats:?}");
        assert!(seats.contains(&moved), "{seats:?}");
        assert_eq!(seats.len(), before.len());

        let refused = s
            .write_room(
                &c,
                None,
                RoomWrite::Batch(vec![
                    RoomWrite::DeleteSeat {
                        colour: "green".into(),
                    },
                    RoomWrite::Append {
                        game_id: id,
                        after_seq: 7,
                        events: vec![ev(8, "x")],
                    },
                ]),
            )
            .await;
        assert!(
            matches!(refused, Err(StoreError::SeqMismatch { .. })),
            "{refused:?}"
        );
        assert_eq!(
            s.get_room(&c).await.unwrap().unwrap().seats,
            seats,
            "nothing applied"
        );
        assert_eq!(log(h, id).await, vec![1, 2]);

        let nested = s
            .write_room(
                &c,
                None,
                RoomWrite::Batch(vec![RoomWrite::Batch(Vec::new())]),
            )
            .await;
        assert!(
            matches!(nested, Err(StoreError::InvalidWrite(_))),
            "{nested:?}"
        );
    }
}

backend_tests!(
    [sqlite, postgres, memory]
    [
        rooms_and_seats_round_trip,
        append_and_load_in_order,
        duplicate_seq_rejects_whole_batch,
        load_unfinished_returns_exactly_unfinished_rooms,
        finish_game_stores_result_once,
        list_games_oldest_first,
        find_games_filters_and_pages,
        deadlines_are_set_and_cleared,
        many_rooms_append_concurrently,
        group_commit_isolates_failures,
        grouped_event_payloads_round_trip,
        text_order_is_bytewise,
        survives_reopen,
        closed_store_refuses_calls,
        append_after_refuses_what_does_not_follow,
        grouped_appends_check_each_position,
        start_game_is_all_or_nothing,
        end_game_is_all_or_nothing,
        a_batch_of_room_writes_is_all_or_nothing,
    ]
);
