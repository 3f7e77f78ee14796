//! The room as a pure state machine (sans-IO, like quinn-proto): [`Core::handle`] takes an
//! [`Input`] and the current time (unix ms, a value) and returns [`Effect`]s for the actor
//! to carry out, in order. No tokio, no store, no sockets, no clock in here.
//!
//! Write-ahead: a step that must be durable before anyone hears of it ends its batch with
//! [`Effect::Persist`] and stops; the core keeps what it will do (a `Staged` step) and
//! waits. The actor performs the write and reports with [`Core::persisted`]: on success
//! the core applies the step (new state, broadcasts, replies), on failure it leaves its
//! state as it was and refuses with a clear error. So nothing is ever broadcast before its
//! records are stored, and a failed write changes nothing.
//!
//! Work is queued: one input may become several steps (an expired clock is applied before
//! a command, a timeout may abandon a seat, …), each with at most one durable write.
//!
//! Size (~830 lines): the room's state, its step queue, the write-ahead staging (with the
//! packed log's encoder, which moves only when a write is stored) and the dispatch of
//! every input belong to one type and are kept together so the order of a
//! step's effects can be read in one place; the parts that decide lobby, play, bots,
//! fan-out, rematch and views live in their own files.

pub use crate::effect::{BotJob, Effect, Input, WriteFailed};

use crate::dice::DiceSource;
use crate::observer::Observer;
use crate::persist::Write;
use crate::plan::{SeatAsk, StartPlan};
pub use crate::seat::Seat;
use crate::Frame;
use crate::{ConnId, Ms, SeatCmd};
use parchis_engine::{Action, Colour, Game, RuleSet};
use parchis_protocol::{AbandonReason, RoomEvent, RoomSettings, RoomStatus};
use rand_chacha::ChaCha20Rng;
use std::collections::VecDeque;
use std::sync::Arc;
use uuid::Uuid;

/// Limits of one room, from the server's configuration (its `ServerConfig::room_limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoomLimits {
    /// An empty lobby (no seats, no connections) is disposed of after this long (ms).
    pub lobby_idle_ms: Ms,
    /// At most one presence frame per this many ms; changes in between are coalesced.
    pub presence_interval_ms: Ms,
    /// Bots of a room nobody is attached to wait at least this long (ms) per action
    /// (not in a tournament director's room, whose bots keep the tournament's think time).
    pub min_unwatched_bot_think_ms: Ms,
}

impl Default for RoomLimits {
    /// The server's defaults: a 10-minute idle lobby, a presence frame per 250 ms, 1 s per
    /// unwatched bot action.
    fn default() -> Self {
        RoomLimits {
            lobby_idle_ms: 10 * 60 * 1000,
            presence_interval_ms: 250,
            min_unwatched_bot_think_ms: 1000,
        }
    }
}

/// A failed timeout write is tried again this much later (ms).
pub const TIMEOUT_RETRY_MS: Ms = 1000;

/// What the room is built from: the one constructor, shared by create and restore.
pub struct RoomInit {
    /// Room code.
    pub code: String,
    /// Settings as created.
    pub settings: RoomSettings,
    /// The rule set named by the settings.
    pub rules: RuleSet,
    /// Unix ms.
    pub created_at_ms: Ms,
    /// The bots' seeds (never the dice).
    pub rng: ChaCha20Rng,
    /// The fair dice (`docs/FAIR_DICE.md`): server seed drawn by the caller (OS CSPRNG or
    /// a test configuration), handed in as a value.
    pub dice: DiceSource,
    /// Entropy for the server seeds of the room's later games (a rematch): a CSPRNG the
    /// caller seeds from the OS.
    pub seed_rng: ChaCha20Rng,
    /// Randomness for game ids (apart from the dice, so ids never shift a seeded game).
    pub id_rng: ChaCha20Rng,
    /// Events kept for resuming clients.
    pub history_len: usize,
    /// Now (unix ms).
    pub now: Ms,
    /// The server's limits for rooms.
    pub limits: RoomLimits,
    /// Where the room's logs and metrics go.
    pub observer: Arc<dyn Observer>,
}

