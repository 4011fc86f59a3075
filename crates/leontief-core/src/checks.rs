//! The typed results of the independent checks (leontief-audit computes
//! them; they live here so that [`crate::Verification`] can hold them).
//! Each serialises as the object docs/instance-format.md describes.

use serde::{Deserialize, Serialize};

/// Result of `leontief_audit::feasibility`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Feasibility {
    /// All rules hold.
    pub ok: bool,
    /// Largest capacity excess relative to the capacity (0 when feasible).
    pub max_capacity_excess: f64,
    /// Human-readable violations (at most 20).
    pub violations: Vec<String>,
    /// The most loaded server and resource (relative to its capacity),
    /// over capacity or not; `None` when nothing is used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fullest: Option<Load>,
}

/// The load of one resource on one server entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Load {
    /// The server entry.
    pub server: String,
    /// The resource.
    pub resource: String,
    /// What the allocation uses (all servers of a class together).
    pub used: f64,
    /// Its capacity (all servers of a class together).
    pub capacity: f64,
    /// used / capacity (above 1: over capacity by that factor).
    pub load: f64,
}

/// A user that can do better than the allocation gives it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Witness {
    /// The user.
    pub user: String,
    /// Its tasks in the allocation.
    pub has: f64,
    /// Tasks it can reach while the protected users keep theirs.
    pub can_reach: f64,
    /// The gain in global dominant share, (can_reach - has) mu_n.
    pub share_gain: f64,
    /// The gain exceeds what the LP's own tolerances could produce for this
    /// user (`leontief_audit::resolution`): a real rise. An unresolved witness
    /// still fails the check, but a valid dual certificate (a proof, not
    /// an approximation) overrules it.
    pub resolved: bool,
}

/// Result of `leontief_audit::max_min` and `max_min_per_user`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MaxMinCheck {
    /// The property holds (and every LP solved).
    pub ok: bool,
    /// LPs solved.
    pub lps: usize,
    /// The user that rises most (in share units), if any rises.
    pub witness: Option<Witness>,
    /// A solve that did not end optimal, if any (the check is then not ok).
    pub failed_status: Option<String>,
}

/// Result of `leontief_audit::pareto`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParetoCheck {
    /// No Pareto improvement exists.
    pub ok: bool,
    /// Largest gain in the sum of dominant shares with nobody worse off.
    pub total_gain: f64,
    /// A solve that did not end optimal, if any.
    pub failed_status: Option<String>,
    /// Some user's gain exceeds what the LP's tolerances could produce for
    /// it (`leontief_audit::resolution`); an unresolved improvement still fails
    /// the check, but a valid dual certificate overrules it.
    pub resolved: bool,
    /// When the check fails: the users that gain (nobody loses) and the
    /// improving allocation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub improvement: Option<Improvement>,
}

/// A Pareto improvement: a feasible allocation as good for every user and
/// better for these.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Improvement {
    /// The users that gain, largest gain (in dominant shares) first.
    pub gainers: Vec<Change>,
    /// The improving allocation (nonzero entries).
    pub allocation: Vec<Placed>,
}

/// The result of `leontief_audit::max_min_certificate`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CertificateCheck {
    /// Every user is proved: by its round's prices, its cap, or by having
    /// nowhere to run.
    pub ok: bool,
    /// Rounds checked.
    pub rounds: usize,
    /// Runnable pairs read (over all rounds).
    pub pairs: usize,
    /// The largest relative room left to a certified user,
    /// `(C(p) - sum_k u_k X'_k) / (u_n X'_n)` (0 is exact).
    pub worst_room: f64,
    /// Why not, at most 20 lines.
    pub violations: Vec<String>,
}

/// The result of `leontief_audit::total_certificate`: the weak-duality
/// bound of an NFC certificate against the allocation's total.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TotalCheck {
    /// The bound meets the total within the tolerance.
    pub ok: bool,
    /// Pairs read (every pair that can carry a task).
    pub pairs: usize,
    /// The allocation's total tasks.
    pub total: f64,
    /// The certificate's upper bound on any feasible total.
    pub bound: f64,
    /// The least price of one task over every pair (the bound divides by
    /// it; 1 for an exact dual solution).
    pub least_task_price: f64,
    /// `(bound - total) / bound` (0 is exact).
    pub relative_gap: f64,
    /// Why not, at most 20 lines.
    pub violations: Vec<String>,
}

