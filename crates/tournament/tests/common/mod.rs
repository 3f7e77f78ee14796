//! A simulated driver for the director core: it stores every decided event in a log,
//! commits it, and plays the rooms' part for the effects (rooms open at once, players
//! sit when told, games start when started and end with the results a test gives).

#![allow(dead_code)]

use parchis_engine::Colour;
use parchis_tournament::{
    Account, CommandError, Effect, Entry, Input, MatchId, MatchStatus, Ms, Official, Settings,
    Tournament,
};
use rand::seq::SliceRandom;
use rand::Rng;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The organiser's account in every test.
pub const ORGANISER: Uuid = Uuid::from_u128(0xA11CE);
/// Creation time of every test tournament.
pub const T0: Ms = 1_700_000_000_000;
/// Its registration deadline: one hour later.
pub const DEADLINE: Ms = T0 + 3_600_000;

/// Account `i` (rated `rating`).
pub fn account(i: u128, rating: Option<f64>) -> Account {
    Account {
        id: Uuid::from_u128(i),
        name: format!("P{i}"),
        rating,
    }
}

/// Settings for a test: `preset`, deadline in an hour.
pub fn settings(preset: &str) -> Settings {
    let mut s = Settings::new("Club", DEADLINE);
    s.preset = preset.to_owned();
    s
}

/// A room the simulated room layer holds.
#[derive(Clone, Debug)]
pub struct Room {
    pub id: MatchId,
    pub accounts: Vec<Uuid>,
    pub game: Option<Uuid>,
    pub closed: bool,
    pub creates: u32,
}

pub struct Harness {
    pub t: Tournament,
    pub log: Vec<Entry>,
    pub now: Ms,
    /// Every effect returned, in order.
    pub effects: Vec<Effect>,
    /// Effects not yet acted on.
    pub pending: Vec<Effect>,
    pub rooms: BTreeMap<String, Room>,
    /// Players sit as soon as their room opens.
    pub auto_seat: bool,
    next_game: u128,
}

impl Harness {
    pub fn new(settings: Settings) -> Harness {
        let organiser = Official {
            account: ORGANISER,
            name: "Organiser".into(),
        };
        let created = Tournament::create(Uuid::from_u128(42), organiser, settings, [7; 32], T0)
            .expect("valid settings");
        let log = vec![created];
        let t = Tournament::from_entries(&log).expect("folds");
        Harness {
            t,
            log,
            now: T0,
            effects: Vec::new(),
            pending: Vec::new(),
            rooms: BTreeMap::new(),
            auto_seat: true,
            next_game: 1,
        }
    }

    /// Decides, stores, commits; keeps the effects.
    pub fn send(&mut self, input: Input) -> Result<Vec<Effect>, CommandError> {
        let entries = self.t.handle(input, self.now)?;
        self.log.extend(entries.iter().cloned());
        let fx = self.t.commit(&entries).expect("decided events fold");
        self.effects.extend(fx.iter().cloned());
        self.pending.extend(fx.iter().cloned());
        Ok(fx)
    }

    /// Registers `n` pairs (accounts 2k+100, 2k+101), both confirmed.
    pub fn register_pairs(&mut self, n: u128) {
        for k in 0..n {
            let (a, b) = (account(100 + 2 * k, None), account(101 + 2 * k, None));
            let partner = b.id;
            self.send(Input::Register {
                account: a,
                partner: Some(b),
                team_name: None,
            })
            .expect("registers");
            self.send(Input::ConfirmPartner { account: partner })
                .expect("confirms");
        }
    }

    /// Registers `n` individual players (accounts 100 …).
    pub fn register_players(&mut self, n: u128) {
        for k in 0..n {
            self.send(Input::Register {
                account: account(100 + k, None),
                partner: None,
                team_name: None,
            })
            .expect("registers");
        }
    }

    /// Acts on the pending effects as a room layer would, until none are left.
    pub fn run_effects(&mut self) {
        while !self.pending.is_empty() {
            let fx = std::mem::take(&mut self.pending);
            for e in fx {
                self.act(e);
            }
        }
    }

