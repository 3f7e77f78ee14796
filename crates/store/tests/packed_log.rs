//! A game stored as its packed log (issue 28, docs/STORAGE.md) on every backend: the start
//! writes its first piece, each append one tail row, the tail is folded into
//! `games.log` every 32 pieces and at the end; the log reads back as the pieces joined in
//! order; a piece that does not follow the log is refused; a batch that fails puts back
//! the piece it wrote; a game stored as JSON rows (before issue 28) still reads as rows; the
//! turn deadline lives in its own table and leaves nothing once the game ends.

#[macro_use]
mod common;

use common::{code, ev, game, room, seat, seqs, Harness, Kind};
use std::sync::Arc;

use parchis_store::{
    GameEnd, GameQuery, GameRecord, GameStart, LogPiece, PackedLog, RoomStatus, RoomStatusUpdate,
    RoomWrite, StoreError,
};
use serde_json::json;
use sqlx::Connection;
use uuid::Uuid;

mod cases {
    use super::*;

    /// A piece of seqs `first..=last` whose bytes name them (the store keeps bytes opaque).
    pub(super) fn piece(first: i64, last: i64) -> LogPiece {
        LogPiece {
            first_seq: first,
            last_seq: last,
            bytes: vec![first as u8, last as u8, 0, 0xff],
        }
    }

    fn playing(at: i64) -> RoomStatusUpdate {
        RoomStatusUpdate {
            status: RoomStatus::Playing,
            started_at_ms: Some(at),
            finished_at_ms: None,
            updated_at_ms: at,
        }
    }

