//! Acknowledgements are promises (issue 25, "Acknowledgements"): a lobby `leave`, a
//! colour change, a grace period that runs out and a bot's takeover change seat rows, and
//! nobody hears of the change (no broadcast, no `ok`) before those rows are stored. A
//! write that fails refuses the command and changes nothing, in the room's memory or in
//! the store; the store's rows are those a restore reads.

use super::{settings, Driver, FaultyStore};
use crate::{Member, SeatCmd};
use parchis_protocol::{ErrorCode, RoomEvent, ServerMessage};
use parchis_room_core::persist::Write;
use parchis_store::Store;
use serde_json::json;
use std::sync::Arc;

/// A lobby over a faulty store with Ana (creator, conn 1) and Luis (conn 2) seated.
async fn lobby(code: &str, extra: serde_json::Value) -> (Driver, Arc<FaultyStore>, Member, Member) {
    let mut s = json!({"preset": "online", "seats": 4, "disconnect_grace_secs": 60});
    if let (Some(base), Some(more)) = (s.as_object_mut(), extra.as_object()) {
        base.extend(more.clone());
    }
    let store = Arc::new(FaultyStore::new());
    let mut d = Driver::new(code, settings(s), 3, 64)
        .with_store(store.clone())
        .await
        .expect("room stored");
    let ana = d.join(1, "Ana").await;
    let luis = d.join(2, "Luis").await;
    (d, store, ana, luis)
}

/// The stored seats as `(colour, creator)`, in the store's order.
async fn stored_seats(store: &FaultyStore, code: &str) -> Vec<(String, bool)> {
    let snap = store.get_room(code).await.expect("read").expect("stored");
    snap.seats
        .into_iter()
        .map(|s| (s.colour, s.is_creator))
        .collect()
}

fn left_events(d: &Driver, conn: u64) -> usize {
    d.events(conn)
        .into_iter()
        .filter(|(_, _, e)| matches!(e, RoomEvent::PlayerLeft { .. }))
        .count()
}

#[tokio::test]
async fn a_lobby_leave_whose_write_fails_is_refused_and_the_seat_stays_everywhere() {
    let code = "ACKLEAVE";
    let (mut d, store, ana, _) = lobby(code, json!({})).await;
    let before = stored_seats(&store, code).await;
    assert_eq!(before.len(), 2);
    store.faults_unreachable(true);
    store.fail_write(Some(store.writes() + 1));
    let answer = d.cmd(1, ana, 5, SeatCmd::Leave).await;
    match &answer {
        ServerMessage::Error { code, .. } => assert_eq!(*code, ErrorCode::RoomUnavailable),
        other => panic!("the leave must be refused: {other:?}"),
    }
    assert_eq!(d.core.seats().len(), 2, "Ana keeps her seat");
    assert_eq!(d.core.seats()[0].conn, Some(1), "and her connection");
    assert_eq!(left_events(&d, 2), 0, "Luis hears of no leave");
    assert_eq!(
        stored_seats(&store, code).await,
        before,
        "the store is unchanged"
    );

    // Sent again once the database is back: stored (her row gone, Luis now the creator,
    // in one write), then announced and acknowledged.
    let answer = d.cmd(1, ana, 6, SeatCmd::Leave).await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
    assert!(
        matches!(d.persisted.last(), Some(Write::Batch(w)) if w.len() == 2),
        "{:?}",
        d.persisted.last()
    );
    assert_eq!(left_events(&d, 2), 1);
    let seats = stored_seats(&store, code).await;
    assert_eq!(seats.len(), 1, "{seats:?}");
    assert!(
        seats[0].1,
        "the creator role passed to Luis in the same write: {seats:?}"
    );
    assert_eq!(d.core.seats().len(), 1);
    assert!(d.core.seats()[0].creator);
}

