//! What the room shows: the snapshot (`RoomView`), the public listing, `your_turn`.

use crate::core::{Core, Seat};
use crate::{Listing, Ms};
use parchis_engine::{Colour, Expect, Game};
use parchis_protocol::{
    team_of, GameView, ListedPlayer, ReservedSeat, ReservedView, RoomSettings, RoomStatus,
    RoomSummary, RoomView, SeatView, ServerMessage, TurnInfo, TEAMS,
};
use uuid::Uuid;

impl Core {
    /// The room code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The room seq (last event's).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The game, once started.
    pub fn game(&self) -> Option<&Game> {
        self.game.as_ref()
    }

    /// The game's id, once started.
    pub fn game_id(&self) -> Option<Uuid> {
        self.game_id
    }

    /// Lifecycle.
    pub fn status(&self) -> RoomStatus {
        self.status
    }

    /// The running turn clock's deadline (unix ms).
    pub fn deadline(&self) -> Option<Ms> {
        self.deadline
    }

    /// The seats.
    pub fn seats(&self) -> &[Seat] {
        &self.seats
    }

    /// The settings.
    pub fn settings(&self) -> &RoomSettings {
        &self.settings
    }

    pub(super) fn taken(&self, colour: Colour) -> bool {
        self.seats.iter().any(|s| s.colour == colour)
    }

    pub(super) fn free_colours(&self) -> Vec<Colour> {
        Colour::ALL
            .into_iter()
            .filter(|c| !self.taken(*c))
            .collect()
    }

    /// The public listing facts at `now` (unix ms).
    pub fn listing(&self, now: Ms) -> Listing {
        let taken = self.seats.len() as u8;
        Listing {
            status: self.status,
            public: self.settings.public,
            spectators_allowed: self.settings.spectators,
            summary: RoomSummary {
                code: self.code.clone(),
                status: self.status,
                preset: self.settings.preset.clone(),
                seats: self.settings.seats,
                taken,
                free: self.settings.seats.saturating_sub(taken),
                free_colours: if taken < self.settings.seats {
                    self.free_colours()
                } else {
                    Vec::new()
                },
                age_secs: ((now - self.created_at_ms).max(0) / 1000) as u64,
                spectators: self.spectators.len() as u32,
                turn_clock_secs: self.settings.turn_clock_secs,
                spectators_allowed: self.settings.spectators,
                rated: self.settings.rated,
                players: self
                    .seats
                    .iter()
                    .map(|s| ListedPlayer {
                        colour: s.colour,
                        name: s.name.clone(),
                        username: s.account.map(|_| s.name.clone()),
                        bot: s.bot.is_some(),
                        rating: s.rating,
                    })
                    .collect(),
            },
            game_id: self.game_id,
            deadline_ms: self.deadline,
            connected_players: self.seats.iter().filter(|s| s.conn.is_some()).count() as u32,
        }
    }

    /// The room's snapshot, as in `welcome` and `GET /api/rooms/{code}`.
    pub fn view(&self) -> RoomView {
        RoomView {
            code: self.code.clone(),
            settings: self.settings.clone(),
            rules: self.rules,
            teams: if self.rules.teams {
                TEAMS.iter().map(|t| t.to_vec()).collect()
            } else {
                Vec::new()
            },
            status: self.status,
            seats: self
                .seats
                .iter()
                .map(|s| SeatView {
                    colour: s.colour,
                    name: s.name.clone(),
                    creator: s.creator,
                    connected: s.conn.is_some(),
                    abandoned: s.abandoned,
                    team: self.rules.teams.then(|| team_of(s.colour)),
                    bot: s.bot.as_ref().map(|b| b.level),
                    away_until_ms: s
                        .grace_until
                        .filter(|_| s.conn.is_none() && s.bot.is_none() && !s.abandoned),
                    rating: s.rating,
                })
                .collect(),
            spectators: self.spectators.len() as u32,
            seq: self.seq,
            created_at_ms: self.created_at_ms,
            game: self.game.as_ref().map(|g| GameView {
                game_id: self.game_id.map(|id| id.to_string()).unwrap_or_default(),
                position: g.to_position(),
                deadline_ms: self.deadline,
                outcome: g.outcome(),
            }),
            board: Default::default(),
            dice: Some(self.dice.info(self.status == RoomStatus::Finished)),
            reserved: self.reserved_view(),
        }
    }

    /// A director's room's reservations as the room view shows them (no key: only
    /// colours, names and bots), in board order.
    fn reserved_view(&self) -> Option<ReservedView> {
        let director = self.director.as_ref()?;
        Some(ReservedView {
            seats: Colour::ALL
                .into_iter()
                .filter_map(|c| director.of(c))
                .map(|r| ReservedSeat {
                    colour: r.colour,
                    name: r.name.trim().to_owned(),
                    bot: r.bot.is_some(),
                })
                .collect(),
            starts_when_seated: director.start_when_seated,
        })
    }

    /// The `your_turn` message for the player to act, if the game runs.
    pub(super) fn turn_info(&self) -> Option<(Colour, ServerMessage)> {
        let game = self.game.as_ref()?;
        let deadline_ms = self.deadline.unwrap_or(0);
        let (colour, must_roll, dice, used, bonus) = match game.expect() {
            Expect::Roll { colour } => (colour, true, None, [false, false], None),
            Expect::Move {
                colour,
                dice,
                used,
                bonus,
            } => (colour, false, Some(dice), used, bonus),
            Expect::Finished(_) => return None,
        };
        Some((
            colour,
            ServerMessage::YourTurn(TurnInfo {
                room: self.code.clone(),
                seq: self.seq,
                colour,
                must_roll,
                dice,
                used,
                bonus,
                legal: game.legal_actions(),
                previews: game.previews(),
                deadline_ms,
            }),
        ))
    }

    /// Sends `your_turn` to the connection of the player to act, if connected.
    pub(super) fn send_turn_info(&mut self) {
        if let Some((colour, msg)) = self.turn_info() {
            if let Some(conn) = self
                .seats
                .iter()
                .find(|s| s.colour == colour && !s.abandoned)
                .and_then(|s| s.conn)
            {
                self.send_to(conn, &msg);
            }
        }
    }
}
