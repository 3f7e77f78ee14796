//! Unit tests of [`super::Admission`].

use super::*;
use parchis_protocol::ErrorCode;

fn limits() -> Limits {
    Limits {
        max_connections: 3,
        max_connections_per_address: 2,
        room_creations_per_minute: 2,
        max_lobbies_per_address: 5,
        max_bot_rooms_per_address: 1,
        max_bot_rooms: 2,
        ..Limits::default()
    }
}

fn ip(n: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, n])
}

#[test]
fn connections_are_capped_per_address_and_in_total_and_given_back() {
    let a = Admission::new(limits());
    let g1 = a.connect(ip(1)).expect("first");
    let _g2 = a.connect(ip(1)).expect("second");
    assert_eq!(a.connect(ip(1)).unwrap_err().code(), ErrorCode::RateLimited);
    let _g3 = a.connect(ip(2)).expect("other address");
    assert_eq!(a.connect(ip(3)).unwrap_err().code(), ErrorCode::ServerFull);
    drop(g1);
    assert_eq!(a.open_connections(ip(1)), (2, 1));
    assert!(a.connect(ip(3)).is_ok());
}

#[test]
fn creations_are_rated_per_address_with_a_retry_after() {
    let a = Admission::new(limits());
    let lobby = |_: &str| Some(RoomStatus::Lobby);
    for n in 0..2 {
        a.may_create(ip(1), false, lobby)
            .expect("within the rate")
            .created(&format!("A{n}"));
    }
    let denied = a.may_create(ip(1), false, lobby).unwrap_err();
    assert_eq!(denied.code(), ErrorCode::RateLimited);
    assert!((1..=30).contains(&denied.retry_after_secs()), "{denied:?}");
    assert!(a.may_create(ip(2), false, lobby).is_ok());
}

#[test]
fn holding_a_placed_room_checks_the_open_rooms_not_the_creation_rate() {
    let a = Admission::new(Limits {
        max_lobbies_per_address: 3,
        ..limits()
    });
    let lobby = |_: &str| Some(RoomStatus::Lobby);
    for n in 0..3 {
        a.reserve(ip(1), false, lobby)
            .expect("a lobby fits")
            .created(&format!("P{n}"));
    }
    // Three lobbies held here: a fourth is refused, and the rate (2) was not used.
    let denied = a.reserve(ip(1), false, lobby).unwrap_err();
    assert_eq!(denied.code(), ErrorCode::RateLimited);
    assert!(denied.to_string().contains("unstarted rooms"), "{denied}");
    let gone = |_: &str| None;
    assert!(a.may_create(ip(1), false, gone).is_ok(), "rate unused");
    assert!(a.may_create(ip(1), false, gone).is_ok(), "rate unused");
    assert!(a.may_create(ip(1), false, gone).is_err());
}

#[test]
fn open_lobbies_and_bot_rooms_count_until_they_finish() {
    let a = Admission::new(Limits {
        room_creations_per_minute: 100,
        max_lobbies_per_address: 1,
        ..limits()
    });
    let status = std::sync::Mutex::new(HashMap::<String, RoomStatus>::new());
    let get = |c: &str| status.lock().ok().and_then(|s| s.get(c).copied());
    a.may_create(ip(1), true, get)
        .expect("first bot room")
        .created("B1");
    status
        .lock()
        .unwrap()
        .insert("B1".into(), RoomStatus::Lobby);
    // One lobby open: a second is refused.
    assert_eq!(
        a.may_create(ip(1), false, get).unwrap_err().code(),
        ErrorCode::RateLimited
    );
    status
        .lock()
        .unwrap()
        .insert("B1".into(), RoomStatus::Playing);
    // Playing: no longer a lobby, still a bot room of this address.
    assert!(a.may_create(ip(1), false, get).is_ok());
    assert_eq!(
        a.may_create(ip(1), true, get).unwrap_err().code(),
        ErrorCode::RateLimited
    );
    // Another address: one more bot room fits the server, then it is full.
    a.created(Some(ip(2)), "B2", true);
    status
        .lock()
        .unwrap()
        .insert("B2".into(), RoomStatus::Playing);
    assert_eq!(
        a.may_create(ip(3), true, get).unwrap_err().code(),
        ErrorCode::ServerFull
    );
    status
        .lock()
        .unwrap()
        .insert("B1".into(), RoomStatus::Finished);
    assert!(a.may_create(ip(1), true, get).is_ok());
}

