//! Bottleneck-based fairness: the bbf-eg and bbf-ode solves and their
//! independent check, and the enumeration of every BBF allocation.

use crate::error::{bad_input, could_not_run, Error};
use crate::mechanism::EgMethod;
use anyhow::Context;
use leontief_bbf::{check, eg, enumerate, ode, BbfError, Pool};
use leontief_core::details::{BbfDetails, EgDetails, EgSeconds, OdeDetails};
use leontief_core::{Allocation, Instance, Status};
use leontief_highs::Highs;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The BBF mechanisms of `solve`.
#[derive(Debug, Clone, PartialEq)]
pub enum BbfKind {
    /// Eisenberg-Gale, Newton-polished.
    Eg {
        /// How the first answer is found.
        method: EgMethod,
    },
    /// The ODE trajectory.
    Ode {
        /// By t (the paper) or by log c.
        by_t: bool,
        /// Write every accepted step here (CSV).
        trajectory: Option<PathBuf>,
    },
}

pub(crate) fn bbf_failure(e: BbfError) -> Error {
    match e {
        BbfError::Input { .. } | BbfError::Parameter(_) => bad_input(e.to_string()),
        BbfError::Backend(b) => Error::from(b),
    }
}

/// `--method auto` uses Clarabel up to this many nonzero requests.
pub const AUTO_CONIC_SIZE: usize = 50_000;

/// The BBF test tolerance of every printed answer.
pub const CHECK_TOLERANCE: f64 = 1e-9;

fn names(pool: &Pool, p: &[f64]) -> BTreeMap<String, f64> {
    pool.resources
        .iter()
        .cloned()
        .zip(p.iter().copied())
        .collect()
}

fn explain(pool: &Pool, x: &[f64], prices: Option<&[f64]>) -> Vec<String> {
    let c = check(pool, x, 1e-7);
    (0..pool.num_users())
        .map(|n| {
            let u = &c.users[n];
            let who = &pool.users[n];
            let budget = match prices {
                Some(p) => {
                    let q: f64 = pool.row(n).iter().zip(p).map(|(r, p)| r * p).sum();
                    format!(
                        "; at the prices its bundle costs {:.6} per unit and it spends {:.6} of its budget e = {:.6}",
                        q,
                        q * x[n],
                        pool.e[n]
                    )
                }
                None => String::new(),
            };
            if u.full {
                format!("{who} gets its whole request (x = 1){budget}")
            } else if let Some(w) = &u.witness {
                format!(
                    "{who} gets x = {:.9}: it is stopped by bottleneck {w}, where it holds {:.9} >= its entitlement {:.9}{budget}",
                    x[n],
                    pool.e[n] + u.margin,
                    pool.e[n]
                )
            } else {
                format!(
                    "{who} gets x = {:.9} and requests no bottleneck: condition (2) fails for it by {:.3e}",
                    x[n], u.violation
                )
            }
        })
        .collect()
}

fn pool_notes(pool: &Pool, a: &mut Allocation) {
    if pool.pooled {
        a.pooled = true;
        a.notes.push("BBF is defined on one pool: the servers are pooled into one of capacity C; tasks[n][i] splits x_n across entries in proportion to their capacity of the user's dominant resource and need not be placeable".into());
    }
    if pool.placement_ignored {
        a.notes
            .push("placement lists do not apply to the pooled BBF model and were ignored".into());
    }
    if pool.ub.iter().any(|u| u.is_infinite()) {
        a.notes.push("users without `tasks` have no x_n <= 1 bound: their x_n is a task count (r_(n,j) = D_(n,j)/C_j)".into());
    }
}

