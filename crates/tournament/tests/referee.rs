//! Referee actions (pause/resume, award, disqualify, replay) and no-shows, each stored
//! as an event and shown on the tournament page.

mod common;

use common::*;
use parchis_engine::Colour;
use parchis_tournament::{CommandError, Effect, Input, MatchId, MatchStatus, Phase, RefereeKind};
use uuid::Uuid;

const REFEREE: Uuid = Uuid::from_u128(0x4EF);
const STRANGER: Uuid = Uuid::from_u128(0x5757);

/// Four pairs drawn and round 1 playing (two matches).
fn four_pairs_playing() -> Harness {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(4);
    h.send(Input::NameReferee {
        by: ORGANISER,
        account: REFEREE,
        name: "Referee".into(),
    })
    .expect("named");
    h.close();
    assert_eq!(h.playing().len(), 2);
    h
}

fn room_of(h: &Harness, id: MatchId) -> String {
    h.t.match_(id).and_then(|m| m.room.clone()).expect("open")
}

#[test]
fn only_the_organiser_and_named_referees_judge() {
    let mut h = four_pairs_playing();
    let id = h.playing()[0];
    assert_eq!(
        h.send(Input::Pause { by: STRANGER, id }),
        Err(CommandError::NotReferee)
    );
    assert_eq!(
        h.send(Input::NameReferee {
            by: REFEREE,
            account: STRANGER,
            name: "Stranger".into(),
        }),
        Err(CommandError::NotOrganiser)
    );
    assert!(h.send(Input::Pause { by: REFEREE, id }).is_ok());
    assert!(h.send(Input::Resume { by: ORGANISER, id }).is_ok());
}

#[test]
fn the_view_names_the_organiser_and_the_referees() {
    let h = four_pairs_playing();
    let v = h.t.view();
    assert_eq!(
        (
            v.organiser_official.account,
            v.organiser_official.name.as_str()
        ),
        (ORGANISER, "Organiser")
    );
    let referees: Vec<(Uuid, &str)> = v
        .referees
        .iter()
        .map(|r| (r.account, r.name.as_str()))
        .collect();
    assert_eq!(referees, vec![(REFEREE, "Referee")]);
    // The names are stored: a director restarted from the log shows them too.
    let again = parchis_tournament::Tournament::from_entries(&h.log).expect("folds");
    assert_eq!(again.view().referees, v.referees);
}

#[test]
fn pause_and_resume_stop_and_start_the_clock() {
    let mut h = four_pairs_playing();
    let id = h.playing()[0];
    let room = room_of(&h, id);
    let fx = h.send(Input::Pause { by: REFEREE, id }).expect("paused");
    assert_eq!(
        fx,
        vec![
            Effect::PauseClock {
                id,
                room: room.clone()
            },
            Effect::Publish
        ]
    );
    assert!(h.t.match_(id).expect("m").paused);
    assert!(h.t.view().matches.iter().any(|m| m.id == id && m.paused));
    // Pausing twice stores nothing.
    assert_eq!(h.send(Input::Pause { by: REFEREE, id }), Ok(vec![]));
    let fx = h.send(Input::Resume { by: REFEREE, id }).expect("resumed");
    assert_eq!(fx, vec![Effect::ResumeClock { id, room }, Effect::Publish]);
    assert!(!h.t.match_(id).expect("m").paused);
    let kinds: Vec<RefereeKind> = h.t.referee_log().iter().map(|a| a.kind).collect();
    assert_eq!(kinds, vec![RefereeKind::Pause, RefereeKind::Resume]);
    h.assert_replays();
}

