//! The pooled-first path of the max-min operator.
//!
//! Merging every entry into one pool of capacity C can only enlarge the
//! set of feasible level vectors, so the pooled lexicographic max-min
//! (closed-form progressive filling) bounds the per-server one from above,
//! round by round. When some per-server allocation gives every user its
//! pooled level, that allocation *is* the per-server answer (the lex
//! maximum of a superset that lies in the subset), and each pooled round's
//! prices (1 on the resources saturated in that round, the same on every
//! entry) are its dual certificate.
//!
//! On the instances this project exists for (thousands of heterogeneous
//! servers, no placement) that is the normal case, and the flat LP's
//! optimum is massively degenerate there (every pair at reduced cost zero
//! under the pooled prices), which is what makes column generation tail.
//!
//! So the path is: pooled progressive filling; a sparse set of candidate
//! pairs (per entry a few users from each side, or each sector, around
//! its capacity's direction: [`crate::lp::pricing::bracketing`],
//! [`crate::lp::pricing::sectors`]);
//! one feasibility LP on those pairs with every user's level bounded below
//! by its pooled level. Feasible: done, certified by the pooled prices.
//! Infeasible (fragmentation, placement, too few candidates): the caller
//! runs the general path.
//!
//! ## Which solver
//!
//! The block interior point method where it pays
//! ([`crate::solvers::block_ipm`]), which hands a solve it does not finish
//! to Clarabel; otherwise Clarabel first ([`crate::solvers::direct`]).
//! When theta falls short of 1, Clarabel's duals price every pair
//! (`crate::lp::colgen::solve_priced`); when no pair prices in, the
//! pooled levels are out of reach and the general path runs at once, its
//! column generation seeded with this LP's pairs (`Pooled::Short`).
//! HiGHS takes over only when a Clarabel solve does not end optimal, and
//! past [`crate::settings::clarabel_max_users`] users.
//!

use crate::lp::build::{build, row_blocks, MaxMinLp};
use crate::lp::colgen::{solve_priced, Stop};
use crate::lp::duality::dual_blocked;
use crate::lp::finish::finish;
use crate::lp::pricing::{bracketing, for_each_runnable, sectors, with_room};
use crate::outcome::{Freeze, MaxMinOutcome, Path, RoundCertificate};
use crate::solvers::block_ipm::BlockIpm;
use leontief_core::{Instance, ServerId, UserId};
use leontief_model::{BackendError, Col, LoadedLp, LpBackend, Problem, Status};
use std::time::Instant;

const INF: f64 = f64::INFINITY;

/// Candidates with 2 resources ([`bracketing`]): per entry the nearest
/// `NEAR` users either side of its direction and `SPREAD` spread over each
/// side. Measured: they realise the pooled levels in the first LP on every
/// 2-resource instance of the benchmark (seeds 1-3, 100 x 1,000 to 1,000 x
/// 10,000; 24 s at 1,000 x 10,000); 1 and 1 fell 0.6% short at 100 x
/// 1,000; 2 users drawn by hash per side ([`sectors`]) were faster at 100 x
/// 1,000 and 300 x 3,000 (0.27 s and 1.6 s against 0.34 s and 3.1 s) but
/// needed 3 pricing passes at 1,000 x 10,000 (49 s).
const NEAR: usize = 1;
const SPREAD: usize = 2;

/// Candidates with 3 resources and more ([`sectors`]): one user drawn by
/// hash per sector (6 or 14 around each entry). Measured at 100 x 1,000
/// (HiGHS IPX then):
/// the pooled levels in the first LP, 0.56 s (3 resources) and 1.5 s (4),
/// where the nearest user per sector alone took 7 to 22 pricing passes
/// (9.5 s) and bracketing by one angle 2 to 3 passes (3.4 s and 8.5 s).
/// The nearest user per sector is added beside the hashed one with 3 or 4
/// resources ([`NEAR_SECTOR`]).
const SPREAD_SECTOR: usize = 1;

