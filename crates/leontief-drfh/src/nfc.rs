//! NFC: the maximum total of tasks (caps and placement honoured), with its
//! dual certificate.
//!
//! The LP is `max sum x_{n,i}` subject to every entry's capacities and
//! every user's cap; its dual prices each resource of each entry (`p_i`)
//! and each cap (`q_n`), and every pair must pay at least 1 per task:
//! `d_n . p_i + q_n >= 1`. The answer carries those prices
//! ([`leontief_core::TotalCertificate`]); `leontief-audit`'s
//! `total_certificate` proves the total with them in one pass over every
//! pair.
//!
//! Two paths:
//! * **flat** (up to [`FLAT_UP_TO`] pairs, or a backend that cannot add
//!   columns): every pair in one LP; its residuals are printed too.
//! * **generated** (above): column generation. Each entry starts with the
//!   users that fill it best along a few price directions (the per-entry
//!   LP's optimum uses at most m users, on the lower hull of the demands
//!   seen in the entry's units), each user with its entries of least
//!   `sum_r d_r / c_{i,r}`; then each pass prices every pair and adds the
//!   most attractive per user, and per entry its m most attractive (its
//!   optimum may use m users), until no pair pays less than 1 per task
//!   (beyond 1e-9). Without caps the LP is one small LP per entry and
//!   the seed is usually its optimum already. A capped user whose cap
//!   fits on a couple of entries is no entry's pick (see
//!   [`entry_pick`]): it gets its entries by its own picks.
//!
//! Measured (release, 2 cores, end to end with the certificate check;
//! `docs/design/maxmin-operator.md`): the flat LP did not finish in 300 s at
//! 1,000 x 10,000; column generation takes 1.3-1.8 s there with 2
//! resources, 2.1 s with 3, 3.8 s with 4, and 6.2 s at 10,000 x 10,000
//! (10^8 pairs). Simplex throughout: the first solve by interior point
//! took 2.0 s against 0.9 s, and the later ones from scratch 1.5-2.5 s
//! each against 0.1-0.2 s warm.

use crate::lp::pricing::{for_each_runnable, price, seed};
use crate::DrfhError;
use leontief_core::verification::LpOptimality;
use leontief_core::{Allocation, Instance, ServerId, TotalCertificate, UserId, Verification};
use leontief_model::{LoadedLp, LpBackend, NewCol, ProblemBuilder, Row, Sense, Solution, Status};
use rayon::prelude::*;
use std::time::Instant;

/// Up to this many runnable pairs, [`NfcPath::Auto`] solves the flat LP
/// (and prints its residuals beside the certificate). Above, column
/// generation was faster on every shape measured: the Google cell's
/// 10,000 pairs in 5 ms against 11 ms, 1,000 x 1,000 with 50 eligible
/// servers each (50,000 pairs) in 33 ms against 0.53 s.
pub const FLAT_UP_TO: usize = 2_000;

/// A pair enters the LP when it pays less than 1 - this per task.
const PRICING_TOLERANCE: f64 = 1e-9;

/// Per user: its entries of least `sum_r d_r / c_{i,r}` in the seed, and
/// pairs added per pass.
const PER_USER: usize = 2;

/// Give up column generation after this many passes (the answer is then
/// the last LP's, marked by its status `iteration_limit`).
const MAX_PASSES: usize = 500;

/// Which LP NFC solves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NfcPath {
    /// Flat up to [`FLAT_UP_TO`] pairs, generated above.
    #[default]
    Auto,
    /// Every pair in one LP.
    Flat,
    /// Column generation (flat on a backend that cannot add columns).
    /// Every user demands some resource (the instance says so), so the
    /// total is bounded and the seed's LP has an optimum.
    Generated,
}

/// NFC: maximise the total number of tasks (caps and placement honoured).
pub fn nfc<B: LpBackend>(backend: &B, instance: &Instance) -> Result<Allocation, DrfhError> {
    nfc_with(backend, instance, NfcPath::Auto)
}

/// [`nfc`] by the path asked.
pub fn nfc_with<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    path: NfcPath,
) -> Result<Allocation, DrfhError> {
    // Interchangeable entries merged first (as for the total below).
    if let Some(merged) = crate::paths::merge::merge_identical(instance, true) {
        let a = nfc_with(backend, &merged.instance, path)?;
        return Ok(crate::paths::merge::split_allocation(instance, &merged, a));
    }
    let s = run(backend, instance, path)?;
    let mut a = s.lp.allocation(instance, &s.sol, s.path, s.pairs, s.passes);
    if s.status != s.sol.status {
        // Column generation stopped before pricing closed: no proof.
        a.status = s.status;
        a.total_certificate = None;
    }
    if let Some(r) = s.residuals {
        a.verification = Some(Verification {
            ok: r.ok,
            optimality: Some(r),
            ..Verification::default()
        });
    }
    a.build_seconds = s.build_seconds;
    a.solve_seconds = s.solve_seconds;
    a.lps_solved = s.solves;
    a.notes
        .push("NFC maximises total tasks; the total is unique, the allocation is not".into());
    Ok(a)
}

