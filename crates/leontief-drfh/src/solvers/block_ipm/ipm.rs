//! The primal-dual interior point iterations (Mehrotra predictor-corrector)
//! on the loaded LP, each step through the normal equations of
//! [`super::normal`].

use super::chunks::{self, CHUNK};
use super::normal::{back_solve, factor, Factor, Layout, Var};
use super::{
    DENSE, MAX_ITERATIONS, PRIMAL_STALLED, REFINED, REFINE_BELOW, REFINE_ROUNDS, STALL_STEPS,
    TOLERANCE, TO_BOUNDARY, WARM_AT,
};
use leontief_model::{Problem, Sense, Solution, Status};
use rayon::prelude::*;
use std::time::Instant;

/// An iterate of one solve, kept to start the next solve of the same LP
/// grown by columns (its rows, its bounds and its old columns unchanged):
/// the first iterate whose relative gap and infeasibilities are at most
/// [`WARM_AT`].
#[derive(Clone)]
pub(super) struct Warm {
    /// Per column of the problem: x, its distances to its lower and upper
    /// bounds, and their duals z and q (unused for a fixed column).
    cols: Vec<[f64; 5]>,
    /// Per row: its dual y, then its slack's x, distances and duals
    /// (unused for a row without a slack).
    rows: Vec<[f64; 6]>,
    /// The iterate's average complementarity.
    mu: f64,
}

