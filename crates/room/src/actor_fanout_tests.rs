//! Players' frames take priority over spectators' (issue 14): a frame broadcast to the
//! room is queued for the seated players at once and for everyone else (the spectators)
//! only when the batch is done, after every durable write of the batch. Tested on the
//! real [`Actor`] with real [`ConnLink`] queues: two players and two spectators that
//! joined and watched through the actor itself.

use super::test_room::{link, lobby_actor};
use super::*;

const PLAYERS: [ConnId; 2] = [1, 2];
const SPECTATORS: [ConnId; 2] = [3, 4];

/// One connection's outbound queue: the actor's end and the test's.
type Queue = (mpsc::Sender<Frame>, mpsc::Receiver<Frame>);

/// An actor (not running: the test drives it) of a lobby where conns 1 and 2 hold seats
/// and 3 and 4 watch; each link queues into `queue(conn)`.
async fn room_with(queue: impl Fn(ConnId) -> mpsc::Sender<Frame>) -> Actor {
    let mut actor = lobby_actor("PRIORITY1").await;
    for conn in PLAYERS {
        let (reply, answer) = oneshot::channel();
        actor
            .on_cmd(RoomCmd::Join {
                link: link(conn, &queue(conn)),
                req: 1,
                name: format!("player {conn}"),
                colour: None,
                client_seed: None,
                account: None,
                reply,
            })
            .await;
        let member = answer.await.expect("answered").expect("seated");
        assert!(matches!(member, Member::Player(_)), "{member:?}");
    }
    for conn in SPECTATORS {
        let (reply, answer) = oneshot::channel();
        actor
            .on_cmd(RoomCmd::Watch {
                link: link(conn, &queue(conn)),
                req: 1,
                reply,
            })
            .await;
        assert_eq!(answer.await.expect("answered"), Ok(Member::Spectator));
    }
    assert_eq!(actor.core.player_conns(), PLAYERS.to_vec());
    assert_eq!(actor.links.len(), 4);
    actor
}

/// Everything queued on `rx` so far.
fn drain(rx: &mut mpsc::Receiver<Frame>) -> Vec<String> {
    std::iter::from_fn(|| rx.try_recv().ok())
        .map(|f| f.to_string())
        .collect()
}

fn frame(s: &str) -> Frame {
    Frame::from(s)
}

/// One queue shared by every connection shows the order the actor queued in: both
/// players' copies of the batch's two broadcasts (and the unicast frame between them)
/// come before any spectator's copy. Without the priority the order would be
/// `a a a a x b b b b`.
#[tokio::test]
async fn a_batch_reaches_every_player_before_any_spectator() {
    let (tx, mut rx) = mpsc::channel(1024);
    let mut actor = room_with(|_| tx.clone()).await;
    drain(&mut rx);
    actor
        .execute(vec![
            Effect::Broadcast { frame: frame("a") },
            Effect::Send {
                conn: PLAYERS[0],
                frame: frame("x"),
            },
            Effect::Broadcast { frame: frame("b") },
        ])
        .await;
    assert_eq!(
        drain(&mut rx),
        ["a", "a", "x", "b", "b", "a", "b", "a", "b"],
        "players' copies first, then each spectator's in order"
    );
}

/// While the batch runs the spectators have nothing; when it is done each connection
/// has every frame meant for it exactly once, in order.
#[tokio::test]
async fn spectators_get_the_batch_once_it_is_done_and_nobody_twice() {
    let queues: HashMap<ConnId, Queue> = PLAYERS
        .iter()
        .chain(&SPECTATORS)
        .map(|&c| (c, mpsc::channel(1024)))
        .collect();
    let mut actor = room_with(|c| queues[&c].0.clone()).await;
    let mut rx: HashMap<ConnId, mpsc::Receiver<Frame>> =
        queues.into_iter().map(|(c, (_, rx))| (c, rx)).collect();
    for r in rx.values_mut() {
        drain(r);
    }
    // Mid-batch: the players have the broadcast, the spectators not yet.
    actor.act(Effect::Broadcast { frame: frame("a") }).await;
    actor.act(Effect::Broadcast { frame: frame("b") }).await;
    for p in PLAYERS {
        assert_eq!(
            drain(rx.get_mut(&p).expect("queue")),
            ["a", "b"],
            "player {p}"
        );
    }
    for s in SPECTATORS {
        assert!(
            drain(rx.get_mut(&s).expect("queue")).is_empty(),
            "spectator {s}"
        );
    }
    // The batch is done.
    actor.fan_out_to_spectators();
    for s in SPECTATORS {
        assert_eq!(
            drain(rx.get_mut(&s).expect("queue")),
            ["a", "b"],
            "spectator {s}"
        );
    }
    for p in PLAYERS {
        assert!(
            drain(rx.get_mut(&p).expect("queue")).is_empty(),
            "player {p} twice"
        );
    }
    // A whole batch through `execute`: the same, once each.
    actor
        .execute(vec![Effect::Broadcast { frame: frame("c") }])
        .await;
    for c in PLAYERS.iter().chain(&SPECTATORS) {
        assert_eq!(drain(rx.get_mut(c).expect("queue")), ["c"], "conn {c}");
    }
}

/// Issue 28, "each frame serialised once": a room event is serialised once, and every
/// recipient's queue (players and spectators alike) holds that one frame, the same
/// buffer (pointer equality), not a copy or a serialisation of its own.
#[tokio::test]
async fn every_recipient_of_an_event_gets_the_one_serialised_frame() {
    let queues: HashMap<ConnId, Queue> = PLAYERS
        .iter()
        .chain(&SPECTATORS)
        .map(|&c| (c, mpsc::channel(1024)))
        .collect();
    let mut actor = room_with(|c| queues[&c].0.clone()).await;
    let mut rx: HashMap<ConnId, mpsc::Receiver<Frame>> =
        queues.into_iter().map(|(c, (_, rx))| (c, rx)).collect();
    for r in rx.values_mut() {
        drain(r);
    }
    // A third player joins: its `player_joined` event goes to everyone already there.
    let (tx, _joiner) = mpsc::channel(1024);
    let (reply, answer) = oneshot::channel();
    actor
        .on_cmd(RoomCmd::Join {
            link: link(5, &tx),
            req: 1,
            name: "player 5".into(),
            colour: None,
            client_seed: None,
            account: None,
            reply,
        })
        .await;
    let member = answer.await.expect("answered").expect("seated");
    assert!(matches!(member, Member::Player(_)), "{member:?}");
    actor.fan_out_to_spectators();
    let joined: Vec<Frame> = PLAYERS
        .iter()
        .chain(&SPECTATORS)
        .map(|c| {
            let r = rx.get_mut(c).expect("queue");
            let mine: Vec<Frame> = std::iter::from_fn(|| r.try_recv().ok())
                .filter(|f| f.contains("player_joined") && f.contains("player 5"))
                .collect();
            assert_eq!(mine.len(), 1, "conn {c}: {mine:?}");
            mine[0].clone()
        })
        .collect();
    let first = &joined[0];
    for (frame, conn) in joined.iter().zip(PLAYERS.iter().chain(&SPECTATORS)) {
        assert!(Frame::ptr_eq(frame, first), "conn {conn} got another copy");
        assert_eq!(
            frame.bytes().as_ptr(),
            first.as_str().as_ptr(),
            "conn {conn}: the bytes a socket writes are the frame's own buffer"
        );
    }
}
