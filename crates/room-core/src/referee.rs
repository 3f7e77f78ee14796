//! A tournament director's room (issue 27, [`crate::reserved`]): a seat claimed by its
//! reservation's key, the director's start (no creator; absent colours left empty, bots
//! seated) or the start by itself once every reserved person claimed (a quick
//! pairing's room), and the referee's clock controls and expulsions. Every change is stored
//! before anyone hears of it, and the director is answered ([`Effect::Directed`]) only
//! then.
//!
//! * **Pause** stores `clock_paused {colour, remaining_ms}` (what was left of the
//!   throw's clock) and stops the clock: no timeout, no bot, and `roll`/`play` are
//!   refused `clock_paused`. A restored room finds the pause in its log
//!   ([`crate::replay::Replayed::paused`]) and stays paused.
//! * **Resume** stores `clock_resumed {colour, deadline_ms}` and a `turn` with the same
//!   deadline: now plus what was left at the pause.
//! * **Expel** forfeits each colour's seat (R-LEAVE, reason `disqualified`; never a bot
//!   takeover), as a `leave` in a game would.
//!
//! Asked again once done, each command answers the same and changes nothing.

use crate::core::{Core, Effect, EventsCommit, Staged, Then, Work};
use crate::reserved::{DirectorAnswer, DirectorCmd, DirectorRoom};
use crate::seat::Seat;
use crate::{ConnId, Ms, Refusal};
use parchis_engine::{fair_dice, Colour};
use parchis_protocol::{AbandonReason, ErrorCode, RoomEvent, RoomStatus};
use parchis_records::hash_token;

impl Core {
    /// Makes this room a director's room with `director`'s reservations (right after
    /// [`Core::new`], before any input; a restore does the same from the stored room).
    pub fn set_director(&mut self, director: DirectorRoom) {
        self.director = Some(director);
        self.idle_since = None;
    }

    /// The room's reservations, if a director runs it.
    pub fn director(&self) -> Option<&DirectorRoom> {
        self.director.as_ref()
    }

    /// Whether the referee holds the clock: the colour to act and what is left (ms).
    pub fn paused(&self) -> Option<(Colour, Ms)> {
        self.paused
    }

    pub(crate) fn director_answer(&self) -> DirectorAnswer {
        DirectorAnswer {
            game_id: self.game_id,
            paused: self.paused.is_some(),
        }
    }

    /// A connection claims the seat reserved for `key` (lobby only): stored, then
    /// answered like a join.
    pub(crate) fn claim(
        &mut self,
        conn: ConnId,
        req: u64,
        key: &str,
        client_seed: Option<String>,
        token: String,
        now: Ms,
    ) {
        match self.claimed_seat(key, client_seed, &token, now) {
            Ok(seat) => {
                if self.director.as_ref().is_some_and(|d| d.start_when_seated) {
                    // Runs once the claim is stored (a failed write seats nobody).
                    self.then_do([Work::StartWhenSeated]);
                }
                let record = crate::persist::seat_record(&self.code, &seat);
                let staged = Staged::Join {
                    seat,
                    conn,
                    req,
                    token,
                };
                self.stage(crate::persist::Write::UpsertSeat(record), staged);
            }
            Err(refusal) => self.emit(Effect::Reply(Err(refusal))),
        }
    }

