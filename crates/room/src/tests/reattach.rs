//! Cluster mode's reattach ([`parchis_room_core::Input::Reattach`]) with time as a value.

use super::{settings, Driver};
use crate::{Member, Reattach, SeatCmd};
use parchis_engine::Colour;
use parchis_protocol::{close_code, ErrorCode, ServerMessage};
use parchis_room_core::Input;
use serde_json::json;

/// A started two-player game (Ana yellow on conn 1, Luis blue on conn 2) after a few
/// throws, with a history of 64 events.
async fn game_under_way() -> (Driver, Member, Member) {
    let mut d = Driver::new(
        "REATT1",
        settings(json!({"preset": "online", "seats": 2, "turn_clock_secs": 600})),
        7,
        64,
    );
    let ana = d.join(1, "Ana").await;
    let luis = d.join(2, "Luis").await;
    assert!(matches!(
        d.cmd(1, ana, 10, SeatCmd::Start).await,
        ServerMessage::Ok { .. }
    ));
    for req in 20..30 {
        let Some(g) = d.core.game() else { break };
        let (conn, member) = if g.turn() == Colour::Yellow {
            (1, ana)
        } else {
            (2, luis)
        };
        let cmd = super::first_command(g);
        d.cmd(conn, member, req, cmd).await;
    }
    (d, ana, luis)
}

async fn reattach(d: &mut Driver, conn: u64, reattach: Reattach, last_seq: u64) {
    d.input(Input::Reattach {
        conn,
        reattach,
        last_seq,
        replaces: None,
    })
    .await;
}

fn seat_conn(d: &Driver, colour: Colour) -> Option<u64> {
    d.core.seats().iter().find(|s| s.colour == colour)?.conn
}

#[tokio::test]
async fn a_player_gets_its_seat_back_with_only_the_missed_events_and_no_welcome() {
    let (mut d, _, luis) = game_under_way().await;
    let seq = d.core.seq();
    assert!(seq > 5, "the game moved: seq {seq}");
    d.input(Input::Detach { conn: 2 }).await;
    assert_eq!(seat_conn(&d, Colour::Blue), None);
    reattach(&mut d, 7, Reattach::Player(Colour::Blue), seq - 3).await;
    assert_eq!(d.replies.pop(), Some(Ok(luis)), "the same seat");
    assert_eq!(seat_conn(&d, Colour::Blue), Some(7), "shown connected");
    assert!(
        d.core.seats().iter().all(|s| s.grace_until.is_none()),
        "no grace period left"
    );
    let got = d.messages(7);
    assert!(
        !got.iter()
            .any(|m| matches!(m, ServerMessage::Welcome { .. })),
        "no second welcome: {got:?}"
    );
    let seqs: Vec<u64> = d.events(7).iter().map(|e| e.0).collect();
    assert_eq!(
        seqs,
        vec![seq - 2, seq - 1, seq],
        "exactly the missed events"
    );
    // The seat acts through its new connection.
    let answer = d.cmd(7, luis, 99, SeatCmd::Leave).await;
    assert!(
        matches!(answer, ServerMessage::Ok { req: 99, .. }),
        "{answer:?}"
    );
}

#[tokio::test]
async fn a_connection_still_on_the_seat_by_an_earlier_reattach_is_replaced_as_on_resume() {
    let (mut d, ana, _) = game_under_way().await;
    let seq = d.core.seq();
    // Ana's seat is held by a connection that came by a reattach (conn 5).
    d.input(Input::Detach { conn: 1 }).await;
    reattach(&mut d, 5, Reattach::Player(Colour::Yellow), seq).await;
    assert_eq!(d.replies.pop(), Some(Ok(ana)));
    reattach(&mut d, 8, Reattach::Player(Colour::Yellow), seq).await;
    assert_eq!(d.replies.pop(), Some(Ok(ana)));
    assert_eq!(seat_conn(&d, Colour::Yellow), Some(8));
    assert!(!d.attached.contains(&5), "the old connection is forgotten");
    // Kicked with 4000; the room queues no `closing` of its own (the kick's writer sends
    // the one `closing` frame: two reached the client before).
    assert_eq!(d.kicks, vec![(5, close_code::SESSION_REPLACED)]);
    assert!(
        !d.messages(5)
            .iter()
            .any(|m| matches!(m, ServerMessage::Closing { .. })),
        "the room queued a closing frame besides the kick's"
    );
    assert!(d.events(8).is_empty(), "nothing was missed");
}

