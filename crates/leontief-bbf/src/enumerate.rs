//! Every BBF bottleneck set, by the subset LPs of 003 Sec. 6.
//!
//! For a non-empty J, the LP
//!
//! ```text
//!   maximise t
//!   sum_n x_n r_{n,j} = 1           (j in J)
//!   sum_n x_n r_{n,j} + t <= 1      (j not in J)
//!   lb_n(J) <= x_n <= ub_n,   lb_n(J) = min(ub_n, e_n / max_{j in J} r_{n,j})
//! ```
//!
//! is feasible with t > 0 iff J is exactly the bottleneck set of some BBF
//! allocation: x_n max_{j in J} r_{n,j} >= e_n is the second disjunct of
//! condition (2) for the best j in J, and lb_n = ub_n = 1 leaves only the
//! first. (An uncapped user with no request in J can satisfy neither: J is
//! then skipped as infeasible without an LP.)
//!
//! **Pruning.** Only resources in [`Pool::saturable`] enter J: a resource
//! with sum_n ub_n r_{n,j} < 1 has load < 1 in every feasible allocation,
//! so no J containing it is ever a bottleneck set; and it can be left out
//! of the LP's rows too, because any x within its bounds keeps its load
//! below 1 - t for t small enough, and the LP's feasible t form an interval
//! [0, t*]. So 2^{m'} - 1 subsets are tried, m' the number of saturable
//! resources.
//!
//! A second rule settles a subset without an LP: if the lower bounds alone
//! load some resource above 1, or load a resource outside J to 1 or more
//! (it must stay strictly below 1), the LP is infeasible, since loads only
//! grow with x.
//!
//! **Re-solves.** Each worker builds the LP once (columns x_n, t and a
//! slack u_j per resource with sum_n x_n r_{n,j} + u_j = 1 and t - u_j <= 0)
//! and moves between subsets by bounds only: j in J fixes u_j = 0 and frees
//! its t-row; x's bounds are lb_n(J), ub_n.
//!
//! **Dimension.** The set of BBF allocations with bottleneck set exactly J
//! is Q_J intersected with the open set {load_j < 1 off J}, and since it
//! is non-empty and Q_J = {A_J x = 1, lb <= x <= ub} is convex, its
//! dimension is dim Q_J = N - |F| - rank(A_J restricted to the users not
//! in F), where F are the bounds that hold with equality on all of Q_J.
//! One LP decides the usual case (`DeltaLp`: a slack common to every
//! bound is positive, so F is empty); otherwise F is found with the subset
//! LP extended by z columns that measure each bound's slack
//! (x_n - z_n >= lb_n, x_n + z'_n <= ub_n, 0 <= z <= 1), maximise the sum
//! of the z of bounds not yet known to be loose; a positive z proves its
//! bound loose; when the optimum is 0 the remaining bounds are implicit
//! equalities.

use crate::{check, BbfError, Pool};
use leontief_model::{Col, LoadedLp, LpBackend, ProblemBuilder, Row, Sense, Status};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

const INF: f64 = f64::INFINITY;
/// t above this proves the off-J resources strictly below capacity.
const T_MIN: f64 = 1e-9;

/// One BBF bottleneck set with a witness allocation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BbfSolution {
    /// The bottleneck set J (resource names).
    pub bottlenecks: Vec<String>,
    /// Tasks of each user in the witness (the maximiser of t).
    pub user_tasks: Vec<f64>,
    /// Fractions x_n of the witness.
    pub fractions: Vec<f64>,
    /// Dimension of the polytope of BBF allocations with exactly this
    /// bottleneck set (0: the witness is the only one).
    pub dimension: usize,
    /// t*: the witness keeps every other resource at load <= 1 - t*.
    pub margin: f64,
}

/// Options of [`enumerate`].
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// This run's slice: subsets whose index mod `shard.1` is `shard.0`.
    pub shard: (u64, u64),
    /// Compute each polytope's dimension (a few more LPs per solution).
    pub dimension: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            shard: (0, 1),
            dimension: true,
        }
    }
}

