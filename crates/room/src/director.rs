//! The rooms a tournament's director runs (issue 27, `docs/TOURNAMENTS.md`): the room
//! layer's side of its effects, as an internal API on [`Rooms`].
//!
//! * [`Rooms::open_director_room`] (`CreateRoom`): create-if-absent under the director's
//!   deterministic code, seats reserved, no creator and no auto-start. A retried create
//!   answers [`Opened::Existing`] and never makes a second room (the store refuses a
//!   second row with the code, `StoreError::RoomExists`).
//! * [`Rooms::direct`] (`StartRoom`, `PauseClock`, `ResumeClock`, `Expel`): a
//!   [`DirectorCmd`] to the room's actor, answered once what it changed is stored.
//! * [`Rooms::close_room`] (`CloseRoom`): the room closes without a result, as an
//!   administrator's close does.
//! * [`Rooms::close_lobby`]: a quick pairing's claim wait ran out (its matcher, not a
//!   tournament, sends it).
//!
//! A room that does not run in this process is reached through the [`crate::Host`]: in a
//! cluster its owner is asked over NATS (`docs/CLUSTER.md`, "Tournaments"), the director
//! need not run where its rooms do. [`Rooms::room_view`] reads a room's view the same way
//! (the director's seat reports).

use crate::create::run_new;
use crate::ids;
use crate::rooms::Rooms;
use crate::{now_ms, Refusal, RoomCmd};
use parchis_protocol::{AdminCloseRoom, ErrorCode, RoomSettings};
use parchis_room_core::persist;
use parchis_room_core::reserved::{DirectorAnswer, DirectorCmd, DirectorRoom};
use parchis_store::{RoomRecord, StoreError};
use tokio::sync::oneshot;
use tracing::{info, warn};

/// What [`Rooms::open_director_room`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened {
    /// The room was created now.
    Created,
    /// A room with the code existed already (running here, or stored: a retried effect):
    /// nothing was created.
    Existing,
}

impl Rooms {
    /// Creates room `code` for a tournament match if no room has that code: `settings`
    /// (validated; `spectator_delay_throws` as the tournament sets it) with `director`'s
    /// reserved seats. Nobody can start it but [`Rooms::direct`]; it is never disposed of
    /// as an idle lobby.
    ///
    /// # Errors
    /// `bad_request` for a code that is not 1 to 32 ASCII letters and digits, invalid
    /// settings or reservations (or reserved colours the settings' seats cannot hold);
    /// `room_unavailable` when the store cannot be reached; `server_full`; `internal`.
    pub async fn open_director_room(
        &self,
        code: &str,
        settings: RoomSettings,
        mut director: DirectorRoom,
    ) -> Result<Opened, Refusal> {
        let bad = |m: String| Refusal::new(ErrorCode::BadRequest, m);
        if !ids::is_plausible_code(code) {
            return Err(bad("a room code is 1 to 32 ASCII letters and digits".into()));
        }
        settings.validate().map_err(bad)?;
        director.validate().map_err(bad)?;
        if director.reserved.len() > usize::from(settings.seats) {
            return Err(bad(format!(
                "{} seats reserved in a room of {}",
                director.reserved.len(),
                settings.seats
            )));
        }
        let rules = settings.rules().map_err(bad)?;
        if self.room(code).is_some() {
            return Ok(Opened::Existing);
        }
        self.read_reserved_ratings(code, &rules, &mut director)
            .await;
        let created_at_ms = now_ms();
        let record = RoomRecord {
            settings: persist::director_value(&settings, &director),
            ..persist::room_record(code, &settings, created_at_ms)
        };
        let fence = match self.host().store_new(self, &record).await {
            Ok(fence) => fence,
            Err(StoreError::RoomExists(_)) => {
                info!(room = %code, "director's room exists already");
                return Ok(Opened::Existing);
            }
            Err(e) => {
                warn!(room = %code, error = %e, "store failed creating a director's room");
                return Err(crate::actor::write_failed(&e).refusal());
            }
        };
        run_new(
            self,
            code,
            settings,
            rules,
            created_at_ms,
            fence,
            Some(director),
        )
        .await?;
        info!(room = %code, "director's room created");
        Ok(Opened::Created)
    }

