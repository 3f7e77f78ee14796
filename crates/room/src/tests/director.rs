//! A tournament director's room (issue 27): reserved seats claimed by their key, the
//! director's start (bots seated, absent colours left empty, retried safely), the
//! referee's pause (kept over a rebuild from the store), resume and expulsion, and the
//! spectator delay: a spectator never sees an event before N more throws were made, and
//! sees the whole game at its end.
//!
//! Over 600 lines: one scenario per test, each a director's room driven step by step
//! with its checks in order; the quick pairing's start at the last claim joined them.

use super::history::rebuilt;
use super::{first_command, settings, Driver, FaultyStore};
use crate::{Member, Refusal};
use parchis_engine::{Colour, SeatStatus};
use parchis_protocol::{AbandonReason, BotLevel, ErrorCode, RoomEvent, RoomStatus, ServerMessage};
use parchis_room_core::delay::is_throw;
use parchis_room_core::reserved::{DirectorAnswer, DirectorCmd, DirectorRoom, Reservation};
use parchis_room_core::Input;
use serde_json::json;
use std::sync::Arc;

const WATCHER: u64 = 99;
const DELAY: u8 = 3;

fn person(colour: Colour, key: &str) -> Reservation {
    Reservation {
        colour,
        reserved_for: key.into(),
        name: format!("Player {key}"),
        bot: None,
        rating: None,
    }
}

fn bot(colour: Colour) -> Reservation {
    Reservation {
        colour,
        reserved_for: String::new(),
        name: format!("Bot {colour}"),
        bot: Some(BotLevel::Random),
        rating: None,
    }
}

/// A director's room of `online` with yellow and red reserved for "a" and "b", blue and
/// green for bots, spectators `DELAY` throws behind, on a store.
async fn director_room(seed: u64) -> (Driver, Arc<FaultyStore>) {
    let s = settings(json!({
        "preset": "online", "seats": 4, "bot_think_ms": 0, "turn_clock_secs": 30,
        "spectator_delay_throws": DELAY,
    }));
    let store = Arc::new(FaultyStore::new());
    let mut d = Driver::new("TOURNEY01", s, seed, 1 << 14)
        .with_store(store.clone())
        .await
        .expect("room stored");
    d.core.set_director(DirectorRoom {
        reserved: vec![
            person(Colour::Yellow, "a"),
            person(Colour::Red, "b"),
            bot(Colour::Blue),
            bot(Colour::Green),
        ],
        start_when_seated: false,
    });
    (d, store)
}

async fn claim(d: &mut Driver, conn: u64, key: &str) -> Result<Member, Refusal> {
    d.input(Input::Claim {
        conn,
        req: 1,
        key: key.into(),
        client_seed: None,
        token: format!("token-{conn}"),
    })
    .await;
    d.replies.pop().expect("a claim is answered")
}

async fn direct(d: &mut Driver, cmd: DirectorCmd) -> Result<DirectorAnswer, Refusal> {
    d.input(Input::Director(cmd)).await;
    d.directed.pop().expect("a director's command is answered")
}

fn code_of<T: std::fmt::Debug>(r: Result<T, Refusal>) -> ErrorCode {
    r.expect_err("refused").code
}

/// Seated and started: (driver, store, yellow's member, red's member).
async fn started(seed: u64) -> (Driver, Arc<FaultyStore>, Member, Member) {
    let (mut d, store) = director_room(seed).await;
    let yellow = claim(&mut d, 1, "a").await.expect("a claims yellow");
    let red = claim(&mut d, 2, "b").await.expect("b claims red");
    let started = direct(&mut d, DirectorCmd::Start { absent: vec![] })
        .await
        .expect("started");
    assert!(started.game_id.is_some());
    (d, store, yellow, red)
}

