//! The owner's publisher for one edge node (`docs/CLUSTER.md`, "Routing: relayed
//! connections"): every remote link of this node whose socket is on edge node `E` hands
//! its messages, numbered and in its order, to `E`'s publisher ([`Publishers`]), which
//! publishes them to `P.edge.E`, one NATS message per frame *and edge node* rather than
//! per socket: the same frame (the same shared buffer, [`Frame::ptr_eq`], as the room's
//! broadcast sends one to every link) for several links goes once, with one line per link
//! ([`super::edge_msg::encode_many`]).
//!
//! What stays per link: the counter `n` and the order (each link's egress task is the one
//! producer of its items, the queue is FIFO, and [`plan`] never moves an item past another
//! of its own link), the unwritten bytes (released only once the item's message was
//! published, so a slow bus still makes a link a slow consumer), and the loss of a
//! message: every link it carried sees a gap and reattaches. Replies, kicks and `end`s are
//! never grouped.

use super::edge_msg::{self, EdgeLine};
use super::metrics as m;

use parchis_room::{Frame, Unwritten};
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::mpsc;
use tracing::{debug, Instrument};

/// Items one [`mpsc::Receiver::recv_many`] takes at most (and the most one message can
/// group).
const BATCH: usize = 256;
/// Items waiting for a publisher at most; a link's egress then waits (its own queue fills
/// and the room kicks it as a slow consumer).
const QUEUE: usize = 4096;
/// How many messages back an item looks for its frame's message ([`plan`]).
const LOOK_BACK: usize = 16;

/// One message of one remote link, numbered by its egress task.
#[derive(Debug)]
pub struct Item {
    /// Its line (connection, generation, counter, kind, tag).
    pub line: EdgeLine,
    /// The body: the room's frame, a kick's body or an `end`'s (the owner's epoch).
    pub body: Frame,
    /// It may share a message with other links' items of the same body (a frame that is
    /// not a reply).
    pub groupable: bool,
    /// The link's unwritten bytes, to release by `body.len()` once published (frames
    /// only).
    pub unwritten: Option<Unwritten>,
}

/// Which items go in which message, in publishing order (indices into `items`, each
/// message's in their queue order). An item joins the latest message before it whose body
/// is the same frame ([`Frame::ptr_eq`], both groupable) unless a message after that one holds an item of
/// its own link (it would overtake it); otherwise it starts a message. Looks at most
/// `LOOK_BACK` messages back. Pure.
pub fn plan(items: &[Item]) -> Vec<Vec<usize>> {
    let mut messages: Vec<Vec<usize>> = Vec::new();
    'items: for (i, item) in items.iter().enumerate() {
        if item.groupable {
            for msg in messages.iter_mut().rev().take(LOOK_BACK) {
                let first = &items[msg[0]];
                if first.groupable && Frame::ptr_eq(&first.body, &item.body) {
                    msg.push(i);
                    continue 'items;
                }
                if msg.iter().any(|&j| items[j].line.conn == item.line.conn) {
                    break;
                }
            }
        }
        messages.push(vec![i]);
    }
    messages
}

/// This node's publishers, by edge subject (`P.edge.<NODE>`). A publisher lives while a
/// remote link to its edge node does (the registry keeps a weak sender).
#[derive(Default)]
pub struct Publishers {
    by_edge: Mutex<HashMap<String, mpsc::WeakSender<Item>>>,
}

impl std::fmt::Debug for Publishers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publishers").finish_non_exhaustive()
    }
}

impl Publishers {
    /// The queue of the publisher to `subject`, spawned now on `client` if none runs.
    pub fn sender(&self, client: &async_nats::Client, subject: &str) -> mpsc::Sender<Item> {
        let mut by_edge = self.by_edge.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(tx) = by_edge.get(subject).and_then(mpsc::WeakSender::upgrade) {
            return tx;
        }
        let (tx, rx) = mpsc::channel(QUEUE);
        by_edge.retain(|_, weak| weak.strong_count() > 0);
        by_edge.insert(subject.to_owned(), tx.downgrade());
        let span = tracing::debug_span!("edge_publisher", edge = subject);
        tokio::spawn(run(client.clone(), subject.into(), rx).instrument(span));
        tx
    }
}

/// Publishes the items of `rx` to `subject` until every sender is gone.
async fn run(
    client: async_nats::Client,
    subject: async_nats::Subject,
    mut rx: mpsc::Receiver<Item>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while rx.recv_many(&mut batch, BATCH).await > 0 {
        // The room queued one frame for several links at once: let their egress tasks,
        // woken with this one, hand it over too, so it goes out once.
        tokio::task::yield_now().await;
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(item) => batch.push(item),
                Err(_) => break,
            }
        }
        for msg in plan(&batch) {
            publish(&client, &subject, &batch, &msg).await;
        }
        batch.clear();
    }
}

