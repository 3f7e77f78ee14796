//! A game stored as its packed log (issue 28, docs/STORAGE.md) on every backend: the start
//! writes its first piece, each append adds one to its tail (a tail row on SQLite; on
//! PostgreSQL the game's one tail row, updated in place), the tail is folded into
//! `games.log` every 32 pieces (48 on PostgreSQL) and at the end; the log reads back as
//! the pieces joined in order; a piece that does not follow the log is refused; a batch
//! that fails puts back the piece it wrote; a game stored as JSON rows (before issue 28)
//! still reads as rows; the turn deadline lives in its own table and leaves nothing once
//! the game ends. On PostgreSQL: one tail row per running game and none per finished
//! game, its updates HOT; the tail rows of a game running across migration 0017 become
//! its one row.

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

    /// The number of pieces (appends) in game `id`'s tail since its last fold: its rows
    /// on SQLite, its row's `pieces` on PostgreSQL (`None` on the memory store).
    async fn tail_pieces(h: &Harness, id: Uuid) -> Option<i64> {
        match h.kind {
            Kind::Postgres => {
                let url = h.url.as_deref()?;
                let mut c = sqlx::PgConnection::connect(url).await.expect("connect");
                let (n,): (i64,) = sqlx::query_as(
                    "SELECT COALESCE(SUM(pieces), 0)::BIGINT FROM game_log_tail WHERE game_id = $1",
                )
                .bind(id)
                .fetch_one(&mut c)
                .await
                .expect("pieces");
                Some(n)
            }
            _ => tail_rows(h, id).await,
        }
    }

    /// How many pieces a backend's tail holds before it is folded (the store's
    /// `Backend::FOLD_EVERY`: 48 on PostgreSQL, whose tail is one row updated in place;
    /// 32 elsewhere).
    pub(super) fn fold_every(kind: Kind) -> i64 {
        match kind {
            Kind::Postgres => 48,
            Kind::Sqlite | Kind::Memory => 32,
        }
    }

    /// The tail rows a tail of `pieces` pieces is on `kind` (PostgreSQL: one per
    /// running game, kept with no pieces after a fold).
    fn rows_for(kind: Kind, pieces: i64) -> i64 {
        match kind {
            Kind::Postgres => 1,
            _ => pieces,
        }
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

    /// The log of game `id` reads back as `want` up to `last` through both readers.
    async fn reads_back(h: &Harness, c: &str, id: Uuid, want: &[u8], last: i64) {
        let expected = PackedLog {
            bytes: want.to_vec(),
            last_seq: last,
        };
        let snap = h.store.get_room(c).await.unwrap().unwrap();
        assert_eq!(snap.log.as_ref(), Some(&expected));
        assert!(snap.events.is_empty(), "no JSON rows for a packed game");
        assert_eq!(snap.last_seq(), last);
        let stored = h.store.get_game_log(id).await.unwrap().expect("game");
        assert_eq!(stored.log.as_ref(), Some(&expected));
        assert_eq!(stored.last_seq(), last);
    }

    // Over 80 lines: one scenario (pieces, the fold, more pieces, the end), its checks in
    // order.
    /// The tail folds after the backend's fold interval of pieces (32; 48 on PostgreSQL):
    /// right after the fold it is empty (PostgreSQL: its row kept, with no bytes and the
    /// folded log's last seq) and the log reads the same and goes on; the end folds the
    /// rest and leaves no tail row.
    pub async fn the_log_reads_back_as_its_pieces_folded_every_n_and_at_the_end(h: &Harness) {
        let s = &h.store;
        let fold = fold_every(h.kind);
        let (c, id) = started(h).await;
        let mut want = piece(1, 3).bytes;
        let mut last = 3;
        // 59 more pieces of 1–2 events each: a fold after the `fold`th piece (the
        // start's included), then `60 - fold` pieces in the tail.
        for k in 0..59 {
            let next = last + 1 + (k % 2);
            s.write_room(&c, None, append(id, last, next))
                .await
                .unwrap_or_else(|e| panic!("piece after {last}: {e}"));
            want.extend_from_slice(&piece(last + 1, next).bytes);
            last = next;
            if k + 2 == fold {
                // Just folded: nothing in the tail, the log reads the same.
                assert_eq!(tail_pieces(h, id).await.unwrap_or(0), 0, "folded");
                if let Some(n) = tail_rows(h, id).await {
                    assert_eq!(n, rows_for(h.kind, 0), "the tail row after a fold");
                }
                reads_back(h, &c, id, &want, last).await;
                // A writer one step behind is still refused after the fold.
                assert!(matches!(
                    s.write_room(&c, None, append(id, last - 1, last)).await,
                    Err(StoreError::SeqMismatch { .. })
                ));
            }
        }
        reads_back(h, &c, id, &want, last).await;
        if let Some(n) = tail_pieces(h, id).await {
            assert_eq!(
                n,
                60 - fold,
                "the first {fold} pieces were folded into games.log"
            );
        }
        if let Some(n) = tail_rows(h, id).await {
            assert_eq!(n, rows_for(h.kind, 60 - fold));
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
    /// land, the tail folds at the backend's interval; a piece that does not follow its log, sent among
    /// them, is refused alone with its own error and leaves nothing.
    /// (Each game's two pieces of a round may land in one group commit, one append:
    /// a tail then holds fewer pieces than pieces sent.)
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
            if let Some(n) = tail_pieces(h, *id).await {
                let fold = fold_every(h.kind);
                assert!(n < fold, "game {g}: {n} tail pieces, folded at {fold}");
            }
            if let Some(n) = tail_rows(h, *id).await {
                assert!(n <= rows_for(h.kind, 31), "game {g}: {n} tail rows");
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
        the_log_reads_back_as_its_pieces_folded_every_n_and_at_the_end,
        concurrent_pieces_of_many_games_land_in_order,
        a_piece_that_does_not_follow_the_log_is_refused,
        a_failed_batch_puts_its_piece_back,
        a_game_stored_as_rows_reads_as_rows,
        a_deadline_survives_a_reopen_and_is_gone_after_the_end,
    ]
);

/// The statistics of `game_log_tail` in the test's schema: `(n_tup_upd, n_tup_hot_upd)`,
/// polled until at least `updates` updates are counted (other backends report their
/// counts within seconds of their commits, not at once) or 30 s have passed.
async fn tail_updates(url: &str, updates: i64) -> (i64, i64) {
    let mut c = sqlx::PgConnection::connect(url).await.expect("connect");
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let counts: (i64, i64) = sqlx::query_as(
            "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables \
             WHERE relid = 'game_log_tail'::regclass",
        )
        .fetch_one(&mut c)
        .await
        .expect("table statistics");
        if counts.0 >= updates || std::time::Instant::now() > until {
            return counts;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
}

// Over 80 lines: one scenario (games started, turns in rounds, some ended), its checks in
// order.
/// PostgreSQL's tail is ONE row per running game (migration 0017), updated in place: many
/// appends and folds of several games (each round's pieces in flight together, so grouped
/// in one statement) leave exactly one row per running game, with the pieces since its
/// last fold, and none for a finished game (one of them ended right on a fold, its row
/// then empty); every game reads back whole; and the updates are HOT (no index names the
/// updated columns, and the table's fillfactor leaves room in the page).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_one_hot_updated_tail_row_per_running_game() {
    let test = "postgres_keeps_one_hot_updated_tail_row_per_running_game";
    let Some(h) = Harness::postgres(test).await else {
        return;
    };
    let s = h.store.clone();
    let url = h.url.clone().expect("postgres url");
    let fold = cases::fold_every(Kind::Postgres);
    let mut games = Vec::new();
    for _ in 0..6 {
        let c = code();
        s.create_room(&room(&c, RoomStatus::Open, 1)).await.unwrap();
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
            seats: vec![seat(&c, "red", "Ana", true, 5)],
            events: Vec::new(),
            log: Some(cases::piece(1, 1)),
        };
        s.write_room(&c, None, RoomWrite::Start(Box::new(start)))
            .await
            .expect("start");
        games.push((c, id));
    }
    let mut want: Vec<Vec<u8>> = games.iter().map(|_| cases::piece(1, 1).bytes).collect();
    let mut last = vec![1_i64; games.len()];
    // 2 * fold - 2 rounds of one piece per game: with the start's, 2 * fold - 1 pieces,
    // folded once; the end's piece of games 0..3 is then the (2 * fold)th: a fold, and the
    // end finds the row empty.
    let rounds = 2 * fold - 2;
    for _ in 0..rounds {
        let writes = games.iter().enumerate().map(|(g, (c, id))| {
            let s = Arc::clone(&s);
            let (c, id, after) = (c.clone(), *id, last[g]);
            async move {
                let piece = RoomWrite::AppendLog {
                    game_id: id,
                    after_seq: after,
                    piece: cases::piece(after + 1, after + 1),
                };
                s.write_room(&c, None, piece).await
            }
        });
        for result in futures_util::future::join_all(writes).await {
            result.expect("piece");
        }
        for (g, bytes) in want.iter_mut().enumerate() {
            bytes.extend_from_slice(&cases::piece(last[g] + 1, last[g] + 1).bytes);
            last[g] += 1;
        }
    }
    let mut c = sqlx::PgConnection::connect(&url).await.expect("connect");
    let rows: Vec<(Uuid, i32, i64)> =
        sqlx::query_as("SELECT game_id, pieces, last_seq FROM game_log_tail ORDER BY game_id")
            .fetch_all(&mut c)
            .await
            .expect("tail rows");
    assert_eq!(rows.len(), games.len(), "one tail row per running game");
    for (id, pieces, seq) in &rows {
        let g = games.iter().position(|(_, gid)| gid == id).expect("a game");
        assert_eq!((i64::from(*pieces), *seq), (fold - 1, last[g]), "game {g}");
    }
    for (g, (c, id)) in games.iter().enumerate().take(3) {
        let end = GameEnd {
            game_id: *id,
            room_code: c.clone(),
            after_seq: last[g],
            events: Vec::new(),
            log: Some(cases::piece(last[g] + 1, last[g] + 1)),
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
        s.write_room(c, None, RoomWrite::End(Box::new(end)))
            .await
            .expect("end");
        want[g].extend_from_slice(&cases::piece(last[g] + 1, last[g] + 1).bytes);
        last[g] += 1;
    }
    let left: Vec<(Uuid,)> = sqlx::query_as("SELECT game_id FROM game_log_tail")
        .fetch_all(&mut c)
        .await
        .expect("tail rows");
    let running: std::collections::HashSet<Uuid> = games[3..].iter().map(|g| g.1).collect();
    assert_eq!(
        left.into_iter()
            .map(|r| r.0)
            .collect::<std::collections::HashSet<_>>(),
        running,
        "a tail row for each running game, none for a finished one"
    );
    for (g, (_, id)) in games.iter().enumerate() {
        let stored = s.get_game_log(*id).await.unwrap().expect("game");
        assert_eq!(stored.game.is_finished(), g < 3);
        let expected = PackedLog {
            bytes: want[g].clone(),
            last_seq: last[g],
        };
        assert_eq!(stored.log, Some(expected), "game {g}");
    }
    // Every append but each game's first is an update (the upsert's), and so is each
    // fold's reset.
    let games_n = i64::try_from(games.len()).expect("a few games");
    let updates = games_n * rounds + 3;
    let (upd, hot) = tail_updates(&url, updates).await;
    assert!(upd >= updates, "{upd} updates counted, {updates} made");
    assert!(
        hot * 10 >= upd * 9,
        "{hot} of {upd} tail updates were HOT: the rest leave dead index entries"
    );
    c.close().await.expect("close");
    h.finish().await;
}

// Over 80 lines: one scenario (the schema before 0017 with old tail rows, the migration,
// the reads and an append after it), its checks in order.
/// Migration 0017 turns the tail rows of a game running across it (one row per append,
/// before) into its one row: their bytes joined in `last_seq` order, the last seq, their
/// count as its pieces; the game reads back the same and goes on from its last seq.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_migration_joins_a_running_games_tail_rows() {
    let test = "postgres_migration_joins_a_running_games_tail_rows";
    common::init_tracing();
    let Some(admin) = common::database_url(&format!("postgres::{test}")) else {
        return;
    };
    let schema = common::create_pg_schema(&admin).await;
    let sep = if admin.contains('?') { '&' } else { '?' };
    let url = format!("{admin}{sep}options[search_path]={schema}");
    // The migrations before 0017, from a copy of the directory.
    let dir = tempfile::tempdir().expect("temp dir");
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/postgres");
    for entry in std::fs::read_dir(&source).expect("migrations") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        if name.as_str() < "0017" {
            std::fs::copy(&path, dir.path().join(&name)).expect("copy");
        }
    }
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(1)
        .connect(&url)
        .await
        .expect("connect");
    sqlx::migrate::Migrator::new(dir.path())
        .await
        .expect("migrations")
        .run(&pool)
        .await
        .expect("migrate to 0016");
    let c = code();
    let id = Uuid::new_v4();
    for sql in [
        "INSERT INTO rooms (code, settings, status, created_at_ms, updated_at_ms) \
         VALUES ($1, '{}', 'playing', 1, 1)",
        "INSERT INTO games (id, room_code, preset, rules, rules_hash, created_at_ms, log, log_seq) \
         VALUES ($2, $1, 'classic', '{}', 'h', 10, '\\x0102'::bytea, 3)",
        // Out of order on purpose: the migration joins them by `last_seq`.
        "INSERT INTO game_log_tail (game_id, last_seq, bytes) VALUES \
         ($2, 7, '\\x07'::bytea), ($2, 4, '\\x04'::bytea), ($2, 5, '\\x05'::bytea)",
    ] {
        sqlx::query(sql)
            .bind(&c)
            .bind(id)
            .execute(&pool)
            .await
            .expect("rows before 0017");
    }
    pool.close().await;
    let store = parchis_store::open_store(Some(&url), dir.path())
        .await
        .expect("open the store: migration 0017");
    let stored = store.get_game_log(id).await.unwrap().expect("game");
    assert_eq!(
        stored.log,
        Some(PackedLog {
            bytes: vec![1, 2, 4, 5, 7],
            last_seq: 7
        })
    );
    let mut conn = sqlx::PgConnection::connect(&url).await.expect("connect");
    let row: (i64, i32, Vec<u8>) =
        sqlx::query_as("SELECT last_seq, pieces, bytes FROM game_log_tail WHERE game_id = $1")
            .bind(id)
            .fetch_one(&mut conn)
            .await
            .expect("the one tail row");
    assert_eq!(row, (7, 3, vec![4, 5, 7]));
    store
        .write_room(
            &c,
            None,
            RoomWrite::AppendLog {
                game_id: id,
                after_seq: 7,
                piece: cases::piece(8, 8),
            },
        )
        .await
        .expect("a piece after the migration");
    let stored = store.get_game_log(id).await.unwrap().expect("game");
    assert_eq!(stored.last_seq(), 8);
    let pieces: i32 = sqlx::query_scalar("SELECT pieces FROM game_log_tail WHERE game_id = $1")
        .bind(id)
        .fetch_one(&mut conn)
        .await
        .expect("pieces");
    assert_eq!(pieces, 4);
    conn.close().await.expect("close");
    store.close().await;
    common::drop_pg_schema(&admin, &schema).await;
}
