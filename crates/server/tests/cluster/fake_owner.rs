//! A stand-in for a room's owner, driven by the test over NATS: it serves
//! `P.room.<CODE>` itself, sees every request an edge node sends (attach, command,
//! detach), answers them or not, and publishes frames, `end`s and `moved` notices exactly
//! when the test says. So the edge's handling of an owner that dies, drains, pauses or
//! moves at one precise moment is tested without racing a real owner.

use crate::common::Client;
use async_nats::Subject;
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

/// One request an edge sent to the fake owner.
#[derive(Debug)]
pub struct Asked {
    pub body: Value,
    reply: Option<Subject>,
}

impl Asked {
    /// The request's `op` (`attach`, `command`, `detach`).
    pub fn op(&self) -> &str {
        self.body["op"].as_str().unwrap_or("")
    }
}

/// The fake owner of room `code`.
pub struct FakeOwner {
    pub nats: async_nats::Client,
    sub: async_nats::Subscriber,
    pub prefix: String,
    pub code: String,
    /// The counter of the last message, per edge link (conn, gen).
    n: std::collections::HashMap<(u64, u64), u64>,
}

impl FakeOwner {
    /// Serves `P.room.<code>` of the cluster of `prefix` (the subscription confirmed).
    pub async fn serve(prefix: &str, code: &str) -> FakeOwner {
        let url = std::env::var("PARCHIS_NATS_URL").expect("NATS (checked by the harness)");
        let nats = async_nats::connect(url).await.expect("connect to NATS");
        let sub = nats
            .subscribe(format!("{prefix}.room.{code}"))
            .await
            .expect("subscribe");
        // On the server before any edge asks (flush only writes the socket): a message to
        // an inbox of this client's comes back after NATS processed the subscription.
        let inbox = nats.new_inbox();
        let mut echo = nats.subscribe(inbox.clone()).await.expect("subscribe");
        nats.publish(inbox, "".into()).await.expect("publish");
        tokio::time::timeout(Duration::from_secs(5), echo.next())
            .await
            .expect("NATS answers")
            .expect("echo");
        FakeOwner {
            nats,
            sub,
            prefix: prefix.to_owned(),
            code: code.to_owned(),
            n: Default::default(),
        }
    }

    /// The next request (10 s at most).
    pub async fn next(&mut self) -> Asked {
        let msg = tokio::time::timeout(Duration::from_secs(10), self.sub.next())
            .await
            .expect("a request to the fake owner within 10 s")
            .expect("subscription open");
        let body: Value = serde_json::from_slice(&msg.payload).expect("a JSON request");
        Asked {
            body,
            reply: msg.reply,
        }
    }

    /// The next request if one comes within `wait`.
    pub async fn try_next(&mut self, wait: Duration) -> Option<Asked> {
        let msg = tokio::time::timeout(wait, self.sub.next()).await.ok()??;
        let body: Value = serde_json::from_slice(&msg.payload).expect("a JSON request");
        Some(Asked {
            body,
            reply: msg.reply,
        })
    }

    /// The next request whose op is `op` (others are left unanswered).
    pub async fn next_op(&mut self, op: &str) -> Asked {
        loop {
            let asked = self.next().await;
            if asked.op() == op {
                return asked;
            }
        }
    }

    /// Answers `asked` with `body`.
    pub async fn answer(&self, asked: &Asked, body: Value) {
        let reply = asked.reply.clone().expect("a request with a reply subject");
        self.nats
            .publish(reply, body.to_string().into())
            .await
            .expect("answer");
        self.nats.flush().await.expect("flush");
    }

    /// Publishes to edge `node` for the link of attach request `attach` a message of
    /// `kind` (`frame`, `kick`, `end`) with `body`, numbered after the link's last one.
    pub async fn send(&mut self, node: &str, attach: &Asked, kind: &str, body: &str) {
        let line = self.line(attach, kind, body);
        self.publish(node, format!("{line}{body}")).await;
    }

    /// Publishes to edge `node` one message carrying frame `body` for the links of every
    /// attach request of `links` (a line each, in that order, each numbered after its
    /// link's last message), as an owner does with a broadcast frame.
    pub async fn send_grouped(&mut self, node: &str, links: &[&Asked], body: &str) {
        let mut msg = String::new();
        for attach in links {
            msg.push_str(&self.line(attach, "frame", body));
        }
        msg.push_str(body);
        self.publish(node, msg).await;
    }

    /// The link of attach request `attach` loses its next message (on the bus, as it
    /// were): its counter moves on without a message.
    pub fn lose(&mut self, attach: &Asked) {
        *self.n.entry(Self::link(attach)).or_insert(0) += 1;
    }

    fn link(attach: &Asked) -> (u64, u64) {
        let conn = attach.body["conn"].as_u64().expect("conn");
        let gen = attach.body["gen"].as_u64().expect("gen");
        (conn, gen)
    }

