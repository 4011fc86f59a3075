//! Bottleneck-based fairness (Dolev, Feitelson, Halpern, Kupferman, Linial;
//! 003), exactly as in `docs/mechanisms.md`, "Bottleneck-based fairness".
//!
//! Everything here works on a [`Pool`]: the servers pooled into one of
//! capacity C_j = sum_i c_{i,j}, requests r_{n,j} = T_n D_{n,j} / C_j for a
//! user with a task cap T_n (x_n in [0, 1] is the fraction granted) and
//! r_{n,j} = D_{n,j} / C_j without one (x_n >= 0 is then its task count,
//! with no x_n <= 1 bound), entitlements e_n = w_n / sum w.
//!
//! * [`check`]: the BBF test, condition (2), on any allocation, computed
//!   from the allocation alone;
//! * [`eg`]: the Eisenberg-Gale program on exponential cones, polished by
//!   Newton on its dual, with the Fisher-market prices and a duality gap;
//! * [`ode`]: the paper's ODE trajectory (Sec. 5.3, corrected), which is
//!   the log-barrier central path of the Eisenberg-Gale program;
//! * [`enumerate`]: every bottleneck set of a BBF allocation by the subset
//!   LPs of Sec. 6, in parallel, sharded, with the dimension of each set's
//!   polytope.
#![deny(missing_docs)]

pub mod eg;
pub mod enumerate;
pub mod ode;

use leontief_core::Instance;

/// The instance cannot be posed as a BBF problem (bad input for BBF).
#[derive(Debug, thiserror::Error)]
pub enum BbfError {
    /// A user demands a resource no server has: it can run nothing, and
    /// condition (2) then has no solution.
    #[error("{at} {reason}")]
    Input {
        /// JSON path of the entry.
        at: String,
        /// Why.
        reason: String,
    },
    /// A parameter is out of range.
    #[error("{0}")]
    Parameter(String),
    /// The backend could not run.
    #[error(transparent)]
    Backend(#[from] leontief_model::BackendError),
}

/// The pooled BBF problem.
#[derive(Debug, Clone)]
pub struct Pool {
    /// Resource names.
    pub resources: Vec<String>,
    /// User names.
    pub users: Vec<String>,
    /// r_{n,j}, row-major N x m.
    pub r: Vec<f64>,
    /// Entitlements e_n = w_n / sum w.
    pub e: Vec<f64>,
    /// Upper bound of x_n: 1 for a capped user, +inf otherwise.
    pub ub: Vec<f64>,
    /// Tasks per unit of x_n: T_n for a capped user, 1 otherwise.
    pub unit: Vec<f64>,
    /// True when the instance had more than one server (pooled for BBF).
    pub pooled: bool,
    /// True when the instance had placement lists (ignored when pooled).
    pub placement_ignored: bool,
    /// The utility exponent of [`eg`]'s separable program: 1 is
    /// Eisenberg-Gale (e_n log x_n); otherwise e_n x_n^(1-alpha)/(1-alpha),
    /// the alpha-fair line on one pool (e_n then holds the coefficient).
    pub alpha: f64,
    /// A linear term d_n x_n added to user n's utility (empty: none); with
    /// it [`eg`] solves the separable programs of FDS regions A and B.
    pub lin: Vec<f64>,
}

impl Pool {
    /// Pool an instance. A user demanding a resource of total capacity 0 is
    /// refused: it can run no task and no BBF allocation exists.
    pub fn new(instance: &Instance) -> Result<Pool, BbfError> {
        let m = instance.num_resources();
        let cap = instance.total_capacity();
        let wsum: f64 = instance.users().iter().map(|u| u.weight).sum();
        let mut r = Vec::with_capacity(instance.num_users() * m);
        let (mut e, mut ub, mut unit) = (Vec::new(), Vec::new(), Vec::new());
        for n in instance.user_ids() {
            let u = instance.user(n);
            let t = u.tasks.unwrap_or(1.0);
            for j in 0..m {
                let d = u.demand[j];
                if d > 0.0 && cap[j] <= 0.0 {
                    return Err(BbfError::Input {
                        at: format!("users[{}].demand[{j}]", n.0),
                        reason: format!(
                            "is positive but no server has any {}: the user can run no task, and condition (2) of BBF (x_n = 1 or x_n r_(n,j) >= e_n on a bottleneck) then has no solution",
                            instance.resources()[j]
                        ),
                    });
                }
                r.push(if d > 0.0 { t * d / cap[j] } else { 0.0 });
            }
            e.push(u.weight / wsum);
            ub.push(if u.tasks.is_some() {
                1.0
            } else {
                f64::INFINITY
            });
            unit.push(t);
        }
        Ok(Pool {
            resources: instance.resources().to_vec(),
            users: instance.users().iter().map(|u| u.name.clone()).collect(),
            r,
            e,
            ub,
            unit,
            pooled: instance.num_physical_servers() > 1,
            placement_ignored: instance.has_placement(),
            alpha: 1.0,
            lin: Vec::new(),
        })
    }