/// What [`enumerate`] found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Enumeration {
    /// The bottleneck sets, ordered by size then lexicographically.
    pub solutions: Vec<BbfSolution>,
    /// Subsets settled by this run (by an LP or by a pruning rule).
    pub subsets_tried: u64,
    /// Subset LPs solved (the others were settled by the lower-bound rule).
    #[serde(default)]
    pub lps_solved: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// 2^{m'} - 1 over all shards.
    pub subsets_total: u64,
    /// Resources left out by the pruning rule (nobody can saturate them).
    pub pruned_resources: Vec<String>,
    /// This run's shard (index, count).
    pub shard: [u64; 2],
    /// Resource names, to check shards belong together.
    pub resources: Vec<String>,
    /// A digest of the pooled problem, to check shards belong together.
    pub problem_digest: String,
    /// True when every subset LP ended optimal or infeasible, so the list
    /// is the whole answer for this shard.
    pub complete: bool,
    /// Subsets whose LP ended otherwise (a limit, a numerical failure...),
    /// with that status: the list may miss them.
    pub unsettled: Vec<Unsettled>,
    /// Merged shards only: whether every witness was re-checked by the
    /// independent BBF test on the instance (`false`: merged without the
    /// instance, so only their form was checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witnesses_verified: Option<bool>,
}

/// A subset whose LP settled nothing.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Unsettled {
    /// The subset J.
    pub bottlenecks: Vec<String>,
    /// The LP's status.
    pub status: String,
}

/// What one subset LP says (and how many LPs its worker has solved).
enum Verdict {
    Found(BbfSolution),
    Not,
    Unsettled(Unsettled),
}

/// One worker's loaded LP.
struct SubsetLp<L: LoadedLp> {
    lp: L,
    x: Vec<Col>,
    t: Col,
    u: Vec<Col>,
    trow: Vec<Row>,
    lo_rows: Vec<Row>,
    zlo: Vec<Col>,
    zhi: Vec<Option<Col>>,
    delta: Option<Col>,
}

fn build<B: LpBackend>(
    backend: &B,
    pool: &Pool,
    res: &[usize],
    with_dimension: bool,
) -> Result<SubsetLp<B::Loaded>, BbfError> {
    let nu = pool.num_users();
    let mut b = ProblemBuilder::new(Sense::Maximise);
    let load_rows: Vec<Row> = res.iter().map(|_| b.add_row(1.0, 1.0)).collect();
    let trow: Vec<Row> = res.iter().map(|_| b.add_row(-INF, 0.0)).collect();
    // The bound-slack rows and z columns exist only to measure dimensions.
    let lo_rows: Vec<Row> = if with_dimension {
        (0..nu).map(|_| b.add_row(0.0, INF)).collect()
    } else {
        Vec::new()
    };
    let hi_rows: Vec<Option<Row>> = (0..nu)
        .map(|n| (with_dimension && pool.ub[n].is_finite()).then(|| b.add_row(-INF, pool.ub[n])))
        .collect();
    let x: Vec<Col> = (0..nu)
        .map(|n| {
            let entries = res
                .iter()
                .enumerate()
                .filter(|(_, &j)| pool.req(n, j) > 0.0)
                .map(|(a, &j)| (load_rows[a], pool.req(n, j)))
                .chain(lo_rows.get(n).map(|&r| (r, 1.0)))
                .chain(hi_rows[n].map(|r| (r, 1.0)));
            b.add_col(0.0, 0.0, pool.ub[n], entries)
        })
        .collect();
    let t = b.add_col(1.0, 0.0, 1.0, trow.iter().map(|&r| (r, 1.0)));
    let u: Vec<Col> = (0..res.len())
        .map(|a| b.add_col(0.0, 0.0, INF, [(load_rows[a], 1.0), (trow[a], -1.0)]))
        .collect();
    let zlo: Vec<Col> = lo_rows
        .iter()
        .map(|&r| b.add_col(0.0, 0.0, 0.0, [(r, -1.0)]))
        .collect();
    let zhi: Vec<Option<Col>> = hi_rows
        .iter()
        .map(|r| r.map(|r| b.add_col(0.0, 0.0, 0.0, [(r, 1.0)])))
        .collect();
    // delta: one common slack for every bound (x_n - delta >= lb_n,
    // x_n + delta <= ub_n), the one-LP fast path of the dimension.
    let delta = with_dimension.then(|| {
        b.add_col(
            0.0,
            0.0,
            0.0,
            lo_rows
                .iter()
                .map(|&r| (r, -1.0))
                .chain(hi_rows.iter().flatten().map(|&r| (r, 1.0)))
                .collect::<Vec<_>>(),
        )
    });
    let lp = backend.load(b.build())?;
    Ok(SubsetLp {
        lp,
        x,
        t,
        u,
        trow,
        lo_rows,
        zlo,
        zhi,
        delta,
    })
}