/// Publishes the items `msg` of `items` as one message, then releases their bytes.
async fn publish(
    client: &async_nats::Client,
    subject: &async_nats::Subject,
    items: &[Item],
    msg: &[usize],
) {
    let body = &items[msg[0]].body;
    let payload = if let [one] = msg {
        edge_msg::encode(&items[*one].line, body.as_bytes())
    } else {
        let lines: edge_msg::Lines = msg.iter().map(|&i| items[i].line).collect();
        edge_msg::encode_many(&lines, body.as_bytes())
    };
    match client.publish(subject.clone(), payload.into()).await {
        Ok(()) => {
            m::edge_message();
            for &i in msg {
                m::published(items[i].line.kind);
            }
        }
        // Each edge link it carried sees the gap in its counter and reattaches.
        Err(e) => {
            metrics::counter!(m::PUBLISH_FAILED).increment(1);
            debug!(error = %e, lines = msg.len(), "publishing to the edge failed");
        }
    }
    // Published (or lost with the bus): no longer waiting.
    for &i in msg {
        if let Some(unwritten) = &items[i].unwritten {
            unwritten.written(items[i].body.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::links::wire::{Kind, Tag};

    fn item(conn: u64, body: &Frame, groupable: bool) -> Item {
        Item {
            line: EdgeLine {
                conn,
                gen: 1,
                n: 1,
                kind: Kind::Frame,
                tag: Tag::Other,
            },
            body: body.clone(),
            groupable,
            unwritten: None,
        }
    }

    #[test]
    fn one_frame_for_several_links_is_one_message() {
        let e: Frame = Frame::from(r#"{"type":"event"}"#);
        let items = [item(1, &e, true), item(2, &e, true), item(3, &e, true)];
        assert_eq!(plan(&items), vec![vec![0, 1, 2]]);
        // An equal frame serialised again (another buffer) is another message.
        let copy: Frame = Frame::from(r#"{"type":"event"}"#);
        let items = [item(1, &e, true), item(2, &copy, true)];
        assert_eq!(plan(&items), vec![vec![0], vec![1]]);
    }

    #[test]
    fn an_item_joins_its_frame_past_other_links_but_never_past_its_own() {
        let (e, turn, ok, next) = (
            Frame::from("{e}"),
            Frame::from("{t}"),
            Frame::from("{ok}"),
            Frame::from("{e2}"),
        );
        // Link 1 handed over its event, its your_turn and its reply before links 2 and 3
        // handed over the event: they join the event's message (links 2 and 3 have
        // nothing in between), the reply stays alone.
        let items = [
            item(1, &e, true),
            item(1, &turn, true),
            item(1, &ok, false),
            item(2, &e, true),
            item(3, &e, true),
        ];
        assert_eq!(plan(&items), vec![vec![0, 3, 4], vec![1], vec![2]]);
        // Link 2's next event cannot join a message before link 2's own earlier one.
        let items = [
            item(1, &e, true),
            item(2, &next, true),
            item(2, &e, true),
            item(3, &next, true),
        ];
        assert_eq!(plan(&items), vec![vec![0], vec![1, 3], vec![2]]);
    }

    #[test]
    fn replies_kicks_and_ends_are_never_grouped() {
        let r: Frame = Frame::from(r#"{"type":"ok","req":1}"#);
        let items = [item(1, &r, false), item(2, &r, false)];
        assert_eq!(plan(&items), vec![vec![0], vec![1]]);
        let e: Frame = Frame::from("{e}");
        let items = [item(1, &e, true), item(2, &e, false), item(3, &e, true)];
        assert_eq!(plan(&items), vec![vec![0, 2], vec![1]]);
    }

    #[test]
    fn within_a_message_and_across_messages_each_links_order_is_kept() {
        let bodies: Vec<Frame> = (0..5).map(|i| Frame::from(format!("{{{i}}}"))).collect();
        // Three links each handed over bodies 0..5 in order, interleaved differently.
        let order = [
            (1, 0),
            (1, 1),
            (2, 0),
            (1, 2),
            (3, 0),
            (2, 1),
            (3, 1),
            (3, 2),
            (2, 2),
            (1, 3),
            (3, 3),
            (3, 4),
            (2, 3),
            (1, 4),
            (2, 4),
        ];
        let items: Vec<Item> = order
            .iter()
            .map(|&(conn, b)| item(conn, &bodies[b], true))
            .collect();
        let messages = plan(&items);
        let flat: Vec<usize> = messages.iter().flatten().copied().collect();
        let mut sorted = flat.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            (0..items.len()).collect::<Vec<_>>(),
            "each item once"
        );
        for conn in 1..=3 {
            let seen: Vec<usize> = flat
                .iter()
                .copied()
                .filter(|&i| order[i].0 == conn)
                .collect();
            let mut queued = seen.clone();
            queued.sort_unstable();
            assert_eq!(seen, queued, "link {conn} in its order");
        }
        for msg in &messages {
            assert!(msg
                .iter()
                .all(|&i| Frame::ptr_eq(&items[i].body, &items[msg[0]].body)));
        }
        assert_eq!(
            messages,
            vec![
                vec![0, 2, 4],
                vec![1, 5, 6],
                vec![3, 7, 8],
                vec![9, 10, 12],
                vec![11, 13, 14]
            ],
            "one message per body"
        );
    }
}