/// Solve `p`, from `warm` where given (else from the method's own start);
/// with the solution, the iterate to start the next solve from (`None`
/// when no iterate before the last one was within [`WARM_AT`]).
/// `Err((status, steps))` when the method did not converge (`TimeLimit`
/// when a step starts after `time_limit` seconds).
pub(super) fn solve(
    p: &Problem,
    blocks: &[u32],
    time_limit: Option<f64>,
    warm: Option<&Warm>,
) -> Result<(Solution, Option<Warm>), (Status, usize)> {
    let t0 = Instant::now();
    let (nr, nc) = (p.num_rows(), p.num_cols());
    let flip = if p.sense == Sense::Maximise {
        -1.0
    } else {
        1.0
    };
    // Active rows: every row with a finite bound. Equality rows carry no
    // slack.
    let active: Vec<bool> = (0..nr)
        .map(|r| p.row_lower[r].is_finite() || p.row_upper[r].is_finite())
        .collect();
    let mut index = vec![usize::MAX; nr];
    let mut rows = Vec::new();
    for r in (0..nr).filter(|&r| active[r]) {
        index[r] = rows.len();
        rows.push(r);
    }
    let na = rows.len();
    let mut block_rows: Vec<usize> = Vec::new();
    let mut place = Vec::with_capacity(na);
    let mut dense = 0;
    for &r in &rows {
        let b = blocks.get(r).copied().unwrap_or(DENSE);
        if b == DENSE {
            place.push((DENSE, dense));
            dense += 1;
        } else {
            let b = b as usize;
            if block_rows.len() <= b {
                block_rows.resize(b + 1, 0);
            }
            place.push((b as u32, block_rows[b]));
            block_rows[b] += 1;
        }
    }
    // Variables: the columns that are not fixed, then a slack per
    // inequality row; b collects the fixed columns and equality rows.
    let mut b = vec![0.0; na];
    let mut vars: Vec<Var> = Vec::new();
    // The variables' entries (active row, value), flat and column-wise,
    // for the products with A and its transpose.
    let (mut ent_start, mut ent_row, mut ent_val) = (vec![0usize], Vec::new(), Vec::new());
    let mut col_var = vec![usize::MAX; nc];
    let mut fixed_x = vec![0.0; nc];
    for j in 0..nc {
        let (lo, up) = (p.col_lower[j], p.col_upper[j]);
        let entries = (p.a_start[j]..p.a_start[j + 1])
            .filter(|&e| active[p.a_index[e]])
            .map(|e| (index[p.a_index[e]], p.a_value[e]));
        if lo == up {
            fixed_x[j] = lo;
            for (r, v) in entries {
                b[r] -= v * lo;
            }
            continue;
        }
        let mut var = Var {
            lower: lo,
            upper: up,
            cost: flip * p.col_cost[j],
            block: DENSE,
        };
        for (r, v) in entries {
            ent_row.push(r);
            ent_val.push(v);
            let blk = place[r].0;
            if blk != DENSE {
                if var.block != DENSE && var.block != blk {
                    return Err((Status::NumericalFailure, 0));
                }
                var.block = blk;
            }
        }
        col_var[j] = vars.len();
        vars.push(var);
        ent_start.push(ent_row.len());
    }
    let mut slack = vec![usize::MAX; na];
    for (a, &r) in rows.iter().enumerate() {
        let (lo, up) = (p.row_lower[r], p.row_upper[r]);
        if lo == up {
            b[a] += lo;
            continue;
        }
        slack[a] = vars.len();
        vars.push(Var {
            lower: lo,
            upper: up,
            cost: 0.0,
            block: place[a].0,
        });
        ent_row.push(a);
        ent_val.push(-1.0);
        ent_start.push(ent_row.len());
    }
    let layout = Layout::new(
        place, block_rows, dense, &vars, &ent_start, &ent_row, &ent_val,
    );
    let nv = vars.len();
    // The matrix row by row too, each row's entries in column order: the
    // product's sums in the order of the column-wise scatter, each row's
    // on its own thread.
    let mut row_start = vec![0usize; na + 1];
    for &r in &ent_row {
        row_start[r + 1] += 1;
    }
    for r in 0..na {
        row_start[r + 1] += row_start[r];
    }
    let mut next = row_start.clone();
    let mut by_row = vec![(0usize, 0.0f64); ent_row.len()];
    for j in 0..ent_start.len() - 1 {
        for e in ent_start[j]..ent_start[j + 1] {
            by_row[next[ent_row[e]]] = (j, ent_val[e]);
            next[ent_row[e]] += 1;
        }
    }
    let ops = Ops {
        layout: &layout,
        start: &ent_start,
        row: &ent_row,
        val: &ent_val,
        row_start: &row_start,
        by_row: &by_row,
    };
    let has_lo: Vec<bool> = vars.iter().map(|v| v.lower.is_finite()).collect();
    let has_up: Vec<bool> = vars.iter().map(|v| v.upper.is_finite()).collect();
    let lower: Vec<f64> = vars.iter().map(|v| v.lower).collect();
    let upper: Vec<f64> = vars.iter().map(|v| v.upper).collect();
    let cost: Vec<f64> = vars.iter().map(|v| v.cost).collect();
    // Start: inside every bound, duals 1.
    let mut x: Vec<f64> = vars
        .iter()
        .map(|v| match (v.lower.is_finite(), v.upper.is_finite()) {
            (true, true) => v.lower + 0.5 * (v.upper - v.lower),
            (true, false) => v.lower + 1.0,
            (false, true) => v.upper - 1.0,
            (false, false) => 0.0,
        })
        .collect();
    let mut z: Vec<f64> = has_lo.iter().map(|&h| if h { 1.0 } else { 0.0 }).collect();
    let mut q: Vec<f64> = has_up.iter().map(|&h| if h { 1.0 } else { 0.0 }).collect();
    let mut y = vec![0.0; na];
    let norm_b = 1.0 + b.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let norm_c = 1.0 + cost.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let pairs = has_lo.iter().filter(|&&h| h).count() + has_up.iter().filter(|&&h| h).count();
    let mut iterations = 0;
    let mut done = false;
    // Steps in a row with the dual infeasibility and gap within
    // TOLERANCE, and the primal infeasibility a solve stalled at.
    let mut closed = 0;
    let mut stalled: Option<f64> = None;
    // Every vector of a step, kept from step to step (allocated afresh,
    // their page faults were a tenth of a step).
    let mut f = Factor::new(&layout);
    let mut w = Step::new(nv, na, &layout);
    let mut xl = vec![0.0; nv];
    let mut xu = vec![0.0; nv];
    let mut d = vec![0.0; nv];
    let (mut ax, mut rp, mut aty) = (vec![0.0; na], vec![0.0; na], vec![0.0; nv]);
    // The distances to the bounds, moved with x by each step rather than
    // taken from x: near a bound far from 0 (a capped user's level column
    // at its cap) `upper - x` loses its digits. Taken from x, three solves
    // of the groups' LPs in one run (weights and caps on half the users,
    // 1,000 x 10,000, 6 resources) ended in a NaN gap and went to
    // Clarabel; moved, none did.
    for j in 0..nv {
        w.s[j] = if has_lo[j] { x[j] - lower[j] } else { 1.0 };
        w.t[j] = if has_up[j] { upper[j] - x[j] } else { 1.0 };
    }
    if let Some(wm) = warm.filter(|wm| wm.rows.len() == nr && wm.cols.len() <= nc) {
        let mut put = |v: usize, e: &[f64]| {
            (x[v], w.s[v], w.t[v], z[v], q[v]) = (e[0], e[1], e[2], e[3], e[4]);
        };
        for (j, &v) in col_var.iter().enumerate().filter(|(_, &v)| v != usize::MAX) {
            match wm.cols.get(j) {
                Some(e) => put(v, e),
                // A column added since: inside its bounds by the square
                // root of mu, its duals centred (s z = mu).
                None => {
                    let root = wm.mu.sqrt().max(f64::MIN_POSITIVE);
                    let (lo, up) = (lower[v], upper[v]);
                    let at = match (has_lo[v], has_up[v]) {
                        (true, true) if up - lo > 2.0 * root => lo + root,
                        (true, true) => lo + 0.5 * (up - lo),
                        (true, false) => lo + root,
                        (false, true) => up - root,
                        (false, false) => 0.0,
                    };
                    let (s, t) = (at - lo, up - at);
                    let z = if has_lo[v] { wm.mu / s } else { 0.0 };
                    let q = if has_up[v] { wm.mu / t } else { 0.0 };
                    let s = if has_lo[v] { s } else { 1.0 };
                    let t = if has_up[v] { t } else { 1.0 };
                    put(v, &[at, s, t, z, q]);
                }
            }
        }
        for (a, &r) in rows.iter().enumerate() {
            y[a] = wm.rows[r][0];
            if slack[a] != usize::MAX {
                put(slack[a], &wm.rows[r][1..]);
            }
        }
    }
    let mut keep: Option<Warm> = None;
    while iterations < MAX_ITERATIONS {
        ops.times(&x, &mut ax);
        for a in 0..na {
            rp[a] = b[a] - ax[a];
        }
        ops.transpose_times(&y, &mut aty);
        w.rd.par_iter_mut()
            .with_min_len(CHUNK)
            .enumerate()
            .for_each(|(j, r)| *r = cost[j] - aty[j] - z[j] + q[j]);
        let gap = chunks::sum(nv, |j| {
            let lo = if has_lo[j] { w.s[j] * z[j] } else { 0.0 };
            let up = if has_up[j] { w.t[j] * q[j] } else { 0.0 };
            lo + up
        });
        let pobj = chunks::sum(nv, |j| cost[j] * x[j]);
        let inf_p = chunks::max(na, 0.0, |a| rp[a].abs()) / norm_b;
        let inf_d = chunks::max(nv, 0.0, |j| w.rd[j].abs()) / norm_c;
        let rel_gap = gap / (1.0 + f64::abs(pobj));
        if !(inf_p.is_finite() && inf_d.is_finite() && rel_gap.is_finite()) {
            return Err((Status::NumericalFailure, iterations));
        }
        let dual_gap = inf_d <= TOLERANCE && rel_gap <= TOLERANCE;
        if dual_gap && (inf_p <= TOLERANCE || ops.rows_within(&x, &rp, norm_b, TOLERANCE)) {
            done = true;
            break;
        }
        // The dual and gap converged and the primal infeasibility stays
        // put: ends within PRIMAL_STALLED.
        closed = if dual_gap { closed + 1 } else { 0 };
        if closed > STALL_STEPS
            && (inf_p <= PRIMAL_STALLED || ops.rows_within(&x, &rp, norm_b, PRIMAL_STALLED))
        {
            stalled = Some(inf_p);
            done = true;
            break;
        }
        if keep.is_none() && inf_p.max(inf_d).max(rel_gap) <= WARM_AT {
            let mut cols = vec![[0.0; 5]; nc];
            for (j, &v) in col_var.iter().enumerate().filter(|(_, &v)| v != usize::MAX) {
                cols[j] = [x[v], w.s[v], w.t[v], z[v], q[v]];
            }
            let mut saved = vec![[0.0; 6]; nr];
            for (a, &r) in rows.iter().enumerate() {
                saved[r][0] = y[a];
                if slack[a] != usize::MAX {
                    let v = slack[a];
                    saved[r][1..].copy_from_slice(&[x[v], w.s[v], w.t[v], z[v], q[v]]);
                }
            }
            keep = Some(Warm {
                cols,
                rows: saved,
                mu: if pairs > 0 { gap / pairs as f64 } else { 0.0 },
            });
        }
        if time_limit.is_some_and(|t| t0.elapsed().as_secs_f64() > t) {
            return Err((Status::TimeLimit, iterations));
        }
        iterations += 1;
        let mu = if pairs > 0 { gap / pairs as f64 } else { 0.0 };
        // D = 1 / (z/s + q/t), regularised.
        d.par_iter_mut()
            .with_min_len(CHUNK)
            .enumerate()
            .for_each(|(j, v)| {
                let lo = if has_lo[j] { z[j] / w.s[j] } else { 0.0 };
                let up = if has_up[j] { q[j] / w.t[j] } else { 0.0 };
                *v = lo + up;
            });
        let dmax = chunks::max(nv, 1.0, |j| d[j]);
        d.par_iter_mut()
            .with_min_len(CHUNK)
            .for_each(|v| *v = 1.0 / (*v + 1e-30 * dmax));
        if !factor(&layout, &d, &mut f) {
            return Err((Status::NumericalFailure, iterations));
        }
        let bounds = Bounds {
            has_lo: &has_lo,
            has_up: &has_up,
            z: &z,
            q: &q,
            d: &d,
            rp: &rp,
        };
        // Predictor.
        (&mut xl[..], &mut xu[..])
            .into_par_iter()
            .with_min_len(CHUNK)
            .enumerate()
            .for_each(|(j, (l, u))| {
                *l = -w.s[j] * z[j];
                *u = -w.t[j] * q[j];
            });
        w.direction(&ops, &f, &bounds, &xl, &xu, false);
        let (ap, ad) = w.steps(&bounds);
        let gap_aff = chunks::sum(nv, |j| {
            let lo = if has_lo[j] {
                (w.s[j] + ap * w.dx[j]) * (z[j] + ad * w.dz[j])
            } else {
                0.0
            };
            let up = if has_up[j] {
                (w.t[j] - ap * w.dx[j]) * (q[j] + ad * w.dq[j])
            } else {
                0.0
            };
            lo + up
        });
        let sigma = if gap > 0.0 {
            (gap_aff / gap).clamp(0.0, 1.0).powi(3)
        } else {
            0.0
        };
        // Corrector.
        (&mut xl[..], &mut xu[..])
            .into_par_iter()
            .with_min_len(CHUNK)
            .enumerate()
            .for_each(|(j, (l, u))| {
                *l = sigma * mu - w.s[j] * z[j] - w.dx[j] * w.dz[j];
                *u = sigma * mu - w.t[j] * q[j] + w.dx[j] * w.dq[j];
            });
        // Refined only near the end, where the normal equations lose digits.
        w.direction(&ops, &f, &bounds, &xl, &xu, rel_gap < REFINE_BELOW);
        let (ap, ad) = w.steps(&bounds);
        let (ap, ad) = ((TO_BOUNDARY * ap).min(1.0), (TO_BOUNDARY * ad).min(1.0));
        let (dx, dz, dq) = (&w.dx, &w.dz, &w.dq);
        (
            &mut x[..],
            &mut w.s[..],
            &mut w.t[..],
            &mut z[..],
            &mut q[..],
        )
            .into_par_iter()
            .with_min_len(CHUNK)
            .enumerate()
            .for_each(|(j, (x, s, t, z, q))| {
                *x += ap * dx[j];
                if has_lo[j] {
                    *s += ap * dx[j];
                    *z += ad * dz[j];
                }
                if has_up[j] {
                    *t -= ap * dx[j];
                    *q += ad * dq[j];
                }
            });
        for a in 0..na {
            y[a] += ad * w.dy[a];
        }
    }
    if !done {
        return Err((Status::IterationLimit, iterations));
    }
    // Back to the problem's columns and rows, in its sign convention
    // (`col_dual = c - A^T row_dual`). x moved with its distances to the
    // bounds, not from them: within its bounds up to the steps' rounding,
    // which this takes off.
    let xs: Vec<f64> = (0..nc)
        .map(|j| {
            if col_var[j] == usize::MAX {
                fixed_x[j]
            } else {
                let v = col_var[j];
                x[v].max(lower[v]).min(upper[v])
            }
        })
        .collect();
    let row_dual: Vec<f64> = (0..nr)
        .map(|r| {
            if index[r] == usize::MAX {
                0.0
            } else {
                flip * y[index[r]]
            }
        })
        .collect();
    let aty = p.transpose_times(&row_dual);
    let col_dual: Vec<f64> = p.col_cost.iter().zip(aty).map(|(c, a)| c - a).collect();
    let objective = p.col_cost.iter().zip(&xs).map(|(c, x)| c * x).sum::<f64>() + p.offset;
    let sol = Solution {
        status: Status::Optimal,
        raw_status: match stalled {
            None => "Optimal (block interior point)".into(),
            Some(p) => format!(
                "Optimal (block interior point; primal infeasibility {p:.1e} once the dual infeasibility and gap had converged)"
            ),
        },
        objective,
        x: xs,
        row_dual,
        col_dual,
        seconds: t0.elapsed().as_secs_f64(),
        iterations: iterations as u64,
    };
    Ok((sol, keep))
}

