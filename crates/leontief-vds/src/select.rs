//! The PS-DSF allocation with the most total tasks (`--select max-tasks`),
//! an exact MILP on HiGHS over Definition 4:
//!
//! ```text
//!   maximise sum_n X_n
//!   X_n = sum_i x_{n,i},  X_n <= T_n,  capacity rows per server and resource,
//!   x_{n,i} <= G_{n,i} h_{n,i}                      (h: n holds resources on i)
//!   sum_r D_{n,r} x_{n,i}... >= c_{i,r} sat_{i,r}   (sat: r saturated on i)
//!   sum_r z_{n,i,r} + k_n >= 1                        (a witness r, or n at its cap: X_n >= T_n k_n)
//!   z_{n,i,r} <= sat_{i,r}
//!   L_{m,i} - L_{n,i} <= M_{m,i} (2 - z_{n,i,r} - h_{m,i})   for m != n holding r on i,
//! ```
//!
//! with L_{m,i} = X_m / (gamma_{m,i} w_m) the virtual dominant share per
//! weight and M_{m,i} its largest value; all binaries. The MILP's pattern
//! (which users hold which server, which resource witnesses each pair) is
//! then fixed and the LP re-solved, so the printed allocation is a simplex
//! vertex, not a branch-and-bound point within HiGHS's MIP tolerances; the
//! Definition-4 certificate is checked on it as on any PS-DSF output.
//!
//! Size: one comparison row per (n, m, i, r); instances with more than
//! [`MAX_TASKS_LIMIT`] of them are refused (the MILP grows as N^2 K m).

use crate::Eligibility;
use leontief_core::{Instance, ResourceId, ServerId};
use leontief_highs::Highs;
use leontief_model::{BackendError, Col, LoadedLp, LpBackend, ProblemBuilder, Sense, Status};

const INF: f64 = f64::INFINITY;

/// The largest number of big-M comparison rows (pairs of users x servers x
/// resources) `max_tasks` accepts.
pub const MAX_TASKS_LIMIT: usize = 20_000;

/// What [`max_tasks`] returns.
#[derive(Debug, Clone)]
pub struct MaxTasksOutcome {
    /// The MILP's status (the re-solved LP's when that ran and is worse).
    pub status: Status,
    /// HiGHS's own words.
    pub raw_status: String,
    /// x_{n,i} (empty without a solution).
    pub tasks: Vec<Vec<f64>>,
    /// Binary variables and comparison rows of the MILP.
    pub binaries: usize,
    /// Comparison rows.
    pub comparisons: usize,
    /// Seconds in the MILP and the LP.
    pub seconds: f64,
}

/// Count the comparison rows, or say why the instance is refused.
pub fn comparisons(instance: &Instance) -> usize {
    let elig = Eligibility::new(instance);
    let users = instance.users();
    let m = instance.num_resources();
    elig.on_server
        .iter()
        .map(|list| {
            (0..m)
                .map(|r| {
                    let holders = list
                        .iter()
                        .filter(|&&(n, _)| users[n].demand[r] > 0.0)
                        .count();
                    holders * holders.saturating_sub(1)
                })
                .sum::<usize>()
        })
        .sum()
}

