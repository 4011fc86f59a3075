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
pub(crate) fn pays(users: usize, m: usize) -> bool {
    users <= 100 || (m >= 4 && users <= 200)
}

/// The block IPM as a backend: `blocks[r]` is row r's block (or
/// [`DENSE`]); `None`: every solve is Clarabel's.
pub(crate) struct BlockIpm {
    blocks: Option<Vec<u32>>,
}

impl BlockIpm {
    /// A backend for LPs whose rows split as `blocks` says.
    pub(crate) fn new(blocks: Option<Vec<u32>>) -> BlockIpm {
        BlockIpm { blocks }
    }
}

impl LpBackend for BlockIpm {
    type Loaded = BlockLp;

    fn name(&self) -> &'static str {
        "block-ipm"
    }

    fn load(&self, problem: Problem) -> Result<BlockLp, BackendError> {
        Ok(BlockLp {
            clarabel: crate::direct::Direct::new()?.load(problem)?,
            blocks: self.blocks.clone(),
        })
    }

    fn can_add_cols(&self) -> bool {
        true
    }
}

/// A loaded LP: each solve starts over from the problem as it stands,
/// which Clarabel holds (and solves where this method does not).
pub(crate) struct BlockLp {
    clarabel: ClarabelLp,
    blocks: Option<Vec<u32>>,
}

