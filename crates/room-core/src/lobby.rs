//! The lobby: taking a seat, changing colour, freeing a seat, and the start of the game
//! (bots fill the free seats, the opening roll R-FIRST, the first clock) — written to the
//! store in one transaction.
//!
//! Why one file of ~660 lines: the lobby's commands all change the same seats and are
//! stored in the same start transaction; splitting seat changes from the start would
//! separate the start from the seats it fills (a split is due when it grows again).

use crate::core::{Core, Effect, Staged};
use crate::dice::DiceSource;
use crate::persist::{self, Write};
use crate::plan::{BotFill, SeatAsk, StartPlan};
use crate::seat::{bot_kind, Seat, SeatBot};
use crate::{ConnId, Member, Ms, Refusal};
use parchis_engine::fair_dice;
use parchis_engine::{Colour, FirstPlayer, Game};
use parchis_protocol::{
    ErrorCode, OpeningRollEntry, Role, RoomEvent, RoomStatus, ServerMessage, MAX_NAME_CHARS,
};
use parchis_records::{hash_token, GameStart};
use rand::Rng;

/// Checks a display name: 1 to [`MAX_NAME_CHARS`] printable characters after trimming.
fn valid_name(name: &str) -> Result<String, Refusal> {
    let name = name.trim().to_owned();
    let chars = name.chars().count();
    if chars == 0 || chars > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(Refusal::new(
            ErrorCode::BadRequest,
            format!("a display name has 1 to {MAX_NAME_CHARS} printable characters"),
        ));
    }
    Ok(name)
}

/// A rated room seats logged-in players only, one seat per account (issue 26): a guest
/// gets `not_logged_in`, a second seat of one account `already_joined`.
fn check_rated_seat(seats: &[Seat], account: Option<uuid::Uuid>) -> Result<(), Refusal> {
    let Some(account) = account else {
        return Err(Refusal::new(
            ErrorCode::NotLoggedIn,
            "this room is rated: log in to take a seat (guests can watch)",
        ));
    };
    if let Some(seat) = seats.iter().find(|s| s.account == Some(account)) {
        return Err(Refusal::new(
            ErrorCode::AlreadyJoined,
            format!(
                "this room is rated: your account already holds the {} seat",
                seat.colour
            ),
        ));
    }
    Ok(())
}

impl Core {
    /// A person asks for a seat (lobby only); the seat is stored before anyone hears of it.
    pub(super) fn join(&mut self, conn: ConnId, req: u64, ask: SeatAsk, token: String, now: Ms) {
        match self.join_seat(ask, &token, now) {
            Ok(seat) => {
                let record = persist::seat_record(&self.code, &seat);
                let staged = Staged::Join {
                    seat,
                    conn,
                    req,
                    token,
                };
                self.stage(Write::UpsertSeat(record), staged);
            }
            Err(refusal) => self.emit(Effect::Reply(Err(refusal))),
        }
    }

    fn join_seat(&self, ask: SeatAsk, token: &str, now: Ms) -> Result<Seat, Refusal> {
        let SeatAsk {
            name,
            colour,
            client_seed,
            account,
            ratings,
        } = ask;
        if self.status != RoomStatus::Lobby {
            return Err(Refusal::new(
                ErrorCode::GameStarted,
                "the game has started: you can still watch as a spectator",
            ));
        }
        if self.director.is_some() {
            return Err(Refusal::code(ErrorCode::SeatReserved));
        }
        if self.settings.rated {
            check_rated_seat(&self.seats, account)?;
        }
        let name = valid_name(&name)?;
        if let Some(seed) = &client_seed {
            fair_dice::validate_client_seed(seed)
                .map_err(|m| Refusal::new(ErrorCode::BadRequest, m))?;
        }
        if self.seats.len() >= usize::from(self.settings.seats) {
            return Err(Refusal::code(ErrorCode::RoomFull));
        }
        let colour = match colour {
            Some(c) if self.taken(c) => {
                return Err(Refusal::new(
                    ErrorCode::ColourTaken,
                    format!("{c} is taken; free colours: {:?}", self.free_colours()),
                ))
            }
            Some(c) => c,
            None => match self.free_colours().first() {
                Some(c) => *c,
                None => return Err(Refusal::code(ErrorCode::RoomFull)),
            },
        };
        Ok(Seat {
            id: self.next_seat_id,
            colour,
            name,
            token_hash: hash_token(token),
            creator: self.seats.is_empty(),
            joined_at_ms: now,
            conn: None,
            reattached: false,
            grace_until: None,
            abandoned: false,
            bot: None,
            client_seed,
            stale_seqs: false,
            rating: crate::rated::seat_rating(&self.rules, account, &ratings),
            account,
        })
    }