/// The products with the LP's matrix over the active rows (A~, column
/// by column) and the solves with the normal equations' factors.
struct Ops<'a> {
    layout: &'a Layout,
    start: &'a [usize],
    row: &'a [usize],
    val: &'a [f64],
    /// The same entries by row: where each row's start (one past the last
    /// at the end), each (variable, value) in variable order.
    row_start: &'a [usize],
    by_row: &'a [(usize, f64)],
}

/// Whether every row's residual `rp` is within [`TOLERANCE`] of the
/// larger of `norm_b` and one plus the sum of its terms' magnitudes at
/// `x` (the rows' entries `by_row`, row r's from `row_start[r]`): a row
/// summing many large terms to a small right-hand side (a user's tasks
/// on every server less its level column's) holds its residual only to
/// the rounding of those terms, and steps past it are spent on rounding.
fn rows_within(
    row_start: &[usize],
    by_row: &[(usize, f64)],
    x: &[f64],
    rp: &[f64],
    norm_b: f64,
    tolerance: f64,
) -> bool {
    rp.par_iter()
        .with_min_len(PRODUCT_CHUNK)
        .enumerate()
        .all(|(r, &res)| {
            let terms = by_row[row_start[r]..row_start[r + 1]]
                .iter()
                .fold(1.0, |s, &(j, v)| s + (v * x[j]).abs());
            res.abs() <= tolerance * norm_b.max(terms)
        })
}

