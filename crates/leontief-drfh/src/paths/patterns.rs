//! The max-min operator on few server entries: a Dantzig-Wolfe master over
//! assignment patterns.
//!
//! With k entries and m resources the operator's LP has only k m capacity
//! rows that couple users; the user rows (a link and a level per user) are
//! what make the flat LP slow when users far outnumber entries (the
//! Google cell: 20 capacity rows, 2,000 user rows, about 2,100 simplex
//! iterations at 1,000 users). Here the users are taken out of the LP.
//!
//! A *pattern* puts each user of a block on one of its runnable entries.
//! The active users form one block, each at `theta a_n` tasks (a_n = w_n /
//! sigma_n per unit of level); the users frozen in earlier rounds form
//! another, each at its tasks X_n. Any split of a user's tasks over entries
//! is a convex combination of patterns, so round r is
//!
//! ```text
//!   maximise  sum_b mu_b                                   (= theta)
//!   subject to sum_a nu_a F_a(i,r) + sum_b mu_b A_b(i,r) <= 1   (i, r)  prices p
//!              sum_a nu_a = 1                 (frozen block)        pi
//!              sum_b mu_b <= theta_cap        (the largest cap)     kappa
//! ```
//!
//! with F_a(i,r) = sum of X_n d_{n,r} / c_{i,r} over the frozen users
//! pattern a puts on i and A_b(i,r) the same with a_n. Its rows are the
//! k m capacity rows plus two. At prices p the best pattern puts each user
//! on its cheapest entry, u_n = min_i sum_r d_{n,r} p_{i,r} / c_{i,r}: an
//! active pattern prices in when 1 - kappa - sum_n a_n u_n > 0, a frozen
//! one when -pi - sum_n X_n u_n > 0. That pass costs O(N k m) and no
//! per-pair storage; the master is re-solved warm with the new column
//! ([`leontief_model::LoadedLp::add_cols`]) until nothing prices in.
//! While something does, a second active pattern is priced at prices
//! between the round's best-bound point and the master's duals (in-out
//! stabilisation): 4,000 x 40 with 6 resources needs 108 passes instead
//! of 616 (docs/design/maxmin-operator.md).
//!
//! At the optimum, strong duality gives sum_{i,r} p_{i,r} = sum_n u_n X_n
//! over all users (frozen at their tasks, active at theta a_n), which is
//! exactly the weak-duality certificate `leontief-audit` checks: every
//! active user with u_n > 0 is blocked at theta, with no room left. The
//! master's tolerances leave some, and the path gives up (the caller runs
//! the next path) when the room it leaves a blocked user, computed as the
//! audit computes it, is more than half the audit's tolerance
//! (`BLOCKED_ROOM`).
//!
//! Caps: when theta passes some active users' caps, those users (and only
//! they) freeze at their caps, all at once, and the round is solved again
//! with them held there; freeing capacity, that never lowers theta, so
//! each of them is capped in the answer too. Otherwise the priced users
//! freeze at theta and the others stay active. The flat LP spends a round
//! on each cap level (the simulator's instances, every user capped at its
//! outstanding tasks: about 7 rounds per solve); here a few solves do.
//! At the end the rounds are numbered by level, as the flat LP's
//! progressive filling numbers them (a user blocked under degenerate
//! duals, with a zero price, waits for a round whose level does not rise
//! and lands in the same round).
//!
//! The next round starts from the last solution: the frozen block's
//! columns are the products of the old frozen patterns and the active
//! patterns in the basis (at most (rows + 1)^2), the active block's the
//! basic active patterns restricted to the users still active; that point
//! is feasible, so no phase one is needed.
//!
//! Tasks come out of the patterns exactly: a user's total is its level
//! times a_n whatever the LP's tolerances, so a user of weight 1 next to
//! one of weight 1e9 holds its level to the last bit.
//!
//! Measured (release, 2 cores), the Google cell with 1,000 users: see
//! docs/design/maxmin-operator.md.

use crate::lp::finish::repair;
use crate::outcome::{Freeze, MaxMinOutcome, Path, RoundCertificate};
use crate::settings::{MaxMinSettings, BLOCKED_ROOM};
use leontief_core::{Instance, ServerId, UserId};
use leontief_model::{
    BackendError, LoadedLp, LpBackend, NewCol, ProblemBuilder, Row, Sense, Solution, Status,
};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::time::Instant;