    /// The new seat is stored: everyone hears of it, then the joiner gets its welcome.
    pub(super) fn join_stored(
        &mut self,
        seat: Seat,
        conn: ConnId,
        req: u64,
        token: String,
        now: Ms,
    ) {
        self.next_seat_id += 1;
        let (seat_id, colour, creator) = (seat.id, seat.colour, seat.creator);
        let event = RoomEvent::PlayerJoined {
            colour,
            name: seat.name.clone(),
            creator,
            bot: None,
        };
        self.seats.push(seat);
        self.broadcast_events(vec![event], now, None);
        self.emit(Effect::Publish);
        self.obs.player_joined(&self.code, colour, conn, creator);
        if let Some(i) = self.seat_index(seat_id) {
            self.seats[i].conn = Some(conn);
            self.seats[i].reattached = false;
        }
        self.emit(Effect::Attach { conn });
        let welcome = ServerMessage::Welcome {
            req,
            room: self.code.clone(),
            role: Role::Player,
            colour: Some(colour),
            token: Some(token),
            seq: self.seq,
            snapshot: Some(Box::new(self.view())),
        };
        self.send_to(conn, &welcome);
        self.presence();
        self.emit(Effect::Reply(Ok(Member::Player(seat_id))));
    }

    /// Seat `i` changes colour (lobby only).
    pub(super) fn choose_colour(&mut self, i: usize, colour: Colour, conn: ConnId, req: u64) {
        if self.status != RoomStatus::Lobby {
            return self.reply_err(conn, req, &Refusal::code(ErrorCode::GameStarted));
        }
        let from = self.seats[i].colour;
        if from == colour {
            return self.reply_ok(conn, req);
        }
        if self.taken(colour) {
            let refusal = Refusal::new(
                ErrorCode::ColourTaken,
                format!("{colour} is taken; free colours: {:?}", self.free_colours()),
            );
            return self.reply_err(conn, req, &refusal);
        }
        let mut record = persist::seat_record(&self.code, &self.seats[i]);
        record.colour = colour.to_string();
        let staged = Staged::Colour {
            seat_id: self.seats[i].id,
            from,
            to: colour,
            conn,
            req,
        };
        // The old row goes and the new one comes in one transaction: a restore never
        // finds the seat twice, or not at all.
        let write = Write::Batch(vec![
            Write::DeleteSeat {
                colour: from.to_string(),
            },
            Write::UpsertSeat(record),
        ]);
        self.stage(write, staged);
    }

    /// The seat under its new colour is stored (its old row gone): everyone hears of it.
    pub(super) fn colour_stored(
        &mut self,
        seat_id: u64,
        from: Colour,
        to: Colour,
        conn: ConnId,
        req: u64,
        now: Ms,
    ) {
        if let Some(i) = self.seat_index(seat_id) {
            self.seats[i].colour = to;
        }
        self.broadcast_events(vec![RoomEvent::ColourChanged { from, to }], now, None);
        self.emit(Effect::Publish);
        self.obs.colour_changed(&self.code, from, to, conn);
        self.reply_ok(conn, req);
    }