#[tokio::test]
async fn reserved_seats_are_claimed_by_their_key_and_only_the_director_starts() {
    let (mut d, _store) = director_room(1).await;
    d.input(Input::Join {
        conn: 5,
        req: 1,
        name: "Gatecrasher".into(),
        colour: None,
        client_seed: None,
        account: None,
        ratings: Default::default(),
        token: "token-5".into(),
    })
    .await;
    assert_eq!(
        code_of(d.replies.pop().expect("answered")),
        ErrorCode::SeatReserved
    );
    assert_eq!(
        code_of(claim(&mut d, 6, "nobody").await),
        ErrorCode::SeatReserved
    );
    let yellow = claim(&mut d, 1, "a").await.expect("a claims yellow");
    let seat = &d.core.seats()[0];
    assert_eq!(
        (seat.colour, seat.name.as_str(), seat.creator),
        (Colour::Yellow, "Player a", false)
    );
    assert_eq!(code_of(claim(&mut d, 7, "a").await), ErrorCode::ColourTaken);
    // Nobody's `start` is obeyed; the director's waits for every person not absent.
    let answer = d.cmd(1, yellow, 2, crate::SeatCmd::Start).await;
    assert!(
        matches!(
            answer,
            ServerMessage::Error {
                code: ErrorCode::NotCreator,
                ..
            }
        ),
        "{answer:?}"
    );
    let refused = direct(&mut d, DirectorCmd::Start { absent: vec![] }).await;
    assert_eq!(code_of(refused), ErrorCode::NotEnoughPlayers);
    assert_eq!(d.core.status(), RoomStatus::Lobby);
    // An idle director's lobby is never disposed of.
    d.at(d.now + 24 * 3600 * 1000).await;
    assert!(!d.core.disposable(d.now));
    // Red absent: yellow and the two bots play.
    let answer = direct(
        &mut d,
        DirectorCmd::Start {
            absent: vec![Colour::Red],
        },
    )
    .await
    .expect("started without red");
    let game = *d.core.game().expect("a game");
    assert_eq!(game.seat(Colour::Red), SeatStatus::Empty);
    for c in [Colour::Yellow, Colour::Blue, Colour::Green] {
        assert_eq!(game.seat(c), SeatStatus::Playing, "{c}");
    }
    let bots: Vec<_> = d
        .core
        .seats()
        .iter()
        .filter(|s| s.bot.is_some())
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(bots, vec!["Bot blue".to_owned(), "Bot green".to_owned()]);
    // A retried start (the director restarted) answers the same game.
    let again = direct(
        &mut d,
        DirectorCmd::Start {
            absent: vec![Colour::Red],
        },
    )
    .await
    .expect("answered again");
    assert_eq!(again.game_id, answer.game_id);
    assert_eq!(d.core.game_id(), answer.game_id);
}

#[tokio::test]
async fn a_pairs_table_cannot_start_with_a_team_absent() {
    let s = settings(json!({"preset": "pairs", "seats": 4, "bot_think_ms": 0}));
    let mut d = Driver::new("PAIRS0001", s, 2, 1024);
    d.core.set_director(DirectorRoom {
        reserved: vec![
            person(Colour::Blue, "a"),
            person(Colour::Green, "b"),
            person(Colour::Red, "c"),
            person(Colour::Yellow, "d"),
        ],
        start_when_seated: false,
    });
    claim(&mut d, 1, "a").await.expect("claimed");
    claim(&mut d, 2, "b").await.expect("claimed");
    let refused = direct(
        &mut d,
        DirectorCmd::Start {
            absent: vec![Colour::Red, Colour::Yellow],
        },
    )
    .await;
    assert_eq!(code_of(refused), ErrorCode::NotEnoughPlayers);
    assert_eq!(d.core.status(), RoomStatus::Lobby);
}

#[tokio::test]
async fn the_referee_pauses_and_resumes_the_clock_and_a_rebuild_keeps_the_pause() {
    let (mut d, store, yellow, _red) = started(3).await;
    // Play until yellow is to act with some clock used.
    for _ in 0..200 {
        let game = *d.core.game().expect("game");
        if game.turn() == Colour::Yellow {
            break;
        }
        step(&mut d, &[(Colour::Yellow, 1, yellow)]).await;
    }
    let deadline = d.core.deadline().expect("a clock runs");
    d.now += 10_000;
    let left = deadline - d.now;
    let answer = direct(&mut d, DirectorCmd::PauseClock)
        .await
        .expect("paused");
    assert!(answer.paused);
    assert_eq!(d.core.deadline(), None);
    assert_eq!(d.core.paused(), Some((Colour::Yellow, left)));
    let game = *d.core.game().expect("game");
    let answer = d.cmd(1, yellow, 10, first_command(&game)).await;
    assert!(
        matches!(
            answer,
            ServerMessage::Error {
                code: ErrorCode::ClockPaused,
                ..
            }
        ),
        "{answer:?}"
    );
    // An hour passes: no timeout, no bot, nothing.
    let seq = d.core.seq();
    d.at(d.now + 3_600_000).await;
    assert_eq!(d.core.seq(), seq);
    assert!(d.thinking.is_empty());
    // Asked again: the same answer, nothing stored.
    assert!(
        direct(&mut d, DirectorCmd::PauseClock)
            .await
            .expect("again")
            .paused
    );
    assert_eq!(d.core.seq(), seq);
    // Rebuilt from the store (a restart): still paused, with what was left.
    let (core, effects) = rebuilt(&d, &store, 1 << 14, d.now).await;
    assert!(
        effects.is_empty(),
        "no fresh clock while paused: {effects:?}"
    );
    assert_eq!(core.paused(), Some((Colour::Yellow, left)));
    assert_eq!(core.deadline(), None);
    // Resumed: the clock runs with what was left, announced by `clock_resumed` + `turn`.
    let answer = direct(&mut d, DirectorCmd::ResumeClock)
        .await
        .expect("resumed");
    assert!(!answer.paused);
    assert_eq!(d.core.deadline(), Some(d.now + left));
    let events = d.events(1);
    let tail: Vec<_> = events[events.len() - 2..]
        .iter()
        .map(|(_, _, e)| e.clone())
        .collect();
    assert_eq!(
        tail,
        vec![
            RoomEvent::ClockResumed {
                colour: Colour::Yellow,
                deadline_ms: d.now + left
            },
            RoomEvent::Turn {
                colour: Colour::Yellow,
                deadline_ms: d.now + left
            },
        ]
    );
    let game = *d.core.game().expect("game");
    let answer = d.cmd(1, yellow, 11, first_command(&game)).await;
    assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
}

