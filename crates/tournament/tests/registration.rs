//! Settings, registration (teams confirmed by the partner, withdrawals, the minimum
//! rating), the close (deadline or organiser, bot fill) and the API view's contract.

mod common;

use common::*;
use parchis_protocol::BotLevel;
use parchis_tournament::{
    BotFill, CommandError, EntrantId, EntrantStatus, Format, Input, MatchStatus, Phase, Settings,
    SettingsError, Tournament,
};
use uuid::Uuid;

fn check(s: &Settings) -> Result<(), SettingsError> {
    s.validate(T0).map(|_| ())
}

#[test]
fn settings_are_checked_with_typed_errors() {
    let ok = settings("pairs");
    assert_eq!(check(&ok), Ok(()));
    let with = |f: &dyn Fn(&mut Settings)| {
        let mut s = ok.clone();
        f(&mut s);
        check(&s)
    };
    assert_eq!(with(&|s| s.name = " ".into()), Err(SettingsError::Name));
    assert_eq!(with(&|s| s.name = "x".repeat(81)), Err(SettingsError::Name));
    assert!(matches!(
        with(&|s| s.preset = "chess".into()),
        Err(SettingsError::Preset(_))
    ));
    assert_eq!(
        with(&|s| s.format = Format::Swiss),
        Err(SettingsError::RoundsMissing)
    );
    assert_eq!(
        with(&|s| {
            s.format = Format::Swiss;
            s.rounds = Some(0)
        }),
        Err(SettingsError::Rounds(0))
    );
    assert_eq!(
        with(&|s| s.rounds = Some(3)),
        Err(SettingsError::RoundsForKnockout)
    );
    assert_eq!(
        with(&|s| s.registration_deadline_ms = T0),
        Err(SettingsError::DeadlinePast {
            deadline: T0,
            now: T0
        })
    );
    assert_eq!(
        with(&|s| s.start_time_ms = Some(DEADLINE - 1)),
        Err(SettingsError::StartBeforeDeadline)
    );
    assert_eq!(
        with(&|s| s.turn_clock_secs = 0),
        Err(SettingsError::TurnClock(0))
    );
    assert_eq!(
        with(&|s| s.min_rating = Some(f64::NAN)),
        Err(SettingsError::MinRating)
    );
    assert_eq!(
        with(&|s| s.bot_fill = Some(BotFill {
            up_to: 1,
            level: BotLevel::Random,
            think_ms: 0
        })),
        Err(SettingsError::BotFillUpTo(1))
    );
    assert_eq!(
        with(&|s| s.bot_fill = Some(BotFill {
            up_to: 4,
            level: BotLevel::Random,
            think_ms: 15_000
        })),
        Err(SettingsError::BotThink(15_000))
    );
    assert_eq!(
        with(&|s| s.spectator_delay_throws = 21),
        Err(SettingsError::SpectatorDelay(21))
    );
    assert_eq!(
        with(&|s| s.table_size = Some(4)),
        Err(SettingsError::TablesNotIndividualKnockout),
        "pairs tables are two teams"
    );
    let individual = |size: Option<u8>, advance: Option<u8>| {
        let mut s = settings("online");
        s.table_size = size;
        s.advance = advance;
        check(&s)
    };
    assert_eq!(individual(Some(4), Some(2)), Ok(()));
    assert_eq!(individual(Some(3), None), Ok(()));
    assert_eq!(
        individual(Some(5), None),
        Err(SettingsError::TableSize {
            got: 5,
            min: 2,
            max: 4
        })
    );
    assert_eq!(
        individual(Some(4), Some(3)),
        Err(SettingsError::Advance { got: 3, table: 4 })
    );
    assert_eq!(
        individual(Some(2), Some(2)),
        Err(SettingsError::Advance { got: 2, table: 2 })
    );
    assert_eq!(
        with(&|s| s.no_show_minutes = 0),
        Err(SettingsError::NoShow(0))
    );
}

#[test]
fn the_contract_body_parses_with_its_defaults() {
    let body = format!(
        r#"{{"name": "Club", "preset": "pairs", "format": "knockout",
            "registration_deadline_ms": {DEADLINE}, "turn_clock_secs": 15,
            "spectator_delay_throws": 3,
            "bot_fill": {{"up_to": 5, "level": "random", "think_ms": 0}}}}"#
    );
    let s: Settings = serde_json::from_str(&body).expect("parses");
    assert_eq!(s.preset, "pairs");
    assert_eq!(s.no_show_minutes, 5);
    assert_eq!(s.bot_fill.map(|b| b.up_to), Some(5));
    assert_eq!(check(&s), Ok(()));
    let swiss: Settings = serde_json::from_str(&format!(
        r#"{{"name": "S", "format": "swiss", "rounds": 3, "registration_deadline_ms": {DEADLINE}}}"#
    ))
    .expect("parses");
    assert_eq!((swiss.format, swiss.rounds), (Format::Swiss, Some(3)));
    assert_eq!(swiss.spectator_delay_throws, 3);
    assert!(serde_json::from_str::<Settings>(
        r#"{"name": "x", "registration_deadline_ms": 1, "colour": 1}"#
    )
    .is_err());
}