    /// Frees a seat before the start (`why`: `left`, `grace_expired`): its row goes, and
    /// when it created the room the creator role passes to the next player, in one
    /// durable write; nobody hears of it before that write is stored
    /// ([`Core::seat_left`]). A `leave`'s `ok` waits for it too ([`Work::ReplyOk`]).
    pub(super) fn free_seat(&mut self, seat_id: u64, why: &'static str, _now: Ms) {
        if let Some(write) = self.release_write(seat_id) {
            self.stage(write, Staged::Leave { seat_id, why });
        }
    }

    /// The one write that frees seat `seat_id`: its row deleted and, when it created the
    /// room, the next player's row as creator. `None` for a seat the room does not have.
    fn release_write(&self, seat_id: u64) -> Option<Write> {
        let i = self.seat_index(seat_id)?;
        let mut writes = vec![Write::DeleteSeat {
            colour: self.seats[i].colour.to_string(),
        }];
        if self.seats[i].creator {
            if let Some(next) = self.seats.iter().find(|s| s.id != seat_id) {
                let mut record = persist::seat_record(&self.code, next);
                record.is_creator = true;
                writes.push(Write::UpsertSeat(record));
            }
        }
        Some(Write::Batch(writes))
    }

    /// The freed seat is stored: it goes, the creator role passes on, everyone hears of it.
    pub(super) fn seat_left(&mut self, seat_id: u64, why: &'static str, now: Ms) {
        let Some(i) = self.seat_index(seat_id) else {
            return;
        };
        let seat = self.seats.remove(i);
        let mut events = vec![RoomEvent::PlayerLeft {
            colour: seat.colour,
        }];
        if seat.creator {
            if let Some(next) = self.seats.first_mut() {
                next.creator = true;
                events.push(RoomEvent::CreatorChanged {
                    colour: next.colour,
                });
            }
        }
        self.obs.seat_freed(&self.code, seat.colour, seat.conn, why);
        // Keep the leaving connection in the loop for its `ok`; drop it afterwards.
        if let Some(conn) = seat.conn {
            self.spectators.push(conn);
        }
        self.broadcast_events(events, now, None);
        self.emit(Effect::Publish);
    }

    /// Freeing a seat could not be stored: the seat stays. A grace period that ran out is
    /// tried again a moment later ([`crate::core::TIMEOUT_RETRY_MS`]); a `leave` is
    /// refused (the player may send it again).
    pub(super) fn leave_failed(&mut self, seat_id: u64, why: &'static str, now: Ms) {
        let Some(i) = self.seat_index(seat_id) else {
            return;
        };
        crate::note!(self, Warn, "seat not freed: its write failed", "why={why}");
        if why == "grace_expired" && self.seats[i].conn.is_none() {
            self.seats[i].grace_until = Some(now + crate::core::TIMEOUT_RETRY_MS);
        }
    }

    /// Frees an abandoned seat as a rematch begins: its write ([`Core::release_write`],
    /// its rows) is returned to be stored in the same transaction as the rematch's start
    /// ([`Core::start`]), so the stored seats and the new game's log agree: both or
    /// neither. `None` for a seat the room does not have.
    pub(super) fn release_abandoned_seat(&mut self, seat_id: u64, now: Ms) -> Vec<Write> {
        let Some(write) = self.release_write(seat_id) else {
            return Vec::new();
        };
        self.seat_left(seat_id, "rematch", now);
        match write {
            Write::Batch(writes) => writes,
            one => vec![one],
        }
    }

    /// The next throw of the fair dice (`docs/FAIR_DICE.md`): the rule set's 1 or 2 dice
    /// of throw number [`DiceSource::next`]; it is used up only once its events are durable.
    pub(super) fn throw(&self) -> Vec<u8> {
        self.dice.throw(self.dice.next())
    }

    /// Sets seat `i`'s client seed for the fair dice, before the start (kept in memory:
    /// a lobby restored after a restart starts again from the defaults and a new server
    /// seed).
    pub(super) fn set_client_seed(&mut self, i: usize, seed: String) -> Result<(), Refusal> {
        if self.status != RoomStatus::Lobby {
            return Err(Refusal::new(
                ErrorCode::GameStarted,
                "the client seeds were fixed at the start",
            ));
        }
        fair_dice::validate_client_seed(&seed)
            .map_err(|m| Refusal::new(ErrorCode::BadRequest, m))?;
        self.seats[i].client_seed = Some(seed);
        Ok(())
    }

