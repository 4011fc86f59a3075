//! Volcano's proportion plugin (`pkg/scheduler/plugins/proportion/
//! proportion.go`, volcano-sh/volcano v1.x): queues are flat; each round
//! every queue not yet met adds its weight's part of what remains to its
//! deserved vector, capped per resource by its real capability (the
//! cluster less the other queues' guarantees, and its own capability) and
//! by its request, then raised to its guarantee; a queue is met when its
//! request fits in its deserved vector or the round changed nothing; the
//! rounds stop when nothing remains or nothing changed. Inside a queue
//! the allocate action gives whole tasks to the job of lowest dominant
//! share (the drf plugin's job order) while a task fits in what the queue
//! deserves (queues under one limited queue share what its limit leaves,
//! filled in queue order: the instance's tree has limits above the flat
//! queues that Volcano's proportion plugin does not).

use crate::tasks::drf_fill;
use crate::tree::{Child, Tree};
use crate::{Outcome, MAX_PLACEMENTS};
use leontief_core::Instance;
use leontief_model::Status;

/// The most rounds of the deserved loop (it ends long before: every
/// round meets a queue or shrinks what remains geometrically).
pub const MAX_ROUNDS: usize = 10_000;

/// One flat queue.
#[derive(Debug, Clone, PartialEq)]
pub struct VolcanoQueue {
    /// Weight.
    pub weight: f64,
    /// Guarantee per resource (0: none).
    pub guarantee: Vec<f64>,
    /// Capability per resource (`None`: none).
    pub capability: Option<Vec<f64>>,
    /// Request per resource.
    pub request: Vec<f64>,
}

/// Is `a <= b` in every resource (up to `tol` of the resource's total)?
fn fits(a: &[f64], b: &[f64], tol: &[f64]) -> bool {
    a.iter().zip(b).zip(tol).all(|((&x, &y), &t)| x <= y + t)
}

/// The deserved vector of every queue of `total`, and the rounds run.
pub fn deserved(total: &[f64], queues: &[VolcanoQueue]) -> (Vec<Vec<f64>>, usize) {
    let m = total.len();
    let tol: Vec<f64> = total.iter().map(|&c| c * 1e-12).collect();
    let mut total_guarantee = vec![0.0; m];
    for q in queues {
        for (t, g) in total_guarantee.iter_mut().zip(&q.guarantee) {
            *t += g;
        }
    }
    let real_capability: Vec<Vec<f64>> = queues
        .iter()
        .map(|q| {
            (0..m)
                .map(|r| {
                    let real = total[r] - total_guarantee[r] + q.guarantee[r];
                    q.capability.as_ref().map_or(real, |c| real.min(c[r]))
                })
                .collect()
        })
        .collect();
    let mut deserved = vec![vec![0.0; m]; queues.len()];
    let mut met = vec![false; queues.len()];
    let mut remaining = total.to_vec();
    let mut rounds = 0;
    while rounds < MAX_ROUNDS {
        let weight: f64 = queues
            .iter()
            .zip(&met)
            .filter(|(_, &done)| !done)
            .map(|(q, _)| q.weight)
            .sum();
        if weight <= 0.0 {
            break;
        }
        rounds += 1;
        let before = remaining.clone();
        let mut increased = vec![0.0; m];
        let mut decreased = vec![0.0; m];
        for (j, q) in queues.iter().enumerate() {
            if met[j] {
                continue;
            }
            let old = deserved[j].clone();
            for r in 0..m {
                let d = (old[r] + before[r] * q.weight / weight)
                    .min(real_capability[j][r])
                    .min(q.request[r]);
                deserved[j][r] = d;
            }
            if fits(&q.request, &deserved[j], &tol) || deserved[j] == old {
                met[j] = true;
            }
            for r in 0..m {
                deserved[j][r] = deserved[j][r].max(q.guarantee[r]);
                let change = deserved[j][r] - old[r];
                if change > 0.0 {
                    increased[r] += change;
                } else {
                    decreased[r] -= change;
                }
            }
        }
        for r in 0..m {
            remaining[r] = remaining[r] - increased[r] + decreased[r];
        }
        let empty = remaining.iter().zip(total).all(|(&x, &c)| x <= c * 1e-9);
        if empty || remaining == before {
            break;
        }
    }
    (deserved, rounds)
}

/// The nodes that hold users (Volcano's queues are flat: a queue is where
/// jobs are submitted; users directly under the root form the `default`
/// queue of weight 1). A flat queue keeps its own weight and guarantee;
/// its capability is the tightest limit on its path to the root.
pub(crate) fn flat_queues(tree: &Tree) -> Vec<usize> {
    (0..tree.len())
        .filter(|&v| tree.children[v].iter().any(|c| matches!(c, Child::User(_))))
        .collect()
}

