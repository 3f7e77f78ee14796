//! Reads of the test's database: room leases, stored games and their events.

use crate::harness::Cluster;
use serde_json::Value;
use sqlx::Row;
use std::time::{Duration, Instant};

/// The lease row of a room (`room_leases`), with the database's view of its expiry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub owner: String,
    pub epoch: i64,
    pub retired: bool,
    /// `expires_at - now()` by the database's clock, ms (negative: expired).
    pub ms_left: i64,
}
impl Cluster {
    /// The lease of `room`, if it has a row.
    pub async fn lease(&self, room: &str) -> Option<Lease> {
        let row = sqlx::query(
            "SELECT owner, epoch, retired, \
             (EXTRACT(EPOCH FROM (expires_at - now())) * 1000)::BIGINT AS ms_left \
             FROM room_leases WHERE room_code = $1",
        )
        .bind(room)
        .fetch_optional(&self.db)
        .await
        .expect("read room_leases")?;
        Some(Lease {
            owner: row.get("owner"),
            epoch: row.get("epoch"),
            retired: row.get("retired"),
            ms_left: row.get("ms_left"),
        })
    }

    /// Waits (up to `limit`) until `room`'s lease satisfies `pred`; the lease.
    pub async fn wait_lease(
        &self,
        room: &str,
        limit: Duration,
        what: &str,
        pred: impl Fn(&Lease) -> bool,
    ) -> Lease {
        let until = Instant::now() + limit;
        loop {
            let lease = self.lease(room).await;
            if let Some(l) = lease.as_ref().filter(|l| pred(l)) {
                return l.clone();
            }
            assert!(
                Instant::now() < until,
                "room {room}: no lease {what} within {limit:?}; last {lease:?}"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Ids of the stored games of `room`, oldest first.
    pub async fn games_of(&self, room: &str) -> Vec<String> {
        sqlx::query(
            "SELECT id::TEXT AS id FROM games WHERE room_code = $1 ORDER BY created_at_ms, id",
        )
        .bind(room)
        .fetch_all(&self.db)
        .await
        .expect("read games")
        .iter()
        .map(|r| r.get("id"))
        .collect()
    }

    /// The stored events of game `id` in seq order, each as
    /// `{"seq","at_ms","event","positioned"}` (`positioned`: the stored mark that the live
    /// frame carried the position). Read in whichever format the game was stored: its
    /// packed log (issue 28: `games.log` then its `game_log_tail` rows, unpacked by
    /// `parchis_room_core::throws::decode`), else its `game_events` rows (the format
    /// before; crates/room-core/src/persist.rs POSITION_KEY taken out of `event`).
    pub async fn stored_events(&self, id: &str) -> Vec<Value> {
        let pieces: Vec<Vec<u8>> = sqlx::query(
            "SELECT bytes FROM (SELECT log_seq AS s, log AS bytes FROM games \
             WHERE id = $1::UUID AND log IS NOT NULL \
             UNION ALL SELECT last_seq, bytes FROM game_log_tail WHERE game_id = $1::UUID) p \
             ORDER BY s",
        )
        .bind(id)
        .fetch_all(&self.db)
        .await
        .expect("read the packed log")
        .iter()
        .map(|r| r.get("bytes"))
        .collect();
        if !pieces.is_empty() {
            let decoded = parchis_room_core::throws::decode(&pieces.concat())
                .unwrap_or_else(|e| panic!("game {id}: the packed log does not unpack: {e}"));
            return decoded
                .events
                .into_iter()
                .map(|e| {
                    serde_json::json!({
                        "seq": e.seq,
                        "at_ms": e.at_ms,
                        "event": serde_json::to_value(&e.event).expect("event JSON"),
                        "positioned": e.positioned,
                    })
                })
                .collect();
        }
        sqlx::query(
            "SELECT seq, created_at_ms, event FROM game_events WHERE game_id = $1::UUID ORDER BY seq",
        )
        .bind(id)
        .fetch_all(&self.db)
        .await
        .expect("read game_events")
        .iter()
        .map(|r| {
            let text: String = r.get("event");
            let mut event: Value = serde_json::from_str(&text).expect("stored event is JSON");
            // The stored format version and position mark (crates/room-core/src/persist.rs, FORMAT_KEY,
            // POSITION_KEY) are not on the wire.
            let mut positioned = false;
            if let Some(obj) = event.as_object_mut() {
                obj.remove(parchis_room_core::persist::FORMAT_KEY);
                positioned = obj.remove(parchis_room_core::persist::POSITION_KEY)
                    == Some(serde_json::Value::Bool(true));
            }
            serde_json::json!({
                "seq": r.get::<i64, _>("seq"),
                "at_ms": r.get::<i64, _>("created_at_ms"),
                "event": event,
                "positioned": positioned,
            })
        })
        .collect()
    }
}