    /// Build a pool from requests directly (unit capacities): `r[n]` is
    /// user n's request row, `e` the entitlements (normalised here), `capped`
    /// whether x_n <= 1 applies.
    pub fn from_requests(r: &[Vec<f64>], e: &[f64], capped: &[bool]) -> Pool {
        let m = r.first().map_or(0, |row| row.len());
        let esum: f64 = e.iter().sum();
        Pool {
            resources: (1..=m).map(|j| format!("r{j}")).collect(),
            users: (1..=r.len()).map(|n| format!("u{n}")).collect(),
            r: r.iter().flatten().copied().collect(),
            e: e.iter().map(|x| x / esum).collect(),
            ub: capped
                .iter()
                .map(|&c| if c { 1.0 } else { f64::INFINITY })
                .collect(),
            unit: vec![1.0; r.len()],
            pooled: false,
            placement_ignored: false,
            alpha: 1.0,
            lin: Vec::new(),
        }
    }

    /// The random instances of Table 1 of 003: `users` users with requests
    /// r_{n,j} ~ U[0, 1] on `m` unit resources, equal entitlements, every
    /// user capped (x_n <= 1). Deterministic in `seed`.
    pub fn random(users: usize, m: usize, seed: u64) -> Pool {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let r: Vec<Vec<f64>> = (0..users)
            .map(|_| (0..m).map(|_| rng.gen::<f64>()).collect())
            .collect();
        Pool::from_requests(&r, &vec![1.0; users], &vec![true; users])
    }

    /// d_n, the linear term of user n's utility (0 when none).
    #[inline]
    pub fn lin(&self, n: usize) -> f64 {
        self.lin.get(n).copied().unwrap_or(0.0)
    }

    /// Number of users N.
    pub fn num_users(&self) -> usize {
        self.e.len()
    }

    /// Number of resources m.
    pub fn num_resources(&self) -> usize {
        self.resources.len()
    }

    /// r_{n,j}.
    #[inline]
    pub fn req(&self, n: usize, j: usize) -> f64 {
        self.r[n * self.num_resources() + j]
    }

    /// User n's request row.
    #[inline]
    pub fn row(&self, n: usize) -> &[f64] {
        let m = self.num_resources();
        &self.r[n * m..(n + 1) * m]
    }

    /// Loads sum_n x_n r_{n,j}.
    pub fn loads(&self, x: &[f64]) -> Vec<f64> {
        let m = self.num_resources();
        let mut l = vec![0.0; m];
        for (n, &xn) in x.iter().enumerate() {
            if xn != 0.0 {
                for (lj, rj) in l.iter_mut().zip(self.row(n)) {
                    *lj += xn * rj;
                }
            }
        }
        l
    }

