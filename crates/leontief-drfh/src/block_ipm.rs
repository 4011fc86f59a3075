//! An interior point method for the max-min operator's LPs that uses their
//! structure: every pair's column touches the capacity rows of one entry
//! and one user's link row.
//!
//! Primal-dual, Mehrotra predictor-corrector, on the LP with a slack per
//! inequality row and every bound kept (a fixed column is a constant, a
//! free row is dropped). Each step solves the normal equations
//! `A D A^T dy = r`. Their rows split into *blocks* (one entry's capacity
//! rows, m of them) and *dense* rows (links, levels): no column touches two
//! blocks, so the block part is block diagonal. Each block's m x m matrix
//! is factored on its own and eliminated onto the dense rows it touches
//! (the users on its entry), which leaves one dense Schur complement over
//! the dense rows (2 N for N users), factored by Cholesky. At 100 users on
//! 1,000 entries with 4 resources that is a few million flops a step,
//! where Clarabel's general sparse LDL of the same LP (with iterative
//! refinement) took 5-7 ms a step (benches/REPORT.md, nineteenth session).
//!
//! Those flops were not the cost: a step took 4.5-8 ms there, in cache
//! misses (each variable's entries in heap vectors of their own), in the
//! m-fold scatter of every block's W^T W into the Schur complement, and in
//! page faults of buffers allocated afresh each step. The block variables'
//! entries now sit in flat arrays in block order ([`BlockVars`]), each
//! block's Schur term is summed in a small contiguous matrix and scattered
//! once, and the factors and step vectors ([`Factor`], [`Step`]) live from
//! step to step: 3-3.6 ms a step, the set-up 3-5 ms a solve instead of
//! 8-12 (twenty-second session; 100 x 1,000 with 4 resources, seed 2, end
//! to end 0.41-0.51 s -> 0.23-0.31 s). Tried there and not kept, with
//! numbers in benches/REPORT.md: a warm start of the solves after pricing
//! from an iterate of the solve before (more steps, not fewer), Mehrotra's
//! starting point (more steps), the step's vector work in parallel (no
//! gain measurable).
//!
//! Its answers are trusted no more than Clarabel's: they are interior, not
//! vertices ([`LpBackend::vertex_duals`] is false), and every verdict drawn
//! from them is proved by the prices it prints. A solve that does not reach
//! [`TOLERANCE`] is handed to Clarabel ([`crate::direct`]) as it stands.

use leontief_clarabel::ClarabelLp;
use leontief_model::{
    BackendError, Col, LoadedLp, LpBackend, NewCol, Problem, Row, Sense, Solution, Status,
};
use std::time::Instant;

/// A row outside every block (a dense row).
pub(crate) const DENSE: u32 = u32::MAX;

/// Relative primal and dual infeasibility and duality gap at which a
/// solve ends optimal.
const TOLERANCE: f64 = 1e-11;

/// Steps before a solve gives up (and Clarabel solves the LP).
const MAX_ITERATIONS: usize = 80;

/// Relative gap below which the corrector's normal equations get a step
/// of iterative refinement (earlier steps are far from the boundary and
/// lose no digits that matter).
const REFINE_BELOW: f64 = 1e-6;

/// Parts the blocks are split into for the parallel factorisation.
const PARTS: usize = 4;

/// Fraction of the way to the boundary a step goes.
const TO_BOUNDARY: f64 = 0.995;

/// Regularisation added to every diagonal of the normal equations,
/// relative to its largest diagonal entry.
const REGULARISATION: f64 = 1e-14;

/// Whether this method beats Clarabel on the pooled LP of `users` runnable
/// users and `m` resources: its dense Schur complement has two rows per
/// user (a dense Cholesky, (2 N)^3 / 3 a step), Clarabel's sparse LDL
/// gains where few users share an entry (few resources). Measured
/// (nineteenth session, end to end, heterogeneous, seed 1), this method
/// against Clarabel: 100 x 1,000: 2 resources 0.036 s against 0.045 s,
/// 4 resources 0.09 s against 0.15 s; 150 x 1,500: 2 resources 0.070
/// against 0.075 s, 3 resources 0.17 against 0.13 s, 4 resources 0.41
/// against 0.60 s; 200 x 2,000: 2 resources 0.20 against 0.11 s,
/// 4 resources 0.30 against 0.43 s; 300 x 3,000 with 4 resources slower
/// (1.2 against 0.9 s, before the vectorised Cholesky).
///
/// Twenty-second session, after the flat per-block layout (fastest of 3
/// runs, this method against Clarabel): 150 x 1,500: 0.070 against 0.126 s
/// (2 resources), 0.137 against 0.184 s (3); 200 x 2,000: 0.125 against
/// 0.170 s (2), 0.166 against 0.336 s (3); 250 x 1,000: 0.114 against
/// 0.132 s (2), 0.199 against 0.199 s (3), 0.190 against 0.315 s (4). With
/// fewer entries per user Clarabel keeps its lead: 200 x 400 with 2
/// resources 0.073 against 0.062 s, 250 x 600 with 3 0.188 against
/// 0.162 s, 300 x 800 0.195 against 0.088 s (2) and 0.377 against 0.176 s
/// (4), 400 x 1,000 with 2 0.405 against 0.130 s. So up to 250 users
/// when there are at least 4 entries per user.
pub(crate) fn pays(users: usize, entries: usize, m: usize) -> bool {
    users <= 100 || (m >= 4 && users <= 200) || (users <= 250 && entries >= 4 * users)
}

