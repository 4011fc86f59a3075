//! What the servers allow: how far a direction may go, which users can
//! no longer grow, and the tasks on each server.
//!
//! On the pooled servers (`hdrf`, and `hdrfh` where pooling loses
//! nothing) these are closed forms over the cluster's totals. Over
//! heterogeneous servers (`hdrfh`) each is one LP over the user-server
//! pairs the placement lists allow: the step maximises theta with every
//! user keeping at least its tasks; the stuck users are those no optimum
//! of "raise anyone by up to one task while everyone keeps theirs" can
//! raise (solved again without the users found able to rise, until none
//! is); the split places exactly the tasks found.

use crate::HierError;
use leontief_core::{Instance, ServerId, Status, UserId};
use leontief_model::{Col, LoadedLp, LpBackend, ProblemBuilder, Row, Sense};

/// Relative slack kept below an LP's step, so that the next LP, which
/// asks every user for at least its tasks, stays feasible.
const STEP_SLACK: f64 = 1e-9;
/// Every LP lets the users keep their tasks to this relative tolerance,
/// shared among them (room for the backend's own feasibility tolerance,
/// so that a point one LP found feasible is never infeasible for the
/// next).
const KEEP: f64 = 1e-9;
/// The most a candidate rises in the "who can still grow" LP (tasks,
/// relative to max(1, x)), and at least RISE_STEP_SHARE of the cluster in
/// dominant-share units.
const RISE_STEP: f64 = 1e-3;
/// See [`RISE_STEP`].
const RISE_STEP_SHARE: f64 = 1e-5;
/// A rise counts from this many dominant-share units: ten times below
/// the verification's rise tolerance (1e-6), far above what the users'
/// room and the step's slack free (about 1e-9).
const RISE: f64 = 1e-7;
/// A resource used to within this (relative) of its capacity is full.
pub(crate) const FULL: f64 = 1e-9;

/// The servers' side of the filling.
pub(crate) enum Capacity<'a, B: LpBackend> {
    /// One pool of capacity C.
    Pooled { instance: &'a Instance },
    /// Every server entry, with placement.
    Servers(Box<Servers<'a, B>>),
}

/// One LP over the user-server pairs the placement lists allow, loaded
/// once and changed only in numbers between solves (each re-solve starts
/// from the last basis): columns y[u][k], theta (an entry on every user
/// row, its rate) and z[u] (a user's rise); capacity rows, one row per
/// user `sum_k y[u][k] - rate_u theta - z_u >= x_u (1 - KEEP / N)`.
pub(crate) struct Servers<'a, B: LpBackend> {
    instance: &'a Instance,
    highs: &'a B,
    lp: Option<B::Loaded>,
    cols: Vec<Vec<(ServerId, Col)>>,
    user_row: Vec<Row>,
    theta: Col,
    z: Vec<Col>,
    /// LPs solved.
    lps: usize,
    /// The worst status of those LPs.
    status: Status,
    /// The backend's own words for the first LP that did not end optimal.
    raw: Option<String>,
    /// The last optimal solution's columns (a placement of at least the
    /// current tasks, to KEEP).
    last: Option<Vec<f64>>,
}

