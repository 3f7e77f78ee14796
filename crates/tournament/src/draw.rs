//! The draw and the progress between rounds: closing registration (bot fill, seeding),
//! drawing each round's tables, starting rounds, deciding matches left with too few
//! entrants, and finishing with the champion.

use crate::command::CommandError;
use crate::event::{DrawnTable, Event, How};
use crate::ids::{BotSpec, EntrantId, MatchId, Player};
use crate::knockout::Layout;
use crate::seating::seats;
use crate::seeding::{entrant_rating, seed_order};
use crate::settings::Format;
use crate::state::{EntrantStatus, Phase};
use crate::step::Step;
use crate::swiss::pair_round;
use uuid::Uuid;

impl Step {
    /// Closes registration (`by`: the organiser closing early, `None` at the deadline):
    /// unconfirmed teams are dropped, bots fill up to `bot_fill.up_to`, the entrants are
    /// seeded and round 1 is drawn (and started when its start time has come). Fewer than
    /// two entrants cancel the tournament.
    pub(crate) fn close(&mut self, by: Option<Uuid>) -> Result<(), CommandError> {
        let t = &self.next;
        let dropped: Vec<EntrantId> = t
            .entrants()
            .filter(|e| e.status == EntrantStatus::PendingPartner)
            .map(|e| e.id)
            .collect();
        let mut field: Vec<(EntrantId, Option<f64>)> = t
            .entrants()
            .filter(|e| e.status == EntrantStatus::Registered)
            .map(|e| (e.id, entrant_rating(&e.players)))
            .collect();
        let mut next_id = t.entrants().map(|e| e.id.0).max().unwrap_or(0) + 1;
        let mut bots = Vec::new();
        if let Some(fill) = t.settings().bot_fill {
            let mut k = 1;
            while (field.len() as u32) < fill.up_to {
                let (name, players) = bot_entrant(k, t.shape().teams, fill.spec());
                bots.push((EntrantId(next_id), name, players));
                field.push((EntrantId(next_id), None));
                next_id += 1;
                k += 1;
            }
        }
        if field.len() < 2 {
            return self.emit(Event::Cancelled {
                reason: format!("{} entrant(s) at the close; two are needed", field.len()),
            });
        }
        let seeds = seed_order(&field, t.seed);
        let n = seeds.len() as u32;
        let rounds = match t.settings().format {
            Format::Knockout => Layout::new(n, t.shape().table, t.shape().advance).rounds,
            Format::Swiss => {
                let most = if n.is_multiple_of(2) { n - 1 } else { n };
                t.settings().rounds.unwrap_or(1).clamp(1, most)
            }
        };
        self.emit(Event::Closed {
            by,
            dropped,
            bots,
            seeds,
            rounds,
        })?;
        self.draw_round(1)?;
        self.progress()
    }

    /// Draws round `round`: the knockout's tables from the bracket, or the swiss
    /// pairings.
    fn draw_round(&mut self, round: u32) -> Result<(), CommandError> {
        let t = &self.next;
        let groups: Vec<(Vec<EntrantId>, bool)> = match t.layout() {
            Some(layout) => self.knockout_tables(&layout, round),
            None => {
                let active: Vec<EntrantId> = t
                    .seeds()
                    .iter()
                    .copied()
                    .filter(|&e| !t.is_disqualified(e))
                    .collect();
                let p = pair_round(round, &active, &t.tally());
                let mut g: Vec<(Vec<EntrantId>, bool)> =
                    p.pairs.iter().map(|p| (p.to_vec(), false)).collect();
                g.extend(p.bye.map(|b| (vec![b], true)));
                g
            }
        };
        let teams = t.shape().teams;
        let first_id = t.matches().count() as u32 + 1;
        let tables = groups
            .into_iter()
            .enumerate()
            .map(|(i, (entrants, bye))| DrawnTable {
                id: MatchId(first_id + i as u32),
                table: i as u32,
                seats: if bye {
                    Vec::new()
                } else {
                    seats(&entrants, teams)
                },
                entrants,
                bye,
            })
            .collect();
        self.emit(Event::RoundDrawn { round, tables })
    }

