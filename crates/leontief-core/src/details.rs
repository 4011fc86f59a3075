//! The typed blocks an allocation carries beside its tasks, per family:
//! `gap` ([`Gap`]: the references, a heuristic's distance to its exact
//! mechanism, the server-based equilibrium and its prices, the region-N
//! search of FDS/GFJ) and `bbf` ([`BbfDetails`]: the Eisenberg-Gale prices
//! and certificate, or the ODE trajectory's end). Serialised they are the
//! JSON of docs/instance-format.md.

use crate::Status;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `gap` block: each part present where it applies (flattened into one
/// JSON object).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Gap {
    /// Percent fairness and efficiency against exact DRFH and NFC.
    #[serde(flatten)]
    pub references: Option<ReferenceGap>,
    /// A whole-task heuristic against its exact mechanism.
    #[serde(flatten)]
    pub heuristic: Option<HeuristicGap>,
    /// PS-DSF and alphaPF-VDS: the equilibrium and its server prices.
    #[serde(flatten)]
    pub equilibrium: Option<Equilibrium>,
    /// FDS/GFJ/p-norm in region N: the certified global search.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region_n_search: Option<RegionNSearch>,
}

/// Where an allocation sits between fairness and efficiency (Sec. V of
/// 002).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReferenceGap {
    /// 100 x its smallest normalised dominant share over exact DRFH's.
    pub percent_fairness: f64,
    /// 100 x its total tasks over NFC's.
    pub percent_efficiency: f64,
    /// Unused capacity per resource (fraction), in the instance's units.
    pub leftover_capacity: Vec<f64>,
    /// What fairness is measured against.
    pub fairness_reference: String,
    /// What efficiency is measured against.
    pub efficiency_reference: String,
    /// The servers the references are computed on.
    pub references_on: String,
}

/// How far a heuristic allocation is from the exact one on the same
/// instance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeuristicGap {
    /// The exact mechanism compared against.
    pub exact_mechanism: String,
    /// Its status.
    pub exact_status: Status,
    /// min_n normalised share (heuristic) / min_n normalised share (exact).
    pub min_share_ratio: f64,
    /// Total tasks (heuristic) / total tasks (exact).
    pub total_tasks_ratio: f64,
    /// Utilisation per resource, heuristic.
    pub utilisation: Vec<f64>,
    /// Utilisation per resource, exact.
    pub exact_utilisation: Vec<f64>,
    /// Users with fewer tasks than under the exact allocation:
    /// (name, heuristic tasks, exact tasks).
    pub users_below_exact: Vec<(String, f64, f64)>,
}

/// The equilibrium of PS-DSF or alphaPF-VDS, with its server prices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Equilibrium {
    /// How it was found.
    pub path: String,
    /// Best-response sweeps.
    pub sweeps: usize,
    /// The Nikaido-Isoda gap bound of the certificate.
    pub nikaido_isoda_gap: f64,
    /// The KKT residual of the certificate.
    pub kkt_residual: f64,
    /// The certificate's cap split (0 without task caps).
    pub cap_split: f64,
    /// The certificate holds.
    pub equilibrium: bool,
    /// Per server entry, per unit of each resource, in the instance's
    /// units (times e^scale for the utility's prices).
    pub server_prices: Vec<Vec<f64>>,
    /// Per server entry, the log of the price scale.
    pub server_log_price_scale: Vec<f64>,
    /// How to read the prices.
    pub prices_note: String,
}

/// What the region-N search of FDS/GFJ did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RegionNSearch {
    /// Inner cone programs solved.
    pub evaluations: usize,
    /// Inner programs that returned no answer (their points bound nothing).
    pub inner_failures: usize,
    /// The worst status among the inner programs.
    pub worst_inner_status: Status,
    /// The largest upper bound on any open interval minus the best merit
    /// (<= 0 when every interval closed).
    pub certified_gap: f64,
    /// S at the answer.
    pub sigma: f64,
    /// The largest feasible S.
    pub sigma_max: f64,
    /// The evaluated (S, best merit at that S) pairs, sorted by S.
    pub profile: Vec<(f64, f64)>,
}