    /// The opening roll (R-FIRST) for rule sets whose first player is not the creator:
    /// every seated colour throws the dice (the next throws of `dice`); a tie for the
    /// best value makes the tied colours throw again. Returns one `opening_roll` event
    /// per round, the winner and the number of throws made.
    fn opening_roll(
        &self,
        dice: &DiceSource,
        colours: &[Colour],
    ) -> (Vec<RoomEvent>, Option<Colour>, u64) {
        let mut events = Vec::new();
        let mut rollers = colours.to_vec();
        let mut k = dice.next();
        // A tie among n players repeats with probability < 1/6; 100 rounds never tie.
        for _ in 0..100 {
            let mut entries = Vec::new();
            for &colour in &rollers {
                let thrown = dice.throw(k);
                entries.push(OpeningRollEntry {
                    colour,
                    value: thrown.iter().sum(),
                    throw: Some(k),
                    dice: thrown,
                });
                k += 1;
            }
            let rolls: Vec<(Colour, u8)> = entries.iter().map(|e| (e.colour, e.value)).collect();
            let first = self.rules.first_by_roll(&rolls);
            events.push(RoomEvent::OpeningRoll {
                rolls: entries,
                first,
            });
            if first.is_some() {
                return (events, first, k - dice.next());
            }
            let best = match self.rules.first_player {
                FirstPlayer::LowestRoll => rolls.iter().map(|r| r.1).min(),
                _ => rolls.iter().map(|r| r.1).max(),
            };
            rollers = rolls
                .iter()
                .filter(|r| Some(r.1) == best)
                .map(|r| r.0)
                .collect();
        }
        (events, None, k - dice.next())
    }

    /// The creator (seat `i`) starts the game; `releases`: seat rows a rematch frees,
    /// stored in the start's own transaction. A rematch whose start would be refused for
    /// its seats is refused before it frees any ([`super::rematch::enough_to_start`]);
    /// should the start still be refused (nothing stored: a refusal the rematch cannot
    /// foresee), the deletes are stored on their own, best effort.
    pub(super) fn start(
        &mut self,
        i: usize,
        conn: ConnId,
        req: u64,
        now: Ms,
        releases: Vec<Write>,
    ) {
        match self.start_plan(i, conn, req, now) {
            Ok(plan) => {
                let start = self.start_write(&plan);
                let write = if releases.is_empty() {
                    start
                } else {
                    let mut writes = releases;
                    writes.push(start);
                    Write::Batch(writes)
                };
                self.stage(write, Staged::Start(Box::new(plan)));
            }
            Err(refusal) => {
                if !releases.is_empty() {
                    self.emit(Effect::Store(Write::Batch(releases)));
                }
                self.reply_err(conn, req, &refusal)
            }
        }
    }

    /// The free colours bots take at the start ("play against the computer").
    fn bot_fill(&self) -> Vec<Colour> {
        match self.settings.bots {
            Some(_) => self
                .free_colours()
                .into_iter()
                .take(usize::from(self.settings.seats).saturating_sub(self.seats.len()))
                .collect(),
            None => Vec::new(),
        }
    }

    /// The colours of the game seat `i` starts, seats first, then the free colours bots
    /// fill (also returned): only the creator starts, in the lobby, with enough players
    /// for the rule set (R-SEAT), checked before any dice are thrown.
    fn starting_colours(&self, i: usize) -> Result<(Vec<Colour>, Vec<Colour>), Refusal> {
        if self.status != RoomStatus::Lobby {
            return Err(Refusal::code(ErrorCode::GameStarted));
        }
        if !self.seats[i].creator {
            return Err(Refusal::code(ErrorCode::NotCreator));
        }
        let rules = self.rules;
        let fill = self.bot_fill();
        let seated = self.seats.len() + fill.len();
        if seated < 2 || seated < usize::from(rules.min_players) {
            return Err(Refusal::new(
                ErrorCode::NotEnoughPlayers,
                format!(
                    "{} needs at least {} players to start; {seated} seated",
                    rules.name(),
                    rules.min_players.max(2)
                ),
            ));
        }
        let mut colours: Vec<Colour> = self.seats.iter().map(|s| s.colour).collect();
        colours.extend(&fill);
        let creator = self.seats[i].colour;
        // Check the seats before any dice are thrown.
        Game::new(rules, &colours, creator)
            .map_err(|e| Refusal::new(ErrorCode::BadRequest, e.to_string()))?;
        Ok((colours, fill))
    }