/// With 3 or 4 resources, also the `NEAR_SECTOR` closest users per sector
/// ([`sectors`]): where a resource sits on a fifth of the servers (GPUs),
/// the hashed users alone missed the pairs the pooled levels need (tens
/// of pricing passes); with 5 or more resources the closest users add
/// more columns than passes they save (`benches/REPORT.md`, shapes).
const NEAR_SECTOR: usize = 1;

/// See [`NEAR_SECTOR`].
const NEAR_SECTOR_UP_TO: usize = 4;

/// Users that run on part of the entries only draw at least this many
/// times the entries their pooled tasks fill ([`with_room`]). Measured
/// with a GPU on a fifth of the servers and users (`generate shaped
/// --shape gpu=0.2`, 1,000 x 10,000, seed 1), the one LP: 2 resources
/// 30.9 s, 11 pricing passes -> 2.3 s, none (4: the same); 3 resources
/// 31.5 s, 5 passes -> 10.0 s, 1; 4 resources 21.9 -> 9.7 s.
const ROOM: f64 = 2.0;

/// A pooled level above a user's bound y'_n by at most this (relative)
/// is the bound, rounded: its cap (see [`at_levels`]).
const CAP_ROUNDING: f64 = 1e-12;

/// A primal point of the realising LP that breaks no row by more than
/// this of the row's magnitude holds the pooled levels, whatever the
/// solver's status ([`grow`]). Measured where Clarabel ends
/// `AlmostSolved`: k-DF's list groups (1,000 x 10,000, 4 resources) break
/// their rows by 1e-13 of an entry's capacity; the Google cell with 1,000
/// users by 2e-8 of a user's level, which leaves the certificate that
/// much room (the HiGHS solve that follows leaves none).
const PRIMAL_HOLDS: f64 = 1e-10;

/// A resource counts as saturated in a pooled round when the round's
/// lower bounds use this much of it.
const SATURATED: f64 = 1.0 - 1e-9;
/// Room above its level asked that a user's level column keeps in the
/// groups' first step (see [`at_levels`]).
const LEVEL_ROOM: f64 = 1e-6;

/// How the pooled-first path ended.
pub(crate) enum Pooled {
    /// The pooled levels realised: the answer.
    Realised(Box<MaxMinOutcome>),
    /// Out of reach: the LP's optimum on the pairs it grew to falls short
    /// of them and no other pair prices in. Those pairs (per user, the
    /// entries) hold that optimum: they seed the general path's column
    /// generation (its round 1 is the same LP when every user's pooled
    /// level is the same).
    Short(Vec<Vec<ServerId>>, Spent),
    /// Not decided (a solve did not end optimal, a level above its cap,
    /// coefficients too far apart): run the general path as it is.
    Failed(Spent),
}

impl Pooled {
    /// The LPs it solved, and their seconds.
    pub(crate) fn spent(&self) -> Spent {
        match self {
            Pooled::Realised(o) => Spent::of(o),
            Pooled::Short(_, s) | Pooled::Failed(s) => *s,
        }
    }
}

/// The LPs an attempt solved, and their seconds, when its answer is not
/// the one kept: the answer that is kept counts them too (`lps`,
/// `solve_seconds`), so a fallback's cost shows.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Spent {
    pub(crate) lps: usize,
    pub(crate) seconds: f64,
}

impl Spent {
    /// What `out` solved.
    pub(crate) fn of(out: &MaxMinOutcome) -> Spent {
        Spent {
            lps: out.lps,
            seconds: out.solve_seconds,
        }
    }

    /// Both together.
    pub(crate) fn and(self, other: Spent) -> Spent {
        Spent {
            lps: self.lps + other.lps,
            seconds: self.seconds + other.seconds,
        }
    }

    /// Count it in the answer kept.
    pub(crate) fn charge(self, out: &mut MaxMinOutcome) {
        out.lps += self.lps;
        out.solve_seconds += self.seconds;
    }
}

/// The pooled progressive filling: every user's pooled level (an upper
/// bound on its level in the answer, round by round), and the outcome
/// the pooled rounds and their certificates start.
pub(crate) struct Bound {
    /// Each user's pooled level.
    pub(crate) level: Vec<f64>,
    /// The pooled rounds, freeze reasons and certificates.
    pub(crate) base: MaxMinOutcome,
    /// Users that can run somewhere.
    pub(crate) runnable: Vec<bool>,
    /// The first round's level.
    pub(crate) first: Option<f64>,
    /// When the filling started.
    pub(crate) t0: Instant,
}