/// The PS-DSF allocation with the most total tasks (see the module docs).
/// `Err` only when HiGHS could not run; an instance beyond the limit must
/// be refused by the caller with [`comparisons`].
pub fn max_tasks(highs: &Highs, instance: &Instance) -> Result<MaxTasksOutcome, BackendError> {
    let t0 = std::time::Instant::now();
    let users = instance.users();
    let (nu, m, k) = (
        users.len(),
        instance.num_resources(),
        instance.num_entries(),
    );
    let elig = Eligibility::new(instance);
    let c = |i: usize, r: usize| instance.class_capacity(ServerId(i), ResourceId(r));
    let gsum: Vec<f64> = (0..nu)
        .map(|n| {
            elig.on_server
                .iter()
                .flat_map(|l| l.iter().filter(|e| e.0 == n).map(|e| e.1))
                .sum()
        })
        .collect();
    let xmax: Vec<f64> = (0..nu)
        .map(|n| users[n].tasks.map_or(gsum[n], |t| t.min(gsum[n])))
        .collect();
    let mut b = ProblemBuilder::new(Sense::Maximise);
    // Rows.
    let cap_row: Vec<_> = (0..k * m)
        .map(|j| b.add_row(-INF, c(j / m, j % m)))
        .collect();
    let tot_row: Vec<_> = (0..nu).map(|_| b.add_row(0.0, 0.0)).collect();
    let capped_row: Vec<_> = (0..nu)
        .map(|n| users[n].tasks.map(|_| b.add_row(0.0, INF)))
        .collect();
    // Per eligible pair: link row, witness row.
    let mut link_row = vec![Vec::new(); k];
    let mut wit_row = vec![Vec::new(); k];
    for i in 0..k {
        for _ in &elig.on_server[i] {
            link_row[i].push(b.add_row(-INF, 0.0));
            wit_row[i].push(b.add_row(1.0, INF));
        }
    }
    // Saturation rows per (i, r) needed by someone.
    let needed = |i: usize, r: usize| {
        elig.on_server[i]
            .iter()
            .any(|&(n, _)| users[n].demand[r] > 0.0)
    };
    let sat_row: Vec<Option<_>> = (0..k * m)
        .map(|j| needed(j / m, j % m).then(|| b.add_row(0.0, INF)))
        .collect();
    // z rows: z_{n,i,r} <= sat_{i,r}; comparison rows.
    struct Z {
        i: usize,
        a: usize, // position of n in on_server[i]
        r: usize,
        row: leontief_model::Row,
        cmp: Vec<(usize, leontief_model::Row, f64)>, // (position of m, row, M)
    }
    let mut zs: Vec<Z> = Vec::new();
    let level = |n: usize, g: f64| 1.0 / (g * users[n].weight);
    for i in 0..k {
        let list = &elig.on_server[i];
        for (a, &(n, _)) in list.iter().enumerate() {
            for r in (0..m).filter(|&r| users[n].demand[r] > 0.0) {
                let row = b.add_row(-INF, 0.0);
                let cmp = list
                    .iter()
                    .enumerate()
                    .filter(|&(bb, &(o, _))| bb != a && users[o].demand[r] > 0.0)
                    .map(|(bb, &(o, go))| {
                        let big = xmax[o] * level(o, go) * 1.01 + 1e-9;
                        (bb, b.add_row(-INF, 2.0 * big), big)
                    })
                    .collect();
                zs.push(Z { i, a, r, row, cmp });
            }
        }
    }
    let comparisons: usize = zs.iter().map(|z| z.cmp.len()).sum();
    // Columns. x_{n,i}.
    let mut xcol = vec![Vec::new(); k];
    for i in 0..k {
        for (a, &(n, g)) in elig.on_server[i].iter().enumerate() {
            let mut e: Vec<(leontief_model::Row, f64)> = (0..m)
                .filter(|&r| users[n].demand[r] > 0.0)
                .map(|r| (cap_row[i * m + r], users[n].demand[r]))
                .collect();
            e.push((tot_row[n], 1.0));
            e.push((link_row[i][a], 1.0));
            for r in 0..m {
                if let (Some(row), true) = (sat_row[i * m + r], users[n].demand[r] > 0.0) {
                    e.push((row, users[n].demand[r]));
                }
            }
            let ub = g.min(users[n].tasks.unwrap_or(INF));
            xcol[i].push(b.add_col(0.0, 0.0, ub, e));
        }
    }
    // X_n: objective, total rows, cap rows, comparisons (as L = X level).
    {
        // Entries of X_n in the comparison rows: +level(m) where m is the
        // other user, -level(n) where n is the witness owner.
        let mut extra: Vec<Vec<(leontief_model::Row, f64)>> = vec![Vec::new(); nu];
        for z in &zs {
            let (n, gn) = elig.on_server[z.i][z.a];
            for &(bb, row, _) in &z.cmp {
                let (o, go) = elig.on_server[z.i][bb];
                extra[o].push((row, level(o, go)));
                extra[n].push((row, -level(n, gn)));
            }
        }
        for n in 0..nu {
            let mut e = vec![(tot_row[n], -1.0)];
            if let Some(row) = capped_row[n] {
                e.push((row, 1.0));
            }
            e.extend(extra[n].iter().copied());
            b.add_col(1.0, 0.0, users[n].tasks.unwrap_or(INF), e);
        }
    }
    let mut binaries: Vec<Col> = Vec::new();
    // k_n.
    for n in 0..nu {
        if let (Some(t), Some(row)) = (users[n].tasks, capped_row[n]) {
            let mut e = vec![(row, -t)];
            for i in 0..k {
                if let Some(a) = elig.on_server[i].iter().position(|e| e.0 == n) {
                    e.push((wit_row[i][a], 1.0));
                }
            }
            binaries.push(b.add_col(0.0, 0.0, 1.0, e));
        }
    }
    // h_{n,i}.
    for i in 0..k {
        for (a, &(n, g)) in elig.on_server[i].iter().enumerate() {
            let ub = g.min(users[n].tasks.unwrap_or(INF));
            let mut e = vec![(link_row[i][a], -ub)];
            for z in zs.iter().filter(|z| z.i == i) {
                for &(bb, row, big) in &z.cmp {
                    if bb == a {
                        e.push((row, big));
                    }
                }
            }
            binaries.push(b.add_col(0.0, 0.0, 1.0, e));
        }
    }
    // sat_{i,r}.
    for j in 0..k * m {
        if let Some(row) = sat_row[j] {
            let e = std::iter::once((row, -c(j / m, j % m))).chain(
                zs.iter()
                    .filter(|z| z.i == j / m && z.r == j % m)
                    .map(|z| (z.row, -1.0)),
            );
            binaries.push(b.add_col(0.0, 0.0, 1.0, e));
        }
    }
    // z_{n,i,r}.
    for z in &zs {
        let mut e = vec![(wit_row[z.i][z.a], 1.0), (z.row, 1.0)];
        for &(_, row, big) in &z.cmp {
            e.push((row, big));
        }
        binaries.push(b.add_col(0.0, 0.0, 1.0, e));
    }
    let problem = b.build();
    let mut mip = highs.load(problem.clone())?;
    mip.set_integer(&binaries)?;
    let sol = mip.solve()?;
    let mut out = MaxTasksOutcome {
        status: sol.status,
        raw_status: sol.raw_status.clone(),
        tasks: Vec::new(),
        binaries: binaries.len(),
        comparisons,
        seconds: 0.0,
    };
    if !sol.status.has_solution() {
        out.seconds = t0.elapsed().as_secs_f64();
        return Ok(out);
    }
    // Fix the pattern and re-solve the LP for a clean vertex.
    let mut lp = highs.load(problem)?;
    let fixed: Vec<f64> = binaries.iter().map(|c| sol.x[c.0].round()).collect();
    lp.set_cols_bounds(&binaries, &fixed, &fixed)?;
    let polished = lp.solve()?;
    let x = if polished.status == Status::Optimal {
        &polished.x
    } else {
        out.raw_status = format!(
            "{}; the LP with the pattern fixed ended {} (the MILP point is printed)",
            sol.raw_status, polished.raw_status
        );
        &sol.x
    };
    let mut tasks = vec![vec![0.0; k]; nu];
    for i in 0..k {
        for (a, &(n, _)) in elig.on_server[i].iter().enumerate() {
            tasks[n][i] = x[xcol[i][a].0].max(0.0);
        }
    }
    out.tasks = tasks;
    out.seconds = t0.elapsed().as_secs_f64();
    Ok(out)
}
