//! A vertex made exact to double-double precision: the bounded primal
//! simplex continued from a backend's final basis, with every value and
//! dual recomputed from the basis each step in double-double arithmetic
//! (about 32 digits; the basis solves in f64 refined on residuals summed
//! in double-double).
//!
//! HiGHS's bases on ill-conditioned LPs (the max-min rounds with sparse
//! placement lists) are optimal only within its 1e-9 tolerances; their
//! exact vertices are infeasible by up to 3e-8, and a slope of 3.6e7
//! turns that into percents in later rounds. Here the pivots that remain
//! are taken at tolerances near 1e-24, or at what the solves resolve
//! where that is more: a basis of condition 1e10 leaves about 1e-22 of
//! the values, and each tolerance adds four times its solve's last
//! correction. A basis whose solves resolve less than 1e-9 of the
//! largest value or dual (or of 1; HiGHS's own tolerance) is refused
//! ([`PolishError::NotABasis`]); at 1e-14 that refused bases on the
//! placement grid whose duals resolve to 2e-12 and were right.
//!
//! Each pivot's values and duals are refined from the last pivot's
//! (one f64 solve of the residual after a degenerate pivot), and a
//! refinement stops once its corrections, below 1e-18 of the answer,
//! stop shrinking. Steps whose gain is below double-double's resolution
//! of the objective, or that a variable within the tolerance of its
//! bound stops, count as degenerate for Bland's rule. Measured on an LP
//! of a round of 1,000 x 10,000 with placement lists (11,001 columns,
//! 14,662 rows): 1,185 pivots in 6.3 s, 9.9 s before (refinements that
//! ran all eight rounds for nothing). Another LP of that round still
//! cycles (a phase-2 step leaves a variable whose pivot is too small to
//! take past its bound, phase 1 undoes the step) until the pivot limit.

mod basis;
mod dd;
mod lu;

use crate::backend::BasisStatus;
use crate::problem::{Problem, Sense};
use basis::{Basis, REFACTOR};
pub use dd::Dd;

/// The polished vertex.
#[derive(Debug, Clone)]
pub struct Polished {
    /// Primal values (rounded from double-double).
    pub x: Vec<f64>,
    /// Row duals, in the backend's sign convention for the problem's sense.
    pub row_dual: Vec<f64>,
    /// The objective.
    pub objective: f64,
    /// Pivots taken from the backend's basis.
    pub pivots: usize,
    /// The exact vertex's basis: each column's status, then each row's.
    pub basis: (Vec<BasisStatus>, Vec<BasisStatus>),
}

/// Why a polish gave up.
#[derive(Debug, Clone, PartialEq)]
pub enum PolishError {
    /// The statuses do not make a basis (count or a singular matrix).
    NotABasis(String),
    /// Phase 1 ended with infeasibility left (the largest violation of a
    /// bound by a basic variable).
    Infeasible(f64),
    /// An improving ray.
    Unbounded,
    /// More pivots than allowed.
    PivotLimit,
    /// The deadline passed.
    TimeLimit,
}

/// The loaded LP's last basis made exact ([`polish`]) as a solution
/// (status optimal, `raw_status` naming the pivots taken, no column
/// duals); `None` when the backend has no basis or the pivots fail or
/// pass `deadline`. The exact vertex's basis goes back to the backend
/// ([`crate::LoadedLp::set_basis`]), so that the next solve starts from
/// it: HiGHS keeps columns fixed at 0 basic at 1e-15 (the max-min rounds'
/// closed entries), and each costs a pivot here on every later solve
/// until one is handed back (measured at 1,000 x 10,000 with placement
/// lists: 0, 1, 2, ... 21 pivots in rounds 1-31, about 8 ms each).
pub fn polish_loaded<L: crate::LoadedLp>(
    lp: &mut L,
    max_pivots: usize,
    deadline: Option<std::time::Instant>,
) -> Option<crate::Solution> {
    let (cols, rows) = lp.basis()?;
    let t = std::time::Instant::now();
    let e = polish(lp.problem(), &cols, &rows, max_pivots, deadline).ok()?;
    if e.pivots > 0 {
        // A basis the backend refuses leaves its own: the next solve
        // only starts farther away.
        let _ = lp.set_basis(&e.basis.0, &e.basis.1);
    }
    Some(crate::Solution {
        status: crate::Status::Optimal,
        raw_status: format!("Optimal (exact pivots: {})", e.pivots),
        objective: e.objective,
        x: e.x,
        row_dual: e.row_dual,
        col_dual: Vec::new(),
        seconds: t.elapsed().as_secs_f64(),
        iterations: e.pivots as u64,
    })
}