/// What a step does once its write is durable (or refused).
#[derive(Debug, Clone, Copy)]
pub(super) enum Then {
    /// Answer `ok` (or the error) to a command.
    Reply { conn: ConnId, req: u64 },
    /// A turn timed out: count the strikes (R-CLOCK).
    Timeout { colour: Colour },
    /// A seat abandoned: mark it.
    Abandon {
        colour: Colour,
        reason: AbandonReason,
    },
    /// A bot acted.
    Bot { colour: Colour },
    /// The referee's pause is stored: the clock of `colour` stops with `remaining` ms.
    Paused { colour: Colour, remaining: Ms },
    /// The referee's resume is stored: the clock runs.
    Resumed,
    /// Nothing more.
    Nothing,
}

/// A step waiting for its write.
pub(super) enum Staged {
    /// A person takes a seat.
    Join {
        seat: Seat,
        conn: ConnId,
        req: u64,
        token: String,
    },
    /// A seat changes colour.
    Colour {
        seat_id: u64,
        from: Colour,
        to: Colour,
        conn: ConnId,
        req: u64,
    },
    /// The game starts.
    Start(Box<StartPlan>),
    /// Events (with the game after them) are committed.
    Events(Box<EventsCommit>),
    /// A seat is given up before the start (`leave`, a grace period that ran out).
    Leave { seat_id: u64, why: &'static str },
    /// A bot takes over an abandoned seat.
    TakeOver {
        seat_id: u64,
        level: parchis_protocol::BotLevel,
        reason: AbandonReason,
        seed: u64,
        event: RoomEvent,
        at_ms: Ms,
    },
}

/// Events to commit once durable.
pub(super) struct EventsCommit {
    pub game: Option<Game>,
    pub events: Vec<RoomEvent>,
    pub at_ms: Ms,
    /// The turn deadline after the step.
    pub deadline: Option<Ms>,
    /// The player to act must get `your_turn` afterwards.
    pub turn: bool,
    /// The engine action these events record, if any (counted once durable).
    pub action: Option<Action>,
    /// The events use up the next throw number (a roll), once durable.
    pub thrown: bool,
    pub then: Then,
}

/// A unit of queued work.
#[derive(Debug)]
pub(super) enum Work {
    Input(Input),
    /// A command that passed the membership checks, after an expired clock was applied.
    Checked {
        conn: ConnId,
        seat_id: u64,
        req: u64,
        seq: u64,
        cmd: SeatCmd,
    },
    /// The turn clock, if it expired.
    Timeout,
    /// A seat's grace period, if it expired.
    Grace(u64),
    /// The bot to act acts.
    BotAct,
    /// A bot's choice, after an expired clock was applied.
    BotApply {
        seq: u64,
        colour: Colour,
        action: Action,
    },
    /// A seat leaves the game (or a bot takes it over).
    Abandon {
        colour: Colour,
        reason: AbandonReason,
    },
    /// A seat forfeits (no bot takes over).
    Forfeit {
        colour: Colour,
        reason: AbandonReason,
    },
    /// Answer `ok` to a command; `drop_link` forgets the connection afterwards (leave).
    ReplyOk {
        conn: ConnId,
        req: u64,
        drop_link: bool,
    },
    /// Answer the director's command (its error if a write of it failed).
    Directed,
    /// A director's room that starts when seated: start if every reserved person is
    /// seated now (after a claim was stored).
    StartWhenSeated,
    /// Send `your_turn` if a step asked for it.
    Flush,
}

/// The room.
pub struct Core {
    pub(super) code: String,
    pub(super) settings: RoomSettings,
    pub(super) rules: RuleSet,
    pub(super) created_at_ms: Ms,
    pub(super) status: RoomStatus,
    pub(super) seats: Vec<Seat>,
    pub(super) spectators: Vec<ConnId>,
    pub(super) next_seat_id: u64,
    pub(super) seq: u64,
    pub(super) history: VecDeque<(u64, Frame)>,
    pub(super) history_len: usize,
    pub(super) game: Option<Game>,
    pub(super) game_id: Option<Uuid>,
    /// The running game's packed log as stored so far (issue 28, [`crate::throws`]): packs
    /// each batch's piece. `None` in the lobby and for a game restored from JSON rows
    /// (stored before the packed log), which goes on as rows.
    pub(super) log: Option<crate::throws::Encoder>,
    /// The encoder past the pending write's piece, kept once that write is stored.
    pub(super) log_next: Option<crate::throws::Encoder>,
    /// Absolute deadline of the running turn clock (unix ms).
    pub(super) deadline: Option<Ms>,
    pub(super) rng: ChaCha20Rng,
    /// The fair dice: seeds and the number of the next throw.
    pub(super) dice: DiceSource,
    pub(super) seed_rng: ChaCha20Rng,
    pub(super) id_rng: ChaCha20Rng,
    /// The player to act must be sent `your_turn` once the current input is answered.
    pub(super) turn_pending: bool,
    /// Since when a lobby has had neither seats nor connections.
    pub(super) idle_since: Option<Ms>,
    /// When the bot to act acts (its think time elapsed).
    pub(super) bot_due: Option<Ms>,
    /// A bot is choosing its move off-thread.
    pub(super) bot_thinking: bool,
    /// After a game: the colours that asked for a rematch ([`crate::rematch`]).
    pub(super) rematch: Vec<Colour>,
    pub(super) out: Vec<Effect>,
    pub(super) queue: VecDeque<Work>,
    pub(super) staged: Option<Staged>,
    pub(super) limits: RoomLimits,
    /// Presence changed since the last presence frame.
    pub(super) presence_dirty: bool,
    /// When the last presence frame went out (unix ms).
    pub(super) presence_sent_at: Option<Ms>,
    /// A lobby rebuilt from the store ([`Core::lobby_restored`]): its seq started again
    /// at 0, so the seqs of connections from before mean other events.
    pub(super) lobby_restored: bool,
    /// The refusal of the last durable write of the current command that failed, until
    /// its deferred `ok` ([`Work::ReplyOk`]) is sent as this error instead: a `leave`
    /// is acknowledged only once what it changed is stored.
    pub(super) step_failure: Option<crate::Refusal>,
    /// Where logs and metrics go ([`crate::observer`]).
    pub(crate) obs: Arc<dyn Observer>,
    /// The referee stopped the clock of this colour with this much of it left (ms)
    /// ([`crate::referee`]).
    pub(super) paused: Option<(Colour, Ms)>,
    /// What spectators have been shown of a delayed game ([`crate::delay`]).
    pub(super) delay: crate::held::SpectatorDelay,
    /// A tournament director's room: its reserved seats ([`crate::reserved`]).
    pub(super) director: Option<crate::reserved::DirectorRoom>,
    /// Recent quick emotes per seat ([`crate::emote_limit`]).
    pub(super) emotes: crate::emote_limit::EmoteLimiter,
}

impl Core {
    /// The events kept for resuming clients: `(seq, frame)`, oldest first, at most
    /// `history_len` of them.
    pub fn history(&self) -> &VecDeque<(u64, Frame)> {
        &self.history
    }

