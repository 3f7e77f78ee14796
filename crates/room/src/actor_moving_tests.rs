//! A room that stops here and moves (lease lost, write fenced, drain's hand-off) answers
//! the commands still in its queue `room_unavailable`, once each, instead of dropping
//! them unanswered (`docs/CLUSTER.md`, "Every relayed command gets exactly one reply";
//! local sockets' commands and the owner's remote links' alike).

use super::test_room::{link, lobby_actor};
use super::*;
use crate::SeatCmd;

#[tokio::test]
async fn the_commands_queued_when_the_room_moves_are_answered_room_unavailable() {
    let mut actor = lobby_actor("MOVING1").await;
    let (tx, mut out) = mpsc::channel::<Frame>(64);
    let link = link(1, &tx);
    let (reply, answer) = oneshot::channel();
    actor
        .on_cmd(RoomCmd::Join {
            link,
            req: 1,
            name: "Ana".into(),
            colour: None,
            client_seed: None,
            account: None,
            reply,
        })
        .await;
    let member = answer.await.expect("answered").expect("seated");
    while out.try_recv().is_ok() {}
    let (room_tx, mut rx) = actor.channel.take().expect("the room's channel");
    for req in [7, 8] {
        let cmd = RoomCmd::Command {
            conn: 1,
            member,
            req,
            seq: 2,
            cmd: SeatCmd::Start,
            received: tokio::time::Instant::now(),
        };
        room_tx.send(cmd).await.expect("queued");
    }
    actor.refuse_queued(&mut rx);
    let got: Vec<serde_json::Value> = std::iter::from_fn(|| out.try_recv().ok())
        .map(|f| serde_json::from_str(&f).expect("JSON"))
        .collect();
    let answers: Vec<(u64, &str)> = got
        .iter()
        .map(|v| {
            (
                v["req"].as_u64().unwrap_or(0),
                v["code"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        answers,
        vec![(7, "room_unavailable"), (8, "room_unavailable")],
        "{got:?}"
    );
    assert!(
        room_tx.send(RoomCmd::Detach { conn: 1 }).await.is_err(),
        "nothing more is queued"
    );
}