impl<'a, B: LpBackend> Servers<'a, B> {
    pub fn new(instance: &'a Instance, highs: &'a B) -> Servers<'a, B> {
        Servers {
            instance,
            highs,
            lp: None,
            cols: Vec::new(),
            user_row: Vec::new(),
            theta: Col(0),
            z: Vec::new(),
            lps: 0,
            status: Status::Optimal,
            raw: None,
            last: None,
        }
    }

    /// The loaded LP, built on first use.
    fn lp(&mut self) -> Result<&mut B::Loaded, HierError> {
        if self.lp.is_none() {
            let (mut b, cols, user_row) = pairs(self.instance, 0.0);
            let theta = b.add_col(0.0, 0.0, 0.0, user_row.iter().map(|&r| (r, 0.0)));
            let z = user_row
                .iter()
                .map(|&r| b.add_col(0.0, 0.0, 0.0, [(r, -1.0)]))
                .collect();
            let mut lp = self.highs.load(b.build())?;
            lp.prefer_warm_primal()?;
            self.lp = Some(lp);
            self.cols = cols;
            self.user_row = user_row;
            self.theta = theta;
            self.z = z;
        }
        Ok(self.lp.as_mut().expect("built above"))
    }

    /// Every user keeps `x` (to KEEP); theta and the rises off.
    fn keep(&mut self, x: &[f64]) -> Result<(), HierError> {
        self.lp()?;
        let rows = self.user_row.clone();
        let (theta, z) = (self.theta, self.z.clone());
        // What every user may give up, all added, stays KEEP of one
        // user's tasks: no user rises out of the others' room.
        let keep = KEEP / rows.len().max(1) as f64;
        let lp = self.lp()?;
        for (u, &r) in rows.iter().enumerate() {
            lp.set_row_bounds(r, x[u] * (1.0 - keep), f64::INFINITY)?;
            lp.set_coefficient(r, theta, 0.0)?;
        }
        lp.set_cost(theta, 0.0)?;
        lp.set_col_bounds(theta, 0.0, 0.0)?;
        for &c in &z {
            lp.set_cost(c, 0.0)?;
            lp.set_col_bounds(c, 0.0, 0.0)?;
        }
        Ok(())
    }

    fn solve(&mut self) -> Result<Option<leontief_model::Solution>, HierError> {
        let mut sol = self.lp()?.solve()?;
        self.lps += 1;
        if sol.status != Status::Optimal {
            // Once more from scratch, on the same numbers: a warm primal
            // simplex without presolve can end without a status where a
            // cold solve does not. A loaded LP that ends optimal then
            // replaces the warm one.
            let problem = self.lp()?.problem().clone();
            let mut fresh = self.highs.load(problem)?;
            let again = fresh.solve()?;
            self.lps += 1;
            if again.status == Status::Optimal {
                fresh.prefer_warm_primal()?;
                self.lp = Some(fresh);
                sol = again;
            }
        }
        if sol.status != Status::Optimal {
            self.status = worse(self.status, sol.status);
            self.raw.get_or_insert_with(|| {
                format!(
                    "LP {} of the filling (over {} users' pairs) ended {} after {:.1} s",
                    self.lps,
                    self.user_row.len(),
                    sol.raw_status,
                    sol.seconds
                )
            });
            return Ok(None);
        }
        self.last = Some(sol.x.clone());
        Ok(Some(sol))
    }

    /// The candidates that can rise by `step(u)` on a server they may use
    /// where the last placement leaves room for it (no LP needed): the
    /// placement plus that step is feasible and every other user keeps
    /// its tasks.
    fn room(&self, candidates: &[usize], step: &dyn Fn(usize) -> f64) -> Vec<bool> {
        let Some(y) = &self.last else {
            return vec![false; candidates.len()];
        };
        let i = self.instance;
        let m = i.num_resources();
        let mut used = vec![0.0; i.num_entries() * m];
        for (u, cols) in self.cols.iter().enumerate() {
            let d = &i.users()[u].demand;
            for &(e, c) in cols {
                let v = y[c.0];
                if v > 0.0 {
                    for r in 0..m {
                        used[e.0 * m + r] += v * d[r];
                    }
                }
            }
        }
        candidates
            .iter()
            .map(|&u| {
                let d = &i.users()[u].demand;
                self.cols[u].iter().any(|&(e, _)| {
                    let cap = i.class_capacities(e);
                    (0..m).all(|r| {
                        d[r] == 0.0 || used[e.0 * m + r] + step(u) * d[r] <= cap[r] * (1.0 - FULL)
                    })
                })
            })
            .collect()
    }
}