/// The `bbf` block of the BBF mechanisms.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum BbfDetails {
    /// bbf-eg: the Eisenberg-Gale allocation and its prices.
    Eg(EgDetails),
    /// bbf-ode: the end of the trajectory.
    Ode(OdeDetails),
}

/// The Eisenberg-Gale allocation of bbf-eg.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EgDetails {
    /// Conic or dual projected Newton.
    pub method: String,
    /// x_n, the fractions of the pooled model.
    pub fractions: Vec<f64>,
    /// The bottleneck set (resource names).
    pub bottlenecks: Vec<String>,
    /// The largest violation of condition (2).
    pub worst_violation: f64,
    /// The resource prices, by name.
    pub prices: BTreeMap<String, f64>,
    /// What the prices are.
    pub prices_meaning: String,
    /// e_n.
    pub entitlements: Vec<f64>,
    /// Newton-polished and certified.
    pub polished: bool,
    /// The solver's certificate.
    pub certificate: EgCertificate,
    /// Build, conic and polish seconds.
    pub seconds: EgSeconds,
}

/// The times of bbf-eg.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EgSeconds {
    /// Building the program.
    pub build: f64,
    /// The conic solve (or the dual's).
    pub conic: f64,
    /// The Newton polish.
    pub polish: f64,
}

/// The end of the ODE trajectory of bbf-ode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OdeDetails {
    /// "ode".
    pub method: String,
    /// t or log-c.
    pub parameterisation: String,
    /// x_n, the fractions of the pooled model.
    pub fractions: Vec<f64>,
    /// The bottleneck set (resource names).
    pub bottlenecks: Vec<String>,
    /// The largest violation of condition (2).
    pub worst_violation: f64,
    /// c at the end.
    pub final_c: f64,
    /// The parameter at the end.
    pub final_parameter: f64,
    /// Accepted steps.
    pub steps: u32,
    /// Rejected steps.
    pub rejected_steps: u32,
    /// Right-hand-side evaluations.
    pub evaluations: u32,
    /// The integrator's error, when it failed.
    pub integrator_error: Option<String>,
    /// e_n.
    pub entitlements: Vec<f64>,
}

/// The certificate of an Eisenberg-Gale solution (prices p, fractions x).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EgCertificate {
    /// max_j (load_j - 1)^+, max_n (x_n - ub_n)^+, max_n (-x_n)^+.
    pub primal_infeasibility: f64,
    /// max_j (-p_j)^+.
    pub negative_price: f64,
    /// max_j p_j |1 - load_j|.
    pub complementarity: f64,
    /// Stationarity: max over users below their bound of
    /// |e_n / x_n - q_n| / (e_n / x_n), and over users at it of
    /// (q_n - e_n / x_n)^+ / (e_n / x_n).
    pub stationarity: f64,
    /// g(p^+) - sum_n e_n log x_n (>= 0; bounds the objective's distance to
    /// the optimum).
    pub duality_gap: f64,
    /// sum_n e_n log x_n.
    pub objective: f64,
    /// sum_j p_j^+, the value of the capacity at the prices (0 in outputs
    /// written before it was printed).
    #[serde(default)]
    pub spending: f64,
}

impl EgCertificate {
    /// The largest residual (complementarity and the duality gap relative
    /// to max(|objective|, spending), or to 1 where both are 0).
    pub fn worst(&self) -> f64 {
        // Complementarity p_j |1 - load_j| and the duality gap are in units
        // of the objective (the gap is their sum, up to stationarity), so
        // both are relative to it: prices grow with the utilities'
        // coefficients (at alpha = 8 with 10,000 users |objective| is
        // 10^8 and p |1 - load| = 10^-7 is rounding, not a slack resource).
        // They shrink with them too, so the scale is not floored at 1: at
        // alpha = 32 on two users the objective is 1e-15, and prices 1e-14
        // on two resources 6% and 26% short of full passed as rounding.
        let scale = match self.objective.abs().max(self.spending) {
            s if s > 0.0 => s,
            _ => 1.0,
        };
        self.primal_infeasibility
            .max(self.negative_price)
            .max(self.complementarity / scale)
            .max(self.stationarity)
            .max(self.duality_gap.abs() / scale)
    }
}