/// The NFC total alone (`None` when the LP ends without a solution or
/// column generation does not close): what the references of 002 need,
/// without the N x k tasks matrix of an [`Allocation`].
pub fn nfc_total<B: LpBackend>(backend: &B, instance: &Instance) -> Result<Option<f64>, DrfhError> {
    // Identical entries merged first: any allocation on a class splits
    // onto its members in proportion to their counts, so the total is the
    // same (the Google cell listed as 12,583 entries: its 10 classes).
    if let Some(merged) = crate::paths::merge::merge_identical(instance, true) {
        return nfc_total(backend, &merged.instance);
    }
    let s = run(backend, instance, NfcPath::Auto)?;
    Ok((s.status == Status::Optimal).then(|| s.sol.x.iter().map(|x| x.max(0.0)).sum()))
}

/// A solved NFC LP, before it becomes an allocation.
struct Solved {
    lp: Lp,
    sol: Solution,
    /// `flat` or `generated`.
    path: leontief_core::Path,
    /// The outcome: the last solve's, or `IterationLimit` when pricing
    /// did not close.
    status: Status,
    pairs: usize,
    passes: usize,
    solves: usize,
    build_seconds: f64,
    solve_seconds: f64,
    /// The flat LP's residuals, recomputed.
    residuals: Option<LpOptimality>,
}

/// Build and solve NFC's LP by `path`.
fn run<B: LpBackend>(backend: &B, instance: &Instance, path: NfcPath) -> Result<Solved, DrfhError> {
    let t0 = Instant::now();
    let pairs = runnable_pairs(instance);
    let generated = match path {
        NfcPath::Flat => false,
        NfcPath::Auto => pairs > FLAT_UP_TO,
        NfcPath::Generated => true,
    } && backend.can_add_cols();
    let mut lp = Lp::new(instance);
    if generated {
        lp.add(instance, &seed_pairs(instance));
        let mut loaded = backend.load(lp.builder.take().expect("built once").build())?;
        let build_seconds = t0.elapsed().as_secs_f64();
        let g = generate(&mut loaded, &mut lp, instance)?;
        return Ok(Solved {
            lp,
            status: g.status,
            sol: g.sol,
            path: leontief_core::Path::Generated,
            pairs,
            passes: g.solves,
            solves: g.solves,
            build_seconds,
            solve_seconds: g.seconds,
            residuals: None,
        });
    }
    let all: Vec<Vec<ServerId>> = (0..instance.num_users())
        .map(|n| {
            let mut l = Vec::new();
            for_each_runnable(instance, UserId(n), true, |i| l.push(i));
            l
        })
        .collect();
    lp.add(instance, &all);
    let mut loaded = backend.load(lp.builder.take().expect("built once").build())?;
    let build_seconds = t0.elapsed().as_secs_f64();
    let sol = LoadedLp::solve(&mut loaded)?;
    let residuals = sol.status.has_solution().then(|| {
        let r = leontief_model::residuals(LoadedLp::problem(&loaded), &sol.x, &sol.row_dual);
        let ok = r.within(1e-7);
        LpOptimality {
            property: "LP optimality of the total (independent residuals)".into(),
            primal_infeasibility: r.primal_infeasibility,
            dual_infeasibility: r.dual_infeasibility,
            relative_gap: r.relative_gap,
            ok,
        }
    });
    Ok(Solved {
        lp,
        status: sol.status,
        solve_seconds: sol.seconds,
        sol,
        path: leontief_core::Path::Flat,
        pairs,
        passes: 0,
        solves: 1,
        build_seconds,
        residuals,
    })
}

/// Pairs that can carry a task.
fn runnable_pairs(instance: &Instance) -> usize {
    (0..instance.num_users())
        .into_par_iter()
        .map(|n| {
            let mut c = 0;
            for_each_runnable(instance, UserId(n), true, |_| c += 1);
            c
        })
        .sum()
}

/// The LP's rows and the pairs it holds.
struct Lp {
    builder: Option<ProblemBuilder>,
    /// Capacity row of (entry i, resource r) at `i * m + r`.
    cap_rows: Vec<Row>,
    /// Each capped user's cap row.
    cap_user: Vec<Option<Row>>,
    /// Per user, the entries it has a column on (sorted), and the columns.
    pairs: Vec<Vec<ServerId>>,
    cols: Vec<(usize, ServerId)>,
}

