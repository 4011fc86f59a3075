//! Entries closed to the users still rising, once a round below them is
//! complete (placement lists).
//!
//! In a lexicographic max-min allocation, let user s end at level
//! `l_s` below its cap and be eligible on entry i, and let user u end
//! strictly above `l_s` and demand every resource s demands. Then u runs
//! nothing on i: moving a sliver of u's tasks on i to s frees some of
//! every resource s needs there, so s rises and u stays above it, a
//! lexicographically better allocation. So once the users frozen at
//! `l_s` are all known (a later level LP rose above `l_s`), closing their
//! entries to the users still active changes neither any later round's
//! level nor which users it freezes; it only decouples the rising users
//! from the frozen ones. With sparse placement lists that is what makes
//! the later rounds well conditioned: a rising user's level no longer
//! moves with the frozen users' bounds through chains of shared servers.
//!
//! The certificate of a later round is then a proof on the closed LP;
//! `leontief-audit`'s certificate check applies the same rule, read off
//! the allocation's own rounds and levels, with its own code.

use leontief_core::Instance;
use leontief_model::{BackendError, Col, LoadedLp};

use crate::lp::build::MaxMinLp;

/// A closed entry's frozen user must sit this far below the level that
/// proved its round complete (relative), and this far below its cap;
/// more than the audit's gap (1e-5, or ten times its tolerance: 1e-5 at
/// the default 1e-6), so that every entry closed here is closed there
/// too.
const GAP: f64 = 1e-4;

/// The entries closed so far and the frozen users waiting for their round
/// to be complete.
pub(crate) struct Closing {
    /// Bit r set when the user demands resource r.
    support: Vec<u64>,
    /// Per entry, the runnable users on it and their columns.
    on_entry: Vec<Vec<(usize, Col)>>,
    /// Per user, its entries.
    entries: Vec<Vec<usize>>,
    /// Per column, closed.
    closed: Vec<bool>,
    /// Frozen below their caps, not yet used to close: (user, level).
    pending: Vec<(usize, f64)>,
    gap: f64,
    /// Columns closed in all.
    pub(crate) count: usize,
}

impl Closing {
    /// The closing of `mm`'s pairs, or `None` where it does not apply: no
    /// placement lists (every user may run everywhere, and the rounds
    /// end together), more than 64 resources.
    pub(crate) fn new(
        instance: &Instance,
        mm: &MaxMinLp,
        num_cols: usize,
        level_tolerance: f64,
    ) -> Option<Closing> {
        let m = instance.num_resources();
        if !instance.has_placement() || m > 64 {
            return None;
        }
        let support = instance
            .users()
            .iter()
            .map(|u| {
                u.demand
                    .iter()
                    .enumerate()
                    .filter(|(_, &d)| d > 0.0)
                    .fold(0u64, |b, (r, _)| b | 1 << r)
            })
            .collect();
        let mut on_entry = vec![Vec::new(); instance.num_entries()];
        let mut entries = vec![Vec::new(); instance.num_users()];
        for (n, list) in mm.pairs.iter().enumerate() {
            for &(i, c) in list {
                on_entry[i.0].push((n, c));
                entries[n].push(i.0);
            }
        }
        Some(Closing {
            support,
            on_entry,
            entries,
            closed: vec![false; num_cols],
            pending: Vec::new(),
            gap: GAP.max(10.0 * level_tolerance),
            count: 0,
        })
    }

    /// User `n` froze at `level` (LP units), `cap` its cap in the same
    /// units: below its cap, its entries close once its round is complete.
    pub(crate) fn frozen(&mut self, n: usize, level: f64, cap: f64) {
        if level < cap * (1.0 - self.gap) {
            self.pending.push((n, level));
        }
    }

    /// A level LP showed every active user able to reach `reached`: the
    /// rounds below it are complete. Close their users' entries to the
    /// active users that demand all they demand.
    pub(crate) fn close<L: LoadedLp>(
        &mut self,
        lp: &mut L,
        active: &[bool],
        reached: f64,
    ) -> Result<(), BackendError> {
        let gap = self.gap;
        let (ready, waiting): (Vec<_>, Vec<_>) = self
            .pending
            .iter()
            .partition(|&&(_, l)| l * (1.0 + gap) < reached);
        self.pending = waiting;
        for (s, _) in ready {
            let need = self.support[s];
            for &i in &self.entries[s] {
                for &(n, c) in &self.on_entry[i] {
                    if active[n] && !self.closed[c.0] && need & !self.support[n] == 0 {
                        self.closed[c.0] = true;
                        self.count += 1;
                        lp.set_col_bounds(c, 0.0, 0.0)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The runnable users on entry `i` and their columns.
    pub(crate) fn users_on(&self, i: usize) -> &[(usize, Col)] {
        &self.on_entry[i]
    }

    /// Whether column `c` is closed.
    pub(crate) fn is_closed(&self, c: Col) -> bool {
        self.closed.get(c.0).copied().unwrap_or(false)
    }
}