#[tokio::test]
async fn a_colour_change_is_one_write_and_a_failed_one_changes_no_row() {
    let code = "ACKCOLOR";
    let (mut d, store, _, luis) = lobby(code, json!({})).await;
    let before = stored_seats(&store, code).await;
    let old = d.core.seats()[1].colour;
    store.fail_write(Some(store.writes() + 1));
    let answer = d
        .cmd(
            2,
            luis,
            7,
            SeatCmd::ChooseColour(parchis_engine::Colour::Green),
        )
        .await;
    assert!(
        matches!(
            &answer,
            ServerMessage::Error {
                code: ErrorCode::Internal,
                ..
            }
        ),
        "{answer:?}"
    );
    assert_eq!(d.core.seats()[1].colour, old);
    assert_eq!(
        stored_seats(&store, code).await,
        before,
        "neither row changed"
    );

    let answer = d
        .cmd(
            2,
            luis,
            8,
            SeatCmd::ChooseColour(parchis_engine::Colour::Green),
        )
        .await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
    assert!(
        matches!(d.persisted.last(), Some(Write::Batch(w))
            if matches!(w.as_slice(), [Write::DeleteSeat { .. }, Write::UpsertSeat(_)])),
        "one write: the old row's delete and the new row: {:?}",
        d.persisted.last()
    );
    let seats = stored_seats(&store, code).await;
    let colours: Vec<&str> = seats.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(colours.len(), 2, "{colours:?}");
    assert!(colours.contains(&"green"), "{colours:?}");
    assert!(
        !colours.contains(&old.to_string().as_str()),
        "the old row went: {colours:?}"
    );
}

#[tokio::test]
async fn a_grace_period_whose_write_fails_frees_the_seat_on_a_later_try() {
    let code = "ACKGRACE";
    let (mut d, store, _, _) = lobby(code, json!({})).await;
    d.input(parchis_room_core::Input::Detach { conn: 2 }).await;
    let grace = d.core.seats()[1].grace_until.expect("a grace period runs");
    store.fail_write(Some(store.writes() + 1));
    d.at(grace).await;
    assert_eq!(d.core.seats().len(), 2, "not freed while its write fails");
    assert_eq!(stored_seats(&store, code).await.len(), 2);
    assert_eq!(left_events(&d, 1), 0, "nobody heard of it");
    let retry = d.core.seats()[1].grace_until.expect("tried again later");
    assert!(retry > grace, "{retry} after {grace}");
    d.at(retry).await;
    assert_eq!(d.core.seats().len(), 1, "freed once stored");
    assert_eq!(stored_seats(&store, code).await.len(), 1);
    assert_eq!(left_events(&d, 1), 1);
}

#[tokio::test]
async fn a_bot_takeover_stores_its_event_and_the_bot_seat_in_one_write() {
    let code = "ACKBOTTO";
    let (mut d, store, ana, luis) = lobby(
        code,
        json!({"seats": 2, "on_abandon": "bot", "bots": "random"}),
    )
    .await;
    let ok = d.cmd(1, ana, 10, SeatCmd::Start).await;
    assert!(matches!(ok, ServerMessage::Ok { .. }), "{ok:?}");
    let seq = d.core.seq();
    let answer = d.cmd(2, luis, 11, SeatCmd::Leave).await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
    assert!(d.core.seq() > seq, "the takeover was applied");
    let batch = d
        .persisted
        .iter()
        .rev()
        .find_map(|w| match w {
            Write::Batch(ws) => Some(ws.clone()),
            _ => None,
        })
        .expect("a batch was stored");
    // A packed game: the takeover event is stored as its piece, with no JSON row.
    assert!(
        matches!(&batch[0], Write::Append { events, piece: Some(_), .. } if events.is_empty()),
        "{batch:?}"
    );
    assert!(
        matches!(&batch[1], Write::UpsertSeat(s) if s.bot.is_some()),
        "{batch:?}"
    );
    let snap = store.get_room(code).await.expect("read").expect("stored");
    let bots: Vec<_> = snap.seats.iter().filter(|s| s.bot.is_some()).collect();
    assert_eq!(
        bots.len(),
        1,
        "a restore reads the bot's seat: {:?}",
        snap.seats
    );
}
