//! The edge's per-connection relay state (`docs/CLUSTER.md`, "Routing: relayed
//! connections") as a pure state machine fed header values: which attach generation is
//! current, the next expected link counter (`n`, [`super::edge_msg`]), the last event `seq` and `your_turn` seq
//! delivered. A gap in `N` breaks the relay until the connection reattaches; an event (or
//! `your_turn`) the client already has is dropped, so it never sees one twice.
//!
//! It also keeps the commands forwarded to the owner and not answered yet, so that each
//! gets exactly one reply: the owner's `ok`/`error` when it comes on the link the command
//! was sent on; otherwise the edge's own `room_unavailable` when that link is given up (a
//! reattach starts a new generation: the old link's late frames are ignored), the
//! forwarding fails, or no reply came within the reply window. Whichever comes first
//! answers; a later one is dropped.

use super::wire::{Kind, Tag};
use parchis_engine::Colour;
use parchis_room::Reattach;
use std::collections::BTreeMap;

/// What to do with one `P.edge` message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Give the frame to the client.
    Deliver,
    /// An event or `your_turn` the client already has: drop it.
    Duplicate,
    /// From an older attach (or while broken): ignore it.
    Stale,
    /// A message is missing before this one: reattach (this one is not delivered).
    Gap,
    /// The owner closes the client's socket.
    Kick,
    /// The owner forgot the link.
    End,
    /// A reply (`ok`/`error`) to a command the edge no longer waits for (it answered
    /// it already): dropped, so no command gets two replies.
    Unsolicited,
}

/// What a relayed connection does when something says its link is gone (a gap, the
/// owner's `end`, a `moved` notice, a rehome).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    /// Reattach to whoever owns the room now.
    Reattach,
    /// Its attach's `welcome` has not been relayed yet (the edge does not know what it is
    /// in the room): wait for it on the current link, then reattach.
    AwaitWelcome,
    /// The link broke before its `welcome` came: it cannot be continued (the client
    /// resumes by itself).
    GiveUp,
}

/// Decides [`Follow`] from whether the connection's role is known (its `welcome` was
/// relayed, or it was rehomed) and whether its current link is broken.
pub fn follow(known: bool, broken: bool) -> Follow {
    match (known, broken) {
        (true, _) => Follow::Reattach,
        (false, false) => Follow::AwaitWelcome,
        (false, true) => Follow::GiveUp,
    }
}

/// One relayed connection's stream position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relay {
    gen: u64,
    next_n: u64,
    last_seq: u64,
    last_turn: Option<u64>,
    broken: bool,
    /// Commands forwarded and not answered yet: `req` → when it was sent (unix ms).
    waiting: BTreeMap<u64, i64>,
}

impl Relay {
    /// A relay for attach generation `gen`, the client having every event up to
    /// `last_seq`.
    pub fn new(gen: u64, last_seq: u64) -> Relay {
        Relay {
            gen,
            next_n: 1,
            last_seq,
            last_turn: None,
            broken: false,
            waiting: BTreeMap::new(),
        }
    }

    /// The current generation.
    pub fn gen(&self) -> u64 {
        self.gen
    }

    /// The last event seq the client has.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Whether a gap was seen and no reattach started since.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// Judges message `n` of generation `gen`, of `kind`, whose frame has `tag`.
    pub fn on_message(&mut self, gen: u64, n: u64, kind: Kind, tag: Tag) -> Verdict {
        if gen != self.gen || self.broken {
            return Verdict::Stale;
        }
        if n != self.next_n {
            self.broken = true;
            return Verdict::Gap;
        }
        self.next_n += 1;
        match kind {
            Kind::Kick => return Verdict::Kick,
            Kind::End => return Verdict::End,
            Kind::Frame => {}
        }
        match tag {
            Tag::Event(seq) if seq <= self.last_seq => Verdict::Duplicate,
            Tag::Event(seq) => {
                self.last_seq = seq;
                Verdict::Deliver
            }
            Tag::Turn(seq) if self.last_turn.is_some_and(|t| seq <= t) => Verdict::Duplicate,
            Tag::Turn(seq) => {
                self.last_turn = Some(seq);
                Verdict::Deliver
            }
            Tag::Reply(req) if self.waiting.remove(&req).is_some() => Verdict::Deliver,
            Tag::Reply(_) => Verdict::Unsolicited,
            Tag::Other => Verdict::Deliver,
        }
    }

