//! The verification attached to every answer, typed: whether the
//! mechanism's defining property holds (`ok`) and each check that was
//! made, with its numbers and witnesses. leontief-audit fills it; its
//! serde form is the `verification` object of docs/instance-format.md
//! (a check that was not made is absent).

use crate::checks::{
    BbfCheck, CertificateCheck, Feasibility, MaxMinCheck, ParetoCheck, PsdsfCheck, TotalCheck,
    VdsCertificate,
};
use serde::Serialize;

/// The independent check of an allocation.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Verification {
    /// The mechanism's defining property holds (and was checked).
    pub ok: bool,
    /// Why nothing (or not everything) could be checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The property checked, in words (or why it was not checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    /// `feasibility only` when the property itself was not checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
    /// Capacities, placement, caps, signs and row sums.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feasibility: Option<Feasibility>,
    /// Users frozen in one round share one level (max-min family).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundsCheck>,
    /// The certificate check: max-min prices, PS-DSF's Definition 4 or
    /// the VDS equilibrium.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub certificate: Option<Certificate>,
    /// The lexicographic max-min: the flat LP check, or implied by the
    /// certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_min: Option<Verdict<MaxMinCheck>>,
    /// Pareto optimality: the flat LP check, or implied by the
    /// certificate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pareto: Option<Verdict<ParetoCheck>>,
    /// Per-server DRF: the max-min inside every server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_server_max_min: Option<PerServerMaxMin>,
    /// NFC: the LP's optimality, residuals recomputed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimality: Option<LpOptimality>,
    /// Heuristics: every entry a whole number of tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole_tasks: Option<bool>,
    /// Heuristics: the fractional entries (at most 10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fractional: Option<Vec<String>>,
    /// Server-based: the largest shortfall below the equal split.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing_incentive_shortfall: Option<f64>,
    /// Server-based: the largest relative envy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub envy: Option<f64>,
    /// Server-based: the Definition-2 bottleneck check of 004.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<Bottleneck>,
    /// The Frank-Wolfe gap of a concave merit (fairness-efficiency, BBF).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frank_wolfe_gap: Option<FrankWolfe>,
    /// BBF: condition (2) of 003.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bbf: Option<BbfCheck>,
    /// BBF: the duality gap of the printed prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duality_gap: Option<f64>,
    /// Hierarchical mechanisms: the filling's trace replayed and checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hierarchy: Option<HierarchyCheck>,
    /// Production schedulers' share algorithms: the shares recomputed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<SchedulerCheck>,
}

/// The check of a production scheduler's share algorithm (`yarn-fair`,
/// `kai`, `volcano-proportion`, `kueue`): its printed shares against an
/// independent computation of the same shares, and the tasks inside them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SchedulerCheck {
    /// The algorithm.
    pub algorithm: String,
    /// How the shares were recomputed, in words.
    pub method: String,
    /// Shares compared (one per queue or user and resource).
    pub shares_checked: usize,
    /// The largest difference between a printed share and the recomputed
    /// one, in units of the allowance (at most 1 passes).
    pub worst_share_error: f64,
    /// Shares off by more than the allowance (at most 10).
    pub mismatched: Vec<String>,
    /// Users whose tasks are not what their share admits, or that could
    /// take one more task where the algorithm says nothing fits (at most
    /// 10).
    pub tasks_mismatched: Vec<String>,
    /// Every task whole, every limit and the cluster held.
    pub whole_and_within: bool,
}

/// The check of a hierarchical allocation (`hdrf`, `hdrfh`,
/// `hdrf-naive`) against its printed trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HierarchyCheck {
    /// Every queue's usage within its limit.
    pub limits_held: bool,
    /// The largest relative difference between a user's tasks and the
    /// sum of its phases' growth.
    pub replay_error: f64,
    /// Phases checked.
    pub phases: usize,
    /// Growing users whose queue path was not at the lowest share among
    /// its open siblings at a phase's start or end (at most 10).
    pub not_lowest: Vec<String>,
    /// Users claimed stopped (in a phase, or at the end) that could still
    /// grow (at most 10).
    pub not_stuck: Vec<String>,
    /// LPs solved.
    pub lps: usize,
}

impl Verification {
    /// Not verified, and why.
    pub fn not_verified(reason: impl Into<String>) -> Verification {
        Verification {
            reason: Some(reason.into()),
            ..Verification::default()
        }
    }
}

/// The JSON text.
impl std::fmt::Display for Verification {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match serde_json::to_string(self) {
            Ok(t) => f.write_str(&t),
            Err(_) => Err(std::fmt::Error),
        }
    }
}