    fn act(&mut self, e: Effect) {
        match e {
            Effect::CreateRoom(spec) => {
                let room = self.rooms.entry(spec.room.clone()).or_insert(Room {
                    id: spec.id,
                    accounts: spec.seats.iter().filter_map(|s| s.account).collect(),
                    game: None,
                    closed: false,
                    creates: 0,
                });
                room.creates += 1;
                let accounts = room.accounts.clone();
                self.send(Input::RoomOpened {
                    id: spec.id,
                    room: spec.room,
                })
                .expect("room opened");
                if self.auto_seat {
                    self.seat_all(spec.id, &accounts);
                }
            }
            Effect::StartRoom { id, room, .. } => {
                let r = self.rooms.get_mut(&room).expect("started room exists");
                if r.game.is_none() {
                    r.game = Some(Uuid::from_u128(0x6A3E_0000 + self.next_game));
                    self.next_game += 1;
                }
                let game_id = r.game.expect("set");
                self.send(Input::GameStarted { id, game_id })
                    .expect("game started");
            }
            Effect::CloseRoom { room } => {
                if let Some(r) = self.rooms.get_mut(&room) {
                    r.closed = true;
                }
                self.send(Input::RoomClosed { room }).expect("closed");
            }
            Effect::PauseClock { .. }
            | Effect::ResumeClock { .. }
            | Effect::Expel { .. }
            | Effect::Publish => {}
        }
    }

    /// Tells the director that `accounts` sit in match `id`'s room (told again after a
    /// restart: a match whose game started refuses it, harmlessly).
    fn seat_all(&mut self, id: MatchId, accounts: &[Uuid]) {
        for &account in accounts {
            match self.send(Input::Seated { id, account }) {
                Ok(_) | Err(CommandError::MatchState { .. }) => {}
                Err(e) => panic!("seat refused: {e}"),
            }
        }
    }

    /// Acts on the first pending effect; false when none is pending.
    pub fn step_one(&mut self) -> bool {
        if self.pending.is_empty() {
            return false;
        }
        let e = self.pending.remove(0);
        self.act(e);
        true
    }

    /// A kill -9 of the director: its memory and the effects it had not acted on are
    /// lost; it folds its stored log again and does what is still owed. The rooms live
    /// on and tell it again who sits in the rooms it knows as open.
    pub fn restart(&mut self) {
        self.t = Tournament::from_entries(&self.log).expect("the log folds");
        self.pending = self.t.outstanding();
        let open: Vec<(MatchId, Vec<Uuid>)> = self
            .t
            .matches()
            .filter(|m| m.status == MatchStatus::Open)
            .filter_map(|m| {
                let room = self.rooms.get(m.room.as_deref()?)?;
                Some((m.id, room.accounts.clone()))
            })
            .collect();
        if self.auto_seat {
            for (id, accounts) in open {
                self.seat_all(id, &accounts);
            }
        }
    }

    /// The matches whose game is running.
    pub fn playing(&self) -> Vec<MatchId> {
        self.t
            .matches()
            .filter(|m| m.status == MatchStatus::Playing)
            .map(|m| m.id)
            .collect()
    }

    /// Ends match `id`'s game with the colours in `places` order.
    pub fn finish(&mut self, id: MatchId, places: Vec<Colour>) {
        let game_id = self.t.match_(id).and_then(|m| m.game_id).expect("playing");
        self.send(Input::GameFinished {
            id,
            game_id,
            places,
        })
        .expect("result taken");
        self.run_effects();
    }

    /// Plays every running game to a random result until nothing runs.
    pub fn play_out(&mut self, rng: &mut impl Rng) {
        self.run_effects();
        let mut guard = 0;
        while let Some(&id) = self.playing().first() {
            let mut colours: Vec<Colour> = self
                .t
                .match_(id)
                .map(|m| m.seats.iter().map(|s| s.colour).collect())
                .unwrap_or_default();
            colours.shuffle(rng);
            self.finish(id, colours);
            guard += 1;
            assert!(guard < 10_000, "the tournament does not end");
        }
    }

    /// The log folds back into the same state.
    pub fn assert_replays(&self) {
        let replayed = Tournament::from_entries(&self.log).expect("the log folds");
        assert_eq!(replayed, self.t, "replaying the log gives the same state");
        let json = serde_json::to_string(&self.log).expect("serialises");
        let back: Vec<Entry> = serde_json::from_str(&json).expect("deserialises");
        assert_eq!(back, self.log, "the log survives JSON");
        assert_eq!(Tournament::from_entries(&back).expect("folds"), self.t);
    }

    /// Closes registration by the organiser and runs the effects.
    pub fn close(&mut self) {
        self.send(Input::Close { by: ORGANISER }).expect("closes");
        self.run_effects();
    }
}
