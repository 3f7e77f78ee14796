//! One group's commit: the grouped fast path (one transaction, appends in one statement),
//! the isolated slow path (a savepoint per request) when it fails, and the fence check of
//! both (module docs of `crate::writer`).

use std::collections::HashMap;

use sqlx::{Connection, Database, Pool};
use uuid::Uuid;

use super::backend::Backend;
use super::ops::{
    check_batch, check_fence, check_follows, check_format, check_piece, fence_of, merge_pieces,
    Follows, WriteOp,
};
use crate::error::{commit_error, Result, StoreError, WriteFailure};
use parchis_records::{EventRecord, LogPiece};

/// The current `(owner, epoch)` of each locked lease row, by room.
type Owners = HashMap<String, (String, i64)>;

/// Locks the lease rows of every fence in `requests` (see [`Backend::lock_leases`]);
/// empty, without a statement, when no request is fenced.
async fn lock_fences<B: Backend>(
    conn: &mut <B::Db as Database>::Connection,
    requests: &[Vec<WriteOp>],
) -> Result<Owners> {
    let mut rooms: Vec<String> = requests
        .iter()
        .filter_map(|ops| fence_of(ops).map(|f| f.room_code.clone()))
        .collect();
    if rooms.is_empty() {
        return Ok(Owners::new());
    }
    rooms.sort_unstable();
    rooms.dedup();
    let rows = B::lock_leases(conn, &rooms).await?;
    Ok(rows
        .into_iter()
        .map(|(room, owner, epoch)| (room, (owner, epoch)))
        .collect())
}

/// Commits `requests` (each one or more ops) and returns one result per request, in order.
pub(super) async fn commit_group<B: Backend>(
    pool: &Pool<B::Db>,
    requests: &[Vec<WriteOp>],
) -> Vec<Result<bool>> {
    match fast_path::<B>(pool, requests).await {
        Ok(results) => results.into_iter().map(Ok).collect(),
        // Nothing to isolate: the one request's error is its answer, unless it went the
        // grouped way (a lone append) and the database refused its events: that error
        // does not say which `seq` is a duplicate or that the game is missing, so the
        // precise path gives the answer (checks of ours, such as a fence, a log position
        // or a connection lost, are already the answer).
        Err(e)
            if requests.len() == 1
                && !((lone_append(&requests[0]).is_some()
                    || lone_piece(&requests[0]).is_some())
                    && refused_by_database(&e)) =>
        {
            vec![Err(e)]
        }
        // The COMMIT got no answer: the group may be stored. Replaying it would apply it
        // twice or misreport it (say, "unreachable" on a broken connection): every
        // request gets the unknown outcome.
        Err(e @ StoreError::CommitUnknown(_)) => {
            tracing::warn!(error = %e, size = requests.len(), "grouped commit unanswered");
            vec![Err(e); requests.len()]
        }
        Err(e) => {
            tracing::debug!(error = %e, size = requests.len(), "grouped commit failed; isolating");
            slow_path::<B>(pool, requests).await
        }
    }
}

/// The database refused a statement for a reason that sending it again would not mend (a
/// constraint, say), as opposed to our own checks and to connection trouble.
fn refused_by_database(e: &StoreError) -> bool {
    matches!(e, StoreError::Database(_)) && e.write_failure() == WriteFailure::Other
}

/// The events of a request that is one append (its fence aside): `(game, events,
/// follows)`.
fn lone_append(ops: &[WriteOp]) -> Option<(Uuid, &[EventRecord], Follows)> {
    let unfenced = &ops[usize::from(fence_of(ops).is_some())..];
    match unfenced {
        [WriteOp::AppendEvents {
            game_id,
            events,
            follows,
        }] => Some((*game_id, events.as_slice(), *follows)),
        _ => None,
    }
}

/// The piece of a request that is one packed piece (its fence aside): `(game, piece,
/// follows)`. What every action of a packed game writes.
fn lone_piece(ops: &[WriteOp]) -> Option<(Uuid, &LogPiece, Follows)> {
    let unfenced = &ops[usize::from(fence_of(ops).is_some())..];
    match unfenced {
        [WriteOp::AppendLog {
            game_id,
            piece,
            follows,
        }] => Some((*game_id, piece, *follows)),
        _ => None,
    }
}