    /// A room with a game started as a packed log of seqs 1..=3; its code and game id.
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
            room: playing(10),
            seats: vec![seat(&c, "red", "Ana", true, 5)],
            events: Vec::new(),
            log: Some(piece(1, 3)),
        };
        h.store
            .write_room(&c, None, RoomWrite::Start(Box::new(start)))
            .await
            .expect("start");
        (c, id)
    }

    fn append(id: Uuid, after: i64, last: i64) -> RoomWrite {
        RoomWrite::AppendLog {
            game_id: id,
            after_seq: after,
            piece: piece(after + 1, last),
        }
    }

    /// The number of tail rows of game `id` (`None` on the memory store, which has no
    /// SQL to ask).
    async fn tail_rows(h: &Harness, id: Uuid) -> Option<i64> {
        rows_of(h, "game_log_tail", id).await
    }

    /// The number of rows of game `id` in `table` (a table with a `game_id` column;
    /// `None` on the memory store).
    async fn rows_of(h: &Harness, table: &str, id: Uuid) -> Option<i64> {
        let url = h.url.as_deref()?;
        match h.kind {
            Kind::Sqlite => {
                let mut c = sqlx::SqliteConnection::connect(url).await.expect("connect");
                let sql = format!("SELECT COUNT(*) FROM {table} WHERE game_id = ?");
                let (n,): (i64,) = sqlx::query_as(&sql)
                    .bind(id.to_string())
                    .fetch_one(&mut c)
                    .await
                    .expect("count");
                Some(n)
            }
            Kind::Postgres => {
                let mut c = sqlx::PgConnection::connect(url).await.expect("connect");
                let sql = format!("SELECT COUNT(*) FROM {table} WHERE game_id = $1");
                let (n,): (i64,) = sqlx::query_as(&sql)
                    .bind(id)
                    .fetch_one(&mut c)
                    .await
                    .expect("count");
                Some(n)
            }
            Kind::Memory => None,
        }
    }

    /// The end of game `id` of room `c` after seq `after`, with one more piece.
    fn end_of(c: &str, id: Uuid, after: i64, at: i64) -> GameEnd {
        GameEnd {
            game_id: id,
            room_code: c.to_owned(),
            after_seq: after,
            events: Vec::new(),
            log: Some(piece(after + 1, after + 1)),
            result: json!({"winner": "red"}),
            reason: "completed".into(),
            finished_at_ms: at,
            room: RoomStatusUpdate {
                status: RoomStatus::Finished,
                started_at_ms: Some(10),
                finished_at_ms: Some(at),
                updated_at_ms: at,
            },
            rated: None,
        }
    }

    // Over 80 lines: one scenario (start, turns, reopen, restore, end), its checks in order.
    /// The turn deadline (its own table, `game_deadlines`): written by the start and each
    /// `SetDeadline`, read back by `get_room`, the restore (`load_unfinished`) and
    /// `get_game`, after a reopen too; a cleared deadline and a finished game leave no row.
    pub async fn a_deadline_survives_a_reopen_and_is_gone_after_the_end(h: &Harness) {
        let c = code();
        h.store
            .create_room(&room(&c, RoomStatus::Open, 1))
            .await
            .unwrap();
        let g = GameRecord {
            deadline_ms: Some(1_893_456_000_123), // beyond i32 range on purpose
            ..game(&c, 10)
        };
        let id = g.id;
        let start = GameStart {
            game: g,
            room: playing(10),
            seats: vec![seat(&c, "red", "Ana", true, 5)],
            events: Vec::new(),
            log: Some(piece(1, 3)),
        };
        h.store
            .write_room(&c, None, RoomWrite::Start(Box::new(start)))
            .await
            .expect("start");
        let deadline_of_room = |snap: Option<parchis_store::RoomSnapshot>| {
            snap.expect("room").game.expect("game").deadline_ms
        };
        assert_eq!(
            deadline_of_room(h.store.get_room(&c).await.unwrap()),
            Some(1_893_456_000_123),
            "the start's deadline"
        );
        assert_eq!(rows_of(h, "game_deadlines", id).await.unwrap_or(1), 1);
        // Turns: each a new deadline, one row still.
        for (k, after) in [(1_i64, 3_i64), (2, 4), (3, 5)] {
            let write = RoomWrite::Batch(vec![
                append(id, after, after + 1),
                RoomWrite::SetDeadline {
                    game_id: id,
                    deadline_ms: Some(1_893_456_000_123 + 30_000 * k),
                },
            ]);
            h.store.write_room(&c, None, write).await.expect("turn");
        }
        let last = 1_893_456_000_123 + 90_000;
        assert_eq!(rows_of(h, "game_deadlines", id).await.unwrap_or(1), 1);

        // A reopen (a restart): the restore and the reads see the last deadline.
        let store = h.reopen().await.unwrap_or_else(|| h.store.clone());
        let restored = store.load_unfinished().await.unwrap();
        let snap = restored.into_iter().find(|s| s.room.code == c);
        assert_eq!(deadline_of_room(snap), Some(last), "restored");
        assert_eq!(
            deadline_of_room(store.get_room(&c).await.unwrap()),
            Some(last)
        );
        let (stored, _) = store.get_game(id).await.unwrap().expect("game");
        assert_eq!(stored.deadline_ms, Some(last));

        // Cleared (the clock stopped): no row; set again.
        store.set_deadline(id, None).await.expect("clear");
        assert_eq!(
            store.get_game(id).await.unwrap().unwrap().0.deadline_ms,
            None
        );
        assert_eq!(rows_of(h, "game_deadlines", id).await.unwrap_or(0), 0);
        store.set_deadline(id, Some(last + 1)).await.expect("set");
        assert_eq!(
            store.get_game(id).await.unwrap().unwrap().0.deadline_ms,
            Some(last + 1)
        );

        // The end: no deadline, no row.
        let end = end_of(&c, id, 6, 99);
        store
            .write_room(&c, None, RoomWrite::End(Box::new(end)))
            .await
            .expect("end");
        let (stored, _) = store.get_game(id).await.unwrap().expect("game");
        assert!(stored.is_finished());
        assert_eq!(stored.deadline_ms, None);
        assert_eq!(rows_of(h, "game_deadlines", id).await.unwrap_or(0), 0);
        let found = store
            .find_games(&GameQuery {
                room_code: Some(c.clone()),
                limit: 10,
                ..GameQuery::default()
            })
            .await
            .unwrap();
        let listed = found.iter().find(|g| g.id == id).expect("listed");
        assert_eq!(listed.deadline_ms, None);
        if !Arc::ptr_eq(&store, &h.store) {
            store.close().await;
        }
    }

    pub async fn the_log_reads_back_as_its_pieces_folded_every_32_and_at_the_end(h: &Harness) {
        let s = &h.store;
        let (c, id) = started(h).await;
        let mut want = piece(1, 3).bytes;
        let mut last = 3;
        // 40 more pieces of 1–2 events each: a fold after the 32nd piece (the start's
        // included), then 9 tail rows.
        for k in 0..40 {
            let next = last + 1 + (k % 2);
            s.write_room(&c, None, append(id, last, next))
                .await
                .unwrap_or_else(|e| panic!("piece after {last}: {e}"));
            want.extend_from_slice(&piece(last + 1, next).bytes);
            last = next;
        }
        let expected = PackedLog {
            bytes: want.clone(),
            last_seq: last,
        };
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.log.as_ref(), Some(&expected));
        assert!(snap.events.is_empty(), "no JSON rows for a packed game");
        assert_eq!(snap.last_seq(), last);
        let stored = s.get_game_log(id).await.unwrap().expect("game");
        assert_eq!(stored.log.as_ref(), Some(&expected));
        assert_eq!(stored.last_seq(), last);
        if let Some(n) = tail_rows(h, id).await {
            assert_eq!(n, 41 - 32, "the first 32 pieces were folded into games.log");
        }
        // The end: its piece, then everything folded; it still reads the same.
        let end = GameEnd {
            game_id: id,
            room_code: c.clone(),
            after_seq: last,
            events: Vec::new(),
            log: Some(piece(last + 1, last + 2)),
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
        s.write_room(&c, None, RoomWrite::End(Box::new(end)))
            .await
            .expect("end");
        want.extend_from_slice(&piece(last + 1, last + 2).bytes);
        let stored = s.get_game_log(id).await.unwrap().expect("game");
        assert!(stored.game.is_finished());
        assert_eq!(
            stored.log,
            Some(PackedLog {
                bytes: want,
                last_seq: last + 2
            })
        );
        if let Some(n) = tail_rows(h, id).await {
            assert_eq!(n, 0, "the end folds the whole tail");
        }
    }

    // Over 80 lines: one scenario (concurrent pieces of many games, a bad one among them),
    // its checks in order.
    /// Many games' pieces at once (the writer commits them in groups: one row per game
    /// per group, positions read and rows written in one statement each): every game
    /// reads back as its pieces in order, two pieces of one game in flight together both
    /// land, the tail folds at 32 rows; a piece that does not follow its log, sent among
    /// them, is refused alone with its own error and leaves nothing.
    pub async fn concurrent_pieces_of_many_games_land_in_order(h: &Harness) {
        let s = h.store.clone();
        let mut games = Vec::new();
        for _ in 0..12 {
            games.push(started(h).await);
        }
        let mut want: Vec<Vec<u8>> = games.iter().map(|_| piece(1, 3).bytes).collect();
        let mut last = vec![3_i64; games.len()];
        for round in 0..20 {
            // Each game sends two pieces together (the second follows the first); in
            // round 7 game 0 also sends one that does not follow (after seq 1).
            let mut writes = Vec::new();
            for (g, (c, id)) in games.iter().enumerate() {
                let (a, b) = (last[g] + 1, last[g] + 2);
                writes.push((g, c.clone(), append(*id, last[g], a), true));
                writes.push((g, c.clone(), append(*id, a, b), true));
                want[g].extend_from_slice(&piece(last[g] + 1, a).bytes);
                want[g].extend_from_slice(&piece(a + 1, b).bytes);
                last[g] = b;
                if round == 7 && g == 0 {
                    writes.push((g, c.clone(), append(*id, 1, 2), false));
                }
            }
            let results =
                futures_util::future::join_all(writes.into_iter().map(|(g, c, write, good)| {
                    let s = Arc::clone(&s);
                    async move { (g, good, s.write_room(&c, None, write).await) }
                }))
                .await;
            for (g, good, result) in results {
                match (good, result) {
                    (true, Ok(())) => {}
                    (false, Err(StoreError::SeqMismatch { after, .. })) => assert_eq!(after, 1),
                    (good, other) => panic!("game {g}, good {good}: {other:?}"),
                }
            }
        }
        for (g, (c, id)) in games.iter().enumerate() {
            let expected = PackedLog {
                bytes: want[g].clone(),
                last_seq: last[g],
            };
            let stored = s.get_game_log(*id).await.unwrap().expect("game");
            assert_eq!(stored.log.as_ref(), Some(&expected), "game {g}");
            let snap = s.get_room(c).await.unwrap().unwrap();
            assert_eq!(snap.log.as_ref(), Some(&expected), "room of game {g}");
            if let Some(n) = tail_rows(h, *id).await {
                assert!(n < 32, "game {g}: {n} tail rows, folded at 32");
            }
        }
        // The ends fold everything; the logs still read the same.
        for (g, (c, id)) in games.iter().enumerate() {
            s.write_room(
                c,
                None,
                RoomWrite::End(Box::new(end_of(c, *id, last[g], 99))),
            )
            .await
            .expect("end");
            want[g].extend_from_slice(&piece(last[g] + 1, last[g] + 1).bytes);
            let stored = s.get_game_log(*id).await.unwrap().expect("game");
            assert_eq!(
                stored.log,
                Some(PackedLog {
                    bytes: want[g].clone(),
                    last_seq: last[g] + 1
                })
            );
            if let Some(n) = tail_rows(h, *id).await {
                assert_eq!(n, 0, "game {g}: the end folds the whole tail");
            }
        }
    }

    pub async fn a_piece_that_does_not_follow_the_log_is_refused(h: &Harness) {
        let s = &h.store;
        let (c, id) = started(h).await;
        s.write_room(&c, None, append(id, 3, 5))
            .await
            .expect("4..=5");
        // A writer that believes 3 is last (a step applied twice, a second writer).
        match s.write_room(&c, None, append(id, 3, 4)).await {
            Err(StoreError::SeqMismatch { after, last, .. }) => {
                assert_eq!((after, last), (3, Some(5)))
            }
            other => panic!("expected SeqMismatch, got {other:?}"),
        }
        // A piece whose first seq is not right after `after_seq`.
        let gap = RoomWrite::AppendLog {
            game_id: id,
            after_seq: 5,
            piece: piece(7, 8),
        };
        assert!(matches!(
            s.write_room(&c, None, gap).await,
            Err(StoreError::SeqMismatch { .. })
        ));
        // JSON rows after a packed log would not be read (a reader takes the packed log):
        // refused, at the right position too.
        assert!(matches!(
            s.append_after(id, 5, vec![ev(6, "rows")]).await,
            Err(StoreError::InvalidWrite(_))
        ));
        let stored = s.get_game_log(id).await.unwrap().expect("game");
        assert_eq!(stored.last_seq(), 5, "nothing of the refused writes");
        // A start whose first piece is not fresh, or that carries both formats.
        let g = game(&c, 20);
        let both = GameStart {
            game: g.clone(),
            room: playing(20),
            seats: Vec::new(),
            events: vec![ev(1, "s")],
            log: Some(piece(1, 1)),
        };
        assert!(matches!(
            s.write_room(&c, None, RoomWrite::Start(Box::new(both)))
                .await,
            Err(StoreError::InvalidWrite(_))
        ));
        assert!(s.get_game_log(g.id).await.unwrap().is_none());
    }

    pub async fn a_failed_batch_puts_its_piece_back(h: &Harness) {
        let s = &h.store;
        let (c, id) = started(h).await;
        let batch = RoomWrite::Batch(vec![
            append(id, 3, 4),
            RoomWrite::UpsertSeat(seat(&c, "blue", "Luis", false, 6)),
            // Fails: its log position is behind the first piece of the batch.
            append(id, 3, 5),
        ]);
        assert!(matches!(
            s.write_room(&c, None, batch).await,
            Err(StoreError::SeqMismatch { .. })
        ));
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.last_seq(), 3, "the first piece was put back");
        assert_eq!(snap.seats.len(), 1, "the seat was put back");
        let batch = RoomWrite::Batch(vec![
            append(id, 3, 4),
            RoomWrite::UpsertSeat(seat(&c, "blue", "Luis", false, 6)),
        ]);
        s.write_room(&c, None, batch).await.expect("the batch");
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.last_seq(), 4);
        assert_eq!(snap.seats.len(), 2);
    }

    pub async fn a_game_stored_as_rows_reads_as_rows(h: &Harness) {
        let s = &h.store;
        let c = code();
        s.create_room(&room(&c, RoomStatus::Playing, 1))
            .await
            .unwrap();
        let g = game(&c, 10);
        s.create_game(&g).await.unwrap();
        // Old-format rows, as written before issue 28.
        s.append_events(g.id, vec![ev(1, "game_started"), ev(2, "turn")])
            .await
            .unwrap();
        s.append_after(g.id, 2, vec![ev(3, "dice_rolled")])
            .await
            .unwrap();
        let snap = s.get_room(&c).await.unwrap().unwrap();
        assert_eq!(snap.log, None);
        assert_eq!(seqs(&snap.events), vec![1, 2, 3]);
        assert_eq!(snap.last_seq(), 3);
        let stored = s.get_game_log(g.id).await.unwrap().expect("game");
        assert_eq!(stored.log, None);
        assert_eq!(seqs(&stored.events), vec![1, 2, 3]);
        assert_eq!(stored.events[2].event, ev(3, "dice_rolled").event);
        // A packed piece after rows would hide them: refused.
        let piece = RoomWrite::AppendLog {
            game_id: g.id,
            after_seq: 3,
            piece: super::cases::piece(4, 4),
        };
        assert!(matches!(
            s.write_room(&c, None, piece).await,
            Err(StoreError::InvalidWrite(_))
        ));
        assert_eq!(s.get_game_log(g.id).await.unwrap().unwrap().last_seq(), 3);
    }
}

backend_tests!(
    [sqlite, postgres, memory]
    [
        the_log_reads_back_as_its_pieces_folded_every_32_and_at_the_end,
        concurrent_pieces_of_many_games_land_in_order,
        a_piece_that_does_not_follow_the_log_is_refused,
        a_failed_batch_puts_its_piece_back,
        a_game_stored_as_rows_reads_as_rows,
        a_deadline_survives_a_reopen_and_is_gone_after_the_end,
    ]
);
