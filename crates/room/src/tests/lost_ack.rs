//! Issue #13: a write whose commit answer is lost. The real room actor (started and
//! registered like any room on a single node) over a store that can lose the answer to
//! its next write, after applying it or not, and fail its reads. Each test asserts the
//! answer the command gets, whether the room rebuilds itself from its log, that the next
//! command is applied, that the log has no gap and that every client saw every event
//! exactly once, in seq order (before and after its resume).

use super::{command_for, settings};
use crate::actor::test_room::link;
use crate::actor::Actor;
use crate::create::room_init;
use crate::rooms::Rooms;
use crate::Frame;
use crate::{now_ms, ConnId, ConnLink, Member, RoomCmd, SeatCmd};
use crate::{RoomsConfig, SingleNode};
use async_trait::async_trait;
use parchis_protocol::{close_code, ErrorCode, RoomEvent, ServerMessage, TurnInfo};
use parchis_room_core::core::Core;
use parchis_room_core::effect::{STORE_AMBIGUOUS, STORE_REBUILD, STORE_UNREACHABLE};
use parchis_room_core::persist;
use parchis_store::{
    EventRecord, Fence, GameEnd, GameQuery, GameRecord, GameStart, MemoryStore, RoomRecord,
    RoomSnapshot, RoomStatusUpdate, RoomWrite, SeatRecord, Store, StoreError,
};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

/// Longest the test waits for the room to answer or act.
const WAIT: Duration = Duration::from_secs(10);

/// How the next room write's answer is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lose {
    /// The write is applied, then its commit reported without an answer.
    Applied,
    /// The commit is reported without an answer, and nothing was applied.
    NotApplied,
    /// The write is refused as repeating a seq already stored (nothing of it applied):
    /// what PostgreSQL answers when an earlier commit whose answer was lost lands only
    /// after the room's doubt read found it not applied (the new insert of the same
    /// seq waits for it, then violates the unique key).
    Duplicate,
}

/// A [`MemoryStore`] that can lose the answer to its next room write
/// ([`StoreError::CommitUnknown`], as the writer reports a connection lost during
/// `COMMIT`) and fail its room reads (a database out of reach).
#[derive(Default)]
struct LossyStore {
    inner: MemoryStore,
    lose: Mutex<Option<Lose>>,
    reads_fail: AtomicBool,
}

impl LossyStore {
    fn lose_next(&self, how: Lose) {
        *self.lose.lock().unwrap_or_else(|e| e.into_inner()) = Some(how);
    }

    fn lost_answer() -> StoreError {
        StoreError::CommitUnknown(Arc::new(sqlx::Error::Io(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "injected: connection reset during COMMIT",
        ))))
    }
}