/// lb_n(J), or `None` when an uncapped user has no request in J.
fn lower_bounds(pool: &Pool, jset: &[usize]) -> Option<Vec<f64>> {
    (0..pool.num_users())
        .map(|n| {
            let best = jset.iter().map(|&j| pool.req(n, j)).fold(0.0, f64::max);
            if best > 0.0 {
                Some((pool.e[n] / best).min(pool.ub[n]))
            } else if pool.ub[n].is_finite() {
                Some(pool.ub[n])
            } else {
                None
            }
        })
        .collect()
}

impl<L: LoadedLp> SubsetLp<L> {
    /// Solve for J (positions into the saturable resources `res`).
    fn solve(
        &mut self,
        pool: &Pool,
        res: &[usize],
        mask: u64,
        dimension: bool,
        lps: &AtomicU64,
    ) -> Result<Verdict, BbfError> {
        let jpos: Vec<usize> = (0..res.len()).filter(|&a| mask >> a & 1 == 1).collect();
        let jset: Vec<usize> = jpos.iter().map(|&a| res[a]).collect();
        let Some(lb) = lower_bounds(pool, &jset) else {
            return Ok(Verdict::Not);
        };
        // The lower bounds alone overload a resource, or fill one outside
        // J (which must stay strictly below 1): no LP needed.
        let floor = pool.loads(&lb);
        if (0..pool.num_resources())
            .any(|j| floor[j] > 1.0 + 1e-12 || (floor[j] >= 1.0 - 1e-12 && !jset.contains(&j)))
        {
            return Ok(Verdict::Not);
        }
        lps.fetch_add(1, Ordering::Relaxed);
        // Every column bound in one call: x, u and the z's.
        let mut cols = self.x.clone();
        let mut lo = lb.clone();
        let mut hi = pool.ub.clone();
        for a in 0..res.len() {
            cols.push(self.u[a]);
            lo.push(0.0);
            hi.push(if mask >> a & 1 == 1 { 0.0 } else { INF });
        }
        for z in self.zlo.iter().chain(self.zhi.iter().flatten()) {
            cols.push(*z);
            lo.push(0.0);
            hi.push(0.0);
        }
        self.lp.set_cols_bounds(&cols, &lo, &hi)?;
        for (n, &r) in self.lo_rows.iter().enumerate() {
            self.lp.set_row_bounds(r, lb[n], INF)?;
        }
        for a in 0..res.len() {
            let inj = mask >> a & 1 == 1;
            self.lp
                .set_row_bounds(self.trow[a], -INF, if inj { INF } else { 0.0 })?;
        }
        self.lp.set_cost(self.t, 1.0)?;
        let s = self.lp.solve()?;
        match s.status {
            Status::Optimal if s.objective > T_MIN => {}
            Status::Optimal | Status::Infeasible => return Ok(Verdict::Not),
            other => {
                return Ok(Verdict::Unsettled(Unsettled {
                    bottlenecks: jset.iter().map(|&j| pool.resources[j].clone()).collect(),
                    status: other.to_string(),
                }))
            }
        }
        let x: Vec<f64> = self
            .x
            .iter()
            .enumerate()
            .map(|(n, c)| s.x[c.0].clamp(lb[n], pool.ub[n]))
            .collect();
        let margin = s.objective;
        let dim = if dimension {
            self.dimension(pool, &jset, &lb)?
        } else {
            0
        };
        Ok(Verdict::Found(BbfSolution {
            bottlenecks: jset.iter().map(|&j| pool.resources[j].clone()).collect(),
            user_tasks: pool.tasks(&x),
            fractions: x,
            dimension: dim,
            margin,
        }))
    }