const INF: f64 = f64::INFINITY;

/// A pattern prices in when its reduced cost exceeds this (the master's
/// objective is theta in units where it is at least 1). The round's
/// prices leave each blocked user n room `rc / (u_n a_n)` (relative to
/// its tasks) for a final reduced cost rc, and with thousands of users in
/// a round `u_n a_n` is a thousandth of the total or less: at 1e-10, k-DF
/// with placement by attribute (2,000 users on 4 pooled groups) left its
/// smallest users 2.2e-6 of room, past the audit's 1e-6; at 1e-14 one
/// more master solve leaves 1.8e-11. A pattern already in the round's
/// master ends the pricing: HiGHS does not enter a column whose reduced
/// cost is under its own dual tolerance (1e-10).
const PRICING_TOLERANCE: f64 = 1e-14;

/// The gap of a round's bound read as round-off, relative to the bound:
/// the sums over thousands of users that make it agree to about this.
const GAP_ROUND_OFF: f64 = 1e-14;

/// An active user is blocked when its price u_n a_n exceeds this share
/// of the active users' total (which is 1 - kappa); below, its room in
/// the certificate is rounding error over a vanishing denominator, and it
/// waits for a round of its own (merged back when its level does not
/// rise). Weights 1e9 apart put the light user at 1e-9 of the total.
const PRICED: f64 = 1e-12;

/// Master solves per round before giving up (and running the flat LP).
const MAX_SOLVES_PER_ROUND: usize = 5_000;

/// Off-block marker in a pattern.
const OFF: u32 = u32::MAX;

/// The instance as the master sees it.
struct Setup {
    k: usize,
    m: usize,
    /// Master row of (i, r), entry-major (`usize::MAX`: zero capacity).
    row: Vec<usize>,
    rows: usize,
    /// 1 / c_{i,r} (0 where there is no row).
    inv_cap: Vec<f64>,
    /// Runnable entries of each user (empty: cannot run).
    entries: Vec<Vec<u32>>,
    /// Tasks per unit of the master's theta.
    a: Vec<f64>,
    /// Cap in units of the master's theta (INF: none).
    cap: Vec<f64>,
    /// Master theta per unit of level.
    scale: f64,
}

impl Setup {
    fn new(instance: &Instance, sigma: &[f64], placement: bool) -> Self {
        let (k, m, nu) = (
            instance.num_entries(),
            instance.num_resources(),
            instance.num_users(),
        );
        let mut row = vec![usize::MAX; k * m];
        let mut inv_cap = vec![0.0; k * m];
        let mut rows = 0;
        for i in 0..k {
            for (r, &c) in instance.class_capacities(ServerId(i)).iter().enumerate() {
                if c > 0.0 {
                    row[i * m + r] = rows;
                    inv_cap[i * m + r] = 1.0 / c;
                    rows += 1;
                }
            }
        }
        let users = instance.users();
        let entries: Vec<Vec<u32>> = (0..nu)
            .map(|n| {
                let mut l = Vec::new();
                if sigma[n].is_finite() && sigma[n] > 0.0 {
                    crate::lp::pricing::for_each_runnable(instance, UserId(n), placement, |i| {
                        l.push(i.0 as u32)
                    });
                }
                l
            })
            .collect();
        // Scale theta so that every user on its best-fitting entry at
        // theta = 1 uses at most one capacity in all: theta* >= 1.
        let per_level: Vec<f64> = (0..nu).map(|n| users[n].weight / sigma[n]).collect();
        let mut total = 0.0;
        for n in (0..nu).filter(|&n| !entries[n].is_empty()) {
            let d = &users[n].demand;
            let fit = entries[n]
                .iter()
                .map(|&i| {
                    (0..m)
                        .map(|r| d[r] * inv_cap[i as usize * m + r])
                        .fold(0.0, f64::max)
                })
                .fold(INF, f64::min);
            total += per_level[n] * fit;
        }
        let scale = if total.is_finite() && total > 0.0 {
            total
        } else {
            1.0
        };
        let a: Vec<f64> = (0..nu)
            .map(|n| {
                if entries[n].is_empty() {
                    0.0
                } else {
                    per_level[n] / scale
                }
            })
            .collect();
        let cap = (0..nu)
            .map(|n| match users[n].tasks {
                Some(t) if a[n] > 0.0 => t / a[n],
                _ => INF,
            })
            .collect();
        Setup {
            k,
            m,
            row,
            rows,
            inv_cap,
            entries,
            a,
            cap,
            scale,
        }
    }