/// Entries of a product one task takes at least (rayon splits the rest).
const PRODUCT_CHUNK: usize = 4096;

impl Ops<'_> {
    /// `out = A~ x`.
    fn times(&self, x: &[f64], out: &mut [f64]) {
        out.par_iter_mut()
            .with_min_len(PRODUCT_CHUNK)
            .enumerate()
            .for_each(|(r, o)| {
                *o = self.by_row[self.row_start[r]..self.row_start[r + 1]]
                    .iter()
                    .fold(0.0, |s, &(j, v)| s + v * x[j]);
            });
    }

    /// [`rows_within`] on this matrix.
    fn rows_within(&self, x: &[f64], rp: &[f64], norm_b: f64, tolerance: f64) -> bool {
        rows_within(self.row_start, self.by_row, x, rp, norm_b, tolerance)
    }

    /// `out = A~^T y`.
    fn transpose_times(&self, y: &[f64], out: &mut [f64]) {
        out.par_iter_mut()
            .with_min_len(PRODUCT_CHUNK)
            .enumerate()
            .for_each(|(j, o)| {
                *o = (self.start[j]..self.start[j + 1])
                    .map(|e| self.val[e] * y[self.row[e]])
                    .sum::<f64>();
            });
    }
}

/// What a step's direction reads: which bounds each variable has, the
/// bound duals, the scaling D and the primal residual.
struct Bounds<'a> {
    has_lo: &'a [bool],
    has_up: &'a [bool],
    z: &'a [f64],
    q: &'a [f64],
    d: &'a [f64],
    rp: &'a [f64],
}

