//! Who hears what: the connections attached to the room (seats and spectators), frames
//! to one or all, presence, and the resume window (missed events from the bounded
//! history, or a snapshot when they are too old).

use crate::core::{Core, Effect};
use crate::Frame;
use crate::{encode, ConnId, Member, Ms, Refusal};
use parchis_protocol::{close_code, AwaySeat, ErrorCode, Role, RoomStatus, ServerMessage};
use parchis_records::hash_token;

impl Core {
    /// Whether no connection is attached (no seat's, no spectator's).
    pub(super) fn nobody_attached(&self) -> bool {
        self.spectators.is_empty() && self.seats.iter().all(|s| s.conn.is_none())
    }

    /// The seated players' connections (at most one per seat).
    pub fn player_conns(&self) -> Vec<ConnId> {
        self.seats.iter().filter_map(|s| s.conn).collect()
    }

    /// Every attached connection.
    pub fn attached(&self) -> Vec<ConnId> {
        self.seats
            .iter()
            .filter_map(|s| s.conn)
            .chain(self.spectators.iter().copied())
            .collect()
    }

    pub(super) fn send_to(&mut self, conn: ConnId, msg: &ServerMessage) {
        self.emit(Effect::Send {
            conn,
            frame: encode(msg),
        });
    }

    pub(super) fn reply_ok(&mut self, conn: ConnId, req: u64) {
        let msg = ServerMessage::Ok { req, seq: self.seq };
        self.send_to(conn, &msg);
    }

    pub(super) fn reply_err(&mut self, conn: ConnId, req: u64, refusal: &Refusal) {
        self.obs.refused(refusal.code);
        self.send_to(conn, &refusal.to_message(Some(req)));
    }

    /// Who is connected changed: everyone hears it, coalesced — at most one presence
    /// frame per [`RoomLimits::presence_interval_ms`](crate::core::RoomLimits), sent when
    /// the step settles ([`Core::flush_presence`]), so a burst of joins costs each
    /// member a few frames, not one per join. The listing changes at once.
    pub(super) fn presence(&mut self) {
        self.presence_dirty = true;
        self.emit(Effect::Publish);
    }

    /// When the coalesced presence frame is due, if one is pending.
    pub(super) fn presence_due(&self) -> Option<Ms> {
        self.presence_dirty.then(|| {
            self.presence_sent_at
                .map_or(Ms::MIN, |t| t + self.limits.presence_interval_ms)
        })
    }

    /// Sends the pending presence frame if its interval has passed.
    pub(super) fn flush_presence(&mut self, now: Ms) {
        if self.presence_due().is_some_and(|due| due <= now) {
            self.presence_dirty = false;
            self.presence_sent_at = Some(now);
            self.presence_now();
        }
    }

    fn presence_now(&mut self) {
        if self.delay.is_holding() {
            return self.presence_delayed();
        }
        let msg = ServerMessage::Presence {
            room: self.code.clone(),
            seq: self.seq,
            connected: self
                .seats
                .iter()
                .filter(|s| s.conn.is_some())
                .map(|s| s.colour)
                .collect(),
            spectators: self.spectators.len() as u32,
            away: self.away(),
        };
        self.emit(Effect::Broadcast {
            frame: encode(&msg),
        });
    }

    /// The presence frame while spectators are shown a delayed game: theirs names the
    /// last seq they were shown, not the room's.
    fn presence_delayed(&mut self) {
        let connected: Vec<_> = self
            .seats
            .iter()
            .filter(|s| s.conn.is_some())
            .map(|s| s.colour)
            .collect();
        let spectators = self.spectators.len() as u32;
        let away = self.away();
        let frame = |seq| {
            encode(&ServerMessage::Presence {
                room: self.code.clone(),
                seq,
                connected: connected.clone(),
                spectators,
                away: away.clone(),
            })
        };
        let (players, watchers) = (frame(self.seq), frame(self.spectator_seq()));
        for conn in self.player_conns() {
            let frame = players.clone();
            self.emit(Effect::Send { conn, frame });
        }
        for conn in self.spectators.clone() {
            let frame = watchers.clone();
            self.emit(Effect::Send { conn, frame });
        }
    }

    /// The seated players whose connection dropped and when their grace period ends
    /// (R-LEAVE): bots and seats out of the game have none.
    pub(super) fn away(&self) -> Vec<AwaySeat> {
        self.seats
            .iter()
            .filter(|s| s.conn.is_none() && s.bot.is_none() && !s.abandoned)
            .filter_map(|s| {
                s.grace_until.map(|until_ms| AwaySeat {
                    colour: s.colour,
                    until_ms,
                })
            })
            .collect()
    }

    /// Forgets a connection without starting a grace period (after `leave`).
    pub(super) fn drop_link(&mut self, conn: ConnId) {
        self.spectators.retain(|c| *c != conn);
        for seat in &mut self.seats {
            if seat.conn == Some(conn) {
                seat.conn = None;
            }
        }
        self.emit(Effect::Forget { conn });
        self.presence();
    }

