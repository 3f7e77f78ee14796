//! The edge's side of an owner that fails at one precise moment (docs/CLUSTER.md,
//! "Routing: relayed connections"), with a [`FakeOwner`] standing in for the room's owner
//! so the moment is exact: every command of a relayed client gets exactly one reply when
//! its owner drains or dies after taking it, or does not answer (a paused owner: the
//! reply comes well within the NATS request timeout); a `moved` notice that comes before
//! the attach's `welcome` is followed (no 1012); and, with a real owner, a late reattach
//! of a connection the client has replaced loses to the client's newer connection.

use crate::common::{client, Client};
use crate::fake_owner::{joined, until_event, until_pong, Asked, FakeOwner};
use crate::harness::{Cluster, Opts};
use serde_json::{json, Value};
use std::time::Duration;

const ROOM: &str = "FAKE234567";

/// One real node and a [`FakeOwner`] of [`ROOM`] on its NATS prefix; the node's id.
/// `None` when the services are absent (see [`Cluster::start`]).
async fn one_node_and_a_fake_owner(test: &str) -> Option<(Cluster, String, FakeOwner)> {
    let opts = Opts {
        nodes: 1,
        ..Opts::default()
    };
    let cluster = Cluster::start(test, opts).await?;
    let node = cluster.id(0).to_owned();
    let fake = FakeOwner::serve(&cluster.prefix, ROOM).await;
    Some((cluster, node, fake))
}

/// A client of node `node` (at `addr`) [`joined`] to the fake owner's room sends a
/// `roll`; returns the client, its attach, the roll's `req` and the relayed command as
/// the fake owner got it (not answered yet).
async fn a_relayed_roll(
    addr: std::net::SocketAddr,
    fake: &mut FakeOwner,
    node: &str,
) -> (Client, Asked, u64, Asked) {
    let (mut c, attach) = joined(addr, fake, node).await;
    let req = c.cmd(json!({"type": "roll"})).await;
    let cmd = fake.next_op("command").await;
    (c, attach, req, cmd)
}

/// The old owner's late `ok` to `req` (seq `late_seq`) on the link `old`, then an event
/// (seq `late_seq + 1`) on the link `new`: `c` reads up to that event and gets no second
/// reply to `req` (it had its one reply already).
async fn no_second_reply_after_a_late_ok(
    fake: &mut FakeOwner,
    node: &str,
    (old, new): (&Asked, &Asked),
    c: &mut Client,
    req: u64,
    late_seq: u64,
) {
    let late = FakeOwner::ok(req, late_seq);
    fake.send(node, old, "frame", &late).await;
    let event = fake.event(late_seq + 1);
    fake.send(node, new, "frame", &event).await;
    let seen = until_event(c, late_seq + 1).await;
    assert!(
        !seen.iter().any(|v| v["req"].as_u64() == Some(req)),
        "a second reply to {req}: {seen:?}"
    );
}

fn attached(role: &str) -> Value {
    json!({"answer": "attached", "role": role})
}

/// The owner takes a relayed `roll` into its queue, then forgets the link (a drain's
/// hand-off: `end`) without answering it: the client gets `outcome_unknown` for it (the
/// edge cannot know whether it was applied), once; the old owner's late `ok` on the old
/// link never reaches it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_taken_by_an_owner_that_hands_off_gets_outcome_unknown_once() {
    let test = "a_command_taken_by_an_owner_that_hands_off_gets_outcome_unknown_once";
    let Some((cluster, node, mut fake)) = one_node_and_a_fake_owner(test).await else {
        return;
    };
    let (mut c, attach, req, cmd) = a_relayed_roll(cluster.addr(0), &mut fake, &node).await;
    assert_eq!(cmd.body["req"].as_u64(), Some(req), "{:?}", cmd.body);
    fake.answer(&cmd, json!({"answer": "taken"})).await;
    fake.send(&node, &attach, "end", "").await;
    let r = c.reply(req).await;
    assert_eq!(
        (r["type"].as_str(), r["code"].as_str()),
        (Some("error"), Some("outcome_unknown")),
        "{r}"
    );
    // The edge follows the room: its reattach is answered.
    let re = fake.next_op("attach").await;
    assert_eq!(re.body["how"]["kind"], "reattach", "{:?}", re.body);
    fake.answer(&re, attached("player")).await;
    no_second_reply_after_a_late_ok(&mut fake, &node, (&attach, &re), &mut c, req, 1).await;
}