/// One step's vectors: the distances to the bounds, the dual residual, the
/// direction, and scratch for the solves.
struct Step {
    s: Vec<f64>,
    t: Vec<f64>,
    rd: Vec<f64>,
    dx: Vec<f64>,
    dy: Vec<f64>,
    dz: Vec<f64>,
    dq: Vec<f64>,
    rhat: Vec<f64>,
    /// Over the variables.
    scratch_v: Vec<f64>,
    /// Over the rows.
    rhs: Vec<f64>,
    scratch_r: Vec<f64>,
    fix: Vec<f64>,
    /// The back solve's block part and dense part.
    g: Vec<f64>,
    dense: Vec<f64>,
}

impl Step {
    fn new(nv: usize, na: usize, layout: &Layout) -> Step {
        let v = || vec![0.0; nv];
        let r = || vec![0.0; na];
        Step {
            s: v(),
            t: v(),
            rd: v(),
            dx: v(),
            dy: r(),
            dz: v(),
            dq: v(),
            rhat: v(),
            scratch_v: v(),
            rhs: r(),
            scratch_r: r(),
            fix: r(),
            g: vec![0.0; *layout.block_off.last().unwrap_or(&0)],
            dense: vec![0.0; layout.dense + layout.leaves.scratch()],
        }
    }