/// A check made by its own LP, or implied by a proof already checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Verdict<T> {
    /// Checked by the flat LP.
    Checked(T),
    /// Implied (`by` says by what).
    Implied(Implied),
}

impl<T> Verdict<T> {
    /// The check, when its LP ran.
    pub fn checked(&self) -> Option<&T> {
        match self {
            Verdict::Checked(t) => Some(t),
            Verdict::Implied(_) => None,
        }
    }
}

/// A check that holds or not.
pub trait Holds {
    /// It holds.
    fn holds(&self) -> bool;
}

impl Holds for MaxMinCheck {
    fn holds(&self) -> bool {
        self.ok
    }
}

impl Holds for ParetoCheck {
    fn holds(&self) -> bool {
        self.ok
    }
}

impl<T: Holds> Verdict<T> {
    /// The property holds (checked, or implied).
    pub fn ok(&self) -> bool {
        match self {
            Verdict::Checked(c) => c.holds(),
            Verdict::Implied(i) => i.ok,
        }
    }
}

/// A property implied by another check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implied {
    /// It holds.
    pub ok: bool,
    /// By what.
    pub by: String,
}

/// The certificate check of a mechanism.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Certificate {
    /// The dual certificate of the lexicographic max-min.
    MaxMin(CertificateCheck),
    /// Definition 4 of 004, per user.
    Psdsf(PsdsfCheck),
    /// The alphaPF-VDS equilibrium from the printed server prices.
    Vds(VdsCertificate),
    /// NFC: the weak-duality bound of the printed prices.
    Total(TotalCheck),
}

impl Certificate {
    /// The certificate proves the property.
    pub fn ok(&self) -> bool {
        match self {
            Certificate::MaxMin(c) => c.ok,
            Certificate::Psdsf(c) => c.holds,
            Certificate::Vds(c) => c.holds,
            Certificate::Total(c) => c.ok,
        }
    }
}

/// Users frozen in the same round below their caps share one level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundsCheck {
    /// The claim, in words.
    pub property: String,
    /// It holds.
    pub ok: bool,
    /// The round whose levels differ most, when beyond the tie tolerance.
    pub worst: Option<Spread>,
}

/// Two users of one round whose levels differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    /// The user with the lowest level.
    pub lowest: String,
    /// The user with the highest level.
    pub highest: String,
    /// (highest - lowest) / highest.
    pub relative_spread: f64,
}

/// Per-server DRF: the max-min LP inside every server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerServerMaxMin {
    /// Every server passed.
    pub ok: bool,
    /// LPs solved.
    pub lps: usize,
    /// The first server that failed, with its check.
    pub witness: Option<ServerWitness>,
}

/// A server whose max-min check failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerWitness {
    /// The server entry.
    pub server: String,
    /// Its check.
    pub check: MaxMinCheck,
}

/// The optimality of an LP answer, from residuals recomputed outside the
/// solver.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LpOptimality {
    /// What was checked.
    pub property: String,
    /// Largest primal residual.
    pub primal_infeasibility: f64,
    /// Largest dual residual.
    pub dual_infeasibility: f64,
    /// Relative primal-dual objective gap.
    pub relative_gap: f64,
    /// All within the tolerance.
    pub ok: bool,
}

/// The Definition-2 bottleneck check of 004.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Bottleneck {
    /// Checked: PS-DSF is the weighted max-min of x_n D_(n,rho).
    Checked {
        /// rho.
        resource: String,
        /// Definition 2, in words.
        definition: String,
        /// The max-min check.
        weighted_max_min: MaxMinCheck,
    },
    /// Not applied, and why.
    NotApplied {
        /// Why.
        not_applied: String,
    },
}

/// The Frank-Wolfe gap, or why it was not computed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FrankWolfe {
    /// The gap (relative).
    Gap(f64),
    /// `not checked: ...` or `not run: ...`.
    NotChecked(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_checks_are_left_out_and_variants_print_bare() {
        let v = Verification {
            ok: true,
            property: Some("p".into()),
            max_min: Some(Verdict::Implied(Implied {
                ok: true,
                by: "certificate".into(),
            })),
            frank_wolfe_gap: Some(FrankWolfe::Gap(1e-9)),
            ..Verification::default()
        };
        assert_eq!(
            v.to_string(),
            r#"{"ok":true,"property":"p","max_min":{"ok":true,"by":"certificate"},"frank_wolfe_gap":1e-9}"#
        );
        assert!(v.max_min.as_ref().unwrap().ok());
        let n = Verification::not_verified("no solution");
        assert_eq!(n.to_string(), r#"{"ok":false,"reason":"no solution"}"#);
    }
}