/// The users with a positive finite share that can run on some entry
/// (with `placement`, on their lists).
pub(crate) fn runnable_users(instance: &Instance, sigma: &[f64], placement: bool) -> Vec<bool> {
    (0..instance.num_users())
        .map(|n| {
            let mut any = false;
            if sigma[n].is_finite() && sigma[n] > 0.0 {
                for_each_runnable(instance, UserId(n), placement, |_| any = true);
            }
            any
        })
        .collect()
}

/// The bound that asks every user exactly its total `x[n]` (levels
/// `sigma x / w`, every user in round 1): what [`crate::paths::realise`]
/// realises.
pub(crate) fn totals_bound(instance: &Instance, sigma: &[f64], x: &[f64]) -> Bound {
    let nu = instance.num_users();
    let runnable = runnable_users(instance, sigma, true);
    let level = (0..nu)
        .map(|n| {
            if runnable[n] {
                x[n] * sigma[n] / instance.users()[n].weight
            } else {
                0.0
            }
        })
        .collect();
    Bound {
        level,
        base: MaxMinOutcome {
            frozen_round: vec![1; nu],
            path: Path::Pooled,
            ..MaxMinOutcome::start(nu, 0)
        },
        runnable,
        first: None,
        t0: Instant::now(),
    }
}