    /// The direction (dx, dy, dz, dq) for complementarity targets xl, xu
    /// (s z -> xl, t q -> xu); with `refine`, refined on the normal
    /// equations ([`Step::refine`]: near the optimum D spans many decades
    /// and they lose digits).
    fn direction(
        &mut self,
        ops: &Ops,
        f: &Factor,
        b: &Bounds,
        xl: &[f64],
        xu: &[f64],
        refine: bool,
    ) {
        let (rd, s, t) = (&self.rd, &self.s, &self.t);
        (&mut self.rhat[..], &mut self.scratch_v[..])
            .into_par_iter()
            .with_min_len(CHUNK)
            .enumerate()
            .for_each(|(j, (rhat, sv))| {
                let mut v = rd[j];
                if b.has_lo[j] {
                    v -= xl[j] / s[j];
                }
                if b.has_up[j] {
                    v += xu[j] / t[j];
                }
                *rhat = v;
                *sv = b.d[j] * v;
            });
        ops.times(&self.scratch_v, &mut self.scratch_r);
        for (a, r) in self.rhs.iter_mut().enumerate() {
            *r = b.rp[a] + self.scratch_r[a];
        }
        back_solve(
            ops.layout,
            f,
            &self.rhs,
            &mut self.dy,
            &mut self.g,
            &mut self.dense,
        );
        // dx holds A^T dy until the end.
        ops.transpose_times(&self.dy, &mut self.dx);
        if refine {
            self.refine(ops, f, b);
        }
        let (rhat, s, t) = (&self.rhat, &self.s, &self.t);
        (&mut self.dx[..], &mut self.dz[..], &mut self.dq[..])
            .into_par_iter()
            .with_min_len(CHUNK)
            .enumerate()
            .for_each(|(j, (x, z, q))| {
                let dx = b.d[j] * (*x - rhat[j]);
                *x = dx;
                *z = if b.has_lo[j] {
                    (xl[j] - b.z[j] * dx) / s[j]
                } else {
                    0.0
                };
                *q = if b.has_up[j] {
                    (xu[j] + b.q[j] * dx) / t[j]
                } else {
                    0.0
                };
            });
    }

