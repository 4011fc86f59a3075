//! Instances, validation, typed ids, allocations and metrics: the data
//! model every leontief mechanism shares.
//!
//! Notation (`docs/mechanisms.md`): resources r = 1..m, server
//! entries i = 1..k (an entry with `count` c is c identical servers, kept as
//! one block of capacity c * capacity), users n = 1..N with per-task demand
//! D_{n,r}, weight w_n, task cap T_n and eligible servers E_n. An allocation
//! is x_{n,i} >= 0, tasks of user n on entry i, with x_n = sum_i x_{n,i}.
#![deny(missing_docs)]

pub mod allocation;
pub mod checks;
pub mod details;
pub mod fairness;
pub mod generate;
pub mod hierarchy;
pub mod ids;
pub mod instance;
pub mod path;
pub mod scaling;
pub mod schedulers;
pub mod shares;
#[cfg(feature = "proptest")]
pub mod strategies;
pub mod tasks;
pub mod verification;

pub use allocation::{
    jain, Allocation, MaxMinCertificate, Metrics, PricingPass, PrintedRound, RoundPrices,
    SparseTasks, TotalCertificate,
};
pub use ids::{ResourceId, ServerId, UserId};
pub use instance::{
    Instance, InstanceError, Issue, Queue, RawInstance, RawQueue, RawServer, RawUser, Server, User,
    MAX_COUNT, MAX_QUEUES, MAX_QUEUE_DEPTH, MAX_VALUE, MAX_WEIGHT_RATIO, MIN_TASK_FRACTION,
    MIN_VALUE,
};
pub use leontief_model::Status;
pub use path::Path;
pub use scaling::Scaling;
pub use tasks::Tasks;
pub use verification::Verification;
