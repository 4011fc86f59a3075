//! Judge an allocation made anywhere (a production scheduler's snapshot, a
//! heuristic, a paper's table) property by property, each with a witness
//! when it fails: the core of `leontief audit`.

use crate::bbf::{condition2, BbfCheck, Pooled};
use crate::pending::{NodeLine, PendingUser};
use crate::placement::SharingIncentiveCheck;
use crate::placement::{equal_split, psdsf, sharing_incentive_check, PsdsfCheck};
use crate::polytope::mu;
use crate::verify::VerifyMode;
use crate::witness::placed_dense;
use crate::{AuditTolerance, Feasibility, MaxMinCheck, ParetoCheck, Rise};
use crate::{Change, Witness};
use leontief_core::shares::dominant_sigma;
use leontief_core::{Allocation, Instance, Tasks, UserId};
use leontief_model::{BackendError, LpBackend};
use serde::Serialize;

/// Up to this many eligible user-server pairs
/// ([`leontief_core::Instance::num_eligible_pairs`], the flat LP's
/// columns) the LP-based properties (max-min, Pareto) run under
/// [`VerifyMode::Auto`] (measured: 7.3 s at 100,000 pairs, 63 s and 0.8
/// GB at 900,000). Above, DRFH max-min is decided by comparison
/// with a certified DRFH answer when one is given (see [`judge`]).
pub const LP_CHECKS_UP_TO: usize = 20_000;

/// Task counts within this of an integer are whole.
const WHOLE: f64 = 1e-6;

/// Every property of an allocation, each with its witness where it fails.
#[derive(Debug, Clone, Serialize)]
pub struct Judgement {
    /// One line per property (the readable form of what follows).
    pub summary: Vec<Verdict>,
    /// Capacities, placement, caps, signs; the fullest server and resource.
    pub feasibility: Feasibility,
    /// Whole tasks: every count an integer, and feasible.
    pub whole_tasks: WholeTasks,
    /// Every user runs at least what an equal split of every server gives
    /// it.
    pub sharing_incentive: SharingIncentiveCheck,
    /// Nobody could run more tasks with another's per-server bundle.
    pub envy_freeness: EnvyFreeness,
    /// No allocation is as good for every user and better for one; `None`
    /// when not checked (size).
    pub pareto: Option<ParetoCheck>,
    /// DRFH: weighted lexicographic max-min of global dominant shares under
    /// placement; `None` when not checked (size).
    pub drfh_max_min: Option<MaxMin>,
    /// Condition (2) of bottleneck-based fairness (003) on the pooled
    /// model; `None` when a user demands a resource no server has.
    pub bbf: Option<BbfCheck>,
    /// PS-DSF Definition 4 (004): every user is blocked on every server it
    /// may use by a saturated resource where nobody it competes with has a
    /// higher weighted virtual dominant share.
    pub psdsf: PsdsfCheck,
    /// Per user: tasks, shares, equal split.
    pub users: Vec<UserLine>,
    /// The users below their task cap, each with why it waits.
    pub pending: Vec<PendingUser>,
    /// Per server: its fullest resource and the users there.
    pub nodes: Vec<NodeLine>,
}

/// The whole-task property.
#[derive(Debug, Clone, Serialize)]
pub struct WholeTasks {
    /// Every task count is an integer (within 1e-6).
    pub integral: bool,
    /// The first fractional entry (user, server, tasks), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fractional: Option<(String, String, f64)>,
    /// Integral and feasible.
    pub holds: bool,
}

/// Envy-freeness with its witness.
#[derive(Debug, Clone, Serialize)]
pub struct EnvyFreeness {
    /// Nobody envies anybody beyond the tolerance.
    pub holds: bool,
    /// The worst envy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Envy>,
}

/// One user envying another.
#[derive(Debug, Clone, Serialize)]
pub struct Envy {
    /// The envious user.
    pub user: String,
    /// The user whose bundle it would rather have.
    pub envies: String,
    /// Tasks it would run with that bundle (scaled by the weights, capped).
    pub could_run: f64,
    /// Tasks it runs.
    pub has: f64,
}

/// DRFH max-min with the rise made concrete.
#[derive(Debug, Clone, Serialize)]
pub struct MaxMin {
    /// How it was decided: "flat LP" or "comparison with the certified
    /// DRFH answer".
    pub by: &'static str,
    /// The check.
    pub check: MaxMinCheck,
    /// When it fails: the rising user, who pays, and the allocation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rise: Option<Rise>,
}