    /// dim Q_J (see the module docs). The LP holds J's bounds already.
    fn dimension(&mut self, pool: &Pool, jset: &[usize], lb: &[f64]) -> Result<usize, BbfError> {
        let nu = pool.num_users();
        self.lp.set_cost(self.t, 0.0)?;
        // Candidates: (user, is_upper, column). lb = ub fixes x_n outright.
        let mut fixed = vec![false; nu];
        let mut cand: Vec<(usize, Col)> = Vec::new();
        for n in 0..nu {
            if lb[n] >= pool.ub[n] {
                fixed[n] = true;
                continue;
            }
            self.lp.set_col_bounds(self.zlo[n], 0.0, 1.0)?;
            cand.push((n, self.zlo[n]));
            if let Some(z) = self.zhi[n] {
                self.lp.set_col_bounds(z, 0.0, 1.0)?;
                cand.push((n, z));
            }
        }
        // Fast path: one LP maximising a slack common to every candidate
        // bound (only those bounds: fixed users' rows are relaxed by
        // setting their own z free instead). delta > 0 proves no candidate
        // is an implicit equality.
        if let Some(delta) = self.delta {
            for n in (0..nu).filter(|&n| fixed[n]) {
                // lb = ub: let this user's rows absorb delta through its z's.
                self.lp.set_col_bounds(self.zlo[n], -1.0, 0.0)?;
                if let Some(z) = self.zhi[n] {
                    self.lp.set_col_bounds(z, -1.0, 0.0)?;
                }
            }
            for &(_, c) in &cand {
                self.lp.set_col_bounds(c, 0.0, 0.0)?;
            }
            self.lp.set_col_bounds(delta, 0.0, 1.0)?;
            self.lp.set_cost(delta, 1.0)?;
            let s = self.lp.solve()?;
            self.lp.set_cost(delta, 0.0)?;
            self.lp.set_col_bounds(delta, 0.0, 0.0)?;
            for n in (0..nu).filter(|&n| fixed[n]) {
                self.lp.set_col_bounds(self.zlo[n], 0.0, 0.0)?;
                if let Some(z) = self.zhi[n] {
                    self.lp.set_col_bounds(z, 0.0, 0.0)?;
                }
            }
            for &(_, c) in &cand {
                self.lp.set_col_bounds(c, 0.0, 1.0)?;
            }
            if s.status == Status::Optimal && s.objective > 1e-9 {
                cand.clear();
            }
        }
        for &(_, c) in &cand {
            self.lp.set_cost(c, 1.0)?;
        }
        while !cand.is_empty() {
            let s = self.lp.solve()?;
            if !s.status.has_solution() {
                break;
            }
            let (loose, tight): (Vec<_>, Vec<_>) =
                cand.iter().partition(|&&(_, c)| s.x[c.0] > 1e-9);
            if loose.is_empty() {
                break;
            }
            for &(_, c) in &loose {
                self.lp.set_cost(c, 0.0)?;
            }
            cand = tight;
        }
        for &(n, _) in &cand {
            fixed[n] = true;
        }
        for n in 0..nu {
            self.lp.set_cost(self.zlo[n], 0.0)?;
            if let Some(z) = self.zhi[n] {
                self.lp.set_cost(z, 0.0)?;
            }
        }
        Ok(rank_dimension(pool, jset, &fixed))
    }
}

/// The one-LP dimension test, separate from the subset LP so that the
/// subset LP stays lean: x_n = lb_n + d_n, maximise delta with
/// d_n >= delta and d_n + delta <= ub_n - lb_n for the users whose bounds
/// differ, and sum_n r_{n,j} d_n = 1 - sum_n r_{n,j} lb_n on J (the other
/// resources' rows are free: dim Q_J does not involve them).
struct DeltaLp<L: LoadedLp> {
    lp: L,
    d: Vec<Col>,
    delta: Col,
    rows: Vec<Row>,
    lo: Vec<Row>,
    hi: Vec<Option<Row>>,
}