/// Seed 004: "en caso de duda o disputa prevalecerá la decisión del juez árbitro del
/// campeonato": the referee's award decides the match, whatever its game says.
#[test]
fn an_award_decides_the_match_with_its_reason_and_closes_the_room() {
    let mut h = four_pairs_playing();
    let id = h.playing()[0];
    let room = room_of(&h, id);
    let m = h.t.match_(id).expect("m").clone();
    let loser_pick = m.entrants[1];
    let fx = h
        .send(Input::Award {
            by: REFEREE,
            id,
            places: vec![loser_pick],
            reason: "the other team left the table".into(),
        })
        .expect("awarded");
    assert!(fx.contains(&Effect::CloseRoom { room: room.clone() }));
    let m2 = h.t.match_(id).expect("m");
    assert_eq!(m2.status, MatchStatus::Awarded);
    assert_eq!(m2.winner(), Some(loser_pick));
    assert_eq!(m2.places, vec![m.entrants[1], m.entrants[0]]);
    let view = h.t.view();
    let action = view.referee_actions.last().expect("logged");
    assert_eq!(action.action, RefereeKind::Award);
    assert_eq!(
        action.reason.as_deref(),
        Some("the other team left the table")
    );
    // The old game's late result changes nothing.
    let game_id = m.game_id.expect("was playing");
    assert_eq!(
        h.send(Input::GameFinished {
            id,
            game_id,
            places: vec![Colour::Blue]
        }),
        Ok(vec![])
    );
    assert_eq!(h.t.match_(id).expect("m").winner(), Some(loser_pick));
    h.run_effects();
    assert!(h.rooms[&room].closed);
    assert!(
        h.t.stale_rooms().is_empty(),
        "the closed room is acknowledged"
    );
    // An award names entrants of the match only, and needs a reason.
    let other = h.playing()[0];
    assert!(matches!(
        h.send(Input::Award {
            by: REFEREE,
            id: other,
            places: vec![loser_pick],
            reason: "x".into()
        }),
        Err(CommandError::BadPlaces(_))
    ));
    let winner = h.t.match_(other).expect("m").entrants[0];
    assert_eq!(
        h.send(Input::Award {
            by: REFEREE,
            id: other,
            places: vec![winner],
            reason: "  ".into()
        }),
        Err(CommandError::Reason)
    );
    h.assert_replays();
}

/// Seed 004: "el equipo que reciba ayuda del público podrá ser DESCALIFICADO"; issue
/// 27: "disqualify an entrant (its opponents advance)".
#[test]
fn a_disqualified_pair_forfeits_its_match_and_its_opponents_advance() {
    let mut h = four_pairs_playing();
    let id = h.playing()[0];
    let room = room_of(&h, id);
    let m = h.t.match_(id).expect("m").clone();
    let (cheat, opponent) = (m.entrants[0], m.entrants[1]);
    let fx = h
        .send(Input::Disqualify {
            by: REFEREE,
            entrant: cheat,
            reason: "help from the public".into(),
        })
        .expect("disqualified");
    assert!(fx.contains(&Effect::CloseRoom { room }));
    let m2 = h.t.match_(id).expect("m");
    assert_eq!(m2.status, MatchStatus::Forfeited);
    assert_eq!(m2.winner(), Some(opponent));
    assert_eq!(
        h.send(Input::Disqualify {
            by: REFEREE,
            entrant: cheat,
            reason: "again".into()
        }),
        Err(CommandError::AlreadyOut(cheat))
    );
    // Finish the other semi-final: the final is the opponent against its winner.
    let other = h.playing()[0];
    h.finish(other, vec![Colour::Blue, Colour::Red]);
    let fin = h.playing();
    assert_eq!(fin.len(), 1);
    assert!(h
        .t
        .match_(fin[0])
        .expect("final")
        .entrants
        .contains(&opponent));
    assert!(!h.t.match_(fin[0]).expect("final").entrants.contains(&cheat));
    h.assert_replays();
}

#[test]
fn a_winner_disqualified_before_the_next_round_is_replaced_by_its_opponent() {
    let mut h = four_pairs_playing();
    let [a, b] = [h.playing()[0], h.playing()[1]];
    h.finish(a, vec![Colour::Blue]); // the first entrant (blue and green) wins
    let m = h.t.match_(a).expect("m").clone();
    h.send(Input::Disqualify {
        by: REFEREE,
        entrant: m.entrants[0],
        reason: "help from the public".into(),
    })
    .expect("disqualified");
    h.finish(b, vec![Colour::Red]);
    let fin = h.playing();
    assert_eq!(fin.len(), 1);
    let final_entrants = &h.t.match_(fin[0]).expect("final").entrants;
    assert!(
        final_entrants.contains(&m.entrants[1]),
        "its opponent advances"
    );
    assert!(!final_entrants.contains(&m.entrants[0]));
}

