//! # leontief: exact multi-resource fair allocations
//!
//! One entry point for every mechanism: [`solve`] takes an [`Instance`]
//! (servers, users with Leontief demands, weights, caps, placement), a
//! [`Mechanism`] and [`Options`], and returns the allocation, checked
//! against the mechanism's defining property by code independent of the
//! solve (`verification`), in the instance's units. `leontief solve` on the
//! command line is this call followed by [`to_json`].
//!
//! ```
//! use leontief::{solve, Instance, Mechanism, Options};
//!
//! let instance = Instance::from_json_str(r#"{
//!     "resources": ["cpu", "mem"],
//!     "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
//!     "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]
//! }"#)?;
//! let a = solve(&instance, &"drfh".parse::<Mechanism>()?, &Options::default())?;
//! assert_eq!(a.status, leontief::Status::Optimal);
//! assert!((a.user_tasks[0] - 10.0).abs() < 1e-6 && (a.user_tasks[1] - 10.0).abs() < 1e-6);
//! assert!(a.verification.as_ref().unwrap().ok);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A solver status (optimal, infeasible, time limit, numerical failure)
//! is never an error: it is the answer's `status`. `Err` means the call
//! could not run: a bad parameter ([`Error::Parameter`], naming it), input
//! this mechanism refuses ([`Error::Input`]), a solver back end that
//! failed ([`Error::Backend`], the back end's own typed error), or a step
//! around the solvers that could not run ([`Error::Run`]). [`Options`]
//! are backend-neutral ([`Algorithm`] is the project's own choice of LP
//! algorithm); each back end validates what it takes of them and refuses
//! a bad value as [`Error::Parameter`], naming the option.
//!
//! Also: [`sweep`] (one mechanism over a range of a parameter, against
//! the DRFH and NFC references), [`enumerate_bbf`] (every
//! bottleneck-based fair allocation) and [`solve_reporting`] ([`solve`]
//! telling a [`Progress`] callback after each max-min round how many
//! users are frozen, for solves that take minutes).

pub mod audit;
mod bbf;
mod conic;
mod error;
mod families;
mod generated;
pub mod import;
mod mechanism;
mod options;
mod output;
mod references;
mod server_based;
pub mod simulate;
mod solve;
mod sweep;
mod verify;

pub use bbf::{
    enumerate_bbf, merge_bbf, subset_backend, subsets, EnumerateOptions, AUTO_CONIC_SIZE,
    CHECK_TOLERANCE,
};
pub use error::Error;
pub use generated::{generated, generated_shaped};
pub use leontief_bbf::enumerate::Enumeration;
pub use leontief_core::{
    checks, details, generate, verification, Allocation, Instance, Status, Tasks, Verification,
};
pub use leontief_drfh::progress::{Progress, RoundProgress};
pub use mechanism::{
    parse_p, EgMethod, Fairness, Mechanism, OdeVariable, OnFull, ParamError, Params, PsdsfSelect,
    VdsSchedule, NAMES,
};
pub use options::{Algorithm, Options, VerifyMode};
pub use output::{to_json, Layout, SPARSE_FROM};
pub use references::References;
pub use sweep::{sweep, Sweep, SweepPoint, SweepSpec, Swept};

/// The answer of [`solve`]: the allocation (tasks per user and server,
/// held sparsely as [`Tasks`]; status, metrics), the mechanism's details
/// (levels and certificates, prices, bottlenecks, explanations) and the
/// verification. Its serde form is the allocation JSON of
/// docs/instance-format.md ([`to_json`] writes the dense or the sparse
/// layout from the sparse rows without building the matrix).
pub type Solution = Allocation;

/// Solve `mechanism` on `instance` and verify the answer as `options`
/// say. Runs in normalised units (each resource scaled by a power of two
/// so that its largest capacity lies in (0.5, 1]); the answer is in the
/// instance's units.
pub fn solve(
    instance: &Instance,
    mechanism: &Mechanism,
    options: &Options,
) -> Result<Solution, Error> {
    solve_reporting(instance, mechanism, options, None)
}

/// [`solve`], telling `progress` after each round of the max-min
/// operator's general path how many users are frozen (the command line's
/// progress bar; the other mechanisms and paths report nothing).
pub fn solve_reporting(
    instance: &Instance,
    mechanism: &Mechanism,
    options: &Options,
    progress: Option<&Progress>,
) -> Result<Solution, Error> {
    let highs = options.backend()?;
    solve::solve_named(
        &highs,
        instance,
        mechanism,
        options.verify,
        &options.max_min_settings(progress),
    )
}
