//! Ratings changed elsewhere (issue 26): `Core::rerate_account` updates the seats of the
//! account, tells every connection with `rating` and publishes the listing; nothing for
//! an account not seated here or a rating unchanged.

use super::{settings, Driver};
use parchis_engine::Colour;
use parchis_protocol::ServerMessage;
use parchis_room_core::core::{Effect, Input};
use serde_json::json;
use std::collections::BTreeMap;

fn ratings(online: Option<i64>) -> BTreeMap<String, i64> {
    online
        .map(|r| ("online".to_owned(), r))
        .into_iter()
        .collect()
}

fn rating_messages(d: &Driver, conn: u64) -> Vec<ServerMessage> {
    d.messages(conn)
        .into_iter()
        .filter(|m| matches!(m, ServerMessage::Rating { .. }))
        .collect()
}

#[tokio::test]
async fn a_seated_accounts_new_rating_is_shown_and_told_once() {
    let mut d = Driver::new(
        "RERATE",
        settings(json!({"preset": "online", "seats": 2})),
        5,
        64,
    );
    let ana = uuid::Uuid::from_u128(7);
    d.input(Input::Join {
        conn: 1,
        req: 1,
        name: "Ana".into(),
        colour: Some(Colour::Yellow),
        client_seed: None,
        account: Some(ana),
        ratings: ratings(Some(1040)),
        token: "token-1".into(),
    })
    .await;
    d.join(2, "Guest").await;
    let seat_ratings =
        |d: &Driver| -> Vec<Option<i64>> { d.core.view().seats.iter().map(|s| s.rating).collect() };
    assert_eq!(seat_ratings(&d), [Some(1040), None]);

    // Another account, or Ana's rating unchanged: nothing.
    let other = d
        .core
        .rerate_account(uuid::Uuid::from_u128(8), &ratings(Some(1500)));
    assert!(other.is_empty(), "{other:?}");
    let same = d.core.rerate_account(ana, &ratings(Some(1040)));
    assert!(same.is_empty(), "{same:?}");

    let effects = d.core.rerate_account(ana, &ratings(Some(1063)));
    assert!(effects.iter().any(|e| matches!(e, Effect::Publish)));
    d.carry_out(effects).await;
    let want = ServerMessage::Rating {
        room: "RERATE".into(),
        colour: Colour::Yellow,
        rating: Some(1063),
    };
    for conn in [1, 2] {
        assert_eq!(
            rating_messages(&d, conn),
            std::slice::from_ref(&want),
            "conn {conn}"
        );
    }
    assert_eq!(seat_ratings(&d), [Some(1063), None]);

    // Reset: no rating in the pool any more.
    let effects = d.core.rerate_account(ana, &ratings(None));
    d.carry_out(effects).await;
    let cleared = ServerMessage::Rating {
        room: "RERATE".into(),
        colour: Colour::Yellow,
        rating: None,
    };
    assert_eq!(rating_messages(&d, 2), [want, cleared]);
    assert_eq!(seat_ratings(&d), [None, None]);
}