fn build_delta<B: LpBackend>(
    backend: &B,
    pool: &Pool,
    res: &[usize],
) -> Result<DeltaLp<B::Loaded>, BbfError> {
    let nu = pool.num_users();
    let mut b = ProblemBuilder::new(Sense::Maximise);
    let rows: Vec<Row> = res.iter().map(|_| b.add_row(-INF, INF)).collect();
    let lo: Vec<Row> = (0..nu).map(|_| b.add_row(0.0, INF)).collect();
    let hi: Vec<Option<Row>> = (0..nu)
        .map(|n| pool.ub[n].is_finite().then(|| b.add_row(-INF, INF)))
        .collect();
    let d: Vec<Col> = (0..nu)
        .map(|n| {
            let entries = res
                .iter()
                .enumerate()
                .filter(|(_, &j)| pool.req(n, j) > 0.0)
                .map(|(a, &j)| (rows[a], pool.req(n, j)))
                .chain([(lo[n], 1.0)])
                .chain(hi[n].map(|r| (r, 1.0)));
            b.add_col(0.0, 0.0, INF, entries)
        })
        .collect();
    let delta = b.add_col(
        1.0,
        0.0,
        1.0,
        lo.iter()
            .map(|&r| (r, -1.0))
            .chain(hi.iter().flatten().map(|&r| (r, 1.0)))
            .collect::<Vec<_>>(),
    );
    Ok(DeltaLp {
        lp: backend.load(b.build())?,
        d,
        delta,
        rows,
        lo,
        hi,
    })
}

impl<L: LoadedLp> DeltaLp<L> {
    /// The dimension of Q_J if one LP decides it (no bound is an implicit
    /// equality), else `None`.
    fn dimension(
        &mut self,
        pool: &Pool,
        res: &[usize],
        mask: u64,
        lb: &[f64],
    ) -> Result<Option<usize>, BbfError> {
        let nu = pool.num_users();
        let fixed: Vec<bool> = (0..nu).map(|n| lb[n] >= pool.ub[n]).collect();
        let up: Vec<f64> = (0..nu)
            .map(|n| if fixed[n] { 0.0 } else { pool.ub[n] - lb[n] })
            .collect();
        self.lp.set_cols_bounds(&self.d, &vec![0.0; nu], &up)?;
        for n in 0..nu {
            let (l, u) = if fixed[n] { (-INF, INF) } else { (0.0, INF) };
            self.lp.set_row_bounds(self.lo[n], l, u)?;
            if let Some(r) = self.hi[n] {
                let (l, u) = if fixed[n] { (-INF, INF) } else { (-INF, up[n]) };
                self.lp.set_row_bounds(r, l, u)?;
            }
        }
        for (a, &j) in res.iter().enumerate() {
            if mask >> a & 1 == 1 {
                let rhs = 1.0 - (0..nu).map(|n| pool.req(n, j) * lb[n]).sum::<f64>();
                self.lp.set_row_bounds(self.rows[a], rhs, rhs)?;
            } else {
                self.lp.set_row_bounds(self.rows[a], -INF, INF)?;
            }
        }
        let s = self.lp.solve()?;
        let _ = self.delta;
        if s.status != Status::Optimal || s.objective <= 1e-9 {
            return Ok(None);
        }
        let jset: Vec<usize> = (0..res.len())
            .filter(|&a| mask >> a & 1 == 1)
            .map(|a| res[a])
            .collect();
        Ok(Some(rank_dimension(pool, &jset, &fixed)))
    }
}