#[test]
fn a_disqualified_player_at_a_table_of_four_is_expelled_and_the_game_goes_on() {
    let mut s = settings("online");
    s.table_size = Some(4);
    s.advance = Some(2);
    let mut h = Harness::new(s);
    h.register_players(8);
    h.close();
    let id = h.playing()[0];
    let m = h.t.match_(id).expect("m").clone();
    let cheat = m.entrants[3];
    let colour = m
        .seats
        .iter()
        .find(|s| s.entrant == cheat)
        .expect("seat")
        .colour;
    let fx = h
        .send(Input::Disqualify {
            by: ORGANISER,
            entrant: cheat,
            reason: "two accounts".into(),
        })
        .expect("disqualified");
    assert!(fx.contains(&Effect::Expel {
        id,
        room: m.room.clone().expect("room"),
        colours: vec![colour]
    }));
    assert_eq!(h.t.match_(id).expect("m").status, MatchStatus::Playing);
    // The game ends with the cheat first: it takes no place, the next two go through.
    let mut order: Vec<Colour> = vec![colour];
    order.extend(m.seats.iter().map(|s| s.colour).filter(|&c| c != colour));
    h.finish(id, order);
    let m2 = h.t.match_(id).expect("m");
    assert_eq!(m2.places.len(), 3);
    assert!(!m2.places.contains(&cheat));
    assert_eq!(m2.places[..2], m.entrants[..2]);
}

#[test]
fn a_replay_opens_a_new_room_and_the_new_game_decides() {
    let mut h = four_pairs_playing();
    let id = h.playing()[0];
    let old_room = room_of(&h, id);
    let old_game = h.t.match_(id).and_then(|m| m.game_id).expect("game");
    let fx = h
        .send(Input::Replay {
            by: REFEREE,
            id,
            reason: "a disconnection the clock did not see".into(),
        })
        .expect("replay");
    let new_room = parchis_tournament::room_code(h.t.id(), id, 1);
    assert_ne!(new_room, old_room);
    assert!(fx.contains(&Effect::CloseRoom {
        room: old_room.clone()
    }));
    assert!(fx
        .iter()
        .any(|e| matches!(e, Effect::CreateRoom(s) if s.room == new_room)));
    let m = h.t.match_(id).expect("m");
    assert_eq!(m.status, MatchStatus::Ready);
    assert_eq!(m.game_id, None);
    assert_eq!(m.replaced_games, vec![old_game]);
    // The old game's result is refused; the new one decides.
    assert_eq!(
        h.send(Input::GameFinished {
            id,
            game_id: old_game,
            places: vec![Colour::Blue]
        }),
        Err(CommandError::StaleGame(old_game))
    );
    h.run_effects();
    let new_game = h.t.match_(id).and_then(|m| m.game_id).expect("new game");
    assert_ne!(new_game, old_game);
    assert!(h.rooms[&old_room].closed);
    h.finish(id, vec![Colour::Red]);
    let m = h.t.match_(id).expect("m");
    assert_eq!(m.status, MatchStatus::Finished);
    assert_eq!(m.winner(), Some(m.entrants[1]));
    assert_eq!(h.t.view().referee_actions[0].action, RefereeKind::Replay);
    h.assert_replays();
}

#[test]
fn a_match_of_a_finished_round_can_no_longer_be_judged() {
    let mut h = four_pairs_playing();
    let [a, b] = [h.playing()[0], h.playing()[1]];
    h.finish(a, vec![Colour::Blue]);
    // While the round runs, a decided match may still be replayed or re-awarded ...
    let w = h.t.match_(a).expect("m").entrants[1];
    h.send(Input::Award {
        by: REFEREE,
        id: a,
        places: vec![w],
        reason: "appeal upheld".into(),
    })
    .expect("re-awarded in the round");
    h.finish(b, vec![Colour::Blue]);
    // ... but once the final is drawn from it, not any more.
    assert_eq!(
        h.send(Input::Replay {
            by: REFEREE,
            id: a,
            reason: "late appeal".into()
        }),
        Err(CommandError::RoundOver(a))
    );
    let fin = h.playing()[0];
    assert!(h.t.match_(fin).expect("final").entrants.contains(&w));
}