    /// Prices per unit of each resource on each entry (entry-major, 0
    /// where there is no row) from row prices `p` (per unit of a
    /// normalised capacity row): what users pay, and the certificate.
    fn unit_prices(&self, p: &[f64]) -> Vec<f64> {
        (0..self.k * self.m)
            .map(|j| {
                if self.row[j] == usize::MAX {
                    0.0
                } else {
                    p[self.row[j]] * self.inv_cap[j]
                }
            })
            .collect()
    }

    /// Each block user's cheapest entry and its price u_n at row prices
    /// `p` (per unit of a normalised capacity row).
    fn best(&self, instance: &Instance, p: &[f64], block: &[usize]) -> (Vec<u32>, Vec<f64>) {
        let q = self.unit_prices(p);
        let nu = instance.num_users();
        let mut on = vec![OFF; nu];
        let mut u = vec![0.0; nu];
        for &n in block {
            let d = &instance.users()[n].demand;
            let (mut best, mut cost) = (OFF, INF);
            for &i in &self.entries[n] {
                let c = self.task_price(d, &q, i);
                if c < cost {
                    (best, cost) = (i, c);
                }
            }
            on[n] = best;
            u[n] = cost;
        }
        (on, u)
    }

    /// What the active users of `block` pay at row prices `p` on the
    /// entries of pattern `on`, per unit of theta: `sum_n a_n d_n . q_on(n)`.
    fn pattern_cost(&self, instance: &Instance, p: &[f64], on: &[u32], block: &[usize]) -> f64 {
        let q = self.unit_prices(p);
        block
            .iter()
            .map(|&n| self.a[n] * self.task_price(&instance.users()[n].demand, &q, on[n]))
            .sum()
    }

    /// One task of demand `d` on entry `i` at unit prices `q`.
    fn task_price(&self, d: &[f64], q: &[f64], i: u32) -> f64 {
        let base = i as usize * self.m;
        (0..self.m).map(|r| d[r] * q[base + r]).sum()
    }

    /// The master column of a pattern with per-user tasks `coef`.
    fn column(&self, instance: &Instance, on: &[u32], coef: &[f64], cost: f64) -> NewCol {
        let mut v = vec![0.0; self.rows];
        for (n, &i) in on.iter().enumerate() {
            if i == OFF {
                continue;
            }
            let d = &instance.users()[n].demand;
            let base = i as usize * self.m;
            for r in 0..self.m {
                if d[r] > 0.0 {
                    v[self.row[base + r]] += d[r] * coef[n] * self.inv_cap[base + r];
                }
            }
        }
        NewCol {
            cost,
            lower: 0.0,
            upper: INF,
            entries: v
                .into_iter()
                .enumerate()
                .filter(|&(_, x)| x != 0.0)
                .map(|(j, x)| (Row(j), x))
                .collect(),
        }
    }
}

/// A pattern of one block and its weight in the last solution.
#[derive(Clone)]
struct Weighted {
    on: Vec<u32>,
    weight: f64,
}

/// The master LP's columns in LP order: which block (`None`: a dead
/// column of an earlier round, fixed at 0) and the pattern; and its
/// convexity and cap rows.
struct Round {
    cols: Vec<(Option<bool>, Vec<u32>)>,
    conv: Row,
    cap_row: Row,
    /// Columns in the LP before this round's (dead from now on).
    first: usize,
}

impl Round {
    /// The master column of a pattern of either block.
    fn column(
        &self,
        s: &Setup,
        instance: &Instance,
        on: &[u32],
        active: bool,
        held: &[f64],
    ) -> NewCol {
        let mut c = if active {
            s.column(instance, on, &s.a, 1.0)
        } else {
            s.column(instance, on, held, 0.0)
        };
        c.entries
            .push((if active { self.cap_row } else { self.conv }, 1.0));
        c
    }
}

/// Dead columns from which a round reloads the master with its live
/// columns only, instead of fixing the old ones at 0 in the loaded LP
/// (one HiGHS instance for all rounds: creating one costs about 0.1 ms,
/// most of a small round).
const DEAD_LIMIT: usize = 20_000;

