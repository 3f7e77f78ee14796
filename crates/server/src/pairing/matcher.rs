//! The matcher's loop: every [`TICK`] it drops the tickets nobody polls, asks
//! [`parchis_ratings::match_groups`] for the groups to seat, and opens one room per group
//! ([`parchis_room::Rooms::open_director_room`]): the group's seats reserved (an
//! account's by its id, a guest's by its ticket), no bots, starting by itself once every
//! seat is claimed ([`DirectorRoom::start_when_seated`]). A room that cannot be opened
//! puts its group back in the queue.
//!
//! **Claim wait.** A room whose seats are not all claimed within
//! [`Pairing::claim_wait_ms`] has its lobby closed ([`parchis_room::Rooms::close_lobby`]:
//! its connections are closed 4006 `pairing_expired`; in a cluster on whichever node runs
//! the room, asked over NATS); every ticket of its group then
//! answers `expired`, and the players who had claimed wait again in the pool under a new
//! ticket, with their original wait ([`crate::pairing_tickets::Tickets::settle`]).

use std::time::Duration;

use parchis_engine::Colour;
use parchis_protocol::{ErrorCode, RoomSettings};
use parchis_ratings::{match_groups, Group};
use parchis_room_core::reserved::{ticket_key, DirectorRoom, Reservation};
use tracing::{info, warn};

use crate::pairing_tickets::{Pairing, Settled, Ticket, Tickets};
use crate::state::AppState;

/// How often the matcher looks at the queues.
pub const TICK: Duration = Duration::from_millis(500);

/// Runs the matcher until the server shuts down: over this node's pool, or in cluster
/// mode over the database's pool while this node holds the `pairing` lease
/// ([`tick_stored`]).
pub async fn run(state: AppState) {
    let shutdown = state.shutdown_token();
    let mut every = tokio::time::interval(TICK);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut held: Option<i64> = None;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = every.tick() => match super::stored_pool(&state) {
                Some(db) => held = tick_stored(&state, db, held).await,
                None => tick(&state, state.pairing()).await,
            },
        }
    }
}

/// Cluster mode: one matcher round over the database's pool
/// (`docs/ACCOUNTS.md`, "Quick pairing in a cluster"). Takes or renews the `pairing`
/// lease (every round, for the cluster's lease TTL); without it, does nothing. With it,
/// loads every ticket, runs [`tick`] over them in memory (rooms are opened on this
/// node), and writes what changed in one transaction fenced by the lease: a node that
/// lost the lease meanwhile writes nothing. `held` is the epoch held after the last
/// round (for the log); returns the one held now.
pub async fn tick_stored(
    state: &AppState,
    db: &dyn parchis_store::PairingStore,
    held: Option<i64>,
) -> Option<i64> {
    let cluster = state.cluster()?;
    let node = cluster.node().as_str().to_owned();
    let ttl = i64::try_from(cluster.config.lease_ttl.as_millis()).unwrap_or(i64::MAX);
    let fence = match db.acquire_pairing_lease(&node, ttl).await {
        Ok(Some(fence)) => fence,
        Ok(None) => {
            if held.is_some() {
                warn!(node = %node, "quick pairing: the matcher's lease is held elsewhere now");
            }
            return None;
        }
        Err(e) => {
            warn!(node = %node, error = %e, "quick pairing: the matcher's lease not taken");
            return None;
        }
    };
    if held != Some(fence.epoch) {
        info!(node = %node, epoch = fence.epoch, "quick pairing: this node runs the matcher");
    }
    let rows = match db.pairing_tickets().await {
        Ok(rows) => rows,
        Err(e) => {
            warn!(error = %e, "quick pairing: the pool not read");
            return Some(fence.epoch);
        }
    };
    let before = Tickets::from_stored(&rows).to_stored();
    let round = Pairing::holding(Tickets::from_stored(&rows), state.pairing().claim_wait_ms);
    tick(state, &round).await;
    let after = round.lock().to_stored();
    let delete: Vec<(String, i64)> = before
        .iter()
        .filter(|(id, _)| !after.contains_key(*id))
        .map(|(id, t)| (id.clone(), t.polled_ms))
        .collect();
    let mut insert = Vec::new();
    let mut update = Vec::new();
    for (id, t) in after {
        match before.get(&id) {
            None => insert.push(t),
            Some(b) if *b != t => update.push(t),
            Some(_) => {}
        }
    }
    if insert.is_empty() && update.is_empty() && delete.is_empty() {
        return Some(fence.epoch);
    }
    if let Err(e) = db.write_pairing(&fence, &insert, &update, &delete).await {
        warn!(epoch = fence.epoch, error = %e,
            "quick pairing: the matcher's changes not written (rooms opened this round wait unclaimed)");
    }
    Some(fence.epoch)
}