    /// Command `req` is about to be forwarded on the current link, at `now` (unix ms).
    pub fn sent(&mut self, req: u64, now: i64) {
        self.waiting.insert(req, now);
    }

    /// Whether command `req` still waits for its reply.
    pub fn waits(&self, req: u64) -> bool {
        self.waiting.contains_key(&req)
    }

    /// The commands sent `window_ms` or longer before `now` and still unanswered: no
    /// longer waited for (the edge answers them). The owner answers a command it took
    /// within milliseconds; one silent that long is gone with its owner.
    pub fn overdue(&mut self, now: i64, window_ms: i64) -> Vec<u64> {
        let late: Vec<u64> = self
            .waiting
            .iter()
            .filter(|(_, at)| now - **at >= window_ms)
            .map(|(req, _)| *req)
            .collect();
        for req in &late {
            self.waiting.remove(req);
        }
        late
    }

    /// The edge answers command `req` itself (the forwarding failed, or no reply came in
    /// time): `true` if it still waited for one (answer it now), `false` if it was
    /// answered already.
    pub fn claim(&mut self, req: u64) -> bool {
        self.waiting.remove(&req).is_some()
    }

    /// A delivered `welcome` whose snapshot covers the room up to `seq`: those events are
    /// the client's (a `welcome` without a snapshot is followed by the missed events).
    pub fn snapshot_at(&mut self, seq: u64) {
        self.last_seq = self.last_seq.max(seq);
    }

    /// The first `welcome` of an attach carries a snapshot up to `seq`: the client has
    /// exactly those events, whatever it claimed before (unlike [`Relay::snapshot_at`]).
    pub fn reset_to(&mut self, seq: u64) {
        self.last_seq = seq;
    }

    /// Starts a reattach: a new generation whose link counts from 1. Returns it, and the
    /// commands that waited for a reply on the old link: nothing more comes from it, so
    /// the edge answers them `room_unavailable`. The owner then sends `your_turn` again if
    /// it is the player's turn, and it is delivered even at a seq the client had one for
    /// (as on `resume`): a command sent just before may have been lost with the old
    /// owner, and the player must be asked again.
    pub fn restart(&mut self) -> (u64, Vec<u64>) {
        self.gen += 1;
        self.next_n = 1;
        self.broken = false;
        self.last_turn = None;
        let orphans = std::mem::take(&mut self.waiting).into_keys().collect();
        (self.gen, orphans)
    }

    /// The commands still waiting for a reply (the connection is closed: they are
    /// answered before the socket is).
    pub fn abandon(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.waiting).into_keys().collect()
    }
}

/// What a relayed `welcome` says about the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WelcomeInfo {
    /// The room's seq.
    pub seq: u64,
    /// It carries a snapshot (the client has the room up to `seq`).
    pub snapshot: bool,
    /// What the connection is.
    pub reattach: Reattach,
}