impl Lp {
    fn new(instance: &Instance) -> Lp {
        let (k, m) = (instance.num_entries(), instance.num_resources());
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let cap_rows: Vec<Row> = (0..k)
            .flat_map(|i| instance.class_capacities(ServerId(i)).to_vec())
            .map(|c| b.add_row(f64::NEG_INFINITY, c))
            .collect();
        let cap_user = instance
            .users()
            .iter()
            .map(|u| u.tasks.map(|t| b.add_row(f64::NEG_INFINITY, t)))
            .collect();
        debug_assert_eq!(cap_rows.len(), k * m);
        Lp {
            builder: Some(b),
            cap_rows,
            cap_user,
            pairs: vec![Vec::new(); instance.num_users()],
            cols: Vec::new(),
        }
    }

    /// The column of user n on entry i.
    fn column(&self, instance: &Instance, n: usize, i: ServerId) -> NewCol {
        let m = instance.num_resources();
        let d = &instance.user(UserId(n)).demand;
        NewCol {
            cost: 1.0,
            lower: 0.0,
            upper: f64::INFINITY,
            entries: (0..m)
                .filter(|&r| d[r] > 0.0)
                .map(|r| (self.cap_rows[i.0 * m + r], d[r]))
                .chain(self.cap_user[n].map(|row| (row, 1.0)))
                .collect(),
        }
    }

    /// Add the pairs of `lists` not held yet, to the builder; the new
    /// columns, for a loaded LP.
    fn add(&mut self, instance: &Instance, lists: &[Vec<ServerId>]) -> Vec<NewCol> {
        let mut new = Vec::new();
        for (n, list) in lists.iter().enumerate() {
            for &i in list {
                if let Err(at) = self.pairs[n].binary_search(&i) {
                    self.pairs[n].insert(at, i);
                    let c = self.column(instance, n, i);
                    match self.builder.as_mut() {
                        Some(b) => {
                            b.add_col(c.cost, c.lower, c.upper, c.entries);
                        }
                        None => new.push(c),
                    }
                    self.cols.push((n, i));
                }
            }
        }
        new
    }

    /// The allocation of `sol`, with the certificate read from its duals.
    fn allocation(
        &self,
        instance: &Instance,
        sol: &Solution,
        path: leontief_core::Path,
        pairs: usize,
        passes: usize,
    ) -> Allocation {
        let (k, m) = (instance.num_entries(), instance.num_resources());
        if !sol.status.has_solution() {
            let mut a = Allocation::empty(instance, "nfc", sol.status);
            a.backend_status = Some(sol.raw_status.clone());
            return a;
        }
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); instance.num_users()];
        for (c, &(n, i)) in self.cols.iter().enumerate() {
            rows[n].push((i.0, sol.x[c].max(0.0)));
        }
        let tasks = leontief_core::Tasks::from_rows(k, rows);
        let mut a = Allocation::new(instance, "nfc", sol.status, tasks);
        a.objective = Some(sol.objective);
        a.backend_status = Some(sol.raw_status.clone());
        let y = |row: Row| sol.row_dual.get(row.0).copied().unwrap_or(0.0).max(0.0);
        a.total_certificate = Some(TotalCertificate {
            path,
            pairs,
            columns: self.cols.len(),
            pricing_passes: passes,
            prices: (0..k)
                .map(|i| (0..m).map(|r| y(self.cap_rows[i * m + r])).collect())
                .collect(),
            cap_prices: self.cap_user.iter().map(|r| r.map_or(0.0, y)).collect(),
        });
        a
    }
}

/// What column generation ended with.
struct Generated {
    sol: Solution,
    status: Status,
    solves: usize,
    seconds: f64,
}

/// Column generation from the seed already in `loaded`.
fn generate<L: LoadedLp>(
    loaded: &mut L,
    lp: &mut Lp,
    instance: &Instance,
) -> Result<Generated, DrfhError> {
    let (k, m, nu) = (
        instance.num_entries(),
        instance.num_resources(),
        instance.num_users(),
    );
    let all = vec![true; nu];
    let ones = vec![1.0; nu];
    // An entry's optimum uses up to m users: each pass offers it its m
    // most attractive.
    let per_entry = m;
    let (mut seconds, mut solves) = (0.0, 0);
    // Simplex throughout (see the module docs).
    loaded.prefer_warm_simplex()?;
    for pass in 0..=MAX_PASSES {
        let sol = loaded.solve()?;
        seconds += sol.seconds;
        solves += 1;
        if sol.status != Status::Optimal {
            let status = sol.status;
            return Ok(Generated {
                sol,
                status,
                solves,
                seconds,
            });
        }
        let y = |row: Row| sol.row_dual[row.0].max(0.0);
        let p: Vec<f64> = (0..k * m).map(|j| y(lp.cap_rows[j])).collect();
        let u: Vec<f64> = lp.cap_user.iter().map(|r| 1.0 - r.map_or(0.0, y)).collect();
        let held = &lp.pairs;
        let present = |n: usize, i: ServerId| held[n].binary_search(&i).is_ok();
        let priced = price(
            instance,
            true,
            &all,
            &ones,
            &u,
            &p,
            &present,
            PRICING_TOLERANCE,
            PER_USER,
            per_entry,
            &|n, i| entry_pick(instance, n, i),
        );
        let done = priced.add.iter().all(Vec::is_empty);
        if done || pass == MAX_PASSES {
            return Ok(Generated {
                sol,
                status: if done {
                    Status::Optimal
                } else {
                    Status::IterationLimit
                },
                solves,
                seconds,
            });
        }
        let new = lp.add(instance, &priced.add);
        loaded.add_cols(&new)?;
    }
    unreachable!("the loop returns by its last pass")
}

