//! A running game restored from its packed log's last snapshot (issue 28,
//! `docs/STORAGE.md`, "Snapshots") goes on exactly as the same game never restarted: the
//! same game is played twice from the same seed by four people sending the first legal
//! command; one copy is restored from its store mid-game (after more than two snapshots)
//! and the other is not, and after the restore both store the very same events (seqs,
//! times, dice, positions) and the very same packed bytes. The restore replays only the
//! throws after the snapshot (at least the spectator delay's), its resume history starts
//! there, and its clock and spectator delay are those of the copy.

use super::{first_command, room_init, settings, Driver, FaultyStore};
use crate::{Member, Ms};
use parchis_engine::{Colour, Game};
use parchis_protocol::{RoomStatus, ServerMessage};
use parchis_room_core::core::Core;
use parchis_room_core::delay::is_throw;
use parchis_room_core::{persist, resume, throws, Input, LoggedEvent};
use parchis_store::Store;
use serde_json::json;
use std::sync::Arc;

/// Throws played before the restore: just past the second snapshot, so that fewer than
/// the delay's throws follow it and the restore reads from the first one.
const BEFORE: usize = 2 * throws::state::SNAPSHOT_EVERY as usize + 2;
/// Commands played after it.
const AFTER: usize = 80;
/// The spectator delay (throws).
const DELAY: u8 = 6;
const SEED: u64 = 28;

struct Run {
    d: Driver,
    store: Arc<FaultyStore>,
    /// Each person's connection and seat, by colour.
    people: Vec<(Colour, u64, u64)>,
    req: u64,
}

impl Run {
    /// Four people in a lobby with the spectator delay, the game started.
    async fn start() -> Run {
        let s = settings(json!({
            "seats": 4,
            "turn_clock_secs": 30,
            "disconnect_grace_secs": 600,
            "spectators": true,
            "spectator_delay_throws": DELAY,
        }));
        let store = Arc::new(FaultyStore::new());
        let mut d = Driver::new("SNAP0028", s, SEED, 1024)
            .with_store(store.clone())
            .await
            .expect("room created");
        let mut people = Vec::new();
        for conn in 1..=4u64 {
            let Member::Player(id) = d.join(conn, &format!("P{conn}")).await else {
                panic!("a seat")
            };
            let colour = d.core.seats().last().expect("seated").colour;
            people.push((colour, conn, id));
        }
        let answer = d
            .cmd(1, Member::Player(people[0].2), 2, crate::SeatCmd::Start)
            .await;
        assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
        Run {
            d,
            store,
            people,
            req: 10,
        }
    }

    fn game(&self) -> Game {
        *self.d.core.game().expect("a game runs")
    }

    /// The player to act sends the first legal command, 700 ms later; whether it was a
    /// throw.
    async fn act(&mut self) -> bool {
        let game = self.game();
        assert!(game.outcome().is_none(), "the game is still running");
        let (_, conn, id) = *self
            .people
            .iter()
            .find(|p| p.0 == game.turn())
            .expect("a person plays each colour");
        let cmd = first_command(&game);
        let roll = matches!(cmd, crate::SeatCmd::Roll);
        self.d.at(self.d.now + 700).await;
        self.req += 1;
        let answer = self.d.cmd(conn, Member::Player(id), self.req, cmd).await;
        assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
        roll
    }

    /// Plays `n` throws and on to the next clock started (a `turn` just sent).
    async fn play_throws(&mut self, n: usize) {
        let mut thrown = 0;
        while thrown < n || self.d.core.deadline() != Some(self.d.now + 30_000) {
            thrown += usize::from(self.act().await);
        }
    }

    async fn play(&mut self, n: usize) {
        for _ in 0..n {
            if self.game().outcome().is_some() {
                break;
            }
            self.act().await;
        }
    }

    /// The stored packed log, whole.
    async fn stored(&self) -> (Vec<u8>, Vec<LoggedEvent>) {
        let snap = self
            .store
            .get_room(self.d.core.code())
            .await
            .expect("read")
            .expect("stored");
        let bytes = snap.log.expect("a packed log").bytes;
        let events = throws::decode(&bytes).expect("unpacks").events;
        (bytes, events)
    }
}