    /// A new, empty lobby: the one constructor (restore adds stored seats and the game
    /// to it with [`Core::restore_seat`] and [`Core::restore_game`]).
    pub fn new(init: RoomInit) -> Core {
        Core {
            code: init.code,
            settings: init.settings,
            rules: init.rules,
            created_at_ms: init.created_at_ms,
            status: RoomStatus::Lobby,
            seats: Vec::new(),
            spectators: Vec::new(),
            next_seat_id: 1,
            seq: 0,
            history: VecDeque::new(),
            history_len: init.history_len,
            game: None,
            game_id: None,
            log: None,
            log_next: None,
            deadline: None,
            rng: init.rng,
            dice: init.dice,
            seed_rng: init.seed_rng,
            id_rng: init.id_rng,
            turn_pending: false,
            idle_since: Some(init.now),
            bot_due: None,
            bot_thinking: false,
            rematch: Vec::new(),
            out: Vec::new(),
            queue: VecDeque::new(),
            staged: None,
            limits: init.limits,
            step_failure: None,
            obs: init.observer,
            presence_dirty: false,
            presence_sent_at: None,
            lobby_restored: false,
            paused: None,
            delay: Default::default(),
            director: None,
            emotes: Default::default(),
        }
    }

    /// Handles one input at `now` (unix ms). If the returned batch ends with
    /// [`Effect::Persist`], the caller must perform it and call [`Core::persisted`] before
    /// any other input.
    pub fn handle(&mut self, input: Input, now: Ms) -> Vec<Effect> {
        if self.staged.is_some() {
            // A caller bug; refuse rather than reorder writes.
            crate::note!(self, Error, "input while a write is pending: dropped", "");
            return Vec::new();
        }
        self.queue.push_back(Work::Input(input));
        self.queue.push_back(Work::Flush);
        self.run(now)
    }