/// The pairs' LP: capacity rows, one row per user (`0 <= sum_k y[u][k]`),
/// columns y[u][k] of cost `cost` over the pairs placement allows.
#[allow(clippy::type_complexity)]
fn pairs(instance: &Instance, cost: f64) -> (ProblemBuilder, Vec<Vec<(ServerId, Col)>>, Vec<Row>) {
    let m = instance.num_resources();
    let mut b = ProblemBuilder::new(Sense::Maximise);
    let cap_row: Vec<Vec<Row>> = instance
        .server_ids()
        .map(|i| {
            instance
                .class_capacities(i)
                .iter()
                .map(|&c| b.add_row(f64::NEG_INFINITY, c))
                .collect()
        })
        .collect();
    let user_row: Vec<Row> = (0..instance.num_users())
        .map(|_| b.add_row(0.0, f64::INFINITY))
        .collect();
    let mut cols = Vec::with_capacity(instance.num_users());
    for n in instance.user_ids() {
        let d = &instance.user(n).demand;
        let mut mine = Vec::new();
        for i in instance.runnable_entries(n, true) {
            let entries: Vec<(Row, f64)> = (0..m)
                .filter(|&r| d[r] > 0.0)
                .map(|r| (cap_row[i.0][r], d[r]))
                .chain(std::iter::once((user_row[n.0], 1.0)))
                .collect();
            mine.push((i, b.add_col(cost, 0.0, f64::INFINITY, entries)));
        }
        cols.push(mine);
    }
    (b, cols, user_row)
}

fn worse(a: Status, b: Status) -> Status {
    if a == Status::Optimal {
        b
    } else {
        a
    }
}

