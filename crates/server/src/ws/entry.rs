//! The entry into a room: `join`, `watch`, `resume` or `claim`, checked by the session, go to the
//! room's actor when it runs on this node, or (cluster mode, `docs/CLUSTER.md`,
//! "Routing") to its owner on another node; a room that no node serves is looked up in
//! the store (unknown, finished, or being moved: `room_unavailable`).

use super::session::{Flow, Joined, Session};
use crate::state::AppState;
use parchis_cluster::routing::{self, ask::Unreachable, wire::AttachHow, Route, RouteCell};
use parchis_protocol::ErrorCode;
use parchis_room::RoomCmd;
use tokio::sync::oneshot;

/// A `join`, `watch` or `resume`, checked, before it goes to the room (here or on its
/// owner).
pub(super) enum Entry {
    Join {
        name: String,
        colour: Option<parchis_engine::Colour>,
        client_seed: Option<String>,
        /// The logged-in player's account (`name` is then its username).
        account: Option<uuid::Uuid>,
        /// Its display ratings by pool, read from the store (empty for a guest).
        ratings: std::collections::BTreeMap<String, i64>,
    },
    Watch,
    /// `token` empty: the seat of `account`.
    Resume {
        token: String,
        last_seq: u64,
        account: Option<uuid::Uuid>,
    },
    /// `claim`: the reservation's key (the account's id, or a ticket's key).
    Claim {
        key: String,
        client_seed: Option<String>,
    },
}

/// What the store says about a room nobody serves (cluster mode).
pub(super) enum Unserved {
    /// No such room.
    Unknown,
    /// Its game is over.
    Finished,
    /// It is unfinished: its owner is being replaced.
    Moving,
}

/// For a `resume` of a room that is no longer live: if the store holds the room and
/// `token` is one of its seats, the answer naming how its last game ended (its result and
/// where to read it), e.g. a bot game that finished while the person was away or the
/// server restarted. `None` otherwise (the caller answers `unknown_room`).
async fn finished_game(state: &AppState, code: &str, token: &str) -> Option<String> {
    let store = state.store();
    let snapshot = match store.get_room(code).await {
        Ok(s) => s?,
        Err(e) => {
            tracing::warn!(room = %code, error = %e, "store failed looking up a gone room");
            return None;
        }
    };
    let hash = parchis_store::hash_token(token);
    let seat = snapshot.seats.iter().find(|s| s.token_hash == hash)?;
    let games = store.list_games(code).await.ok()?;
    let game = games.iter().rev().find(|g| g.finished_at_ms.is_some())?;
    let result = game
        .result
        .as_ref()
        .map(|r| r.to_string())
        .unwrap_or_else(|| "null".into());
    Some(format!(
        "the game is over ({}); you played {}; result {result}; the whole game: /api/games/{}",
        game.reason.as_deref().unwrap_or("ended"),
        seat.colour,
        game.id
    ))
}

impl Session {
    /// The display ratings by pool of `account`, read from the store for its seat
    /// (issue 26); empty, with a warning, when the store fails (the seat then shows none:
    /// a join is not refused for it).
    pub(super) async fn display_ratings(
        &self,
        account: uuid::Uuid,
    ) -> std::collections::BTreeMap<String, i64> {
        match crate::accounts::ratings::ratings_of(self.state.store().as_ref(), account).await {
            Ok(ratings) => ratings
                .into_iter()
                .map(|(pool, r)| (pool, r.display))
                .collect(),
            Err(e) => {
                tracing::warn!(account = %account, error = ?e, "reading a seat's ratings failed");
                Default::default()
            }
        }
    }

    /// The session joined `code`, reached through `route`.
    pub(super) fn joined(&mut self, code: String, route: Route) {
        let cell: RouteCell = std::sync::Arc::new(std::sync::Mutex::new(route));
        if let Some(cluster) = self.state.cluster() {
            cluster.routing.register_cell(self.link.id, cell.clone());
        }
        self.joined = Some(Joined { code, cell });
    }

    /// A `join`, `watch` or `resume` of a room running on this node.
    pub(super) async fn local_entry(
        &mut self,
        handle: parchis_room::RoomHandle,
        room: String,
        req: u64,
        entry: Entry,
    ) -> Flow {
        let (reply, answer) = oneshot::channel();
        let link = self.link.clone();
        let cmd = match entry {
            Entry::Join {
                name,
                colour,
                client_seed,
                account,
                ratings,
            } => RoomCmd::Join {
                link,
                req,
                name,
                colour,
                client_seed: client_seed.map(Into::into),
                account: account.map(|id| Box::new(parchis_room::JoinAccount { id, ratings })),
                reply,
            },
            Entry::Watch => RoomCmd::Watch { link, req, reply },
            Entry::Claim { key, client_seed } => RoomCmd::Claim {
                link,
                req,
                key,
                client_seed,
                reply,
            },
            Entry::Resume {
                token,
                last_seq,
                account,
            } => RoomCmd::Resume {
                link,
                req,
                token,
                last_seq,
                account,
                reply,
            },
        };
        // Closed meanwhile: in cluster mode it is moving to another node (retryable).
        let closed = if self.state.cluster().is_some() {
            ErrorCode::RoomUnavailable
        } else {
            ErrorCode::UnknownRoom
        };
        if handle.sender().send(cmd).await.is_err() {
            return self.error(Some(req), closed, "the room has closed");
        }
        match answer.await {
            Ok(Ok(member)) => {
                self.joined(room, Route::Local { handle, member });
                Flow::Continue
            }
            Ok(Err(refusal)) => self.refuse(Some(req), refusal),
            Err(_) => self.error(Some(req), closed, "the room has closed"),
        }
    }