/// The pooled filling of `instance` (see [`Bound`]).
pub(crate) fn bound(instance: &Instance, sigma: &[f64], placement: bool) -> Bound {
    let t0 = Instant::now();
    let (k, m, nu) = (
        instance.num_entries(),
        instance.num_resources(),
        instance.num_users(),
    );
    let users = instance.users();
    let runnable = runnable_users(instance, sigma, placement);
    let demand: Vec<&[f64]> = users.iter().map(|u| u.demand.as_slice()).collect();
    let weight: Vec<f64> = users.iter().map(|u| u.weight).collect();
    let caps: Vec<f64> = users.iter().map(|u| u.tasks.unwrap_or(INF)).collect();
    let sig: Vec<f64> = (0..nu)
        .map(|n| if runnable[n] { sigma[n] } else { 0.0 })
        .collect();
    let total = instance.total_capacity();
    let (x_pool, level, round, why) =
        crate::closed_form::progressive_filling(&demand, &weight, &caps, &sig, total);
    // Each round's certificate: 1 on the resources its lower bounds
    // saturate (users frozen before at their pooled tasks, the others at
    // the round's level).
    let rounds = round.iter().copied().max().unwrap_or(0);
    let mut certificates = Vec::new();
    for r_k in 1..=rounds {
        let Some(theta) = (0..nu).find(|&n| round[n] == r_k).map(|n| level[n]) else {
            continue;
        };
        let mut used = vec![0.0; m];
        for n in (0..nu).filter(|&n| runnable[n]) {
            let x = if round[n] < r_k {
                x_pool[n]
            } else {
                weight[n] * theta / sig[n]
            };
            for r in 0..m {
                used[r] += demand[n][r] * x;
            }
        }
        let p: Vec<f64> = (0..m)
            .map(|r| {
                if total[r] > 0.0 && used[r] >= total[r] * SATURATED {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let certified: Vec<usize> = (0..nu)
            .filter(|&n| round[n] == r_k && why[n] == Freeze::Blocked)
            .collect();
        if !certified.is_empty() {
            certificates.push(RoundCertificate {
                round: r_k,
                prices: (0..k).flat_map(|_| p.iter().copied()).collect(),
                users: certified,
            });
        }
    }
    let base = MaxMinOutcome {
        frozen_round: round.clone(),
        freeze: why.clone(),
        rounds,
        certificates,
        path: Path::Pooled,
        ..MaxMinOutcome::start(nu, 0)
    };
    let first = (0..nu)
        .filter(|&n| round[n] == 1)
        .map(|n| level[n])
        .fold(INF, f64::min);
    Bound {
        level,
        base,
        runnable,
        first: first.is_finite().then_some(first),
        t0,
    }
}

/// The bound with placement lists: the operator's answer on the pooled
/// groups of entries ([`crate::paths::merge::pool_by_lists`], solved by
/// the caller as `pooled`). Pooling entries only enlarges the feasible
/// set, so its levels bound the per-server ones round by round, and its
/// prices, repeated on every entry of a group (per unit of each
/// resource), are a certificate of any per-server allocation that gives
/// every user the same level: the weak-duality bound of
/// `leontief_audit::certificate` reads only the capacity each price
/// values and the cheapest entry each user may run on, the same on the
/// groups and on their entries.
pub(crate) fn bound_on_pools(
    instance: &Instance,
    sigma: &[f64],
    group_of: &[usize],
    pooled: &MaxMinOutcome,
    t0: Instant,
) -> Bound {
    let (m, nu) = (instance.num_resources(), instance.num_users());
    let runnable = runnable_users(instance, sigma, true);
    let weight: Vec<f64> = instance.users().iter().map(|u| u.weight).collect();
    let tasks = pooled.tasks.user_totals();
    let level: Vec<f64> = (0..nu)
        .map(|n| {
            if runnable[n] {
                sigma[n] * tasks[n] / weight[n]
            } else {
                0.0
            }
        })
        .collect();
    let certificates = pooled
        .certificates
        .iter()
        .map(|c| RoundCertificate {
            round: c.round,
            prices: group_of
                .iter()
                .flat_map(|&g| c.prices[g * m..(g + 1) * m].iter().copied())
                .collect(),
            users: c.users.clone(),
        })
        .collect();
    let base = MaxMinOutcome {
        frozen_round: pooled.frozen_round.clone(),
        freeze: pooled.freeze.clone(),
        rounds: pooled.rounds,
        certificates,
        path: Path::Pooled,
        ..MaxMinOutcome::start(nu, 0)
    };
    let first = (0..nu)
        .filter(|&n| runnable[n] && pooled.frozen_round[n] == 1)
        .map(|n| level[n])
        .fold(INF, f64::min);
    Bound {
        level,
        base,
        runnable,
        first: first.is_finite().then_some(first),
        t0,
    }
}

/// Realise the pooled levels of `bound` in one LP ([`at_levels`]);
/// `spent` is what an attempt before (the groups) solved.
pub(crate) fn try_pooled<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    level_tolerance: f64,
    bound: Bound,
    spent: Spent,
) -> Result<Pooled, BackendError> {
    let mut candidates = candidates(instance, &bound.runnable, placement);
    let tasks: Vec<f64> = (0..instance.num_users())
        .map(|n| {
            if bound.runnable[n] {
                bound.level[n] * instance.users()[n].weight / sigma[n]
            } else {
                0.0
            }
        })
        .collect();
    with_room(
        instance,
        &bound.runnable,
        placement,
        &tasks,
        ROOM,
        &mut candidates,
    );
    let before = bound.t0.elapsed().as_secs_f64();
    let mut found = at_levels(
        backend,
        instance,
        sigma,
        placement,
        &candidates,
        &bound.level,
        bound.base,
        level_tolerance,
        false,
        false,
    )?;
    match &mut found {
        Pooled::Realised(out) => {
            out.build_seconds += before;
            if out.first_level.is_none() {
                out.first_level = bound.first;
            }
            spent.charge(out);
        }
        Pooled::Short(_, s) | Pooled::Failed(s) => *s = s.and(spent),
    }
    Ok(found)
}

/// The candidate pairs of the pooled LP: [`bracketing`] with 2 resources
/// or fewer, [`sectors`] with more.
pub(crate) fn candidates(
    instance: &Instance,
    active: &[bool],
    placement: bool,
) -> Vec<Vec<ServerId>> {
    if instance.num_resources() <= 2 {
        bracketing(instance, active, placement, NEAR, SPREAD)
    } else {
        let near = if instance.num_resources() <= NEAR_SECTOR_UP_TO {
            NEAR_SECTOR
        } else {
            0
        };
        sectors(instance, active, placement, near, SPREAD_SECTOR)
    }
}

/// One LP on the pairs of `candidates`, grown by pricing, with every
/// runnable user at least its pooled `level`: first by the block interior
/// point method or Clarabel ([`crate::solvers::direct`]), then, if undecided, on
/// `backend`. `base` holds the
/// rounds and certificates of the pooled filling.
///
/// When every user shares one pooled level and it is out of reach, the
/// LP's optimum is the general path's round 1 (the same LP, theta in
/// units of that level): when its prices prove every user blocked there
/// ([`crate::lp::duality::dual_blocked`], to `level_tolerance`), that is the
/// answer, without building and solving round 1 again.
///
/// With `short_ends` (the caller keeps nothing of a short answer but its
/// cost), pricing stops as soon as a solve's prices prove the levels out
/// of reach ([`crate::lp::duality::out_of_reach`]), not only when no pair
/// prices in, and the one round is not tried. Measured on a group of
/// 166 users on 714 entries (weights and caps, 6 resources), theta
/// stalled at 0.999366 for three solves of 3.7 s each before no pair
/// priced in.
///
/// With `bound_levels` (the groups' first step) and more users than
/// Clarabel's, each user's level column is bounded at its level asked
/// plus [`LEVEL_ROOM`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn at_levels<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    candidates: &[Vec<ServerId>],
    level: &[f64],
    base: MaxMinOutcome,
    level_tolerance: f64,
    short_ends: bool,
    bound_levels: bool,
) -> Result<Pooled, BackendError> {
    let nu = instance.num_users();
    let t0 = Instant::now();
    let mut mm = build(instance, sigma, placement, Some(candidates));
    if mm.too_wide.is_some() {
        return Ok(Pooled::Failed(Spent::default()));
    }
    let mut want: Vec<f64> = (0..nu).map(|n| level[n] * mm.scale).collect();
    let runnable = mm.runnable.iter().filter(|&&r| r).count();
    let clarabel_users = crate::settings::clarabel_max_users(instance.num_resources());
    // Every runnable user at least theta times its pooled level,
    // theta <= 1, maximise theta: grown by pricing until theta reaches 1
    // (no better value exists: the pooled levels bound every user). The
    // levels are asked exactly, not relaxed by `freeze_relaxation`: the
    // snap to the level then moves each user by the LP's own error only,
    // not by 1e-10 of its level on every user at once, which a full
    // resource cannot absorb (the capacity repair gives it back as slack,
    // and the certificate charges all of it to the smallest user: 1e-6
    // of its tasks with 1,000 users on the Google cell).
    {
        let p = &mut mm.problem;
        for n in (0..nu).filter(|&n| mm.runnable[n]) {
            // A user the pooled filling froze at its cap asks its cap: the
            // same number as y'_n's bound up to their roundings (the level
            // and the scale multiply in another order; measured 1 ulp over
            // on 60 x 400 with caps, which sent the run to 229 flat LPs
            // and 118 s). Beyond rounding the pooled level is out of reach.
            if want[n] > mm.y_upper[n] * (1.0 + CAP_ROUNDING) {
                return Ok(Pooled::Failed(Spent::default()));
            }
            want[n] = want[n].min(mm.y_upper[n]);
        }
        let user_of: std::collections::HashMap<usize, usize> =
            mm.level.iter().enumerate().map(|(n, r)| (r.0, n)).collect();
        let t = mm.theta.0;
        for e in p.a_start[t]..p.a_start[t + 1] {
            if let Some(&n) = user_of.get(&p.a_index[e]) {
                p.a_value[e] = -want[n];
            }
        }
        p.col_upper[t] = 1.0;
        // Each level column bounded at its level asked plus LEVEL_ROOM,
        // not at the user's level alone on every entry, in the groups'
        // first step past Clarabel's users (no optimum moves: a level
        // above the one asked only takes room). The alone levels reach
        // 3e6 times the level asked there, and with them Clarabel ended
        // 7.1e-8 short of theta 1 (`AlmostSolved` at its 1e-12, `Solved`
        // at 1e-9) on an LP whose theta 1 HiGHS's simplex holds within
        // 6e-13 of every row (k-DF, weights and caps, 3 resources,
        // 10,000 x 10,000): the one LP over every entry then ran. So
        // bounded, step 1 ends at theta 1. Not on the groups' own LPs of
        // step 2: with about 200 users each it made Clarabel slower (the
        // first round 5 -> 38 s on the 4-resource cell), and with 8,000
        // (20,000 x 500, 2 resources) 14.7 s against 4.9 s end to end.
        if bound_levels && runnable > clarabel_users {
            for n in (0..nu).filter(|&n| mm.runnable[n]) {
                let y = mm.ycols[n].0;
                p.col_upper[y] = p.col_upper[y].min(want[n] * (1.0 + LEVEL_ROOM));
            }
        }
    }
    let mut problem = std::mem::replace(
        &mut mm.problem,
        leontief_model::ProblemBuilder::new(leontief_model::Sense::Maximise).build(),
    );
    let mut out = MaxMinOutcome {
        levels: (0..nu).map(|n| level[n] * mm.scale).collect(),
        build_seconds: t0.elapsed().as_secs_f64(),
        pairs: mm.total_pairs,
        ..base
    };
    let ends = short_ends.then_some(&want[..]);
    if runnable <= clarabel_users {
        // Few users: the block interior point method ([`crate::solvers::block_ipm`]);
        // otherwise, and whenever it does not converge, Clarabel.
        let blocks = crate::solvers::block_ipm::pays(
            runnable,
            instance.num_entries(),
            instance.num_resources(),
        )
        .then(|| row_blocks(&mm, instance.num_resources(), problem.num_rows()));
        let mut lp = BlockIpm::new(blocks, backend.time_limit()).load(problem)?;
        let mut verdict = grow(&mut lp, &mut mm, instance, placement, &mut out, true, ends)?;
        // A solve started from the one before it (`BlockLp::started_warm`)
        // ends elsewhere on the optimal face than one from the method's
        // own start, whose prices are the most central: where the one
        // round is not proved, it is tried again on those. Not where no
        // single round can end the path (some user froze after round 1 or
        // at its cap): the short optimum is then kept only for its pairs
        // (weights and caps on half the users, 6 resources, 300 x 3,000,
        // seed 3: a cold solve of 2.5 s for nothing).
        if let Verdict::Short(sol) = &verdict {
            if !short_ends && lp.started_warm() && single_round(&out, &mm) {
                let one = one_round(
                    out.clone(),
                    &mm,
                    sol,
                    instance,
                    sigma,
                    placement,
                    level_tolerance,
                );
                if let Some(one) = one {
                    return Ok(one);
                }
                lp.go_cold();
                verdict = grow(&mut lp, &mut mm, instance, placement, &mut out, true, ends)?;
            }
        }
        match verdict {
            Verdict::Realised(sol) => return Ok(realised(out, &mm, &sol, instance, sigma)),
            Verdict::Short(sol) => {
                let spent = Spent::of(&out);
                let one = (!short_ends)
                    .then(|| one_round(out, &mm, &sol, instance, sigma, placement, level_tolerance))
                    .flatten();
                return Ok(one.unwrap_or(Pooled::Short(entries(&mm), spent)));
            }
            // HiGHS goes on from the columns added.
            Verdict::Undecided => problem = lp.problem().clone(),
        }
    }
    let mut lp = backend.load(problem)?;
    // Past Clarabel's users, the interior point without crossover (the
    // one LP at scale). Where Clarabel did not end optimal, the backend's
    // own choice, a vertex: the interior point's primal left a group of
    // hdrfh's placement by attribute (246 users on 2,500 entries) 5.5e-7
    // of a user's tasks short, and the group's answer was refused.
    if runnable > clarabel_users {
        lp.interior_point_primal()?;
    }
    Ok(
        match grow(&mut lp, &mut mm, instance, placement, &mut out, false, ends)? {
            Verdict::Realised(sol) => realised(out, &mm, &sol, instance, sigma),
            Verdict::Short(_) => Pooled::Short(entries(&mm), Spent::of(&out)),
            Verdict::Undecided => Pooled::Failed(Spent::of(&out)),
        },
    )
}

/// The answer from a solution with theta at 1.
fn realised(
    mut out: MaxMinOutcome,
    mm: &MaxMinLp,
    sol: &leontief_model::Solution,
    instance: &Instance,
    sigma: &[f64],
) -> Pooled {
    out.raw_status = sol.raw_status.clone();
    out.columns = mm.pairs.iter().map(Vec::len).sum();
    finish(&mut out, mm, &sol.x, instance, sigma);
    Pooled::Realised(Box::new(out))
}

/// The answer when the pooled levels are out of reach but every user
/// shares one pooled level (pooled round 1, none capped) and the prices of
/// `sol`, the LP's optimum, prove every user blocked at its level there:
/// round 1 of the general path, ended by its own certificate. `None`
/// otherwise (the general path then runs).
fn one_round(
    mut out: MaxMinOutcome,
    mm: &MaxMinLp,
    sol: &leontief_model::Solution,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    level_tolerance: f64,
) -> Option<Pooled> {
    let nu = instance.num_users();
    if !single_round(&out, mm) {
        return None;
    }
    let users: Vec<usize> = (0..nu).filter(|&n| mm.runnable[n]).collect();
    let theta = sol.x[mm.theta.0];
    let lower: Vec<f64> = (0..nu)
        .map(|n| {
            if mm.runnable[n] {
                theta * out.levels[n]
            } else {
                0.0
            }
        })
        .collect();
    let smallest = users.iter().map(|&n| lower[n]).fold(INF, f64::min);
    let tol = level_tolerance * smallest;
    let (proved, prices) = dual_blocked(
        mm,
        instance,
        placement,
        &sol.row_dual,
        &lower,
        &users,
        tol,
        None,
    );
    if proved.len() != users.len() {
        return None;
    }
    out.levels = lower;
    out.rounds = 1;
    out.first_level = Some(smallest / mm.scale);
    out.certificates = vec![RoundCertificate {
        round: 1,
        prices,
        users,
    }];
    out.path = Path::Generated;
    Some(realised(out, mm, sol, instance, sigma))
}

/// Whether every runnable user froze blocked in the pooled round 1, the
/// one case [`one_round`] can end.
fn single_round(out: &MaxMinOutcome, mm: &MaxMinLp) -> bool {
    (0..mm.runnable.len())
        .filter(|&n| mm.runnable[n])
        .all(|n| out.frozen_round[n] == 1 && out.freeze[n] == Freeze::Blocked)
}

/// The entries of each user's columns in `mm`.
fn entries(mm: &MaxMinLp) -> Vec<Vec<ServerId>> {
    mm.pairs
        .iter()
        .map(|list| list.iter().map(|&(i, _)| i).collect())
        .collect()
}

/// How [`grow`] ended.
enum Verdict {
    /// Theta reached 1: this solution realises the pooled levels.
    Realised(leontief_model::Solution),
    /// An optimum below 1 with no pair pricing in (or prices that prove 1
    /// out of reach, where the caller asked): the pooled levels are
    /// out of reach on the per-server entries (on Clarabel, up to the
    /// accuracy of its duals; a wrong verdict costs time, not exactness:
    /// the general path runs).
    Short(leontief_model::Solution),
    /// A solve left no solution (with `strict`, no optimum); its status
    /// is not kept.
    Undecided,
}

/// Whether `x` has theta (column `theta`) at 1 and breaks no row by
/// more than [`PRIMAL_HOLDS`] of the row's own magnitude (the sum of
/// `|a_ij x_j|`: a user's level row is in units of its level, so an
/// absolute tolerance would be loose for small levels) and no bound by
/// more than that: then it realises the pooled levels, whatever the
/// solver's status.
fn holds_at_one(problem: &Problem, x: &[f64], theta: Col) -> bool {
    if x.len() != problem.num_cols() || x[theta.0] < 1.0 - 1e-9 {
        return false;
    }
    let rows = problem.num_rows();
    let (mut ax, mut size) = (vec![0.0; rows], vec![0.0; rows]);
    for (j, &v) in x.iter().enumerate() {
        if v < problem.col_lower[j] - PRIMAL_HOLDS || v > problem.col_upper[j] + PRIMAL_HOLDS {
            return false;
        }
        for (r, a) in problem.column(Col(j)) {
            ax[r.0] += a * v;
            size[r.0] += (a * v).abs();
        }
    }
    (0..rows).all(|r| {
        let broken = (problem.row_lower[r] - ax[r]).max(ax[r] - problem.row_upper[r]);
        broken <= PRIMAL_HOLDS * size[r]
    })
}

/// Solve the loaded LP, grown by pricing ([`solve_priced`]) until theta
/// reaches 1 or no pair prices in, or with `want` (each user's level at
/// theta 1) until the prices prove it out of reach.
fn grow<L: LoadedLp>(
    lp: &mut L,
    mm: &mut MaxMinLp,
    instance: &Instance,
    placement: bool,
    out: &mut MaxMinOutcome,
    strict: bool,
    want: Option<&[f64]>,
) -> Result<Verdict, BackendError> {
    let theta = mm.theta;
    let before = (out.status, out.raw_status.clone());
    let stop = Stop {
        reached: (theta, 1.0 - 1e-9),
        want,
    };
    let sol = solve_priced(lp, mm, true, instance, placement, out, Some(stop))?;
    // theta <= 1 bounds the LP, so a primal point at theta 1 that holds
    // every row is optimal whatever the solver says of its duals (the
    // answer's certificate is the pooled prices, not these duals):
    // Clarabel ends `AlmostSolved` on k-DF's list groups with 4
    // resources (300 users on 2,500 entries, tasks per user 10^4 apart)
    // with such a point, 1e-13 within every row, and on the groups of
    // 8,000 users of 20,000 x 500 (2 resources).
    if out.status == Status::ReducedAccuracy
        && sol
            .as_ref()
            .is_some_and(|s| holds_at_one(lp.problem(), &s.x, theta))
    {
        out.status = Status::Optimal;
    }
    let Some(sol) = sol.filter(|_| !strict || out.status == Status::Optimal) else {
        (out.status, out.raw_status) = before;
        return Ok(Verdict::Undecided);
    };
    // `solve_priced` stops short of theta 1 only when no pair priced in
    // or, with `want`, when the prices prove theta 1 out of reach.
    Ok(if sol.x[theta.0] >= 1.0 - 1e-9 {
        Verdict::Realised(sol)
    } else {
        Verdict::Short(sol)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use leontief_model::{ProblemBuilder, Sense};

    /// max theta s.t. x - theta >= 0 (the level row), x <= 1 (capacity),
    /// theta in [0, 1].
    fn level_lp() -> (Problem, Col) {
        let mut b = ProblemBuilder::new(Sense::Maximise);
        let level = b.add_row(0.0, f64::INFINITY);
        let cap = b.add_row(f64::NEG_INFINITY, 1.0);
        b.add_col(0.0, 0.0, f64::INFINITY, [(level, 1.0), (cap, 1.0)]);
        let theta = b.add_col(1.0, 0.0, 1.0, [(level, -1.0)]);
        (b.build(), theta)
    }

    #[test]
    fn a_point_holds_at_one_only_at_theta_one_within_every_row() {
        let (p, theta) = level_lp();
        assert!(holds_at_one(&p, &[1.0, 1.0], theta));
        // Within PRIMAL_HOLDS of the rows.
        assert!(holds_at_one(&p, &[1.0 + 1e-11, 1.0], theta));
        // theta short of 1.
        assert!(!holds_at_one(&p, &[0.9, 0.9], theta));
        // A capacity row broken.
        assert!(!holds_at_one(&p, &[1.0 + 1e-6, 1.0], theta));
        // The level row broken.
        assert!(!holds_at_one(&p, &[1.0 - 1e-6, 1.0], theta));
        // A wrong length is not a point of this LP.
        assert!(!holds_at_one(&p, &[1.0], theta));
    }
}