    /// A knockout round's tables in bracket order, each with whether it is a bye.
    fn knockout_tables(&self, layout: &Layout, round: u32) -> Vec<(Vec<EntrantId>, bool)> {
        let t = &self.next;
        let groups: Vec<Vec<EntrantId>> = if round == 1 {
            layout.first_round(t.seeds())
        } else {
            let prev: Vec<_> = t
                .rounds()
                .get(round as usize - 2)
                .map(|r| r.tables.iter().filter_map(|&id| t.match_(id)).collect())
                .unwrap_or_default();
            let seed_of = |e: &EntrantId| t.entrant(*e).and_then(|x| x.seed).unwrap_or(u32::MAX);
            (0..layout.tables_in(round))
                .map(|j| {
                    let lo = j * layout.fan_in;
                    let mut g: Vec<EntrantId> = prev
                        .iter()
                        .filter(|m| (lo..lo + layout.fan_in).contains(&m.table))
                        .flat_map(|m| t.qualifiers(m))
                        .collect();
                    g.sort_by_key(seed_of);
                    g
                })
                .collect()
        };
        let advance = layout.advance_in(round) as usize;
        groups
            .into_iter()
            .map(|g| {
                let bye = g.len() <= advance || g.len() < 2;
                (g, bye)
            })
            .collect()
    }

    /// Moves the tournament on as far as it goes now: starts the current round when its
    /// time has come, and while the current round is decided, draws the next one or
    /// finishes.
    pub(crate) fn progress(&mut self) -> Result<(), CommandError> {
        loop {
            let t = &self.next;
            if t.phase() != Phase::Running {
                return Ok(());
            }
            let Some(round) = t.current_round().cloned() else {
                return Ok(());
            };
            if !round.started {
                let start = match round.number {
                    1 => t.settings().start_time_ms.unwrap_or(i64::MIN),
                    _ => i64::MIN,
                };
                if self.now < start {
                    return Ok(());
                }
                self.emit(Event::RoundStarted {
                    round: round.number,
                })?;
                continue;
            }
            let done = round
                .tables
                .iter()
                .all(|id| t.match_(*id).is_some_and(|m| m.status.decided()));
            if !done {
                return Ok(());
            }
            let last = round.number >= t.total_rounds();
            let swiss_short = t.layout().is_none()
                && t.seeds().iter().filter(|&&e| !t.is_disqualified(e)).count() < 2;
            if last || swiss_short {
                let champion = self.champion();
                return self.emit(Event::Finished { champion });
            }
            self.draw_round(round.number + 1)?;
        }
    }

    /// The champion of a finished tournament: the final's first qualifier, or the top
    /// of the swiss standings among those not disqualified.
    fn champion(&self) -> Option<EntrantId> {
        let t = &self.next;
        if t.layout().is_some() {
            let last = t.current_round()?;
            let m = t.match_(*last.tables.first()?)?;
            return t.qualifiers(m).first().copied();
        }
        let active: Vec<EntrantId> = t
            .seeds()
            .iter()
            .copied()
            .filter(|&e| !t.is_disqualified(e))
            .collect();
        t.tally().standings(&active).first().copied()
    }

    /// Decides match `id` by forfeit when too few of its entrants are left to play it
    /// (no more than go through, or fewer than two): those left go through, best seed
    /// first. Returns whether it decided it.
    pub(crate) fn settle(&mut self, id: MatchId) -> Result<bool, CommandError> {
        let t = &self.next;
        let Some(m) = t.match_(id) else {
            return Ok(false);
        };
        if m.status.decided() {
            return Ok(false);
        }
        let left = m.contenders();
        if left.len() > t.advance_of(m) as usize && left.len() >= 2 {
            return Ok(false);
        }
        self.emit(Event::Decided {
            id,
            places: left,
            how: How::Forfeit,
        })?;
        Ok(true)
    }
}

/// The `k`-th bot entrant (1-based): a team of two bots or one bot.
fn bot_entrant(k: u32, teams: bool, spec: BotSpec) -> (String, Vec<Player>) {
    let bot = |name: String| Player {
        account: None,
        name,
        rating: None,
        bot: Some(spec),
    };
    if teams {
        (
            format!("Bots {k}"),
            vec![bot(format!("Bot {k}a")), bot(format!("Bot {k}b"))],
        )
    } else {
        (format!("Bot {k}"), vec![bot(format!("Bot {k}"))])
    }
}
