//! Entries closed to the users above a lower one (placement lists): the
//! restriction a max-min certificate may be proved on, read off the
//! allocation's own rounds and levels.
//!
//! **The rule.** In round r, user n may not use entry i when some user s
//! eligible on i froze in an earlier round than both r and n's own, below
//! its cap (by the gap, [`CLOSURE_GAP`] or ten times the check's
//! tolerance), demands no resource n does not demand, and sits by more
//! than the gap (relative) below n's level (for
//! a user n of round r or later: below the lowest level of round r and
//! the rounds after it).
//!
//! **Why a certificate on the restricted pairs is still a proof.** Let Z
//! be the lexicographic max-min allocation. If a user s below its cap is
//! eligible on i, and a user u with a higher level than s that demands
//! every resource s demands runs some tasks on i, moving a sliver of them
//! to s frees some of every resource s needs on i: s rises, u stays above
//! it, and the levels improve lexicographically. So in Z no user runs on
//! an entry where a lower user below its cap is eligible and needs no
//! resource the first one lacks. By induction over the rounds: once
//! rounds 1..r-1 are proved (their users at Z's levels), every user of a
//! later round has in Z at least round r's level (the allocation checked
//! is feasible and reaches it), so Z meets round r's lower bounds and
//! keeps off every entry the rule closes. A weak-duality bound over the
//! pairs the rule leaves open then bounds Z, and proves round r's users
//! at their levels exactly as over all pairs.
//!
//! `leontief-drfh` closes the same entries in its rounds (with a margin
//! of its own, so that each entry it closes is closed here too); this is
//! the check's own code.

use leontief_core::{Instance, UserId};

/// How far below its cap a user must end, and how far below a user's
/// level (relative) a lower one, for the rule to close its entries: at
/// least this, and ten times the check's own tolerance (the proofs of the
/// earlier rounds hold the lower user's level only that closely, and the
/// lemma needs it strictly below).
pub const CLOSURE_GAP: f64 = 1e-5;

/// The lowest frozen user below its cap on an entry, per set of demanded
/// resources.
#[derive(Debug, Clone, Copy)]
struct Guard {
    support: u64,
    round: usize,
    level: f64,
}

/// Which pairs the rule leaves open (every pair without placement lists,
/// or with more than 64 resources).
#[derive(Debug, Clone)]
pub struct Closure {
    gap: f64,
    support: Vec<u64>,
    guards: Vec<Vec<Guard>>,
    /// The lowest level of the users of each round or later (index =
    /// round).
    round_floor: Vec<f64>,
    levels: Vec<f64>,
    frozen_round: Vec<usize>,
}

impl Closure {
    /// The rule for `user_tasks` with shares `sigma_n x_n` and the rounds
    /// `frozen_round` (0: never ran); `placement`: the instance's lists
    /// apply; `tolerance`: the relative rise the check allows.
    pub fn new(
        instance: &Instance,
        sigma: &[f64],
        user_tasks: &[f64],
        frozen_round: &[usize],
        placement: bool,
        tolerance: f64,
    ) -> Closure {
        let (nu, m) = (instance.num_users(), instance.num_resources());
        let users = instance.users();
        let enabled = placement
            && instance.has_placement()
            && m <= 64
            && sigma.len() == nu
            && user_tasks.len() == nu
            && frozen_round.len() == nu;
        let mut out = Closure {
            gap: CLOSURE_GAP.max(10.0 * tolerance),
            support: Vec::new(),
            guards: Vec::new(),
            round_floor: Vec::new(),
            levels: Vec::new(),
            frozen_round: Vec::new(),
        };
        if !enabled {
            return out;
        }
        out.support = users
            .iter()
            .map(|u| {
                u.demand
                    .iter()
                    .enumerate()
                    .filter(|(_, &d)| d > 0.0)
                    .fold(0u64, |b, (r, _)| b | 1 << r)
            })
            .collect();
        out.levels = (0..nu)
            .map(|n| sigma[n] * user_tasks[n] / users[n].weight)
            .collect();
        out.frozen_round = frozen_round.to_vec();
        let last = frozen_round.iter().copied().max().unwrap_or(0);
        out.round_floor = vec![f64::INFINITY; last + 1];
        for n in 0..nu {
            let r = frozen_round[n];
            out.round_floor[r] = out.round_floor[r].min(out.levels[n]);
        }
        // From round r on: the users of any later round count too.
        for r in (0..last).rev() {
            out.round_floor[r] = out.round_floor[r].min(out.round_floor[r + 1]);
        }
        out.guards = vec![Vec::new(); instance.num_entries()];
        for n in 0..nu {
            let below_cap = users[n]
                .tasks
                .is_none_or(|t| user_tasks[n] < t * (1.0 - out.gap));
            if frozen_round[n] == 0 || !below_cap || !out.levels[n].is_finite() {
                continue;
            }
            let g = Guard {
                support: out.support[n],
                round: frozen_round[n],
                level: out.levels[n],
            };
            for i in instance.runnable_entries(UserId(n), placement) {
                let list = &mut out.guards[i.0];
                match list.iter_mut().find(|h| h.support == g.support) {
                    Some(h) => {
                        if (g.round, g.level) < (h.round, h.level) {
                            *h = g;
                        }
                    }
                    None => list.push(g),
                }
            }
        }
        out
    }

    /// Whether every user may use every entry it runs on in every round:
    /// the rule is off (no placement lists apply).
    pub fn always_open(&self) -> bool {
        self.guards.is_empty()
    }

    /// Whether user `n` may use entry `i` in round `round`'s bound.
    pub fn is_open(&self, n: usize, i: usize, round: usize) -> bool {
        if self.guards.is_empty() {
            return true;
        }
        let own = self.frozen_round[n];
        let bar = if own < round {
            self.levels[n]
        } else {
            self.round_floor
                .get(round)
                .copied()
                .unwrap_or(f64::INFINITY)
        };
        !self.guards[i].iter().any(|g| {
            g.support & !self.support[n] == 0
                && g.round < round
                && g.round < own
                && g.level * (1.0 + self.gap) < bar
        })
    }
}
