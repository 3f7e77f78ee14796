//! Seats' ratings read again from the store (issue 26, `SeatView.rating`): after a
//! restore and once a game's end is stored. Below both the actor and the restore.

use crate::rooms::Rooms;
use parchis_room_core::core::Core;

/// Reads the display ratings of every account seated in `core` from the store again and
/// sets each seat's (its room's pool's, `SeatView.rating`; issue 26), as the gateway does
/// at a join. A failed read leaves that account's seats without a rating (logged): a room
/// is not kept closed, nor a game's end held up, for it. Used by a restore and, once a
/// game's end is stored, by the actor (so a rematch shows the ratings after the game).
pub(crate) async fn read_ratings(rooms: &Rooms, core: &mut Core) {
    for account in core.seated_accounts() {
        match rooms.store().ratings_of(account).await {
            Ok(records) => core.set_account_ratings(
                account,
                &parchis_room_core::rated::display_ratings(&records),
            ),
            Err(e) => tracing::warn!(
                room = %core.code(),
                account = %account,
                error = %e,
                "reading a seat's ratings failed"
            ),
        }
    }
}