    /// A connection went away (closed, kicked, or too slow): spectators are forgotten;
    /// a seat keeps its place for the grace period (R-LEAVE).
    pub(super) fn detach(&mut self, conn: ConnId, now: Ms) {
        let before = self.spectators.len();
        self.spectators.retain(|c| *c != conn);
        let mut changed = before != self.spectators.len();
        let grace = i64::from(self.settings.disconnect_grace_secs) * 1000;
        let running = self.status != RoomStatus::Finished;
        for seat in &mut self.seats {
            if seat.conn == Some(conn) {
                seat.conn = None;
                if running && !seat.abandoned {
                    seat.grace_until = Some(now + grace);
                }
                self.obs
                    .player_disconnected(&self.code, self.game_id, seat.colour, conn);
                changed = true;
            }
        }
        self.emit(Effect::Forget { conn });
        if changed {
            self.presence();
        }
    }

    /// A connection watches.
    pub(super) fn watch(&mut self, conn: ConnId, req: u64) {
        if !self.settings.spectators {
            self.emit(Effect::Reply(Err(Refusal::code(
                ErrorCode::SpectatorsNotAllowed,
            ))));
            return;
        }
        if self.spectators.len() >= self.settings.max_spectators as usize {
            self.emit(Effect::Reply(Err(Refusal::new(
                ErrorCode::TooManySpectators,
                format!(
                    "the room allows {} spectators at once",
                    self.settings.max_spectators
                ),
            ))));
            return;
        }
        self.obs.spectator_joined(&self.code, self.game_id, conn);
        self.spectators.push(conn);
        self.emit(Effect::Attach { conn });
        let welcome = ServerMessage::Welcome {
            req,
            room: self.code.clone(),
            role: Role::Spectator,
            colour: None,
            token: None,
            seq: self.spectator_seq(),
            snapshot: Some(Box::new(self.spectator_view())),
        };
        self.send_to(conn, &welcome);
        self.presence();
        self.emit(Effect::Reply(Ok(Member::Spectator)));
    }

    /// Whether a client that saw up to `last_seq` can catch up from the history (else it
    /// gets a snapshot).
    pub fn can_replay(&self, last_seq: u64) -> bool {
        last_seq <= self.seq
            && (last_seq == self.seq
                || self
                    .history
                    .front()
                    .is_some_and(|(first, _)| *first <= last_seq + 1))
    }

    /// The history frames after `last_seq`.
    pub(super) fn missed(&self, last_seq: u64) -> Vec<Frame> {
        self.history
            .iter()
            .filter(|(seq, _)| *seq > last_seq)
            .map(|(_, f)| f.clone())
            .collect()
    }

    /// A connection comes back to its seat with its session token; a connection still on
    /// the seat is told and closed.
    pub(super) fn resume(
        &mut self,
        conn: ConnId,
        req: u64,
        token: &str,
        account: Option<uuid::Uuid>,
        last_seq: u64,
    ) {
        let found = match account {
            // By account (another device): the account's seat still played by it, else
            // any of its seats (an abandoned one is refused below).
            Some(a) if token.is_empty() => {
                let mine = |s: &crate::seat::Seat| s.account == Some(a);
                let seats = &self.seats;
                seats
                    .iter()
                    .position(|s| mine(s) && !s.abandoned)
                    .or_else(|| seats.iter().position(mine))
            }
            _ => {
                let hash = hash_token(token);
                self.seats.iter().position(|s| s.token_hash == hash)
            }
        };
        let Some(i) = found else {
            self.emit(Effect::Reply(Err(Refusal::code(ErrorCode::BadToken))));
            return;
        };
        if self.seats[i].abandoned {
            self.emit(Effect::Reply(Err(Refusal::new(
                ErrorCode::BadToken,
                "this seat abandoned the game; you can watch as a spectator",
            ))));
            return;
        }
        if let Some(old) = self.seats[i].conn.take() {
            let reason = "another connection took over this seat";
            // The kick sends the one `closing` frame, then the close frame (ws/writer.rs).
            self.emit(Effect::Kick {
                conn: old,
                code: close_code::SESSION_REPLACED,
                reason: reason.into(),
            });
            self.emit(Effect::Forget { conn: old });
        }
        let colour = self.seats[i].colour;
        self.seats[i].conn = Some(conn);
        self.seats[i].reattached = false;
        self.seats[i].grace_until = None;
        self.emit(Effect::Attach { conn });
        let seat_id = self.seats[i].id;
        // A seat put back with a rebuilt lobby: its client's seqs are from before.
        let stale = std::mem::take(&mut self.seats[i].stale_seqs);
        let replay = !stale && self.can_replay(last_seq);
        let welcome = ServerMessage::Welcome {
            req,
            room: self.code.clone(),
            role: Role::Player,
            colour: Some(colour),
            token: None,
            seq: self.seq,
            snapshot: (!replay).then(|| Box::new(self.view())),
        };
        self.send_to(conn, &welcome);
        if replay {
            for frame in self.missed(last_seq) {
                self.emit(Effect::Send { conn, frame });
            }
        }
        self.obs
            .resumed(&self.code, self.game_id, colour, conn, last_seq, replay);
        self.presence();
        if self.turn_info().is_some_and(|(c, _)| c == colour) {
            self.send_turn_info();
        }
        self.emit(Effect::Reply(Ok(Member::Player(seat_id))));
    }
}
