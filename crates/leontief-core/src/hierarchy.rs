//! What the hierarchical mechanisms (`hdrf`, `hdrfh`, `hdrf-naive`)
//! report beside the allocation: every queue's outcome, and the trace of
//! the progressive filling that produced it (the certificate the
//! verification replays).

use serde::{Deserialize, Serialize};

/// The hierarchical part of an allocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HierarchyDetails {
    /// One per queue of the instance, in input order.
    pub queues: Vec<QueueOutcome>,
    /// The phases of the filling, in order: between two events every
    /// growing user's tasks rise linearly.
    pub phases: Vec<Phase>,
    /// `hdrfh`: the filling ran on the pooled capacity and its answer
    /// fits the servers, so it is the answer on the servers too (every
    /// stop on the pool is a stop on the servers; docs/mechanisms.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_pool: bool,
    /// `hdrfh` with placement lists: the filling ran on the groups of
    /// servers every list holds alike (and holding the same resources),
    /// each pooled, and its answer fits the servers, so it is the answer
    /// on the servers (every stop on the groups is a stop on the servers,
    /// whose feasible totals lie inside the groups').
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_list_groups: bool,
}

/// What one queue's subtree received, and why it stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueOutcome {
    /// The queue's name.
    pub name: String,
    /// Its parent (`None`: the root).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Its weight.
    pub weight: f64,
    /// Tasks of each resource its subtree holds, in the instance's units.
    pub usage: Vec<f64>,
    /// The dominant share of `usage` (max over resources of usage / C_r).
    pub dominant_share: f64,
    /// `dominant_share / weight`.
    pub level: f64,
    /// Users in its subtree.
    pub users: usize,
    /// The resources on which its limit binds (usage at the limit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limit_binds: Vec<String>,
    /// For each resource with a guarantee: the part of it the subtree
    /// received (usage / guarantee, at most 1 where met).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guarantee_met: Option<Vec<f64>>,
    /// Why the queue got what it got, in one sentence.
    pub explanation: String,
}

/// One phase of the filling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// `guarantee` (queues rise to their guarantees first) or `fair`.
    pub stage: String,
    /// How far the phase runs, in its own parameter.
    pub length: f64,
    /// The users that grow, in input order.
    pub users: Vec<usize>,
    /// Their tasks per unit of the parameter.
    pub rates: Vec<f64>,
    /// What ended the phase.
    pub event: String,
    /// The users found unable to grow when the phase starts, not before
    /// (input order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<usize>,
}
