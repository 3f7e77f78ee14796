//! The directors of this process ([`Directors`]): create a tournament, restore the stored
//! ones at start, hand inputs to their actors, read their published views, and (cluster
//! mode) claim the tournaments nobody directs and let go of them all on a drain.

use crate::actor::{Command, Director};
use crate::error::DirectorError;
use crate::lease::{Held, Leasing};
use crate::log;
use crate::relay::ViewRelay;
use parchis_room::{now_ms, Rooms};
use parchis_store::MAX_TOURNAMENTS_LISTED;
use parchis_tournament::{Input, Official, Settings, Tournament, TournamentView};
use rand::RngCore;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;
use tracing::{error, info};
use uuid::Uuid;

/// Commands queued per director before senders wait.
const QUEUE: usize = 64;

/// Longest wait of [`Directors::drain`] for its directors to stop (each stops between
/// two inputs; an input is one store write and its effects).
const DRAIN_WAIT: Duration = Duration::from_secs(5);

#[derive(Clone)]
struct Handle {
    tx: mpsc::Sender<Command>,
    view: watch::Receiver<Arc<TournamentView>>,
    stop: CancellationToken,
}

/// The tournaments' directors running in this process. Cheap to clone.
#[derive(Clone)]
pub struct Directors {
    inner: Arc<Inner>,
}

struct Inner {
    rooms: Rooms,
    /// Cluster mode: directors run only where their tournament's lease is held.
    leasing: Option<Leasing>,
    /// Tournament id → its director. A std mutex, never held across `.await`.
    running: Mutex<HashMap<Uuid, Handle>>,
    /// Serialises the loading of a director (two readers never start two actors).
    loading: tokio::sync::Mutex<()>,
    /// Cluster mode: where published views go besides the local subscribers.
    relay: Option<Arc<dyn ViewRelay>>,
    /// Cluster mode: the node drains (SIGTERM): it directs nothing any more.
    draining: AtomicBool,
    /// Serialises [`Directors::create_at_most`]'s count and creation (two creations at
    /// once by one organiser never both pass its limit).
    creating: tokio::sync::Mutex<()>,
}

impl Directors {
    /// The directors of tournaments whose rooms run on `rooms` (and its store).
    pub fn new(rooms: Rooms) -> Directors {
        Directors::with_leasing(rooms, None)
    }

    /// As [`Directors::new`]; in cluster mode (`leasing`) a director runs only on the node
    /// holding its tournament's lease, and its appends are fenced by it.
    pub fn with_leasing(rooms: Rooms, leasing: Option<Leasing>) -> Directors {
        Directors::clustered(rooms, leasing, None)
    }