/// bbf-eg and bbf-ode.
pub fn solve(highs: &Highs, instance: &Instance, kind: &BbfKind) -> Result<Allocation, Error> {
    let pool = Pool::new(instance).map_err(bbf_failure)?;
    match kind {
        BbfKind::Eg { method } => {
            let nnz = pool.r.iter().filter(|&&v| v > 0.0).count();
            let conic = match method {
                EgMethod::Conic => true,
                EgMethod::Dual => false,
                EgMethod::Auto => nnz <= AUTO_CONIC_SIZE,
            };
            let mut o = if conic {
                eg::solve(&crate::options::clarabel(highs)?, &pool)
            } else {
                eg::solve_dual(&pool)
            }
            .map_err(bbf_failure)?;
            let mut conic = conic;
            if *method == EgMethod::Auto && !conic && o.status != Status::Optimal {
                // The dual stalled: the cone program decides.
                let first = o.raw_status.clone();
                o = eg::solve(&crate::options::clarabel(highs)?, &pool).map_err(bbf_failure)?;
                o.raw_status = format!("{} (after the dual: {first})", o.raw_status);
                conic = true;
            }
            let mut a = Allocation::new(instance, "bbf-eg", o.status, pool.split(instance, &o.x));
            a.backend_status = Some(o.raw_status.clone());
            a.build_seconds = o.build_seconds;
            a.solve_seconds = o.solve_seconds + o.polish_seconds;
            a.lps_solved = 1;
            pool_notes(&pool, &mut a);
            // The cone program may have handed over to the dual.
            let conic = conic && !o.raw_status.contains("answered by the dual");
            if o.status.has_solution() {
                a.objective = Some(o.certificate.objective);
                let c = check(&pool, &o.x, CHECK_TOLERANCE);
                a.explanation = explain(&pool, &o.x, Some(&o.prices));
                let first = if conic {
                    format!(
                        "Eisenberg-Gale on Clarabel (exponential cones, {} iterations)",
                        o.iterations
                    )
                } else {
                    format!(
                        "Eisenberg-Gale by projected Newton on the dual prices ({} iterations)",
                        o.iterations
                    )
                };
                // Without the certified polish, or failing the BBF test,
                // the answer has the first method's accuracy: not the
                // exactness `optimal` promises (the fuzzer found such an
                // answer with weights 3e7 apart, stationarity 1.0).
                if a.status == leontief_core::Status::Optimal && !(o.polished && c.holds) {
                    a.status = leontief_core::Status::ReducedAccuracy;
                }
                a.notes.push(if o.polished {
                    format!("{first}, polished by {} Newton steps on the dual over the active set", o.newton_steps)
                } else {
                    format!("{first}; the Newton polish did not certify, so the answer has the first method's accuracy (see bbf.certificate)")
                });
                a.bbf = Some(BbfDetails::Eg(EgDetails {
                    method: if conic {
                        "eisenberg-gale, conic (Clarabel)"
                    } else {
                        "eisenberg-gale, dual projected Newton"
                    }
                    .into(),
                    fractions: o.x.clone(),
                    bottlenecks: c.bottlenecks.clone(),
                    worst_violation: c.worst_violation,
                    prices: names(&pool, &o.prices),
                    prices_meaning: "Fisher-market equilibrium prices (Gutman-Nisan): user n spends its entitlement e_n on its bundle".into(),
                    entitlements: pool.e.clone(),
                    polished: o.polished,
                    certificate: o.certificate,
                    seconds: EgSeconds {
                        build: o.build_seconds,
                        conic: o.solve_seconds,
                        polish: o.polish_seconds,
                    },
                }));
            }
            Ok(a)
        }
        BbfKind::Ode { by_t, trajectory } => {
            let settings = ode::OdeSettings {
                param: if *by_t {
                    ode::Param::T
                } else {
                    ode::Param::LogC
                },
                record: trajectory.is_some(),
                ..ode::OdeSettings::default()
            };
            let o = ode::trajectory(&pool, &settings).map_err(bbf_failure)?;
            let status = match &o.error {
                None => Status::Optimal,
                Some(e) if e.contains("more than") => Status::IterationLimit,
                Some(_) => Status::NumericalFailure,
            };
            if let Some(path) = trajectory {
                // A path that cannot be written is bad input (the CLI
                // checks it before the solve).
                write_trajectory(path, &pool, &o, *by_t)
                    .map_err(|e| bad_input(format!("--trajectory: {e:#}")))?;
            }
            let mut a = Allocation::new(instance, "bbf-ode", status, pool.split(instance, &o.x));
            a.backend_status = Some(match &o.error {
                None => "ode_solvers Dopri5: reached c_end".to_string(),
                Some(e) => format!("ode_solvers Dopri5: {e}"),
            });
            a.solve_seconds = o.seconds;
            pool_notes(&pool, &mut a);
            let c = check(&pool, &o.x, 1e-6);
            a.explanation = explain(&pool, &o.x, None);
            a.objective = Some(eg::objective(&pool, &o.x));
            a.notes.push(format!(
                "the trajectory of 003 Sec. 5.3 (corrected as in docs/mechanisms.md) by {}, Dormand-Prince 5(4), from c = {:e} to c = {:e}: the limit is the Eisenberg-Gale allocation, and at c the bottleneck slacks are about 1/(c p_j)",
                if *by_t { "t (df/dt = 1)" } else { "log c" },
                settings.c0, o.c
            ));
            a.bbf = Some(BbfDetails::Ode(OdeDetails {
                method: "ode".into(),
                parameterisation: if *by_t { "t" } else { "log-c" }.into(),
                fractions: o.x.clone(),
                bottlenecks: c.bottlenecks.clone(),
                worst_violation: c.worst_violation,
                final_c: o.c,
                final_parameter: o.end,
                steps: o.steps,
                rejected_steps: o.rejected,
                evaluations: o.evaluations,
                integrator_error: o.error.clone(),
                entitlements: pool.e.clone(),
            }));
            Ok(a)
        }
    }
}

