//! The ODE trajectory of 003 Sec. 5.3, with the corrections of
//! `docs/mechanisms.md`.
//!
//! f(x) = -sum_j log(1 - sum_k x_k r_{k,j}) - sum_{n capped} log(1 - x_n)
//! (the second sum is Sec. 5's dummy resource per capped user: r = 1 for
//! that user only). The curve of condition (12), x_n df/dx_n = c e_n, is
//! followed from c ~ 0 (the initial ray x_n = c e_n / sum_j r_{n,j}) to
//! c -> inf: differentiating (12) in c and dividing row n by x_n gives the
//! symmetric positive-definite system
//!
//! ```text
//!   (diag_n(g_n / x_n + d_n) + B B^T) v = (e_n / x_n)_n,    v = dx/dc,
//! ```
//!
//! g = grad f, B_{n,j} = r_{n,j} / s_j with slacks s_j = 1 - load_j, and
//! d_n = 1 / (1 - x_n)^2 for capped users (their dummy resource). It is
//! solved by Cholesky when N <= m and by Sherman-Morrison-Woodbury
//! (O(N m^2 + m^3)) otherwise.
//!
//! Two parameterisations, both integrated by Dormand-Prince 5(4)
//! (`ode_solvers`):
//!
//! * [`Param::T`], the paper's: dc/dt chosen so that df/dt = 1, i.e.
//!   dx/dt = v / (grad f . v); slacks decay like exp(-t / |J|);
//! * [`Param::LogC`]: the independent variable is log c, dx/dlog c = c v;
//!   far less stiff near the boundary.
//!
//! (12) is the stationarity condition of max sum e_n log x_n - f(x) / c, so
//! the curve is the log-barrier central path of the Eisenberg-Gale program
//! and its limit is the Eisenberg-Gale allocation; at c the bottleneck
//! slacks are about 1 / (c p_j).

use crate::{BbfError, Pool};
use nalgebra::{DMatrix, DVector};
use ode_solvers::dop_shared::{OutputType, System};
use ode_solvers::Dopri5;
use std::time::Instant;

/// The independent variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// The paper's t (df/dt = 1).
    T,
    /// log c (c the barrier weight's inverse).
    LogC,
}

/// Settings of [`trajectory`].
#[derive(Debug, Clone, Copy)]
pub struct OdeSettings {
    /// Independent variable.
    pub param: Param,
    /// Start at c = c0 on the initial ray (projected onto the curve).
    pub c0: f64,
    /// Stop once c reaches c_end (bottleneck slacks about 1 / (c p)).
    pub c_end: f64,
    /// Relative tolerance of the integrator.
    pub rtol: f64,
    /// Absolute tolerance of the integrator.
    pub atol: f64,
    /// Keep every accepted step.
    pub record: bool,
}

impl Default for OdeSettings {
    fn default() -> Self {
        OdeSettings {
            param: Param::LogC,
            c0: 1e-6,
            c_end: 1e11,
            rtol: 1e-10,
            atol: 1e-13,
            record: false,
        }
    }
}

/// The end of the trajectory.
#[derive(Debug, Clone)]
pub struct OdeOutcome {
    /// x at the end.
    pub x: Vec<f64>,
    /// c at the end.
    pub c: f64,
    /// The independent variable at the end (t or log c).
    pub end: f64,
    /// Accepted steps.
    pub steps: u32,
    /// Rejected steps.
    pub rejected: u32,
    /// Right-hand-side evaluations.
    pub evaluations: u32,
    /// The integrator's error, if it stopped early.
    pub error: Option<String>,
    /// Accepted steps (independent variable, c, x) when recorded.
    pub trajectory: Vec<(f64, f64, Vec<f64>)>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The pool's data in the form the right-hand side needs.
pub struct Flow<'a> {
    pool: &'a Pool,
    /// Resources somebody requests.
    used: Vec<usize>,
    param: Param,
    log_c_end: f64,
}

/// Quantities at a point x.
struct AtX {
    /// B_{n,a} = r_{n,used[a]} / s_a, row-major N x |used|.
    b: Vec<f64>,
    /// grad f.
    g: Vec<f64>,
    /// d_n (dummy-resource curvature).
    d: Vec<f64>,
}