/// The owner takes a relayed `roll`, then dies without a word; another node takes the
/// room over and announces it (`moved`): the client gets `outcome_unknown` for the roll
/// (once) and its connection follows the room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_taken_by_an_owner_that_dies_gets_outcome_unknown_once() {
    let test = "a_command_taken_by_an_owner_that_dies_gets_outcome_unknown_once";
    let Some((cluster, node, mut fake)) = one_node_and_a_fake_owner(test).await else {
        return;
    };
    let (mut c, attach, req, cmd) = a_relayed_roll(cluster.addr(0), &mut fake, &node).await;
    fake.answer(&cmd, json!({"answer": "taken"})).await;
    // The fake now plays the new owner, "n2".
    fake.moved("n2").await;
    let r = c.reply(req).await;
    assert_eq!(r["code"], "outcome_unknown", "{r}");
    let re = fake.next_op("attach").await;
    assert_eq!(
        (re.body["how"]["kind"].as_str(), re.body["owner"].as_str()),
        (Some("reattach"), Some("n2")),
        "{:?}",
        re.body
    );
    assert_eq!(re.body["how"]["last_seq"], 1, "{:?}", re.body);
    fake.answer(&re, attached("player")).await;
    no_second_reply_after_a_late_ok(&mut fake, &node, (&attach, &re), &mut c, req, 1).await;
}

/// An owner that still holds the room's subject but answers nothing (paused, `kill
/// -STOP`): the client's command is answered `outcome_unknown` by the edge (it cannot
/// know whether the owner got it) long before the 5 s NATS request timeout, here before
/// the owner's next frame, sent 3 s after the command; the owner's late answer changes
/// nothing. The command carried its deadline, already past when the owner answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_to_an_owner_that_answers_nothing_is_refused_quickly() {
    let test = "a_command_to_an_owner_that_answers_nothing_is_refused_quickly";
    let Some((cluster, node, mut fake)) = one_node_and_a_fake_owner(test).await else {
        return;
    };
    let (mut c, attach, req, cmd) = a_relayed_roll(cluster.addr(0), &mut fake, &node).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    fake.send(&node, &attach, "frame", &fake.event(2)).await;
    let first = c
        .until("the reply or the event", |v| {
            v["req"].as_u64() == Some(req) || v["type"] == "event"
        })
        .await;
    assert_eq!(
        first["code"], "outcome_unknown",
        "the reply came before the owner's frame sent 3 s later: {first}"
    );
    let deadline = cmd.body["deadline_ms"].as_i64().expect("a deadline");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    assert!(
        (now - 3_500..now - 1_000).contains(&deadline),
        "the deadline was about 1.25 s after the send, 3 s ago: {deadline} (now {now})"
    );
    fake.answer(&cmd, json!({"answer": "taken"})).await;
    no_second_reply_after_a_late_ok(&mut fake, &node, (&attach, &attach), &mut c, req, 2).await;
}