#[tokio::test]
async fn an_expelled_seat_forfeits_disqualified_and_the_game_goes_on() {
    let (mut d, _store, _yellow, _red) = started(4).await;
    let answer = direct(
        &mut d,
        DirectorCmd::Expel {
            colours: vec![Colour::Red],
        },
    )
    .await
    .expect("expelled");
    assert!(answer.game_id.is_some());
    let game = *d.core.game().expect("game");
    assert_ne!(game.seat(Colour::Red), SeatStatus::Playing);
    assert!(game.outcome().is_none(), "three still play");
    assert!(d.events(1).iter().any(|(_, _, e)| *e
        == RoomEvent::Abandoned {
            colour: Colour::Red,
            reason: AbandonReason::Disqualified
        }));
    // Retried: nothing more happens.
    let seq = d.core.seq();
    direct(
        &mut d,
        DirectorCmd::Expel {
            colours: vec![Colour::Red],
        },
    )
    .await
    .expect("again");
    assert_eq!(d.core.seq(), seq);
}

/// One step: a person to act plays its first legal action, else a bot thinks or time
/// passes to the next wake-up.
async fn step(d: &mut Driver, people: &[(Colour, u64, Member)]) {
    let game = *d.core.game().expect("game");
    match people.iter().find(|(c, _, _)| *c == game.turn()) {
        Some(&(_, conn, member)) if d.core.seats().iter().any(|s| s.conn == Some(conn)) => {
            let answer = d
                .cmd(conn, member, 1000 + d.core.seq(), first_command(&game))
                .await;
            assert!(matches!(answer, ServerMessage::Ok { .. }), "{answer:?}");
        }
        _ => {
            if !d.thinking.is_empty() {
                return d.think().await;
            }
            let t = d.wake.unwrap_or(d.now + 1000).max(d.now);
            d.at(t).await;
        }
    }
}

/// Event seqs a connection received, with the throws up to each (in the player's stream).
fn seqs(d: &Driver, conn: u64) -> Vec<u64> {
    d.events(conn).into_iter().map(|(seq, _, _)| seq).collect()
}

