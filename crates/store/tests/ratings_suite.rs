//! Ratings in the store (issue 26), on every backend: a rated game's end writes its
//! players' new ratings and one history row each in the end's own transaction (all or
//! nothing, once), the values are the Weng-Lin model's, and the leaderboard and history
//! reads keep their orders.

#[macro_use]
mod common;

use common::{code, ev, game, room, Harness, Kind};
use parchis_ratings::{rate, Rating};
use parchis_store::{
    GameEnd, GameStart, RatedGame, RatedPlayer, RoomStatus, RoomStatusUpdate, RoomWrite, StoreError,
};
use serde_json::json;
use uuid::Uuid;

mod cases {
    use super::*;

    /// A started game with two events; its room code and id.
    async fn started(h: &Harness) -> (String, Uuid) {
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
            events: vec![ev(1, "start"), ev(2, "start")],
            log: None,
        };
        h.store.start_game(start).await.expect("start");
        (c, id)
    }

    fn end(c: &str, id: Uuid, at: i64, rated: Option<RatedGame>) -> GameEnd {
        GameEnd {
            game_id: id,
            room_code: c.to_owned(),
            after_seq: 2,
            events: vec![ev(3, "won")],
            log: None,
            result: json!({"winner": "red"}),
            reason: "completed".into(),
            finished_at_ms: at,
            room: RoomStatusUpdate {
                status: RoomStatus::Finished,
                started_at_ms: Some(10),
                finished_at_ms: Some(at),
                updated_at_ms: at,
            },
            rated,
        }
    }

    /// A rated result: `(account, unit, place)` each.
    fn rated(pool: &str, players: &[(Uuid, u8, u8)]) -> RatedGame {
        RatedGame {
            pool: pool.to_owned(),
            players: players
                .iter()
                .map(|&(account_id, unit, place)| RatedPlayer {
                    account_id,
                    unit,
                    place,
                })
                .collect(),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Plays one rated game to its end through `end_game`.
    async fn play(h: &Harness, at: i64, game: RatedGame) -> Uuid {
        let (c, id) = started(h).await;
        h.store
            .end_game(end(&c, id, at, Some(game)))
            .await
            .expect("rated end");
        id
    }

    // Over 80 lines: one scenario, its steps and their checks in order.
    pub async fn a_rated_end_writes_ratings_and_history(h: &Harness) {
        let s = &h.store;
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let (c, id) = started(h).await;
        // The room's one write entry point carries the rated end like `end_game`.
        let write = RoomWrite::End(Box::new(end(
            &c,
            id,
            100,
            Some(rated("online", &[(a, 0, 1), (b, 2, 2)])),
        )));
        s.write_room(&c, None, write).await.expect("rated end");
        let expected = rate(&[(vec![Rating::INITIAL], 1), (vec![Rating::INITIAL], 2)]).unwrap();
        let ra = s.ratings_of(a).await.unwrap();
        assert_eq!(ra.len(), 1);
        assert_eq!(
            (ra[0].pool.as_str(), ra[0].games, ra[0].updated_at_ms),
            ("online", 1, 100)
        );
        assert!(close(ra[0].mu, expected[0][0].mu) && close(ra[0].sigma, expected[0][0].sigma));
        let rb = s.ratings_of(b).await.unwrap();
        assert!(close(rb[0].mu, expected[1][0].mu));
        assert!(ra[0].mu > 25.0 && rb[0].mu < 25.0);
        let hist = s.rating_history(a, None, 10).await.unwrap();
        assert_eq!(hist.len(), 1);
        let h0 = &hist[0];
        assert_eq!(
            (h0.game_id, h0.account_id, h0.place, h0.at_ms),
            (id, a, 1, 100)
        );
        assert!(close(h0.mu_before, 25.0) && close(h0.sigma_before, 25.0 / 3.0));
        assert!(close(h0.mu_after, ra[0].mu) && close(h0.sigma_after, ra[0].sigma));
        // The game is finished as by any end.
        let (g, events) = s.get_game(id).await.unwrap().unwrap();
        assert_eq!((g.finished_at_ms, events.len()), (Some(100), 3));

        // A second game, in another pool and then the same one: each pool on its own, the
        // second game starts from the first's result, and history is newest first.
        let g2 = play(h, 200, rated("classic", &[(b, 0, 1), (a, 1, 2)])).await;
        let g3 = play(h, 300, rated("online", &[(b, 0, 1), (a, 2, 2)])).await;
        let ra = s.ratings_of(a).await.unwrap();
        let pools: Vec<(&str, i64)> = ra.iter().map(|r| (r.pool.as_str(), r.games)).collect();
        assert_eq!(pools, vec![("classic", 1), ("online", 2)]);
        let hist = s.rating_history(a, None, 10).await.unwrap();
        let games: Vec<Uuid> = hist.iter().map(|r| r.game_id).collect();
        assert_eq!(games, vec![g3, g2, id]);
        let online = s.rating_history(a, Some("online"), 10).await.unwrap();
        assert_eq!(online.len(), 2);
        assert!(close(online[0].mu_before, online[1].mu_after));
        assert!(close(online[0].mu_after, ra[1].mu));
        assert_eq!(s.rating_history(a, None, 1).await.unwrap().len(), 1);
        assert!(s.ratings_of(Uuid::new_v4()).await.unwrap().is_empty());
    }

    pub async fn a_refused_end_writes_no_rating(h: &Harness) {
        let s = &h.store;
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let (c, id) = started(h).await;
        let good = rated("online", &[(a, 0, 1), (b, 2, 2)]);
        // The events do not follow the log: nothing of the end, no rating.
        let mut bad_seq = end(&c, id, 100, Some(good.clone()));
        bad_seq.after_seq = 7;
        assert!(matches!(
            s.end_game(bad_seq).await,
            Err(StoreError::SeqMismatch { .. })
        ));
        // Results that cannot be rated are refused whole: the game stays unfinished.
        for bad in [
            rated("online", &[(a, 0, 1), (a, 2, 2)]),
            rated("online", &[(a, 0, 1)]),
            rated("chess", &[(a, 0, 1), (b, 2, 2)]),
            rated("classic+two-out+murcia-12", &[(a, 0, 1), (b, 2, 2)]),
            rated("pairs", &[(a, 0, 1), (b, 0, 2)]),
            rated("online", &[(a, 0, 1), (b, 2, 5)]),
        ] {
            let refused = s.end_game(end(&c, id, 100, Some(bad.clone()))).await;
            assert!(
                matches!(refused, Err(StoreError::InvalidWrite(_))),
                "{bad:?}: {refused:?}"
            );
        }
        assert_eq!(
            s.get_game(id).await.unwrap().unwrap().0.finished_at_ms,
            None
        );
        assert!(s.ratings_of(a).await.unwrap().is_empty());
        assert!(s.rating_history(a, None, 10).await.unwrap().is_empty());
        // The good one goes through once; a second end changes nothing.
        s.end_game(end(&c, id, 100, Some(good.clone())))
            .await
            .expect("end");
        let again = s.end_game(end(&c, id, 200, Some(good))).await;
        assert!(
            matches!(
                again,
                Err(StoreError::GameFinished(_)) | Err(StoreError::SeqMismatch { .. })
            ),
            "{again:?}"
        );
        assert_eq!(s.ratings_of(a).await.unwrap()[0].games, 1);
        assert_eq!(s.rating_history(a, None, 10).await.unwrap().len(), 1);
    }

    /// Two games of one player end at the same moment through two stores on one database
    /// (two cluster nodes): both updates count, the second computed from the first's.
    pub async fn concurrent_ends_lose_no_update(h: &Harness) {
        // Cluster nodes share PostgreSQL. One SQLite file belongs to one server (a second
        // writer on it gets SQLITE_BUSY), and the memory store has no second handle: its
        // one lock serialises every end.
        if h.kind != Kind::Postgres {
            return;
        }
        let other = h.reopen().await.expect("a second store on the database");
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        for round in 0..5 {
            let (c1, g1) = started(h).await;
            let (c2, g2) = started(h).await;
            let e1 = end(
                &c1,
                g1,
                100 + round,
                Some(rated("online", &[(a, 0, 1), (b, 2, 2)])),
            );
            let e2 = end(
                &c2,
                g2,
                100 + round,
                Some(rated("online", &[(a, 0, 1), (c, 2, 2)])),
            );
            let (r1, r2) = tokio::join!(h.store.end_game(e1), other.end_game(e2));
            r1.expect("first end");
            r2.expect("second end");
        }
        other.close().await;
        let ra = &h.store.ratings_of(a).await.unwrap()[0];
        assert_eq!(ra.games, 10);
        // Every history row starts where another ended: one chain from 25 to the
        // current rating through all ten games (a lost update would fork it).
        let hist = h
            .store
            .rating_history(a, Some("online"), 100)
            .await
            .unwrap();
        assert_eq!(hist.len(), 10);
        let mut left = hist.clone();
        let mut mu = Rating::INITIAL.mu;
        while let Some(i) = left.iter().position(|r| close(r.mu_before, mu)) {
            mu = left.remove(i).mu_after;
        }
        assert!(left.is_empty(), "rows off the chain: {left:?}");
        assert!(close(mu, ra.mu));
    }

    pub async fn pairs_partners_are_rated_as_one_team(h: &Harness) {
        let s = &h.store;
        let ids: Vec<Uuid> = (0..4).map(|_| Uuid::new_v4()).collect();
        // Yellow+red (unit 0) win against blue+green (unit 1).
        let game = rated(
            "pairs",
            &[
                (ids[0], 0, 1),
                (ids[1], 1, 2),
                (ids[2], 0, 1),
                (ids[3], 1, 2),
            ],
        );
        play(h, 100, game).await;
        let init = vec![Rating::INITIAL, Rating::INITIAL];
        let expected = rate(&[(init.clone(), 1), (init, 2)]).unwrap();
        for (i, id) in ids.iter().enumerate() {
            let r = &s.ratings_of(*id).await.unwrap()[0];
            let want = expected[i % 2][i / 2];
            assert!(
                close(r.mu, want.mu) && close(r.sigma, want.sigma),
                "{i}: {r:?}"
            );
            assert_eq!((r.pool.as_str(), r.games), ("pairs", 1));
        }
        let partners = s.rating_history(ids[2], None, 1).await.unwrap();
        assert_eq!(partners[0].place, 1);
    }

    pub async fn the_leaderboard_ranks_by_conservative_rating(h: &Harness) {
        let s = &h.store;
        let (a, b, c, d) = (
            Uuid::new_v4(),
            Uuid::new_v4(),
            Uuid::new_v4(),
            Uuid::new_v4(),
        );
        // a beats b five times; c beats d once.
        for i in 0..5 {
            play(h, 100 + i, rated("online", &[(a, 0, 1), (b, 2, 2)])).await;
        }
        play(h, 200, rated("online", &[(c, 0, 1), (d, 2, 2)])).await;
        let board = s.leaderboard("online", 50, 5).await.unwrap();
        let who: Vec<(Uuid, i64)> = board.iter().map(|r| (r.account_id, r.games)).collect();
        assert_eq!(who, vec![(a, 5), (b, 5)]);
        // Everyone with at least one game, by μ − 3σ: the five-game winner first, the
        // one-game winner next, and so on.
        let all = s.leaderboard("online", 50, 1).await.unwrap();
        let score = |r: &parchis_store::RatingRecord| r.mu - 3.0 * r.sigma;
        assert_eq!(all.len(), 4);
        assert!(all.windows(2).all(|w| score(&w[0]) >= score(&w[1])));
        assert_eq!(all[0].account_id, a);
        assert_eq!(s.leaderboard("online", 2, 1).await.unwrap().len(), 2);
        assert!(s.leaderboard("classic", 50, 0).await.unwrap().is_empty());
    }

    /// An administrator's reset: every pool's rating and history rows of the account go
    /// (the other player's stay), the next rated game starts from the initial rating.
    pub async fn an_admin_reset_deletes_an_accounts_ratings(h: &Harness) {
        let s = &h.store;
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        play(h, 100, rated("online", &[(a, 0, 1), (b, 2, 2)])).await;
        play(h, 200, rated("classic", &[(a, 0, 1), (b, 2, 2)])).await;
        assert_eq!(s.ratings_of(a).await.unwrap().len(), 2);
        assert_eq!(s.reset_ratings(a).await.unwrap(), 2);
        assert!(s.ratings_of(a).await.unwrap().is_empty());
        assert!(s.rating_history(a, None, 10).await.unwrap().is_empty());
        assert_eq!(s.ratings_of(b).await.unwrap().len(), 2, "b keeps hers");
        assert_eq!(s.rating_history(b, None, 10).await.unwrap().len(), 2);
        assert_eq!(s.reset_ratings(a).await.unwrap(), 0, "nothing left");
        assert_eq!(s.reset_ratings(Uuid::new_v4()).await.unwrap(), 0);
        // The next game rates a from the initial rating again.
        play(h, 300, rated("online", &[(a, 0, 1), (b, 2, 2)])).await;
        let ra = s.ratings_of(a).await.unwrap();
        assert_eq!((ra.len(), ra[0].games), (1, 1));
        let hist = s.rating_history(a, None, 10).await.unwrap();
        assert_eq!(hist.len(), 1);
        assert!(close(hist[0].mu_before, Rating::INITIAL.mu), "{hist:?}");
        assert!(
            close(hist[0].sigma_before, Rating::INITIAL.sigma),
            "{hist:?}"
        );
    }
}

backend_tests!(
    [sqlite, postgres, memory]
    [
        a_rated_end_writes_ratings_and_history,
        an_admin_reset_deletes_an_accounts_ratings,
        a_refused_end_writes_no_rating,
        concurrent_ends_lose_no_update,
        pairs_partners_are_rated_as_one_team,
        the_leaderboard_ranks_by_conservative_rating,
    ]
);
