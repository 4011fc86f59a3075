//! The fairness-efficiency families of Joe-Wong, Sen, Lan and Chiang (002)
//! as cone programs (`docs/mechanisms.md`, "Fairness-efficiency families").
//!
//! Shares s_n = omega_n x_n with omega_n = mu_n (FDS), 1 (GFJ) or
//! ||gamma_n||_p with gamma_{n,r} = D_{n,r} / C_r (the p-norm family (19);
//! p = inf is FDS). With U = sum_n w_n s_n^(1-beta) (weights default 1, as
//! in the paper), S = sum_n s_n and kappa = lambda - (1-beta)/beta, the
//! merit M = sgn(1-beta) [(1/beta) log U + kappa log S] is maximised over
//! the allocations (per-server capacity rows, caps, placement):
//!
//! | region | (beta, lambda) | program |
//! |---|---|---|
//! | alpha-fair line | lambda = (1-beta)/beta, alpha = beta | max sum w_n s_n^(1-alpha)/(1-alpha): on one server entry (or proportional entries, pooled exactly) by projected Newton on the resource prices ([`solve_alpha_dual`]); otherwise power cones (t <= s^(1-alpha) for alpha < 1, t >= s^(1-alpha) for alpha > 1); alpha = 1: max sum w_n log s_n, exponential cones |
//! | A | 0 < beta < 1, lambda > (1-beta)/beta | on one server entry (or proportional entries) the dual ([`solve_region_dual`]); otherwise max z, z <= U^theta S^(1-theta), theta = 1/(beta (1+lambda)); power cones |
//! | B | beta > 1, lambda < (1-beta)/beta | on one server entry (or proportional entries) the dual ([`solve_region_dual`]); otherwise min z/beta + kappa b, y_n <= log s_n, sum w_n exp((1-beta) y_n - z) <= 1, b <= log S; exponential cones |
//! | N | the rest of the non-degenerate plane | not concave: global 1-D search over S with certified envelopes ([`region_n`]) |
//! | degenerate | sgn(1-beta) lambda < 0 | no maximiser: refused |
//! | scale-free | lambda = 0 | maximisers form a ray: refused |
//! | trivial | beta = 1 | f = N S^lambda: maximise S (an LP), said in the output |
//!
//! Shares are divided by one common constant (the largest share a user
//! reaches alone) so they lie in (0, 1]: M changes by a constant, the
//! maximiser does not, and the cones stay well scaled.
//!
//! Every answer carries a certificate computed from the allocation alone:
//! the Frank-Wolfe gap max_{x' feasible} grad M(x) . (x' - x), one LP. Where
//! M is concave (the line, region A) it bounds M* - M(x); in region B it is
//! the stationarity (KKT) residual of a program that is convex in log s.
#![deny(missing_docs)]

mod cones;
mod line;
mod params;
mod polish;
mod polytope;
mod region;
pub mod region_n;

pub use cones::*;
pub use line::*;
pub use params::*;
pub(crate) use polish::*;
pub(crate) use polytope::*;
pub use region::*;

pub use leontief_audit::first_order::{frank_wolfe_gap, frank_wolfe_gap_log};
pub use leontief_core::fairness::{gradient, merit, omega, Family};
use leontief_core::{Allocation, Instance};
use leontief_model::LpBackend;

/// Solve the family at (beta, lambda) on a conic backend (Clarabel).
///
/// ```
/// use leontief_fds::{solve, Family};
/// let instance = leontief_core::Instance::from_json_str(r#"{
///     "resources": ["cpu", "mem"],
///     "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
///     "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]
/// }"#).unwrap();
/// // beta = 2 with lambda = (1 - beta)/beta: the alpha-fair line at alpha = 2.
/// let clarabel = leontief_clarabel::Clarabel::default();
/// let a = solve(&clarabel, &instance, Family::Fds, 2.0, -0.5).unwrap();
/// assert!((a.user_tasks[0] - 10.0).abs() < 1e-5, "{:?}", a.user_tasks);
/// ```
pub fn solve<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    beta: f64,
    lambda: f64,
) -> Result<Allocation, FdsError> {
    let region = match classify(beta, lambda)? {
        Classified::Trivial => None,
        Classified::Region(Region::N) => {
            return region_n::solve(backend, instance, family, beta, lambda)
        }
        Classified::Region(Region::AlphaFair) => {
            return solve_alpha(backend, instance, family, beta)
        }
        Classified::Region(r @ (Region::A | Region::B)) => {
            if let Some(a) = solve_region_dual(instance, family, beta, lambda) {
                return Ok(a);
            }
            Some(r)
        }
    };
    solve_program(backend, instance, family, beta, lambda, region, None)
}

/// The alpha-fair member (beta = alpha, lambda = (1-alpha)/alpha), alpha >
/// 0; alpha = 1 is proportional fairness, max sum w_n log s_n (the limit of
/// the line as beta -> 1, which beta = 1 itself is not).
pub fn solve_alpha<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    family: Family,
    alpha: f64,
) -> Result<Allocation, FdsError> {
    if !alpha.is_finite() || alpha <= 0.0 {
        return Err(FdsError::Refused(format!(
            "--alpha {alpha}: must be finite and > 0"
        )));
    }
    if alpha > MAX_BETA {
        return Err(FdsError::Refused(format!(
            "--alpha {alpha}: must be at most {MAX_BETA}: beyond it the terms s^(1-alpha) of users whose shares differ by a factor of 10 span more than floating point holds and no solver here is reliable (at alpha = 100 Clarabel reported a wrong answer as optimal); as alpha grows the alpha-fair allocation tends to max-min fairness: --mechanism drfh for fds"
        )));
    }
    // One server entry: the m-dimensional dual (as bbf-eg); the cone
    // program where it does not apply or does not reach `optimal`.
    if let Some(a) = solve_alpha_dual(instance, family, alpha) {
        if a.status == leontief_core::Status::Optimal {
            return Ok(a);
        }
    }
    solve_alpha_conic(backend, instance, family, alpha)
}

/// How the dual saw the servers: one entry, or proportional entries pooled
/// exactly (c_i = t_i C: any pooled allocation splits as x_{n,i} = x_n t_i).
fn entries_note(instance: &Instance) -> String {
    match instance.num_entries() {
        1 => "one server entry".into(),
        k => format!(
            "{k} server entries with proportional capacities, pooled exactly; tasks split in proportion to capacity"
        ),
    }
}