/// Continue the primal simplex from the basis `cols` / `rows` (statuses
/// as the backend reports them) on `p` to an optimal vertex exact to
/// double-double precision, taking at most `max_pivots` pivots and
/// none after `deadline`.
pub fn polish(
    p: &Problem,
    cols: &[BasisStatus],
    rows: &[BasisStatus],
    max_pivots: usize,
    deadline: Option<std::time::Instant>,
) -> Result<Polished, PolishError> {
    let (n, m) = (p.num_cols(), p.num_rows());
    if cols.len() != n || rows.len() != m {
        return Err(PolishError::NotABasis("sizes".into()));
    }
    // Variables 0..n the columns, n..n+m the row activities r = A x.
    let lo: Vec<f64> = p.col_lower.iter().chain(&p.row_lower).copied().collect();
    let up: Vec<f64> = p.col_upper.iter().chain(&p.row_upper).copied().collect();
    let sign = if p.sense == Sense::Maximise {
        -1.0
    } else {
        1.0
    };
    // Minimise sign * c.
    let cost = |v: usize| if v < n { sign * p.col_cost[v] } else { 0.0 };
    let mut status: Vec<BasisStatus> = cols.iter().chain(rows).copied().collect();
    for v in 0..n + m {
        status[v] = match status[v] {
            BasisStatus::Basic => BasisStatus::Basic,
            s => match (lo[v].is_finite(), up[v].is_finite(), s) {
                (true, true, BasisStatus::Upper) => BasisStatus::Upper,
                (true, _, _) => BasisStatus::Lower,
                (false, true, _) => BasisStatus::Upper,
                (false, false, _) => BasisStatus::Zero,
            },
        };
    }
    let value_nb = |s: BasisStatus, v: usize| match s {
        BasisStatus::Lower => lo[v],
        BasisStatus::Upper => up[v],
        _ => 0.0,
    };
    let at: Vec<usize> = (0..n + m)
        .filter(|&v| status[v] == BasisStatus::Basic)
        .collect();
    if at.len() != m {
        return Err(PolishError::NotABasis(format!("{} basic of {m}", at.len())));
    }
    let mut basis = Basis::new(p, at).ok_or_else(|| PolishError::NotABasis("singular".into()))?;
    let mut pivots = 0;
    let mut degenerate = 0usize;
    // The last pivot's values (by variable) and duals (by row): each
    // pivot's refinement starts from them.
    let mut x = vec![Dd::default(); n + m];
    let mut y = vec![Dd::default(); m];
    loop {
        if basis.etas.len() >= REFACTOR {
            basis = Basis::new(p, basis.at.clone())
                .ok_or_else(|| PolishError::NotABasis(format!("singular after {pivots} pivots")))?;
        }
        // Primal: nonbasic at their bounds; B x_B = -N x_N.
        let mut w = vec![Dd::default(); m];
        for v in 0..n + m {
            if status[v] != BasisStatus::Basic {
                let val = value_nb(status[v], v);
                x[v] = Dd::from(val);
                if val != 0.0 {
                    basis.column(v, |i, a| w[i] = w[i].sub(Dd::from(val).mul_f(a)));
                }
            }
        }
        let start = basis.at.iter().map(|&v| x[v]).collect();
        let (xb, x_noise) = basis
            .solve(&w, start)
            .ok_or_else(|| PolishError::NotABasis(format!("primal solve after {pivots} pivots")))?;
        for (pos, &v) in basis.at.iter().enumerate() {
            x[v] = xb[pos];
        }
        let xmax = xb.iter().map(|v| v.hi.abs()).fold(1.0, f64::max);
        if x_noise > 1e-9 * xmax {
            return Err(PolishError::NotABasis(format!(
                "values resolved to {x_noise:e} of {xmax:e} after {pivots} pivots"
            )));
        }
        // Infeasibility of the basic variables, beyond the rounding and
        // what the solve could resolve (an ill-conditioned basis leaves
        // 1e-22 of the values: a tolerance below that reads the solve's
        // own error as infeasibility).
        let tol = |b: f64| 1e-24 * b.abs().max(1.0) + 4.0 * x_noise;
        let below = |v: usize| lo[v].is_finite() && x[v].lt(Dd::from(lo[v] - tol(lo[v])));
        let above = |v: usize| up[v].is_finite() && Dd::from(up[v] + tol(up[v])).lt(x[v]);
        let basic = basis.at.clone();
        let phase1 = basic.iter().any(|&v| below(v) || above(v));
        let phase_cost = |v: usize| {
            if phase1 {
                if status[v] != BasisStatus::Basic {
                    0.0
                } else if below(v) {
                    -1.0
                } else if above(v) {
                    1.0
                } else {
                    0.0
                }
            } else {
                cost(v)
            }
        };
        // Duals: B^T y = c_B.
        let g: Vec<Dd> = basic.iter().map(|&v| Dd::from(phase_cost(v))).collect();
        let y_noise;
        (y, y_noise) = basis
            .solve_t(&g, std::mem::take(&mut y))
            .ok_or_else(|| PolishError::NotABasis(format!("dual solve after {pivots} pivots")))?;
        let ymax = y.iter().map(|v| v.hi.abs()).fold(1.0, f64::max);
        if y_noise > 1e-9 * ymax {
            return Err(PolishError::NotABasis(format!(
                "duals resolved to {y_noise:e} of {ymax:e} after {pivots} pivots"
            )));
        }
        // Each reduced cost with the size of the terms it sums and the
        // duals' own error over its column: it counts only when it stands
        // out of them by far.
        let dj = |v: usize| -> (Dd, f64) {
            let c = phase_cost(v);
            let mut d = Dd::from(c);
            let mut size = c.abs();
            let mut norm = 0.0;
            basis.column(v, |i, a| {
                let t = y[i].mul_f(a);
                size += t.hi.abs();
                norm += a.abs();
                d = d.sub(t);
            });
            (d, 1e-20 * size + 4.0 * y_noise * norm)
        };
        let bland = degenerate > 50;
        let cscale = (0..n + m)
            .map(|v| phase_cost(v).abs())
            .fold(1e-300, f64::max);
        let mut enter: Option<(usize, f64, f64)> = None; // (var, direction, |d|)
        for v in 0..n + m {
            if status[v] == BasisStatus::Basic || lo[v] == up[v] {
                continue;
            }
            let (d, noise) = dj(v);
            let d = d.f64();
            let dtol = noise + 1e-26 * cscale;
            let dir = match status[v] {
                BasisStatus::Lower if d < -dtol => 1.0,
                BasisStatus::Upper if d > dtol => -1.0,
                BasisStatus::Zero if d.abs() > dtol => -d.signum(),
                _ => continue,
            };
            let better = match enter {
                None => true,
                Some((_, _, best)) => !bland && d.abs() > best,
            };
            if better {
                enter = Some((v, dir, d.abs()));
            }
            if bland && enter.is_some() {
                break;
            }
        }
        let Some((q, dir, dq)) = enter else {
            if phase1 {
                let worst = basic
                    .iter()
                    .map(|&v| {
                        let below_by = if lo[v].is_finite() {
                            lo[v] - x[v].f64()
                        } else {
                            0.0
                        };
                        let above_by = if up[v].is_finite() {
                            x[v].f64() - up[v]
                        } else {
                            0.0
                        };
                        below_by.max(above_by)
                    })
                    .fold(0.0, f64::max);
                return Err(PolishError::Infeasible(worst));
            }
            let objective: Dd = (0..n).fold(Dd::default(), |s, j| s.add(x[j].mul_f(p.col_cost[j])));
            return Ok(Polished {
                x: (0..n).map(|j| x[j].f64()).collect(),
                // For a maximisation the backend's duals are those of the
                // maximisation: minus ours.
                // A row whose activity is basic has reduced cost y_i = 0
                // exactly (its refinement can leave 1e-47).
                row_dual: y
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        if status[n + i] == BasisStatus::Basic {
                            0.0
                        } else {
                            sign * v.f64()
                        }
                    })
                    .collect(),
                objective: objective.f64() + p.offset,
                pivots,
                basis: (status[..n].to_vec(), status[n..].to_vec()),
            });
        };
        if pivots == max_pivots {
            return Err(PolishError::PivotLimit);
        }
        if deadline.is_some_and(|d| std::time::Instant::now() > d) {
            return Err(PolishError::TimeLimit);
        }
        // alpha = B^{-1} a_q (by position).
        let mut aq = vec![Dd::default(); m];
        basis.column(q, |i, a| aq[i] = Dd::from(a));
        let (alpha, _) = basis
            .solve(&aq, vec![Dd::default(); m])
            .ok_or_else(|| PolishError::NotABasis(format!("column solve after {pivots} pivots")))?;
        // Ratio test: basic v moves at rate -dir alpha_v per unit step.
        // Pivots below 1e-11 of the column's largest entry are skipped (a
        // basis through one would be singular to working precision).
        // (Tried: taking such a pivot where skipping it leaves its
        // variable past a bound, which ended a cycle of 20,000 pivots at
        // 1,000 x 10,000 in 2,043, and only when no other improving
        // column was free of such a pivot; the bases through them then
        // solved to 1e-3-1e-9 after the next factorisation, and 300 x
        // 3,000 ended `reduced_accuracy` and not verified.)
        let amax = alpha.iter().map(|a| a.hi.abs()).fold(1e-300, f64::max);
        let mut best: Option<(Dd, usize, BasisStatus, f64)> = None; // (step, position, bound hit, |rate|)
        for (pos, &v) in basic.iter().enumerate() {
            let rate = alpha[pos].mul_f(-dir);
            let r = rate.f64();
            if r.abs() <= 1e-11 * amax {
                continue;
            }
            let (limit, hit) = if r < 0.0 {
                // Decreasing: to lo (or, above up in phase 1, to up).
                if phase1 && above(v) {
                    (up[v], BasisStatus::Upper)
                } else if lo[v].is_finite() && !(phase1 && below(v)) {
                    (lo[v], BasisStatus::Lower)
                } else {
                    continue;
                }
            } else if phase1 && below(v) {
                (lo[v], BasisStatus::Lower)
            } else if up[v].is_finite() && !(phase1 && above(v)) {
                (up[v], BasisStatus::Upper)
            } else {
                continue;
            };
            // A variable at its bound within the tolerance stops the step
            // at 0 (a degenerate pivot, which Bland's rule counts).
            let gap = Dd::from(limit).sub(x[v]);
            let mut step = gap.div(rate);
            if step.hi < 0.0 || gap.abs().hi <= tol(limit) {
                step = Dd::default();
            }
            let replace = match &best {
                None => true,
                Some((s, _, _, ar)) => step.lt(*s) || (step == *s && r.abs() > *ar),
            };
            if replace {
                best = Some((step, pos, hit, r.abs()));
            }
        }
        let flip = if lo[q].is_finite() && up[q].is_finite() {
            Some(Dd::from(up[q]).sub(Dd::from(lo[q])))
        } else {
            None
        };
        pivots += 1;
        let flip_q = |status: &mut Vec<BasisStatus>| {
            status[q] = if status[q] == BasisStatus::Lower {
                BasisStatus::Upper
            } else {
                BasisStatus::Lower
            };
        };
        match (best, flip) {
            (Some((s, _, _, _)), Some(f)) if f.lt(s) => flip_q(&mut status),
            (None, Some(_)) => flip_q(&mut status),
            (Some((s, pos, hit, _)), _) => {
                // A step whose gain is below double-double's resolution
                // of the objective cannot be told from a degenerate one,
                // and counts as one for Bland's rule (otherwise a run of
                // such steps never starts it).
                let scale: f64 = (0..n + m).map(|v| (phase_cost(v) * x[v].hi).abs()).sum();
                if s.abs().hi * dq <= 1e-30 * scale {
                    degenerate += 1;
                } else {
                    degenerate = 0;
                }
                let v = basic[pos];
                status[q] = BasisStatus::Basic;
                status[v] = hit;
                basis.push_eta(pos, alpha.iter().map(|a| a.f64()));
                basis.at[pos] = q;
            }
            (None, None) => {
                return Err(if phase1 {
                    PolishError::Infeasible(f64::NAN)
                } else {
                    PolishError::Unbounded
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::ProblemBuilder;

    #[test]
    fn double_double_keeps_the_digits_f64_drops() {
        let third = Dd::from(1.0).div(Dd::from(3.0));
        let back = third.mul_f(3.0).sub(Dd::from(1.0));
        assert!(back.f64().abs() < 1e-31, "{back:?}");
        let tiny = Dd::from(1.0).add(Dd::from(1e-20)).sub(Dd::from(1.0));
        assert_eq!(tiny.f64(), 1e-20);
    }

    /// max x + y, x + 2y <= 4, 3x + y <= 6 (x = 8/5, y = 6/5), from the
    /// all-slack basis: the pivots reach the vertex and its duals (1/5, 2/5).
    #[test]
    fn pivots_from_the_slack_basis_to_the_optimum() {
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let r1 = b.add_row(f64::NEG_INFINITY, 4.0);
        let r2 = b.add_row(f64::NEG_INFINITY, 6.0);
        b.add_col(1.0, 0.0, f64::INFINITY, [(r1, 1.0), (r2, 3.0)]);
        b.add_col(1.0, 0.0, f64::INFINITY, [(r1, 2.0), (r2, 1.0)]);
        let p = b.build();
        let cols = [BasisStatus::Lower; 2];
        let rows = [BasisStatus::Basic; 2];
        let s = polish(&p, &cols, &rows, 10, None).unwrap();
        assert!(
            (s.x[0] - 1.6).abs() < 1e-15 && (s.x[1] - 1.2).abs() < 1e-15,
            "{s:?}"
        );
        assert!((s.objective - 2.8).abs() < 1e-15, "{s:?}");
        assert!(
            (s.row_dual[0] - 0.4).abs() < 1e-15 && (s.row_dual[1] - 0.2).abs() < 1e-15,
            "{s:?}"
        );
    }

    /// An infeasible start (both columns basic at a point off its bounds)
    /// goes through phase 1.
    #[test]
    fn phase_one_from_an_infeasible_basis() {
        // min x + y, x + y >= 2, x - y = 0, 0 <= x, y <= 5.
        let mut b = ProblemBuilder::new(Sense::Minimise);
        let r1 = b.add_row(2.0, f64::INFINITY);
        let r2 = b.add_row(0.0, 0.0);
        b.add_col(1.0, 0.0, 5.0, [(r1, 1.0), (r2, 1.0)]);
        b.add_col(1.0, 0.0, 5.0, [(r1, 1.0), (r2, -1.0)]);
        let p = b.build();
        // x at its upper bound, r1 at 2: y = -3 and r2 = 8, both off.
        let cols = [BasisStatus::Upper, BasisStatus::Basic];
        let rows = [BasisStatus::Lower, BasisStatus::Basic];
        let s = polish(&p, &cols, &rows, 20, None).unwrap();
        assert!(
            (s.x[0] - 1.0).abs() < 1e-15 && (s.x[1] - 1.0).abs() < 1e-15,
            "{s:?}"
        );
    }
}
