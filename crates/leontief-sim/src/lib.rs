//! Whole-task heuristics and their distance from the exact mechanisms.
//!
//! Production schedulers place whole tasks greedily. One engine,
//! [`greedy`], serves them all: server classes are expanded into single
//! servers in input order, and at each step the user with the lowest
//! weighted share that can still be served gets one more task, on a server
//! picked by the placement rule.
//!
//! | heuristic | share that orders users | placement | source |
//! |---|---|---|---|
//! | First-Fit DRFH | global dominant share x_n mu_n / w_n | first server that fits | 000, Sec. V-B |
//! | Best-Fit DRFH | the same | least H(i, l) of eq. (9) | 000, Sec. V-B |
//! | Slots | slots held / w_n | first server with enough free slots | 000, Sec. VI |
//! | online k-DF | k-dominant share x_n sigma_n / w_n | first server that fits | 001, Algorithm 1 |
//!
//! Shares are compared as `tasks * share_per_task` (never accumulated
//! sums), and shares equal within 1e-12 relative are ties, broken by input
//! order, so rounding never decides who goes next.
//!
//! **Best-Fit fitness** (eq. (9)): H(i, l) = || D_i / D_{i,r0} - c_l / c_{l,r0} ||_1
//! with D and the remaining capacity c_l both as shares of the pool (per
//! resource, divided by C_r) and r0 the normalising resource (parameter,
//! default the first); resources no server has are left out of the sum.
//! If user i does not demand r0, its ratio is
//! undefined; then r0 is replaced, for that user, by its global dominant
//! resource (which it demands, so any server that fits has some of it).
//!
//! **When a task does not fit.** `OnFull::Skip` (the DRFH heuristics, and
//! the useful variant of online k-DF) retires a user none of whose tasks
//! fits on any server it may use, and goes on with the others: capacity
//! only shrinks, so it never fits later. `OnFull::Stop` is Algorithm 1 of
//! 001 as printed: the first task that does not fit ends the whole
//! allocation ("the cluster is full"), although users with smaller tasks
//! could still be served; that is why the printed algorithm under-allocates.
//!
//! A task fits where the remaining capacity is at least its demand minus
//! 1e-9 of the server's capacity (so ten tasks of 0.2 fill a server of 2
//! despite rounding in the subtractions).
#![deny(missing_docs)]

pub mod sim;
pub mod workload;

use leontief_core::{Allocation, Instance, ServerId, Status, UserId};
use std::collections::BTreeSet;
use std::time::Instant;

/// How a server is chosen for a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// The first server (input order) where the task fits.
    FirstFit,
    /// The server with the least H(i, l) (eq. (9)); `normaliser` is r0.
    BestFit {
        /// The normalising resource r0.
        normaliser: usize,
    },
}

/// What happens when the chosen user's task fits nowhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnFull {
    /// Retire that user and go on with the others.
    Skip,
    /// End the allocation (Algorithm 1 of 001 as printed).
    Stop,
}

/// The inputs of [`greedy`], in the units used for fitting.
#[derive(Debug, Clone)]
pub struct GreedyProblem {
    /// Per-task demand of each user in the fitting units.
    pub demand: Vec<Vec<f64>>,
    /// Share added by one task of each user, already divided by its weight.
    pub share_per_task: Vec<f64>,
    /// Most whole tasks of each user (u64::MAX for unbounded).
    pub cap: Vec<u64>,
    /// Physical servers: (entry, capacity in the fitting units).
    pub servers: Vec<(ServerId, Vec<f64>)>,
    /// For each user, which physical servers it may use.
    pub allowed: Vec<Vec<bool>>,
    /// Pool totals per fitting resource (for Best-Fit shares).
    pub pool: Vec<f64>,
    /// Each user's dominant fitting resource (Best-Fit fallback).
    pub dominant: Vec<usize>,
}

/// Whole tasks per user per server entry.
#[derive(Debug, Clone, PartialEq)]
pub struct GreedyResult {
    /// `tasks[n][entry]`, whole numbers (class totals).
    pub tasks: Vec<Vec<f64>>,
    /// Tasks placed in all.
    pub placed: u64,
    /// True when OnFull::Stop ended the run with users still servable.
    pub stopped_early: bool,
}

const FIT_SLACK: f64 = 1e-9;

/// The most physical servers (every class expanded) the whole-task
/// heuristics place on: each is a record of its remaining capacity.
pub const MAX_PHYSICAL_SERVERS: u64 = 10_000_000;

