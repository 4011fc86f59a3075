//! What the production schedulers' share algorithms (`yarn-fair`, `kai`,
//! `volcano-proportion`, `kueue`) report beside the allocation: the share
//! each queue and user was given, resource by resource, and the tasks it
//! runs inside it. The verification recomputes the shares independently.

use serde::{Deserialize, Serialize};

/// The scheduler part of an allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchedulerDetails {
    /// The algorithm (`yarn-fair`, `kai`, `volcano-proportion`, `kueue`).
    pub algorithm: String,
    /// The scheduler's source the algorithm follows (file and version).
    pub source: String,
    /// The unit each resource is counted in, in the instance's units
    /// (`quantum`); `None`: the shares are not rounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<Vec<f64>>,
    /// One per queue of the instance, in input order.
    pub queues: Vec<QueueShare>,
    /// One per user, in input order.
    pub users: Vec<UserShare>,
    /// The admission loop's steps (`kueue`: admitted workloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
}

/// What one queue was given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueShare {
    /// The queue's name.
    pub name: String,
    /// Its share of each resource, in the instance's units (`yarn-fair`:
    /// the fair share; `kai`: the fair share; `volcano-proportion`: the
    /// deserved amount; `kueue`: the admitted usage).
    pub share: Vec<f64>,
    /// What its subtree's users use with their tasks, per resource.
    pub usage: Vec<f64>,
    /// Its subtree's whole tasks.
    pub tasks: f64,
    /// Its subtree's requests per resource (a user without a task cap
    /// requests as many tasks as the whole cluster holds).
    pub request: Vec<f64>,
    /// `kueue`: the dominant resource share at the end (borrowed over
    /// lendable, per weight, as Kueue computes it, times 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drs: Option<f64>,
}

/// What one user was given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserShare {
    /// Its share of each resource, in the instance's units (`kueue`,
    /// `volcano-proportion`: its admitted usage).
    pub share: Vec<f64>,
    /// Whole tasks run inside the share.
    pub tasks: f64,
    /// The resource whose share stops it (`None`: its task cap, or
    /// nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
}