#[test]
fn an_absent_pair_forfeits_after_the_no_show_minutes() {
    let mut s = settings("pairs");
    s.no_show_minutes = 5;
    let mut h = Harness::new(s);
    h.register_pairs(2);
    h.auto_seat = false;
    h.close();
    let id = MatchId(1);
    let m = h.t.match_(id).expect("m").clone();
    assert_eq!(m.status, MatchStatus::Open);
    let opened = h.now;
    let deadline = opened + 5 * 60_000;
    assert_eq!(h.t.next_wake(), Some(deadline));
    // The first pair sits, the second does not.
    let present = m.entrants[0];
    for p in &h.t.entrant(present).expect("e").players.clone() {
        h.send(Input::Seated {
            id,
            account: p.account.expect("account"),
        })
        .expect("seated");
    }
    assert!(h
        .pending
        .iter()
        .all(|e| !matches!(e, Effect::StartRoom { .. })));
    h.now = deadline - 1;
    assert_eq!(h.send(Input::Tick), Ok(vec![]));
    h.now = deadline;
    let fx = h.send(Input::Tick).expect("tick");
    assert!(fx.contains(&Effect::CloseRoom {
        room: m.room.clone().expect("room")
    }));
    let m2 = h.t.match_(id).expect("m");
    assert_eq!(m2.status, MatchStatus::Forfeited);
    assert_eq!(m2.winner(), Some(present));
    assert_eq!(
        m2.out.iter().copied().collect::<Vec<_>>(),
        vec![m.entrants[1]]
    );
    assert_eq!(h.t.phase(), Phase::Finished);
    assert_eq!(h.t.champion(), Some(present));
    h.assert_replays();
}

#[test]
fn a_no_show_at_a_table_of_four_starts_the_game_without_it() {
    let mut s = settings("online");
    s.table_size = Some(4);
    s.advance = Some(2);
    let mut h = Harness::new(s);
    h.register_players(4);
    h.auto_seat = false;
    h.close();
    let id = MatchId(1);
    let m = h.t.match_(id).expect("m").clone();
    for e in &m.entrants[..3] {
        let account = h.t.entrant(*e).expect("e").players[0].account.expect("a");
        h.send(Input::Seated { id, account }).expect("seated");
    }
    h.now += 5 * 60_000;
    let fx = h.send(Input::Tick).expect("tick");
    let absent_colour = m.seats[3].colour;
    assert!(fx.contains(&Effect::StartRoom {
        id,
        room: m.room.clone().expect("room"),
        absent: vec![absent_colour]
    }));
    // A late arrival is refused its seat.
    let late = h.t.entrant(m.entrants[3]).expect("e").players[0]
        .account
        .expect("a");
    assert_eq!(
        h.send(Input::Seated { id, account: late }),
        Err(CommandError::NotInMatch(id))
    );
}

#[test]
fn pausing_an_open_room_suspends_the_no_show_clock() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(2);
    h.auto_seat = false;
    h.close();
    let id = MatchId(1);
    h.now += 60_000;
    h.send(Input::Pause { by: ORGANISER, id }).expect("paused");
    assert_eq!(h.t.next_wake(), None);
    h.now += 10 * 60_000;
    assert_eq!(h.send(Input::Tick), Ok(vec![]));
    h.send(Input::Resume { by: ORGANISER, id })
        .expect("resumed");
    assert_eq!(h.t.next_wake(), Some(h.now + 5 * 60_000));
    assert_eq!(h.t.match_(id).expect("m").status, MatchStatus::Open);
}

#[test]
fn a_double_no_show_in_the_final_leaves_no_champion() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(2);
    h.auto_seat = false;
    h.close();
    h.now += 5 * 60_000;
    h.send(Input::Tick).expect("tick");
    let m = h.t.match_(MatchId(1)).expect("m");
    assert_eq!(m.status, MatchStatus::Forfeited);
    assert_eq!(m.winner(), None);
    assert_eq!(h.t.phase(), Phase::Finished);
    assert_eq!(h.t.champion(), None);
}

#[test]
fn a_room_created_after_its_match_was_awarded_is_closed() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(4);
    // The close is stored and the rooms are being created when the referee awards
    // match 1 (the creation effects are still in flight).
    h.send(Input::Close { by: ORGANISER }).expect("closes");
    let in_flight = std::mem::take(&mut h.pending);
    let id = MatchId(1);
    let winner = h.t.match_(id).expect("m").entrants[0];
    h.send(Input::Award {
        by: ORGANISER,
        id,
        places: vec![winner],
        reason: "the other pair withdrew".into(),
    })
    .expect("awarded before its room opened");
    h.pending = in_flight;
    h.run_effects();
    let room = parchis_tournament::room_code(h.t.id(), id, 0);
    assert!(h.rooms[&room].closed, "the unwanted room was closed");
    assert!(h.t.stale_rooms().is_empty());
    assert_eq!(h.t.match_(id).expect("m").status, MatchStatus::Awarded);
    assert_eq!(h.playing().len(), 1);
    h.assert_replays();
}