    /// The outcome of the pending [`Effect::Persist`]: `Ok` once durable, `Err` if
    /// nothing was written (a command it carried is refused as [`WriteFailed::refusal`]).
    pub fn persisted(&mut self, result: Result<(), WriteFailed>, now: Ms) -> Vec<Effect> {
        // The packed log moves past the write's piece only once that piece is stored.
        let log_next = self.log_next.take();
        if let Some(staged) = self.staged.take() {
            match result {
                Ok(()) => {
                    if log_next.is_some() {
                        self.log = log_next;
                    }
                    self.commit_staged(staged, now)
                }
                Err(e) => self.fail_staged(staged, &e, now),
            }
        }
        self.run(now)
    }

    /// What the running game stores of `events` (seqs `first_seq, …`, at `at_ms`, the
    /// last one `positioned`), in its format: for a packed game, the next piece of its
    /// log and no JSON row (no `serde_json::Value` is built); for a game stored as JSON
    /// rows (restored from rows written before issue 28: no encoder), the rows and no
    /// piece. The encoder moves past the piece when the write is stored
    /// ([`Core::persisted`]).
    pub(super) fn log_write(
        &mut self,
        first_seq: u64,
        at_ms: Ms,
        events: &[RoomEvent],
        positioned: bool,
    ) -> (
        Vec<parchis_records::EventRecord>,
        Option<parchis_records::LogPiece>,
    ) {
        match self.log.clone() {
            Some(mut encoder) => {
                let piece =
                    crate::persist::pack(&mut encoder, first_seq, at_ms, events, positioned);
                self.log_next = Some(encoder);
                (Vec::new(), piece)
            }
            None => (
                crate::persist::event_records(first_seq, at_ms, events, positioned),
                None,
            ),
        }
    }

    /// A restored game goes on packing its log after `encoder` (the stored log decoded);
    /// `None` for a game stored as JSON rows (it goes on as rows).
    pub fn resume_log(&mut self, encoder: Option<crate::throws::Encoder>) {
        self.log = encoder;
        self.log_next = None;
    }

    /// Whether a write is pending.
    pub fn is_waiting(&self) -> bool {
        self.staged.is_some()
    }

    fn run(&mut self, now: Ms) -> Vec<Effect> {
        while self.staged.is_none() {
            match self.queue.pop_front() {
                Some(work) => self.work(work, now),
                None => {
                    self.settle(now);
                    break;
                }
            }
        }
        std::mem::take(&mut self.out)
    }