/// One user's worst Definition-4 check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PsdsfUserCheck {
    /// The server entry where the check is tightest (name).
    pub server: Option<String>,
    /// How far it fails there (0 when it holds on every eligible server):
    /// the excess of the largest competing s_{m,i}/w_m over s_{n,i}/w_n,
    /// relative to the former, on the best saturated resource (at most
    /// 1), or 1 when no resource the user needs is saturated there.
    pub violation: f64,
}

/// The Definition-4 certificate of an allocation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PsdsfCheck {
    /// Tolerance on saturation and on share comparisons (relative).
    pub tolerance: f64,
    /// Per user.
    pub users: Vec<PsdsfUserCheck>,
    /// max over users.
    pub worst_violation: f64,
    /// The largest capacity or cap overrun (relative), and placement.
    pub infeasibility: f64,
    /// Both within the tolerance.
    pub holds: bool,
}

/// Per server entry, from (x, prices) alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerCertificate {
    /// Server entry name.
    pub server: String,
    /// Upper bound on the server's best-response improvement g_i(lambda_i)
    /// - U_i(x), relative to its spending sum_r lambda_{i,r} c_{i,r}.
    pub gap: f64,
    /// The largest relative distance of a user's total x_n to its best
    /// total at the server's prices (the KKT residual).
    pub kkt: f64,
}

/// The certificate of an alphaPF-VDS equilibrium.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VdsCertificate {
    /// The tolerance the verdict uses.
    pub tolerance: f64,
    /// Per server entry.
    pub servers: Vec<ServerCertificate>,
    /// Sum over the servers of the relative gaps: an upper bound on the
    /// (relative) Nikaido-Isoda gap.
    pub nikaido_isoda_gap: f64,
    /// The worst KKT residual.
    pub kkt_residual: f64,
    /// The worst share of a capped user's tasks on servers where its
    /// marginal utility per unit of price is below the best of its
    /// eligible servers, each weighted by the relative shortfall (the
    /// selection among the equilibria that task caps leave open; 0 without
    /// caps).
    pub cap_split: f64,
    /// Largest capacity, cap or placement violation (relative), and
    /// negative prices.
    pub infeasibility: f64,
    /// The gap and the infeasibility within the tolerance, the KKT
    /// residual and the cap split within its square root.
    pub holds: bool,
}

/// The BBF test on one user.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserCheck {
    /// x_n >= 1 - tolerance for a capped user (the first disjunct).
    pub full: bool,
    /// The bottleneck j maximising x_n r_{n,j} (the second disjunct's
    /// witness), if any bottleneck is requested by the user.
    pub witness: Option<String>,
    /// x_n r_{n,witness} - e_n (>= 0 when the second disjunct holds).
    pub margin: f64,
    /// How far condition (2) fails for this user (0 when it holds).
    pub violation: f64,
}

/// The BBF test (condition (2)) of an allocation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BbfCheck {
    /// Tolerance: j is a bottleneck when its load is >= 1 - tolerance.
    pub tolerance: f64,
    /// J(x), the bottleneck set (resource names).
    pub bottlenecks: Vec<String>,
    /// J(x) as indices.
    #[serde(skip)]
    pub bottleneck_ids: Vec<usize>,
    /// Loads sum_n x_n r_{n,j}.
    pub loads: Vec<f64>,
    /// Per user.
    pub users: Vec<UserCheck>,
    /// max_n violation_n.
    pub worst_violation: f64,
    /// max_j (load_j - 1)^+ and max_n (x_n - ub_n)^+ and max_n (-x_n)^+:
    /// how far the allocation is from feasible.
    pub infeasibility: f64,
    /// Both within the tolerance.
    pub holds: bool,
}

/// One user's tasks before and after a witness allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// The user.
    pub user: String,
    /// Its tasks in the audited allocation.
    pub has: f64,
    /// Its tasks in the witness allocation.
    pub gets: f64,
}

/// One nonzero entry of a witness allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placed {
    /// The user.
    pub user: String,
    /// The server entry.
    pub server: String,
    /// Tasks of the user there.
    pub tasks: f64,
}