    /// The dice of the game about to start among `colours` (docs/FAIR_DICE.md): a rematch
    /// never reuses the server seed its last game revealed (new seed, throw numbers
    /// from 0), and the client seeds are fixed now; bots and players who gave none get
    /// the default.
    fn dice_for_game(&mut self, colours: &[Colour]) -> Result<DiceSource, Refusal> {
        // A room's next game (a rematch) never reuses the server seed its last one
        // revealed: new seed, throw numbers from 0.
        if self.dice.is_fixed() {
            self.dice = self.dice.successor(&mut self.seed_rng);
        }
        // The client seeds are fixed now (docs/FAIR_DICE.md); bots and players who gave
        // none get the default.
        let chosen: Vec<(Colour, Option<String>)> = colours
            .iter()
            .map(|&c| {
                let seat = self.seats.iter().find(|s| s.colour == c);
                (c, seat.and_then(|s| s.client_seed.clone()))
            })
            .collect();
        self.dice
            .fixed(&chosen, usize::from(self.rules.dice.clamp(1, 2)))
            .map_err(|m| Refusal::new(ErrorCode::Internal, m))
    }

    fn start_plan(
        &mut self,
        i: usize,
        conn: ConnId,
        req: u64,
        now: Ms,
    ) -> Result<StartPlan, Refusal> {
        let (colours, fill) = self.starting_colours(i)?;
        let creator = self.seats[i].colour;
        let fill: Vec<BotFill> = match self.settings.bots {
            Some(level) => fill.into_iter().map(|c| (c, level, None)).collect(),
            None => Vec::new(),
        };
        self.plan_start(&colours, &fill, creator, (conn, req), now)
    }

    /// The start of a game among `colours` (seats, then the bots of `fill`): the
    /// opening roll if the rule set has one (else `creator` plays first), the game, its
    /// id and first clock. `by`: the command's `(conn, req)` answered once stored.
    pub(crate) fn plan_start(
        &mut self,
        colours: &[Colour],
        fill: &[BotFill],
        creator: Colour,
        by: (ConnId, u64),
        now: Ms,
    ) -> Result<StartPlan, Refusal> {
        let (conn, req) = by;
        let colours = colours.to_vec();
        let rules = self.rules;
        let (bots, bot_events) = self.bot_seats(fill, now);
        let mut dice = self.dice_for_game(&colours)?;
        let (opening, first) = if rules.first_player == FirstPlayer::Creator {
            (Vec::new(), creator)
        } else {
            let (events, winner, thrown) = self.opening_roll(&dice, &colours);
            dice.advance(thrown);
            (events, winner.unwrap_or(creator))
        };
        let game = Game::new(rules, &colours, first)
            .map_err(|e| Refusal::new(ErrorCode::BadRequest, e.to_string()))?;
        let random: [u8; 10] = self.id_rng.gen();
        let game_id =
            uuid::Builder::from_unix_timestamp_millis(now.max(0) as u64, &random).into_uuid();
        let deadline = self.fresh_deadline(now);
        let mut events = opening;
        events.extend([
            RoomEvent::GameStarted {
                game_id: game_id.to_string(),
                first,
                position: game.to_position(),
                dice: Some(Box::new(dice.info(false))),
            },
            RoomEvent::Turn {
                colour: first,
                deadline_ms: deadline,
            },
        ]);
        Ok(StartPlan {
            conn,
            req,
            director: false,
            bots,
            bot_events,
            game,
            game_id,
            events,
            deadline,
            at_ms: now,
            first,
            dice,
        })
    }