    fn work(&mut self, work: Work, now: Ms) {
        match work {
            Work::Input(input) => {
                self.step_failure = None;
                self.input(input, now)
            }
            Work::Checked {
                conn,
                seat_id,
                req,
                seq,
                cmd,
            } => {
                self.step_failure = None;
                self.checked_command(conn, seat_id, req, seq, cmd, now)
            }
            Work::Timeout => self.timeout_if_due(now),
            Work::Grace(seat_id) => self.grace_expired(seat_id, now),
            Work::BotAct => self.bot_act(now),
            Work::BotApply {
                seq,
                colour,
                action,
            } => self.bot_apply(seq, colour, action, now),
            Work::Abandon { colour, reason } => self.abandon(colour, reason, now),
            Work::Forfeit { colour, reason } => self.forfeit(colour, reason, now),
            Work::ReplyOk {
                conn,
                req,
                drop_link,
            } => match self.step_failure.take() {
                // What the command changed was not stored: it is refused, and a leaver
                // keeps its seat and its connection.
                Some(refusal) => self.reply_err(conn, req, &refusal),
                None => {
                    self.reply_ok(conn, req);
                    if drop_link {
                        self.emit(Effect::Left { conn });
                        self.drop_link(conn);
                    }
                }
            },
            Work::Directed => {
                let answer = match self.step_failure.take() {
                    Some(refusal) => Err(refusal),
                    None => Ok(self.director_answer()),
                };
                self.emit(Effect::Directed(answer));
            }
            Work::StartWhenSeated => self.start_when_seated(now),
            Work::Flush => {
                if std::mem::take(&mut self.turn_pending) {
                    self.send_turn_info();
                }
            }
        }
    }

    fn input(&mut self, input: Input, now: Ms) {
        match input {
            Input::Join {
                conn,
                req,
                name,
                colour,
                client_seed,
                account,
                ratings,
                token,
            } => {
                let ask = SeatAsk {
                    name,
                    colour,
                    client_seed,
                    account,
                    ratings,
                };
                self.join(conn, req, ask, token, now)
            }
            Input::Watch { conn, req } => self.watch(conn, req),
            Input::Resume {
                conn,
                req,
                token,
                last_seq,
                account,
            } => self.resume(conn, req, &token, account, last_seq),
            Input::Reattach {
                conn,
                reattach,
                last_seq,
                replaces,
            } => self.reattach(conn, reattach, last_seq, replaces),
            Input::Command {
                conn,
                member,
                req,
                seq,
                cmd,
            } => self.command(conn, member, req, seq, cmd, now),
            Input::Detach { conn } => self.detach(conn, now),
            Input::Timers => self.timers(now),
            Input::ClockOwed => self.clock_owed(now),
            Input::BotChose(choice) => self.bot_chose(choice),
            Input::Claim {
                conn,
                req,
                key,
                client_seed,
                token,
            } => self.claim(conn, req, &key, client_seed, token, now),
            Input::Director(cmd) => self.director_cmd(cmd, now),
        }
    }

    /// Runs `works` next, in this order, before anything already queued.
    pub(super) fn then_do(&mut self, works: impl IntoIterator<Item = Work>) {
        let works: Vec<Work> = works.into_iter().collect();
        for w in works.into_iter().rev() {
            self.queue.push_front(w);
        }
    }

    /// Ends the current step with a durable write; `staged` runs once it is stored.
    pub(super) fn stage(&mut self, write: Write, staged: Staged) {
        self.out.push(Effect::Persist(write));
        self.staged = Some(staged);
    }

    pub(super) fn emit(&mut self, effect: Effect) {
        self.out.push(effect);
    }

    fn commit_staged(&mut self, staged: Staged, now: Ms) {
        match staged {
            Staged::Join {
                seat,
                conn,
                req,
                token,
            } => self.join_stored(seat, conn, req, token, now),
            Staged::Colour {
                seat_id,
                from,
                to,
                conn,
                req,
            } => self.colour_stored(seat_id, from, to, conn, req, now),
            Staged::Start(plan) => self.start_stored(*plan, now),
            Staged::Events(commit) => self.events_stored(*commit, now),
            Staged::Leave { seat_id, why } => self.seat_left(seat_id, why, now),
            Staged::TakeOver {
                seat_id,
                level,
                reason,
                seed,
                event,
                at_ms,
            } => self.take_over_stored(seat_id, level, reason, seed, event, at_ms),
        }
    }