/// A group's lone pieces, waiting for one statement: `(game, piece, follows)` in request
/// order.
type Pieces<'a> = Vec<(Uuid, &'a LogPiece, Follows)>;

/// Stores a group's lone pieces: their log positions (and tail lengths) read in one
/// statement, checked, joined per game, appended in one statement ([`merge_pieces`],
/// [`Backend::append_pieces`]). Empties `pieces`.
async fn append_pieces<B: Backend>(
    conn: &mut <B::Db as Database>::Connection,
    pieces: &mut Pieces<'_>,
) -> Result<()> {
    if pieces.is_empty() {
        return Ok(());
    }
    let mut games: Vec<Uuid> = Vec::with_capacity(pieces.len());
    let mut seen = std::collections::HashSet::with_capacity(pieces.len());
    for (game_id, _, _) in pieces.iter() {
        if seen.insert(*game_id) {
            games.push(*game_id);
        }
    }
    let ends = B::last_seqs(conn, &games).await?;
    let tails = merge_pieces(pieces, &games, &ends, B::FOLD_EVERY)?;
    B::append_pieces(conn, &tails).await?;
    pieces.clear();
    Ok(())
}

/// One transaction for the whole group: other ops in order, all lone event appends in
/// one go at the end (their log positions checked in one statement first, their events
/// inserted in one statement), and lone pieces likewise (positions in one statement, one
/// append per game's tail in one statement: [`append_pieces`]).
///
/// Lone appends may be moved after the other ops because no other op reads or removes
/// events, and a game created in the same group is then already there for its events.
/// Lone pieces are stored before any later request that names their game (an end folds
/// the tail, a start creates the game), so such a request sees them in order.
/// A group of one request that is neither takes the precise path, whose error is final;
/// a lone append or piece alone goes the grouped way too (most groups at low load are
/// one action), and [`commit_group`] takes the precise path for its answer if it fails.
async fn fast_path<B: Backend>(pool: &Pool<B::Db>, requests: &[Vec<WriteOp>]) -> Result<Vec<bool>> {
    let mut tx = pool.begin().await?;
    let owners = lock_fences::<B>(&mut tx, requests).await?;
    let mut changed = vec![true; requests.len()];
    let mut appends = Vec::new();
    let mut checks = Vec::new();
    let mut pieces: Pieces<'_> = Vec::new();
    for (i, ops) in requests.iter().enumerate() {
        if let Some((game_id, events, follows)) = lone_append(ops) {
            if let Some(fence) = fence_of(ops) {
                check_fence(fence, owners.get(&fence.room_code))?;
            }
            check_batch(game_id, events)?;
            if follows != Follows::Any {
                checks.push((game_id, follows, events));
            }
            appends.push((game_id, events));
        } else if let Some(piece) = lone_piece(ops) {
            if let Some(fence) = fence_of(ops) {
                check_fence(fence, owners.get(&fence.room_code))?;
            }
            pieces.push(piece);
        } else {
            let names_pending = ops
                .iter()
                .filter_map(WriteOp::game)
                .any(|g| pieces.iter().any(|p| p.0 == g));
            if names_pending {
                append_pieces::<B>(&mut tx, &mut pieces).await?;
            }
            changed[i] = apply_request::<B>(&mut tx, ops, &owners).await?;
        }
    }
    append_pieces::<B>(&mut tx, &mut pieces).await?;
    if !checks.is_empty() {
        let games: Vec<Uuid> = checks.iter().map(|c| c.0).collect();
        let lasts = B::last_seqs(&mut tx, &games).await?;
        // Two appends to one game in a group: the second follows the first.
        let mut running: std::collections::HashMap<Uuid, Option<i64>> = Default::default();
        for ((game_id, follows, events), (end, _)) in checks.into_iter().zip(lasts) {
            check_format(game_id, end, false)?;
            let last = *running.entry(game_id).or_insert(end.0);
            check_follows(game_id, follows, last, events)?;
            running.insert(game_id, events.last().map(|e| e.seq));
        }
    }
    if !appends.is_empty() {
        B::append_all(&mut tx, &appends).await?;
    }
    tx.commit().await.map_err(commit_error)?;
    Ok(changed)
}

