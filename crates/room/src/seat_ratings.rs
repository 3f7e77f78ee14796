//! Seats' ratings read again from the store (issue 26, `SeatView.rating`): after a
//! restore, once a game's end is stored, and when a rated game of another room (on this
//! node or, in a cluster, another) changed the ratings of accounts seated here. Below
//! both the actor and the restore.

use crate::rooms::Rooms;
use crate::RoomCmd;
use parchis_room_core::core::{Core, Effect};

/// Reads the display ratings of every account seated in `core` from the store again and
/// sets each seat's (its room's pool's, `SeatView.rating`; issue 26), as the gateway does
/// at a join. A failed read leaves that account's seats without a rating (logged): a room
/// is not kept closed, nor a game's end held up, for it. Used by a restore and, once a
/// game's end is stored, by the actor (so a rematch shows the ratings after the game).
pub(crate) async fn read_ratings(rooms: &Rooms, core: &mut Core) {
    for account in core.seated_accounts() {
        if let Some(ratings) = stored_ratings(rooms, core.code(), account).await {
            core.set_account_ratings(account, &ratings);
        }
    }
}

/// `account`'s display ratings by pool as stored (`rated::display_ratings`), or `None`
/// when the read failed (logged with the room).
async fn stored_ratings(
    rooms: &Rooms,
    room: &str,
    account: uuid::Uuid,
) -> Option<std::collections::BTreeMap<String, i64>> {
    match rooms.store().ratings_of(account).await {
        Ok(records) => Some(parchis_room_core::rated::display_ratings(&records)),
        Err(e) => {
            tracing::warn!(
                room = %room,
                account = %account,
                error = %e,
                "reading a seat's ratings failed"
            );
            None
        }
    }
}

/// The ratings of `accounts` changed elsewhere ([`RoomCmd::Rerate`]): the ratings of
/// those seated in `core` are read again from the store and the core updates their seats
/// and tells the room ([`Core::rerate_account`]); the effects to carry out. An account
/// not seated here is not read. A failed read leaves that account's seats as they were
/// (logged).
pub(crate) async fn rerate(rooms: &Rooms, core: &mut Core, accounts: &[uuid::Uuid]) -> Vec<Effect> {
    let mut effects = Vec::new();
    for account in core.seated_accounts() {
        if !accounts.contains(&account) {
            continue;
        }
        if let Some(ratings) = stored_ratings(rooms, core.code(), account).await {
            effects.extend(core.rerate_account(account, &ratings));
        }
    }
    effects
}

impl Rooms {
    /// The ratings of `accounts` changed (a rated game's end or an administrator's reset
    /// was stored; issue 26): every room running here but `except` (the room whose game
    /// ended, which read them again itself) is told ([`RoomCmd::Rerate`]); the rooms
    /// where one of them holds a seat show the new rating and tell their connections.
    /// Rooms on other nodes of a cluster are told by their own node (the announcing
    /// node's [`crate::Host::ratings_changed`] publishes the accounts over NATS).
    pub async fn rerate_accounts(&self, accounts: &[uuid::Uuid], except: Option<&str>) {
        if accounts.is_empty() {
            return;
        }
        for handle in self.all_rooms() {
            if Some(handle.code()) == except {
                continue;
            }
            let cmd = RoomCmd::Rerate {
                accounts: accounts.to_vec(),
            };
            // A room that stopped meanwhile has no seat to update.
            let _ = handle.sender().send(cmd).await;
        }
    }

    /// The new ratings of `accounts` are stored (the end of a rated game of room
    /// `except`, which read them again itself; an administrator's reset, `None`): the
    /// rooms of this node but `except` and, through the host
    /// ([`crate::Host::ratings_changed`]), those of every other node show them. Runs on a
    /// task of its own: a room's actor never waits for other rooms' queues.
    pub fn ratings_changed(&self, except: Option<&str>, accounts: Vec<uuid::Uuid>) {
        if accounts.is_empty() {
            return;
        }
        let rooms = self.clone();
        let except = except.map(str::to_owned);
        self.tracker().spawn(async move {
            rooms.rerate_accounts(&accounts, except.as_deref()).await;
            let host = rooms.host().clone();
            host.ratings_changed(&rooms, &accounts).await;
        });
    }
}
