//! The edge's inbound side: the node's one subscription on `P.edge.<me>` (`on_edge_message`)
//! and the owners' `moved` notices (`on_moved`). Each line of a message is judged by its
//! link's relay ([`crate::links::relay`]) and its frame queued to the socket; a gap, the owner's
//! `end` or a `moved` notice makes the connection reattach ([`super::reattach`]).

use crate::links::edge_msg::{self, EdgeLine};
use crate::links::metrics::{self as m, Relayed};
use crate::links::relay::{welcome_info, Verdict};
use crate::links::wire::{self, KickBody, Kind, Tag};
use crate::state::NodeState;
use parchis_protocol::close_code;
use parchis_room::{ConnId, Frame};
use tracing::{debug, info};

/// Handles one `P.edge.<me>` message ([`crate::links::edge_msg`]): each of its lines is judged
/// by its link's relay, in order, under one lock; the body is copied once and shared by
/// every socket it is delivered to. Links that saw a gap or their owner's `end` reattach
/// afterwards (each on its own: the others of the message go on).
pub(super) fn on_edge_message(state: &NodeState, msg: async_nats::Message) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    let Some((lines, body)) = edge_msg::decode(&msg.payload) else {
        debug!("unreadable edge message: dropped");
        return;
    };
    let Ok(text) = std::str::from_utf8(body) else {
        return;
    };
    // A reply's tag is read from the frame itself (`{"type":"ok","req":…`), once.
    let mut frame_tag = None;
    let mut shared: Option<Frame> = None;
    let mut follow: smallvec::SmallVec<[(ConnId, &'static str); 2]> = smallvec::SmallVec::new();
    let edge = &cluster.routing.edge;
    let mut conns = edge.lock();
    for line in lines {
        let EdgeLine {
            conn, gen, n, kind, ..
        } = line;
        let tag = match line.tag {
            Tag::Other if kind == Kind::Frame => {
                *frame_tag.get_or_insert_with(|| wire::frame_tag(text))
            }
            tag => tag,
        };
        let Some(e) = conns.get_mut(&conn) else {
            continue;
        };
        let relayed = m::relayed;
        let mut verdict = e.relay.on_message(gen, n, kind, tag);
        if matches!(verdict, Verdict::Kick | Verdict::End)
            && wire::is_stale(wire::notice_epoch(body), e.epoch)
        {
            // A stale owner's notice (it lost the room to a later epoch this connection
            // follows, and does not know yet): it detaches nothing.
            info!(node = %cluster.node(), room = %e.room, conn, kind = kind.as_str(), followed = e.epoch, "a stale owner's notice: ignored");
            verdict = Verdict::Stale;
        }
        match verdict {
            Verdict::Deliver => {
                if let Some(w) = welcome_info(text) {
                    if w.snapshot && e.reattach.is_none() {
                        // The attach's own welcome: its snapshot is where the client stands
                        // (a resume's `last_seq` may be beyond a rebuilt lobby's seq).
                        e.relay.reset_to(w.seq);
                    } else if w.snapshot {
                        e.relay.snapshot_at(w.seq);
                    }
                    e.reattach = Some(w.reattach);
                    if e.reattaching {
                        // A reattach waited for this welcome (a `moved` notice came first).
                        e.wake.notify_one();
                    }
                }
                if let Tag::Reply(req) = tag {
                    e.replied(req, text.starts_with(r#"{"type":"ok""#));
                }
                relayed(Relayed::Delivered);
                e.link
                    .send(shared.get_or_insert_with(|| Frame::from(text)).clone());
            }
            Verdict::Duplicate => relayed(Relayed::Duplicate),
            Verdict::Stale => relayed(Relayed::Stale),
            Verdict::Unsolicited => relayed(Relayed::Unsolicited),
            Verdict::Kick => {
                let kick: KickBody = serde_json::from_slice(body).unwrap_or(KickBody {
                    code: close_code::SERVICE_RESTART,
                    reason: "the room closed this connection".into(),
                    epoch: None,
                });
                info!(node = %cluster.node(), room = %e.room, conn, code = kick.code, "owner kicked a relayed connection");
                let waiting = e.relay.abandon();
                e.answer_unknown(&waiting, "kicked");
                e.link.kick.kick(kick.code, &kick.reason);
                conns.remove(&conn);
            }
            Verdict::End if e.leaving => {
                conns.remove(&conn);
            }
            Verdict::End => follow.push((conn, "end")),
            Verdict::Gap => {
                metrics::counter!(m::EDGE_GAPS).increment(1);
                info!(node = %cluster.node(), room = %e.room, conn, n, "gap in a relayed stream: reattaching");
                follow.push((conn, "gap"));
            }
        }
    }
    drop(conns);
    for (conn, cause) in follow {
        super::reattach::start_reattach(state, conn, cause);
    }
}

/// Reattaches every relayed connection of `room` (a `moved` notice of `owner` at lease
/// `epoch`; a notice older than one already followed is ignored).
pub(super) fn on_moved(state: &NodeState, room: &str, owner: &str, epoch: i64) {
    let Some(cluster) = state.cluster() else {
        return;
    };
    for conn in cluster.routing.edge.moved(room, owner, epoch) {
        super::reattach::start_reattach(state, conn, "moved");
    }
}