    /// Sets the rating of each of `director`'s seats reserved for an account (its key an
    /// account id) that has none to the account's display rating in the pool of `rules`,
    /// read from the store (issue 26): the claimed seat shows it. A failed read leaves
    /// that seat without one (logged): the room is opened all the same.
    async fn read_reserved_ratings(
        &self,
        code: &str,
        rules: &parchis_engine::RuleSet,
        director: &mut DirectorRoom,
    ) {
        for reservation in &mut director.reserved {
            if reservation.bot.is_some() || reservation.rating.is_some() {
                continue;
            }
            let Ok(account) = uuid::Uuid::parse_str(&reservation.reserved_for) else {
                continue;
            };
            match self.store().ratings_of(account).await {
                Ok(records) => {
                    let ratings = parchis_room_core::rated::display_ratings(&records);
                    reservation.rating = parchis_room_core::rated::pool_rating(rules, &ratings);
                }
                Err(e) => warn!(
                    room = %code,
                    account = %account,
                    error = %e,
                    "reading a reserved seat's rating failed"
                ),
            }
        }
    }

    /// Sends the director's `cmd` to room `code`, here or on the node running it
    /// ([`crate::Host::direct_elsewhere`]), and waits for its answer (given once what it
    /// changed is stored).
    ///
    /// # Errors
    /// `unknown_room` if the room runs nowhere; the room's refusal (see
    /// [`DirectorCmd`]); `room_unavailable` if the room stopped meanwhile.
    pub async fn direct(&self, code: &str, cmd: DirectorCmd) -> Result<DirectorAnswer, Refusal> {
        let Some(handle) = self.room(code) else {
            return self.host().direct_elsewhere(self, code, cmd).await;
        };
        let (reply, answer) = oneshot::channel();
        let gone = || Refusal::code(ErrorCode::RoomUnavailable);
        handle
            .sender()
            .send(RoomCmd::Director { cmd, reply })
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }

    /// Account `account` was renamed `name` (an administrator's rename): every room
    /// running here is told ([`RoomCmd::Rename`]); the rooms where it holds a seat show
    /// the new name and tell their connections. Rooms on other nodes of a cluster are
    /// told by their own node (the server's `accounts::renames`, over NATS).
    pub async fn rename_account(&self, account: uuid::Uuid, name: &str) {
        for handle in self.all_rooms() {
            let cmd = RoomCmd::Rename {
                account,
                name: name.to_owned(),
            };
            // A room that stopped meanwhile has nothing to rename.
            let _ = handle.sender().send(cmd).await;
        }
    }

    /// Closes the lobby of quick pairing's room `code` whose claim wait ran out
    /// ([`RoomCmd::CloseLobby`]), here or on the node running it
    /// ([`crate::Host::close_lobby_elsewhere`]): the colours whose seats were claimed
    /// (board order).
    ///
    /// # Errors
    /// `unknown_room` if the room runs nowhere (that answered); `game_started` (nothing
    /// changed); `room_unavailable` if the room stopped meanwhile or its node did not
    /// answer (whether it closed is not known: ask again).
    pub async fn close_lobby(&self, code: &str) -> Result<Vec<parchis_engine::Colour>, Refusal> {
        let Some(handle) = self.room(code) else {
            return self.host().close_lobby_elsewhere(self, code).await;
        };
        let (reply, answer) = oneshot::channel();
        let gone = || Refusal::code(ErrorCode::RoomUnavailable);
        handle
            .sender()
            .send(RoomCmd::CloseLobby { reply })
            .await
            .map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }

    /// Closes room `code` without a result (a match awarded, forfeited or replayed): a
    /// running game ends `closed_by_admin`, its connections are closed and the room is
    /// stored finished. A room that does not run here is closed where it runs
    /// ([`crate::Host::close_elsewhere`]; its answer then is `None`); one that runs nowhere
    /// and is not waiting for a takeover is answered as closed.
    ///
    /// # Errors
    /// `room_unavailable` if the room stopped while closing.
    pub async fn close_room(&self, code: &str) -> Result<Option<AdminCloseRoom>, Refusal> {
        let Some(handle) = self.room(code) else {
            return self.host().close_elsewhere(self, code).await.map(|()| None);
        };
        let (reply, answer) = oneshot::channel();
        let gone = || Refusal::code(ErrorCode::RoomUnavailable);
        handle
            .sender()
            .send(RoomCmd::Close { reply })
            .await
            .map_err(|_| gone())?;
        answer.await.map(Some).map_err(|_| gone())
    }

    /// Room `code`'s public view (a delayed game as its spectators see it), wherever it
    /// runs (`None`: it runs nowhere that answered).
    pub async fn room_view(&self, code: &str) -> Option<parchis_protocol::RoomView> {
        let Some(handle) = self.room(code) else {
            return self.host().view_elsewhere(self, code).await;
        };
        let (reply, answer) = oneshot::channel();
        handle.sender().send(RoomCmd::View { reply }).await.ok()?;
        answer.await.ok()
    }
}
