//! The max-min certificate re-checked in exact rational arithmetic.
//!
//! Every number a solver prints is a binary float, hence a dyadic
//! rational; [`exact_certificate`] converts each one exactly
//! (`BigRational::from_float`) and redoes the weak-duality argument of
//! [`crate::max_min_certificate`] with no rounding: primal feasibility
//! (capacities, with server classes as `count` x capacity, placement, caps,
//! signs), dual feasibility (every price >= 0 and finite), and per round
//! the room `C(p) - sum_k u_k X'_k` left above each certified user. The
//! largest room relative to the user's tasks is the proven bound on how far
//! any user could rise above the printed level; it is exact (printed
//! rounded up), so a verdict never depends on floating-point round-off in
//! the check.
//!
//! The shares are those of the mechanism: for DRFH the dominant share
//! `max_r D_{n,r} / C_r` is computed exactly here; for other shares (k-DF,
//! TSF) the floating-point `sigma` given is converted exactly.

use leontief_core::{Instance, RoundPrices, ServerId, Tasks};
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{Signed, ToPrimitive, Zero};
use serde::Serialize;

/// The result of [`exact_certificate`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExactCheck {
    /// Primal and dual feasibility hold exactly (capacities within
    /// `feasibility`), and every user is proved within `tolerance`.
    pub ok: bool,
    /// Rounds checked.
    pub rounds: usize,
    /// Runnable pairs read (over all rounds).
    pub pairs: usize,
    /// The proven bound: no user can rise by more than this fraction of
    /// its tasks while the others keep their rounds' bounds (the largest
    /// exact relative room, rounded up; 0 is exact optimality).
    pub proven_rise_bound: f64,
    /// The largest capacity use above capacity, relative to the capacity
    /// (exact, rounded up; 0 when within every capacity exactly).
    pub capacity_excess: f64,
    /// Prices that are negative or not finite (dual infeasible).
    pub negative_prices: usize,
    /// Why not, at most 20 lines.
    pub violations: Vec<String>,
}

fn q(x: f64) -> BigRational {
    BigRational::from_float(x).unwrap_or_else(BigRational::zero)
}

/// `x` as an f64 no smaller than `x`.
fn up(x: &BigRational) -> f64 {
    let f = x.to_f64().unwrap_or(f64::INFINITY);
    if f.is_finite() && q(f) < *x {
        f.next_up()
    } else {
        f
    }
}