    /// Iterative refinement of dy (and dx, holding A^T dy) on the normal
    /// equations `A D A^T dy = rhs`: up to [`REFINE_ROUNDS`] rounds, until
    /// the residual is within [`REFINED`] of the right-hand side's largest
    /// entry. A round is kept even where the residual grew: taking such
    /// rounds back lengthened a seeded round's LP and cost its proof
    /// (docs/design/maxmin-operator.md, "Weights and caps at 300 x
    /// 3,000").
    fn refine(&mut self, ops: &Ops, f: &Factor, b: &Bounds) {
        let scale = self.rhs.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for _ in 0..REFINE_ROUNDS {
            let dx = &self.dx;
            self.scratch_v
                .par_iter_mut()
                .with_min_len(CHUNK)
                .enumerate()
                .for_each(|(j, v)| *v = b.d[j] * dx[j]);
            ops.times(&self.scratch_v, &mut self.scratch_r);
            for (a, r) in self.scratch_r.iter_mut().enumerate() {
                *r = self.rhs[a] - *r;
            }
            let left = self.scratch_r.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            if left <= REFINED * scale {
                return;
            }
            back_solve(
                ops.layout,
                f,
                &self.scratch_r,
                &mut self.fix,
                &mut self.g,
                &mut self.dense,
            );
            for (v, e) in self.dy.iter_mut().zip(&self.fix) {
                *v += e;
            }
            ops.transpose_times(&self.dy, &mut self.dx);
        }
    }

    /// The longest primal and dual steps (up to 1) along the direction
    /// that keep every bound.
    fn steps(&self, b: &Bounds) -> (f64, f64) {
        let each = chunks::by_chunks(self.s.len(), |r| {
            let (mut ap, mut ad) = (1.0f64, 1.0f64);
            for j in r {
                if b.has_lo[j] {
                    if self.dx[j] < 0.0 {
                        ap = ap.min(-self.s[j] / self.dx[j]);
                    }
                    if self.dz[j] < 0.0 {
                        ad = ad.min(-b.z[j] / self.dz[j]);
                    }
                }
                if b.has_up[j] {
                    if self.dx[j] > 0.0 {
                        ap = ap.min(self.t[j] / self.dx[j]);
                    }
                    if self.dq[j] < 0.0 {
                        ad = ad.min(-b.q[j] / self.dq[j]);
                    }
                }
            }
            (ap, ad)
        });
        each.into_iter()
            .fold((1.0, 1.0), |(ap, ad), (p, d)| (ap.min(p), ad.min(d)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_within_scales_by_each_rows_terms() {
        // Row 0: 1e6 - 1e6 = 0 (terms 2e6); row 1: 0.5 + 0.5 = 1.
        let row_start = [0, 2, 4];
        let by_row = [(0, 1.0), (1, -1.0), (2, 1.0), (3, 1.0)];
        let x = [1e6, 1e6, 0.5, 0.5];
        let within =
            |rp: &[f64], tolerance: f64| rows_within(&row_start, &by_row, &x, rp, 2.0, tolerance);
        // Within 1e-12 of row 0's terms (2e-6), and of norm_b in row 1.
        assert!(within(&[1e-7, 1e-12], TOLERANCE));
        // Past row 0's terms.
        assert!(!within(&[3e-6, 0.0], TOLERANCE));
        // Row 1's terms (2) are no larger than norm_b: its residual is
        // held to norm_b.
        assert!(!within(&[0.0, 1e-11], TOLERANCE));
        // The same residual within a looser tolerance (PRIMAL_STALLED's).
        assert!(within(&[0.0, 1e-11], PRIMAL_STALLED));
    }
}