/// A fresh master: the capacity rows, the convexity and cap rows with the
/// given bounds, and `cols`.
fn load_fresh<B: LpBackend>(
    backend: &B,
    s: &Setup,
    conv: (f64, f64),
    cap: (f64, f64),
    cols: &[NewCol],
) -> Result<B::Loaded, BackendError> {
    let mut b = ProblemBuilder::new(Sense::Maximise);
    for _ in 0..s.rows {
        b.add_row(-INF, 1.0);
    }
    b.add_row(conv.0, conv.1);
    b.add_row(cap.0, cap.1);
    for c in cols {
        b.add_col(c.cost, c.lower, c.upper, c.entries.iter().copied());
    }
    backend.load(b.build())
}

/// Run the operator by the pattern master. `Ok(None)`: a master solve
/// did not end optimal or a round made no progress; the caller runs the
/// flat LP instead.
pub(crate) fn try_patterns<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    settings: &MaxMinSettings,
) -> Result<Option<MaxMinOutcome>, BackendError> {
    let t0 = Instant::now();
    let nu = instance.num_users();
    let s = Setup::new(instance, sigma, placement);
    let runnable: Vec<bool> = s.entries.iter().map(|l| !l.is_empty()).collect();
    let mut out = MaxMinOutcome {
        path: Path::Patterns,
        ..MaxMinOutcome::start(nu, s.entries.iter().map(Vec::len).sum())
    };
    let mut active: Vec<bool> = runnable.clone();
    // Tasks of the frozen users.
    let mut held = vec![0.0; nu];
    let mut frozen_set: Vec<Weighted> = Vec::new();
    let mut active_set: Vec<Weighted> = Vec::new();
    let mut round = Round {
        cols: Vec::new(),
        conv: Row(s.rows),
        cap_row: Row(s.rows + 1),
        first: 0,
    };
    let mut lp: Option<B::Loaded> = None;
    while active.iter().any(|&a| a) {
        out.rounds += 1;
        let act: Vec<usize> = (0..nu).filter(|&n| active[n]).collect();
        let fro: Vec<usize> = (0..nu).filter(|&n| runnable[n] && !active[n]).collect();
        // theta never exceeds the largest cap (every user capped there);
        // users whose cap theta passes freeze at their caps below.
        let theta_cap = act.iter().map(|&n| s.cap[n]).fold(0.0, f64::max);
        let conv = if fro.is_empty() {
            (-INF, INF)
        } else {
            (1.0, 1.0)
        };
        let cap = (-INF, theta_cap);
        // Start from the last solution (see the module docs) and each
        // active user on its best-fitting entry.
        let mut starts: Vec<(Option<bool>, Vec<u32>)> = Vec::new();
        if !fro.is_empty() {
            for on in frozen_start(&frozen_set, &active_set, &active) {
                starts.push((Some(false), on));
            }
        }
        for w in &active_set {
            let on =
                w.on.iter()
                    .enumerate()
                    .map(|(n, &i)| if active[n] { i } else { OFF })
                    .collect();
            starts.push((Some(true), on));
        }
        starts.push((Some(true), s.best(instance, &vec![1.0; s.rows], &act).0));
        // And each entry's own pattern: every active user there when it
        // can run there, on its best-fitting entry otherwise. A basis
        // mixes entries; starting with one pattern per entry, the
        // simulator's solves take 3.8 master solves instead of 6.4.
        let fit = starts.last().expect("pushed above").1.clone();
        for i in 0..s.k as u32 {
            let on: Vec<u32> = (0..nu)
                .map(|n| {
                    if !active[n] {
                        OFF
                    } else if s.entries[n].contains(&i) {
                        i
                    } else {
                        fit[n]
                    }
                })
                .collect();
            starts.push((Some(true), on));
        }
        let new: Vec<NewCol> = starts
            .iter()
            .map(|(kind, on)| round.column(&s, instance, on, *kind == Some(true), &held))
            .collect();
        // The earlier rounds' columns die: their patterns miss the users
        // frozen since.
        let dead = round.cols.len();
        match lp.as_mut() {
            Some(l) if dead <= DEAD_LIMIT => {
                let old: Vec<leontief_model::Col> = (0..dead)
                    .filter(|&j| round.cols[j].0.is_some())
                    .map(leontief_model::Col)
                    .collect();
                l.set_cols_bounds(&old, &vec![0.0; old.len()], &vec![0.0; old.len()])?;
                l.set_row_bounds(round.conv, conv.0, conv.1)?;
                l.set_row_bounds(round.cap_row, cap.0, cap.1)?;
                l.add_cols(&new)?;
                for c in round.cols.iter_mut() {
                    *c = (None, Vec::new());
                }
                round.first = dead;
            }
            _ => {
                let mut fresh = load_fresh(backend, &s, conv, cap, &new)?;
                fresh.prefer_warm_simplex()?;
                // Its prices are the certificate of every user a round
                // blocks, each with its own share of the gap.
                fresh.finest_tolerances()?;
                lp = Some(fresh);
                round.cols.clear();
                round.first = 0;
            }
        }
        let mut seen: HashSet<u64> = starts.iter().map(|(k, on)| key(*k, on)).collect();
        round.cols.extend(starts);
        let lp = lp.as_mut().expect("loaded above");
        if out.rounds == 1 {
            out.build_seconds = t0.elapsed().as_secs_f64();
        }
        // Price in patterns until none improves.
        let mut sol = None;
        let mut centre: Option<Centre> = None;
        for _ in 0..MAX_SOLVES_PER_ROUND {
            let x = lp.solve()?;
            out.lps += 1;
            out.solve_seconds += x.seconds;
            if x.status != Status::Optimal {
                return Ok(None);
            }
            let tp = Instant::now();
            let (mut added, u) = price_in(&s, instance, &x, &round, &act, &fro, &held, &mut centre);
            // A pattern the master holds already: its reduced cost is
            // under HiGHS's dual tolerance, and the pricing ends here.
            added.retain(|(a, on)| seen.insert(key(Some(*a), on)));
            let pricing = tp.elapsed().as_secs_f64();
            out.pricing_passes += 1;
            out.pricing_seconds += pricing;
            out.passes.push(leontief_core::PricingPass {
                solve_seconds: x.seconds,
                pricing_seconds: pricing,
                columns: added.len(),
            });
            if added.is_empty() {
                sol = Some((x, u));
                break;
            }
            let new: Vec<NewCol> = added
                .iter()
                .map(|(is_active, on)| round.column(&s, instance, on, *is_active, &held))
                .collect();
            lp.add_cols(&new)?;
            round
                .cols
                .extend(added.into_iter().map(|(a, on)| (Some(a), on)));
        }
        let Some((sol, u)) = sol else {
            return Ok(None);
        };
        let (fw, aw) = weights(&round, &sol);
        let theta: f64 = aw.iter().map(|w| w.weight).sum();
        // Users whose caps theta reached freeze there, all at once: each
        // is capped in the answer too (freezing them frees capacity, so
        // the next round's theta is no lower), and the rounds the flat LP
        // spends on one cap level each are numbered by level at the end.
        // The others wait for the next round, with those held at caps.
        let capped: Vec<usize> = act
            .iter()
            .copied()
            .filter(|&n| s.cap[n] <= theta * (1.0 + settings.level_tolerance))
            .collect();
        let priced: f64 = act.iter().map(|&n| u[n] * s.a[n]).sum();
        let mut blocked = Vec::new();
        if capped.is_empty() {
            blocked = act
                .iter()
                .copied()
                .filter(|&n| u[n] > 0.0 && u[n] * s.a[n] > PRICED * priced)
                .collect();
            // The round's proof, as the audit checks it: a blocked user
            // the prices leave room cannot be claimed blocked.
            // Users it leaves more room wait for a later round, as the
            // unpriced ones do.
            let (gap, bound) = round_gap(&s, instance, &sol, &act, &fro, &held, &u, theta);
            let allowed =
                |n: usize| (BLOCKED_ROOM * u[n] * s.a[n] * theta).max(GAP_ROUND_OFF * bound);
            let priced_blocked = blocked.len();
            blocked.retain(|&n| gap <= allowed(n));
            out.deferred_users += priced_blocked - blocked.len();
        }
        let frozen_now: Vec<usize> = capped.iter().chain(&blocked).copied().collect();
        if frozen_now.is_empty() {
            return Ok(None);
        }
        for &n in &capped {
            out.freeze[n] = Freeze::Capped;
            held[n] = s.a[n] * s.cap[n];
            out.levels[n] = s.cap[n] / s.scale;
        }
        for &n in &blocked {
            out.freeze[n] = Freeze::Blocked;
            held[n] = s.a[n] * theta;
            out.levels[n] = theta / s.scale;
        }
        if !blocked.is_empty() {
            out.certificates.push(RoundCertificate {
                round: out.rounds,
                prices: s.unit_prices(&row_prices(&s, &sol)),
                users: blocked,
            });
        }
        for &n in &frozen_now {
            active[n] = false;
            out.frozen_round[n] = out.rounds;
        }
        out.columns += round.cols.len() - round.first;
        frozen_set = fw;
        active_set = aw;
    }
    // Tasks: the last round's frozen block splits every user frozen
    // before it, its active block the users it froze (held at their
    // levels: below theta a_n for those it capped).
    let theta_last: f64 = active_set.iter().map(|w| w.weight).sum();
    // Dense while summing: the master runs on few entries (at most
    // PATTERN_ROWS capacity rows), and each pattern touches every user.
    let mut dense = vec![vec![0.0; s.k]; nu];
    for w in &frozen_set {
        for (n, &i) in w.on.iter().enumerate() {
            if i != OFF {
                dense[n][i as usize] += held[n] * w.weight;
            }
        }
    }
    for w in &active_set {
        for (n, &i) in w.on.iter().enumerate() {
            if i != OFF {
                dense[n][i as usize] += held[n] * w.weight / theta_last;
            }
        }
    }
    let mut tasks = leontief_core::Tasks::from_dense(&dense, s.k);
    repair(&mut tasks, instance);
    out.tasks = tasks;
    out.number_rounds(settings.level_tolerance);
    Ok(Some(out))
}