#[async_trait]
impl Store for LossyStore {
    async fn write_room(
        &self,
        code: &str,
        fence: Option<&Fence>,
        write: RoomWrite,
    ) -> parchis_store::Result<()> {
        let lose = self.lose.lock().unwrap_or_else(|e| e.into_inner()).take();
        match lose {
            Some(Lose::Applied) => {
                self.inner.write_room(code, fence, write).await?;
                Err(Self::lost_answer())
            }
            Some(Lose::NotApplied) => Err(Self::lost_answer()),
            Some(Lose::Duplicate) => match write {
                RoomWrite::Append {
                    game_id, after_seq, ..
                }
                | RoomWrite::AppendLog {
                    game_id, after_seq, ..
                } => Err(StoreError::DuplicateSeq {
                    game_id,
                    seq: after_seq + 1,
                }),
                other => self.inner.write_room(code, fence, other).await,
            },
            None => self.inner.write_room(code, fence, write).await,
        }
    }
    async fn get_room(&self, code: &str) -> parchis_store::Result<Option<RoomSnapshot>> {
        if self.reads_fail.load(Ordering::SeqCst) {
            return Err(StoreError::from(sqlx::Error::Io(std::io::Error::new(
                std::io::ErrorKind::ConnectionRefused,
                "injected: database unreachable",
            ))));
        }
        self.inner.get_room(code).await
    }
    async fn create_room(&self, room: &RoomRecord) -> parchis_store::Result<()> {
        self.inner.create_room(room).await
    }
    async fn update_room_status(
        &self,
        code: &str,
        u: RoomStatusUpdate,
    ) -> parchis_store::Result<()> {
        self.inner.update_room_status(code, u).await
    }
    async fn upsert_seat(&self, seat: &SeatRecord) -> parchis_store::Result<()> {
        self.inner.upsert_seat(seat).await
    }
    async fn delete_seat(&self, code: &str, colour: &str) -> parchis_store::Result<bool> {
        self.inner.delete_seat(code, colour).await
    }
    async fn create_game(&self, game: &GameRecord) -> parchis_store::Result<()> {
        self.inner.create_game(game).await
    }
    async fn append_events(&self, id: Uuid, events: Vec<EventRecord>) -> parchis_store::Result<()> {
        self.inner.append_events(id, events).await
    }
    async fn append_after(
        &self,
        id: Uuid,
        after: i64,
        events: Vec<EventRecord>,
    ) -> parchis_store::Result<()> {
        self.inner.append_after(id, after, events).await
    }
    async fn start_game(&self, start: GameStart) -> parchis_store::Result<()> {
        self.inner.start_game(start).await
    }
    async fn end_game(&self, end: GameEnd) -> parchis_store::Result<()> {
        self.inner.end_game(end).await
    }
    async fn set_deadline(&self, id: Uuid, d: Option<i64>) -> parchis_store::Result<()> {
        self.inner.set_deadline(id, d).await
    }
    async fn finish_game(
        &self,
        id: Uuid,
        result: &Value,
        reason: &str,
        at: i64,
    ) -> parchis_store::Result<()> {
        self.inner.finish_game(id, result, reason, at).await
    }
    async fn load_unfinished(&self) -> parchis_store::Result<Vec<RoomSnapshot>> {
        self.inner.load_unfinished().await
    }
    async fn get_game(
        &self,
        id: Uuid,
    ) -> parchis_store::Result<Option<(GameRecord, Vec<EventRecord>)>> {
        self.inner.get_game(id).await
    }
    async fn get_game_log(
        &self,
        id: Uuid,
    ) -> parchis_store::Result<Option<parchis_store::StoredGame>> {
        self.inner.get_game_log(id).await
    }
    async fn list_games(&self, code: &str) -> parchis_store::Result<Vec<GameRecord>> {
        self.inner.list_games(code).await
    }
    async fn find_games(&self, q: &GameQuery) -> parchis_store::Result<Vec<GameRecord>> {
        self.inner.find_games(q).await
    }
    async fn ping(&self) -> parchis_store::Result<()> {
        self.inner.ping().await
    }
    async fn close(&self) {
        self.inner.close().await
    }
}

/// One client of the room: its connection's queue and what it saw.
struct Client {
    link: ConnLink,
    rx: mpsc::Receiver<Frame>,
    member: Member,
    token: String,
    /// The seq of every event frame received, over all its connections, in order.
    seqs: Vec<u64>,
    /// The last `your_turn` received on this connection.
    turn: Option<TurnInfo>,
    /// `ok` and `error` answers not yet looked at.
    answers: Vec<ServerMessage>,
}

impl Client {
    fn take(&mut self, frame: &str) {
        match serde_json::from_str::<ServerMessage>(frame).expect("server message") {
            ServerMessage::Event { seq, .. } => self.seqs.push(seq),
            ServerMessage::YourTurn(turn) => self.turn = Some(turn),
            ServerMessage::Welcome { token: Some(t), .. } => self.token = t,
            m @ (ServerMessage::Ok { .. } | ServerMessage::Error { .. }) => self.answers.push(m),
            _ => {}
        }
    }