/// The room of `run` restored from its store at `now` as `restore` does: from the last
/// snapshot with the delay's throws after it.
async fn restored(run: &Run, now: Ms) -> (Core, parchis_room_core::Snapshot, usize) {
    let code = run.d.core.code();
    let snap = run
        .store
        .get_room(code)
        .await
        .expect("read")
        .expect("stored");
    let record = snap.game.as_ref().expect("a game");
    let (log, from, encoder) =
        crate::restore::restore_log(&snap, u64::from(DELAY)).expect("the log reads");
    let from = from.expect("restored from a snapshot");
    let replayed_throws = log.iter().filter(|e| is_throw(&e.event)).count();
    let resumed = resume(Some(&from), &log).expect("the tail replays");
    let per_throw = usize::from(resumed.game.rules().dice.clamp(1, 2));
    let mut init = room_init(code, run.d.core.settings().clone(), SEED ^ 1, 1024, now);
    init.dice = parchis_room_core::dice::DiceSource::restored(
        record.dice.as_ref().expect("fair dice stored"),
        per_throw,
        resumed.next_throw,
    )
    .expect("dice restore");
    let mut core = Core::new(init);
    for seat in &snap.seats {
        core.restore_seat(persist::seat_from(seat).expect("seat reads"), now);
    }
    core.resume_log(encoder);
    let (state, effects) = core.restore_game(record.id, &log, resumed, record.deadline_ms, now);
    assert_eq!(state, parchis_room_core::Restored::Running);
    assert!(
        effects.is_empty(),
        "restored within its clock: no fresh turn"
    );
    (core, from, replayed_throws)
}

#[tokio::test]
async fn a_game_restored_from_its_last_snapshot_goes_on_as_the_unrestarted_copy() {
    let mut copy = Run::start().await;
    let mut run = Run::start().await;
    copy.play_throws(BEFORE).await;
    run.play_throws(BEFORE).await;
    let at = run.d.core.seq();
    assert_eq!(copy.stored().await.0, run.stored().await.0, "the same game");

    let (core, from, replayed) = restored(&run, run.d.now).await;
    // Only the throws after the last snapshot followed by the delay's are replayed:
    // here the one before the last.
    assert!(from.seq < at);
    let every = throws::state::SNAPSHOT_EVERY as usize;
    assert!(
        replayed >= every && replayed < every + usize::from(DELAY),
        "{replayed} throws replayed"
    );
    assert_eq!(core.game(), run.d.core.game());
    assert_eq!(core.seq(), at);
    assert_eq!(core.deadline(), run.d.core.deadline(), "the clock goes on");
    // The spectators see what they saw (the delay's throws behind).
    assert_eq!(core.spectator_seq(), run.d.core.spectator_seq());
    assert!(core.spectator_seq() < at);
    assert_eq!(
        core.spectator_view().game.map(|g| g.position),
        run.d.core.spectator_view().game.map(|g| g.position)
    );
    // The resume history starts after the snapshot.
    assert_eq!(core.history().front().map(|h| h.0), Some(from.seq + 1));
    assert!(core.can_replay(from.seq) && !core.can_replay(from.seq - 1));

    run.d.core = core;
    run.d.attached.clear();
    // People resume: one from before the snapshot gets a snapshot (as a client too far
    // behind the history does), the others the events they missed (none).
    let people = run.people.clone();
    for (k, &(_, conn, _)) in people.iter().enumerate() {
        let last_seq = if k == 0 { from.seq - 1 } else { at };
        run.req += 1;
        let before = run.d.messages(conn).len();
        run.d
            .input(Input::Resume {
                conn,
                req: run.req,
                token: format!("token-{conn}"),
                account: None,
                last_seq,
            })
            .await;
        let welcome = run.d.messages(conn)[before..].iter().find_map(|m| match m {
            ServerMessage::Welcome { seq, snapshot, .. } => Some((*seq, snapshot.is_some())),
            _ => None,
        });
        assert_eq!(welcome, Some((at, k == 0)), "resume of {conn}");
        let Some(Ok(Member::Player(id))) = run.d.replies.pop() else {
            panic!("resumed")
        };
        run.people[k].2 = id;
        assert!(!run.d.messages(conn)[before..]
            .iter()
            .any(|m| matches!(m, ServerMessage::Event { .. })));
    }

    copy.play(AFTER).await;
    run.play(AFTER).await;
    let (copy_bytes, copy_events) = copy.stored().await;
    let (run_bytes, run_events) = run.stored().await;
    let after = |events: &[LoggedEvent]| -> Vec<LoggedEvent> {
        events.iter().filter(|e| e.seq > at).cloned().collect()
    };
    let (a, b) = (after(&copy_events), after(&run_events));
    assert!(a.iter().filter(|e| is_throw(&e.event)).count() > 10);
    assert_eq!(a, b, "the same events after the restore");
    assert_eq!(
        copy_bytes, run_bytes,
        "the same packed log, snapshots included"
    );
    assert_eq!(copy.d.core.game(), run.d.core.game());
    assert_eq!(copy.d.core.status(), RoomStatus::Playing);
}