/// A pattern of either block (`Some(true)`: active) as a key of the
/// round's set of columns.
fn key(kind: Option<bool>, on: &[u32]) -> u64 {
    let mut h = DefaultHasher::new();
    kind.hash(&mut h);
    on.hash(&mut h);
    h.finish()
}

/// The room the weak-duality bound of `leontief-audit` leaves at the
/// round's prices, in units of normalised capacity: `sum_rows p -
/// sum_frozen X_n u_n - theta sum_active a_n u_n` (`u`: the active users'
/// prices); and the bound, `sum_rows p`. A blocked user n may rise by at
/// most the gap over `u_n`, so its relative room is the gap over
/// `u_n a_n theta`.
#[allow(clippy::too_many_arguments)]
fn round_gap(
    s: &Setup,
    instance: &Instance,
    x: &Solution,
    act: &[usize],
    fro: &[usize],
    held: &[f64],
    u: &[f64],
    theta: f64,
) -> (f64, f64) {
    let p = row_prices(s, x);
    let frozen: f64 = if fro.is_empty() {
        0.0
    } else {
        let (_, u_fro) = s.best(instance, &p, fro);
        fro.iter().map(|&n| held[n] * u_fro[n]).sum()
    };
    let active: f64 = act.iter().map(|&n| s.a[n] * u[n]).sum();
    let bound: f64 = p.iter().sum();
    (bound - frozen - theta * active, bound)
}