    /// Takes in every frame queued so far.
    fn pump(&mut self) {
        while let Ok(frame) = self.rx.try_recv() {
            self.take(&frame);
        }
    }

    /// Waits for the answer to request `req`.
    async fn answer(&mut self, req: u64) -> ServerMessage {
        let found = tokio::time::timeout(WAIT, async {
            loop {
                let i = self.answers.iter().position(|m| {
                    matches!(m, ServerMessage::Ok { req: r, .. }
                        | ServerMessage::Error { req: Some(r), .. } if *r == req)
                });
                if let Some(i) = i {
                    return self.answers.remove(i);
                }
                let frame = self.rx.recv().await.expect("the connection's queue lives");
                self.take(&frame);
            }
        })
        .await;
        found.unwrap_or_else(|_| panic!("no answer to request {req} within {WAIT:?}"))
    }

    /// Waits for `your_turn` (after everything queued so far).
    async fn my_turn(&mut self) -> TurnInfo {
        self.pump();
        tokio::time::timeout(WAIT, async {
            loop {
                if let Some(turn) = self.turn.take() {
                    return turn;
                }
                let frame = self.rx.recv().await.expect("the connection's queue lives");
                self.take(&frame);
            }
        })
        .await
        .expect("your_turn")
    }

    /// Closed by the room: its close code.
    async fn kicked(&self) -> u16 {
        tokio::time::timeout(WAIT, self.link.kick.kicked())
            .await
            .expect("the connection is closed by the room");
        self.link.kick.reason().map_or(0, |(code, _)| code)
    }
}

/// A running two-player game in room `code` over `store`; returns the server rooms, both
/// clients (Ana created the room) and the index of the one to act.
async fn game(code: &str, store: Arc<LossyStore>) -> (Rooms, Vec<Client>, usize) {
    game_with_clock(code, store, 600).await
}