/// The most whole tasks the heuristics may have to place (an upper bound:
/// every user's task cap, or the tasks it could run alone on every server
/// it may use): they place one task at a time.
pub const MAX_WHOLE_TASKS: f64 = 1e8;

/// Refuse an instance the heuristics cannot place in bounded time and
/// memory (see [`MAX_PHYSICAL_SERVERS`], [`MAX_WHOLE_TASKS`]).
pub fn check_size(instance: &Instance) -> Result<(), SimError> {
    let servers = instance.num_physical_servers();
    if servers > MAX_PHYSICAL_SERVERS {
        return Err(SimError::TooLarge(format!(
            "servers: {servers} physical servers (counts included), above the {MAX_PHYSICAL_SERVERS} the whole-task heuristics expand one by one"
        )));
    }
    for n in instance.user_ids() {
        // Per class: whole tasks on one server, times the count.
        let alone: f64 = instance
            .server_ids()
            .map(|i| {
                let count = instance.servers()[i.0].count as f64;
                (instance.gamma(n, i) / count + FIT_SLACK).floor() * count
            })
            .sum();
        let most = instance
            .user(n)
            .tasks
            .map_or(alone, |t| alone.min(t.floor()));
        if most > MAX_WHOLE_TASKS {
            return Err(SimError::TooLarge(format!(
                "users[{}] ({}) could run up to {most:e} whole tasks, above the {MAX_WHOLE_TASKS:e} the whole-task heuristics place one at a time (give it a task cap, or measure its demand in larger tasks)",
                n.0,
                instance.user(n).name
            )));
        }
    }
    Ok(())
}

/// Physical servers of `instance` (classes expanded, input order).
pub fn expand_servers(instance: &Instance) -> Vec<(ServerId, Vec<f64>)> {
    let mut out = Vec::with_capacity(instance.num_physical_servers() as usize);
    for (i, s) in instance.servers().iter().enumerate() {
        for _ in 0..s.count {
            out.push((ServerId(i), s.capacity.clone()));
        }
    }
    out
}

/// A user waiting in the queue: ordered by share, then input order.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Queued {
    share: f64,
    user: usize,
}

impl Eq for Queued {}

impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the lowest share.
        other
            .share
            .total_cmp(&self.share)
            .then(other.user.cmp(&self.user))
    }
}

impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Servers that are interchangeable for every decision: same entry (so the
/// same placement lists apply) and bit-identical remaining capacity. Best-Fit
/// scores a group once; within a group the first server in input order is
/// taken. Groups split as tasks land, but greedy placement fills servers
/// one after another, so there stay few (10 for the untouched Google cell).
struct Groups {
    by_key: std::collections::HashMap<(usize, Vec<u64>), std::collections::BTreeSet<usize>>,
}

impl Groups {
    fn key(entry: usize, rem: &[f64]) -> (usize, Vec<u64>) {
        (entry, rem.iter().map(|x| x.to_bits()).collect())
    }
    fn new(p: &GreedyProblem, remaining: &[Vec<f64>]) -> Self {
        let mut by_key: std::collections::HashMap<_, std::collections::BTreeSet<usize>> =
            std::collections::HashMap::new();
        for (j, rem) in remaining.iter().enumerate() {
            by_key
                .entry(Self::key(p.servers[j].0 .0, rem))
                .or_default()
                .insert(j);
        }
        Groups { by_key }
    }
    fn moved(&mut self, j: usize, entry: usize, before: &[f64], after: &[f64]) {
        let k = Self::key(entry, before);
        if let Some(set) = self.by_key.get_mut(&k) {
            set.remove(&j);
            if set.is_empty() {
                self.by_key.remove(&k);
            }
        }
        self.by_key
            .entry(Self::key(entry, after))
            .or_default()
            .insert(j);
    }
}

/// Best-Fit on two resources when every user may use every server: H(i, l)
/// is then |a_i - b_l| with a_i = (D_r / C_r) / (D_r0 / C_r0) and
/// b_l = (c_r / C_r) / (c_r0 / C_r0) (the r0 term of eq. (9) is zero), so
/// the servers sit in one ordered set per choice of r0, keyed by b_l, and a
/// task looks outward from its own a_i, nearest first, until the next
/// server is farther than the best one that fits. Same H, same ties (lowest
/// index) as the scan, found in O(log k) per placement when the servers
/// near a_i have room.
pub(crate) struct RatioIndex {
    /// by_r0[r0]: (b_l bits, l) with b_l computed for that r0.
    by_r0: [BTreeSet<(u64, usize)>; 2],
}

impl RatioIndex {
    fn b(rem: &[f64], pool: &[f64], r0: usize) -> f64 {
        let r = 1 - r0;
        let c0 = rem[r0].max(0.0) / pool[r0];
        if c0 > 0.0 {
            rem[r].max(0.0) / pool[r] / c0
        } else {
            f64::INFINITY
        }
    }
    fn usable(p: &GreedyProblem) -> bool {
        Self::applies(&p.pool) && p.allowed.iter().all(|a| a.iter().all(|x| *x))
    }
    /// Two resources, both present in the pool.
    pub(crate) fn applies(pool: &[f64]) -> bool {
        pool.len() == 2 && pool.iter().all(|c| *c > 0.0)
    }
    /// The index of the servers' remaining capacities `remaining`.
    pub(crate) fn new<'a>(pool: &[f64], remaining: impl Iterator<Item = &'a [f64]>) -> Self {
        let mut by_r0 = [BTreeSet::new(), BTreeSet::new()];
        for (j, rem) in remaining.enumerate() {
            for (r0, set) in by_r0.iter_mut().enumerate() {
                set.insert((Self::b(rem, pool, r0).to_bits(), j));
            }
        }
        RatioIndex { by_r0 }
    }
    /// Server j went from `before` to `after`; it leaves the index when it
    /// is `dead` (no task of any user can fit there any more: capacity only
    /// shrinks).
    pub(crate) fn moved(
        &mut self,
        j: usize,
        pool: &[f64],
        before: &[f64],
        after: &[f64],
        dead: bool,
    ) {
        for (r0, set) in self.by_r0.iter_mut().enumerate() {
            set.remove(&(Self::b(before, pool, r0).to_bits(), j));
            if !dead {
                set.insert((Self::b(after, pool, r0).to_bits(), j));
            }
        }
    }
    /// The server with the least H (ties: lowest index) where `fits`.
    pub(crate) fn best(
        &self,
        d: &[f64],
        pool: &[f64],
        r0: usize,
        fits: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let r = 1 - r0;
        let a = d[r] / pool[r] / (d[r0] / pool[r0]);
        let set = &self.by_r0[r0];
        let mut up = set.range((a.to_bits(), 0)..).peekable();
        let mut down = set.range(..(a.to_bits(), 0)).rev().peekable();
        let mut best: Option<(f64, usize)> = None;
        loop {
            let hu = up.peek().map(|e| (a - f64::from_bits(e.0)).abs());
            let hd = down.peek().map(|e| (a - f64::from_bits(e.0)).abs());
            let (h, j) = match (hu, hd) {
                (None, None) => break,
                (Some(h), None) => (h, up.next().expect("peeked").1),
                (None, Some(h)) => (h, down.next().expect("peeked").1),
                (Some(u), Some(w)) => {
                    if u <= w {
                        (u, up.next().expect("peeked").1)
                    } else {
                        (w, down.next().expect("peeked").1)
                    }
                }
            };
            let h = if h.is_nan() { f64::INFINITY } else { h };
            if let Some((bh, _)) = best {
                if h > bh {
                    break;
                }
            }
            if fits(j) && best.is_none_or(|(bh, bj)| h < bh || (h == bh && j < bj)) {
                best = Some((h, j));
            }
        }
        best.map(|b| b.1)
    }
}