#[test]
fn a_pair_registers_and_waits_for_the_partner() {
    let mut h = Harness::new(settings("pairs"));
    let (a, b) = (account(1, None), account(2, None));
    assert_eq!(
        h.send(Input::Register {
            account: a.clone(),
            partner: None,
            team_name: None
        }),
        Err(CommandError::PartnerRequired)
    );
    assert_eq!(
        h.send(Input::Register {
            account: a.clone(),
            partner: Some(a.clone()),
            team_name: None
        }),
        Err(CommandError::OwnPartner)
    );
    h.send(Input::Register {
        account: a.clone(),
        partner: Some(b.clone()),
        team_name: Some("Los de Cuenca".into()),
    })
    .expect("registers");
    let e = h.t.entrant(EntrantId(1)).expect("entrant");
    assert_eq!(e.status, EntrantStatus::PendingPartner);
    assert_eq!(e.name, "Los de Cuenca");
    // Only the partner confirms; neither may register again.
    assert_eq!(
        h.send(Input::ConfirmPartner { account: a.id }),
        Err(CommandError::NothingToConfirm)
    );
    assert_eq!(
        h.send(Input::Register {
            account: account(3, None),
            partner: Some(b.clone()),
            team_name: None
        }),
        Err(CommandError::AlreadyRegistered(b.id))
    );
    h.send(Input::ConfirmPartner { account: b.id })
        .expect("confirms");
    assert_eq!(
        h.t.entrant(EntrantId(1)).expect("e").status,
        EntrantStatus::Registered
    );
    h.assert_replays();
}

#[test]
fn an_individual_preset_takes_players_alone_and_checks_the_minimum_rating() {
    let mut s = settings("online");
    s.min_rating = Some(10.0);
    let mut h = Harness::new(s);
    assert!(matches!(
        h.send(Input::Register {
            account: account(1, Some(9.5)),
            partner: None,
            team_name: None
        }),
        Err(CommandError::BelowMinRating { .. })
    ));
    assert!(matches!(
        h.send(Input::Register {
            account: account(1, None),
            partner: None,
            team_name: None
        }),
        Err(CommandError::BelowMinRating { rating: None, .. })
    ));
    assert_eq!(
        h.send(Input::Register {
            account: account(1, Some(12.0)),
            partner: Some(account(2, Some(12.0))),
            team_name: None
        }),
        Err(CommandError::NoPartnerAllowed)
    );
    h.send(Input::Register {
        account: account(1, Some(12.0)),
        partner: None,
        team_name: None,
    })
    .expect("registers");
    assert_eq!(h.t.entrant(EntrantId(1)).expect("e").name, "P1");
}

#[test]
fn unregistering_works_before_the_deadline_only() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(3);
    h.send(Input::Unregister {
        account: Uuid::from_u128(101),
    })
    .expect("the partner withdraws the team");
    assert_eq!(
        h.t.entrant(EntrantId(1)).expect("e").status,
        EntrantStatus::Withdrawn
    );
    assert_eq!(h.t.view().entrants.len(), 2);
    // Withdrawn accounts may register again.
    h.send(Input::Register {
        account: account(100, None),
        partner: Some(account(101, None)),
        team_name: None,
    })
    .expect("registers again");
    h.now = DEADLINE;
    assert_eq!(
        h.send(Input::Unregister {
            account: Uuid::from_u128(102)
        }),
        Err(CommandError::RegistrationClosed)
    );
}

/// Seed 004: "INSCRIPCIÓN HASTA LAS 22:00 DEL DOMINGO 30 DE JULIO": registration ends
/// at the deadline, and the draw is made then.
#[test]
fn the_deadline_closes_registration_drops_unconfirmed_teams_and_draws() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(4);
    h.send(Input::Register {
        account: account(1, None),
        partner: Some(account(2, None)),
        team_name: None,
    })
    .expect("registers, never confirmed");
    assert_eq!(h.t.next_wake(), Some(DEADLINE));
    h.now = DEADLINE - 1;
    assert_eq!(h.send(Input::Tick), Ok(vec![]));
    h.now = DEADLINE;
    h.send(Input::Tick).expect("closes");
    assert_eq!(h.t.phase(), Phase::Running);
    assert_eq!(
        h.t.entrant(EntrantId(5)).expect("e").status,
        EntrantStatus::Dropped
    );
    assert_eq!(h.t.seeds().len(), 4);
    assert_eq!(h.t.view().entrants.len(), 4);
    h.run_effects();
    assert_eq!(h.playing().len(), 2);
}