    fn fail_staged(&mut self, staged: Staged, error: &WriteFailed, now: Ms) {
        crate::note!(
            self,
            Warn,
            "store write failed; step not applied",
            "error={error} failure={:?}",
            error.kind
        );
        let refusal = error.refusal();
        match staged {
            Staged::Join { .. } => self.emit(Effect::Reply(Err(refusal))),
            Staged::Colour { conn, req, .. } => self.reply_err(conn, req, &refusal),
            Staged::Start(plan) if plan.director => self.step_failure = Some(refusal),
            Staged::Start(plan) => self.reply_err(plan.conn, plan.req, &refusal),
            Staged::Events(commit) => {
                self.then_failed(commit.then, &refusal, now);
                self.step_failure = Some(refusal);
            }
            Staged::Leave { seat_id, why } => {
                self.leave_failed(seat_id, why, now);
                self.step_failure = Some(refusal);
            }
            Staged::TakeOver {
                seat_id, reason, ..
            } => {
                // No bot could be stored: the player forfeits instead.
                if let Some(colour) = self.seat_by_id(seat_id).map(|s| s.colour) {
                    self.then_do([Work::Forfeit { colour, reason }]);
                }
            }
        }
    }

    /// Commits `events` (after `game` moved to its next state): durable first when a game
    /// runs (a [`Write::Append`], or a [`Write::End`] when the game is over), at once in
    /// the lobby (lobby events are not stored).
    pub(super) fn stage_events(&mut self, mut commit: EventsCommit) {
        // Whatever ends the game, its last events reveal the server seed.
        let ends = |g: Option<Game>| g.is_some_and(|g| g.outcome().is_some());
        if ends(commit.game) && !ends(self.game) {
            commit.events.push(self.dice.reveal());
        }
        let Some(game_id) = self.game_id else {
            let now = commit.at_ms;
            self.events_stored(commit, now);
            return;
        };
        // With a game the last frame carries the position (`events_stored`): marked so a
        // rebuilt history carries it too. A packed game's write carries its piece only.
        let (records, piece) = self.log_write(
            self.seq + 1,
            commit.at_ms,
            &commit.events,
            commit.game.is_some(),
        );
        let ended = commit.game.and_then(|g| g.outcome().map(|o| (g, o)));
        let write = match ended {
            Some((game, outcome)) => Write::End(Box::new(crate::persist::game_end(
                game_id,
                &self.code,
                self.seq,
                records,
                piece,
                &outcome,
                commit.at_ms,
                self.rated_result(&game),
            ))),
            None => Write::Append {
                game_id,
                after_seq: self.seq,
                events: records,
                piece,
            },
        };
        self.stage(write, Staged::Events(Box::new(commit)));
    }

    /// Applies committed events: the game moves on, each event gets its seq, goes into the
    /// history and out to every member.
    fn events_stored(&mut self, commit: EventsCommit, now: Ms) {
        let EventsCommit {
            game,
            events,
            at_ms,
            deadline,
            turn,
            action,
            thrown,
            then,
        } = commit;
        self.deadline = deadline;
        if thrown {
            self.dice.advance(1);
        }
        if let Some(action) = &action {
            self.obs.action_applied(action);
        }
        if let Some(g) = game {
            self.game = Some(g);
            if let Some(outcome) = g.outcome() {
                self.finished(outcome);
            }
        }
        let after = game.and(self.game);
        self.broadcast_events(events, at_ms, after);
        self.emit(Effect::Publish);
        if turn {
            self.turn_pending = true;
        }
        self.then_ok(then, now);
    }

    /// Numbers, records and broadcasts events that are already durable (or need not be).
    /// `after`: the game after the batch, whose position the last event's frame carries.
    pub(super) fn broadcast_events(
        &mut self,
        events: Vec<RoomEvent>,
        at_ms: Ms,
        after: Option<Game>,
    ) {
        let last = events.len();
        for (n, event) in events.into_iter().enumerate() {
            self.seq += 1;
            let after = after.as_ref().filter(|_| n + 1 == last);
            let throw = crate::held::is_throw(&event);
            let frame = crate::encode(&crate::frames::event_message(
                &self.code, self.seq, at_ms, event, after,
            ));
            self.history.push_back((self.seq, frame.clone()));
            while self.history.len() > self.history_len {
                self.history.pop_front();
            }
            if self.delaying() {
                let seq = self.seq;
                let shown = after.copied();
                self.delay_frame(seq, throw, frame, shown);
            } else {
                self.emit(Effect::Broadcast { frame });
            }
        }
    }