/// The block IPM as a backend: `blocks[r]` is row r's block (or
/// [`DENSE`]); `None`: every solve is Clarabel's.
pub(crate) struct BlockIpm {
    blocks: Option<Vec<u32>>,
    time_limit: Option<f64>,
}

impl BlockIpm {
    /// A backend for LPs whose rows split as `blocks` says, each solve
    /// within `time_limit` seconds.
    pub(crate) fn new(blocks: Option<Vec<u32>>, time_limit: Option<f64>) -> BlockIpm {
        BlockIpm { blocks, time_limit }
    }
}

impl LpBackend for BlockIpm {
    type Loaded = BlockLp;

    fn name(&self) -> &'static str {
        "block-ipm"
    }

    fn load(&self, problem: Problem) -> Result<BlockLp, BackendError> {
        Ok(BlockLp {
            clarabel: crate::direct::Direct::new(self.time_limit)?.load(problem)?,
            blocks: self.blocks.clone(),
            time_limit: self.time_limit,
        })
    }

    fn can_add_cols(&self) -> bool {
        true
    }

    fn time_limit(&self) -> Option<f64> {
        self.time_limit
    }
}

/// A loaded LP: each solve starts over from the problem as it stands,
/// which Clarabel holds (and solves where this method does not).
pub(crate) struct BlockLp {
    clarabel: ClarabelLp,
    blocks: Option<Vec<u32>>,
    time_limit: Option<f64>,
}

impl LoadedLp for BlockLp {
    fn solve(&mut self) -> Result<Solution, BackendError> {
        let t0 = Instant::now();
        let tried = self
            .blocks
            .as_ref()
            .map(|b| solve(self.clarabel.problem(), b, self.time_limit));
        let why = match tried {
            Some(Ok(sol)) => return Ok(sol),
            // Out of time: no solution (Clarabel would take as long again).
            Some(Err((Status::TimeLimit, steps))) => {
                return Ok(Solution {
                    status: Status::TimeLimit,
                    raw_status: format!(
                        "the block interior point method reached the time limit in {steps} steps"
                    ),
                    objective: f64::NAN,
                    x: Vec::new(),
                    row_dual: Vec::new(),
                    col_dual: Vec::new(),
                    seconds: t0.elapsed().as_secs_f64(),
                    iterations: steps as u64,
                })
            }
            Some(Err((status, steps))) => Some(format!(
                " (Clarabel, after the block interior point method ended {} in {steps} steps)",
                status.as_str()
            )),
            None => None,
        };
        // Not converged (or a column across two blocks): Clarabel solves
        // the LP as it stands.
        let mut sol = self.clarabel.solve()?;
        if let Some(why) = why {
            sol.raw_status.push_str(&why);
            sol.seconds = t0.elapsed().as_secs_f64();
        }
        Ok(sol)
    }

    fn problem(&self) -> &Problem {
        self.clarabel.problem()
    }

    fn set_col_bounds(&mut self, col: Col, lower: f64, upper: f64) -> Result<(), BackendError> {
        self.clarabel.set_col_bounds(col, lower, upper)
    }

    fn set_row_bounds(&mut self, row: Row, lower: f64, upper: f64) -> Result<(), BackendError> {
        self.clarabel.set_row_bounds(row, lower, upper)
    }

    fn set_cost(&mut self, col: Col, cost: f64) -> Result<(), BackendError> {
        self.clarabel.set_cost(col, cost)
    }

    fn set_coefficient(&mut self, row: Row, col: Col, value: f64) -> Result<(), BackendError> {
        self.clarabel.set_coefficient(row, col, value)
    }