/// The capacity rows' duals as prices (>= 0; a negative one is the LP's
/// tolerance, and a 0 only weakens the certificate).
fn row_prices(s: &Setup, x: &Solution) -> Vec<f64> {
    x.row_dual[..s.rows].iter().map(|&y| y.max(0.0)).collect()
}

/// The best dual point of a round so far, for in-out stabilisation
/// (Wentges smoothing): row prices scaled so that the active users'
/// prices sum to 1 (`sum_n a_n u_n = 1`), and the bound on theta they
/// give, `sum_rows p - sum_frozen X_n u_n` (weak duality, any `p >= 0`).
struct Centre {
    p: Vec<f64>,
    bound: f64,
}

impl Centre {
    /// Keep row prices `p` as the centre when their bound is lower:
    /// `scale` is `sum_n a_n u_n` at `p`, `held` is
    /// `sum_frozen X_n u_n` at `p`.
    fn offer(centre: &mut Option<Centre>, p: &[f64], scale: f64, held: f64) {
        let bound = (p.iter().sum::<f64>() - held) / scale;
        if centre.as_ref().is_none_or(|c| bound < c.bound) {
            *centre = Some(Centre {
                p: p.iter().map(|v| v / scale).collect(),
                bound,
            });
        }
    }
}

/// The centre's weight in the smoothed prices at which a second active
/// pattern is priced each pass.
const SMOOTHING: f64 = 0.85;