/// A `moved` notice arrives while the relayed join is still being attached, before its
/// `welcome`: the client gets its welcome, and its connection then follows the room to
/// the node the notice names (a reattach from the welcome's seq), instead of being
/// closed with 1012.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_notice_before_the_welcome_is_followed() {
    let test = "a_moved_notice_before_the_welcome_is_followed";
    let Some((cluster, node, mut fake)) = one_node_and_a_fake_owner(test).await else {
        return;
    };
    let mut c = client(cluster.addr(0)).await;
    let req = c
        .cmd(json!({"type": "join", "room": ROOM, "name": "Bruno", "colour": "blue"}))
        .await;
    let attach = fake.next_op("attach").await;
    fake.moved("n2").await;
    // The edge has handled the notice before the welcome comes.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let welcome = fake.welcome(&attach, Some("blue"), 4);
    fake.send(&node, &attach, "frame", &welcome).await;
    fake.answer(&attach, attached("player")).await;
    let w = c.reply(req).await;
    assert_eq!(w["type"], "welcome", "{w}");
    let re = fake.next_op("attach").await;
    assert_eq!(
        (
            re.body["how"]["kind"].as_str(),
            re.body["how"]["last_seq"].as_u64(),
            re.body["owner"].as_str()
        ),
        (Some("reattach"), Some(4), Some("n2")),
        "{:?}",
        re.body
    );
    assert_eq!(
        re.body["how"]["reattach"]["colour"], "blue",
        "{:?}",
        re.body
    );
    fake.answer(&re, attached("player")).await;
    fake.send(&node, &re, "frame", &fake.event(5)).await;
    let e = c
        .until("the new owner's event", |v| v["type"] == "event")
        .await;
    assert_eq!(e["seq"], 5, "{e}");
    let seen = until_pong(&mut c).await;
    assert!(
        !seen.iter().any(|v| v["type"] == "closing"),
        "the connection stays: {seen:?}"
    );
}

/// A real owner: Bruno's seat moved to his newer connection (a `resume` through b) when
/// a late reattach for his seat arrives from a node that still had his old socket (as a
/// drained node's does): the reattach is refused and Bruno's newer connection keeps the
/// seat, unclosed, and plays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_reattach_loses_to_the_clients_newer_connection() {
    let test = "a_late_reattach_loses_to_the_clients_newer_connection";
    let opts = Opts {
        nodes: 2,
        ..Opts::default()
    };
    let Some(cluster) = Cluster::start(test, opts).await else {
        return;
    };
    let code = cluster
        .create_room(0, &json!({"seats": 2, "turn_clock_secs": 120}))
        .await;
    let connect = |i: usize| client(cluster.addr(i));
    let mut ana = connect(0).await;
    ana.join(&code, "Ana", Some("yellow")).await;
    let mut old = connect(0).await;
    old.join(&code, "Bruno", Some("blue")).await;
    let token = old.token.clone().expect("token");
    let mut bruno = connect(1).await;
    bruno.resume(&code, &token, 0).await;
    let seq = bruno.seq;

    let url = std::env::var("PARCHIS_NATS_URL").expect("NATS (checked by the harness)");
    let nats = async_nats::connect(url).await.expect("connect to NATS");
    let stale = json!({"v": 1, "op": "attach", "edge": "gone", "conn": 77, "gen": 1,
        "how": {"kind": "reattach", "reattach": {"as": "player", "colour": "blue"},
                "last_seq": seq}});
    let answer = nats
        .request(
            format!("{}.room.{code}", cluster.prefix),
            stale.to_string().into(),
        )
        .await
        .expect("the owner answers");
    let answer: Value = serde_json::from_slice(&answer.payload).expect("JSON");
    assert_eq!(answer["answer"], "refused", "{answer}");

    let seen = until_pong(&mut bruno).await;
    assert!(
        !seen
            .iter()
            .any(|v| v["type"] == "closing" || v["type"] == "ws_close"),
        "Bruno's newer connection stays: {seen:?}"
    );
    while ana.seq < bruno.seq {
        ana.next().await;
    }
    ana.ok(json!({"type": "start"})).await;
    let (_, view) = cluster
        .http(0, "GET", &format!("/api/rooms/{code}"), None)
        .await;
    let blue = view["seats"]
        .as_array()
        .expect("seats")
        .iter()
        .find(|s| s["colour"] == "blue")
        .cloned()
        .expect("blue seat");
    assert_eq!(blue["connected"], true, "{view}");
}

/// The reattach requests `fake` gets for the links of `lost` (each a gap on its link),
/// in any order, answered `attached`; returned in the order of `lost`.
async fn reattaches_of(fake: &mut FakeOwner, lost: &[&Asked]) -> Vec<Asked> {
    let mut got: Vec<Option<Asked>> = lost.iter().map(|_| None).collect();
    for _ in lost {
        let re = fake.next_op("attach").await;
        assert_eq!(re.body["how"]["kind"], "reattach", "{:?}", re.body);
        let i = lost
            .iter()
            .position(|a| a.body["conn"] == re.body["conn"])
            .unwrap_or_else(|| panic!("a reattach of another link: {:?}", re.body));
        assert!(got[i].is_none(), "a second reattach: {:?}", re.body);
        fake.answer(&re, attached("player")).await;
        got[i] = Some(re);
    }
    got.into_iter().flatten().collect()
}