/// One transaction with a savepoint per request, so each failing request fails alone.
async fn slow_path<B: Backend>(pool: &Pool<B::Db>, requests: &[Vec<WriteOp>]) -> Vec<Result<bool>> {
    let mut results: Vec<Result<bool>> = Vec::with_capacity(requests.len());
    // If the transaction itself breaks, every request fails with that error, except those
    // that already failed for a reason of their own.
    let fail_all = |results: Vec<Result<bool>>, e: StoreError| -> Vec<Result<bool>> {
        let remaining = requests.len() - results.len();
        results
            .into_iter()
            .map(|r| r.and(Err(e.clone())))
            .chain(std::iter::repeat_with(|| Err(e.clone())).take(remaining))
            .collect()
    };
    let mut tx = match pool.begin().await {
        Ok(tx) => tx,
        Err(e) => return fail_all(results, e.into()),
    };
    let owners = match lock_fences::<B>(&mut tx, requests).await {
        Ok(owners) => owners,
        Err(e) => return fail_all(results, e),
    };
    for ops in requests {
        let mut savepoint = match Connection::begin(&mut *tx).await {
            Ok(sp) => sp,
            Err(e) => return fail_all(results, e.into()),
        };
        match apply_request::<B>(&mut savepoint, ops, &owners).await {
            Ok(changed) => match savepoint.commit().await {
                Ok(()) => results.push(Ok(changed)),
                Err(e) => return fail_all(results, e.into()),
            },
            Err(e) => {
                if let Err(rb) = savepoint.rollback().await {
                    return fail_all(results, rb.into());
                }
                results.push(Err(e));
            }
        }
    }
    if let Err(e) = tx.commit().await {
        let e = commit_error(e);
        tracing::warn!(error = %e, "isolated group commit failed");
        return fail_all(results, e);
    }
    results
}

/// Applies one request's ops in order on `conn` (the caller's transaction or savepoint
/// makes them atomic), its fence checked against `owners` (locked by [`lock_fences`] in
/// the same transaction). Returns the last op's "changed" flag.
async fn apply_request<B: Backend>(
    conn: &mut <B::Db as Database>::Connection,
    ops: &[WriteOp],
    owners: &Owners,
) -> Result<bool> {
    let mut changed = true;
    for op in ops {
        changed = match op {
            WriteOp::CheckFence(fence) => {
                check_fence(fence, owners.get(&fence.room_code))?;
                true
            }
            op => apply_checked::<B>(conn, op).await?,
        };
    }
    Ok(changed)
}

/// Applies one op, first rejecting an append batch that repeats a `seq` or does not
/// follow the stored log (a packed piece likewise: [`check_piece`], against the greatest
/// seq stored in either format).
async fn apply_checked<B: Backend>(
    conn: &mut <B::Db as Database>::Connection,
    op: &WriteOp,
) -> Result<bool> {
    if let WriteOp::AppendLog {
        game_id,
        piece,
        follows,
    } = op
    {
        let end = B::last_seqs(conn, &[*game_id]).await?;
        let end = end.first().map_or((None, false), |e| e.0);
        check_format(*game_id, end, true)?;
        check_piece(*game_id, *follows, end.0, piece)?;
    }
    if let WriteOp::AppendEvents {
        game_id,
        events,
        follows,
    } = op
    {
        check_batch(*game_id, events)?;
        if *follows != Follows::Any {
            let end = B::last_seqs(conn, &[*game_id]).await?;
            let end = end.first().map_or((None, false), |e| e.0);
            check_format(*game_id, end, false)?;
            check_follows(*game_id, *follows, end.0, events)?;
        }
    }
    B::apply(conn, op).await
}
