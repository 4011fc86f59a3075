//! The fairness-efficiency family of 002: which share each member uses
//! (omega_n), and the merit M with its gradient in the user totals. The
//! solvers of leontief-fds and the first-order check of leontief-audit
//! both read these definitions.

use crate::Instance;

const INF: f64 = f64::INFINITY;

/// Which share the family uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Family {
    /// Dominant shares: omega_n = mu_n.
    Fds,
    /// Tasks: omega_n = 1.
    Gfj,
    /// omega_n = ||gamma_n||_p (p >= 1, or infinity).
    PNorm(f64),
}

impl Family {
    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            Family::Fds => "fds",
            Family::Gfj => "gfj",
            Family::PNorm(_) => "pnorm",
        }
    }
}

/// omega_n for each user.
pub fn omega(instance: &Instance, family: Family) -> Vec<f64> {
    let cap = instance.total_capacity();
    instance
        .user_ids()
        .map(|n| match family {
            Family::Fds => instance.mu(n),
            Family::Gfj => 1.0,
            Family::PNorm(p) => {
                let g: Vec<f64> = instance
                    .user(n)
                    .demand
                    .iter()
                    .zip(cap)
                    .filter(|(&d, _)| d > 0.0)
                    .map(|(&d, &c)| if c > 0.0 { d / c } else { INF })
                    .collect();
                // (sum g^p)^(1/p) = max (sum (g / max)^p)^(1/p): no term
                // underflows, whatever p (p = 1e300 is the max).
                let top = g.iter().copied().fold(0.0, f64::max);
                if p.is_infinite() || top == 0.0 || top.is_infinite() {
                    top
                } else {
                    top * g
                        .iter()
                        .map(|x| (x / top).powf(p))
                        .sum::<f64>()
                        .powf(1.0 / p)
                }
            }
        })
        .collect()
}

/// The merit M at user totals x (trivial: S).
pub fn merit(om: &[f64], w: &[f64], x: &[f64], beta: f64, lambda: f64, trivial: bool) -> f64 {
    let s: Vec<f64> = x.iter().zip(om).map(|(x, o)| x * o).collect();
    let big_s: f64 = s.iter().sum();
    if trivial {
        return big_s;
    }
    let u: f64 = s.iter().zip(w).map(|(s, w)| w * s.powf(1.0 - beta)).sum();
    let kappa = lambda - (1.0 - beta) / beta;
    let sgn = if beta < 1.0 { 1.0 } else { -1.0 };
    sgn * (u.ln() / beta + kappa * big_s.ln())
}

/// dM/dx_n at user totals x.
pub fn gradient(
    om: &[f64],
    w: &[f64],
    x: &[f64],
    beta: f64,
    lambda: f64,
    trivial: bool,
) -> Vec<f64> {
    let s: Vec<f64> = x.iter().zip(om).map(|(x, o)| x * o).collect();
    let big_s: f64 = s.iter().sum();
    if trivial {
        return om.to_vec();
    }
    let u: f64 = s.iter().zip(w).map(|(s, w)| w * s.powf(1.0 - beta)).sum();
    let kappa = lambda - (1.0 - beta) / beta;
    let sgn = if beta < 1.0 { 1.0 } else { -1.0 };
    s.iter()
        .zip(om)
        .zip(w)
        .map(|((&sn, &o), &wn)| {
            let ds = if sn > 0.0 {
                (1.0 - beta) / beta * wn * sn.powf(-beta) / u + kappa / big_s
            } else {
                INF
            };
            sgn * ds * o
        })
        .collect()
}