impl<B: LpBackend> Capacity<'_, B> {
    /// LPs solved so far.
    pub fn lps(&self) -> usize {
        match self {
            Capacity::Pooled { .. } => 0,
            Capacity::Servers(s) => s.lps,
        }
    }

    /// What the backend said where an LP did not end optimal.
    pub fn backend_status(&self) -> Option<String> {
        match self {
            Capacity::Pooled { .. } => None,
            Capacity::Servers(s) => s.raw.clone(),
        }
    }

    /// The worst LP status so far (optimal on the pool).
    pub fn status(&self) -> Status {
        match self {
            Capacity::Pooled { .. } => Status::Optimal,
            Capacity::Servers(s) => s.status,
        }
    }

    /// The largest theta <= `upper` with `x + theta rate` placeable, or
    /// `None` when an LP did not end optimal (its status kept).
    pub fn step(&mut self, x: &[f64], rate: &[f64], upper: f64) -> Result<Option<f64>, HierError> {
        match self {
            Capacity::Pooled { instance } => {
                let total = instance.total_capacity();
                let mut t = upper;
                for (r, &c) in total.iter().enumerate() {
                    let (mut used, mut grow) = (0.0, 0.0);
                    for (u, user) in instance.users().iter().enumerate() {
                        used += user.demand[r] * x[u];
                        grow += user.demand[r] * rate[u];
                    }
                    if grow > 0.0 {
                        t = t.min(((c - used) / grow).max(0.0));
                    }
                }
                Ok(Some(t))
            }
            Capacity::Servers(s) => {
                s.keep(x)?;
                let rows = s.user_row.clone();
                let theta = s.theta;
                let lp = s.lp()?;
                for (u, &r) in rows.iter().enumerate() {
                    if rate[u] > 0.0 {
                        lp.set_coefficient(r, theta, -rate[u])?;
                    }
                }
                lp.set_cost(theta, 1.0)?;
                lp.set_col_bounds(theta, 0.0, upper)?;
                let Some(sol) = s.solve()? else {
                    return Ok(None);
                };
                let t = sol.x[theta.0];
                Ok(Some(if t >= upper {
                    upper
                } else {
                    (t * (1.0 - STEP_SLACK)).max(0.0)
                }))
            }
        }
    }

    /// Which of `candidates` cannot grow while every user keeps its
    /// tasks (true: stuck), or `None` when an LP did not end optimal.
    pub fn stuck(
        &mut self,
        x: &[f64],
        candidates: &[usize],
    ) -> Result<Option<Vec<bool>>, HierError> {
        match self {
            Capacity::Pooled { instance } => {
                let total = instance.total_capacity();
                let full: Vec<bool> = total
                    .iter()
                    .enumerate()
                    .map(|(r, &c)| {
                        let used: f64 = instance
                            .users()
                            .iter()
                            .zip(x)
                            .map(|(u, &x)| u.demand[r] * x)
                            .sum();
                        used >= c * (1.0 - FULL)
                    })
                    .collect();
                Ok(Some(
                    candidates
                        .iter()
                        .map(|&u| {
                            instance.users()[u]
                                .demand
                                .iter()
                                .zip(&full)
                                .any(|(&d, &f)| d > 0.0 && f)
                        })
                        .collect(),
                ))
            }
            Capacity::Servers(s) => {
                s.keep(x)?;
                let z = s.z.clone();
                // Each candidate may rise by at most a small step, worth 1
                // in the objective: an optimum then raises every user that
                // can rise alongside the others, not only the cheapest,
                // and one that raises nobody still proves them all stuck.
                let instance = s.instance;
                let mu = |u: usize| instance.mu(UserId(u));
                let step = |u: usize| (RISE_STEP * x[u].max(1.0)).max(RISE_STEP_SHARE / mu(u));
                // Those with room on a server of theirs in the last
                // placement can rise without an LP.
                let free = s.room(candidates, &step);
                if free.iter().all(|&f| f) {
                    return Ok(Some(vec![false; candidates.len()]));
                }
                {
                    let lp = s.lp()?;
                    for (&u, &f) in candidates.iter().zip(&free) {
                        if !f {
                            lp.set_cost(z[u], 1.0 / step(u))?;
                            lp.set_col_bounds(z[u], 0.0, step(u))?;
                        }
                    }
                }
                let mut stuck: Vec<bool> = free.iter().map(|&f| !f).collect();
                loop {
                    let Some(sol) = s.solve()? else {
                        return Ok(None);
                    };
                    let mut found = false;
                    let lp = s.lp()?;
                    for (j, &u) in candidates.iter().enumerate() {
                        if stuck[j] && sol.x[z[u].0] * mu(u) > RISE {
                            stuck[j] = false;
                            found = true;
                            lp.set_cost(z[u], 0.0)?;
                            lp.set_col_bounds(z[u], 0.0, 0.0)?;
                        }
                    }
                    if !found || stuck.iter().all(|&s| !s) {
                        return Ok(Some(stuck));
                    }
                }
            }
        }
    }

    /// Tasks per server entry for totals `x`: each row sums to at most
    /// `x` and as close to it as the servers allow (the verification
    /// compares the sums with the trace), or `None` when the LP did not
    /// end optimal.
    pub fn split(&mut self, x: &[f64]) -> Result<Option<Vec<Vec<f64>>>, HierError> {
        match self {
            Capacity::Pooled { instance } => Ok(Some(instance.split_pooled(x))),
            Capacity::Servers(s) => {
                // Every user between 0 and its tasks, as many placed as
                // fit: its own LP (the filling's keeps rows open above).
                let instance = s.instance;
                let k = instance.num_entries();
                let (b, cols, user_row) = pairs(instance, 1.0);
                let mut p = b.build();
                for (u, r) in user_row.iter().enumerate() {
                    p.row_upper[r.0] = x[u];
                }
                let sol = s.highs.solve(p)?;
                s.lps += 1;
                if sol.status != Status::Optimal {
                    s.status = worse(s.status, sol.status);
                    return Ok(None);
                }
                Ok(Some(
                    (0..instance.num_users())
                        .map(|u| {
                            let mut row = vec![0.0; k];
                            for &(i, c) in &cols[u] {
                                row[i.0] = sol.x[c.0].max(0.0);
                            }
                            row
                        })
                        .collect(),
                ))
            }
        }
    }
}

/// True when user `n` can run somewhere at all.
pub(crate) fn can_run(instance: &Instance, n: UserId, pooled: bool) -> bool {
    instance.mu(n).is_finite() && (pooled || instance.runnable_entries(n, true).next().is_some())
}