/// N - |fixed| - rank(A_J on the users not fixed).
fn rank_dimension(pool: &Pool, jset: &[usize], fixed: &[bool]) -> usize {
    let free: Vec<usize> = (0..pool.num_users()).filter(|&n| !fixed[n]).collect();
    if free.is_empty() {
        return 0;
    }
    let a = nalgebra::DMatrix::from_fn(jset.len(), free.len(), |a, b| pool.req(free[b], jset[a]));
    let sv = a.singular_values();
    let top = sv.iter().copied().fold(0.0, f64::max);
    let rank = sv.iter().filter(|&&s| s > 1e-9 * top.max(1e-300)).count();
    free.len() - rank
}

/// One rayon worker: the lean subset LP, the delta LP, and (built only if a
/// subset needs it) the subset LP with the per-bound slack columns.
struct Worker<L: LoadedLp> {
    lean: SubsetLp<L>,
    delta: Option<DeltaLp<L>>,
    heavy: Option<SubsetLp<L>>,
}

/// A digest of the pooled problem (FNV-1a over its numbers and names).
pub fn digest(pool: &Pool) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    };
    for v in pool.r.iter().chain(&pool.e).chain(&pool.ub) {
        eat(&v.to_bits().to_le_bytes());
    }
    for s in pool.resources.iter().chain(&pool.users) {
        eat(s.as_bytes());
    }
    format!("{h:016x}")
}

/// One subset: the lean LP decides whether J is a bottleneck set; the
/// delta LP gives its dimension in one solve when no bound is an implicit
/// equality, and the subset LP with per-bound slacks decides the rest.
fn settle<B: LpBackend>(
    w: &mut Worker<B::Loaded>,
    backend: &B,
    pool: &Pool,
    res: &[usize],
    mask: u64,
    lps: &AtomicU64,
) -> Result<Verdict, BbfError> {
    let v = w.lean.solve(pool, res, mask, false, lps)?;
    let Verdict::Found(mut sol) = v else {
        return Ok(v);
    };
    let Some(delta) = w.delta.as_mut() else {
        return Ok(Verdict::Found(sol));
    };
    let jset: Vec<usize> = (0..res.len())
        .filter(|&a| mask >> a & 1 == 1)
        .map(|a| res[a])
        .collect();
    let lb = lower_bounds(pool, &jset).expect("J was feasible");
    if let Some(d) = delta.dimension(pool, res, mask, &lb)? {
        sol.dimension = d;
        return Ok(Verdict::Found(sol));
    }
    if w.heavy.is_none() {
        w.heavy = Some(build(backend, pool, res, true)?);
    }
    let heavy = w.heavy.as_mut().expect("built above");
    match heavy.solve(pool, res, mask, true, lps)? {
        Verdict::Found(h) => sol.dimension = h.dimension,
        other => return Ok(other),
    }
    Ok(Verdict::Found(sol))
}