    /// As [`Directors::with_leasing`], every published view also sent to `relay`
    /// (cluster mode: the live subscribers of other nodes).
    pub fn clustered(
        rooms: Rooms,
        leasing: Option<Leasing>,
        relay: Option<Arc<dyn ViewRelay>>,
    ) -> Directors {
        Directors {
            inner: Arc::new(Inner {
                rooms,
                leasing,
                running: Mutex::new(HashMap::new()),
                loading: tokio::sync::Mutex::new(()),
                relay,
                draining: AtomicBool::new(false),
                creating: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// This node's id in cluster mode (`None` on a single node).
    pub fn node(&self) -> Option<&str> {
        self.inner.leasing.as_ref().map(|l| l.node.as_str())
    }

    /// Cluster mode's drain (SIGTERM, `docs/CLUSTER.md` "Drain"): from now on this node
    /// directs nothing (it takes no lease: commands are forwarded, reads fold the store),
    /// and every director running here stops between two inputs and releases its lease,
    /// so another node's claim loop takes the tournament at once instead of after the
    /// TTL. Returns how many directors stopped within `DRAIN_WAIT`.
    pub async fn drain(&self) -> usize {
        self.inner.draining.store(true, Ordering::SeqCst);
        let handles: Vec<(Uuid, Handle)> = {
            let _guard = self.inner.loading.lock().await;
            self.running()
                .iter()
                .map(|(id, h)| (*id, h.clone()))
                .collect()
        };
        for (_, h) in &handles {
            h.stop.cancel();
        }
        let mut stopped = 0;
        let wait = tokio::time::Instant::now() + DRAIN_WAIT;
        for (id, h) in handles {
            if tokio::time::timeout_at(wait, h.tx.closed()).await.is_ok() {
                stopped += 1;
            } else {
                tracing::warn!(tournament = %id, "director did not stop within the drain's wait");
            }
        }
        info!(stopped, "tournament directors drained");
        stopped
    }

    fn draining(&self) -> bool {
        self.inner.draining.load(Ordering::SeqCst)
    }

    fn running(&self) -> MutexGuard<'_, HashMap<Uuid, Handle>> {
        self.inner.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates a tournament organised by `organiser` (its account and username): stores its first event, starts its
    /// director, returns its id (a UUID v7). Its seed comes from the OS CSPRNG.
    ///
    /// # Errors
    /// [`DirectorError::Settings`] for invalid settings; the store's.
    pub async fn create(
        &self,
        organiser: Official,
        settings: Settings,
    ) -> Result<Uuid, DirectorError> {
        let id = Uuid::now_v7();
        let mut seed = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut seed);
        let now = now_ms();
        let by = organiser.account;
        let first = Tournament::create(id, organiser, settings, seed, now)?;
        let t = Tournament::from_entries(std::slice::from_ref(&first))?;
        let value = log::encode(std::slice::from_ref(&first))?
            .pop()
            .ok_or(DirectorError::Stopped)?;
        let store = self.inner.rooms.store().clone();
        log::tournaments(store.as_ref())?
            .create_tournament(id, now, &value)
            .await?;
        info!(tournament = %id, organiser = %by, "tournament created");
        let _guard = self.inner.loading.lock().await;
        match self.lease(id).await {
            Ok(lease) => {
                self.spawn(t, 1, lease);
            }
            // Stored, and this node drains: another node's claim loop directs it.
            Err(DirectorError::Elsewhere { .. }) => {
                info!(tournament = %id, "created on a draining node: another node will direct it")
            }
            Err(e) => return Err(e),
        }
        Ok(id)
    }

    /// As [`Directors::create`], unless `organiser` already organises `max_open`
    /// tournaments that have not finished and whose directors run in this process (all
    /// of a single node's; in a cluster, this node's: the limit is per node there).
    ///
    /// # Errors
    /// [`DirectorError::TooManyOpen`] (nothing stored); as [`Directors::create`].
    pub async fn create_at_most(
        &self,
        organiser: Official,
        settings: Settings,
        max_open: usize,
    ) -> Result<Uuid, DirectorError> {
        let _one_at_a_time = self.inner.creating.lock().await;
        let open = self.open_organised_by(organiser.account);
        if open >= max_open {
            info!(organiser = %organiser.account, open, max_open, "tournament refused: too many open");
            return Err(DirectorError::TooManyOpen { max: max_open });
        }
        self.create(organiser, settings).await
    }

    /// How many tournaments organised by `account` and not finished have their director
    /// running in this process.
    pub fn open_organised_by(&self, account: Uuid) -> usize {
        self.running()
            .values()
            .filter(|h| !h.tx.is_closed())
            .filter(|h| {
                let v = h.view.borrow();
                v.organiser == account && v.status != parchis_tournament::Phase::Finished
            })
            .count()
    }

    /// Cluster mode: acquires tournament `id`'s lease for this node (`None` in single-node
    /// mode).
    ///
    /// # Errors
    /// [`DirectorError::Elsewhere`] when another node holds it; the store's.
    async fn lease(&self, id: Uuid) -> Result<Option<Held>, DirectorError> {
        let Some(leasing) = &self.inner.leasing else {
            return Ok(None);
        };
        let store = self.inner.rooms.store().clone();
        let acquired = if self.draining() {
            None
        } else {
            leasing.acquire(store.as_ref(), id).await?
        };
        match acquired {
            Some(fence) => Ok(Some(Held::new(leasing.clone(), fence))),
            None => {
                let owner = log::tournaments(store.as_ref())?
                    .tournament_lease_owner(id)
                    .await?
                    .unwrap_or_default();
                Err(DirectorError::Elsewhere {
                    tournament: id,
                    owner,
                })
            }
        }
    }

    fn spawn(&self, t: Tournament, seq: i64, lease: Option<Held>) -> Handle {
        let id = t.id();
        let stop = CancellationToken::new();
        let (director, view) = Director::new(
            t,
            seq,
            self.inner.rooms.clone(),
            lease,
            self.inner.relay.clone(),
            stop.clone(),
        );
        let (tx, rx) = mpsc::channel(QUEUE);
        let handle = Handle { tx, view, stop };
        self.running().insert(id, handle.clone());
        let me = self.clone();
        self.inner.rooms.tracker().spawn(async move {
            director.run(rx).await;
            me.running().remove(&id);
        });
        handle
    }

    /// The director of `id`, started from the store if it does not run yet.
    async fn handle(&self, id: Uuid) -> Result<Handle, DirectorError> {
        if let Some(h) = self.running().get(&id).filter(|h| !h.tx.is_closed()) {
            return Ok(h.clone());
        }
        let _guard = self.inner.loading.lock().await;
        if let Some(h) = self.running().get(&id).filter(|h| !h.tx.is_closed()) {
            return Ok(h.clone());
        }
        let store = self.inner.rooms.store().clone();
        if log::load(store.as_ref(), id).await?.is_empty() {
            return Err(DirectorError::NotFound(id));
        }
        // The lease, then the log again: what is read after taking it is all there is.
        let lease = self.lease(id).await?;
        let entries = log::load(store.as_ref(), id).await?;
        let t = Tournament::from_entries(&entries)?;
        Ok(self.spawn(t, entries.len() as i64, lease))
    }

    /// Tournament `id`'s state folded from the store, for reading on a node that does not
    /// direct it.
    async fn stored(&self, id: Uuid) -> Result<Tournament, DirectorError> {
        Ok(self.stored_view_parts(id).await?.1)
    }

    async fn stored_view_parts(&self, id: Uuid) -> Result<(i64, Tournament), DirectorError> {
        let store = self.inner.rooms.store().clone();
        let entries = log::load(store.as_ref(), id).await?;
        if entries.is_empty() {
            return Err(DirectorError::NotFound(id));
        }
        Ok((entries.len() as i64, Tournament::from_entries(&entries)?))
    }

    /// Tournament `id`'s view folded from the store, with the last stored seq it folds
    /// (cluster mode: what a node that does not direct it serves, and the order of the
    /// views relayed by [`ViewRelay`]).
    ///
    /// # Errors
    /// [`DirectorError::NotFound`]; the store's; the fold's.
    pub async fn stored_view(&self, id: Uuid) -> Result<(i64, Arc<TournamentView>), DirectorError> {
        let (seq, t) = self.stored_view_parts(id).await?;
        Ok((seq, Arc::new(t.view())))
    }

    /// Cluster mode: every [`Leasing::period`], takes the lease of every unfinished stored
    /// tournament whose lease is absent or expired (its director died, was drained or
    /// never ran; `claimable_tournament_ids`, oldest first) and starts its director here, which resumes from the store and performs what it still owes. Ends
    /// at shutdown; does nothing in single-node mode.
    pub async fn claim_loop(self) {
        let Some(leasing) = self.inner.leasing.clone() else {
            return;
        };
        let shutdown = self.inner.rooms.shutdown_token();
        let mut every = tokio::time::interval(leasing.period());
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = every.tick() => {}
            }
            if self.draining() {
                break;
            }
            let store = self.inner.rooms.store().clone();
            let ids = match log::tournaments(store.as_ref()) {
                Ok(ts) => ts.claimable_tournament_ids(MAX_TOURNAMENTS_LISTED).await,
                Err(_) => return,
            };
            let ids = match ids {
                Ok(ids) => ids,
                Err(e) => {
                    tracing::warn!(error = %e, "tournaments not listed for claiming");
                    continue;
                }
            };
            for id in ids {
                if self.running().get(&id).is_some_and(|h| !h.tx.is_closed()) {
                    continue;
                }
                match self.handle(id).await {
                    Ok(_) => info!(tournament = %id, node = %leasing.node, "tournament claimed"),
                    Err(DirectorError::Elsewhere { .. }) => {}
                    Err(e) => error!(tournament = %id, error = %e, "tournament not claimed"),
                }
            }
        }
    }

    /// Starts the director of every unfinished stored tournament (at server start, oldest
    /// first; a finished one starts when it is read): each performs what it still owes.
    /// Returns how many run.
    ///
    /// # Errors
    /// The store's (listing); a tournament that does not load is logged and skipped.
    pub async fn restore_all(&self) -> Result<usize, DirectorError> {
        let store = self.inner.rooms.store().clone();
        let Some(ts) = store.tournaments() else {
            return Ok(0);
        };
        let ids = ts.unfinished_tournament_ids(MAX_TOURNAMENTS_LISTED).await?;
        let mut n = 0;
        for id in ids {
            match self.handle(id).await {
                Ok(_) => n += 1,
                Err(e) => error!(tournament = %id, error = %e, "tournament not restored"),
            }
        }
        info!(restored = n, "tournaments restored");
        Ok(n)
    }

    /// Hands `input` to tournament `id`'s director and waits until its events are durable
    /// and their effects performed.
    ///
    /// # Errors
    /// [`DirectorError::NotFound`]; the core's refusal; the store's.
    pub async fn input(&self, id: Uuid, input: Input) -> Result<(), DirectorError> {
        let handle = self.handle(id).await?;
        let (reply, answer) = oneshot::channel();
        handle
            .tx
            .send(Command { input, reply })
            .await
            .map_err(|_| DirectorError::Stopped)?;
        answer.await.map_err(|_| DirectorError::Stopped)?
    }

    /// Tournament `id`'s latest published view.
    ///
    /// # Errors
    /// [`DirectorError::NotFound`]; the store's.
    pub async fn view(&self, id: Uuid) -> Result<Arc<TournamentView>, DirectorError> {
        match self.handle(id).await {
            Ok(h) => Ok(h.view.borrow().clone()),
            // Directed by another node: its stored state (as durable as what it publishes).
            Err(DirectorError::Elsewhere { .. }) => Ok(Arc::new(self.stored(id).await?.view())),
            Err(e) => Err(e),
        }
    }

    /// A subscription to tournament `id`'s published views (the current one first).
    ///
    /// # Errors
    /// As [`Directors::view`].
    pub async fn subscribe(
        &self,
        id: Uuid,
    ) -> Result<watch::Receiver<Arc<TournamentView>>, DirectorError> {
        let mut rx = self.handle(id).await?.view;
        rx.mark_changed();
        Ok(rx)
    }

    /// Up to `limit` tournaments' views, newest first.
    ///
    /// # Errors
    /// The store's.
    pub async fn list(&self, limit: u32) -> Result<Vec<Arc<TournamentView>>, DirectorError> {
        let store = self.inner.rooms.store().clone();
        let ids = log::tournaments(store.as_ref())?
            .tournament_ids(limit)
            .await?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            out.push(self.view(id).await?);
        }
        Ok(out)
    }

    /// `Ok` when tournament `id` exists (its director then runs here, or on the node
    /// holding its lease).
    ///
    /// # Errors
    /// As [`Directors::view`].
    pub async fn exists(&self, id: Uuid) -> Result<(), DirectorError> {
        match self.handle(id).await {
            Ok(_) | Err(DirectorError::Elsewhere { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