/// The seed: per user its [`PER_USER`] entries of least `sum_r d_r /
/// c_{i,r}` and per entry the user spreading most evenly ([`seed`]); per
/// entry as well the users of least `d_n . w / c_i` along the directions
/// `w` = all ones and `1 + 3 e_r` (each r), and the user of least
/// per-entry dominant share (max_r d_r / c_{i,r}). An entry's picks are
/// among the users [`entry_pick`] admits there.
fn seed_pairs(instance: &Instance) -> Vec<Vec<ServerId>> {
    let (k, m, nu) = (
        instance.num_entries(),
        instance.num_resources(),
        instance.num_users(),
    );
    let active = vec![true; nu];
    let mut lists = seed(instance, &active, true, PER_USER, &|n, i| {
        entry_pick(instance, n, i)
    });
    let dirs = m + 2;
    type Best = Vec<(f64, usize)>;
    let best: Best = (0..nu)
        .into_par_iter()
        .fold(
            || vec![(f64::INFINITY, usize::MAX); k * dirs],
            |mut best: Best, n| {
                let d = &instance.user(UserId(n)).demand;
                for_each_runnable(instance, UserId(n), true, |i| {
                    let c = instance.class_capacities(i);
                    let (mut sum, mut max) = (0.0, 0.0f64);
                    for r in 0..m {
                        if d[r] > 0.0 {
                            let z = d[r] / c[r];
                            sum += z;
                            max = max.max(z);
                        }
                    }
                    if !picks_at(instance.user(UserId(n)).tasks, max) {
                        return;
                    }
                    let b = &mut best[i.0 * dirs..(i.0 + 1) * dirs];
                    if sum < b[0].0 {
                        b[0] = (sum, n);
                    }
                    if max < b[1].0 {
                        b[1] = (max, n);
                    }
                    for r in 0..m {
                        let key = if d[r] > 0.0 {
                            sum + 3.0 * d[r] / c[r]
                        } else {
                            sum
                        };
                        if key < b[2 + r].0 {
                            b[2 + r] = (key, n);
                        }
                    }
                });
                best
            },
        )
        .reduce(
            || vec![(f64::INFINITY, usize::MAX); k * dirs],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    if y.0 < x.0 || (y.0 == x.0 && y.1 < x.1) {
                        *x = y;
                    }
                }
                a
            },
        );
    for (j, &(_, n)) in best.iter().enumerate() {
        if n != usize::MAX {
            let i = ServerId(j / dirs);
            if let Err(at) = lists[n].binary_search(&i) {
                lists[n].insert(at, i);
            }
        }
    }
    lists
}

/// Whether user n may be entry i's pick (its best user in the seed, its
/// most attractive pair in a pass): not a capped user whose cap fits on
/// [`PER_USER`] entries like i, which its own picks give it each pass.
/// Such a user (a few tasks, a small demand) is the best of nearly every
/// entry; picked there it took a column on each, its cap row ran
/// through the whole basis and each simplex iteration cost about five
/// times as much (`docs/design/maxmin-operator.md`, "NFC by column
/// generation"). Its pairs still enter by its own picks, so pricing
/// closes as before.
fn entry_pick(instance: &Instance, n: usize, i: ServerId) -> bool {
    let u = instance.user(UserId(n));
    let share = u
        .demand
        .iter()
        .zip(instance.class_capacities(i))
        .filter(|(&d, _)| d > 0.0)
        .map(|(&d, &c)| d / c)
        .fold(0.0, f64::max);
    picks_at(u.tasks, share)
}

/// [`entry_pick`] from the user's cap and its per-entry dominant share
/// there (`max_r d_r / c_{i,r}`: one task's share, so the entry holds
/// `1 / share` tasks): a pick unless capped at most [`PER_USER`] such
/// entries' worth.
fn picks_at(cap: Option<f64>, share: f64) -> bool {
    cap.is_none_or(|cap| cap * share > PER_USER as f64)
}