/// The patterns that price in at the solution `x`: the best active one
/// and the best frozen one, each when its reduced cost is positive; and
/// the active users' prices u_n. While an active pattern prices in, the
/// best one at prices between `centre` and `x`'s is added too when it
/// also prices in at `x` (the master's duals jump from vertex to vertex;
/// the smoothed prices find the patterns of the optimum in fewer
/// passes). The end test is the exact one, at `x`'s prices.
#[allow(clippy::too_many_arguments)]
fn price_in(
    s: &Setup,
    instance: &Instance,
    x: &Solution,
    round: &Round,
    act: &[usize],
    fro: &[usize],
    held: &[f64],
    centre: &mut Option<Centre>,
) -> (Vec<(bool, Vec<u32>)>, Vec<f64>) {
    let p = row_prices(s, x);
    let mut added = Vec::new();
    let kappa = x.row_dual[round.cap_row.0].max(0.0);
    let (on, u_active) = s.best(instance, &p, act);
    let cost: f64 = act.iter().map(|&n| s.a[n] * u_active[n]).sum();
    let prices_in = 1.0 - kappa - cost > PRICING_TOLERANCE;
    let mut held_cost = 0.0;
    if !fro.is_empty() {
        let pi = x.row_dual[round.conv.0];
        let (on, u) = s.best(instance, &p, fro);
        held_cost = fro.iter().map(|&n| held[n] * u[n]).sum();
        if -pi - held_cost > PRICING_TOLERANCE * pi.abs().max(1.0) {
            added.push((false, on));
        }
    }
    if prices_in && cost > 0.0 {
        Centre::offer(centre, &p, cost, held_cost);
        if let Some(c) = centre.as_ref() {
            let q: Vec<f64> =
                c.p.iter()
                    .zip(&p)
                    .map(|(c, p)| SMOOTHING * c + (1.0 - SMOOTHING) * p / cost)
                    .collect();
            let (on_q, u_q) = s.best(instance, &q, act);
            let at_x = s.pattern_cost(instance, &p, &on_q, act);
            let extra = on_q != on && 1.0 - kappa - at_x > PRICING_TOLERANCE;
            let scale: f64 = act.iter().map(|&n| s.a[n] * u_q[n]).sum();
            if scale > 0.0 {
                let held_q: f64 = if fro.is_empty() {
                    0.0
                } else {
                    let (_, u) = s.best(instance, &q, fro);
                    fro.iter().map(|&n| held[n] * u[n]).sum()
                };
                Centre::offer(centre, &q, scale, held_q);
            }
            if extra {
                added.push((true, on_q));
            }
        }
    }
    if prices_in {
        added.push((true, on));
    }
    (added, u_active)
}

/// The columns with positive weight in `x`, by block.
fn weights(round: &Round, x: &Solution) -> (Vec<Weighted>, Vec<Weighted>) {
    let (mut f, mut a) = (Vec::new(), Vec::new());
    for ((kind, on), &w) in round.cols.iter().zip(&x.x) {
        let Some(is_active) = *kind else { continue };
        if w > 0.0 {
            let item = Weighted {
                on: on.clone(),
                weight: w,
            };
            if is_active {
                a.push(item);
            } else {
                f.push(item);
            }
        }
    }
    (f, a)
}

/// The next round's frozen-block columns: each old frozen pattern joined
/// with each active pattern (its users now frozen), so the last solution
/// is a point of the new master.
fn frozen_start(frozen: &[Weighted], active_set: &[Weighted], active: &[bool]) -> Vec<Vec<u32>> {
    let now = |b: &Weighted| -> Vec<u32> {
        b.on.iter()
            .enumerate()
            .map(|(n, &i)| if active[n] { OFF } else { i })
            .collect()
    };
    if frozen.is_empty() {
        return active_set.iter().map(now).collect();
    }
    let mut out = Vec::with_capacity(frozen.len() * active_set.len());
    for a in frozen {
        for b in active_set {
            let mut on = now(b);
            for (x, &y) in on.iter_mut().zip(&a.on) {
                if y != OFF {
                    *x = y;
                }
            }
            out.push(on);
        }
    }
    out
}