/// Run the greedy engine (see the crate docs).
pub fn greedy(
    p: &GreedyProblem,
    placement: Placement,
    on_full: OnFull,
    entries: usize,
) -> GreedyResult {
    let nu = p.demand.len();
    let mut remaining: Vec<Vec<f64>> = p.servers.iter().map(|s| s.1.clone()).collect();
    let slack: Vec<Vec<f64>> = p
        .servers
        .iter()
        .map(|s| s.1.iter().map(|c| c * FIT_SLACK).collect())
        .collect();
    let mut count = vec![0u64; nu];
    let mut tasks = vec![vec![0.0; entries]; nu];
    let mut queue: std::collections::BinaryHeap<Queued> = (0..nu)
        .filter(|&n| p.cap[n] > 0)
        .map(|n| Queued {
            share: 0.0,
            user: n,
        })
        .collect();
    // First-Fit: a server that cannot hold a task of user n never will.
    let mut first = vec![0usize; nu];
    let best_fit = matches!(placement, Placement::BestFit { .. });
    let mut ratio = (best_fit && RatioIndex::usable(p))
        .then(|| RatioIndex::new(&p.pool, remaining.iter().map(Vec::as_slice)));
    let mut groups = (best_fit && ratio.is_none()).then(|| Groups::new(p, &remaining));
    let least: Vec<f64> = (0..p.pool.len())
        .map(|r| p.demand.iter().map(|d| d[r]).fold(f64::INFINITY, f64::min))
        .collect();
    let mut placed = 0u64;
    let mut stopped_early = false;
    let fits = |rem: &[f64], sl: &[f64], d: &[f64]| {
        rem.iter().zip(sl).zip(d).all(|((r, s), d)| *d <= *r + *s)
    };
    let mut tied = Vec::new();
    while let Some(head) = queue.pop() {
        // Shares equal within 1e-12 relative are ties: the lowest index wins.
        let mut pick = head;
        tied.clear();
        while let Some(next) = queue.peek() {
            if next.share > pick.share + 1e-12 * pick.share.abs() {
                break;
            }
            let next = queue.pop().expect("peeked");
            if next.user < pick.user {
                tied.push(pick);
                pick = next;
            } else {
                tied.push(next);
            }
        }
        queue.extend(tied.drain(..));
        let n = pick.user;
        let d = &p.demand[n];
        let chosen = match placement {
            Placement::FirstFit => {
                let mut j = first[n];
                while j < remaining.len() && !(p.allowed[n][j] && fits(&remaining[j], &slack[j], d))
                {
                    j += 1;
                }
                first[n] = j;
                (j < remaining.len()).then_some(j)
            }
            Placement::BestFit { normaliser } => {
                let r0 = if d[normaliser] > 0.0 {
                    normaliser
                } else {
                    p.dominant[n]
                };
                if let Some(ix) = &ratio {
                    ix.best(d, &p.pool, r0, |j| fits(&remaining[j], &slack[j], d))
                } else {
                    let mut best_j: Option<(f64, usize)> = None;
                    for set in groups.as_ref().expect("best-fit groups").by_key.values() {
                        let j = *set.first().expect("groups are never empty");
                        if !p.allowed[n][j] || !fits(&remaining[j], &slack[j], d) {
                            continue;
                        }
                        let h = fitness(d, &remaining[j], &p.pool, r0);
                        if best_j.is_none_or(|(bh, bj)| h < bh || (h == bh && j < bj)) {
                            best_j = Some((h, j));
                        }
                    }
                    best_j.map(|b| b.1)
                }
            }
        };
        match chosen {
            Some(j) => {
                let before = best_fit.then(|| remaining[j].clone());
                for (r, x) in remaining[j].iter_mut().zip(d) {
                    *r -= x;
                }
                if let (Some(g), Some(before)) = (groups.as_mut(), &before) {
                    g.moved(j, p.servers[j].0 .0, before, &remaining[j]);
                }
                if let (Some(ix), Some(before)) = (ratio.as_mut(), &before) {
                    // Smallest demand per resource over all users: a server
                    // short of it on some resource fits no task again.
                    let dead = (0..2).any(|r| remaining[j][r] + slack[j][r] < least[r]);
                    ix.moved(j, &p.pool, before, &remaining[j], dead);
                }
                count[n] += 1;
                tasks[n][p.servers[j].0 .0] += 1.0;
                placed += 1;
                if count[n] < p.cap[n] {
                    queue.push(Queued {
                        share: count[n] as f64 * p.share_per_task[n],
                        user: n,
                    });
                }
            }
            None => match on_full {
                OnFull::Skip => {}
                OnFull::Stop => {
                    stopped_early = true;
                    break;
                }
            },
        }
    }
    GreedyResult {
        tasks,
        placed,
        stopped_early,
    }
}

/// H(i, l) of eq. (9): || D / D_{r0} - c / c_{r0} ||_1 with the demand `d`
/// and the remaining capacity `rem` both as shares of the pool; resources
/// no server has are left out; infinite where the server has none of r0
/// left (`d[r0] > 0` is the caller's to ensure).
pub(crate) fn fitness(d: &[f64], rem: &[f64], pool: &[f64], r0: usize) -> f64 {
    let d0 = d[r0] / pool[r0];
    let c0 = rem[r0].max(0.0) / pool[r0];
    let h: f64 = (0..d.len())
        .filter(|&r| pool[r] > 0.0)
        .map(|r| {
            let cr = rem[r].max(0.0) / pool[r];
            (d[r] / pool[r] / d0 - if c0 > 0.0 { cr / c0 } else { f64::INFINITY }).abs()
        })
        .sum();
    if h.is_nan() {
        f64::INFINITY
    } else {
        h
    }
}