    /// The room's state once its game has an outcome (the result is durable already: it
    /// was written with the final events).
    fn finished(&mut self, outcome: parchis_engine::Outcome) {
        // Spectators of a delayed game get what was held back before the end.
        self.delay_flush();
        self.paused = None;
        self.status = RoomStatus::Finished;
        self.deadline = None;
        for seat in &mut self.seats {
            seat.grace_until = None;
        }
        let reason = crate::persist::reason_text(&outcome);
        self.obs.game_finished(
            &self.code,
            self.game_id.unwrap_or_default(),
            &self.settings.preset,
            reason,
            Some(outcome.winner),
        );
    }

    /// After each input: idle tracking, the bot's think time, the next wake-up.
    fn settle(&mut self, now: Ms) {
        self.flush_presence(now);
        self.update_idle(now);
        self.schedule_bot(now);
        let wake = self.next_wake();
        self.emit(Effect::Wake(wake));
    }

    /// Tracks how long a lobby has had neither seats nor connections.
    fn update_idle(&mut self, now: Ms) {
        // A director's room waits for its entrants however long (the director closes it).
        let empty = self.status == RoomStatus::Lobby
            && self.director.is_none()
            && self.seats.is_empty()
            && self.nobody_attached();
        match (empty, self.idle_since) {
            (true, None) => self.idle_since = Some(now),
            (false, Some(_)) => self.idle_since = None,
            _ => {}
        }
    }

    /// Starts a bot's think time if one is to act, and says when to wake (as
    /// [`Effect::Wake`]); for a room that has not handled an input yet.
    pub fn poll_wake(&mut self, now: Ms) -> Option<Ms> {
        self.schedule_bot(now);
        self.next_wake()
    }

    /// The earliest time something is due: the turn clock, a grace period, the idle
    /// lobby's end or a bot's think time.
    pub fn next_wake(&self) -> Option<Ms> {
        let graces = self.seats.iter().filter_map(|s| s.grace_until);
        let idle = self.idle_since.map(|t| t + self.limits.lobby_idle_ms);
        self.deadline
            .into_iter()
            .chain(graces)
            .chain(idle)
            .chain(self.bot_due)
            .chain(self.presence_due())
            .min()
    }

    /// Whether the room can go: finished with nobody left, or an empty lobby idle for
    /// [`RoomLimits::lobby_idle_ms`].
    pub fn disposable(&self, now: Ms) -> bool {
        let nobody = self.nobody_attached();
        match self.status {
            RoomStatus::Finished => nobody,
            RoomStatus::Lobby => {
                nobody
                    && self.director.is_none()
                    && self.seats.is_empty()
                    && self
                        .idle_since
                        .is_some_and(|t| now - t >= self.limits.lobby_idle_ms)
            }
            RoomStatus::Playing => false,
        }
    }

    /// Time passed: the clock, expired grace periods, a bot whose think time is over.
    fn timers(&mut self, now: Ms) {
        let mut works = Vec::new();
        if self.deadline.is_some_and(|d| d <= now) {
            works.push(Work::Timeout);
        }
        works.extend(
            self.seats
                .iter()
                .filter(|s| s.grace_until.is_some_and(|g| g <= now))
                .map(|s| Work::Grace(s.id)),
        );
        if self.bot_due.is_some_and(|t| t <= now) {
            self.bot_due = None;
            works.push(Work::BotAct);
        }
        self.then_do(works);
    }

    pub(super) fn seat_index(&self, seat_id: u64) -> Option<usize> {
        self.seats.iter().position(|s| s.id == seat_id)
    }

    pub(super) fn seat_by_id(&self, seat_id: u64) -> Option<&Seat> {
        self.seats.iter().find(|s| s.id == seat_id)
    }
}
