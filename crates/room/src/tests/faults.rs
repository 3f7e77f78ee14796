//! Fault injection: a store that fails its N-th write, for every N across a whole game
//! (room creation, joins, the start, actions, timeouts, the end). Each step is either
//! applied or refused with a clear error (`internal`; `room_unavailable` when the fault
//! is a database that cannot be reached), the room's memory and the store agree
//! afterwards, and a restart from the store restores the room as it was.

use super::{first_command, settings, Driver, FaultyStore};
use crate::{Member, RoomCmd, SeatCmd};
use crate::{RoomsConfig, SingleNode};
use parchis_protocol::{ErrorCode, RoomStatus, ServerMessage};
use parchis_room_core::{persist, replay};
use parchis_store::{RoomStatus as StoredStatus, Store};
use serde_json::json;
use std::sync::Arc;

/// Every 5th throw the clock runs out instead of the player acting.
const TIMEOUT_EVERY: usize = 5;
/// After this many steps Luis leaves and the game ends (by forfeit): a whole game's
/// writes — creation, joins, start, actions, timeouts, the end — in a bounded number.
const LEAVE_AFTER: usize = 120;

/// What one step did.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    Applied,
    Refused,
}

/// The room's memory and the store agree: seats, status, and (once a game exists) the
/// stored log replays to exactly the live game, up to the live seq.
pub(super) async fn agree(d: &Driver, store: &FaultyStore) -> Result<(), String> {
    let code = d.core.code();
    let snap = store
        .get_room(code)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("room not stored")?;
    let mut stored: Vec<(String, String)> = snap
        .seats
        .iter()
        .map(|s| (s.colour.clone(), s.display_name.clone()))
        .collect();
    let mut live: Vec<(String, String)> = d
        .core
        .seats()
        .iter()
        .map(|s| (s.colour.to_string(), s.name.clone()))
        .collect();
    stored.sort();
    live.sort();
    if stored != live {
        return Err(format!("seats: stored {stored:?}, live {live:?}"));
    }
    let want = match d.core.status() {
        RoomStatus::Lobby => StoredStatus::Open,
        RoomStatus::Playing => StoredStatus::Playing,
        RoomStatus::Finished => StoredStatus::Finished,
    };
    if snap.room.status != want {
        return Err(format!(
            "status: stored {:?}, live {want:?}",
            snap.room.status
        ));
    }
    match (d.core.game_id(), &snap.game) {
        (None, None) => Ok(()),
        (Some(id), Some(g)) if g.id == id => {
            let (log, _) =
                persist::stored_log(&snap.events, snap.log.as_ref()).map_err(|e| e.to_string())?;
            let r = replay(&log).map_err(|e| e.to_string())?;
            if r.seq != d.core.seq() {
                return Err(format!("seq: stored {}, live {}", r.seq, d.core.seq()));
            }
            if Some(&r.game) != d.core.game() {
                return Err("the stored log replays to another game".into());
            }
            if g.is_finished() != (d.core.status() == RoomStatus::Finished) {
                return Err("finished: store and room disagree".into());
            }
            Ok(())
        }
        (live, stored) => Err(format!(
            "game: live {live:?}, stored {:?}",
            stored.as_ref().map(|g| g.id)
        )),
    }
}

fn member(conn: u64) -> Member {
    Member::Player(conn)
}

