//! Property checks on any allocation, independent of how it was computed.
//!
//! Each check reads only the instance and the allocation's task counts and
//! builds its own LPs (never the mechanism's), so a bug in a mechanism
//! cannot certify itself. Every failed check carries a witness.
//!
//! * [`feasibility`]: capacities, placement, caps, non-negativity, and
//!   `user_tasks[n] = sum_i tasks[n][i]`.
//! * [`max_min`]: weighted lexicographic max-min optimality for shares
//!   `s_n = sigma_n x_n`: no user can rise while every user whose level is no
//!   larger keeps its tasks. One LP per group of tied levels (the sum of the
//!   group's levels is maximised; if it cannot grow, no member can);
//!   [`max_min_per_user`] is the one-LP-per-user form of the same check.
//! * [`pareto`]: no feasible allocation gives everybody at least as much and
//!   the total more (one LP).
//! * [`max_min_certificate`]: the same max-min property (and Pareto
//!   optimality) proved from the solver's dual prices by weak duality, in
//!   one pass over every runnable pair per round, without an LP.
//! * [`envy`]: no user could run more tasks with another's per-server
//!   bundle, scaled by the weights (no LP).
#![deny(missing_docs)]

pub mod bbf;
mod certificate;
pub mod closure;
mod envy;
pub mod equilibrium;
pub mod exact;
mod feasibility;
pub mod first_order;
pub mod hierarchy;
pub mod judge;
mod list_groups;
mod max_min;
mod pareto;
pub mod pending;
pub mod placement;
mod polytope;
pub mod schedulers;
mod total;
pub mod verdicts;
pub mod verify;
mod witness;
pub use certificate::{max_min_certificate, pooled_prices, CertificateCheck};
pub use envy::{envy, EnvyCheck};
pub use feasibility::{feasibility, Feasibility, Load};
pub use max_min::{max_min, max_min_per_user, rise, MaxMinCheck, Rise, Witness};
pub use pareto::{pareto, Improvement, ParetoCheck};
pub use polytope::resolution;
pub use total::{total_certificate, TotalCheck};
pub use witness::{Change, Placed};

use serde::Serialize;

/// Tolerances of the checks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AuditTolerance {
    /// Relative tolerance on capacities and task counts. Default 1e-7.
    pub feasibility: f64,
    /// A user "rises" (or envies, or a Pareto improvement exists) when the
    /// gain exceeds this in global dominant-share units (tasks times mu_n,
    /// summed over users for Pareto). Default 1e-6.
    pub rise: f64,
}

impl Default for AuditTolerance {
    fn default() -> Self {
        AuditTolerance {
            feasibility: 1e-7,
            rise: 1e-6,
        }
    }
}