    /// Bot seats (with their `player_joined` events) for the colours in `fill`, each
    /// with its level and name (default: "Greedy bot 2").
    fn bot_seats(&mut self, fill: &[BotFill], now: Ms) -> (Vec<Seat>, Vec<RoomEvent>) {
        let mut seats = Vec::new();
        let mut events = Vec::new();
        for (n, (colour, level, name)) in fill.iter().enumerate() {
            let (colour, level) = (*colour, *level);
            let kind = bot_kind(level).name();
            let mut chars = kind.chars();
            let title: String = chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
                .collect();
            let name = name
                .clone()
                .unwrap_or_else(|| format!("{title} bot {}", n + 1));
            let seed = self.rng.gen();
            seats.push(Seat {
                id: self.next_seat_id + n as u64,
                colour,
                name: name.clone(),
                token_hash: String::new(),
                creator: false,
                joined_at_ms: now,
                conn: None,
                reattached: false,
                grace_until: None,
                abandoned: false,
                bot: Some(SeatBot::new(level, seed)),
                client_seed: None,
                stale_seqs: false,
                rating: None,
                account: None,
            });
            events.push(RoomEvent::PlayerJoined {
                colour,
                name,
                creator: false,
                bot: Some(level),
            });
        }
        (seats, events)
    }

    /// The start's one transaction: game row, room status, bot seats, first events.
    pub(crate) fn start_write(&mut self, plan: &StartPlan) -> Write {
        // The bots' `player_joined` events come first (lobby events: not stored).
        let first_seq = self.seq + plan.bot_events.len() as u64 + 1;
        // A new game's packed log starts here (the encoder is kept once it is stored); its
        // first piece is all the start stores of the events (no JSON row: a new game is
        // never stored as rows). Their last frame carries the game's first position
        // (`start_stored`): marked.
        let mut encoder = crate::throws::Encoder::new();
        let log = persist::pack(&mut encoder, first_seq, plan.at_ms, &plan.events, true);
        self.log_next = Some(encoder);
        Write::Start(Box::new(GameStart {
            game: persist::game_record(
                plan.game_id,
                &self.code,
                &self.rules,
                plan.at_ms,
                Some(plan.deadline),
                Some(plan.dice.stored()),
            ),
            room: persist::status_playing(plan.at_ms),
            seats: plan
                .bots
                .iter()
                .map(|s| persist::seat_record(&self.code, s))
                .collect(),
            events: Vec::new(),
            log,
        }))
    }

    /// The start is stored: bots sit down, the game starts, its first clock runs.
    pub(super) fn start_stored(&mut self, plan: StartPlan, now: Ms) {
        let _ = now;
        let bots = plan.bots.len();
        if bots > 0 {
            self.next_seat_id += bots as u64;
            self.seats.extend(plan.bots);
            self.broadcast_events(plan.bot_events, plan.at_ms, None);
            self.emit(Effect::Publish);
            crate::note!(self, Info, "bots seated", "bots={bots}");
        }
        self.game_id = Some(plan.game_id);
        self.game = Some(plan.game);
        self.dice = plan.dice;
        self.broadcast_events(plan.events, plan.at_ms, Some(plan.game));
        // The start is shown to spectators at once; a delay counts from here.
        self.delay_game_started(plan.game);
        self.paused = None;
        self.status = RoomStatus::Playing;
        self.deadline = Some(plan.deadline);
        let colours: Vec<Colour> = self.seats.iter().map(|s| s.colour).collect();
        self.obs.game_started(
            &self.code,
            plan.game_id,
            &self.settings.preset,
            &colours,
            plan.first,
        );
        self.emit(Effect::Publish);
        self.turn_pending = true;
        // A director's start is answered by the work queued after it (`referee.rs`).
        if !plan.director {
            self.reply_ok(plan.conn, plan.req);
        }
    }
}