/// The heuristics, with their parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum Heuristic {
    /// First-Fit DRFH.
    FirstFit,
    /// Best-Fit DRFH with normalising resource r0.
    BestFit {
        /// r0 (index into `resources`).
        normaliser: usize,
    },
    /// Slots: each maximum server split into `slots` slots.
    Slots {
        /// S, slots per maximum server.
        slots: u32,
    },
    /// Online k-DF (Algorithm 1 of 001).
    KdfOnline {
        /// k.
        k: usize,
        /// What happens when a task does not fit.
        on_full: OnFull,
    },
}

impl Heuristic {
    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            Heuristic::FirstFit => "first-fit",
            Heuristic::BestFit { .. } => "best-fit",
            Heuristic::Slots { .. } => "slots",
            Heuristic::KdfOnline { .. } => "kdf-online",
        }
    }
}

/// A heuristic could not run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A parameter is out of range.
    #[error("parameter {name} {reason}")]
    InvalidParameter {
        /// Parameter name as on the command line.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The instance is larger than the heuristics place (the field and
    /// the limit named).
    #[error("{0}")]
    TooLarge(String),
}

fn whole_caps(instance: &Instance) -> Vec<u64> {
    instance
        .users()
        .iter()
        .map(|u| {
            u.tasks
                .map_or(u64::MAX, |t| (t + 1e-9).floor().max(0.0) as u64)
        })
        .collect()
}

fn allowed(instance: &Instance, servers: &[(ServerId, Vec<f64>)]) -> Vec<Vec<bool>> {
    instance
        .user_ids()
        .map(|n| {
            servers
                .iter()
                .map(|(i, _)| instance.can_run_on(n, *i))
                .collect()
        })
        .collect()
}

/// The greedy problem on the instance's own resources, with the given share
/// per task (already divided by the weight).
fn per_task_problem(
    instance: &Instance,
    share_per_task: Vec<f64>,
    servers: Vec<(ServerId, Vec<f64>)>,
    allowed: Vec<Vec<bool>>,
) -> GreedyProblem {
    GreedyProblem {
        demand: instance.users().iter().map(|u| u.demand.clone()).collect(),
        share_per_task,
        cap: whole_caps(instance),
        servers,
        allowed,
        pool: instance.total_capacity().to_vec(),
        dominant: instance
            .user_ids()
            .map(|n| instance.dominant_resource(n).0)
            .collect(),
    }
}

