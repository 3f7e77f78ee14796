//! A renamed account's new name reaches a live room on another node (issue 26,
//! docs/ACCOUNTS.md): the room runs on node a, both players' sockets are on node b, and
//! the administrator renames one of them through node b. Node b has no room to rename
//! and announces it on `P.renamed`; node a renames the seat and both players get
//! `renamed` (relayed to b); the room view read on a shows the new name.

use crate::common::{call, logged_in, request_raw, sign_up_at};
use crate::harness::{Cluster, Opts, ADMIN_TOKEN};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_on_one_node_renames_the_seat_in_a_room_on_another() {
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start("rename_across_nodes", opts).await else {
        return;
    };
    let (a, b) = (cluster.addr(0), cluster.addr(1));
    let ana = sign_up_at(b, "Ana").await;
    let luis = sign_up_at(b, "Luis").await;
    let code = cluster
        .create_room(0, &json!({"preset": "online", "seats": 2}))
        .await;
    let mut y = logged_in(b, &ana).await;
    y.join(&code, "ignored", Some("yellow")).await;
    let mut r = logged_in(b, &luis).await;
    r.join(&code, "ignored", Some("red")).await;
    let auth = format!("Authorization: Bearer {ADMIN_TOKEN}");
    let body = json!({"username": "Luis_Nuevo"}).to_string();
    let (status, answer) = request_raw(
        b,
        "POST",
        "/admin/accounts/Luis/rename",
        &[&auth, "Content-Type: application/json"],
        &body,
    )
    .await;
    assert_eq!(status, 204, "{answer}");
    for c in [&mut y, &mut r] {
        let renamed = c.until("renamed", |v| v["type"] == "renamed").await;
        assert_eq!(
            renamed,
            json!({"type": "renamed", "room": code, "colour": "red", "name": "Luis_Nuevo"})
        );
    }
    let (status, view) = call(a, "GET", &format!("/api/rooms/{code}"), None, "").await;
    assert_eq!(status, 200, "{view}");
    let red = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .find(|s| s["colour"] == "red")
        .expect("red seated")
        .clone();
    assert_eq!(red["name"], "Luis_Nuevo", "{view}");
}