    /// Resources some allocation can saturate: sum_n ub_n r_{n,j} >= 1.
    /// A resource outside this set has load < 1 in every feasible
    /// allocation, so it is never a bottleneck.
    pub fn saturable(&self) -> Vec<usize> {
        (0..self.num_resources())
            .filter(|&j| {
                let most: f64 = (0..self.num_users())
                    .map(|n| {
                        let r = self.req(n, j);
                        if r > 0.0 {
                            self.ub[n] * r
                        } else {
                            0.0
                        }
                    })
                    .sum();
                most >= 1.0
            })
            .collect()
    }

    /// Task counts x_n * unit_n.
    pub fn tasks(&self, x: &[f64]) -> Vec<f64> {
        x.iter().zip(&self.unit).map(|(x, u)| x * u).collect()
    }

    /// Fractions from task counts.
    pub fn fractions(&self, tasks: &[f64]) -> Vec<f64> {
        tasks.iter().zip(&self.unit).map(|(t, u)| t / u).collect()
    }

    /// Per-entry tasks for an [`leontief_core::Allocation`] on `instance`:
    /// x_n * unit_n split over the entries in proportion to each entry's
    /// capacity of the user's dominant resource (the pooled model does not
    /// place tasks; the output says so).
    pub fn split(&self, instance: &Instance, x: &[f64]) -> Vec<Vec<f64>> {
        instance.split_pooled(&self.tasks(x))
    }
}

pub use leontief_audit::bbf::{BbfCheck, UserCheck};

/// Run the BBF test on fractions `x` (x_n in units of the pool: the
/// fraction granted for capped users, tasks otherwise): condition (2), by
/// leontief-audit.
pub fn check(pool: &Pool, x: &[f64], tolerance: f64) -> BbfCheck {
    leontief_audit::bbf::condition2(&pool.resources, &pool.r, &pool.e, &pool.ub, x, tolerance)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The 4x4 cyclic example of 003 Sec. 6.
    pub(crate) fn cyclic4() -> Pool {
        Pool::from_requests(
            &[
                vec![1.0, 1.0, 0.0, 1.0],
                vec![1.0, 1.0, 1.0, 0.0],
                vec![0.0, 1.0, 1.0, 1.0],
                vec![1.0, 0.0, 1.0, 1.0],
            ],
            &[1.0; 4],
            &[true; 4],
        )
    }

    #[test]
    fn the_papers_solutions_pass_and_a_perturbation_fails() {
        let p = cyclic4();
        let c = check(&p, &[1.0 / 3.0; 4], 1e-12);
        assert!(c.holds, "{c:?}");
        assert_eq!(c.bottlenecks.len(), 4);
        let c = check(&p, &[0.25, 0.5, 0.25, 0.25], 1e-12);
        assert!(c.holds);
        assert_eq!(c.bottleneck_ids, vec![0, 1, 2]);
        // Below every bottleneck's entitlement: user 1 gets less than 1/4
        // of r1 and r2 and nothing else is tight.
        let c = check(&p, &[0.2, 0.2, 0.2, 0.2], 1e-12);
        assert!(!c.holds);
        assert!(c.bottlenecks.is_empty());
        assert!((c.worst_violation - 0.25).abs() < 1e-15);
        // Overloaded is not feasible.
        let c = check(&p, &[0.4, 0.4, 0.4, 0.4], 1e-12);
        assert!(!c.holds && c.infeasibility > 0.1);
    }

    #[test]
    fn the_n_equals_m_family_fails_at_t_equal_1() {
        // r_ii = 0, r_ij = 1, N = m = 3; the paper's t = 1 member gives one
        // user x = 1/N on the only bottleneck, which that user does not use.
        let r: Vec<Vec<f64>> = (0..3)
            .map(|i| (0..3).map(|j| if i == j { 0.0 } else { 1.0 }).collect())
            .collect();
        let p = Pool::from_requests(&r, &[1.0; 3], &[true; 3]);
        // J = {r1}: x_2 + x_3 = 1, x_1 = 1/3 (does not request r1).
        let c = check(&p, &[1.0 / 3.0, 0.5, 0.5], 1e-12);
        assert!(!c.holds);
        assert!(c.users[0].witness.is_none());
    }
}