/// Re-check a max-min certificate exactly (see the module docs). `sigma`
/// is used where `dominant` is false; with `dominant` the shares are the
/// exact dominant shares. `tasks.get(n, i)` are the allocation's entries,
/// `user_tasks` their row sums as printed.
#[allow(clippy::too_many_arguments)]
pub fn exact_certificate(
    instance: &Instance,
    dominant: bool,
    sigma: &[f64],
    tasks: &Tasks,
    user_tasks: &[f64],
    frozen_round: &[usize],
    rounds: &[RoundPrices],
    placement: bool,
    feasibility: f64,
    tolerance: f64,
) -> ExactCheck {
    let (k, m, nu) = (
        instance.num_entries(),
        instance.num_resources(),
        instance.num_users(),
    );
    let mut out = ExactCheck {
        ok: true,
        rounds: rounds.len(),
        pairs: 0,
        proven_rise_bound: 0.0,
        capacity_excess: 0.0,
        negative_prices: 0,
        violations: Vec::new(),
    };
    let fail = |out: &mut ExactCheck, why: String| {
        out.ok = false;
        if out.violations.len() < 20 {
            out.violations.push(why);
        }
    };
    if sigma.len() != nu
        || tasks.users() != nu
        || user_tasks.len() != nu
        || frozen_round.len() != nu
    {
        fail(
            &mut out,
            "sigma, tasks or rounds do not have one entry per user".into(),
        );
        return out;
    }
    let users = instance.users();
    let servers = instance.servers();
    // Exact class capacities, count x capacity.
    let cap: Vec<Vec<BigRational>> = servers
        .iter()
        .map(|s| {
            s.capacity
                .iter()
                .map(|&c| q(c) * BigRational::from_integer(BigInt::from(s.count)))
                .collect()
        })
        .collect();
    let demand: Vec<Vec<BigRational>> = users
        .iter()
        .map(|u| u.demand.iter().map(|&d| q(d)).collect())
        .collect();
    let x: Vec<BigRational> = user_tasks.iter().map(|&t| q(t)).collect();
    // Primal feasibility, exactly.
    let mut used = vec![vec![BigRational::zero(); m]; k];
    let mut excess = BigRational::zero();
    for n in 0..nu {
        if tasks.servers() != k || tasks.row(n).last().is_some_and(|(i, _)| i >= k) {
            fail(
                &mut out,
                format!(
                    "tasks[{n}] has {} entries, expected {k}",
                    tasks.servers().max(tasks.widest())
                ),
            );
            return out;
        }
        let mut sum = BigRational::zero();
        for (i, t) in tasks.row(n) {
            if t == 0.0 {
                continue;
            }
            if t < 0.0 || !t.is_finite() {
                fail(&mut out, format!("tasks[{n}][{i}] is {t}"));
                continue;
            }
            if placement && !instance.eligible(leontief_core::UserId(n), ServerId(i)) {
                fail(
                    &mut out,
                    format!(
                        "{} runs tasks on {}, outside its servers",
                        users[n].name, servers[i].name
                    ),
                );
            }
            let tq = q(t);
            for r in 0..m {
                used[i][r] += &tq * &demand[n][r];
            }
            sum += tq;
        }
        // The row sums as printed may differ from the exact sums by
        // round-off: the certificate speaks of the printed user_tasks.
        let diff = (&sum - &x[n]).abs();
        if diff > q(feasibility) * x[n].abs().max(sum.abs()) {
            fail(
                &mut out,
                format!("user_tasks[{n}] is not the sum of tasks[{n}]"),
            );
        }
        if let Some(t) = users[n].tasks {
            if x[n] > q(t) * (BigRational::from_integer(1.into()) + q(feasibility)) {
                fail(&mut out, format!("{} runs above its cap", users[n].name));
            }
        }
    }
    for i in 0..k {
        for r in 0..m {
            if used[i][r] > cap[i][r] {
                if cap[i][r].is_zero() {
                    fail(
                        &mut out,
                        format!(
                            "{} on {} is used but has capacity 0",
                            instance.resources()[r],
                            servers[i].name
                        ),
                    );
                    continue;
                }
                let e = (&used[i][r] - &cap[i][r]) / &cap[i][r];
                if e > excess {
                    excess = e;
                }
            }
        }
    }
    out.capacity_excess = up(&excess);
    if excess > q(feasibility) {
        let e = out.capacity_excess;
        fail(
            &mut out,
            format!("a capacity is exceeded by {e:.3e} (relative)"),
        );
    }
    // The shares.
    let sig: Vec<BigRational> = if dominant {
        let total: Vec<BigRational> = (0..m)
            .map(|r| cap.iter().fold(BigRational::zero(), |a, c| a + &c[r]))
            .collect();
        demand
            .iter()
            .map(|d| {
                (0..m)
                    .filter(|&r| !total[r].is_zero() && !d[r].is_zero())
                    .map(|r| &d[r] / &total[r])
                    .max()
                    .unwrap_or_else(BigRational::zero)
            })
            .collect()
    } else {
        sigma.iter().map(|&s| q(s)).collect()
    };
    let weight: Vec<BigRational> = users.iter().map(|u| q(u.weight)).collect();
    let runs_on = |n: usize, i: usize| -> bool {
        (!placement || instance.eligible(leontief_core::UserId(n), ServerId(i)))
            && (0..m).all(|r| users[n].demand[r] == 0.0 || servers[i].capacity[r] > 0.0)
    };
    // The same restriction as the float check (the rule's decisions have
    // a margin of 1e-6, far above any rounding of the levels).
    let float_sigma = if dominant {
        leontief_core::shares::dominant_sigma(instance)
    } else {
        sigma.to_vec()
    };
    let closure = crate::closure::Closure::new(
        instance,
        &float_sigma,
        user_tasks,
        frozen_round,
        placement,
        tolerance,
    );
    let levels: Vec<f64> = (0..nu)
        .map(|n| {
            (&sig[n] * &x[n] / &weight[n])
                .to_f64()
                .unwrap_or(f64::INFINITY)
        })
        .collect();
    let order = crate::certificate::RoundOrder::new(&levels, frozen_round);
    let mut certified = vec![false; nu];
    let mut worst = BigRational::zero();
    let total: Vec<BigRational> = (0..m)
        .map(|r| cap.iter().fold(BigRational::zero(), |a, row| a + &row[r]))
        .collect();
    for c in rounds {
        if c.prices.len() != k || c.prices.iter().any(|row| row.len() != m) {
            fail(
                &mut out,
                format!(
                    "round {}: prices are not one row of {m} per entry ({k})",
                    c.round
                ),
            );
            continue;
        }
        let bad = c
            .prices
            .iter()
            .flatten()
            .filter(|p| !p.is_finite() || **p < 0.0)
            .count();
        if bad > 0 {
            out.negative_prices += bad;
            fail(
                &mut out,
                format!(
                    "round {}: {bad} prices are negative or not finite (dual infeasible)",
                    c.round
                ),
            );
            continue;
        }
        if let Some(&n) = c
            .users
            .iter()
            .find(|&&n| n >= nu || frozen_round[n] != c.round)
        {
            fail(
                &mut out,
                format!(
                    "round {}: user index {n} did not freeze in this round",
                    c.round
                ),
            );
            continue;
        }
        let p: Vec<Vec<BigRational>> = c
            .prices
            .iter()
            .map(|row| row.iter().map(|&v| q(v)).collect())
            .collect();
        let cost = (0..k).fold(BigRational::zero(), |a, i| {
            (0..m).fold(a, |a, r| {
                if p[i][r].is_zero() {
                    a
                } else {
                    a + &cap[i][r] * &p[i][r]
                }
            })
        });
        let mut u = vec![BigRational::zero(); nu];
        // As the float check: per user, all capacity valued at the prices
        // of its cheapest entry.
        let mut own_scale = vec![BigRational::zero(); nu];
        let (mut held, mut later) = (BigRational::zero(), BigRational::zero());
        for n in 0..nu {
            if frozen_round[n] == 0 {
                continue;
            }
            let mut best: Option<(BigRational, usize)> = None;
            for i in (0..k).filter(|&i| runs_on(n, i) && closure.is_open(n, i, c.round)) {
                out.pairs += 1;
                let v = (0..m)
                    .filter(|&r| !demand[n][r].is_zero() && !p[i][r].is_zero())
                    .fold(BigRational::zero(), |a, r| a + &demand[n][r] * &p[i][r]);
                if best.as_ref().is_none_or(|(b, _)| v < *b) {
                    best = Some((v, i));
                }
            }
            if let Some((_, i)) = &best {
                own_scale[n] = (0..m).fold(BigRational::zero(), |a, r| a + &total[r] * &p[*i][r]);
            }
            u[n] = best.map_or_else(BigRational::zero, |(v, _)| v);
            if frozen_round[n] <= c.round {
                held += &u[n] * &x[n];
            } else if !sig[n].is_zero() {
                later += &u[n] * &weight[n] / &sig[n];
            }
        }
        for &n in &c.users {
            if let Some(why) = order.violation(instance, n, c.round, levels[n], tolerance) {
                fail(&mut out, why);
                continue;
            }
            let level = &sig[n] * &x[n] / &weight[n];
            let room = &cost - &held - level * &later;
            let room = if room < BigRational::zero() {
                BigRational::zero()
            } else {
                room
            };
            let denominator = &u[n] * &x[n];
            if denominator.is_zero() {
                fail(
                    &mut out,
                    format!("round {}: {} has no priced task", c.round, users[n].name),
                );
                continue;
            }
            // As the float check: a room within 1e-12 of all capacity,
            // valued at the user's own prices, is round-off of the printed
            // task counts.
            let rounding = room <= q(crate::certificate::CAPACITY_ROUNDING) * &own_scale[n];
            let rel = room / denominator;
            if rel > worst {
                worst = rel.clone();
            }
            if rel <= q(tolerance) || rounding {
                certified[n] = true;
            } else {
                fail(
                    &mut out,
                    format!(
                        "round {}: {} has room {:.3e} (relative, exact) above its level",
                        c.round,
                        users[n].name,
                        up(&rel)
                    ),
                );
            }
        }
    }
    out.proven_rise_bound = up(&worst);
    for n in 0..nu {
        let capped = users[n]
            .tasks
            .is_some_and(|t| x[n] >= q(t) * (BigRational::from_integer(1.into()) - q(feasibility)));
        let proved = match frozen_round[n] {
            0 => (0..k).all(|i| !runs_on(n, i)) || sig[n].is_zero(),
            _ => certified[n] || capped,
        };
        if !proved {
            fail(
                &mut out,
                format!(
                    "{} (round {}) is not proved",
                    users[n].name, frozen_round[n]
                ),
            );
        }
    }
    out
}