/// One look at the queues of `pairing` (module docs).
pub async fn tick(state: &AppState, pairing: &Pairing) {
    let now = parchis_room::now_ms();
    let groups = {
        let mut tickets = pairing.lock();
        let dropped = tickets.expire(now);
        if dropped > 0 {
            info!(dropped, "quick-pairing tickets not polled: dropped");
        }
        let (waiting, blocks) = tickets.waiting();
        match_groups(&waiting, &blocks, now, &pairing.config)
    };
    for group in groups {
        seat_group(state, pairing, &group).await;
    }
    let overdue = pairing.lock().overdue(now);
    for room in overdue {
        settle(state, pairing, &room).await;
    }
}

/// Room `room`'s claim wait ran out: closes its lobby unless the game started, and
/// settles its tickets. The lobby is closed wherever the room runs
/// ([`parchis_room::Rooms::close_lobby`] asks the room's node in a cluster); when no node
/// runs it the store says what became of it ([`stored_outcome`]). Whatever is not known
/// (a node that did not answer, a lobby waiting for a takeover, a store failure) is asked
/// again next round: the tickets stay paired meanwhile.
async fn settle(state: &AppState, pairing: &Pairing, room: &str) {
    let outcome = match state.rooms().close_lobby(room).await {
        Ok(claimed) => Settled::Closed(claimed),
        Err(r) if r.code == ErrorCode::GameStarted => Settled::Started,
        // Running nowhere (that answered): gone, or in a cluster stored and waiting for a
        // takeover, or closed by an earlier close whose answer was lost.
        Err(r) if r.code == ErrorCode::UnknownRoom => match stored_outcome(state, room).await {
            Some(outcome) => outcome,
            None => {
                warn!(%room, "quick pairing: the claim wait ran out for a lobby that runs nowhere now (waiting for a takeover); retrying");
                return;
            }
        },
        Err(r) => {
            warn!(%room, code = ?r.code, message = %r.message,
                "quick pairing: the claim wait ran out but the lobby was not closed; retrying");
            return;
        }
    };
    let now = parchis_room::now_ms();
    let requeued = pairing
        .lock()
        .settle(room, &outcome, now, super::new_ticket);
    if let Settled::Closed(claimed) = &outcome {
        info!(%room, claimed = claimed.len(), requeued = requeued.len(),
            "quick pairing: seats not all claimed in time; lobby closed");
    }
}

/// What became of room `room`, which runs on no node, by the store (cluster mode; on a
/// single node a room that does not run here is gone: [`Settled::Started`]).
/// `None` (ask again): stored as a lobby (a takeover will bring it back), or the store
/// failed. A room stored finished without ever starting had its lobby closed (an earlier
/// close whose answer was lost): [`Settled::Closed`] with its stored players' colours
/// (board order); one that started, or is not stored: [`Settled::Started`].
async fn stored_outcome(state: &AppState, room: &str) -> Option<Settled> {
    if state.cluster().is_none() {
        return Some(Settled::Started);
    }
    match state.store().get_room(room).await {
        Ok(snap) => stored_settled(snap.as_ref()),
        Err(e) => {
            warn!(%room, error = %e, "quick pairing: the room not read; retrying its claim wait");
            None
        }
    }
}

/// [`stored_outcome`]'s reading of a room that runs nowhere, `snap` as stored (`None`:
/// not stored).
fn stored_settled(snap: Option<&parchis_store::RoomSnapshot>) -> Option<Settled> {
    match snap {
        Some(snap) if snap.room.status == parchis_store::RoomStatus::Open => None,
        Some(snap) if snap.game.is_none() && snap.room.started_at_ms.is_none() => {
            let mut claimed: Vec<Colour> = snap
                .seats
                .iter()
                .filter(|s| s.bot.is_none())
                .filter_map(|s| s.colour.parse().ok())
                .collect();
            claimed.sort_by_key(|c| Colour::ALL.iter().position(|x| x == c));
            Some(Settled::Closed(claimed))
        }
        _ => Some(Settled::Started),
    }
}