    fn claimed_seat(
        &self,
        key: &str,
        client_seed: Option<String>,
        token: &str,
        now: Ms,
    ) -> Result<Seat, Refusal> {
        let Some(director) = &self.director else {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                "this room has no reserved seats: join it",
            ));
        };
        if self.status != RoomStatus::Lobby {
            return Err(Refusal::new(
                ErrorCode::GameStarted,
                "the game has started: resume your seat with its session token, or watch",
            ));
        }
        let Some(reserved) = director.claimed_by(key) else {
            return Err(Refusal::new(
                ErrorCode::SeatReserved,
                "no seat of this room is reserved for you",
            ));
        };
        if self.taken(reserved.colour) {
            return Err(Refusal::new(
                ErrorCode::ColourTaken,
                "your seat is taken already: resume it with its session token",
            ));
        }
        if let Some(seed) = &client_seed {
            fair_dice::validate_client_seed(seed)
                .map_err(|m| Refusal::new(ErrorCode::BadRequest, m))?;
        }
        Ok(Seat {
            id: self.next_seat_id,
            colour: reserved.colour,
            name: reserved.name.trim().to_owned(),
            token_hash: hash_token(token),
            creator: false,
            joined_at_ms: now,
            conn: None,
            reattached: false,
            grace_until: None,
            abandoned: false,
            bot: None,
            client_seed,
            stale_seqs: false,
            rating: reserved.rating,
            // A director reserves a seat for an account by its id's text (issue 27).
            account: uuid::Uuid::parse_str(key).ok(),
        })
    }

    /// A room that starts when seated ([`DirectorRoom::start_when_seated`]): starts
    /// the game, nobody absent, once every reserved person's seat is taken; else nothing.
    pub(crate) fn start_when_seated(&mut self, now: Ms) {
        let Some(director) = &self.director else {
            return;
        };
        let all = director
            .reserved
            .iter()
            .all(|r| r.bot.is_some() || self.taken(r.colour));
        if !director.start_when_seated || self.status != RoomStatus::Lobby || !all {
            return;
        }
        match self.director_start(&[], now) {
            Ok(()) => crate::note!(self, Info, "every reserved seat claimed: starting", ""),
            Err(refusal) => crate::note!(
                self,
                Warn,
                "every reserved seat claimed but the game cannot start",
                "code={:?} message={}",
                refusal.code,
                refusal.message
            ),
        }
    }

    /// The director's command.
    pub(crate) fn director_cmd(&mut self, cmd: DirectorCmd, now: Ms) {
        // Answered once what it changes is stored (after any work the command queues in
        // front of this), or at once if nothing is.
        self.then_do([Work::Directed]);
        let done = match cmd {
            DirectorCmd::Start { absent } => self.director_start(&absent, now),
            DirectorCmd::PauseClock => self.pause_clock(now),
            DirectorCmd::ResumeClock => self.resume_clock(now),
            DirectorCmd::Expel { colours } => self.expel(&colours),
        };
        if let Err(refusal) = done {
            // A refused command queued nothing: its answer is the refusal.
            if matches!(self.queue.front(), Some(Work::Directed)) {
                self.queue.pop_front();
            }
            self.emit(Effect::Directed(Err(refusal)));
        }
    }

    /// Starts the game of a director's room: every reserved colour but `absent` plays,
    /// persons seated, bots seated now.
    fn director_start(&mut self, absent: &[Colour], now: Ms) -> Result<(), Refusal> {
        let Some(director) = self.director.clone() else {
            return Err(Refusal::new(
                ErrorCode::BadRequest,
                "only a director's room is started by its director",
            ));
        };
        if self.status != RoomStatus::Lobby {
            // Started already (a retried effect): the same answer.
            return Ok(());
        }
        let playing: Vec<_> = Colour::ALL
            .into_iter()
            .filter_map(|c| director.of(c))
            .filter(|r| !absent.contains(&r.colour))
            .collect();
        let missing: Vec<Colour> = playing
            .iter()
            .filter(|r| r.bot.is_none() && !self.taken(r.colour))
            .map(|r| r.colour)
            .collect();
        if !missing.is_empty() {
            return Err(Refusal::new(
                ErrorCode::NotEnoughPlayers,
                format!("not seated yet: {missing:?}; start them as absent or wait"),
            ));
        }
        let colours: Vec<Colour> = playing.iter().map(|r| r.colour).collect();
        let fill: Vec<_> = playing
            .iter()
            .filter_map(|r| r.bot.map(|level| (r.colour, level, Some(r.name.clone()))))
            .collect();
        let rules = self.rules;
        if colours.len() < 2 || colours.len() < usize::from(rules.min_players) {
            return Err(Refusal::new(
                ErrorCode::NotEnoughPlayers,
                format!(
                    "{} needs at least {} players; {} would play",
                    rules.name(),
                    rules.min_players.max(2),
                    colours.len()
                ),
            ));
        }
        // The seats of absent colours (seated too late) are freed, best effort, as a
        // rematch frees abandoned seats.
        let late: Vec<u64> = self
            .seats
            .iter()
            .filter(|s| absent.contains(&s.colour))
            .map(|s| s.id)
            .collect();
        for id in late {
            self.release_abandoned_seat(id, now);
        }
        // No creator: with a rule set where the creator plays first, the first colour in
        // board order does.
        let first = colours[0];
        let mut plan = self.plan_start(&colours, &fill, first, (0, 0), now)?;
        plan.director = true;
        let write = self.start_write(&plan);
        self.stage(write, Staged::Start(Box::new(plan)));
        Ok(())
    }

    /// The game running, or why the clock cannot be touched.
    fn running_game(&self) -> Result<parchis_engine::Game, Refusal> {
        match (self.status, self.game) {
            (RoomStatus::Playing, Some(g)) if g.outcome().is_none() => Ok(g),
            (RoomStatus::Finished, _) => Err(Refusal::code(ErrorCode::GameOver)),
            _ => Err(Refusal::code(ErrorCode::GameNotStarted)),
        }
    }

    fn pause_clock(&mut self, now: Ms) -> Result<(), Refusal> {
        let game = self.running_game()?;
        if self.paused.is_some() {
            return Ok(());
        }
        let colour = game.turn();
        let full = self.fresh_deadline(now) - now;
        let remaining = self.deadline.map_or(full, |d| (d - now).clamp(0, full));
        self.stage_events(EventsCommit {
            game: None,
            events: vec![RoomEvent::ClockPaused {
                colour,
                remaining_ms: remaining,
            }],
            at_ms: now,
            deadline: None,
            turn: false,
            action: None,
            thrown: false,
            then: Then::Paused { colour, remaining },
        });
        crate::note!(
            self,
            Info,
            "clock paused by the referee",
            "colour={colour} remaining_ms={remaining}"
        );
        Ok(())
    }

    fn resume_clock(&mut self, now: Ms) -> Result<(), Refusal> {
        let game = self.running_game()?;
        let Some((_, remaining)) = self.paused else {
            return Ok(());
        };
        // The player to act now (an expulsion during the pause may have passed the turn).
        let colour = game.turn();
        let deadline_ms = now + remaining;
        self.stage_events(EventsCommit {
            game: None,
            events: vec![
                RoomEvent::ClockResumed {
                    colour,
                    deadline_ms,
                },
                RoomEvent::Turn {
                    colour,
                    deadline_ms,
                },
            ],
            at_ms: now,
            deadline: Some(deadline_ms),
            turn: true,
            action: None,
            thrown: false,
            then: Then::Resumed,
        });
        crate::note!(
            self,
            Info,
            "clock resumed by the referee",
            "colour={colour} deadline_ms={deadline_ms}"
        );
        Ok(())
    }

    fn expel(&mut self, colours: &[Colour]) -> Result<(), Refusal> {
        match self.status {
            RoomStatus::Finished => return Ok(()),
            RoomStatus::Lobby => return Err(Refusal::code(ErrorCode::GameNotStarted)),
            RoomStatus::Playing => {}
        }
        let works: Vec<Work> = colours
            .iter()
            .map(|&colour| Work::Forfeit {
                colour,
                reason: AbandonReason::Disqualified,
            })
            .collect();
        self.then_do(works);
        Ok(())
    }
}