#[test]
fn a_reservation_counts_from_the_check_until_it_is_given_back_or_recorded() {
    let a = Admission::new(Limits {
        room_creations_per_minute: 100,
        max_lobbies_per_address: 2,
        ..limits()
    });
    let status = std::sync::Mutex::new(HashMap::<String, RoomStatus>::new());
    let get = |c: &str| status.lock().ok().and_then(|s| s.get(c).copied());
    // Two creations under way (no room registered yet): a third is refused.
    let first = a.reserve(ip(1), false, get).expect("first");
    let second = a.may_create(ip(1), false, get).expect("second");
    let denied = a.reserve(ip(1), false, get).unwrap_err();
    assert!(denied.to_string().contains("unstarted rooms"), "{denied}");
    assert!(a.reserve(ip(2), false, get).is_ok(), "another address");
    // The first creation failed: its place is free again.
    drop(first);
    let third = a.reserve(ip(1), false, get).expect("the place given back");
    // The second is a lobby now: it keeps counting in its reservation's place.
    second.created("L2");
    status
        .lock()
        .unwrap()
        .insert("L2".into(), RoomStatus::Lobby);
    assert!(a.reserve(ip(1), false, get).is_err(), "L2 and the third");
    // Started: no longer a lobby.
    status
        .lock()
        .unwrap()
        .insert("L2".into(), RoomStatus::Playing);
    assert!(a.reserve(ip(1), false, get).is_ok());
    drop(third);
    // The server's bot rooms count reservations too.
    let bots = a.reserve(ip(3), true, get).expect("bot room of 3");
    let other = a.reserve(ip(4), true, get).expect("bot room of 4");
    assert_eq!(
        a.reserve(ip(5), true, get).unwrap_err().code(),
        ErrorCode::ServerFull
    );
    drop(other);
    bots.created("B3");
    status
        .lock()
        .unwrap()
        .insert("B3".into(), RoomStatus::Playing);
    let fifth = a.reserve(ip(5), true, get).expect("one place free");
    assert_eq!(
        a.reserve(ip(6), true, get).unwrap_err().code(),
        ErrorCode::ServerFull,
        "B3 and the fifth's"
    );
    drop(fifth);
}

#[test]
fn concurrent_creations_of_one_address_never_pass_its_limit_together() {
    let a = Admission::new(Limits {
        room_creations_per_minute: 1000,
        max_lobbies_per_address: 3,
        max_bot_rooms_per_address: 100,
        max_bot_rooms: 5,
        ..limits()
    });
    let gone = |_: &str| None;
    let threads = 16;
    let barrier = std::sync::Barrier::new(threads);
    let (lobbies, bots) = std::thread::scope(|s| {
        let tasks: Vec<_> = (0..threads)
            .map(|n| {
                let (a, barrier) = (&a, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    // One address's lobbies, and bot rooms of many addresses.
                    let lobby = a.may_create(ip(1), false, gone).ok();
                    let bot = a.reserve(ip(10 + n as u8), true, gone).ok();
                    (lobby, bot)
                })
            })
            .collect();
        let held: Vec<_> = tasks.into_iter().filter_map(|t| t.join().ok()).collect();
        let lobbies = held.iter().filter(|(l, _)| l.is_some()).count();
        let bots = held.iter().filter(|(_, b)| b.is_some()).count();
        (lobbies, bots)
    });
    assert_eq!((lobbies, bots), (3, 5));
    // Every reservation was dropped with its thread's answer: all three places are
    // free again, and no more.
    let again: Vec<_> = (0..3)
        .map(|_| a.reserve(ip(1), false, gone).expect("given back"))
        .collect();
    assert!(a.reserve(ip(1), false, gone).is_err());
    drop(again);
}

#[test]
fn the_connection_cap_stays_below_the_open_file_limit() {
    let clamped = effective_max_connections(usize::MAX, 256);
    if let Some(limit) = open_file_limit() {
        assert_eq!(clamped, limit - 256);
    }
    assert_eq!(effective_max_connections(10, 256), 10);
}

#[test]
fn ipv6_clients_are_counted_per_64_network_and_mapped_ipv4_as_ipv4() {
    let v6 = |s: &str| s.parse::<IpAddr>().expect("an address");
    assert_eq!(
        address_key(v6("2001:db8:1:2:aaaa:bbbb:cccc:dddd")),
        v6("2001:db8:1:2::")
    );
    assert_eq!(address_key(v6("::ffff:127.0.0.9")), ip(9));
    assert_eq!(address_key(ip(9)), ip(9));
    // Two addresses of one /64 share the per-address limits; another /64 does not.
    let a = Admission::new(limits());
    let _g1 = a.connect(v6("2001:db8:1:2::1")).expect("first");
    let _g2 = a.connect(v6("2001:db8:1:2::ffff")).expect("second");
    assert_eq!(
        a.connect(v6("2001:db8:1:2:1234::")).unwrap_err().code(),
        ErrorCode::RateLimited
    );
    assert_eq!(a.open_connections(v6("2001:db8:1:2::77")), (2, 2));
    assert!(a.connect(v6("2001:db8:1:3::1")).is_ok(), "another /64");
    let lobby = |_: &str| Some(RoomStatus::Lobby);
    for n in 0..2 {
        a.may_create(v6(&format!("2001:db8:9:9::{n}")), false, lobby)
            .expect("within the rate")
            .created(&format!("V{n}"));
    }
    let denied = a
        .may_create(v6("2001:db8:9:9::99"), false, lobby)
        .unwrap_err();
    assert_eq!(denied.code(), ErrorCode::RateLimited);
}