    /// The line `<conn> <gen> <n> <kind> <tag>\n` (the server's `edge_msg`) of the next
    /// message of the link of `attach`, whose body is `body`.
    fn line(&mut self, attach: &Asked, kind: &str, body: &str) -> String {
        let (conn, gen) = Self::link(attach);
        let n = self.n.entry((conn, gen)).or_insert(0);
        *n += 1;
        let mut tag = "-".to_owned();
        if let Ok(v) = serde_json::from_str::<Value>(body) {
            if let Some(seq) = v["seq"].as_u64() {
                match v["type"].as_str() {
                    Some("event") => tag = format!("e{seq}"),
                    Some("your_turn") => tag = format!("t{seq}"),
                    _ => {}
                }
            }
        }
        format!("{conn} {gen} {n} {kind} {tag}\n")
    }

    async fn publish(&self, node: &str, msg: String) {
        self.nats
            .publish(format!("{}.edge.{node}", self.prefix), msg.into())
            .await
            .expect("publish to the edge");
        self.nats.flush().await.expect("flush");
    }

    /// Publishes `P.moved` naming `node` as the room's owner (at epoch 9).
    pub async fn moved(&self, node: &str) {
        self.moved_at(node, 9).await;
    }

    /// Publishes `P.moved` naming `node` as the room's owner at lease `epoch`.
    pub async fn moved_at(&self, node: &str, epoch: i64) {
        let notice = json!({"v": 1, "room": self.code, "node": node, "epoch": epoch});
        self.nats
            .publish(format!("{}.moved", self.prefix), notice.to_string().into())
            .await
            .expect("publish moved");
        self.nats.flush().await.expect("flush");
    }

    /// A `welcome` for attach request `attach` (a player of `colour`, or a spectator),
    /// with a snapshot at `seq`, its fields in the server's order (edges read frames by
    /// their first bytes).
    pub fn welcome(&self, attach: &Asked, colour: Option<&str>, seq: u64) -> String {
        let req = attach.body["how"]["req"].as_u64().unwrap_or(1);
        let (role, colour, token) = match colour {
            Some(c) => (
                "player",
                format!("\"{c}\""),
                format!("\"{}\"", "ab".repeat(32)),
            ),
            None => ("spectator", "null".into(), "null".into()),
        };
        format!(
            r#"{{"type":"welcome","req":{req},"room":"{}","role":"{role}","colour":{colour},"token":{token},"seq":{seq},"snapshot":{{"code":"{}","seats":[]}}}}"#,
            self.code, self.code
        )
    }

    /// An event frame at `seq` (a `player_left`, for the stream only).
    pub fn event(&self, seq: u64) -> String {
        format!(
            r#"{{"type":"event","room":"{}","seq":{seq},"at_ms":1,"event":{{"type":"player_left","colour":"green"}}}}"#,
            self.code
        )
    }

    /// An `ok` to request `req` at `seq`.
    pub fn ok(req: u64, seq: u64) -> String {
        format!(r#"{{"type":"ok","req":{req},"seq":{seq}}}"#)
    }
}

/// A client on `addr` that joins the fake owner's room as blue: the attach is answered,
/// the welcome (seq 1) relayed. Returns the client and the attach request.
pub async fn joined(addr: SocketAddr, fake: &mut FakeOwner, node: &str) -> (Client, Asked) {
    let mut c = crate::common::client(addr).await;
    let req = c
        .cmd(json!({"type": "join", "room": fake.code, "name": "Bruno", "colour": "blue"}))
        .await;
    let attach = fake.next_op("attach").await;
    assert_eq!(attach.body["how"]["kind"], "join", "{:?}", attach.body);
    let welcome = fake.welcome(&attach, Some("blue"), 1);
    fake.send(node, &attach, "frame", &welcome).await;
    fake.answer(&attach, json!({"answer": "attached", "role": "player"}))
        .await;
    let w = c.reply(req).await;
    assert_eq!(w["type"], "welcome", "{w}");
    (c, attach)
}

/// Reads `c` until the event at `seq`; returns every frame before it. (The owner's
/// frames come in order: a frame published before that event has been judged by then.)
pub async fn until_event(c: &mut Client, seq: u64) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let v = c.next().await.expect("socket open");
        if v["type"] == "event" && v["seq"].as_u64() == Some(seq) {
            return seen;
        }
        seen.push(v);
    }
}

/// Reads `c` until the `pong` of a `ping` sent now; returns every frame before it.
pub async fn until_pong(c: &mut Client) -> Vec<Value> {
    let req = c.cmd(json!({"type": "ping"})).await;
    let mut seen = Vec::new();
    loop {
        let v = c.next().await.expect("socket open");
        if v["type"] == "pong" && v["req"].as_u64() == Some(req) {
            return seen;
        }
        seen.push(v);
    }
}