/// One user's figures.
#[derive(Debug, Clone, Serialize)]
pub struct UserLine {
    /// The user.
    pub user: String,
    /// Its tasks (the sum over servers).
    pub tasks: f64,
    /// Global dominant share mu_n x_n.
    pub dominant_share: f64,
    /// Weighted level mu_n x_n / w_n (what DRFH equalises).
    pub level: f64,
    /// Tasks with (w_n / sum w) of every server it may use.
    pub equal_split: f64,
}

/// One property's verdict in a line.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// The property.
    pub property: &'static str,
    /// Holds, fails, or `None`: not checked / not applicable.
    pub holds: Option<bool>,
    /// The witness (or why it was not checked), in words.
    pub detail: String,
}

/// Judge `tasks` (per user, per server entry) on `instance`. The LP-based
/// properties run up to [`LP_CHECKS_UP_TO`] pairs under `Auto`, always
/// under `Always`, never under `Never`.
///
/// `drfh`, a DRFH answer on the same instance whose verification passed,
/// decides DRFH max-min where the flat LP does not run, in one pass: the
/// weighted lexicographic max-min levels are unique, so the allocation is
/// max-min exactly when no user's level is below its DRFH level; and if
/// some are, the one with the lowest level rises to its DRFH tasks in the
/// DRFH allocation itself, where every user at or below its level keeps at
/// least its tasks (they are not below theirs): the witness, with the
/// users that hold less there as payers.
///
/// ```
/// use leontief_audit::judge::judge;
/// use leontief_audit::verify::VerifyMode;
/// use leontief_core::Instance;
/// let instance = Instance::from_json_str(r#"{
///     "resources": ["cpu", "mem"],
///     "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
///     "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]
/// }"#).unwrap();
/// // A scheduler put u1 on s1 only and u2 on s2 only, 5 tasks each.
/// let tasks = leontief_core::Tasks::from(vec![vec![5.0, 0.0], vec![0.0, 5.0]]);
/// let j = judge(&leontief_highs::Highs::default(), &instance, &tasks, VerifyMode::Auto, None).unwrap();
/// assert!(j.feasibility.ok);
/// assert!(!j.pareto.unwrap().ok); // both could run 10
/// let rise = j.drfh_max_min.unwrap().rise.unwrap();
/// assert!(rise.user.gets > 9.0 && rise.payers.is_empty());
/// ```
pub fn judge<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    tasks: &Tasks,
    mode: VerifyMode,
    drfh: Option<&Allocation>,
) -> Result<Judgement, BackendError> {
    let tol = AuditTolerance::default();
    let x: Vec<f64> = tasks.user_totals();
    let feasibility = crate::feasibility(instance, &x, tasks, true, &tol);
    let fractional = tasks.nonzeros().find_map(|(n, i, t)| {
        ((t - t.round()).abs() > WHOLE).then(|| {
            (
                instance.users()[n].name.clone(),
                instance.servers()[i].name.clone(),
                t,
            )
        })
    });
    let whole_tasks = WholeTasks {
        integral: fractional.is_none(),
        holds: fractional.is_none() && feasibility.ok,
        fractional,
    };
    let envy = crate::envy(instance, tasks, true, &tol);
    let envy_freeness = EnvyFreeness {
        holds: envy.ok && feasibility.ok,
        witness: envy.worst.map(|(user, envies, could_run, has)| Envy {
            user,
            envies,
            could_run,
            has,
        }),
    };
    let size = instance.num_eligible_pairs();
    // On an infeasible allocation no optimality property holds, and the
    // LPs, which hold users at infeasible tasks, prove nothing: they do
    // not run (the verdicts say "no: infeasible").
    let lp = feasibility.ok
        && match mode {
            VerifyMode::Always => true,
            VerifyMode::Never => false,
            VerifyMode::Auto => size <= LP_CHECKS_UP_TO,
        };
    let (pareto, drfh_max_min) = if lp {
        let sigma = dominant_sigma(instance);
        let check = crate::max_min(backend, instance, &sigma, &x, true, &tol)?;
        let rise = match &check.witness {
            Some(w) => crate::rise(backend, instance, &sigma, tasks, true, w)?,
            None => None,
        };
        (
            Some(crate::pareto(backend, instance, &x, true, &tol)?),
            Some(MaxMin {
                by: "flat LP",
                check,
                rise,
            }),
        )
    } else if mode != VerifyMode::Never && feasibility.ok {
        let certified = drfh
            .filter(|a| a.status.has_solution() && a.verification.as_ref().is_some_and(|v| v.ok));
        (
            None,
            certified.map(|a| max_min_by_drfh(instance, &x, a, &tol)),
        )
    } else {
        (None, None)
    };
    // A lexicographic max-min is Pareto optimal: where the comparison with
    // DRFH proves it, Pareto optimality follows.
    let pareto = match (&pareto, &drfh_max_min) {
        (None, Some(m)) if m.check.ok => Some(ParetoCheck {
            ok: true,
            total_gain: 0.0,
            failed_status: None,
            resolved: false,
            improvement: None,
        }),
        _ => pareto,
    };
    // One feasibility verdict for the whole audit: BBF and PS-DSF have
    // tolerances of their own on saturation, never on capacities.
    let bbf = Pooled::new(instance).map(|p| {
        let f: Vec<f64> = x.iter().zip(&p.unit).map(|(&a, &u)| a / u).collect();
        let mut b = condition2(&p.resources, &p.r, &p.e, &p.ub, &f, 1e-6);
        b.holds &= feasibility.ok;
        b
    });
    let mut psdsf = psdsf(instance, tasks, 1e-6);
    psdsf.holds &= feasibility.ok;
    let users = instance
        .user_ids()
        .map(|n| user_line(instance, n, x[n.0]))
        .collect();
    let mut j = Judgement {
        summary: Vec::new(),
        sharing_incentive: {
            let mut si = sharing_incentive_check(instance, &x, 1e-6);
            si.holds &= feasibility.ok;
            si
        },
        feasibility,
        whole_tasks,
        envy_freeness,
        pareto,
        drfh_max_min,
        bbf,
        psdsf,
        users,
        pending: crate::pending::pending(instance, tasks),
        nodes: crate::pending::nodes(instance, tasks),
    };
    j.summary = crate::verdicts::verdicts(&j, size);
    Ok(j)
}