/// The drained node's late reattach of a socket whose client has joined or resumed here
/// since (a newer connection): refused, and the newer connection keeps the seat, untold.
#[tokio::test]
async fn a_stale_reattach_loses_to_the_connection_that_joined_or_resumed_here() {
    let (mut d, _, luis) = game_under_way().await;
    let seq = d.core.seq();
    // Ana holds yellow by her join (conn 1): a reattach for yellow is stale.
    reattach(&mut d, 8, Reattach::Player(Colour::Yellow), seq).await;
    match d.replies.pop() {
        Some(Err(r)) => assert_eq!(r.code, ErrorCode::NotJoined, "{r:?}"),
        other => panic!("refused, got {other:?}"),
    }
    assert_eq!(seat_conn(&d, Colour::Yellow), Some(1), "Ana keeps her seat");
    assert!(
        !d.attached.contains(&8),
        "the stale connection is not attached"
    );
    assert!(
        !d.messages(1)
            .iter()
            .any(|m| matches!(m, ServerMessage::Closing { .. })),
        "Ana's connection is not told to close"
    );
    // Luis resumes on conn 9 (his old conn 2 is replaced); conn 2's reattach then loses.
    d.input(Input::Resume {
        conn: 9,
        req: 1,
        token: "token-2".into(),
        account: None,
        last_seq: seq,
    })
    .await;
    assert_eq!(d.replies.pop(), Some(Ok(luis)));
    reattach(&mut d, 10, Reattach::Player(Colour::Blue), seq).await;
    assert!(matches!(d.replies.pop(), Some(Err(_))), "refused");
    assert_eq!(
        seat_conn(&d, Colour::Blue),
        Some(9),
        "Luis keeps his newer connection"
    );
    let answer = d.cmd(9, luis, 99, SeatCmd::Leave).await;
    assert!(
        matches!(answer, ServerMessage::Ok { req: 99, .. }),
        "{answer:?}"
    );
}

#[tokio::test]
async fn the_player_to_act_gets_your_turn_again() {
    let (mut d, _, _) = game_under_way().await;
    let turn = d.core.game().map(|g| g.turn()).expect("a game runs");
    let seq = d.core.seq();
    // Its connection went with the old owner.
    let holder = seat_conn(&d, turn).expect("a connection");
    d.input(Input::Detach { conn: holder }).await;
    reattach(&mut d, 9, Reattach::Player(turn), seq).await;
    let yours = d.messages(9).into_iter().find_map(|m| match m {
        ServerMessage::YourTurn(t) => Some((t.colour, t.seq)),
        _ => None,
    });
    assert_eq!(yours, Some((turn, seq)));
}

#[tokio::test]
async fn a_seat_that_is_gone_or_abandoned_comes_back_as_a_spectator() {
    let (mut d, _, luis) = game_under_way().await;
    // Blue leaves the game (abandons); its old connection reattaches as blue.
    let left = d.cmd(2, luis, 50, SeatCmd::Leave).await;
    assert!(matches!(left, ServerMessage::Ok { .. }), "{left:?}");
    let seq = d.core.seq();
    reattach(&mut d, 10, Reattach::Player(Colour::Blue), seq).await;
    assert_eq!(d.replies.pop(), Some(Ok(Member::Spectator)));
    // A colour nobody holds.
    reattach(&mut d, 11, Reattach::Player(Colour::Red), seq).await;
    assert_eq!(d.replies.pop(), Some(Ok(Member::Spectator)));
    assert_eq!(d.core.reattach_of(10), Some(Reattach::Spectator));
    assert_eq!(d.core.reattach_of(11), Some(Reattach::Spectator));
    assert_eq!(d.core.reattach_of(12), None);
    assert_eq!(d.core.view().spectators, 2, "they count as spectators");
}

#[tokio::test]
async fn spectators_come_back_even_where_watching_is_closed_and_full() {
    let mut d = Driver::new(
        "REATT2",
        settings(json!({"seats": 2, "spectators": false})),
        3,
        64,
    );
    d.join(1, "Ana").await;
    d.input(Input::Watch { conn: 2, req: 1 }).await;
    assert!(matches!(d.replies.pop(), Some(Err(r)) if r.code == ErrorCode::SpectatorsNotAllowed));
    let seq = d.core.seq();
    reattach(&mut d, 3, Reattach::Spectator, seq).await;
    assert_eq!(d.replies.pop(), Some(Ok(Member::Spectator)));
    assert!(d.attached.contains(&3));
    assert_eq!(
        d.core.reattach_of(1),
        Some(Reattach::Player(Colour::Yellow))
    );
}