/// One step of the scripted game: seat Ana and Luis, start, then throws (every
/// [`TIMEOUT_EVERY`]th one a timeout). `None` once the game is over.
async fn step(d: &mut Driver, k: usize, req: u64) -> Option<Step> {
    let before = (d.core.seq(), d.core.seats().len(), d.refused_writes);
    let refused = |d: &Driver| d.refused_writes > before.2;
    let seated = d.core.seats().len();
    if seated < 2 {
        let name = if seated == 0 { "Ana" } else { "Luis" };
        let conn = seated as u64 + 1;
        d.input(parchis_room_core::Input::Join {
            conn,
            req,
            name: name.into(),
            colour: None,
            client_seed: None,
            account: None,
            ratings: Default::default(),
            token: format!("token-{conn}"),
        })
        .await;
        return Some(match d.replies.pop() {
            Some(Ok(_)) => Step::Applied,
            Some(Err(r)) if r.code == expected(d) && refused(d) => Step::Refused,
            other => panic!("join: {other:?}"),
        });
    }
    let game = match d.core.status() {
        RoomStatus::Finished => return None,
        RoomStatus::Lobby => None,
        RoomStatus::Playing => d.core.game().copied(),
    };
    let Some(game) = game else {
        let answer = d.cmd(1, member(1), req, SeatCmd::Start).await;
        return Some(judge(d, answer, before.0, refused(d)));
    };
    if k >= LEAVE_AFTER {
        return Some(leave(d, req, before.0, refused(d)).await);
    }
    if k % TIMEOUT_EVERY == TIMEOUT_EVERY - 1 {
        let t = d.core.deadline().expect("a clock runs");
        d.at(t).await;
        return Some(if refused(d) {
            assert_eq!(d.core.seq(), before.0, "a refused timeout changes nothing");
            Step::Refused
        } else {
            assert!(d.core.seq() > before.0, "the timeout was applied");
            Step::Applied
        });
    }
    let conn = if game.turn() == d.core.seats()[0].colour {
        1
    } else {
        2
    };
    let answer = d.cmd(conn, member(conn), req, first_command(&game)).await;
    Some(judge(d, answer, before.0, refused(d)))
}

/// Luis leaves. The leave is acknowledged only once the forfeit it causes is stored: a
/// refused forfeit refuses the leave with the store's code (issue 25: no acknowledgement
/// before durability), changes nothing, and Luis keeps his seat and his connection.
async fn leave(d: &mut Driver, req: u64, seq_before: u64, _: bool) -> Step {
    let conn = d.core.seats()[1].conn.expect("Luis is connected");
    let refused_before = d.refused_writes;
    let answer = d.cmd(conn, member(2), req, SeatCmd::Leave).await;
    if d.refused_writes > refused_before {
        match &answer {
            ServerMessage::Error { code, .. } => assert_eq!(*code, expected(d), "{answer:?}"),
            other => panic!("a leave whose forfeit was not stored is refused: {other:?}"),
        }
        assert_eq!(
            d.core.seq(),
            seq_before,
            "a refused forfeit changes nothing"
        );
        assert_eq!(d.core.status(), RoomStatus::Playing);
        assert_eq!(
            d.core.seats()[1].conn,
            Some(conn),
            "Luis keeps his connection"
        );
        Step::Refused
    } else {
        assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
        assert_eq!(
            d.core.status(),
            RoomStatus::Finished,
            "the forfeit ended the game"
        );
        Step::Applied
    }
}

/// The code of a step refused because its write failed: `room_unavailable` (try again)
/// when the database could not be reached, else `internal`.
fn expected(d: &Driver) -> ErrorCode {
    match &d.store {
        Some(store) if store.unreachable.load(std::sync::atomic::Ordering::SeqCst) => {
            ErrorCode::RoomUnavailable
        }
        _ => ErrorCode::Internal,
    }
}

fn judge(d: &Driver, answer: ServerMessage, seq_before: u64, refused: bool) -> Step {
    match answer {
        ServerMessage::Ok { .. } if !refused => Step::Applied,
        ServerMessage::Error { code, message, .. } if refused => {
            assert_eq!(
                code,
                expected(d),
                "a store failure is internal, a database out of reach room_unavailable"
            );
            if code == ErrorCode::RoomUnavailable {
                assert_eq!(message, parchis_room_core::effect::STORE_UNREACHABLE);
            }
            assert_eq!(d.core.seq(), seq_before, "a refused step changes nothing");
            Step::Refused
        }
        other => panic!("step answered {other:?} (refused write: {refused})"),
    }
}

fn room(n: usize) -> Driver {
    let s = settings(
        json!({"preset": "online", "seats": 2, "turn_clock_secs": 30,
        "timeouts_to_abandon": 50}),
    );
    Driver::new(&format!("FAULT{n:03}"), s, 42, 64)
}