fn user_line(instance: &Instance, n: UserId, x: f64) -> UserLine {
    let mu = instance.mu(n);
    let share = if x == 0.0 { 0.0 } else { mu * x };
    UserLine {
        user: instance.user(n).name.clone(),
        tasks: x,
        dominant_share: share,
        level: share / instance.user(n).weight,
        equal_split: equal_split(instance, n),
    }
}

/// DRFH max-min of tasks per user `x` decided against `drfh`, a DRFH
/// answer on the same instance whose verification passed (see [`judge`]);
/// no LP.
pub fn max_min_by_drfh(
    instance: &Instance,
    x: &[f64],
    drfh: &Allocation,
    tol: &AuditTolerance,
) -> MaxMin {
    let sigma = dominant_sigma(instance);
    let level = |n: usize, v: f64| {
        if v == 0.0 {
            0.0
        } else {
            sigma[n] * v / instance.users()[n].weight
        }
    };
    let y = &drfh.user_tasks;
    // Users below their DRFH level by more than the rise tolerance (in
    // dominant shares), lowest audited level first.
    let riser = (0..x.len())
        .filter(|&n| (y[n] - x[n]) * mu(instance, n) > tol.rise)
        .min_by(|&a, &b| level(a, x[a]).total_cmp(&level(b, x[b])));
    let Some(n) = riser else {
        return MaxMin {
            by: "comparison with the certified DRFH answer",
            check: MaxMinCheck {
                ok: true,
                lps: 0,
                witness: None,
                failed_status: None,
            },
            rise: None,
        };
    };
    let name = |k: usize| instance.users()[k].name.clone();
    let mut payers: Vec<(f64, Change)> = (0..x.len())
        .filter(|&k| y[k] < x[k])
        .map(|k| {
            let loss = (x[k] - y[k]) * mu(instance, k);
            (
                loss,
                Change {
                    user: name(k),
                    has: x[k],
                    gets: y[k],
                },
            )
        })
        .collect();
    payers.sort_by(|a, b| b.0.total_cmp(&a.0));
    let allocation = placed_dense(instance, &drfh.tasks);
    MaxMin {
        by: "comparison with the certified DRFH answer",
        check: MaxMinCheck {
            ok: false,
            lps: 0,
            witness: Some(Witness {
                user: name(n),
                has: x[n],
                can_reach: y[n],
                share_gain: (y[n] - x[n]) * mu(instance, n),
                resolved: true,
            }),
            failed_status: None,
        },
        rise: Some(Rise {
            user: Change {
                user: name(n),
                has: x[n],
                gets: y[n],
            },
            payers: payers.into_iter().map(|(_, c)| c).collect(),
            allocation,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::VerifyMode;

    /// 30 users on 1,000 servers: 30,000 pairs, but each user may run on
    /// 2 of them (`servers` lists), or on all.
    fn cluster(lists: bool) -> Instance {
        let servers: Vec<String> = (0..1000)
            .map(|i| format!(r#"{{"name": "s{i}", "capacity": [1, 1]}}"#))
            .collect();
        let users: Vec<String> = (0..30)
            .map(|n| {
                let list = if lists {
                    format!(r#", "servers": ["s{}", "s{}"]"#, 2 * n, 2 * n + 1)
                } else {
                    String::new()
                };
                format!(r#"{{"name": "u{n}", "demand": [0.5, 0.25]{list}}}"#)
            })
            .collect();
        Instance::from_json_str(&format!(
            r#"{{"resources": ["cpu", "mem"], "servers": [{}], "users": [{}]}}"#,
            servers.join(", "),
            users.join(", ")
        ))
        .unwrap()
    }

    /// Each user at 2 tasks on its first server, its second idle.
    fn first_servers_only() -> Tasks {
        let dense: Vec<Vec<f64>> = (0..30)
            .map(|n| {
                (0..1000)
                    .map(|i| if i == 2 * n { 2.0 } else { 0.0 })
                    .collect()
            })
            .collect();
        Tasks::from(dense)
    }

    #[test]
    fn the_lp_checks_are_sized_by_the_pairs_placement_allows() {
        let highs = leontief_highs::Highs::default();
        // Each user at 2 tasks on its first server: max-min and Pareto
        // fail (the second server is idle), found by the flat LP.
        let listed = cluster(true);
        let tasks = first_servers_only();
        let j = judge(&highs, &listed, &tasks, VerifyMode::Auto, None).unwrap();
        assert_eq!(listed.num_eligible_pairs(), 60);
        assert!(!j.pareto.as_ref().expect("checked by the flat LP").ok);
        let m = j.drfh_max_min.as_ref().expect("checked by the flat LP");
        assert_eq!(m.by, "flat LP");
        assert!(!m.check.ok);
        // Without lists the same allocation has 30,000 pairs: not checked.
        let free = cluster(false);
        let j = judge(&highs, &free, &tasks, VerifyMode::Auto, None).unwrap();
        assert!(j.pareto.is_none() && j.drfh_max_min.is_none());
        let line = j.summary.iter().find(|v| v.property == "Pareto optimality");
        assert!(
            line.is_some_and(|v| v.detail.contains("30000 eligible")),
            "{line:?}"
        );
    }

    /// A check whose LP ended without a solution decides nothing: its
    /// verdict is undetermined, not "fails" (an LP HiGHS ended `Unknown`
    /// at 1,000 x 10,000 with placement lists read as "DRFH max-min:
    /// false").
    #[test]
    fn a_check_whose_lp_failed_is_undetermined() {
        let highs = leontief_highs::Highs::default();
        let listed = cluster(true);
        let tasks = first_servers_only();
        let mut j = judge(&highs, &listed, &tasks, VerifyMode::Auto, None).unwrap();
        let failed = Some("unknown (Unknown)".to_string());
        if let Some(p) = j.pareto.as_mut() {
            p.failed_status = failed.clone();
            p.improvement = None;
        }
        if let Some(m) = j.drfh_max_min.as_mut() {
            m.check.failed_status = failed;
            m.check.witness = None;
            m.rise = None;
        }
        for v in crate::verdicts::verdicts(&j, 60) {
            if v.property == "Pareto optimality" || v.property == "DRFH max-min" {
                assert_eq!(v.holds, None, "{v:?}");
                assert!(
                    v.detail.starts_with("undetermined: its LP ended unknown"),
                    "{v:?}"
                );
            }
        }
    }
}