/// The event seqs `c` saw.
fn seqs(c: &Client) -> Vec<u64> {
    c.events.iter().filter_map(|e| e["seq"].as_u64()).collect()
}

/// Three relayed sockets of the fake owner's room on one edge node, the owner's frames
/// for all three in one message with a line per link: each client gets each event once.
/// A message lost for one link only (its counter skips one) makes that link, and only
/// it, reattach (from the last event it has); the others read on. A message lost for all
/// three is a gap on each: all three reattach. Every client sees one gap-free stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grouped_frames_with_a_gap_on_one_link_reattach_that_link_only() {
    let test = "grouped_frames_with_a_gap_on_one_link_reattach_that_link_only";
    let Some((cluster, node, mut fake)) = one_node_and_a_fake_owner(test).await else {
        return;
    };
    let addr = cluster.addr(0);
    let (mut c1, a1) = joined(addr, &mut fake, &node).await;
    let (mut c2, a2) = joined(addr, &mut fake, &node).await;
    let (mut c3, a3) = joined(addr, &mut fake, &node).await;
    fake.send_grouped(&node, &[&a1, &a2, &a3], &fake.event(2))
        .await;
    // Link 2 loses a message; the next grouped one is judged per line.
    fake.lose(&a2);
    fake.send_grouped(&node, &[&a1, &a2, &a3], &fake.event(3))
        .await;
    let re = reattaches_of(&mut fake, &[&a2]).await.remove(0);
    assert_eq!(re.body["how"]["last_seq"], 2, "{:?}", re.body);
    fake.send(&node, &re, "frame", &fake.event(3)).await;
    fake.send_grouped(&node, &[&a1, &re, &a3], &fake.event(4))
        .await;
    for c in [&mut c1, &mut c2, &mut c3] {
        until_event(c, 4).await;
    }
    while let Some(other) = fake.try_next(Duration::from_millis(500)).await {
        assert_ne!(
            other.op(),
            "attach",
            "links 1 and 3 went on: {:?}",
            other.body
        );
    }
    // A message lost for every link it carried.
    for a in [&a1, &re, &a3] {
        fake.lose(a);
    }
    fake.send_grouped(&node, &[&a1, &re, &a3], &fake.event(6))
        .await;
    let again = reattaches_of(&mut fake, &[&a1, &re, &a3]).await;
    for r in &again {
        assert_eq!(r.body["how"]["last_seq"], 4, "{:?}", r.body);
    }
    fake.send_grouped(&node, &[&again[0], &again[1], &again[2]], &fake.event(5))
        .await;
    fake.send_grouped(&node, &[&again[0], &again[1], &again[2]], &fake.event(6))
        .await;
    for c in [&mut c1, &mut c2, &mut c3] {
        until_event(c, 6).await;
        assert_eq!(seqs(c), vec![2, 3, 4, 5, 6], "one gap-free stream");
    }
    let gaps = cluster
        .metric(0, "parchis_cluster_edge_gaps_total", &[])
        .await;
    // A reattach counts once its answer is read, which may be just after its events.
    let ok = &[r#"cause="gap""#, r#"outcome="ok""#];
    let mut reattached = 0.0;
    for _ in 0..50 {
        reattached = cluster
            .metric(0, "parchis_cluster_reattaches_total", ok)
            .await;
        if reattached >= 4.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!((gaps, reattached), (4.0, 4.0));
}

/// Issue 25: an owner's attach answer, `end` and `kick` name its lease epoch, so a stale
/// owner (one that lost the room to a later epoch and does not know yet, e.g. resumed
/// after SIGSTOP) cannot detach or close a live link, even one of the same generation
/// (a reattach sent to whoever serves the room reaches the old owner too). The client
/// joins through the edge and the owner at epoch 2 answers; an `end` and a `kick` of
/// epoch 1 on that very link change nothing (no reattach, the socket stays open, the
/// stream goes on, the next command names the owner of epoch 2). A `moved` notice at
/// epoch 3 makes the edge reattach; an answer of epoch 2 is refused as stale and the edge
/// attaches again, to the owner of epoch 3, whose own `kick` closes the socket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_owners_attach_answer_end_and_kick_are_ignored() {
    let test = "a_stale_owners_attach_answer_end_and_kick_are_ignored";
    let Some((cluster, node, mut fake)) = one_node_and_a_fake_owner(test).await else {
        return;
    };
    let mut c = client(cluster.addr(0)).await;
    let req = c
        .cmd(json!({"type": "join", "room": ROOM, "name": "Bruno", "colour": "blue"}))
        .await;
    let attach = fake.next_op("attach").await;
    let welcome = fake.welcome(&attach, Some("blue"), 1);
    fake.send(&node, &attach, "frame", &welcome).await;
    let at_2 = json!({"answer": "attached", "role": "player", "epoch": 2, "node": "n2"});
    fake.answer(&attach, at_2).await;
    assert_eq!(c.reply(req).await["type"], "welcome");
    // The join is handled (its answer read) before the next frame of the socket is.
    until_pong(&mut c).await;

    // The stale owner of epoch 1 ends and kicks the same link: ignored.
    let stale_end = r#"{"epoch":1}"#;
    fake.send(&node, &attach, "end", stale_end).await;
    let stale_kick = r#"{"code":4000,"reason":"stale","epoch":1}"#;
    fake.send(&node, &attach, "kick", stale_kick).await;
    let event = fake.event(2);
    fake.send(&node, &attach, "frame", &event).await;
    let seen = until_event(&mut c, 2).await;
    assert!(seen.is_empty(), "nothing before the event: {seen:?}");
    let req = c.cmd(json!({"type": "roll"})).await;
    let cmd = fake.next().await;
    assert_eq!(
        cmd.op(),
        "command",
        "no reattach after the stale end: {:?}",
        cmd.body
    );
    assert_eq!(cmd.body["owner"], "n2", "{:?}", cmd.body);
    assert_eq!(cmd.body["gen"], attach.body["gen"], "the same link");
    fake.answer(&cmd, json!({"answer": "taken"})).await;
    fake.send(&node, &attach, "frame", &FakeOwner::ok(req, 2))
        .await;
    assert_eq!(c.reply(req).await["type"], "ok");

    // A takeover at epoch 3; the owner of epoch 2 answers the reattach first: stale.
    fake.moved_at("n3", 3).await;
    let first = fake.next_op("attach").await;
    assert_eq!(first.body["how"]["kind"], "reattach", "{:?}", first.body);
    let stale = json!({"answer": "attached", "role": "player", "epoch": 2, "node": "n2"});
    fake.answer(&first, stale).await;
    let again = fake.next_op("attach").await;
    assert_eq!(again.body["owner"], "n3", "{:?}", again.body);
    assert_ne!(again.body["gen"], first.body["gen"], "a new link");
    let at_3 = json!({"answer": "attached", "role": "player", "epoch": 3, "node": "n3"});
    fake.answer(&again, at_3).await;
    // The stale owner's frame on the link it took is not delivered; the new one's is.
    fake.send(&node, &first, "frame", &fake.event(3)).await;
    fake.send(&node, &again, "frame", &fake.event(3)).await;
    fake.send(&node, &again, "frame", &fake.event(4)).await;
    let seen = until_event(&mut c, 3).await;
    assert!(seen.is_empty(), "{seen:?}");
    let next = c.next().await.expect("open");
    assert_eq!(
        (next["type"].as_str(), next["seq"].as_u64()),
        (Some("event"), Some(4)),
        "{next}"
    );
    let kick = r#"{"code":4000,"reason":"bye","epoch":3}"#;
    fake.send(&node, &again, "kick", kick).await;
    let closed = c
        .until("the socket's close", |v| v["type"] == "ws_close")
        .await;
    assert_eq!(closed["code"], 4000, "{closed}");
}
