//! The room's clocks with time as a value: every test sets `now` explicitly, none sleeps.

use super::{settings, Driver, T0};
use crate::{Member, SeatCmd};
use parchis_engine::{Colour, Event};
use parchis_protocol::{AbandonReason, RoomEvent, RoomStatus, ServerMessage};
use parchis_room_core::persist::Write;
use serde_json::json;

/// A started two-player game (Ana yellow on conn 1, Luis blue on conn 2, Ana first).
async fn two_players(extra: serde_json::Value) -> (Driver, Member, Member) {
    let mut s = json!({"preset": "online", "seats": 2, "turn_clock_secs": 30,
        "disconnect_grace_secs": 60, "timeouts_to_abandon": 3});
    if let (Some(base), Some(more)) = (s.as_object_mut(), extra.as_object()) {
        base.extend(more.clone());
    }
    let mut d = Driver::new("CLOCK1", settings(s), 7, 64);
    let ana = d.join(1, "Ana").await;
    let luis = d.join(2, "Luis").await;
    let ok = d.cmd(1, ana, 10, SeatCmd::Start).await;
    assert!(matches!(ok, ServerMessage::Ok { .. }), "{ok:?}");
    (d, ana, luis)
}

fn timed_out(d: &Driver) -> Vec<(Colour, u8)> {
    d.events(1)
        .into_iter()
        .filter_map(|(_, _, e)| match e {
            RoomEvent::Game {
                event:
                    Event::TimedOut {
                        colour,
                        consecutive,
                    },
                ..
            } => Some((colour, consecutive)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn r_clock_turn_times_out_at_the_deadline_and_not_a_millisecond_before() {
    let (mut d, _, _) = two_players(json!({})).await;
    let deadline = d.core.deadline().expect("a clock runs");
    assert_eq!(
        deadline,
        T0 + 30_000,
        "the first throw's clock is the full turn clock"
    );
    assert_eq!(
        d.wake,
        Some(deadline),
        "the room asks to be woken at the deadline"
    );
    let seq = d.core.seq();
    d.at(deadline - 1).await;
    assert_eq!(d.core.seq(), seq, "nothing happens before the deadline");
    assert!(timed_out(&d).is_empty());
    d.at(deadline).await;
    assert_eq!(timed_out(&d), vec![(Colour::Yellow, 1)]);
    // The next throw gets a fresh clock from the moment of the timeout (R-CLOCK, D-12),
    // announced by a `turn` event, and the room wakes for it.
    let next = d.core.deadline().expect("a new clock");
    assert_eq!(next, deadline + 30_000);
    assert_eq!(d.wake, Some(next));
    let turns: Vec<_> = d
        .events(2)
        .into_iter()
        .filter_map(|(_, _, e)| match e {
            RoomEvent::Turn {
                colour,
                deadline_ms,
            } => Some((colour, deadline_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(turns.last(), Some(&(Colour::Blue, next)));
    // The timeout was written before anyone heard of it.
    assert!(matches!(d.persisted.last(), Some(Write::Append { .. })));
}

#[tokio::test]
async fn r_clock_a_command_after_the_deadline_is_judged_after_the_timeout() {
    let (mut d, ana, _) = two_players(json!({})).await;
    let deadline = d.core.deadline().expect("clock");
    d.now = deadline + 5;
    // Ana's roll arrives late: the timeout is applied first and the turn has passed, so
    // it is not her turn (the documented answer, whatever seq she based it on).
    let seq = d.core.seq();
    d.input(parchis_room_core::Input::Command {
        conn: 1,
        member: ana,
        req: 11,
        seq,
        cmd: SeatCmd::Roll,
    })
    .await;
    assert_eq!(timed_out(&d), vec![(Colour::Yellow, 1)]);
    match d.answer(1, 11) {
        Some(ServerMessage::Error { code, .. }) => {
            assert_eq!(code, parchis_protocol::ErrorCode::NotYourTurn)
        }
        other => panic!("expected not_your_turn, got {other:?}"),
    }
}

#[tokio::test]
async fn r_clock_strikes_in_a_row_abandon_the_seat() {
    let (mut d, _, _) = two_players(json!({"timeouts_to_abandon": 2})).await;
    // Nobody plays: the clocks run out one after the other.
    for _ in 0..4 {
        if d.core.status() != RoomStatus::Playing {
            break;
        }
        let t = d.core.deadline().expect("clock");
        d.at(t).await;
    }
    // Yellow, who started, reaches two timeouts in a row first and abandons (R-LEAVE);
    // with one player left the game is over, stored in one transaction.
    assert_eq!(
        timed_out(&d),
        vec![(Colour::Yellow, 1), (Colour::Blue, 1), (Colour::Yellow, 2)]
    );
    let abandoned: Vec<_> = d
        .events(2)
        .into_iter()
        .filter_map(|(_, _, e)| match e {
            RoomEvent::Abandoned { colour, reason } => Some((colour, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(abandoned, vec![(Colour::Yellow, AbandonReason::Timeouts)]);
    assert_eq!(d.core.status(), RoomStatus::Finished);
    assert_eq!(d.core.deadline(), None);
    assert_eq!(d.wake, None, "a finished room has nothing to wake for");
    match d.persisted.last() {
        Some(Write::End(end)) => {
            assert_eq!(end.reason, "abandoned");
            // A packed game: its final events are the end's piece, with no JSON row.
            assert!(end.events.is_empty(), "no JSON rows: {:?}", end.events);
            let piece = end.log.as_ref().expect("the end carries its piece");
            assert_eq!(piece.first_seq, end.after_seq + 1);
            assert_eq!(piece.last_seq as u64, d.core.seq());
        }
        other => panic!("the game's end is one write, got {other:?}"),
    }
}

#[tokio::test]
async fn r_leave_grace_expiry_abandons_a_disconnected_player_exactly_at_its_end() {
    let (mut d, _, _) = two_players(json!({"turn_clock_secs": 600})).await;
    d.now = T0 + 1_000;
    d.input(parchis_room_core::Input::Detach { conn: 2 }).await;
    let grace_end = T0 + 1_000 + 60_000;
    assert_eq!(
        d.wake,
        Some(grace_end),
        "the grace period ends before the clock"
    );
    d.at(grace_end - 1).await;
    assert_eq!(d.core.status(), RoomStatus::Playing);
    d.at(grace_end).await;
    let abandoned = d.events(1).into_iter().any(|(_, _, e)| {
        e == RoomEvent::Abandoned {
            colour: Colour::Blue,
            reason: AbandonReason::Disconnected,
        }
    });
    assert!(abandoned, "blue abandoned when its grace period ended");
    assert_eq!(d.core.status(), RoomStatus::Finished);
}

#[tokio::test]
async fn r_leave_a_player_back_within_the_grace_period_keeps_the_seat() {
    let (mut d, _, _) = two_players(json!({"turn_clock_secs": 600})).await;
    d.now = T0 + 1_000;
    d.input(parchis_room_core::Input::Detach { conn: 2 }).await;
    d.now = T0 + 60_000;
    d.input(parchis_room_core::Input::Resume {
        conn: 3,
        req: 1,
        token: "token-2".into(),
        account: None,
        last_seq: 0,
    })
    .await;
    assert!(matches!(d.replies.pop(), Some(Ok(Member::Player(_)))));
    assert_eq!(
        d.wake,
        d.core.deadline(),
        "no grace period is pending any more"
    );
    d.at(T0 + 61_000).await;
    assert_eq!(d.core.status(), RoomStatus::Playing);
}

#[tokio::test]
async fn bots_act_after_their_think_time_and_search_off_the_room() {
    let mut d = Driver::new(
        "BOTS01",
        settings(json!({"preset": "online", "seats": 2, "bots": "greedy",
            "bot_think_ms": 500, "turn_clock_secs": 30})),
        11,
        64,
    );
    let ana = d.join(1, "Ana").await;
    assert!(matches!(
        d.cmd(1, ana, 10, SeatCmd::Start).await,
        ServerMessage::Ok { .. }
    ));
    assert_eq!(d.core.seats().len(), 2, "a bot took the free seat");
    // Ana starts; her clock runs out, then it is the bot's turn.
    let t = d.core.deadline().expect("clock");
    d.at(t).await;
    assert_eq!(d.core.game().map(|g| g.turn()), Some(Colour::Blue));
    assert_eq!(d.wake, Some(t + 500), "the bot acts after its think time");
    let seq = d.core.seq();
    d.at(t + 499).await;
    assert_eq!(d.core.seq(), seq, "not before");
    d.at(t + 500).await;
    assert!(d.core.seq() > seq, "the bot rolled through the room's dice");
    // Its moves are searched off the room: a job, answered later.
    let mut steps = 0;
    while d.core.game().is_some_and(|g| g.turn() == Colour::Blue) && steps < 20 {
        steps += 1;
        if !d.thinking.is_empty() {
            d.think().await;
        } else if let Some(w) = d.wake {
            d.at(w).await;
        }
    }
    assert_eq!(
        d.core.game().map(|g| g.turn()),
        Some(Colour::Yellow),
        "the bot ended its turn"
    );
}

#[tokio::test]
async fn resume_replays_missed_events_inside_the_window_and_snapshots_outside_it() {
    let (mut d, ana, _) = two_players(json!({})).await;
    // A short history: 64 events kept; play a few throws.
    for req in 20..30 {
        let Some(g) = d.core.game() else { break };
        let conn = if g.turn() == Colour::Yellow { 1 } else { 2 };
        let member = if conn == 1 { ana } else { Member::Player(2) };
        let cmd = super::first_command(g);
        d.cmd(conn, member, req, cmd).await;
    }
    let seq = d.core.seq();
    assert!(d.core.can_replay(seq) && d.core.can_replay(seq - 3));
    d.input(parchis_room_core::Input::Resume {
        conn: 9,
        req: 2,
        token: "token-2".into(),
        account: None,
        last_seq: seq - 3,
    })
    .await;
    let got = d.messages(9);
    match &got[0] {
        ServerMessage::Welcome { snapshot, .. } => assert!(snapshot.is_none()),
        other => panic!("welcome first, got {other:?}"),
    }
    let missed: Vec<u64> = d.events(9).iter().map(|e| e.0).collect();
    assert_eq!(
        missed,
        vec![seq - 2, seq - 1, seq],
        "exactly the missed events"
    );
    // Ahead of the room, or older than the history: a snapshot instead.
    assert!(!d.core.can_replay(seq + 1));
    let mut small = Driver::new("SMALL1", settings(json!({"seats": 2})), 3, 2);
    let ana = small.join(1, "Ana").await;
    small.join(2, "Luis").await;
    let ok = small
        .cmd(1, ana, 5, SeatCmd::ChooseColour(Colour::Green))
        .await;
    assert!(matches!(ok, ServerMessage::Ok { seq: 3, .. }), "{ok:?}");
    assert!(small.core.can_replay(1), "events 2 and 3 are kept");
    assert!(
        !small.core.can_replay(0),
        "event 1 fell out of a 2-event history"
    );
}

/// The one order of refusals (proto/README.md, issue 25): an expired clock is applied
/// first, then `not_your_turn` for a roll or play from a player whose turn it is not,
/// whatever its seq (stale or ahead), and only then `stale_seq`.
#[tokio::test]
async fn not_your_turn_comes_before_stale_seq_whatever_the_seq() {
    let (mut d, ana, luis) = two_players(json!({})).await;
    let code_of = |m: &ServerMessage| match m {
        ServerMessage::Error { code, .. } => Some(*code),
        _ => None,
    };
    let seq = d.core.seq();
    for (req, sent_seq) in [(20, seq - 1), (21, seq + 5), (22, seq)] {
        d.input(parchis_room_core::Input::Command {
            conn: 2,
            member: luis,
            req,
            seq: sent_seq,
            cmd: SeatCmd::Roll,
        })
        .await;
        let answer = d.answer(2, req).expect("answered");
        assert_eq!(
            code_of(&answer),
            Some(parchis_protocol::ErrorCode::NotYourTurn),
            "Luis, seq {sent_seq} (room at {seq}): {answer:?}"
        );
    }
    // Ana, whose turn it is, with a stale seq: `stale_seq`.
    d.input(parchis_room_core::Input::Command {
        conn: 1,
        member: ana,
        req: 23,
        seq: seq - 1,
        cmd: SeatCmd::Roll,
    })
    .await;
    let answer = d.answer(1, 23).expect("answered");
    assert_eq!(
        code_of(&answer),
        Some(parchis_protocol::ErrorCode::StaleSeq),
        "{answer:?}"
    );
    // After her deadline (the timer not yet run), the same stale command: her clock is
    // applied first and the turn passes, so `not_your_turn`.
    let deadline = d.core.deadline().expect("a clock runs");
    d.now = deadline + 1;
    d.input(parchis_room_core::Input::Command {
        conn: 1,
        member: ana,
        req: 24,
        seq: seq - 1,
        cmd: SeatCmd::Roll,
    })
    .await;
    let answer = d.answer(1, 24).expect("answered");
    assert_eq!(
        code_of(&answer),
        Some(parchis_protocol::ErrorCode::NotYourTurn),
        "{answer:?}"
    );
    assert!(d.core.seq() > seq, "the timeout was applied");
}