    fn add_cols(&mut self, cols: &[NewCol]) -> Result<Vec<Col>, BackendError> {
        self.clarabel.add_cols(cols)
    }
}

/// One variable of the IPM: a column that is not fixed, or a row's slack.
struct Var {
    lower: f64,
    upper: f64,
    /// Cost in the minimisation form.
    cost: f64,
    /// Its block ([`DENSE`]: none); its entries are in the flat arrays.
    block: u32,
}

/// The variables of every block, block after block, with their entries
/// in flat arrays: the factorisation reads them in order (one heap
/// vector per variable cost a cache miss each, most of a step).
struct BlockVars {
    /// Per block, where its variables start (one past the last block at
    /// the end).
    start: Vec<usize>,
    /// Per block variable: its index among the variables, and where its
    /// entries start in `in_block` and `dense`.
    var: Vec<usize>,
    in_start: Vec<usize>,
    dense_start: Vec<usize>,
    /// (block-local row, value).
    in_block: Vec<(usize, f64)>,
    /// (position among the block's dense rows, value).
    dense: Vec<(usize, f64)>,
}

/// The normal equations' structure: per block its rows' count and the
/// dense rows its variables touch.
struct Layout {
    /// Per active row: (block, local index) or (DENSE, dense index).
    place: Vec<(u32, usize)>,
    block_rows: Vec<usize>,
    /// Where each block's rows start in a vector over the block rows.
    block_off: Vec<usize>,
    block_dense: Vec<Vec<usize>>,
    dense: usize,
    /// The variables of each block.
    by_block: BlockVars,
    /// The variables of no block: where each one's entries start in
    /// `dense_entries` (one past the last at the end), each entry
    /// (variable, dense row, value).
    dense_only: Vec<usize>,
    dense_entries: Vec<(usize, usize, f64)>,
}

/// The factored normal equations of one step, in buffers kept from step
/// to step (allocating them afresh each step cost a tenth of the step:
/// page faults on the Schur complements).
struct Factor {
    /// The blocks split into [`PARTS`] ranges, each factored by one task.
    parts: Vec<Part>,
    /// Per block: its part, and where its factor and W start in the
    /// part's buffers.
    at: Vec<(usize, usize, usize)>,
    /// The Schur complement's Cholesky factor (dense x dense, row-major).
    schur: Vec<f64>,
}

/// One part's blocks: their Cholesky factors (m x m, row-major lower) and
/// W = L^-1 C (m x |dense rows of the block|, row-major), one after
/// another; the part's sum of the blocks' Schur terms; scratch for one
/// block's Gram matrix W^T W.
struct Part {
    blocks: std::ops::Range<usize>,
    chol: Vec<f64>,
    w: Vec<f64>,
    schur: Vec<f64>,
    gram: Vec<f64>,
}

impl Factor {
    /// Buffers for `layout`'s normal equations.
    fn new(layout: &Layout) -> Factor {
        let nb = layout.block_rows.len();
        let nd = layout.dense;
        let per = nb.div_ceil(PARTS).max(1);
        let mut at = Vec::with_capacity(nb);
        let mut parts = Vec::new();
        for (p, first) in (0..nb).step_by(per).enumerate() {
            let blocks = first..(first + per).min(nb);
            let (mut nc, mut nw, mut tmax) = (0, 0, 0);
            for blk in blocks.clone() {
                let (m, t) = (layout.block_rows[blk], layout.block_dense[blk].len());
                at.push((p, nc, nw));
                nc += m * m;
                nw += m * t;
                tmax = tmax.max(t);
            }
            parts.push(Part {
                blocks,
                chol: vec![0.0; nc],
                w: vec![0.0; nw],
                schur: vec![0.0; nd * nd],
                gram: vec![0.0; tmax * tmax],
            });
        }
        Factor {
            parts,
            at,
            schur: vec![0.0; nd * nd],
        }
    }

    /// Block `blk`'s Cholesky factor and W.
    fn block(&self, blk: usize, m: usize, t: usize) -> (&[f64], &[f64]) {
        let (p, c, w) = self.at[blk];
        let part = &self.parts[p];
        (&part.chol[c..c + m * m], &part.w[w..w + m * t])
    }
}

