//! Administration of a live room: inspecting its connections and closing it.

use crate::core::{Core, Effect};
use crate::persist::{self, Write};
use crate::Ms;
use crate::Refusal;
use parchis_engine::Colour;
use parchis_protocol::{close_code, AdminCloseRoom, AdminRoom, AdminSeat, ErrorCode, RoomStatus};

impl Core {
    /// The room with its connections (`GET /admin/rooms`).
    pub fn inspect(&self) -> AdminRoom {
        AdminRoom {
            code: self.code.clone(),
            status: self.status,
            preset: self.settings.preset.clone(),
            game_id: self.game_id.map(|id| id.to_string()),
            created_at_ms: self.created_at_ms,
            seats: self
                .seats
                .iter()
                .map(|s| AdminSeat {
                    colour: s.colour,
                    name: s.name.clone(),
                    conn: s.conn,
                    bot: s.bot.as_ref().map(|b| b.level),
                    abandoned: s.abandoned,
                })
                .collect(),
            spectators: self.spectators.clone(),
        }
    }

    /// An administrator closes the room at `now`: a running game ends with reason
    /// `closed_by_admin` (stored with the room's finished status in one transaction, no
    /// winner), the room is stored finished (not restored after a restart), every
    /// connection is closed with 4002 and the room goes away. The writes are best effort:
    /// the room closes even if the store fails.
    pub fn close_by_admin(&mut self, now: Ms) -> (AdminCloseRoom, Vec<Effect>) {
        self.close_with(
            now,
            close_code::CLOSED_BY_ADMIN,
            "the room was closed by an administrator",
        )
    }

    /// Account `account` was renamed `name` (an administrator's rename, issue 26): each
    /// seat it holds here shows the new name from now on, stored (best effort: the
    /// account's row is the authority) and told to every connection
    /// ([`parchis_protocol::ServerMessage::Renamed`]); the listing is published again.
    /// Nothing happens in a room where the account holds no seat.
    pub fn rename_account(&mut self, account: uuid::Uuid, name: &str) -> Vec<Effect> {
        let mut renamed = Vec::new();
        for seat in &mut self.seats {
            if seat.account == Some(account) && seat.name != name {
                seat.name = name.to_owned();
                renamed.push((seat.colour, persist::seat_record(&self.code, seat)));
            }
        }
        for (colour, record) in renamed {
            self.emit(Effect::Store(Write::UpsertSeat(record)));
            let msg = parchis_protocol::ServerMessage::Renamed {
                room: self.code.clone(),
                colour,
                name: name.to_owned(),
            };
            self.emit(Effect::Broadcast {
                frame: crate::encode(&msg),
            });
            self.emit(Effect::Publish);
        }
        std::mem::take(&mut self.out)
    }

    /// A quick pairing's room whose seats were not all claimed in time
    /// (`docs/ACCOUNTS.md`, "Claim wait"): its lobby closes at `now`. The room is stored
    /// finished (no game was started), every connection is closed with
    /// [`close_code::PAIRING_EXPIRED`] and the room goes away. Answers the colours whose
    /// seats were claimed (board order), or `game_started` (nothing changed) once the
    /// game has started: the claims and this close are inputs of one actor, so exactly
    /// one of "started" and "closed" happens.
    pub fn close_lobby(&mut self, now: Ms) -> (Result<Vec<Colour>, Refusal>, Vec<Effect>) {
        if self.status != RoomStatus::Lobby {
            return (Err(Refusal::code(ErrorCode::GameStarted)), Vec::new());
        }
        let mut claimed: Vec<Colour> = self
            .seats
            .iter()
            .filter(|s| s.bot.is_none())
            .map(|s| s.colour)
            .collect();
        claimed.sort_by_key(|c| Colour::ALL.iter().position(|x| x == c));
        let (_, effects) = self.close_with(
            now,
            close_code::PAIRING_EXPIRED,
            "not every player claimed their seat in time: poll your pairing ticket",
        );
        (Ok(claimed), effects)
    }

    /// Closes the room (see [`Core::close_by_admin`]), each connection with `code` and
    /// `reason`.
    fn close_with(&mut self, now: Ms, code: u16, reason: &str) -> (AdminCloseRoom, Vec<Effect>) {
        let running =
            self.status == RoomStatus::Playing && self.game.is_some_and(|g| g.outcome().is_none());
        let game_id = self.game_id.filter(|_| running);
        if let Some(id) = game_id {
            // Whatever ends a game reveals its server seed (docs/FAIR_DICE.md): the
            // `dice_revealed` event is stored with the end and sent before the close.
            let reveal = self.dice.reveal();
            let (records, piece) =
                self.log_write(self.seq + 1, now, std::slice::from_ref(&reveal), false);
            let end = persist::game_closed(id, &self.code, self.seq, records, piece, now);
            self.emit(Effect::Store(Write::End(Box::new(end))));
            let preset = self.settings.preset.clone();
            self.obs
                .game_finished(&self.code, id, &preset, "closed_by_admin", None);
        } else if self.status != RoomStatus::Finished {
            let update = persist::status_finished(now);
            self.emit(Effect::Store(Write::RoomStatus(update)));
        }
        // Spectators of a delayed game get what was held back before the close.
        self.delay_flush();
        self.paused = None;
        self.status = RoomStatus::Finished;
        self.deadline = None;
        self.bot_due = None;
        let attached = self.attached();
        if game_id.is_some() {
            // Sent to each connection directly: the links are cleared below, before the
            // actor would fan a broadcast out.
            let reveal = self.dice.reveal();
            self.broadcast_events(vec![reveal], now, None);
            if let Some(Effect::Broadcast { frame }) = self.out.pop() {
                for &conn in &attached {
                    self.emit(Effect::Send {
                        conn,
                        frame: frame.clone(),
                    });
                }
            }
        }
        for &conn in &attached {
            self.emit(Effect::Kick {
                conn,
                code,
                reason: reason.into(),
            });
            self.emit(Effect::Forget { conn });
        }
        self.spectators.clear();
        for seat in &mut self.seats {
            seat.conn = None;
            seat.grace_until = None;
        }
        self.emit(Effect::Publish);
        let answer = AdminCloseRoom {
            code: self.code.clone(),
            game_id: game_id.map(|id| id.to_string()),
            connections_closed: attached.len() as u32,
        };
        (answer, std::mem::take(&mut self.out))
    }
}
