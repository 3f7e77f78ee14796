//! The owner's side of a relayed connection: a remote [`ConnLink`] (the same bounded
//! queue, kick switch and unwritten-bytes count the actor uses for local sockets, so the
//! room core treats every connection alike) whose queue is drained by an egress task
//! onto its edge node's publisher ([`crate::links::publisher`], `P.edge.<NODE>`,
//! `docs/CLUSTER.md`, "Routing").
//!
//! Each message is the frame as the room serialised it, behind one line per link
//! ([`crate::links::edge_msg`]): the edge's connection id and attach generation, this link's
//! counter from 1, the kind (`frame`, `kick` or `end`: their bodies name this owner's
//! lease epoch) and the `seq` of an `event` / `your_turn` frame; the egress numbers
//! them, the publisher groups links of one edge
//! node under one body. The link never blocks the actor: a frame counts as unwritten
//! until published, and a link over its byte limit or its queue is kicked as a slow
//! consumer like a local one.

use crate::links::edge_msg::EdgeLine;
use crate::links::publisher::Item;
use crate::links::wire::{frame_tag, EndBody, KickBody, Kind, Tag};
use crate::state::NodeState;
use parchis_protocol::close_code;
use parchis_room::{ConnLink, Frame, Kick, Unwritten};
use tokio::sync::mpsc;
use tracing::{debug, Instrument};

/// The messages of one remote link, to its edge node's publisher.
pub type ToPublisher = mpsc::Sender<Item>;

/// Whom a remote link's frames are for (on the edge node its publisher serves).
#[derive(Clone, Debug)]
pub struct EdgeAddr {
    /// The edge's connection id.
    pub conn: u64,
    /// The edge's attach generation.
    pub gen: u64,
    /// This owner's lease epoch of the room (its fence), named in the link's `end` and
    /// `kick` so that an edge that followed a later owner ignores them.
    pub epoch: i64,
}

/// Creates a remote link for `edge` in room `room` and spawns its egress task, which
/// hands the link's messages to `out` (the publisher of `edge`'s node). The link's
/// id is a fresh connection id of this node. The task ends once the room forgets the
/// link (every sender dropped: it sends `end`) or kicks it (it sends the queued
/// frames, unless too slow, then `kick`).
pub fn remote_link(state: &NodeState, out: ToPublisher, room: &str, edge: EdgeAddr) -> ConnLink {
    let cfg = state.links();
    let (tx, rx) = mpsc::channel::<Frame>(cfg.outbound_queue.max(1));
    let link = ConnLink {
        id: state.next_id(),
        tx,
        kick: Kick::default(),
        unwritten: Unwritten::default(),
        max_unwritten: cfg.outbound_queue_bytes,
        // A connection relayed from another node: its mutes stay on its own node (not
        // carried yet), so it gets every emote.
        mutes: Default::default(),
    };
    let span = tracing::debug_span!(
        "egress",
        room,
        conn = link.id,
        edge_conn = edge.conn,
        gen = edge.gen
    );
    let egress = Egress {
        out,
        edge,
        n: 0,
        unwritten: link.unwritten.clone(),
    };
    tokio::spawn(egress.run(rx, link.kick.clone()).instrument(span));
    link
}

struct Egress {
    out: ToPublisher,
    edge: EdgeAddr,
    n: u64,
    unwritten: Unwritten,
}

impl Egress {
    async fn run(mut self, mut rx: mpsc::Receiver<Frame>, kick: Kick) {
        loop {
            tokio::select! {
                biased;
                frame = rx.recv() => match frame {
                    Some(frame) => self.frame(frame).await,
                    // Forgotten right after a kick (a replaced seat): the kick is the news.
                    None if kick.reason().is_some() => break,
                    None => {
                        let end = EndBody { epoch: Some(self.edge.epoch) };
                        let body = serde_json::to_string(&end).unwrap_or_default();
                        self.send(Kind::End, Tag::Other, Frame::from(body), None).await;
                        return;
                    }
                },
                () = kick.kicked() => break,
            }
        }
        let (code, reason) = kick.reason().unwrap_or((close_code::NORMAL, String::new()));
        if code != close_code::SLOW_CONSUMER {
            while let Ok(frame) = rx.try_recv() {
                self.frame(frame).await;
            }
        }
        debug!(code, %reason, "remote link kicked");
        let epoch = Some(self.edge.epoch);
        let body = serde_json::to_string(&KickBody {
            code,
            reason,
            epoch,
        })
        .unwrap_or_default();
        self.send(Kind::Kick, Tag::Other, Frame::from(body), None)
            .await;
    }

    async fn frame(&mut self, frame: Frame) {
        let tag = frame_tag(&frame);
        let unwritten = Some(self.unwritten.clone());
        self.send(Kind::Frame, tag, frame, unwritten).await;
    }

    /// Numbers the link's next message and hands it to the publisher (which releases
    /// `unwritten` once it is published).
    async fn send(&mut self, kind: Kind, tag: Tag, body: Frame, unwritten: Option<Unwritten>) {
        self.n += 1;
        let line = EdgeLine {
            conn: self.edge.conn,
            gen: self.edge.gen,
            n: self.n,
            kind,
            tag,
        };
        let item = Item {
            line,
            groupable: kind == Kind::Frame && !matches!(tag, Tag::Reply(_)),
            body,
            unwritten,
        };
        if let Err(mpsc::error::SendError(item)) = self.out.send(item).await {
            // The publisher is gone (only with the runtime): the edge sees a gap.
            debug!("edge publisher gone: message dropped");
            if let Some(unwritten) = item.unwritten {
                unwritten.written(item.body.len());
            }
        }
    }
}