#[tokio::test]
async fn a_spectator_sees_the_game_n_throws_behind_and_all_of_it_at_the_end() {
    let (mut d, _store, yellow, red) = started(5).await;
    d.input(Input::Watch {
        conn: WATCHER,
        req: 1,
    })
    .await;
    let welcome = d.messages(WATCHER);
    assert!(matches!(
        welcome.first(),
        Some(ServerMessage::Welcome { .. })
    ));
    let people = [(Colour::Yellow, 1, yellow), (Colour::Red, 2, red)];
    let (mut checked, mut watched_late) = (0, 0);
    // The player's stream read so far: each event's seq and the throws up to it.
    let (mut read, mut total, mut marks) = (0, 0usize, Vec::<(u64, usize)>::new());
    for _ in 0..20_000 {
        if d.core.status() == RoomStatus::Finished {
            break;
        }
        step(&mut d, &people).await;
        let frames = d.inbox.get(&1).cloned().unwrap_or_default();
        for f in &frames[read..] {
            if let Ok(ServerMessage::Event { seq, event, .. }) = serde_json::from_str(f) {
                total += usize::from(is_throw(&event));
                marks.push((seq, total));
            }
        }
        read = frames.len();
        // The spectator's last event must be N throws behind the player's stream.
        let shown = d
            .inbox
            .get(&WATCHER)
            .and_then(|fs| {
                fs.iter()
                    .rev()
                    .find(|f| f.starts_with(r#"{"type":"event""#))
            })
            .and_then(|f| match serde_json::from_str(f) {
                Ok(ServerMessage::Event { seq, .. }) => Some(seq),
                _ => None,
            })
            .unwrap_or(0);
        let idx = marks.partition_point(|(seq, _)| *seq <= shown);
        let throws_to_shown = idx.checked_sub(1).map_or(0, |i| marks[i].1);
        if d.core.status() != RoomStatus::Finished {
            assert!(
                throws_to_shown == 0 || throws_to_shown + usize::from(DELAY) <= total,
                "the spectator saw throw {throws_to_shown} of {total} (seq {shown})"
            );
            if total > throws_to_shown {
                watched_late += 1;
            }
        }
        checked += 1;
    }
    assert_eq!(d.core.status(), RoomStatus::Finished, "the game ended");
    assert!(
        checked > 50 && watched_late > 50,
        "{checked} steps, {watched_late} behind"
    );
    // At the end the spectator has every event of the game, in order, frame for frame.
    let start = seqs(&d, WATCHER).first().copied().expect("events");
    let player: Vec<_> = d
        .events(1)
        .into_iter()
        .filter(|(s, _, _)| *s >= start)
        .collect();
    assert_eq!(d.events(WATCHER), player);
    // The spectator's view was never ahead of its stream: a late watcher is welcomed at
    // the shown seq (the game is over now: everything).
    d.input(Input::Watch {
        conn: WATCHER + 1,
        req: 1,
    })
    .await;
    match d.messages(WATCHER + 1).first() {
        Some(ServerMessage::Welcome { seq, .. }) => assert_eq!(*seq, d.core.seq()),
        other => panic!("a welcome: {other:?}"),
    }
}

#[tokio::test]
async fn a_late_spectator_is_welcomed_at_the_delayed_position() {
    let (mut d, _store, yellow, red) = started(6).await;
    let people = [(Colour::Yellow, 1, yellow), (Colour::Red, 2, red)];
    while d.events(1).iter().filter(|(_, _, e)| is_throw(e)).count() < 8 {
        step(&mut d, &people).await;
    }
    d.input(Input::Watch {
        conn: WATCHER,
        req: 1,
    })
    .await;
    let Some(ServerMessage::Welcome {
        seq,
        snapshot: Some(view),
        ..
    }) = d.messages(WATCHER).first().cloned()
    else {
        panic!("a welcome with a snapshot")
    };
    assert!(
        seq < d.core.seq(),
        "behind the room ({seq} < {})",
        d.core.seq()
    );
    assert_eq!(view.seq, seq);
    let player = d.events(1);
    let throws = |upto: u64| {
        player
            .iter()
            .take_while(|(s, _, _)| *s <= upto)
            .filter(|(_, _, e)| is_throw(e))
            .count()
    };
    assert_eq!(throws(seq) + usize::from(DELAY), throws(d.core.seq()));
    let game = view.game.expect("the game");
    assert_eq!(game.deadline_ms, None);
    assert_ne!(game.position, d.core.game().expect("game").to_position());
    assert_eq!(d.core.spectator_view().seq, seq);
}

/// The `Rooms` API over the real actor: create-if-absent by code (a retry makes no second
/// room, a restart finds it stored), the director's start, pause, and close.
#[tokio::test]
async fn rooms_open_a_directors_room_once_and_direct_it() {
    use crate::{Opened, RoomsConfig, SingleNode};
    use parchis_store::{MemoryStore, Store};
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let rooms = SingleNode::rooms(RoomsConfig::default(), store.clone());
    let s = settings(
        json!({"preset": "online", "seats": 2, "bot_think_ms": 0, "spectator_delay_throws": 3}),
    );
    let director = DirectorRoom {
        reserved: vec![bot(Colour::Yellow), bot(Colour::Red)],
        start_when_seated: false,
    };
    let opened = rooms
        .open_director_room("MATCH0001", s.clone(), director.clone())
        .await;
    assert_eq!(opened.expect("created"), Opened::Created);
    let again = rooms
        .open_director_room("MATCH0001", s.clone(), director.clone())
        .await;
    assert_eq!(again.expect("answered"), Opened::Existing);
    assert_eq!(rooms.room_count(), 1);
    // Stored with its reservations (a restore reads them back), and refused bad input.
    let stored = store
        .get_room("MATCH0001")
        .await
        .expect("read")
        .expect("stored");
    let read = parchis_room_core::persist::director_from(&stored.room.settings).expect("reads");
    assert_eq!(read, Some(director.clone()));
    let (back, _) =
        parchis_room_core::persist::settings_from(&stored.room.settings).expect("settings");
    assert_eq!(back, s);
    let bad = rooms
        .open_director_room("no spaces", s.clone(), director.clone())
        .await;
    assert_eq!(code_of(bad), ErrorCode::BadRequest);
    // Another process (a restarted director) retrying finds it in the store.
    let other = SingleNode::rooms(RoomsConfig::default(), store.clone());
    let retried = other.open_director_room("MATCH0001", s, director).await;
    assert_eq!(retried.expect("answered"), Opened::Existing);
    assert_eq!(other.room_count(), 0, "no second room");
    // Two bots: the director starts it, pauses it, and closes it.
    let started = rooms
        .direct("MATCH0001", DirectorCmd::Start { absent: vec![] })
        .await
        .expect("started");
    let game_id = started.game_id.expect("a game");
    let paused = rooms.direct("MATCH0001", DirectorCmd::PauseClock).await;
    // The bots may have finished already at 0 ms: then the pause is refused game_over.
    match paused {
        Ok(a) => assert!(a.paused && a.game_id == Some(game_id)),
        Err(r) => assert_eq!(r.code, ErrorCode::GameOver),
    }
    let closed = rooms.close_room("MATCH0001").await.expect("closed");
    assert!(closed.is_some());
    let unknown = rooms.direct("NOSUCHROOM", DirectorCmd::PauseClock).await;
    assert_eq!(code_of(unknown), ErrorCode::UnknownRoom);
}

/// A quick pairing's room ([`DirectorRoom::start_when_seated`]): nobody starts it; the
/// first claim seats its player and waits, the last one starts the game (bots seated);
/// a ticket's key seats a guest (no account), an account's key names the account.
#[tokio::test]
async fn a_room_that_starts_when_seated_starts_at_the_last_claim() {
    use parchis_room_core::reserved::ticket_key;
    let s = settings(json!({"preset": "online", "seats": 4, "bot_think_ms": 0}));
    let store = Arc::new(FaultyStore::new());
    let mut d = Driver::new("PAIRED001", s, 7, 1 << 14)
        .with_store(store.clone())
        .await
        .expect("room stored");
    let account = uuid::Uuid::from_u128(0x1234);
    let guest = ticket_key("t0ken");
    d.core.set_director(DirectorRoom {
        reserved: vec![
            person(Colour::Yellow, &account.to_string()),
            person(Colour::Red, &guest),
            bot(Colour::Blue),
        ],
        start_when_seated: true,
    });
    claim(&mut d, 1, &account.to_string())
        .await
        .expect("the account claims yellow");
    assert_eq!(d.core.status(), RoomStatus::Lobby, "red has not claimed");
    assert_eq!(d.core.seats()[0].account, Some(account));
    assert!(matches!(
        d.messages(1).first(),
        Some(ServerMessage::Welcome {
            colour: Some(Colour::Yellow),
            token: Some(_),
            ..
        })
    ));
    assert_eq!(
        code_of(claim(&mut d, 2, "t0ken").await),
        ErrorCode::SeatReserved
    );
    claim(&mut d, 3, &guest)
        .await
        .expect("the ticket claims red");
    assert_eq!(
        d.core.status(),
        RoomStatus::Playing,
        "started at the last claim"
    );
    let game = *d.core.game().expect("a game");
    for c in [Colour::Yellow, Colour::Red, Colour::Blue] {
        assert_eq!(game.seat(c), SeatStatus::Playing, "{c}");
    }
    assert_eq!(game.seat(Colour::Green), SeatStatus::Empty);
    let red = d
        .core
        .seats()
        .iter()
        .find(|s| s.colour == Colour::Red)
        .expect("red");
    assert_eq!(red.account, None, "a ticket names no account");
    // The start is stored: a rebuilt room is playing the same game.
    let (core, _) = rebuilt(&d, &store, 1 << 14, d.now).await;
    assert_eq!(core.status(), RoomStatus::Playing);
    assert_eq!(core.game_id(), d.core.game_id());
}

#[tokio::test]
async fn a_directors_room_without_start_when_seated_waits_for_the_director() {
    let s = settings(json!({"preset": "online", "seats": 2, "bot_think_ms": 0}));
    let mut d = Driver::new("MATCH0002", s, 8, 1024);
    d.core.set_director(DirectorRoom {
        reserved: vec![person(Colour::Yellow, "a"), person(Colour::Red, "b")],
        start_when_seated: false,
    });
    claim(&mut d, 1, "a").await.expect("claimed");
    claim(&mut d, 2, "b").await.expect("claimed");
    assert_eq!(d.core.status(), RoomStatus::Lobby);
}
