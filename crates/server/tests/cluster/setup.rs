//! Games set up for the cluster tests.

use crate::common::{client, Client};
use crate::driver::Player;
use crate::harness::Cluster;
use serde_json::json;

/// Creates a two-seat room on node `owner`, seats one player there and one on the next
/// node, starts the game. The players come back ready to play.
pub async fn two_player_game(
    cluster: &Cluster,
    owner: usize,
    name: &str,
    turn_clock_secs: u64,
) -> (String, Vec<Player>) {
    let code = cluster
        .create_room(
            owner,
            &json!({"seats": 2, "turn_clock_secs": turn_clock_secs, "disconnect_grace_secs": 300,
                    "timeouts_to_abandon": 10, "public": false}),
        )
        .await;
    let roster = cluster.roster.clone();
    let other = (owner + 1) % roster.len();
    let mut a = Player::join(&roster, owner, &code, &format!("{name}a"), None).await;
    let mut b = Player::join(&roster, other, &code, &format!("{name}b"), None).await;
    a.wait_seq(2).await;
    b.wait_seq(2).await;
    let ok = a.command(json!({"type": "start"})).await;
    assert_eq!(ok["type"], "ok", "{name}: start: {ok}");
    (code, vec![a, b])
}

/// Ana (yellow) joins `code` on node `ana_at`, Bruno (blue) and the spectator Eve on node
/// `others_at`, and each reads both joins (seq 2). The clients in that order.
pub async fn seated_with_a_spectator(
    cluster: &Cluster,
    code: &str,
    ana_at: usize,
    others_at: usize,
) -> Vec<Client> {
    let mut ana = client(cluster.addr(ana_at)).await;
    ana.join(code, "Ana", Some("yellow")).await;
    let mut bruno = client(cluster.addr(others_at)).await;
    bruno.join(code, "Bruno", Some("blue")).await;
    let mut eve = client(cluster.addr(others_at)).await;
    eve.watch(code).await;
    for c in [&mut ana, &mut bruno, &mut eve] {
        while c.seq < 2 {
            c.next().await;
        }
    }
    vec![ana, bruno, eve]
}

/// [`seated_with_a_spectator`], then Ana starts the game.
pub async fn a_started_game_with_a_spectator(
    cluster: &Cluster,
    code: &str,
    ana_at: usize,
    others_at: usize,
) -> Vec<Client> {
    let mut clients = seated_with_a_spectator(cluster, code, ana_at, others_at).await;
    clients[0].ok(json!({"type": "start"})).await;
    clients
}