/// Run a heuristic on `instance`: whole tasks, placement and caps honoured.
///
/// ```
/// use leontief_sim::{run, Heuristic};
/// let instance = leontief_core::Instance::from_json_str(r#"{
///     "resources": ["cpu", "mem"],
///     "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
///     "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]
/// }"#).unwrap();
/// let a = run(&instance, &Heuristic::BestFit { normaliser: 0 }).unwrap();
/// // Whole tasks only.
/// assert!(a.tasks.nonzeros().all(|(_, _, x)| x.fract() == 0.0));
/// ```
pub fn run(instance: &Instance, h: &Heuristic) -> Result<Allocation, SimError> {
    check_size(instance)?;
    let t0 = Instant::now();
    let servers = expand_servers(instance);
    let users = instance.users();
    let allowed = allowed(instance, &servers);
    let weights: Vec<f64> = users.iter().map(|u| u.weight).collect();
    let mut notes = Vec::new();
    let (problem, placement, on_full) = match h {
        Heuristic::FirstFit | Heuristic::BestFit { .. } => {
            let placement = match h {
                Heuristic::BestFit { normaliser } => {
                    if *normaliser >= instance.num_resources() {
                        return Err(SimError::InvalidParameter {
                            name: "--normaliser".into(),
                            reason: format!(
                                "must name one of the {} resources (got index {normaliser})",
                                instance.num_resources()
                            ),
                        });
                    }
                    Placement::BestFit {
                        normaliser: *normaliser,
                    }
                }
                _ => Placement::FirstFit,
            };
            let share: Vec<f64> = instance
                .user_ids()
                .map(|n| instance.mu(n) / weights[n.0])
                .collect();
            (
                per_task_problem(instance, share, servers, allowed),
                placement,
                OnFull::Skip,
            )
        }
        Heuristic::KdfOnline { k, on_full } => {
            if *k == 0 {
                return Err(SimError::InvalidParameter {
                    name: "--k".into(),
                    reason: "must be >= 1".into(),
                });
            }
            let sigma = leontief_drfh::kdf_sigma(instance, *k);
            let share = sigma.iter().zip(&weights).map(|(s, w)| s / w).collect();
            (
                per_task_problem(instance, share, servers, allowed),
                Placement::FirstFit,
                *on_full,
            )
        }
        Heuristic::Slots { slots } => {
            if *slots == 0 {
                return Err(SimError::InvalidParameter {
                    name: "--slots".into(),
                    reason: "must be >= 1".into(),
                });
            }
            // The maximum server: the largest capacity of each resource.
            let m = instance.num_resources();
            let max: Vec<f64> = (0..m)
                .map(|r| {
                    instance
                        .servers()
                        .iter()
                        .map(|s| s.capacity[r])
                        .fold(0.0, f64::max)
                })
                .collect();
            let slot: Vec<f64> = max.iter().map(|c| c / *slots as f64).collect();
            let per_server = |cap: &[f64]| -> f64 {
                (0..m)
                    .filter(|&r| slot[r] > 0.0)
                    .map(|r| (cap[r] / slot[r] + 1e-9).floor())
                    .fold(f64::INFINITY, f64::min)
            };
            let per_task: Vec<f64> = users
                .iter()
                .map(|u| {
                    (0..m)
                        .filter(|&r| u.demand[r] > 0.0)
                        .map(|r| (u.demand[r] / slot[r] - 1e-9).ceil().max(1.0))
                        .fold(1.0, f64::max)
                })
                .collect();
            let slot_servers: Vec<(ServerId, Vec<f64>)> = servers
                .iter()
                .map(|(i, c)| (*i, vec![per_server(c)]))
                .collect();
            let total: f64 = slot_servers.iter().map(|s| s.1[0]).sum();
            notes.push(format!(
                "slots: each maximum server ({max:?}) split into {slots} slots; {total} slots in all; a task of user n takes {per_task:?} slots"
            ));
            (
                GreedyProblem {
                    demand: per_task.iter().map(|&s| vec![s]).collect(),
                    share_per_task: per_task.iter().zip(&weights).map(|(s, w)| s / w).collect(),
                    cap: whole_caps(instance),
                    servers: slot_servers,
                    allowed,
                    pool: vec![total.max(1.0)],
                    dominant: vec![0; users.len()],
                },
                Placement::FirstFit,
                OnFull::Skip,
            )
        }
    };
    let r = greedy(&problem, placement, on_full, instance.num_entries());
    let mut a = Allocation::new(instance, h.name(), Status::Optimal, r.tasks);
    a.solve_seconds = t0.elapsed().as_secs_f64();
    a.objective = Some(a.metrics.total_tasks);
    if r.stopped_early {
        notes.push("--on-full stop: the first task that did not fit ended the allocation (Algorithm 1 as printed)".into());
    }
    notes.push(format!(
        "{} whole tasks placed on {} physical servers",
        r.placed,
        problem.servers.len()
    ));
    a.notes = notes;
    Ok(a)
}

/// How far a heuristic allocation is from the exact one on the same
/// instance.
pub use leontief_core::details::HeuristicGap as Gap;

/// Compare `heuristic` with `exact` on `instance`.
pub fn gap(instance: &Instance, heuristic: &Allocation, exact: &Allocation) -> Gap {
    let min = |a: &Allocation| a.metrics.min_normalised_share();
    let ratio = |a: f64, b: f64| {
        if b > 0.0 {
            a / b
        } else if a == 0.0 {
            1.0
        } else {
            f64::INFINITY
        }
    };
    Gap {
        exact_mechanism: exact.mechanism.clone(),
        exact_status: exact.status,
        min_share_ratio: ratio(min(heuristic), min(exact)),
        total_tasks_ratio: ratio(heuristic.metrics.total_tasks, exact.metrics.total_tasks),
        utilisation: heuristic.metrics.utilisation.clone(),
        exact_utilisation: exact.metrics.utilisation.clone(),
        users_below_exact: instance
            .user_ids()
            .filter(|n: &UserId| {
                heuristic.user_tasks[n.0] < exact.user_tasks[n.0] * (1.0 - 1e-9) - 1e-9
            })
            .map(|n| {
                (
                    instance.user(n).name.clone(),
                    heuristic.user_tasks[n.0],
                    exact.user_tasks[n.0],
                )
            })
            .collect(),
    }
}