/// [`game`] with a turn clock of `clock_secs`.
async fn game_with_clock(
    code: &str,
    store: Arc<LossyStore>,
    clock_secs: u32,
) -> (Rooms, Vec<Client>, usize) {
    let dyn_store: Arc<dyn Store> = store;
    let mut config = RoomsConfig::default();
    config.dice.dice_seed = Some(7);
    let rooms = SingleNode::rooms(config, dyn_store.clone());
    let s = settings(json!({"preset": "online", "seats": 2, "turn_clock_secs": clock_secs}));
    dyn_store
        .create_room(&persist::room_record(code, &s, now_ms()))
        .await
        .expect("room record");
    let rules = s.rules().expect("rules");
    let dice = parchis_room_core::dice::DiceSource::draw(&rooms.config().dice, 1).expect("dice");
    let init = room_init(&rooms, code, s, rules, now_ms(), dice);
    Actor::new(&rooms, Core::new(init))
        .start()
        .await
        .expect("the room starts");
    let mut clients = Vec::new();
    for (conn, name) in [(1, "Ana"), (2, "Luis")] {
        let (tx, rx) = mpsc::channel(4096);
        let link = link(conn, &tx);
        let (reply, answer) = oneshot::channel();
        send(
            &rooms,
            code,
            RoomCmd::Join {
                link: link.clone(),
                req: 1,
                name: name.into(),
                colour: None,
                client_seed: None,
                account: None,
                reply,
            },
        )
        .await;
        let member = answer.await.expect("answered").expect("seated");
        clients.push(Client {
            link,
            rx,
            member,
            token: String::new(),
            seqs: Vec::new(),
            turn: None,
            answers: Vec::new(),
        });
    }
    for c in &mut clients {
        c.pump();
    }
    let seq = *clients[0].seqs.last().expect("lobby events");
    command(&rooms, code, &clients[0], 2, seq, SeatCmd::Start).await;
    assert!(
        matches!(clients[0].answer(2).await, ServerMessage::Ok { .. }),
        "the game starts"
    );
    let to_act = tokio::time::timeout(WAIT, async {
        loop {
            for (i, c) in clients.iter_mut().enumerate() {
                c.pump();
                if c.turn.is_some() {
                    return i;
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("someone is to act");
    (rooms, clients, to_act)
}

async fn send(rooms: &Rooms, code: &str, cmd: RoomCmd) {
    let handle = rooms.room(code).expect("the room is registered");
    handle.sender().send(cmd).await.expect("the room runs");
}

async fn command(rooms: &Rooms, code: &str, c: &Client, req: u64, seq: u64, cmd: SeatCmd) {
    let cmd = RoomCmd::Command {
        conn: c.link.id,
        member: c.member,
        req,
        seq,
        cmd,
        received: tokio::time::Instant::now(),
    };
    send(rooms, code, cmd).await;
}

/// The player's command for its turn `turn`, as request `req`.
async fn act(rooms: &Rooms, code: &str, c: &Client, req: u64, turn: &TurnInfo) {
    let cmd = command_for(turn.must_roll, &turn.legal);
    command(rooms, code, c, req, turn.seq, cmd).await;
}

/// The client comes back on a new connection `conn` (its old one was closed) with its
/// token and the last seq it saw.
async fn resume(rooms: &Rooms, code: &str, c: &mut Client, conn: ConnId) {
    let (tx, rx) = mpsc::channel(4096);
    let new_link = link(conn, &tx);
    let (reply, answer) = oneshot::channel();
    let last_seq = c.seqs.last().copied().unwrap_or(0);
    send(
        rooms,
        code,
        RoomCmd::Resume {
            link: new_link.clone(),
            req: 1,
            token: c.token.clone(),
            account: None,
            last_seq,
            reply,
        },
    )
    .await;
    c.member = answer.await.expect("answered").expect("resumed");
    c.link = new_link;
    c.rx = rx;
    c.turn = None;
    c.pump();
}

/// The stored log's seqs, and the game's id.
async fn log(rooms: &Rooms, code: &str) -> Vec<u64> {
    let snapshot = rooms
        .store()
        .get_room(code)
        .await
        .expect("read")
        .expect("stored");
    let (log, _) = persist::stored_log(&snapshot.events, snapshot.log.as_ref()).expect("log reads");
    log.iter().map(|e| e.seq).collect()
}

/// A write of `event` after seq `after_seq` behind the room's back, in its stored log's
/// own format (a new game's: the next piece of its packed log).
async fn behind_the_back(
    store: &LossyStore,
    code: &str,
    after_seq: u64,
    event: RoomEvent,
) -> RoomWrite {
    let snapshot = store.get_room(code).await.expect("read").expect("stored");
    let game_id = snapshot.game.as_ref().expect("a game").id;
    let (_, encoder) =
        persist::stored_log(&snapshot.events, snapshot.log.as_ref()).expect("log reads");
    let mut encoder = encoder.expect("a new game's log is packed");
    let piece = persist::pack(&mut encoder, after_seq + 1, now_ms(), &[event], false)
        .expect("one event packs");
    RoomWrite::AppendLog {
        game_id,
        after_seq: after_seq as i64,
        piece,
    }
}

/// The log has no gap and ends at the room's seq; each client saw a gap-free stream,
/// without a repeat, that contains the whole log and ends where it ends.
async fn everyone_saw_the_whole_log(rooms: &Rooms, code: &str, clients: &[Client]) {
    let log = log(rooms, code).await;
    let (first, last) = (log[0], *log.last().expect("events"));
    assert_eq!(
        log,
        (first..=last).collect::<Vec<_>>(),
        "the log has no gap"
    );
    for (i, c) in clients.iter().enumerate() {
        let from = c.seqs[0];
        assert_eq!(
            c.seqs,
            (from..=last).collect::<Vec<_>>(),
            "client {i}: every event once, in order, up to the log's last"
        );
        assert!(from <= first, "client {i} saw the game from its start");
    }
}

fn is_error(m: &ServerMessage, code: ErrorCode, text: &str) -> bool {
    matches!(m, ServerMessage::Error { code: c, message, .. } if *c == code && message == text)
}

#[tokio::test]
async fn a_lost_answer_to_an_applied_commit_rebuilds_the_room_from_its_log() {
    let store = Arc::new(LossyStore::default());
    let (rooms, mut clients, p) = game("LOSTACK1", store.clone()).await;
    let turn = clients[p].my_turn().await;
    let seq_before = turn.seq;
    store.lose_next(Lose::Applied);
    act(&rooms, "LOSTACK1", &clients[p], 10, &turn).await;
    let answer = clients[p].answer(10).await;
    assert!(
        is_error(&answer, ErrorCode::OutcomeUnknown, STORE_AMBIGUOUS),
        "the outcome is unknown to the room when it answers: {answer:?}"
    );
    // The log went past the room: it stops, is rebuilt and its clients resume.
    for c in &clients {
        assert_eq!(c.kicked().await, close_code::SERVICE_RESTART);
    }
    let stored = log(&rooms, "LOSTACK1").await;
    // The rebuilt room stores a fresh `turn` only when its clock ends later than the
    // stored one: not when the rebuild happens within the step's millisecond.
    assert!(
        *stored.last().expect("events") > seq_before,
        "the applied step is stored: {stored:?}"
    );
    for (i, c) in clients.iter_mut().enumerate() {
        c.pump();
        assert_eq!(
            c.seqs.last(),
            Some(&seq_before),
            "nothing of the lost step was sent"
        );
        resume(&rooms, "LOSTACK1", c, 11 + i as u64).await;
    }
    // The next command is applied, by whoever is to act now.
    let (q, turn) = whose_turn(&mut clients).await;
    act(&rooms, "LOSTACK1", &clients[q], 20, &turn).await;
    let answer = clients[q].answer(20).await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
    settle(&mut clients).await;
    everyone_saw_the_whole_log(&rooms, "LOSTACK1", &clients).await;
    rooms.shutdown_token().cancel();
}

#[tokio::test]
async fn a_lost_answer_to_a_commit_that_was_not_applied_changes_nothing() {
    let store = Arc::new(LossyStore::default());
    let (rooms, mut clients, p) = game("LOSTACK2", store.clone()).await;
    let turn = clients[p].my_turn().await;
    store.lose_next(Lose::NotApplied);
    act(&rooms, "LOSTACK2", &clients[p], 10, &turn).await;
    let answer = clients[p].answer(10).await;
    assert!(
        is_error(&answer, ErrorCode::RoomUnavailable, STORE_UNREACHABLE),
        "the log shows nothing was applied: {answer:?}"
    );
    assert_eq!(log(&rooms, "LOSTACK2").await.last(), Some(&turn.seq));
    // Sent again, it is applied; nobody was disconnected.
    act(&rooms, "LOSTACK2", &clients[p], 11, &turn).await;
    let answer = clients[p].answer(11).await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
    settle(&mut clients).await;
    for c in &clients {
        assert_eq!(c.link.kick.reason(), None, "still connected");
    }
    everyone_saw_the_whole_log(&rooms, "LOSTACK2", &clients).await;
    rooms.shutdown_token().cancel();
}

#[tokio::test]
async fn a_doubt_the_store_cannot_settle_yet_is_settled_once_it_can_be_read() {
    let store = Arc::new(LossyStore::default());
    let (rooms, mut clients, p) = game("LOSTACK3", store.clone()).await;
    let turn = clients[p].my_turn().await;
    store.reads_fail.store(true, Ordering::SeqCst);
    store.lose_next(Lose::Applied);
    act(&rooms, "LOSTACK3", &clients[p], 10, &turn).await;
    let answer = clients[p].answer(10).await;
    assert!(
        is_error(&answer, ErrorCode::OutcomeUnknown, STORE_AMBIGUOUS),
        "{answer:?}"
    );
    // Sent again while the doubt stands: not even tried (nothing of it is applied).
    act(&rooms, "LOSTACK3", &clients[p], 11, &turn).await;
    let answer = clients[p].answer(11).await;
    assert!(
        is_error(&answer, ErrorCode::RoomUnavailable, STORE_UNREACHABLE),
        "{answer:?}"
    );
    assert_eq!(clients[p].link.kick.reason(), None, "the room waits");
    // The store can be read again: the room looks by itself and finds its log ahead.
    store.reads_fail.store(false, Ordering::SeqCst);
    for c in &clients {
        assert_eq!(c.kicked().await, close_code::SERVICE_RESTART);
    }
    for (i, c) in clients.iter_mut().enumerate() {
        c.pump();
        resume(&rooms, "LOSTACK3", c, 11 + i as u64).await;
    }
    let (q, turn) = whose_turn(&mut clients).await;
    act(&rooms, "LOSTACK3", &clients[q], 20, &turn).await;
    let answer = clients[q].answer(20).await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
    settle(&mut clients).await;
    everyone_saw_the_whole_log(&rooms, "LOSTACK3", &clients).await;
    rooms.shutdown_token().cancel();
}

/// The defect as it was seen: the log one step ahead of the room (here written behind
/// its back). The room's next write does not follow the log: instead of `internal`
/// forever, the room is rebuilt from the log and the command can be sent again.
#[tokio::test]
async fn a_log_ahead_of_the_room_has_it_rebuilt_at_its_next_write() {
    let store = Arc::new(LossyStore::default());
    let (rooms, mut clients, p) = game("LOSTACK4", store.clone()).await;
    let turn = clients[p].my_turn().await;
    let ahead = RoomEvent::Turn {
        colour: turn.colour,
        deadline_ms: turn.deadline_ms,
    };
    let write = behind_the_back(&store, "LOSTACK4", turn.seq, ahead).await;
    store
        .write_room("LOSTACK4", None, write)
        .await
        .expect("written behind the room's back");
    act(&rooms, "LOSTACK4", &clients[p], 10, &turn).await;
    let answer = clients[p].answer(10).await;
    assert!(
        is_error(&answer, ErrorCode::RoomUnavailable, STORE_REBUILD),
        "{answer:?}"
    );
    for c in &clients {
        assert_eq!(c.kicked().await, close_code::SERVICE_RESTART);
    }
    for (i, c) in clients.iter_mut().enumerate() {
        c.pump();
        resume(&rooms, "LOSTACK4", c, 11 + i as u64).await;
        assert!(
            c.seqs.contains(&(turn.seq + 1)),
            "client {i} got the stored event"
        );
    }
    let (q, turn) = whose_turn(&mut clients).await;
    act(&rooms, "LOSTACK4", &clients[q], 20, &turn).await;
    let answer = clients[q].answer(20).await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
    settle(&mut clients).await;
    everyone_saw_the_whole_log(&rooms, "LOSTACK4", &clients).await;
    rooms.shutdown_token().cancel();
}

/// A commit whose answer was lost, found not applied by the doubt read, lands later (on
/// PostgreSQL a transaction still committing is not visible to the read): the room's
/// next append repeats its first seq and is refused `DuplicateSeq`. The log is ahead of
/// the room as with `SeqMismatch`: the room is rebuilt from it (before: `internal`, and
/// the room stayed behind its log until its next write).
#[tokio::test]
async fn a_write_refused_as_repeating_a_stored_seq_has_the_room_rebuilt() {
    let store = Arc::new(LossyStore::default());
    let (rooms, mut clients, p) = game("LOSTACK5", store.clone()).await;
    let turn = clients[p].my_turn().await;
    // The late commit: the log gets seq + 1 behind the room's back.
    let late = RoomEvent::Turn {
        colour: turn.colour,
        deadline_ms: turn.deadline_ms,
    };
    let write = behind_the_back(&store, "LOSTACK5", turn.seq, late).await;
    store
        .write_room("LOSTACK5", None, write)
        .await
        .expect("the late commit");
    store.lose_next(Lose::Duplicate);
    act(&rooms, "LOSTACK5", &clients[p], 10, &turn).await;
    let answer = clients[p].answer(10).await;
    assert!(
        is_error(&answer, ErrorCode::RoomUnavailable, STORE_REBUILD),
        "{answer:?}"
    );
    for c in &clients {
        assert_eq!(c.kicked().await, close_code::SERVICE_RESTART);
    }
    for (i, c) in clients.iter_mut().enumerate() {
        c.pump();
        resume(&rooms, "LOSTACK5", c, 11 + i as u64).await;
        assert!(
            c.seqs.contains(&(turn.seq + 1)),
            "client {i} got the stored event"
        );
    }
    let (q, turn) = whose_turn(&mut clients).await;
    act(&rooms, "LOSTACK5", &clients[q], 20, &turn).await;
    let answer = clients[q].answer(20).await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
    settle(&mut clients).await;
    everyone_saw_the_whole_log(&rooms, "LOSTACK5", &clients).await;
    rooms.shutdown_token().cancel();
}

/// R-CLOCK: a doubt that stands (the store cannot be read) refuses every write of the
/// room, the player's own commands included, while the turn clock runs. Found not
/// applied once the store is back, the player to act gets a fresh full clock instead of
/// losing the throw to the timeout the room could not write meanwhile.
#[tokio::test]
async fn nobody_loses_a_throw_to_a_doubt_that_stood_and_was_not_applied() {
    const CLOCK_SECS: u32 = 2;
    let store = Arc::new(LossyStore::default());
    let (rooms, mut clients, p) = game_with_clock("LOSTACK6", store.clone(), CLOCK_SECS).await;
    let turn = clients[p].my_turn().await;
    store.reads_fail.store(true, Ordering::SeqCst);
    store.lose_next(Lose::NotApplied);
    act(&rooms, "LOSTACK6", &clients[p], 10, &turn).await;
    let answer = clients[p].answer(10).await;
    assert!(
        is_error(&answer, ErrorCode::OutcomeUnknown, STORE_AMBIGUOUS),
        "{answer:?}"
    );
    // The clock runs out while the doubt stands (the timeout cannot be written either).
    tokio::time::sleep(Duration::from_millis(u64::from(CLOCK_SECS) * 1000 + 500)).await;
    let back = now_ms();
    store.reads_fail.store(false, Ordering::SeqCst);
    let (q, again) = whose_turn(&mut clients).await;
    assert_eq!(
        (q, again.colour),
        (p, turn.colour),
        "the same player is to act: the throw was not timed out"
    );
    assert!(again.seq > turn.seq, "a new turn event: {again:?}");
    assert!(
        again.deadline_ms >= back + i64::from(CLOCK_SECS) * 1000,
        "a fresh full clock from the store's return: {again:?}, back at {back}"
    );
    act(&rooms, "LOSTACK6", &clients[q], 20, &again).await;
    let answer = clients[q].answer(20).await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
    settle(&mut clients).await;
    for c in &clients {
        assert_eq!(c.link.kick.reason(), None, "still connected");
    }
    everyone_saw_the_whole_log(&rooms, "LOSTACK6", &clients).await;
    rooms.shutdown_token().cancel();
}

/// The client told `your_turn` (after a resume), and its turn.
async fn whose_turn(clients: &mut [Client]) -> (usize, TurnInfo) {
    tokio::time::timeout(WAIT, async {
        loop {
            for (i, c) in clients.iter_mut().enumerate() {
                c.pump();
                if let Some(turn) = c.turn.take() {
                    return (i, turn);
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("someone is to act")
}

/// Takes in every frame queued so far (a command's events are queued for every player
/// before its `ok`).
async fn settle(clients: &mut [Client]) {
    for c in clients {
        c.pump();
    }
}