    /// Cluster mode: a `join`, `watch` or `resume` of a room this node does not run, sent
    /// to its owner (`docs/CLUSTER.md`, "Routing").
    pub(super) async fn remote_entry(&mut self, room: String, req: u64, entry: Entry) -> Flow {
        if known_unknown(&self.state, &room) {
            // Found unknown a moment ago: no NATS request, no store read.
            return self.error(
                Some(req),
                ErrorCode::UnknownRoom,
                format!("no room has code {room:?}"),
            );
        }
        let how = match &entry {
            Entry::Join {
                name,
                colour,
                client_seed,
                account,
                ratings,
            } => AttachHow::Join {
                req,
                name: name.clone(),
                colour: *colour,
                client_seed: client_seed.clone(),
                account: *account,
                ratings: ratings.clone(),
            },
            Entry::Watch => AttachHow::Watch { req },
            Entry::Claim { key, client_seed } => AttachHow::Claim {
                req,
                key: key.clone(),
                client_seed: client_seed.clone(),
            },
            Entry::Resume {
                token,
                last_seq,
                account,
            } => AttachHow::Resume {
                req,
                token: token.clone(),
                last_seq: *last_seq,
                account: *account,
            },
        };
        match routing::forward::attach(self.state.node(), &room, &self.link, how).await {
            Ok(Ok(())) => {
                self.joined(room, Route::Remote);
                Flow::Continue
            }
            Ok(Err(refusal)) => self.refuse(Some(req), refusal),
            Err(Unreachable::Failed) => self.unserved(room, req, &entry, Unserved::Moving).await,
            Err(Unreachable::NoResponders) => {
                let found = unserved_room(&self.state, &room).await;
                self.unserved(room, req, &entry, found).await
            }
        }
    }

    /// The answer for a room that no node serves.
    pub(super) async fn unserved(
        &mut self,
        room: String,
        req: u64,
        entry: &Entry,
        found: Unserved,
    ) -> Flow {
        match found {
            Unserved::Moving => {
                self.state.node().wake_sweeper();
                self.error(
                    Some(req),
                    ErrorCode::RoomUnavailable,
                    ErrorCode::RoomUnavailable.describe(),
                )
            }
            Unserved::Unknown | Unserved::Finished => {
                if let Entry::Resume { token, .. } = entry {
                    if let Some(ended) = finished_game(&self.state, &room, token).await {
                        return self.error(Some(req), ErrorCode::GameOver, ended);
                    }
                }
                self.error(
                    Some(req),
                    ErrorCode::UnknownRoom,
                    format!("no room has code {room:?}"),
                )
            }
        }
    }
}

/// Whether room `code` was found unknown a moment ago (cluster mode: the negative cache,
/// [`parchis_cluster::routing::unknown`]).
fn known_unknown(state: &AppState, code: &str) -> bool {
    state
        .cluster()
        .is_some_and(|c| c.routing.unknown.is_unknown(code))
}

/// Whether room `code` exists for a command before joining (`not_joined` or
/// `unknown_room`): it runs here, or (cluster mode) some node serves it. A code found
/// unknown a moment ago (by a room view, `join`, `watch` or `resume`) is not probed on
/// NATS again; the probe itself reads nothing from the store.
pub(super) async fn served_somewhere(state: &AppState, code: &str) -> bool {
    if state.room(code).is_some() {
        return true;
    }
    !known_unknown(state, code) && routing::ask::served(state.node(), code).await
}

/// Cluster mode: what the store says about room `code`, which no node serves. A room the
/// store does not hold is remembered as unknown for a few seconds.
async fn unserved_room(state: &AppState, code: &str) -> Unserved {
    match state.store().get_room(code).await {
        Ok(None) => {
            if let Some(c) = state.cluster() {
                c.routing.unknown.note(code);
            }
            Unserved::Unknown
        }
        Ok(Some(s)) if s.room.status == parchis_store::RoomStatus::Finished => Unserved::Finished,
        // A retired lease: the room was disposed of (an idle lobby); nobody runs it again.
        Ok(Some(_)) => match state.store().lease(code).await {
            Ok(Some(lease)) if lease.retired => Unserved::Unknown,
            _ => Unserved::Moving,
        },
        Err(e) => {
            tracing::warn!(room = %code, error = %e, "store failed looking up an unserved room");
            Unserved::Moving
        }
    }
}
