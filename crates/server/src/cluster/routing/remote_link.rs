//! The owner's side of a relayed connection: a remote [`ConnLink`] (the same bounded
//! queue, kick switch and unwritten-bytes count the actor uses for local sockets, so the
//! room core treats every connection alike) whose queue is drained by an egress task
//! publishing each frame to `P.edge.<NODE>` (`docs/CLUSTER.md`, "Routing").
//!
//! Each message is the frame as the room serialised it, behind one line
//! ([`super::edge_msg`]): the edge's connection id and attach generation, this link's
//! counter from 1, the kind (`frame`, `kick` or `end`) and the `seq` of an `event` /
//! `your_turn` frame. The link never blocks the actor: a frame counts as unwritten until published, and a link
//! over its byte limit or its queue is kicked as a slow consumer like a local one.

use super::edge_msg::{self, EdgeLine};
use super::metrics as m;
use super::wire::{self, frame_tag, KickBody, Kind, Tag};
use crate::room::{ConnLink, Kick, Unwritten};
use crate::state::AppState;
use parchis_protocol::close_code;
use std::sync::Arc;
use tokio::sync::mpsc;
use tracing::{debug, Instrument};

/// Where a remote link's frames go.
#[derive(Clone, Debug)]
pub struct EdgeAddr {
    /// `P.edge.<NODE>` of the edge node.
    pub subject: async_nats::Subject,
    /// The edge's connection id.
    pub conn: u64,
    /// The edge's attach generation.
    pub gen: u64,
}

/// Creates a remote link for `edge` in room `room` and spawns its egress task. The link's
/// id is a fresh connection id of this node. The task ends once the room forgets the
/// link (every sender dropped: it publishes `end`) or kicks it (it publishes the queued
/// frames, unless too slow, then `kick`).
pub fn remote_link(
    state: &AppState,
    client: async_nats::Client,
    room: &str,
    edge: EdgeAddr,
) -> ConnLink {
    let cfg = state.config();
    let (tx, rx) = mpsc::channel::<Arc<str>>(cfg.outbound_queue.max(1));
    let link = ConnLink {
        id: state.next_id(),
        tx,
        kick: Kick::default(),
        unwritten: Unwritten::default(),
        max_unwritten: cfg.outbound_queue_bytes,
    };
    let span = tracing::debug_span!(
        "egress",
        room,
        conn = link.id,
        edge_conn = edge.conn,
        gen = edge.gen
    );
    let egress = Egress {
        client,
        edge,
        n: 0,
        unwritten: link.unwritten.clone(),
    };
    tokio::spawn(egress.run(rx, link.kick.clone()).instrument(span));
    link
}

struct Egress {
    client: async_nats::Client,
    edge: EdgeAddr,
    n: u64,
    unwritten: Unwritten,
}

impl Egress {
    async fn run(mut self, mut rx: mpsc::Receiver<Arc<str>>, kick: Kick) {
        loop {
            tokio::select! {
                biased;
                frame = rx.recv() => match frame {
                    Some(frame) => self.frame(frame).await,
                    // Forgotten right after a kick (a replaced seat): the kick is the news.
                    None if kick.reason().is_some() => break,
                    None => {
                        self.publish(Kind::End, Tag::Other, b"").await;
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
        let body = wire::to_bytes(&KickBody { code, reason });
        self.publish(Kind::Kick, Tag::Other, &body).await;
    }

    async fn frame(&mut self, frame: Arc<str>) {
        let len = frame.len();
        let tag = frame_tag(&frame);
        self.publish(Kind::Frame, tag, frame.as_bytes()).await;
        // Published (or lost with the bus): no longer waiting.
        self.unwritten.written(len);
    }

    async fn publish(&mut self, kind: Kind, tag: Tag, body: &[u8]) {
        self.n += 1;
        let line = EdgeLine {
            conn: self.edge.conn,
            gen: self.edge.gen,
            n: self.n,
            kind,
            tag,
        };
        let msg = axum::body::Bytes::from(edge_msg::encode(&line, body));
        let subject = self.edge.subject.clone();
        match self.client.publish(subject, msg).await {
            Ok(()) => m::published(kind),
            // The edge sees the gap in the link's counter and reattaches.
            Err(e) => {
                metrics::counter!(m::PUBLISH_FAILED).increment(1);
                debug!(error = %e, "publishing to the edge failed");
            }
        }
    }
}
