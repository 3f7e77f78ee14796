//! The socket's writer: drains the connection's bounded outbound queue in batches, pings,
//! drops a connection whose frames are not written within the write timeout (4001), and
//! sends `closing` and the close frame when the connection is kicked.
//!
//! A queued [`Frame`] becomes the WebSocket message without a copy ([`text`]): the text
//! message holds the frame's shared buffer, the one every other recipient's message holds.

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::SinkExt;
use parchis_protocol::{close_code, ServerMessage};
use parchis_room::{encode, Frame, Kick, Unwritten};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::debug;

/// Frames already queued for a connection are written to its socket together, up to about
/// this many bytes per write (tungstenite writes through once its buffer passes it).
pub(super) const WRITE_BATCH_BYTES: usize = 16 * 1024;
/// At most this many queued frames are coalesced before a flush.
const WRITE_BATCH_FRAMES: usize = 64;

/// Writes the queued frames of one connection to its socket until it is kicked.
pub(super) async fn writer(
    mut sink: futures_util::stream::SplitSink<WebSocket, Message>,
    mut rx: mpsc::Receiver<Frame>,
    kick: Kick,
    timeouts: crate::config::Timeouts,
    unwritten: Unwritten,
) {
    let mut ping = tokio::time::interval_at(
        Instant::now() + timeouts.ping_interval,
        timeouts.ping_interval,
    );
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let msg = tokio::select! {
            biased;
            _ = kick.kicked() => break,
            m = rx.recv() => m,
            _ = ping.tick() => None,
        };
        let batch = async {
            match msg {
                Some(first) => {
                    parchis_telemetry::observe::outbound_depth(rx.len() + 1);
                    send_batch(&mut sink, first, &mut rx, &unwritten).await
                }
                None if rx.is_closed() && rx.is_empty() => Err(None),
                None => sink
                    .send(Message::Ping(Default::default()))
                    .await
                    .map_err(Some),
            }
        };
        let sent = tokio::select! {
            biased;
            _ = kick.kicked() => break,
            r = tokio::time::timeout(timeouts.write, batch) => r,
        };
        match sent {
            Ok(Ok(())) => {}
            Ok(Err(None)) => break,
            Ok(Err(Some(_))) => return,
            Err(_) => {
                debug!("a frame was not written within the write timeout: dropping");
                kick.kick(
                    close_code::SLOW_CONSUMER,
                    "frames not read within the write timeout",
                );
                return;
            }
        }
    }
    let Some((code, reason)) = kick.reason() else {
        return;
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        if code != close_code::SLOW_CONSUMER {
            while let Ok(m) = rx.try_recv() {
                sink.send(text(&m)).await?;
            }
        }
        if code != close_code::NORMAL {
            let closing = encode(&ServerMessage::Closing {
                code,
                reason: reason.clone(),
            });
            sink.send(text(&closing)).await?;
        }
        sink.send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await
    })
    .await;
}

/// The text message of `frame`, holding the frame's own buffer (a reference count, no
/// copy; every recipient's message of one frame holds the same bytes). axum builds its
/// `Utf8Bytes` from `Bytes` only through a UTF-8 check (the workspace forbids `unsafe`),
/// so each socket reads the frame's bytes once more to check them (no allocation); the
/// check cannot fail (a [`Frame`] is text), and would fall back to a copy.
pub(super) fn text(frame: &Frame) -> Message {
    match Utf8Bytes::try_from(frame.bytes()) {
        Ok(shared) => Message::Text(shared),
        Err(_) => Message::Text(frame.as_str().into()),
    }
}

/// Writes `first` and every frame already queued behind it (up to
/// [`WRITE_BATCH_FRAMES`]), then flushes once: the events, `ok` and `your_turn` that one
/// action produces reach the socket in one write instead of one write each.
async fn send_batch(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    first: Frame,
    rx: &mut mpsc::Receiver<Frame>,
    unwritten: &Unwritten,
) -> Result<(), Option<axum::Error>> {
    send_frames(sink, first, rx, unwritten).await.map_err(Some)
}

async fn send_frames(
    sink: &mut futures_util::stream::SplitSink<WebSocket, Message>,
    first: Frame,
    rx: &mut mpsc::Receiver<Frame>,
    unwritten: &Unwritten,
) -> Result<(), axum::Error> {
    let mut bytes = first.len();
    sink.feed(text(&first)).await?;
    for _ in 1..WRITE_BATCH_FRAMES {
        match rx.try_recv() {
            Ok(m) => {
                bytes += m.len();
                sink.feed(text(&m)).await?
            }
            Err(_) => break,
        }
    }
    let flushed = sink.flush().await;
    // Written to the socket (or lost with it): no longer waiting.
    unwritten.written(bytes);
    flushed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_socket_s_message_of_a_frame_holds_the_frame_s_own_bytes() {
        let frame = encode(&ServerMessage::Ok { req: 7, seq: 12 });
        // Two recipients' queues hold clones of the one frame.
        let (a, b) = (frame.clone(), frame.clone());
        let (Message::Text(ta), Message::Text(tb)) = (text(&a), text(&b)) else {
            panic!("not text messages");
        };
        assert_eq!(ta.as_str(), r#"{"type":"ok","req":7,"seq":12}"#);
        assert_eq!(ta, tb);
        // No copy: both messages point at the buffer the frame was serialised into.
        let (ba, bb) = (axum::body::Bytes::from(ta), axum::body::Bytes::from(tb));
        assert_eq!(ba.as_ptr(), frame.as_str().as_ptr());
        assert_eq!(bb.as_ptr(), frame.as_str().as_ptr());
    }
}