impl<'a> Flow<'a> {
    /// The flow of `pool`.
    pub fn new(pool: &'a Pool, param: Param, c_end: f64) -> Flow<'a> {
        let used = (0..pool.num_resources())
            .filter(|&j| (0..pool.num_users()).any(|n| pool.req(n, j) > 0.0))
            .collect();
        Flow {
            pool,
            used,
            param,
            log_c_end: c_end.ln(),
        }
    }

    /// f(x), +inf outside the domain.
    pub fn f(&self, x: &[f64]) -> f64 {
        let loads = self.pool.loads(x);
        let mut f = 0.0;
        for &j in &self.used {
            let s = 1.0 - loads[j];
            if s <= 0.0 {
                return f64::INFINITY;
            }
            f -= s.ln();
        }
        for (n, &xn) in x.iter().enumerate() {
            if self.pool.ub[n].is_finite() {
                if xn >= 1.0 {
                    return f64::INFINITY;
                }
                f -= (1.0 - xn).ln();
            }
        }
        f
    }

    fn at(&self, x: &[f64]) -> Option<AtX> {
        let pool = self.pool;
        let (nu, k) = (pool.num_users(), self.used.len());
        let loads = pool.loads(x);
        let s: Vec<f64> = self.used.iter().map(|&j| 1.0 - loads[j]).collect();
        if s.iter().chain(x).any(|&v| v.is_nan() || v <= 0.0) {
            return None;
        }
        let mut b = vec![0.0; nu * k];
        let mut g = vec![0.0; nu];
        let mut d = vec![0.0; nu];
        for n in 0..nu {
            let row = pool.row(n);
            for (a, &j) in self.used.iter().enumerate() {
                let v = row[j] / s[a];
                b[n * k + a] = v;
                g[n] += v;
            }
            if pool.ub[n].is_finite() {
                let sn = 1.0 - x[n];
                if sn.is_nan() || sn <= 0.0 {
                    return None;
                }
                g[n] += 1.0 / sn;
                d[n] = 1.0 / (sn * sn);
            }
        }
        Some(AtX { b, g, d })
    }

    /// Solve (diag(diag) + B B^T) v = rhs: Cholesky when N <= |used|, else
    /// Sherman-Morrison-Woodbury.
    fn solve_spd(&self, at: &AtX, diag: &[f64], rhs: &[f64]) -> Option<Vec<f64>> {
        let (nu, k) = (self.pool.num_users(), self.used.len());
        let b = |n: usize, a: usize| at.b[n * k + a];
        if nu <= k {
            let mut mat = DMatrix::from_fn(nu, nu, |p, q| {
                (0..k).map(|a| b(p, a) * b(q, a)).sum::<f64>()
            });
            for n in 0..nu {
                mat[(n, n)] += diag[n];
            }
            let ch = mat.cholesky()?;
            return Some(
                ch.solve(&DVector::from_column_slice(rhs))
                    .as_slice()
                    .to_vec(),
            );
        }
        // (D + B B^T)^-1 = D^-1 - D^-1 B (I + B^T D^-1 B)^-1 B^T D^-1.
        let dinv: Vec<f64> = diag.iter().map(|v| 1.0 / v).collect();
        let w: Vec<f64> = rhs.iter().zip(&dinv).map(|(r, d)| r * d).collect();
        let mut small = DMatrix::<f64>::identity(k, k);
        let mut btw = DVector::<f64>::zeros(k);
        for n in 0..nu {
            let row = &at.b[n * k..(n + 1) * k];
            for a in 0..k {
                if row[a] == 0.0 {
                    continue;
                }
                btw[a] += row[a] * w[n];
                let ra = row[a] * dinv[n];
                for c in a..k {
                    small[(a, c)] += ra * row[c];
                }
            }
        }
        for a in 0..k {
            for c in 0..a {
                small[(a, c)] = small[(c, a)];
            }
        }
        let y = small.cholesky()?.solve(&btw);
        Some(
            (0..nu)
                .map(|n| {
                    let by: f64 = (0..k).map(|a| b(n, a) * y[a]).sum();
                    w[n] - dinv[n] * by
                })
                .collect(),
        )
    }

    /// v = dx/dc at x (the curve's tangent), or `None` outside the domain.
    pub fn tangent(&self, x: &[f64]) -> Option<Vec<f64>> {
        let at = self.at(x)?;
        let diag: Vec<f64> = (0..x.len()).map(|n| at.g[n] / x[n] + at.d[n]).collect();
        let rhs: Vec<f64> = (0..x.len()).map(|n| self.pool.e[n] / x[n]).collect();
        self.solve_spd(&at, &diag, &rhs)
    }

    /// grad f at x.
    pub fn gradient(&self, x: &[f64]) -> Option<Vec<f64>> {
        self.at(x).map(|a| a.g)
    }

    /// Newton onto the curve at c: x_n g_n(x) = c e_n.
    pub fn project(&self, c: f64, x: &mut [f64]) -> Option<()> {
        let nu = x.len();
        for _ in 0..50 {
            let at = self.at(x)?;
            // F_n = g_n - c e_n / x_n; dF/dx = H + diag(c e_n / x_n^2).
            let f: Vec<f64> = (0..nu)
                .map(|n| at.g[n] - c * self.pool.e[n] / x[n])
                .collect();
            let scale = at.g.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            if f.iter().all(|v| v.abs() <= 1e-14 * scale) {
                return Some(());
            }
            let diag: Vec<f64> = (0..nu)
                .map(|n| c * self.pool.e[n] / (x[n] * x[n]) + at.d[n])
                .collect();
            let neg: Vec<f64> = f.iter().map(|v| -v).collect();
            let dx = self.solve_spd(&at, &diag, &neg)?;
            let mut t = 1.0;
            loop {
                let trial: Vec<f64> = x.iter().zip(&dx).map(|(x, d)| x + t * d).collect();
                if self.at(&trial).is_some() {
                    x.copy_from_slice(&trial);
                    break;
                }
                t *= 0.5;
                if t < 1e-12 {
                    return None;
                }
            }
        }
        Some(())
    }
}

impl System<f64, DVector<f64>> for Flow<'_> {
    fn system(&self, _s: f64, y: &DVector<f64>, dy: &mut DVector<f64>) {
        let nu = self.pool.num_users();
        let x = &y.as_slice()[..nu];
        let c = y[nu].exp();
        let Some(v) = self.tangent(x) else {
            // Outside the domain: a huge derivative makes the step fail
            // its error test, so the integrator shrinks it.
            dy.fill(1e30);
            return;
        };
        match self.param {
            Param::LogC => {
                for n in 0..nu {
                    dy[n] = c * v[n];
                }
                dy[nu] = 1.0;
            }
            Param::T => {
                let g = self.gradient(x).unwrap_or_default();
                let dfdc: f64 = g.iter().zip(&v).map(|(g, v)| g * v).sum();
                for n in 0..nu {
                    dy[n] = v[n] / dfdc;
                }
                dy[nu] = 1.0 / (c * dfdc);
            }
        }
    }