/// Reads a `welcome` frame (`None` for any other frame).
pub fn welcome_info(frame: &str) -> Option<WelcomeInfo> {
    if !frame.starts_with(r#"{"type":"welcome""#) {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct W {
        seq: u64,
        role: parchis_protocol::Role,
        colour: Option<Colour>,
        snapshot: Option<serde::de::IgnoredAny>,
    }
    let w: W = serde_json::from_str(frame).ok()?;
    let reattach = match (w.role, w.colour) {
        (parchis_protocol::Role::Player, Some(c)) => Reattach::Player(c),
        _ => Reattach::Spectator,
    };
    Some(WelcomeInfo {
        seq: w.seq,
        snapshot: w.snapshot.is_some(),
        reattach,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_in_order_are_delivered_and_events_tracked() {
        let mut r = Relay::new(1, 0);
        assert_eq!(
            r.on_message(1, 1, Kind::Frame, Tag::Other),
            Verdict::Deliver
        );
        assert_eq!(
            r.on_message(1, 2, Kind::Frame, Tag::Event(5)),
            Verdict::Deliver
        );
        assert_eq!(
            r.on_message(1, 3, Kind::Frame, Tag::Turn(5)),
            Verdict::Deliver
        );
        assert_eq!(r.last_seq(), 5);
        assert_eq!(r.on_message(1, 4, Kind::Kick, Tag::Other), Verdict::Kick);
        assert_eq!(r.on_message(1, 5, Kind::End, Tag::Other), Verdict::End);
    }

    #[test]
    fn a_gap_breaks_the_relay_until_a_reattach_starts_a_new_generation() {
        let mut r = Relay::new(1, 10);
        assert_eq!(
            r.on_message(1, 1, Kind::Frame, Tag::Event(11)),
            Verdict::Deliver
        );
        // Message 2 was lost.
        assert_eq!(
            r.on_message(1, 3, Kind::Frame, Tag::Event(13)),
            Verdict::Gap
        );
        assert!(r.is_broken());
        assert_eq!(r.last_seq(), 11, "nothing after the gap counts");
        assert_eq!(
            r.on_message(1, 4, Kind::Frame, Tag::Event(14)),
            Verdict::Stale
        );
        assert_eq!(r.restart(), (2, vec![]));
        assert!(!r.is_broken());
        // The old link's late frames are ignored; the new one counts from 1.
        assert_eq!(
            r.on_message(1, 5, Kind::Frame, Tag::Event(15)),
            Verdict::Stale
        );
        assert_eq!(
            r.on_message(2, 1, Kind::Frame, Tag::Event(12)),
            Verdict::Deliver
        );
        assert_eq!(
            r.on_message(2, 2, Kind::Frame, Tag::Event(13)),
            Verdict::Deliver
        );
        assert_eq!(r.last_seq(), 13);
        // your_turn is asked again after a reattach, even at the same seq.
        let turn = |r: &mut Relay, gen, n| r.on_message(gen, n, Kind::Frame, Tag::Turn(13));
        assert_eq!(turn(&mut r, 2, 3), Verdict::Deliver);
        r.restart();
        assert_eq!(turn(&mut r, 3, 1), Verdict::Deliver);
        assert_eq!(turn(&mut r, 3, 2), Verdict::Duplicate);
    }

    #[test]
    fn events_and_turns_the_client_has_are_dropped() {
        let mut r = Relay::new(3, 20);
        assert_eq!(
            r.on_message(3, 1, Kind::Frame, Tag::Event(19)),
            Verdict::Duplicate
        );
        assert_eq!(
            r.on_message(3, 2, Kind::Frame, Tag::Event(20)),
            Verdict::Duplicate
        );
        assert_eq!(
            r.on_message(3, 3, Kind::Frame, Tag::Event(21)),
            Verdict::Deliver
        );
        assert_eq!(
            r.on_message(3, 4, Kind::Frame, Tag::Turn(21)),
            Verdict::Deliver
        );
        assert_eq!(
            r.on_message(3, 5, Kind::Frame, Tag::Turn(21)),
            Verdict::Duplicate
        );
        assert_eq!(
            r.on_message(3, 6, Kind::Frame, Tag::Event(22)),
            Verdict::Deliver
        );
        assert_eq!(
            r.on_message(3, 7, Kind::Frame, Tag::Turn(22)),
            Verdict::Deliver
        );
        // A duplicate still counts as received: no gap after it.
        assert_eq!(
            r.on_message(3, 8, Kind::Frame, Tag::Other),
            Verdict::Deliver
        );
    }

    #[test]
    fn an_attach_snapshot_sets_the_baseline_even_below_a_resume_claim() {
        // A resume claiming seq 50 of a lobby rebuilt at seq 3: its snapshot says 3.
        let mut r = Relay::new(1, 50);
        r.reset_to(3);
        assert_eq!(
            r.on_message(1, 1, Kind::Frame, Tag::Event(4)),
            Verdict::Deliver
        );
        assert_eq!(r.last_seq(), 4);
    }

    #[test]
    fn a_snapshot_moves_the_baseline_and_a_replayed_welcome_does_not() {
        let mut r = Relay::new(1, 0);
        r.snapshot_at(40);
        assert_eq!(
            r.on_message(1, 1, Kind::Frame, Tag::Event(40)),
            Verdict::Duplicate
        );
        assert_eq!(
            r.on_message(1, 2, Kind::Frame, Tag::Event(41)),
            Verdict::Deliver
        );
        r.snapshot_at(30);
        assert_eq!(r.last_seq(), 41, "never backwards");
    }

    #[test]
    fn welcomes_say_what_the_connection_is() {
        let w = welcome_info(
            r#"{"type":"welcome","req":1,"room":"AB","role":"player","colour":"red","token":null,"seq":44,"snapshot":null}"#,
        );
        assert_eq!(
            w,
            Some(WelcomeInfo {
                seq: 44,
                snapshot: false,
                reattach: Reattach::Player(Colour::Red)
            })
        );
        let w = welcome_info(
            r#"{"type":"welcome","req":1,"room":"AB","role":"spectator","colour":null,"token":null,"seq":3,"snapshot":{"code":"AB","seats":[]}}"#,
        );
        assert_eq!(
            w,
            Some(WelcomeInfo {
                seq: 3,
                snapshot: true,
                reattach: Reattach::Spectator
            })
        );
        assert_eq!(welcome_info(r#"{"type":"ok","req":1,"seq":3}"#), None);
        assert_eq!(welcome_info(r#"{"type":"welcome","seq":"x"}"#), None);
    }

    #[test]
    fn each_command_gets_one_reply_the_owners_or_the_edges() {
        let mut r = Relay::new(1, 0);
        let reply = |r: &mut Relay, n, req| r.on_message(1, n, Kind::Frame, Tag::Reply(req));
        r.sent(4, 1_000);
        r.sent(5, 1_000);
        r.sent(6, 1_000);
        // The owner answers 4: delivered once; a repeat of it is not.
        assert_eq!(reply(&mut r, 1, 4), Verdict::Deliver);
        assert_eq!(reply(&mut r, 2, 4), Verdict::Unsolicited);
        // The edge answers 5 itself (forwarding failed): the owner's late reply is dropped.
        assert!(r.claim(5));
        assert!(!r.claim(5), "answered once");
        assert_eq!(reply(&mut r, 3, 5), Verdict::Unsolicited);
        // A reattach gives up the old link: 6 is the edge's to answer, and the old link's
        // late reply to it is stale; a new owner's reply to it is not delivered either.
        let (gen, orphans) = r.restart();
        assert_eq!((gen, orphans), (2, vec![6]));
        assert_eq!(reply(&mut r, 4, 6), Verdict::Stale);
        assert_eq!(
            r.on_message(2, 1, Kind::Frame, Tag::Reply(6)),
            Verdict::Unsolicited
        );
        // Replies without a req (or to no command) are frames like any other.
        assert_eq!(
            r.on_message(2, 2, Kind::Frame, Tag::Other),
            Verdict::Deliver
        );
        r.sent(7, 2_000);
        assert_eq!(r.abandon(), vec![7]);
        assert!(!r.claim(7));
    }

    #[test]
    fn a_command_unanswered_for_the_whole_window_is_the_edges_to_answer() {
        let mut r = Relay::new(1, 0);
        r.sent(1, 10_000);
        r.sent(2, 15_000);
        assert_eq!(r.overdue(19_999, 10_000), Vec::<u64>::new());
        assert_eq!(r.overdue(20_000, 10_000), vec![1]);
        assert!(r.waits(2) && !r.waits(1));
        assert_eq!(
            r.on_message(1, 1, Kind::Frame, Tag::Reply(1)),
            Verdict::Unsolicited,
            "its late reply is dropped"
        );
        assert_eq!(r.overdue(25_000, 10_000), vec![2]);
    }

    #[test]
    fn a_link_given_up_before_its_welcome_waits_for_it_unless_broken() {
        assert_eq!(follow(true, false), Follow::Reattach);
        assert_eq!(follow(true, true), Follow::Reattach);
        assert_eq!(follow(false, false), Follow::AwaitWelcome);
        assert_eq!(follow(false, true), Follow::GiveUp);
    }
}