impl LoadedLp for BlockLp {
    fn solve(&mut self) -> Result<Solution, BackendError> {
        let t0 = Instant::now();
        let tried = self
            .blocks
            .as_ref()
            .map(|b| solve(self.clarabel.problem(), b));
        let why = match tried {
            Some(Ok(sol)) => return Ok(sol),
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
    /// Its block's rows (block-local index, value) and block.
    block: u32,
    in_block: Vec<(usize, f64)>,
    /// Its dense rows (dense index, value), and their positions in its
    /// block's list of dense rows (when it has a block).
    dense: Vec<(usize, f64)>,
    at: Vec<usize>,
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
    /// The variables of each block, and those of no block.
    by_block: Vec<Vec<usize>>,
    dense_only: Vec<usize>,
}

/// The factored normal equations of one step.
struct Factor {
    /// Per block: its Cholesky factor (m x m, row-major lower) and
    /// W = L^-1 C (m x |dense rows of the block|, row-major).
    chol: Vec<Vec<f64>>,
    w: Vec<Vec<f64>>,
    /// The Schur complement's Cholesky factor (dense x dense, row-major).
    schur: Vec<f64>,
}

/// Solve `p`; `Err((status, steps))` when the method did not converge.
fn solve(p: &Problem, blocks: &[u32]) -> Result<Solution, (Status, usize)> {
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
            in_block: Vec::new(),
            dense: Vec::new(),
            at: Vec::new(),
        };
        for (r, v) in entries {
            ent_row.push(r);
            ent_val.push(v);
            let (blk, local) = place[r];
            if blk == DENSE {
                var.dense.push((local, v));
            } else if var.block == DENSE || var.block == blk {
                var.block = blk;
                var.in_block.push((local, v));
            } else {
                return Err((Status::NumericalFailure, 0));
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
        let (blk, local) = place[a];
        let mut var = Var {
            lower: lo,
            upper: up,
            cost: 0.0,
            block: DENSE,
            in_block: Vec::new(),
            dense: Vec::new(),
            at: Vec::new(),
        };
        if blk == DENSE {
            var.dense.push((local, -1.0));
        } else {
            var.block = blk;
            var.in_block.push((local, -1.0));
        }
        vars.push(var);
        ent_row.push(a);
        ent_val.push(-1.0);
        ent_start.push(ent_row.len());
    }
    // Each block's variables and dense rows (each once), and each
    // variable's positions among its block's dense rows.
    let mut by_block: Vec<Vec<usize>> = vec![Vec::new(); nb];
    for (j, v) in vars.iter().enumerate().filter(|(_, v)| v.block != DENSE) {
        by_block[v.block as usize].push(j);
    }
    let mut block_dense: Vec<Vec<usize>> = vec![Vec::new(); nb];
    let mut pos = vec![usize::MAX; dense];
    for blk in 0..nb {
        let list = &mut block_dense[blk];
        for &j in &by_block[blk] {
            for &(d, _) in &vars[j].dense {
                if pos[d] == usize::MAX {
                    pos[d] = list.len();
                    list.push(d);
                }
            }
        }
        for &j in &by_block[blk] {
            let at = vars[j].dense.iter().map(|&(d, _)| pos[d]).collect();
            vars[j].at = at;
        }
        for &d in list.iter() {
            pos[d] = usize::MAX;
        }
    }
    let dense_only: Vec<usize> = (0..vars.len())
        .filter(|&j| vars[j].block == DENSE)
        .collect();
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
    };
    let nv = vars.len();
    let times = |x: &[f64]| -> Vec<f64> {
        // A~ x over the active rows.
        let mut out = vec![0.0; na];
        for (j, &xv) in x.iter().enumerate() {
            if xv != 0.0 {
                for e in ent_start[j]..ent_start[j + 1] {
                    out[ent_row[e]] += ent_val[e] * xv;
                }
            }
        }
        out
    };
    let transpose_times = |y: &[f64]| -> Vec<f64> {
        (0..ent_start.len() - 1)
            .map(|j| {
                (ent_start[j]..ent_start[j + 1])
                    .map(|e| ent_val[e] * y[ent_row[e]])
                    .sum::<f64>()
            })
            .collect()
    };
    let has_lo: Vec<bool> = vars.iter().map(|v| v.lower.is_finite()).collect();
    let has_up: Vec<bool> = vars.iter().map(|v| v.upper.is_finite()).collect();
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
    let norm_c = 1.0 + vars.iter().fold(0.0f64, |a, v| a.max(v.cost.abs()));
    let pairs = has_lo.iter().filter(|&&h| h).count() + has_up.iter().filter(|&&h| h).count();
    let mut iterations = 0;
    let mut done = false;
    while iterations < MAX_ITERATIONS {
        let s: Vec<f64> = (0..nv)
            .map(|j| if has_lo[j] { x[j] - vars[j].lower } else { 1.0 })
            .collect();
        let t: Vec<f64> = (0..nv)
            .map(|j| if has_up[j] { vars[j].upper - x[j] } else { 1.0 })
            .collect();
        let ax = times(&x);
        let rp: Vec<f64> = (0..na).map(|a| b[a] - ax[a]).collect();
        let aty = transpose_times(&y);
        let rd: Vec<f64> = (0..nv)
            .map(|j| vars[j].cost - aty[j] - z[j] + q[j])
            .collect();
        let gap: f64 = (0..nv)
            .map(|j| {
                s[j] * z[j] * f64::from(u8::from(has_lo[j]))
                    + t[j] * q[j] * f64::from(u8::from(has_up[j]))
            })
            .sum();
        let pobj: f64 = (0..nv).map(|j| vars[j].cost * x[j]).sum();
        let inf_p = rp.iter().fold(0.0f64, |a, v| a.max(v.abs())) / norm_b;
        let inf_d = rd.iter().fold(0.0f64, |a, v| a.max(v.abs())) / norm_c;
        let rel_gap = gap / (1.0 + pobj.abs());
        if !(inf_p.is_finite() && inf_d.is_finite() && rel_gap.is_finite()) {
            return Err((Status::NumericalFailure, iterations));
        }
        if inf_p <= TOLERANCE && inf_d <= TOLERANCE && rel_gap <= TOLERANCE {
            done = true;
            break;
        }
        iterations += 1;
        let mu = if pairs > 0 { gap / pairs as f64 } else { 0.0 };
        // D = 1 / (z/s + q/t), regularised.
        let dinv: Vec<f64> = (0..nv)
            .map(|j| {
                let mut v = 0.0;
                if has_lo[j] {
                    v += z[j] / s[j];
                }
                if has_up[j] {
                    v += q[j] / t[j];
                }
                v
            })
            .collect();
        let dmax = dinv.iter().fold(0.0f64, |a, &v| a.max(v)).max(1.0);
        let d: Vec<f64> = dinv.iter().map(|&v| 1.0 / (v + 1e-30 * dmax)).collect();
        let Some(f) = factor(&layout, &vars, &d) else {
            return Err((Status::NumericalFailure, iterations));
        };
        // Direction for complementarity targets xl, xu (s z -> xl, t q -> xu).
        let direction = |xl: &[f64], xu: &[f64], refine: bool| {
            let rhat: Vec<f64> = (0..nv)
                .map(|j| {
                    let mut v = rd[j];
                    if has_lo[j] {
                        v -= xl[j] / s[j];
                    }
                    if has_up[j] {
                        v += xu[j] / t[j];
                    }
                    v
                })
                .collect();
            let drhat: Vec<f64> = (0..nv).map(|j| d[j] * rhat[j]).collect();
            let adr = times(&drhat);
            let rhs: Vec<f64> = (0..na).map(|a| rp[a] + adr[a]).collect();
            // One step of iterative refinement: near the optimum D spans
            // many decades and the normal equations lose digits.
            let mut dy = back_solve(&layout, &f, &rhs);
            let mut atdy = transpose_times(&dy);
            if refine {
                let datdy: Vec<f64> = (0..nv).map(|j| d[j] * atdy[j]).collect();
                let mdy = times(&datdy);
                let res: Vec<f64> = (0..na).map(|a| rhs[a] - mdy[a]).collect();
                let fix = back_solve(&layout, &f, &res);
                for (v, e) in dy.iter_mut().zip(fix) {
                    *v += e;
                }
                atdy = transpose_times(&dy);
            }
            let dx: Vec<f64> = (0..nv).map(|j| d[j] * (atdy[j] - rhat[j])).collect();
            let dz: Vec<f64> = (0..nv)
                .map(|j| {
                    if has_lo[j] {
                        (xl[j] - z[j] * dx[j]) / s[j]
                    } else {
                        0.0
                    }
                })
                .collect();
            let dq: Vec<f64> = (0..nv)
                .map(|j| {
                    if has_up[j] {
                        (xu[j] + q[j] * dx[j]) / t[j]
                    } else {
                        0.0
                    }
                })
                .collect();
            (dx, dy, dz, dq)
        };
        let steps = |dx: &[f64], dz: &[f64], dq: &[f64]| {
            let (mut ap, mut ad) = (1.0f64, 1.0f64);
            for j in 0..nv {
                if has_lo[j] {
                    if dx[j] < 0.0 {
                        ap = ap.min(-s[j] / dx[j]);
                    }
                    if dz[j] < 0.0 {
                        ad = ad.min(-z[j] / dz[j]);
                    }
                }
                if has_up[j] {
                    if dx[j] > 0.0 {
                        ap = ap.min(t[j] / dx[j]);
                    }
                    if dq[j] < 0.0 {
                        ad = ad.min(-q[j] / dq[j]);
                    }
                }
            }
            (ap, ad)
        };
        // Predictor.
        let xl0: Vec<f64> = (0..nv).map(|j| -s[j] * z[j]).collect();
        let xu0: Vec<f64> = (0..nv).map(|j| -t[j] * q[j]).collect();
        let (dx, _, dz, dq) = direction(&xl0, &xu0, false);
        let (ap, ad) = steps(&dx, &dz, &dq);
        let gap_aff: f64 = (0..nv)
            .map(|j| {
                let mut g = 0.0;
                if has_lo[j] {
                    g += (s[j] + ap * dx[j]) * (z[j] + ad * dz[j]);
                }
                if has_up[j] {
                    g += (t[j] - ap * dx[j]) * (q[j] + ad * dq[j]);
                }
                g
            })
            .sum();
        let sigma = if gap > 0.0 {
            (gap_aff / gap).clamp(0.0, 1.0).powi(3)
        } else {
            0.0
        };
        // Corrector.
        let xl: Vec<f64> = (0..nv)
            .map(|j| sigma * mu - s[j] * z[j] - dx[j] * dz[j])
            .collect();
        let xu: Vec<f64> = (0..nv)
            .map(|j| sigma * mu - t[j] * q[j] + dx[j] * dq[j])
            .collect();
        // Refined only near the end, where the normal equations lose digits.
        let (dx, dy, dz, dq) = direction(&xl, &xu, rel_gap < REFINE_BELOW);
        let (ap, ad) = steps(&dx, &dz, &dq);
        let (ap, ad) = ((TO_BOUNDARY * ap).min(1.0), (TO_BOUNDARY * ad).min(1.0));
        for j in 0..nv {
            x[j] += ap * dx[j];
            if has_lo[j] {
                z[j] += ad * dz[j];
            }
            if has_up[j] {
                q[j] += ad * dq[j];
            }
        }
        for a in 0..na {
            y[a] += ad * dy[a];
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

/// Form and factor the normal equations `A D A^T` (see the module docs):
/// the blocks in parallel, each eliminated onto the Schur complement of its
/// part, the parts summed in order at the end.
fn factor(layout: &Layout, vars: &[Var], d: &[f64]) -> Option<Factor> {
    use rayon::prelude::*;
    let nb = layout.block_rows.len();
    let nd = layout.dense;
    // Regularise every diagonal.
    let reg = |m: &mut [f64], n: usize| {
        let big = (0..n).fold(0.0f64, |a, i| a.max(m[i * n + i])).max(1e-300);
        for i in 0..n {
            m[i * n + i] += REGULARISATION * big;
        }
    };
    // One block: its factor, W = L^-1 C, and S -= W^T W into `schur`.
    let one = |blk: usize, schur: &mut [f64]| -> Option<(Vec<f64>, Vec<f64>)> {
        let m = layout.block_rows[blk];
        let list = &layout.block_dense[blk];
        let t = list.len();
        let mut mb = vec![0.0; m * m];
        let mut wb = vec![0.0; m * t];
        for &j in &layout.by_block[blk] {
            let (v, dj) = (&vars[j], d[j]);
            for &(a, va) in &v.in_block {
                let dva = dj * va;
                for &(c, vc) in &v.in_block {
                    mb[a * m + c] += dva * vc;
                }
                for (&(_, vc), &pos) in v.dense.iter().zip(&v.at) {
                    wb[a * t + pos] += dva * vc;
                }
            }
            add_dense(schur, nd, v, dj);
        }
        reg(&mut mb, m);
        if !cholesky(&mut mb, m) {
            return None;
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
        // S -= W^T W on the block's dense rows.
        for a in 0..m {
            let row = &wb[a * t..(a + 1) * t];
            for (c1, &d1) in list.iter().enumerate() {
                let v1 = row[c1];
                if v1 == 0.0 {
                    continue;
                }
                let srow = &mut schur[d1 * nd..(d1 + 1) * nd];
                for (&v2, &d2) in row.iter().zip(list) {
                    srow[d2] -= v1 * v2;
                }
            }
        }
        Some((mb, wb))
    };
    // A fixed split of the blocks, each part summed into its own Schur
    // complement, the parts added in order: the same sums on any number
    // of threads (a run must not depend on the scheduler).
    let per = nb.div_ceil(PARTS).max(1);
    let ids: Vec<usize> = (0..nb).collect();
    // Per part: each block's (factor, W), and the part's Schur sum.
    type Part = (Vec<(Vec<f64>, Vec<f64>)>, Vec<f64>);
    let results: Vec<Option<Part>> = ids
        .par_chunks(per)
        .map(|part| {
            let mut schur = vec![0.0; nd * nd];
            let mut out = Vec::with_capacity(part.len());
            for &blk in part {
                out.push(one(blk, &mut schur)?);
            }
            Some((out, schur))
        })
        .collect();
    let mut schur = vec![0.0; nd * nd];
    let (mut chol, mut w) = (Vec::with_capacity(nb), Vec::with_capacity(nb));
    for r in results {
        let (out, part) = r?;
        for (l, wb) in out {
            chol.push(l);
            w.push(wb);
        }
        for (x, y) in schur.iter_mut().zip(part) {
            *x += y;
        }
    }
    for &j in &layout.dense_only {
        add_dense(&mut schur, nd, &vars[j], d[j]);
    }
    reg(&mut schur, nd);
    if !cholesky(&mut schur, nd) {
        return None;
    }
    Some(Factor { chol, w, schur })
}

/// Add `dj a a^T` over the dense rows of `v` to the Schur complement.
fn add_dense(schur: &mut [f64], nd: usize, v: &Var, dj: f64) {
    for &(a, va) in &v.dense {
        for &(c, vc) in &v.dense {
            schur[a * nd + c] += dj * va * vc;
        }
    }
}

/// Solve `A D A^T dy = rhs` with the factors of [`factor`].
fn back_solve(layout: &Layout, f: &Factor, rhs: &[f64]) -> Vec<f64> {
    let nb = layout.block_rows.len();
    let nd = layout.dense;
    let off = &layout.block_off;
    let mut g = vec![0.0; off[nb]];
    let mut rd = vec![0.0; nd];
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
        forward(&f.chol[blk], m, gb);
        let list = &layout.block_dense[blk];
        let t = list.len();
        let w = &f.w[blk];
        for (a, &ga) in gb.iter().enumerate() {
            for (&wv, &dr) in w[a * t..(a + 1) * t].iter().zip(list) {
                rd[dr] -= wv * ga;
            }
        }
    }
    forward(&f.schur, nd, &mut rd);
    backward(&f.schur, nd, &mut rd);
    for blk in 0..nb {
        let m = layout.block_rows[blk];
        let list = &layout.block_dense[blk];
        let t = list.len();
        let w = &f.w[blk];
        let gb = &mut g[off[blk]..off[blk] + m];
        for (a, ga) in gb.iter_mut().enumerate() {
            let s: f64 = w[a * t..(a + 1) * t]
                .iter()
                .zip(list)
                .map(|(&wv, &dr)| wv * rd[dr])
                .sum();
            *ga -= s;
        }
        backward(&f.chol[blk], m, gb);
    }
    layout
        .place
        .iter()
        .map(|&(blk, local)| {
            if blk == DENSE {
                rd[local]
            } else {
                g[off[blk as usize] + local]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The optimum and its duals on a small LP with every row dense, grown
    /// by a column, and a bound change taking effect: each solve by this
    /// method, not Clarabel's.
    #[test]
    fn solves_a_small_lp_and_its_duals() {
        let ipm = BlockIpm::new(Some(vec![DENSE, DENSE]));
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
            let mut ours = BlockIpm::new(Some(blocks))
                .load(mm.problem.clone())
                .unwrap();
            let mut theirs = crate::direct::Direct::new()
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