/// The flat queues of `tree` as Volcano sees them.
pub(crate) fn queues_of(tree: &Tree, nodes: &[usize]) -> Vec<VolcanoQueue> {
    let m = tree.m;
    nodes
        .iter()
        .map(|&v| {
            let mut request = vec![0.0; m];
            for c in &tree.children[v] {
                if let Child::User(u) = *c {
                    for (a, &b) in request.iter_mut().zip(&tree.user_request[u]) {
                        *a += b;
                    }
                }
            }
            // Volcano's queues are flat: the tightest limit on the
            // queue's path is its capability.
            let mut capability: Option<Vec<f64>> = None;
            let mut at = Some(v);
            while let Some(w) = at {
                if let Some(l) = &tree.limit[w] {
                    capability = Some(match capability {
                        None => l.clone(),
                        Some(c) => c.iter().zip(l).map(|(a, b)| a.min(*b)).collect(),
                    });
                }
                at = tree.parent[w];
            }
            VolcanoQueue {
                weight: tree.weight[v],
                guarantee: tree.guarantee[v].clone().unwrap_or_else(|| vec![0.0; m]),
                capability,
                request,
            }
        })
        .collect()
}

/// The deserved vectors, and the drf job order inside each.
pub(crate) fn run(instance: &Instance, tree: &Tree) -> Outcome {
    let m = tree.m;
    let total = instance.total_capacity();
    let flat = flat_queues(tree);
    let queues = queues_of(tree, &flat);
    let (deserved, rounds) = deserved(total, &queues);
    let mut notes = Vec::new();
    let mut status = Status::Optimal;
    if rounds >= MAX_ROUNDS {
        notes.push(format!(
            "the deserved loop stopped after {MAX_ROUNDS} rounds with resources left"
        ));
    }
    let mut node_share = vec![vec![0.0; m]; tree.len()];
    let mut x = vec![0.0; instance.num_users()];
    let mut budget = MAX_PLACEMENTS;
    // What each limit on the tree has left: flat queues under one limited
    // queue share it (filled in queue order).
    let mut left: Vec<Option<Vec<f64>>> = tree.limit.clone();
    for (&v, d) in flat.iter().zip(&deserved) {
        node_share[v] = d.clone();
        let mut room = d.clone();
        let mut at = Some(v);
        while let Some(w) = at {
            if let Some(l) = &left[w] {
                for (a, b) in room.iter_mut().zip(l) {
                    *a = a.min(*b);
                }
            }
            at = tree.parent[w];
        }
        let users: Vec<usize> = tree.children[v]
            .iter()
            .filter_map(|c| match *c {
                Child::User(u) => Some(u),
                Child::Node(_) => None,
            })
            .collect();
        let ds: Vec<&[f64]> = users
            .iter()
            .map(|&u| instance.users()[u].demand.as_slice())
            .collect();
        let most: Vec<f64> = users.iter().map(|&u| tree.user_max_tasks[u]).collect();
        let (t, finished) = drf_fill(&ds, &most, &room, total, &mut budget);
        let mut used = vec![0.0; m];
        for (j, (&u, k)) in users.iter().zip(t).enumerate() {
            x[u] = k;
            for (a, &b) in used.iter_mut().zip(ds[j]) {
                *a += k * b;
            }
        }
        let mut at = Some(v);
        while let Some(w) = at {
            if let Some(l) = left[w].as_mut() {
                for (a, b) in l.iter_mut().zip(&used) {
                    *a -= b;
                }
            }
            at = tree.parent[w];
        }
        if !finished {
            status = Status::IterationLimit;
            notes.push(format!(
                "stopped after placing {MAX_PLACEMENTS} tasks one at a time (the most one run places)"
            ));
            break;
        }
    }
    let user_share = (0..x.len())
        .map(|u| {
            instance.users()[u]
                .demand
                .iter()
                .map(|&d| d * x[u])
                .collect()
        })
        .collect();
    Outcome {
        node_share,
        user_share,
        bound: vec![None; x.len()],
        tasks: x,
        status,
        notes,
        steps: Some(rounds),
        drs: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(weight: f64, request: Vec<f64>) -> VolcanoQueue {
        let m = request.len();
        VolcanoQueue {
            weight,
            guarantee: vec![0.0; m],
            capability: None,
            request,
        }
    }

    #[test]
    fn weights_split_and_what_a_queue_cannot_use_goes_round_again() {
        // The proportion plugin's documented case: 3 queues of weights
        // 1, 2, 2 over 10 CPUs asking 10 each: 2, 4, 4.
        let (d, _) = deserved(
            &[10.0],
            &[q(1.0, vec![10.0]), q(2.0, vec![10.0]), q(2.0, vec![10.0])],
        );
        for (got, want) in d.iter().zip([2.0, 4.0, 4.0]) {
            assert!((got[0] - want).abs() < 1e-9, "{d:?}");
        }
        // A queue asking 1 leaves the rest to the other.
        let (d, _) = deserved(&[10.0], &[q(1.0, vec![1.0]), q(1.0, vec![20.0])]);
        assert!(
            (d[0][0] - 1.0).abs() < 1e-9 && (d[1][0] - 9.0).abs() < 1e-6,
            "{d:?}"
        );
    }
}
