//! A game's packed log in the store (issue 28, `docs/STORAGE.md`), on every backend:
//! one tail row per group commit, written in the same transaction as the events it
//! packs (refused with them), folded into the game's row every `LOG_COMPACT_EVERY`
//! pieces and at the end, and read back as one byte string in `last_seq` order.

#[macro_use]
mod common;

use common::{code, ev, game, room, seqs, Harness};
use parchis_store::{
    GameEnd, GameStart, RoomStatus, RoomStatusUpdate, RoomWrite, StoreError, LOG_COMPACT_EVERY,
};
use serde_json::json;
use uuid::Uuid;

mod cases {
    use super::*;

    /// A started game whose first event (seq 1) is stored with its piece; room, id.
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
            events: vec![ev(1, "start")],
        };
        h.store
            .write_room(
                &c,
                None,
                RoomWrite::Batch(vec![RoomWrite::Start(Box::new(start)), piece(id, 1)]),
            )
            .await
            .expect("start with its piece");
        (c, id)
    }

    /// The piece that packs up to `last_seq`: distinct bytes per piece.
    fn piece_bytes(last_seq: i64) -> Vec<u8> {
        vec![last_seq as u8, 0xA0, (last_seq >> 8) as u8]
    }

    fn piece(game_id: Uuid, last_seq: i64) -> RoomWrite {
        RoomWrite::LogPiece {
            game_id,
            last_seq,
            bytes: piece_bytes(last_seq),
        }
    }

    /// The room's append: the event `seq` and its piece, one transaction.
    fn append(game_id: Uuid, seq: i64) -> RoomWrite {
        RoomWrite::Batch(vec![
            RoomWrite::Append {
                game_id,
                after_seq: seq - 1,
                events: vec![ev(seq, "a")],
            },
            piece(game_id, seq),
        ])
    }

    fn all_pieces(to: i64) -> Vec<u8> {
        (1..=to).flat_map(piece_bytes).collect()
    }

    /// Pieces read back concatenated in order, before and after the tail is folded in
    /// (the 32nd piece compacts), and a piece already folded in is still a duplicate.
    pub async fn pieces_read_back_whole_across_compaction(h: &Harness) {
        let s = &h.store;
        let (c, id) = started(h).await;
        let log = s.game_log(id).await.unwrap().expect("a log");
        assert_eq!((log.last_seq, log.bytes), (1, piece_bytes(1)));
        let last = LOG_COMPACT_EVERY + 8;
        for seq in 2..=last {
            s.write_room(&c, None, append(id, seq))
                .await
                .expect("append");
            let log = s.game_log(id).await.unwrap().expect("a log");
            assert_eq!(log.last_seq, seq);
            assert_eq!(log.bytes, all_pieces(seq), "after piece {seq}");
        }
        for old in [1, LOG_COMPACT_EVERY, last] {
            let again = s.append_log(id, old, vec![9]).await;
            assert!(
                matches!(again, Err(StoreError::DuplicateSeq { seq, .. }) if seq == old),
                "piece {old} again: {again:?}"
            );
        }
        assert_eq!(
            s.game_log(id).await.unwrap().unwrap().bytes,
            all_pieces(last)
        );
    }

    /// A piece is durable exactly with its events: a batch whose append does not follow
    /// stores neither.
    pub async fn a_piece_is_refused_with_its_events(h: &Harness) {
        let s = &h.store;
        let (c, id) = started(h).await;
        let refused = s
            .write_room(
                &c,
                None,
                RoomWrite::Batch(vec![
                    RoomWrite::Append {
                        game_id: id,
                        after_seq: 5,
                        events: vec![ev(6, "ahead")],
                    },
                    piece(id, 6),
                ]),
            )
            .await;
        assert!(
            matches!(refused, Err(StoreError::SeqMismatch { .. })),
            "{refused:?}"
        );
        let log = s.game_log(id).await.unwrap().unwrap();
        assert_eq!((log.last_seq, log.bytes), (1, piece_bytes(1)));
        let unknown = s.append_log(Uuid::new_v4(), 1, vec![1]).await;
        assert!(
            matches!(unknown, Err(StoreError::GameNotFound(_))),
            "{unknown:?}"
        );
    }

    /// The end folds the tail in, in its own transaction; the events and the log agree.
    pub async fn the_end_folds_the_log(h: &Harness) {
        let s = &h.store;
        let (c, id) = started(h).await;
        for seq in 2..=4 {
            s.write_room(&c, None, append(id, seq))
                .await
                .expect("append");
        }
        let end = GameEnd {
            game_id: id,
            room_code: c.clone(),
            after_seq: 4,
            events: vec![ev(5, "won")],
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
        s.write_room(
            &c,
            None,
            RoomWrite::Batch(vec![piece(id, 5), RoomWrite::End(Box::new(end))]),
        )
        .await
        .expect("end");
        let log = s.game_log(id).await.unwrap().unwrap();
        assert_eq!((log.last_seq, log.bytes), (5, all_pieces(5)));
        let (g, events) = s.get_game(id).await.unwrap().unwrap();
        assert!(g.is_finished());
        assert_eq!(seqs(&events), vec![1, 2, 3, 4, 5]);
        // Folded: a repeated piece is a duplicate of the game's row, not of a tail row.
        let again = s.append_log(id, 3, vec![9]).await;
        assert!(
            matches!(again, Err(StoreError::DuplicateSeq { seq: 3, .. })),
            "{again:?}"
        );
    }

    /// Many games appending with their pieces at once (grouped commits: the events of a
    /// group in one statement, each piece after its events): every log is whole.
    pub async fn concurrent_games_keep_their_pieces_apart(h: &Harness) {
        let mut games = Vec::new();
        for _ in 0..12 {
            games.push(started(h).await);
        }
        let writers = games.iter().cloned().map(|(c, id)| {
            let store = h.store.clone();
            tokio::spawn(async move {
                for seq in 2..=6 {
                    store
                        .write_room(&c, None, append(id, seq))
                        .await
                        .expect("append");
                }
            })
        });
        for w in writers.collect::<Vec<_>>() {
            w.await.expect("writer");
        }
        for (_, id) in games {
            let log = h.store.game_log(id).await.unwrap().unwrap();
            assert_eq!((log.last_seq, log.bytes), (6, all_pieces(6)));
            let (_, events) = h.store.get_game(id).await.unwrap().unwrap();
            assert_eq!(seqs(&events), vec![1, 2, 3, 4, 5, 6]);
        }
    }

    /// A game stored without a packed log (the old event-row format) has none to read.
    pub async fn an_old_format_game_has_no_log(h: &Harness) {
        let s = &h.store;
        let c = code();
        s.create_room(&room(&c, RoomStatus::Open, 1)).await.unwrap();
        let g = game(&c, 10);
        s.create_game(&g).await.unwrap();
        s.append_events(g.id, vec![ev(1, "old")]).await.unwrap();
        assert_eq!(s.game_log(g.id).await.unwrap(), None);
        assert_eq!(s.game_log(Uuid::new_v4()).await.unwrap(), None);
    }
}

backend_tests!(
    [sqlite, postgres, memory]
    [
        pieces_read_back_whole_across_compaction,
        a_piece_is_refused_with_its_events,
        the_end_folds_the_log,
        an_old_format_game_has_no_log,
        concurrent_games_keep_their_pieces_apart,
    ]
);