#[tokio::test]
async fn too_far_behind_or_ahead_is_refused_and_nothing_attaches() {
    let mut d = Driver::new("REATT3", settings(json!({"seats": 2})), 3, 2);
    let ana = d.join(1, "Ana").await;
    d.join(2, "Luis").await;
    d.cmd(1, ana, 5, SeatCmd::ChooseColour(Colour::Green)).await;
    assert_eq!(d.core.seq(), 3);
    for last_seq in [0, 4] {
        reattach(
            &mut d,
            20 + last_seq,
            Reattach::Player(Colour::Green),
            last_seq,
        )
        .await;
        match d.replies.pop() {
            Some(Err(r)) => assert_eq!(r.code, ErrorCode::RoomUnavailable, "{r:?}"),
            other => panic!("refused, got {other:?}"),
        }
        assert!(!d.attached.contains(&(20 + last_seq)));
    }
    assert_eq!(
        seat_conn(&d, Colour::Green),
        Some(1),
        "the seat kept its connection"
    );
    d.input(Input::Detach { conn: 1 }).await;
    reattach(&mut d, 30, Reattach::Player(Colour::Green), 1).await;
    assert_eq!(d.replies.pop(), Some(Ok(ana)));
    let seqs: Vec<u64> = d.events(30).iter().map(|e| e.0).collect();
    assert_eq!(seqs, vec![2, 3]);
}

#[tokio::test]
async fn the_same_clients_previous_link_is_forgotten_quietly() {
    let (mut d, ana, _) = game_under_way().await;
    d.input(Input::Watch { conn: 5, req: 1 }).await;
    assert_eq!(d.replies.pop(), Some(Ok(Member::Spectator)));
    let seq = d.core.seq();
    let before = d.messages(1).len();
    d.input(Input::Reattach {
        conn: 6,
        reattach: Reattach::Player(Colour::Yellow),
        last_seq: seq,
        replaces: Some(1),
    })
    .await;
    assert_eq!(d.replies.pop(), Some(Ok(ana)));
    assert_eq!(seat_conn(&d, Colour::Yellow), Some(6));
    assert_eq!(d.messages(1).len(), before, "no closing for the old link");
    assert!(!d.attached.contains(&1));
    assert!(d.core.seats().iter().all(|s| s.grace_until.is_none()));
    // A spectator's old link does not stay counted.
    d.input(Input::Reattach {
        conn: 7,
        reattach: Reattach::Spectator,
        last_seq: seq,
        replaces: Some(5),
    })
    .await;
    assert_eq!(d.replies.pop(), Some(Ok(Member::Spectator)));
    assert_eq!(d.core.view().spectators, 1);
    assert_eq!(d.core.reattach_of(5), None);
    assert_eq!(d.core.reattach_of(7), Some(Reattach::Spectator));
}

/// A lobby rebuilt from the store (`Core::lobby_restored`) counts its seqs from 0 again:
/// a reattach from before the rebuild is refused even for a `last_seq` the room has
/// reached (it names other events), for a player whose seat has not resumed here and for
/// a spectator whose previous link is not one here. Once the seat has resumed, a
/// reattach of that player (its edge lost a frame) is taken as usual.
#[tokio::test]
async fn a_reattach_from_before_a_lobby_was_rebuilt_is_refused_until_the_seat_resumes() {
    let mut d = Driver::new(
        "REATT2",
        settings(json!({"preset": "online", "seats": 2, "turn_clock_secs": 600})),
        7,
        64,
    );
    let ana = d.join(1, "Ana").await;
    let _luis = d.join(2, "Luis").await;
    d.input(Input::Detach { conn: 1 }).await;
    d.input(Input::Detach { conn: 2 }).await;
    d.core.lobby_restored();
    let seq = d.core.seq();
    assert!(seq >= 2, "the joins: seq {seq}");
    for (conn, who) in [
        (7, Reattach::Player(Colour::Yellow)),
        (8, Reattach::Spectator),
    ] {
        reattach(&mut d, conn, who, seq).await;
        match d.replies.pop() {
            Some(Err(r)) => assert_eq!(r.code, ErrorCode::RoomUnavailable, "{who:?}: {r:?}"),
            other => panic!("{who:?}: refused, got {other:?}"),
        }
        assert!(!d.attached.contains(&conn), "{who:?} not attached");
    }
    // Ana resumes (a snapshot, whatever her last_seq), then her edge reattaches her.
    d.input(Input::Resume {
        conn: 9,
        req: 1,
        token: "token-1".into(),
        account: None,
        last_seq: seq,
    })
    .await;
    assert_eq!(d.replies.pop(), Some(Ok(ana)));
    let welcome = d
        .messages(9)
        .into_iter()
        .find(|m| matches!(m, ServerMessage::Welcome { .. }));
    assert!(
        matches!(
            welcome,
            Some(ServerMessage::Welcome {
                snapshot: Some(_),
                ..
            })
        ),
        "{welcome:?}"
    );
    d.input(Input::Reattach {
        conn: 10,
        reattach: Reattach::Player(Colour::Yellow),
        last_seq: d.core.seq(),
        replaces: Some(9),
    })
    .await;
    assert_eq!(
        d.replies.pop(),
        Some(Ok(ana)),
        "taken once the seat resumed"
    );
    assert_eq!(seat_conn(&d, Colour::Yellow), Some(10));
}