#[test]
fn the_organiser_may_close_early_and_bots_fill_up_to_the_number_wanted() {
    let mut s = settings("pairs");
    s.bot_fill = Some(BotFill {
        up_to: 5,
        level: BotLevel::Greedy,
        think_ms: 0,
    });
    let mut h = Harness::new(s);
    h.register_pairs(2);
    assert_eq!(
        h.send(Input::Close {
            by: Uuid::from_u128(100)
        }),
        Err(CommandError::NotOrganiser)
    );
    h.close();
    let view = h.t.view();
    assert_eq!(view.entrants.len(), 5);
    let bots: Vec<_> = view
        .entrants
        .iter()
        .filter(|e| e.players.iter().all(|p| p.bot == Some(BotLevel::Greedy)))
        .collect();
    assert_eq!(bots.len(), 3);
    assert!(bots.iter().all(|b| b.players.len() == 2));
    // Bots are unrated: with the people unrated too, all are seeded at random.
    assert_eq!(h.t.seeds().len(), 5);
    // A match of two bot teams starts at once: its seats need nobody.
    h.play_out(&mut rand::rngs::mock::StepRng::new(0, 1));
    assert_eq!(h.t.phase(), Phase::Finished);
    assert_eq!(h.t.view().matches.len(), 4);
}

#[test]
fn closing_early_needs_two_entrants_and_the_deadline_cancels_with_fewer() {
    let mut h = Harness::new(settings("online"));
    h.register_players(1);
    assert_eq!(
        h.send(Input::Close { by: ORGANISER }),
        Err(CommandError::TooFewEntrants(1))
    );
    h.now = DEADLINE;
    h.send(Input::Tick).expect("cancels");
    assert_eq!(h.t.phase(), Phase::Finished);
    assert!(h.t.cancelled().is_some());
    assert_eq!(h.t.champion(), None);
}

#[test]
fn round_one_waits_for_the_start_time() {
    let mut s = settings("pairs");
    s.start_time_ms = Some(DEADLINE + 600_000);
    let mut h = Harness::new(s);
    h.register_pairs(2);
    h.close();
    let m = h.t.match_(parchis_tournament::MatchId(1)).expect("drawn");
    assert_eq!(m.status, MatchStatus::Pending);
    assert!(h.rooms.is_empty());
    assert_eq!(h.t.next_wake(), Some(DEADLINE + 600_000));
    h.now = DEADLINE + 600_000;
    h.send(Input::Tick).expect("starts");
    h.run_effects();
    assert_eq!(h.playing().len(), 1);
}

#[test]
fn the_view_keeps_the_contracts_fields() {
    let mut h = Harness::new(settings("pairs"));
    h.register_pairs(3);
    let v = serde_json::to_value(h.t.view()).expect("serialises");
    assert_eq!(v["status"], "registering");
    assert_eq!(v["format"], "knockout");
    assert_eq!(v["preset"], "pairs");
    assert_eq!(v["id"], Uuid::from_u128(42).to_string());
    assert!(v["champion"].is_null());
    let e = &v["entrants"][0];
    assert_eq!(e["id"], 1);
    assert_eq!(e["name"], "P100 & P101");
    assert_eq!(e["players"].as_array().map(Vec::len), Some(2));
    h.close();
    let v = serde_json::to_value(h.t.view()).expect("serialises");
    assert_eq!(v["status"], "running");
    let m = &v["matches"][0];
    for key in ["id", "round", "entrants", "status", "game_id", "winner"] {
        assert!(m.get(key).is_some(), "match has {key}");
    }
    assert_eq!(m["status"], "playing");
    assert!(
        m["game_id"].is_string(),
        "game_id is set as soon as the game starts"
    );
    assert!(m["winner"].is_null());
    let mut rng = rand::rngs::mock::StepRng::new(0, 1);
    h.play_out(&mut rng);
    let v = serde_json::to_value(h.t.view()).expect("serialises");
    assert_eq!(v["status"], "finished");
    assert!(v["champion"].is_u64());
    // The schema of the view can be generated (for proto/schema later).
    let schema = schemars::schema_for!(parchis_tournament::TournamentView);
    assert!(serde_json::to_string(&schema)
        .expect("json")
        .contains("champion"));
    let _ = Tournament::from_entries(&h.log).expect("folds");
}

#[test]
fn registrations_are_bounded_even_when_withdrawn() {
    use parchis_tournament::settings::MAX_ENTRANTS;
    let mut h = Harness::new(settings("online"));
    let mut refused = None;
    for i in 0..(5 * MAX_ENTRANTS as u128) {
        let r = h.send(Input::Register {
            account: account(i, None),
            partner: None,
            team_name: None,
        });
        if let Err(e) = r {
            refused = Some((i, e));
            break;
        }
        h.send(Input::Unregister {
            account: Uuid::from_u128(i),
        })
        .expect("withdraws");
    }
    assert_eq!(
        refused,
        Some((4 * MAX_ENTRANTS as u128, CommandError::Full))
    );
}
