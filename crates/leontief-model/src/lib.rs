//! Solver-agnostic sparse optimisation problems for leontief.
//!
//! A [`Problem`] is
//!
//! ```text
//!   minimise / maximise   c^T x + offset
//!   subject to            row_lower <= A x <= row_upper
//!                         col_lower <=  x  <= col_upper
//! ```
//!
//! with `A` stored in compressed sparse column (CSC) form:
//!
//! ```text
//!   a_start = [0, 2, 3, ...]   column j holds entries a_start[j] .. a_start[j+1]
//!   a_index = [r0, r1, r2 ...] row of each entry
//!   a_value = [v0, v1, v2 ...] value of each entry
//! ```
//!
//! The builder ([`ProblemBuilder`]) declares rows first and then receives
//! each column with its coefficients, so the CSC arrays are written in one
//! pass with no per-row hash map. This is the natural order for every
//! allocation problem in leontief: the capacity rows (server x resource) and
//! the per-user rows are known up front; each column `x_{n,i}` arrives with
//! its few coefficients.
//!
//! Cones are declared as a run-length list ([`ConeBlock`]) over the rows;
//! an LP has none (every row is a plain linear range). Backends that only
//! solve LPs refuse problems with cones.
//!
//! The outcome of a solve is a [`Solution`] whose [`Status`] never collapses
//! distinct outcomes (infeasible vs. infeasible-or-unbounded, optimal vs.
//! reduced accuracy, ...). A status is an *outcome* and is returned in `Ok`;
//! [`BackendError`] means the solve could not run at all.
//!
//! [`residuals`] recomputes primal feasibility, dual feasibility and the
//! duality gap of a solution from the problem data alone, so that no result
//! is trusted just because a backend said "optimal".
#![deny(missing_docs)]

mod backend;
pub mod linalg;
pub mod market;
pub mod polish;
mod problem;
mod residual;
mod status;

pub use backend::{BackendError, BasisStatus, LoadedLp, LpBackend, Solution};
pub use problem::{Col, ConeBlock, ConeKind, NewCol, Problem, ProblemBuilder, Row, Sense};
pub use residual::{residuals, Residuals};
pub use status::Status;