/// Restores the room from the store on a fresh server state and compares it with the
/// live room.
async fn restart_agrees(d: &Driver, store: &Arc<FaultyStore>) {
    store.fail_write(None);
    let snap = store
        .get_room(d.core.code())
        .await
        .expect("read")
        .expect("stored");
    if snap.room.status == StoredStatus::Finished {
        return;
    }
    let dyn_store: Arc<dyn Store> = store.clone();
    let rooms = SingleNode::rooms(RoomsConfig::default(), dyn_store);
    crate::restore(&rooms, &snap, None)
        .await
        .expect("the room restores");
    let handle = rooms.room(d.core.code()).expect("registered");
    let (reply, answer) = tokio::sync::oneshot::channel();
    handle
        .sender()
        .send(RoomCmd::View { reply })
        .await
        .expect("room running");
    let view = answer.await.expect("view");
    // The restore runs on the wall clock, before the tests' epoch T0: a running game's
    // stored deadline is then more than a full clock ahead, as if written by a clock
    // running ahead, and the restore stores a fresh `turn` (DEADLINE_SKEW_MS): one event.
    let fresh_turn = u64::from(d.core.status() == RoomStatus::Playing && d.core.game().is_some());
    assert_eq!(view.seq, d.core.seq() + fresh_turn, "restored seq");
    assert_eq!(view.status, d.core.status(), "restored status");
    assert_eq!(
        view.game.map(|g| g.position),
        d.core.game().map(|g| g.to_position()),
        "restored position"
    );
    rooms.shutdown_token().cancel();
}

#[tokio::test]
async fn every_failed_write_of_a_whole_game_is_refused_cleanly_and_restart_restores() {
    // A clean run: how many writes the whole game makes.
    let store = Arc::new(FaultyStore::new());
    let mut d = room(0).with_store(store.clone()).await.expect("room");
    let mut k = 0;
    while let Some(s) = step(&mut d, k, k as u64 + 100).await {
        assert_eq!(s, Step::Applied);
        k += 1;
        assert!(k < 5_000, "the game ends");
    }
    agree(&d, &store).await.expect("clean run agrees");
    let total = store.writes();
    assert!(
        total > LEAVE_AFTER,
        "a whole game makes many writes ({total})"
    );
    assert!(
        matches!(
            d.persisted.last(),
            Some(parchis_room_core::persist::Write::End(_))
        ),
        "the game ended with its end transaction"
    );

    each_write_fails_once(total, 1, false).await;
}

/// The same with the database out of reach at every 3rd write of the game: each refused
/// step is answered `room_unavailable` with "nothing was applied; send it again".
#[tokio::test]
async fn a_write_that_finds_the_database_out_of_reach_is_refused_as_room_unavailable() {
    let store = Arc::new(FaultyStore::new());
    let mut d = room(0).with_store(store.clone()).await.expect("room");
    let mut k = 0;
    while step(&mut d, k, k as u64 + 100).await.is_some() {
        k += 1;
    }
    each_write_fails_once(store.writes(), 3, true).await;
}

/// For every `every`-th write `n` of a whole game (of `total` writes): a fresh room whose
/// store fails write `n` (`unreachable`: as a database out of reach) plays on; the
/// refused step is refused cleanly, memory and store agree, and a restart restores it.
async fn each_write_fails_once(total: usize, every: usize, unreachable: bool) {
    for n in (1..=total).step_by(every) {
        let store = Arc::new(FaultyStore::new());
        store.faults_unreachable(unreachable);
        store.fail_write(Some(n));
        let Some(mut d) = room(n).with_store(store.clone()).await else {
            assert_eq!(n, 1, "only the first write creates the room");
            continue;
        };
        let mut k = 0;
        let mut refused_at = None;
        while let Some(s) = step(&mut d, k, k as u64 + 100).await {
            k += 1;
            if s == Step::Refused {
                refused_at = Some(k);
                // Right after the refusal: memory and store agree.
                agree(&d, &store)
                    .await
                    .unwrap_or_else(|e| panic!("write {n} failed: {e}"));
            }
            // A few steps after the fault, the room goes on and still agrees; then stop.
            if refused_at.is_some_and(|at| k >= at + 6) {
                break;
            }
            assert!(k < 5_000, "write {n}: the game ends");
        }
        assert_eq!(store.failures(), 1, "write {n} was injected once");
        agree(&d, &store)
            .await
            .unwrap_or_else(|e| panic!("write {n} failed, later: {e}"));
        restart_agrees(&d, &store).await;
    }
}