/// Enumerate every BBF bottleneck set of `pool` in this run's shard, in
/// parallel (rayon; one loaded LP per worker). `progress` is called once
/// per subset settled.
pub fn enumerate<B>(
    backend: &B,
    pool: &Pool,
    options: Options,
    progress: &(dyn Fn() + Sync),
) -> Result<Enumeration, BbfError>
where
    B: LpBackend + Sync,
    B::Loaded: Send,
{
    let t0 = Instant::now();
    let (index, count) = options.shard;
    if count == 0 || index >= count {
        return Err(BbfError::Parameter(format!(
            "--shard {index}/{count}: need 0 <= I < N (I is 0-based)"
        )));
    }
    let res = pool.saturable();
    if res.len() > 40 {
        return Err(BbfError::Parameter(format!(
            "{} saturable resources: 2^{} subsets is beyond any enumeration",
            res.len(),
            res.len()
        )));
    }
    let total = (1u64 << res.len()) - 1;
    // The masks of this shard, index, index + count, ... (0 is no subset),
    // generated on the fly: 34 resources are 1.7e10 masks, which as a list
    // aborted allocating 137 GB.
    let first = if index == 0 { count } else { index };
    let tried = if first > total {
        0
    } else {
        (total - first) / count + 1
    };
    if tried > MAX_SUBSETS_PER_SHARD {
        return Err(BbfError::Parameter(format!(
            "{} saturable resources: this shard holds {tried} of the 2^{} - 1 subsets, more than the {MAX_SUBSETS_PER_SHARD} one run settles in reasonable time; split the work with --shard I/N, N >= {}",
            res.len(),
            res.len(),
            total.div_ceil(MAX_SUBSETS_PER_SHARD)
        )));
    }
    let lps = AtomicU64::new(0);
    let found: Result<Vec<Verdict>, BbfError> = (0..tried)
        .into_par_iter()
        .map(|j| first + j * count)
        .map_init(
            || -> Result<Worker<B::Loaded>, BbfError> {
                Ok(Worker {
                    lean: build(backend, pool, &res, false)?,
                    delta: if options.dimension {
                        Some(build_delta(backend, pool, &res)?)
                    } else {
                        None
                    },
                    heavy: None,
                })
            },
            |w, mask| {
                let r = match w {
                    Ok(w) => settle(w, backend, pool, &res, mask, &lps),
                    Err(e) => Err(BbfError::Parameter(format!("building the subset LP: {e}"))),
                };
                progress();
                r
            },
        )
        .collect();
    let mut solutions = Vec::new();
    let mut unsettled = Vec::new();
    for v in found? {
        match v {
            Verdict::Found(s) => solutions.push(s),
            Verdict::Not => {}
            Verdict::Unsettled(u) => unsettled.push(u),
        }
    }
    sort(pool, &mut solutions);
    Ok(Enumeration {
        solutions,
        subsets_tried: tried,
        lps_solved: lps.into_inner(),
        seconds: t0.elapsed().as_secs_f64(),
        subsets_total: total,
        pruned_resources: (0..pool.num_resources())
            .filter(|j| !res.contains(j))
            .map(|j| pool.resources[j].clone())
            .collect(),
        shard: [index, count],
        resources: pool.resources.clone(),
        problem_digest: digest(pool),
        complete: unsettled.is_empty(),
        unsettled,
        witnesses_verified: None,
    })
}

fn sort(pool: &Pool, s: &mut [BbfSolution]) {
    let pos = |name: &String| pool.resources.iter().position(|r| r == name);
    s.sort_by(|a, b| {
        let ka: Vec<_> = a.bottlenecks.iter().map(pos).collect();
        let kb: Vec<_> = b.bottlenecks.iter().map(pos).collect();
        (ka.len(), ka).cmp(&(kb.len(), kb))
    });
}