/// Colours of a group's seats, in the group's order (the longest waiting first): the
/// two opposite corners for two players, board order for four.
fn colours(seats: usize) -> Vec<Colour> {
    if seats == 2 {
        vec![Colour::Yellow, Colour::Red]
    } else {
        Colour::ALL.into_iter().take(seats).collect()
    }
}

/// The reservation of `ticket` (id `id`) for `colour`.
fn reservation(id: &str, ticket: &Ticket, colour: Colour) -> Reservation {
    Reservation {
        colour,
        reserved_for: match ticket.account {
            Some(account) => account.to_string(),
            None => ticket_key(id),
        },
        name: ticket.name.clone(),
        bot: None,
        rating: ticket.rating,
    }
}

async fn seat_group(state: &AppState, pairing: &Pairing, group: &Group) {
    let Some(seated) = pairing.lock().seat(&group.queue, &group.players) else {
        return;
    };
    let colours = colours(seated.len());
    let director = DirectorRoom {
        reserved: seated
            .iter()
            .zip(&colours)
            .map(|((id, t), &c)| reservation(id, t, c))
            .collect(),
        start_when_seated: true,
    };
    let settings = serde_json::from_value::<RoomSettings>(serde_json::json!({
        "preset": group.queue.pool.as_str(),
        "seats": group.queue.seats,
        "rated": group.queue.rated,
        "public": false,
    }));
    let code = parchis_room::ids::room_code();
    let opened = match settings {
        Ok(settings) => state
            .rooms()
            .open_director_room(&code, settings, director)
            .await
            .map_err(|r| r.message),
        Err(e) => Err(e.to_string()),
    };
    let deadline = parchis_room::now_ms() + pairing.claim_wait_ms;
    let mut tickets = pairing.lock();
    match opened {
        Ok(_) => {
            info!(room = %code, pool = %group.queue.pool, seats = group.queue.seats,
                rated = group.queue.rated, "quick pairing: room opened");
            for ((id, _), colour) in seated.iter().zip(colours) {
                tickets.seated(id, Some((code.clone(), colour, deadline)));
            }
        }
        Err(message) => {
            warn!(room = %code, pool = %group.queue.pool, %message,
                "quick pairing: room not opened; the group waits again");
            for (id, _) in &seated {
                tickets.seated(id, None);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parchis_store::{RoomRecord, RoomSnapshot, RoomStatus, SeatRecord};

    fn snapshot(status: RoomStatus, started: bool, seats: &[&str]) -> RoomSnapshot {
        RoomSnapshot {
            room: RoomRecord {
                code: "R1".into(),
                settings: serde_json::json!({}),
                status,
                created_at_ms: 1,
                started_at_ms: started.then_some(2),
                finished_at_ms: None,
                updated_at_ms: 2,
            },
            seats: seats
                .iter()
                .map(|c| SeatRecord {
                    room_code: "R1".into(),
                    colour: (*c).into(),
                    display_name: format!("p_{c}"),
                    token_hash: String::new(),
                    is_creator: false,
                    joined_at_ms: 1,
                    bot: None,
                    account_id: None,
                })
                .collect(),
            game: None,
            events: Vec::new(),
            log: None,
        }
    }

    #[test]
    fn a_room_running_nowhere_is_settled_by_what_the_store_holds() {
        // A lobby waits for its takeover: asked again.
        let open = snapshot(RoomStatus::Open, false, &["red"]);
        assert_eq!(stored_settled(Some(&open)), None);
        // Closed without a game (the close's answer was lost): its players had claimed,
        // in board order.
        let closed = snapshot(RoomStatus::Finished, false, &["red", "yellow"]);
        assert_eq!(
            stored_settled(Some(&closed)),
            Some(Settled::Closed(vec![Colour::Yellow, Colour::Red]))
        );
        let empty = snapshot(RoomStatus::Finished, false, &[]);
        assert_eq!(stored_settled(Some(&empty)), Some(Settled::Closed(vec![])));
        // Started (playing, or finished after its game), or not stored: started.
        let playing = snapshot(RoomStatus::Playing, true, &["red", "yellow"]);
        assert_eq!(stored_settled(Some(&playing)), Some(Settled::Started));
        let over = snapshot(RoomStatus::Finished, true, &["red", "yellow"]);
        assert_eq!(stored_settled(Some(&over)), Some(Settled::Started));
        assert_eq!(stored_settled(None), Some(Settled::Started));
    }
}