/// Solve `p`; `Err((status, steps))` when the method did not converge
/// (`TimeLimit` when a step starts after `time_limit` seconds).
fn solve(
    p: &Problem,
    blocks: &[u32],
    time_limit: Option<f64>,
) -> Result<Solution, (Status, usize)> {
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
    let nb = block_rows.len();
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
    for (a, &r) in rows.iter().enumerate() {
        let (lo, up) = (p.row_lower[r], p.row_upper[r]);
        if lo == up {
            b[a] += lo;
            continue;
        }
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
    // Each block's variables and dense rows (each once), and each
    // variable's positions among its block's dense rows.
    let mut count = vec![0usize; nb + 1];
    for v in vars.iter().filter(|v| v.block != DENSE) {
        count[v.block as usize + 1] += 1;
    }
    for blk in 0..nb {
        count[blk + 1] += count[blk];
    }
    let mut order = vec![0usize; count[nb]];
    let mut next = count.clone();
    for (j, v) in vars.iter().enumerate().filter(|(_, v)| v.block != DENSE) {
        order[next[v.block as usize]] = j;
        next[v.block as usize] += 1;
    }
    let mut block_dense: Vec<Vec<usize>> = vec![Vec::new(); nb];
    let mut pos = vec![usize::MAX; dense];
    let mut flat = BlockVars {
        start: vec![0],
        var: Vec::new(),
        in_start: vec![0],
        dense_start: vec![0],
        in_block: Vec::new(),
        dense: Vec::new(),
    };
    for blk in 0..nb {
        let list = &mut block_dense[blk];
        for &j in &order[count[blk]..count[blk + 1]] {
            for e in ent_start[j]..ent_start[j + 1] {
                let (b, local) = place[ent_row[e]];
                if b == DENSE {
                    if pos[local] == usize::MAX {
                        pos[local] = list.len();
                        list.push(local);
                    }
                    flat.dense.push((pos[local], ent_val[e]));
                } else {
                    flat.in_block.push((local, ent_val[e]));
                }
            }
            flat.var.push(j);
            flat.in_start.push(flat.in_block.len());
            flat.dense_start.push(flat.dense.len());
        }
        flat.start.push(flat.var.len());
        for &d in list.iter() {
            pos[d] = usize::MAX;
        }
    }
    let by_block = flat;
    // The variables of no block: (dense row, value) of their entries.
    let mut dense_only = vec![0usize];
    let mut dense_entries = Vec::new();
    for j in (0..vars.len()).filter(|&j| vars[j].block == DENSE) {
        for e in ent_start[j]..ent_start[j + 1] {
            dense_entries.push((j, place[ent_row[e]].1, ent_val[e]));
        }
        dense_only.push(dense_entries.len());
    }
    let mut block_off = vec![0; nb + 1];
    for blk in 0..nb {
        block_off[blk + 1] = block_off[blk] + block_rows[blk];
    }
    let layout = Layout {
        place,
        block_rows,
        block_off,
        block_dense,
        dense,
        by_block,
        dense_only,
        dense_entries,
    };
    let nv = vars.len();
    let ops = Ops {
        layout: &layout,
        start: &ent_start,
        row: &ent_row,
        val: &ent_val,
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
    // Every vector of a step, kept from step to step (allocated afresh,
    // their page faults were a tenth of a step).
    let mut f = Factor::new(&layout);
    let mut w = Step::new(nv, na, &layout);
    let mut xl = vec![0.0; nv];
    let mut xu = vec![0.0; nv];
    let mut d = vec![0.0; nv];
    let (mut ax, mut rp, mut aty) = (vec![0.0; na], vec![0.0; na], vec![0.0; nv]);
    while iterations < MAX_ITERATIONS {
        for j in 0..nv {
            w.s[j] = if has_lo[j] { x[j] - lower[j] } else { 1.0 };
            w.t[j] = if has_up[j] { upper[j] - x[j] } else { 1.0 };
        }
        ops.times(&x, &mut ax);
        for a in 0..na {
            rp[a] = b[a] - ax[a];
        }
        ops.transpose_times(&y, &mut aty);
        for j in 0..nv {
            w.rd[j] = cost[j] - aty[j] - z[j] + q[j];
        }
        let (mut gap, mut pobj) = (0.0, 0.0);
        for j in 0..nv {
            if has_lo[j] {
                gap += w.s[j] * z[j];
            }
            if has_up[j] {
                gap += w.t[j] * q[j];
            }
            pobj += cost[j] * x[j];
        }
        let inf_p = rp.iter().fold(0.0f64, |a, v| a.max(v.abs())) / norm_b;
        let inf_d = w.rd.iter().fold(0.0f64, |a, v| a.max(v.abs())) / norm_c;
        let rel_gap = gap / (1.0 + f64::abs(pobj));
        if !(inf_p.is_finite() && inf_d.is_finite() && rel_gap.is_finite()) {
            return Err((Status::NumericalFailure, iterations));
        }
        if inf_p <= TOLERANCE && inf_d <= TOLERANCE && rel_gap <= TOLERANCE {
            done = true;
            break;
        }
        if time_limit.is_some_and(|t| t0.elapsed().as_secs_f64() > t) {
            return Err((Status::TimeLimit, iterations));
        }
        iterations += 1;
        let mu = if pairs > 0 { gap / pairs as f64 } else { 0.0 };
        // D = 1 / (z/s + q/t), regularised.
        let mut dmax = 1.0f64;
        for j in 0..nv {
            let mut v = 0.0;
            if has_lo[j] {
                v += z[j] / w.s[j];
            }
            if has_up[j] {
                v += q[j] / w.t[j];
            }
            d[j] = v;
            dmax = dmax.max(v);
        }
        for v in d.iter_mut() {
            *v = 1.0 / (*v + 1e-30 * dmax);
        }
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
        for j in 0..nv {
            xl[j] = -w.s[j] * z[j];
            xu[j] = -w.t[j] * q[j];
        }
        w.direction(&ops, &f, &bounds, &xl, &xu, false);
        let (ap, ad) = w.steps(&bounds);
        let mut gap_aff = 0.0;
        for j in 0..nv {
            if has_lo[j] {
                gap_aff += (w.s[j] + ap * w.dx[j]) * (z[j] + ad * w.dz[j]);
            }
            if has_up[j] {
                gap_aff += (w.t[j] - ap * w.dx[j]) * (q[j] + ad * w.dq[j]);
            }
        }
        let sigma = if gap > 0.0 {
            (gap_aff / gap).clamp(0.0, 1.0).powi(3)
        } else {
            0.0
        };
        // Corrector.
        for j in 0..nv {
            xl[j] = sigma * mu - w.s[j] * z[j] - w.dx[j] * w.dz[j];
            xu[j] = sigma * mu - w.t[j] * q[j] + w.dx[j] * w.dq[j];
        }
        // Refined only near the end, where the normal equations lose digits.
        w.direction(&ops, &f, &bounds, &xl, &xu, rel_gap < REFINE_BELOW);
        let (ap, ad) = w.steps(&bounds);
        let (ap, ad) = ((TO_BOUNDARY * ap).min(1.0), (TO_BOUNDARY * ad).min(1.0));
        for j in 0..nv {
            x[j] += ap * w.dx[j];
            if has_lo[j] {
                z[j] += ad * w.dz[j];
            }
            if has_up[j] {
                q[j] += ad * w.dq[j];
            }
        }
        for a in 0..na {
            y[a] += ad * w.dy[a];
        }
    }
    if !done {
        return Err((Status::IterationLimit, iterations));
    }
    // Back to the problem's columns and rows, in its sign convention
    // (`col_dual = c - A^T row_dual`).
    let xs: Vec<f64> = (0..nc)
        .map(|j| {
            if col_var[j] == usize::MAX {
                fixed_x[j]
            } else {
                x[col_var[j]]
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
    Ok(Solution {
        status: Status::Optimal,
        raw_status: "Optimal (block interior point)".into(),
        objective,
        x: xs,
        row_dual,
        col_dual,
        seconds: t0.elapsed().as_secs_f64(),
        iterations: iterations as u64,
    })
}

/// The products with the LP's matrix over the active rows (A~, column
/// by column) and the solves with the normal equations' factors.
struct Ops<'a> {
    layout: &'a Layout,
    start: &'a [usize],
    row: &'a [usize],
    val: &'a [f64],
}

impl Ops<'_> {
    /// `out = A~ x`.
    fn times(&self, x: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        for (j, &xv) in x.iter().enumerate() {
            if xv != 0.0 {
                for e in self.start[j]..self.start[j + 1] {
                    out[self.row[e]] += self.val[e] * xv;
                }
            }
        }
    }

    /// `out = A~^T y`.
    fn transpose_times(&self, y: &[f64], out: &mut [f64]) {
        for (j, o) in out.iter_mut().enumerate() {
            *o = (self.start[j]..self.start[j + 1])
                .map(|e| self.val[e] * y[self.row[e]])
                .sum::<f64>();
        }
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
            dense: vec![0.0; layout.dense],
        }
    }

    /// The direction (dx, dy, dz, dq) for complementarity targets xl, xu
    /// (s z -> xl, t q -> xu); with `refine`, one step of iterative
    /// refinement on the normal equations (near the optimum D spans many
    /// decades and they lose digits).
    fn direction(
        &mut self,
        ops: &Ops,
        f: &Factor,
        b: &Bounds,
        xl: &[f64],
        xu: &[f64],
        refine: bool,
    ) {
        let nv = self.s.len();
        for j in 0..nv {
            let mut v = self.rd[j];
            if b.has_lo[j] {
                v -= xl[j] / self.s[j];
            }
            if b.has_up[j] {
                v += xu[j] / self.t[j];
            }
            self.rhat[j] = v;
            self.scratch_v[j] = b.d[j] * v;
        }
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
            for j in 0..nv {
                self.scratch_v[j] = b.d[j] * self.dx[j];
            }
            ops.times(&self.scratch_v, &mut self.scratch_r);
            for (a, r) in self.scratch_r.iter_mut().enumerate() {
                *r = self.rhs[a] - *r;
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
        for j in 0..nv {
            let dx = b.d[j] * (self.dx[j] - self.rhat[j]);
            self.dx[j] = dx;
            self.dz[j] = if b.has_lo[j] {
                (xl[j] - b.z[j] * dx) / self.s[j]
            } else {
                0.0
            };
            self.dq[j] = if b.has_up[j] {
                (xu[j] + b.q[j] * dx) / self.t[j]
            } else {
                0.0
            };
        }
    }

    /// The longest primal and dual steps (up to 1) along the direction
    /// that keep every bound.
    fn steps(&self, b: &Bounds) -> (f64, f64) {
        let (mut ap, mut ad) = (1.0f64, 1.0f64);
        for j in 0..self.s.len() {
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
    }
}

/// Cholesky of the row-major symmetric `a` (n x n) in place (lower
/// triangle). A pivot below `1e-30` times the largest diagonal is set
/// huge, which zeroes that direction (the usual guard of normal-equation
/// IPMs near a degenerate optimum). False when `a` is not finite.
fn cholesky(a: &mut [f64], n: usize) -> bool {
    // Right-looking on the upper triangle (row j of U scales, then updates
    // the rows below it by contiguous axpys), then mirrored into the lower
    // triangle: the same flops as the dot-product form, vectorised.
    let big = (0..n)
        .fold(0.0f64, |m, i| m.max(a[i * n + i].abs()))
        .max(1e-300);
    for j in 0..n {
        let d = a[j * n + j];
        if !d.is_finite() {
            return false;
        }
        let d = if d <= 1e-30 * big { 1e64 } else { d.sqrt() };
        a[j * n + j] = d;
        let inv = 1.0 / d;
        for v in &mut a[j * n + j + 1..(j + 1) * n] {
            *v *= inv;
        }
        let (head, tail) = a.split_at_mut((j + 1) * n);
        let uj = &head[j * n..(j + 1) * n];
        for i in j + 1..n {
            let uji = uj[i];
            if uji != 0.0 {
                let row = &mut tail[(i - j - 1) * n + i..(i - j) * n];
                for (x, &u) in row.iter_mut().zip(&uj[i..]) {
                    *x -= uji * u;
                }
            }
        }
    }
    for i in 0..n {
        for k in 0..i {
            a[i * n + k] = a[k * n + i];
        }
    }
    true
}

/// Solve L u = v in place (row-major lower L, n x n).
fn forward(l: &[f64], n: usize, v: &mut [f64]) {
    for i in 0..n {
        let mut s = v[i];
        for k in 0..i {
            s -= l[i * n + k] * v[k];
        }
        v[i] = s / l[i * n + i];
    }
}

/// Solve L^T u = v in place.
fn backward(l: &[f64], n: usize, v: &mut [f64]) {
    for i in (0..n).rev() {
        let mut s = v[i];
        for k in i + 1..n {
            s -= l[k * n + i] * v[k];
        }
        v[i] = s / l[i * n + i];
    }
}

/// Form and factor the normal equations `A D A^T` into `f` (see the
/// module docs): the parts in parallel, each block eliminated onto its
/// part's Schur sum, the parts summed in order at the end. False when a
/// factor is not finite.
fn factor(layout: &Layout, d: &[f64], f: &mut Factor) -> bool {
    use rayon::prelude::*;
    let nd = layout.dense;
    // Regularise every diagonal.
    let reg = |m: &mut [f64], n: usize| {
        let big = (0..n).fold(0.0f64, |a, i| a.max(m[i * n + i])).max(1e-300);
        for i in 0..n {
            m[i * n + i] += REGULARISATION * big;
        }
    };
    let at = &f.at;
    // A fixed split of the blocks, each part summed into its own Schur
    // complement, the parts added in order: the same sums on any number
    // of threads (a run must not depend on the scheduler).
    let ok = f.parts.par_iter_mut().all(|part| {
        part.schur.fill(0.0);
        for blk in part.blocks.clone() {
            let m = layout.block_rows[blk];
            let list = &layout.block_dense[blk];
            let t = list.len();
            let (_, c0, w0) = at[blk];
            let mb = &mut part.chol[c0..c0 + m * m];
            let wb = &mut part.w[w0..w0 + m * t];
            mb.fill(0.0);
            wb.fill(0.0);
            let bv = &layout.by_block;
            let g = &mut part.gram[..t * t];
            g.fill(0.0);
            for k in bv.start[blk]..bv.start[blk + 1] {
                let dj = d[bv.var[k]];
                let ins = &bv.in_block[bv.in_start[k]..bv.in_start[k + 1]];
                let dns = &bv.dense[bv.dense_start[k]..bv.dense_start[k + 1]];
                for &(a, va) in ins {
                    let dva = dj * va;
                    for &(c, vc) in ins {
                        mb[a * m + c] += dva * vc;
                    }
                    for &(pos, vc) in dns {
                        wb[a * t + pos] += dva * vc;
                    }
                }
                for &(p1, v1) in dns {
                    for &(p2, v2) in dns {
                        if p2 <= p1 {
                            g[p1 * t + p2] -= dj * v1 * v2;
                        }
                    }
                }
            }
            reg(mb, m);
            if !cholesky(mb, m) {
                return false;
            }
            // W = L^-1 C: forward substitution on all of C's columns at once.
            for a in 0..m {
                let (done, rest) = wb.split_at_mut(a * t);
                let row = &mut rest[..t];
                for k in 0..a {
                    let l = mb[a * m + k];
                    if l != 0.0 {
                        for (x, &y) in row.iter_mut().zip(&done[k * t..(k + 1) * t]) {
                            *x -= l * y;
                        }
                    }
                }
                let inv = 1.0 / mb[a * m + a];
                for x in row.iter_mut() {
                    *x *= inv;
                }
            }
            // The block's W^T W - C D C^T (lower triangle, contiguous),
            // then S -= it on the block's dense rows, once per pair.
            for a in 0..m {
                let row = &wb[a * t..(a + 1) * t];
                for (c1, &v1) in row.iter().enumerate() {
                    if v1 != 0.0 {
                        for (x, &v2) in g[c1 * t..c1 * t + c1 + 1].iter_mut().zip(row) {
                            *x += v1 * v2;
                        }
                    }
                }
            }
            for (c1, &d1) in list.iter().enumerate() {
                let srow = &mut part.schur[d1 * nd..(d1 + 1) * nd];
                for (&x, &d2) in g[c1 * t..c1 * t + c1 + 1].iter().zip(list) {
                    srow[d2] -= x;
                }
            }
            for (c1, &d1) in list.iter().enumerate() {
                for (c2, &d2) in list.iter().enumerate().take(c1) {
                    part.schur[d2 * nd + d1] -= g[c1 * t + c2];
                }
            }
        }
        true
    });
    if !ok {
        return false;
    }
    let schur = &mut f.schur;
    schur.fill(0.0);
    for part in &f.parts {
        for (x, y) in schur.iter_mut().zip(&part.schur) {
            *x += y;
        }
    }
    for w in layout.dense_only.windows(2) {
        let ents = &layout.dense_entries[w[0]..w[1]];
        for &(j, a, va) in ents {
            for &(_, c, vc) in ents {
                schur[a * nd + c] += d[j] * va * vc;
            }
        }
    }
    reg(schur, nd);
    cholesky(schur, nd)
}

/// Solve `A D A^T dy = rhs` with the factors of [`factor`] into `out`;
/// `g` and `rd` are scratch over the block rows and the dense rows.
fn back_solve(
    layout: &Layout,
    f: &Factor,
    rhs: &[f64],
    out: &mut [f64],
    g: &mut [f64],
    rd: &mut [f64],
) {
    let nb = layout.block_rows.len();
    let nd = layout.dense;
    let off = &layout.block_off;
    for (a, &(blk, local)) in layout.place.iter().enumerate() {
        if blk == DENSE {
            rd[local] = rhs[a];
        } else {
            g[off[blk as usize] + local] = rhs[a];
        }
    }
    for blk in 0..nb {
        let m = layout.block_rows[blk];
        let gb = &mut g[off[blk]..off[blk] + m];
        let list = &layout.block_dense[blk];
        let t = list.len();
        let (chol, w) = f.block(blk, m, t);
        forward(chol, m, gb);
        for (a, &ga) in gb.iter().enumerate() {
            for (&wv, &dr) in w[a * t..(a + 1) * t].iter().zip(list) {
                rd[dr] -= wv * ga;
            }
        }
    }
    forward(&f.schur, nd, rd);
    backward(&f.schur, nd, rd);
    for blk in 0..nb {
        let m = layout.block_rows[blk];
        let list = &layout.block_dense[blk];
        let t = list.len();
        let (chol, w) = f.block(blk, m, t);
        let gb = &mut g[off[blk]..off[blk] + m];
        for (a, ga) in gb.iter_mut().enumerate() {
            let s: f64 = w[a * t..(a + 1) * t]
                .iter()
                .zip(list)
                .map(|(&wv, &dr)| wv * rd[dr])
                .sum();
            *ga -= s;
        }
        backward(chol, m, gb);
    }
    for (o, &(blk, local)) in out.iter_mut().zip(&layout.place) {
        *o = if blk == DENSE {
            rd[local]
        } else {
            g[off[blk as usize] + local]
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The optimum and its duals on a small LP with every row dense, grown
    /// by a column, and a bound change taking effect: each solve by this
    /// method, not Clarabel's.
    #[test]
    fn solves_a_small_lp_and_its_duals() {
        let ipm = BlockIpm::new(Some(vec![DENSE, DENSE]), None);
        let sols = crate::direct::tests::added_columns_and_bounds_reach(&ipm);
        for s in sols {
            assert!(s.raw_status.contains("block interior point"), "{s:?}");
        }
    }

    /// The operator's own LP (blocks: each entry's capacity rows) on
    /// generated instances: the same optimum as Clarabel's, a solution
    /// inside every row and bound, and prices that price it (weak duality).
    ///
    /// Also with weights, task caps and zero demands; it must converge on
    /// nearly every instance (Clarabel answers the others).
    #[test]
    fn matches_clarabel_on_the_operators_lp() {
        let mut converged = 0;
        let mut cases = Vec::new();
        for seed in 1..=8u64 {
            for (n, k, m) in [(20, 60, 2), (30, 100, 3), (25, 80, 4)] {
                cases.push((n, k, m, seed));
            }
        }
        let total = cases.len();
        for (n, k, m, seed) in cases {
            let mut raw = leontief_core::generate::heterogeneous(n, k, m, seed).to_raw();
            if seed % 2 == 0 {
                for (j, u) in raw.users.iter_mut().enumerate() {
                    u.weight = Some(1.0 + (j % 5) as f64);
                    if j % 4 == 1 {
                        u.demand[0] = 0.0;
                    }
                    if j % 7 == 2 {
                        u.tasks = Some(0.5 + j as f64 / 10.0);
                    }
                }
            }
            let inst = leontief_core::Instance::new(raw).unwrap();
            let sigma = crate::dominant_sigma(&inst);
            let mm = crate::maxmin::build(&inst, &sigma, false, None);
            let blocks = crate::maxmin::row_blocks(&mm, m, mm.problem.num_rows());
            let mut ours = BlockIpm::new(Some(blocks), None)
                .load(mm.problem.clone())
                .unwrap();
            let mut theirs = crate::direct::Direct::new(None)
                .unwrap()
                .load(mm.problem.clone())
                .unwrap();
            let (a, c) = (ours.solve().unwrap(), theirs.solve().unwrap());
            let what = format!("{n} x {k}, {m} resources, seed {seed}");
            assert_eq!(a.status, Status::Optimal, "{what}");
            converged += usize::from(a.raw_status.contains("block interior point"));
            assert!(
                (a.objective - c.objective).abs() <= 1e-9 * c.objective.abs(),
                "{what}: {} against {}",
                a.objective,
                c.objective
            );
            let p = &mm.problem;
            let mut ax = vec![0.0; p.num_rows()];
            for j in 0..p.num_cols() {
                for e in p.a_start[j]..p.a_start[j + 1] {
                    ax[p.a_index[e]] += p.a_value[e] * a.x[j];
                }
            }
            for r in 0..p.num_rows() {
                assert!(
                    ax[r] <= p.row_upper[r] + 1e-9 && ax[r] >= p.row_lower[r] - 1e-9,
                    "{what}: row {r}"
                );
            }
            for (j, &v) in a.x.iter().enumerate() {
                assert!(
                    v >= p.col_lower[j] - 1e-9 && v <= p.col_upper[j] + 1e-9,
                    "{what}: col {j}"
                );
            }
        }
        assert!(converged + 2 >= total, "{converged} of {total} converged");
    }
}