    fn solout(&mut self, _s: f64, y: &DVector<f64>, _dy: &DVector<f64>) -> bool {
        y[self.pool.num_users()] >= self.log_c_end
    }
}

/// Follow the trajectory from c0 to c_end.
pub fn trajectory(pool: &Pool, settings: &OdeSettings) -> Result<OdeOutcome, BbfError> {
    let t0 = Instant::now();
    let s = settings;
    if !(s.c0 > 0.0 && s.c_end > s.c0 && s.rtol > 0.0 && s.atol > 0.0) {
        return Err(BbfError::Parameter(format!(
            "ODE settings: need 0 < c0 < c_end and positive tolerances (c0 {}, c_end {}, rtol {}, atol {})",
            s.c0, s.c_end, s.rtol, s.atol
        )));
    }
    let nu = pool.num_users();
    let flow = Flow::new(pool, s.param, s.c_end);
    // The initial ray x_n = c e_n / sum_j r_{n,j} (dummy resource included),
    // then Newton onto the curve.
    let mut x: Vec<f64> = (0..nu)
        .map(|n| {
            let rs: f64 =
                pool.row(n).iter().sum::<f64>() + if pool.ub[n].is_finite() { 1.0 } else { 0.0 };
            s.c0 * pool.e[n] / rs
        })
        .collect();
    flow.project(s.c0, &mut x).ok_or_else(|| {
        BbfError::Parameter(format!(
            "could not put the start on the curve at c0 = {} (try a smaller c0)",
            s.c0
        ))
    })?;
    let mut y0 = DVector::zeros(nu + 1);
    y0.as_mut_slice()[..nu].copy_from_slice(&x);
    y0[nu] = s.c0.ln();
    let (start, end) = match s.param {
        Param::LogC => (s.c0.ln(), s.c_end.ln()),
        Param::T => {
            // f grows by about |J| log(c_end / c0) <= (m + N) log(...).
            let f0 = flow.f(&x);
            let k = (flow.used.len() + nu) as f64;
            (f0, f0 + k * (s.c_end / s.c0).ln() + 10.0)
        }
    };
    let mut stepper = Dopri5::from_param(
        flow,
        start,
        end,
        0.0,
        y0,
        s.rtol,
        s.atol,
        0.9,
        0.04,
        0.2,
        10.0,
        end - start,
        0.0,
        1_000_000,
        1000,
        OutputType::Sparse,
    );
    let res = stepper.integrate();
    let (xs, ys) = (stepper.x_out(), stepper.y_out());
    let last = ys.last().expect("the start is recorded");
    let outcome = OdeOutcome {
        x: last.as_slice()[..nu].to_vec(),
        c: last[nu].exp(),
        end: *xs.last().expect("recorded"),
        steps: res.as_ref().map_or(0, |st| st.accepted_steps),
        rejected: res.as_ref().map_or(0, |st| st.rejected_steps),
        evaluations: res.as_ref().map_or(0, |st| st.num_eval),
        error: res.as_ref().err().map(|e| e.to_string()),
        trajectory: if s.record {
            xs.iter()
                .zip(ys)
                .map(|(t, y)| (*t, y[nu].exp(), y.as_slice()[..nu].to_vec()))
                .collect()
        } else {
            Vec::new()
        },
        seconds: t0.elapsed().as_secs_f64(),
    };
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_the_symmetric_solution_of_the_cyclic_example() {
        let pool = crate::tests::cyclic4();
        for param in [Param::LogC, Param::T] {
            let o = trajectory(
                &pool,
                &OdeSettings {
                    param,
                    ..OdeSettings::default()
                },
            )
            .unwrap();
            assert!(o.error.is_none(), "{param:?}: {:?}", o.error);
            for v in &o.x {
                assert!((v - 1.0 / 3.0).abs() < 1e-8, "{param:?}: {:?}", o.x);
            }
        }
    }
}