/// Merge shard outputs: they must come from the same problem and the same
/// shard count, and cover every shard exactly once.
pub fn merge(
    pool_resources: Option<&[String]>,
    parts: Vec<Enumeration>,
) -> Result<Enumeration, String> {
    let first = parts.first().ok_or("no shard files given")?;
    let count = first.shard[1];
    for p in &parts {
        if p.problem_digest != first.problem_digest || p.resources != first.resources {
            return Err(format!(
                "shard {}/{} comes from a different problem (digest {} vs {})",
                p.shard[0], p.shard[1], p.problem_digest, first.problem_digest
            ));
        }
        if p.shard[1] != count {
            return Err(format!(
                "shard {}/{} has a different shard count than {}/{}",
                p.shard[0], p.shard[1], first.shard[0], count
            ));
        }
    }
    if count == 0 {
        return Err("shard count 0: a shard is I/N with N >= 1".into());
    }
    // Every shard must be given, so with fewer files than shards one is
    // missing: name it without allocating anything of the claimed count
    // (a tampered count of 2^64 - 1 must not become a vector that long).
    let given = parts.len() as u64;
    if count > given {
        let have: std::collections::HashSet<u64> = parts.iter().map(|p| p.shard[0]).collect();
        let missing = (0..=given).find(|i| !have.contains(i)).unwrap_or(0);
        return Err(format!(
            "shard {missing}/{count} is missing (a shard count of {count} needs {count} files, {given} given)"
        ));
    }
    let mut seen = vec![false; count as usize];
    for p in &parts {
        let i = p.shard[0] as usize;
        if i >= seen.len() || seen[i] {
            return Err(format!(
                "shard {}/{count} appears twice or is out of range",
                i
            ));
        }
        seen[i] = true;
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(format!("shard {i}/{count} is missing"));
    }
    let resources = pool_resources.map_or_else(|| first.resources.clone(), |r| r.to_vec());
    let mut solutions: Vec<BbfSolution> = parts.iter().flat_map(|p| p.solutions.clone()).collect();
    // What a shard claims is checked, not trusted: every bottleneck names
    // a resource of the problem, no set appears twice, witnesses have one
    // finite, non-negative fraction per user (the same count everywhere).
    let users = solutions.first().map(|s| s.fractions.len());
    let mut seen_sets = std::collections::HashSet::new();
    for s in &solutions {
        if s.bottlenecks.is_empty() {
            return Err(
                "a solution has an empty bottleneck set (a BBF set names at least one resource)"
                    .into(),
            );
        }
        if let Some(twice) = s
            .bottlenecks
            .iter()
            .enumerate()
            .find_map(|(j, b)| s.bottlenecks[..j].contains(b).then_some(b))
        {
            return Err(format!(
                "the bottleneck set {:?} names {twice} twice",
                s.bottlenecks
            ));
        }
        if let Some(bad) = s.bottlenecks.iter().find(|b| !resources.contains(b)) {
            return Err(format!(
                "a solution names bottleneck {bad}, not a resource of the problem ({})",
                resources.join(", ")
            ));
        }
        let mut key = s.bottlenecks.clone();
        key.sort();
        if !seen_sets.insert(key) {
            return Err(format!(
                "the bottleneck set {:?} appears twice (a shard is duplicated or tampered with)",
                s.bottlenecks
            ));
        }
        if Some(s.fractions.len()) != users
            || s.user_tasks.len() != s.fractions.len()
            || s.fractions
                .iter()
                .chain(&s.user_tasks)
                .any(|x| !x.is_finite() || *x < 0.0)
        {
            return Err(format!(
                "the witness of {:?} is malformed (one finite, non-negative fraction and task count per user)",
                s.bottlenecks
            ));
        }
    }
    let pos = |name: &String| resources.iter().position(|r| r == name);
    solutions.sort_by(|a, b| {
        let ka: Vec<_> = a.bottlenecks.iter().map(pos).collect();
        let kb: Vec<_> = b.bottlenecks.iter().map(pos).collect();
        (ka.len(), ka).cmp(&(kb.len(), kb))
    });
    Ok(Enumeration {
        solutions,
        subsets_tried: parts.iter().map(|p| p.subsets_tried).sum(),
        lps_solved: parts.iter().map(|p| p.lps_solved).sum(),
        seconds: parts.iter().map(|p| p.seconds).sum(),
        subsets_total: first.subsets_total,
        pruned_resources: first.pruned_resources.clone(),
        shard: [0, 1],
        resources,
        problem_digest: first.problem_digest.clone(),
        complete: parts.iter().all(|p| p.complete),
        unsettled: parts.iter().flat_map(|p| p.unsettled.clone()).collect(),
        witnesses_verified: Some(false),
    })
}

/// The most subsets one shard may hold (2^30: about a day of subset LPs).
pub const MAX_SUBSETS_PER_SHARD: u64 = 1 << 30;

/// Check every solution independently: the witness passes the BBF test and
/// its bottleneck set is exactly the stated one. Returns the failures.
pub fn audit(pool: &Pool, e: &Enumeration, tolerance: f64) -> Vec<String> {
    e.solutions
        .iter()
        .filter_map(|s| {
            let c = check(pool, &s.fractions, tolerance.min(s.margin / 2.0));
            if !c.holds {
                Some(format!(
                    "{:?}: the witness fails the BBF test (violation {:.3e}, infeasibility {:.3e})",
                    s.bottlenecks, c.worst_violation, c.infeasibility
                ))
            } else if c.bottlenecks != s.bottlenecks {
                Some(format!(
                    "{:?}: the witness's bottleneck set is {:?}",
                    s.bottlenecks, c.bottlenecks
                ))
            } else {
                None
            }
        })
        .collect()
}