fn write_trajectory(
    path: &Path,
    pool: &Pool,
    o: &ode::OdeOutcome,
    by_t: bool,
) -> anyhow::Result<()> {
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    write!(f, "{},c", if by_t { "t" } else { "log_c" })?;
    for u in &pool.users {
        write!(f, ",{u}")?;
    }
    for r in &pool.resources {
        write!(f, ",slack_{r}")?;
    }
    writeln!(f)?;
    for (s, c, x) in &o.trajectory {
        write!(f, "{s},{c}")?;
        for v in x {
            write!(f, ",{v}")?;
        }
        for l in pool.loads(x) {
            write!(f, ",{}", 1.0 - l)?;
        }
        writeln!(f)?;
    }
    Ok(())
}

/// What [`enumerate_bbf`](crate::enumerate_bbf) takes besides the
/// instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnumerateOptions {
    /// Run the i-th of n disjoint slices of the subsets, (i, n) with
    /// 0 <= i < n; merge the outputs with `enumerate::merge`.
    pub shard: (u64, u64),
    /// Compute each solution polytope's dimension (a few LPs each).
    pub dimension: bool,
}

impl Default for EnumerateOptions {
    fn default() -> Self {
        EnumerateOptions {
            shard: (0, 1),
            dimension: true,
        }
    }
}

/// HiGHS for the many small subset LPs: warm-started dual simplex without
/// presolve (presolve costs more than it saves on LPs of this size).
pub fn subset_backend() -> Result<Highs, Error> {
    Highs::new(leontief_highs::HighsSettings {
        presolve: false,
        algorithm: leontief_highs::Algorithm::Simplex,
        ..leontief_highs::HighsSettings::default()
    })
    .map_err(|e| bad_input(e.to_string()))
}

/// The subsets `enumerate_bbf` walks for `instance` at `shard`: for a
/// progress bar.
pub fn subsets(instance: &Instance, shard: (u64, u64)) -> Result<u64, Error> {
    let pool = Pool::new(instance).map_err(bbf_failure)?;
    let m = pool.saturable().len() as u32;
    // (m > 40 is refused by `enumerate` itself; no shift overflow here.)
    Ok(1u64.checked_shl(m).map_or(u64::MAX, |t| t - 1) / shard.1.max(1))
}

/// Every BBF allocation (003 Sec. 6), each solution re-checked by the
/// independent BBF test before it is returned; `tick` is called once per
/// subset LP.
pub fn enumerate_bbf(
    instance: &Instance,
    options: &EnumerateOptions,
    tick: &(dyn Fn() + Sync),
) -> Result<enumerate::Enumeration, Error> {
    let (i, n) = options.shard;
    if n == 0 || i >= n {
        return Err(crate::ParamError::Invalid {
            parameter: "shard",
            value: format!("{i}/{n}"),
            reason: "expected I/N with 0 <= I < N".into(),
        }
        .into());
    }
    let pool = Pool::new(instance).map_err(bbf_failure)?;
    let highs = subset_backend()?;
    let opts = enumerate::Options {
        shard: options.shard,
        dimension: options.dimension,
    };
    let e = enumerate::enumerate(&highs, &pool, opts, tick).map_err(bbf_failure)?;
    let failures = enumerate::audit(&pool, &e, CHECK_TOLERANCE);
    if !failures.is_empty() {
        return Err(could_not_run(format!(
            "the independent BBF test rejected printed solutions:\n{}",
            failures.join("\n")
        )));
    }
    Ok(e)
}

/// Merge the outputs of `enumerate_bbf` shards into one. With the
/// instance, every witness is re-checked by the independent BBF test and
/// the shards must come from that instance (problem digest, user count);
/// without it only the shards' structure is checked.
pub fn merge_bbf(
    parts: Vec<enumerate::Enumeration>,
    instance: Option<&Instance>,
) -> Result<enumerate::Enumeration, Error> {
    let mut merged = enumerate::merge(None, parts).map_err(bad_input)?;
    if let Some(instance) = instance {
        let pool = Pool::new(instance).map_err(bbf_failure)?;
        if enumerate::digest(&pool) != merged.problem_digest {
            return Err(bad_input(format!(
                "the shards come from another problem (digest {} vs {})",
                merged.problem_digest,
                enumerate::digest(&pool)
            )));
        }
        if merged
            .solutions
            .iter()
            .any(|s| s.fractions.len() != pool.num_users())
        {
            return Err(bad_input(format!(
                "a witness has a fraction count other than the instance's {} users",
                pool.num_users()
            )));
        }
        let failures = enumerate::audit(&pool, &merged, CHECK_TOLERANCE);
        if !failures.is_empty() {
            return Err(bad_input(format!(
                "the independent BBF test rejects witnesses of the shards:\n{}",
                failures.join("\n")
            )));
        }
        merged.witnesses_verified = Some(true);
    }
    Ok(merged)
}
