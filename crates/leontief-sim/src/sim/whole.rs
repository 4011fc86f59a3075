//! The whole-task engine: First-Fit, Best-Fit DRFH and Slots, and the
//! queue tree's task-by-task order placed First-Fit.

use super::*;
use crate::workload::Workload;
use leontief_core::{Instance, RawInstance, RawServer, RawUser};
use leontief_hier::TaskOrder;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

/// The whole-task engine (see the module docs).
#[allow(clippy::too_many_arguments)]
pub(crate) fn whole(
    cluster: &Cluster,
    workload: &Workload,
    scheduler: Scheduler,
    horizon: f64,
    dt: f64,
    pool: &[f64],
    ledger: &mut Ledger,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<EngineOut, SimRunError> {
    let nu = workload.users.len();
    let ns = cluster.servers.len();
    let order = match scheduler.tree_rules() {
        Some(rules) => Some(TaskOrder::new(&tree_instance(cluster, workload)?, rules)),
        None => None,
    };
    let m = cluster.resources.len();
    let mut usage = vec![vec![0.0f64; m]; nu];
    let mut node_usage = vec![vec![0.0f64; m]; order.as_ref().map_or(0, |o| o.nodes())];
    // Fitting units: the resources themselves, or one "slots" resource.
    let (mf, cap, fit): (usize, Vec<f64>, FitUnits) = match scheduler {
        Scheduler::Slots { slots } => {
            let m = cluster.resources.len();
            let max: Vec<f64> = (0..m)
                .map(|r| cluster.servers.iter().map(|s| s[r]).fold(0.0, f64::max))
                .collect();
            let slot: Vec<f64> = max.iter().map(|c| c / slots as f64).collect();
            let cap = cluster
                .servers
                .iter()
                .map(|s| {
                    (0..m)
                        .filter(|&r| slot[r] > 0.0)
                        .map(|r| (s[r] / slot[r] + 1e-9).floor())
                        .fold(f64::INFINITY, f64::min)
                })
                .collect();
            let fit = move |d: &[f64]| {
                vec![(0..d.len())
                    .filter(|&r| d[r] > 0.0)
                    .map(|r| {
                        if slot[r] > 0.0 {
                            (d[r] / slot[r] - 1e-9).ceil().max(1.0)
                        } else {
                            f64::INFINITY
                        }
                    })
                    .fold(1.0, f64::max)]
            };
            (1, cap, Box::new(fit))
        }
        _ => (
            cluster.resources.len(),
            cluster.servers.concat(),
            Box::new(|d: &[f64]| d.to_vec()),
        ),
    };
    let total_slots: f64 = cap.iter().sum();
    let mut rem = cap.clone();
    let slack: Vec<f64> = cap.iter().map(|c| c * FIT_SLACK).collect();
    let fits = |rem: &[f64], j: usize, d: &[f64]| {
        (0..mf).all(|r| d[r] <= rem[j * mf + r] + slack[j * mf + r])
    };
    // Distinct empty servers, to set aside tasks that can never fit.
    let distinct: Vec<usize> = {
        let mut seen = std::collections::HashSet::new();
        (0..ns)
            .filter(|&j| {
                seen.insert(
                    cap[j * mf..(j + 1) * mf]
                        .iter()
                        .map(|x| x.to_bits())
                        .collect::<Vec<_>>(),
                )
            })
            .collect()
    };
    let tasks = &workload.tasks;
    let mut fit_of: Vec<Vec<f64>> = Vec::with_capacity(tasks.len());
    let mut placed_on = vec![u32::MAX; tasks.len()];
    let mut queue: Vec<VecDeque<usize>> = vec![VecDeque::new(); nu];
    let mut running = vec![0u64; nu];
    let mut share = vec![0.0f64; nu];
    let mut blocked = vec![false; nu];
    let mut blocked_list: Vec<usize> = Vec::new();
    let mut candidates: Vec<usize> = Vec::new();
    let mut freed: Vec<usize> = Vec::new();
    let mut finishes: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut ready: BTreeSet<(u64, usize)> = BTreeSet::new();
    let weight = &workload.weights;
    let order_share = |t: usize, f: &[f64]| -> f64 {
        match scheduler {
            Scheduler::Slots { .. } => f[0] / total_slots.max(1.0),
            _ => task_mu(&tasks[t].demand, pool),
        }
    };
    let mut next_arrival = 0usize;
    let mut next_sample = 0.0f64;
    let (mut events, mut decisions, mut max_over) = (0u64, 0u64, 0.0f64);
    let mut last_report = 0.0;
    loop {
        let arrival = tasks.get(next_arrival).map(|t| t.submit);
        let finish = finishes.peek().map(|Reverse((k, _))| f64::from_bits(*k));
        let Some(t) = next_time(arrival, finish).filter(|&t| t <= horizon) else {
            while next_sample <= horizon {
                ledger.sample(next_sample, pool);
                next_sample += dt;
            }
            break;
        };
        while next_sample < t {
            ledger.sample(next_sample, pool);
            next_sample += dt;
        }
        ledger.advance(t);
        events += 1;
        if t - last_report > horizon / 200.0 {
            progress(t);
            last_report = t;
        }
        // Finishes at t.
        while let Some(&Reverse((k, id))) = finishes.peek() {
            if f64::from_bits(k) > t {
                break;
            }
            finishes.pop();
            let task = &tasks[id];
            let j = placed_on[id] as usize;
            for r in 0..mf {
                rem[j * mf + r] += fit_of[id][r];
            }
            for (u, d) in ledger.used.iter_mut().zip(&task.demand) {
                *u -= d;
            }
            let n = task.user;
            running[n] -= 1;
            share[n] -= order_share(id, &fit_of[id]) / weight[n];
            ledger.dom[n] -= task_mu(&task.demand, pool);
            for (u, d) in usage[n].iter_mut().zip(&task.demand) {
                *u -= d;
            }
            if let Some(o) = &order {
                o.charge(&mut node_usage, n, &task.demand, -1.0);
            }
            if running[n] == 0 {
                share[n] = 0.0;
                ledger.dom[n] = 0.0;
                usage[n].iter_mut().for_each(|u| *u = 0.0);
            }
            ledger.finish(task, t);
            freed.push(j);
        }
        // Arrivals at t.
        while next_arrival < tasks.len() && tasks[next_arrival].submit <= t {
            let id = next_arrival;
            next_arrival += 1;
            let task = &tasks[id];
            ledger.arrive(task);
            let f = fit(&task.demand);
            let possible = distinct.iter().any(|&j| fits(&cap, j, &f));
            fit_of.push(f);
            if !possible {
                ledger.unschedulable[task.user] += 1;
                continue;
            }
            let n = task.user;
            if queue[n].is_empty() && !blocked[n] {
                candidates.push(n);
            }
            queue[n].push_back(id);
        }
        // Waiting users whose first task now fits on a freed server.
        if !freed.is_empty() {
            freed.sort_unstable();
            freed.dedup();
            blocked_list.retain(|&n| {
                let head = *queue[n].front().expect("blocked users wait");
                if freed.iter().any(|&j| fits(&rem, j, &fit_of[head])) {
                    blocked[n] = false;
                    candidates.push(n);
                    false
                } else {
                    true
                }
            });
            freed.clear();
        }
        if order.is_none() {
            for n in candidates.drain(..) {
                ready.insert((key(share[n]), n));
            }
        }
        candidates.clear();
        loop {
            let n = if let Some(o) = &order {
                // The tree's pick among users whose next task may start
                // (not waiting for room, within every queue's limit).
                let open: Vec<bool> = (0..nu)
                    .map(|n| {
                        !blocked[n]
                            && queue[n].front().is_some_and(|&id| {
                                o.within_limits(&node_usage, n, &tasks[id].demand, FIT_SLACK)
                            })
                    })
                    .collect();
                let wants = |n: usize, r: usize| {
                    queue[n]
                        .front()
                        .is_some_and(|&id| tasks[id].demand[r] > 0.0)
                };
                match o.next(&usage, &open, &wants) {
                    Some(n) => n,
                    None => break,
                }
            } else {
                let Some(head) = ready.first().copied() else {
                    break;
                };
                // Shares equal within 1e-12 relative are ties: the lowest
                // index wins (as in crate::greedy), so rounding in the
                // running sums never decides who goes next.
                let s = f64::from_bits(head.0);
                let n = ready
                    .iter()
                    .take_while(|(k, _)| f64::from_bits(*k) <= s + 1e-12 * s)
                    .map(|e| e.1)
                    .min()
                    .expect("the head itself");
                ready.remove(&(key(share[n]), n));
                n
            };
            let id = *queue[n].front().expect("ready users wait");
            let f = &fit_of[id];
            let chosen = match scheduler {
                Scheduler::BestFit { normaliser } => {
                    best_fit(&tasks[id].demand, pool, normaliser, &rem, ns, mf, |j| {
                        fits(&rem, j, f)
                    })
                }
                _ => (0..ns).find(|&j| fits(&rem, j, f)),
            };
            let Some(j) = chosen else {
                blocked[n] = true;
                blocked_list.push(n);
                continue;
            };
            queue[n].pop_front();
            for r in 0..mf {
                rem[j * mf + r] -= f[r];
                let over = -rem[j * mf + r] / cap[j * mf + r].max(f64::MIN_POSITIVE);
                max_over = max_over.max(over);
            }
            for (u, d) in ledger.used.iter_mut().zip(&tasks[id].demand) {
                *u += d;
            }
            placed_on[id] = j as u32;
            running[n] += 1;
            for (u, d) in usage[n].iter_mut().zip(&tasks[id].demand) {
                *u += d;
            }
            if let Some(o) = &order {
                o.charge(&mut node_usage, n, &tasks[id].demand, 1.0);
            }
            share[n] += order_share(id, f) / weight[n];
            ledger.dom[n] += task_mu(&tasks[id].demand, pool);
            finishes.push(Reverse((key(t + tasks[id].duration), id)));
            decisions += 1;
            if order.is_none() && !queue[n].is_empty() {
                ready.insert((key(share[n]), n));
            }
        }
    }
    progress(horizon);
    let waiting: Vec<u64> = queue.iter().map(|q| q.len() as u64).collect();
    Ok((events, decisions, max_over, running, waiting))
}

/// The workload's queue tree over the pooled cluster (users' demands are
/// not used by the order).
fn tree_instance(cluster: &Cluster, workload: &Workload) -> Result<Instance, SimRunError> {
    let m = cluster.resources.len();
    let raw = RawInstance {
        name: None,
        description: None,
        resources: cluster.resources.clone(),
        servers: vec![RawServer {
            name: "pool".into(),
            capacity: cluster
                .pool()
                .iter()
                .map(|&c| if c > 0.0 { c } else { 1.0 })
                .collect(),
            count: None,
        }],
        users: (0..workload.users.len())
            .map(|n| RawUser {
                name: workload.users[n].clone(),
                demand: vec![1.0; m],
                weight: Some(workload.weights[n]),
                tasks: None,
                servers: None,
                rank_weights: None,
                queue: workload.user_queue.get(n).cloned().flatten(),
            })
            .collect(),
        queues: (!workload.queues.is_empty()).then(|| workload.queues.clone()),
        quantum: None,
    };
    Instance::new(raw).map_err(|e| SimRunError::Invalid {
        field: "queues".into(),
        reason: e.to_string(),
    })
}

/// Best-Fit: the server with the least H(i, l) of eq. (9) among those
/// where the task fits (ties: lowest index).
pub(crate) fn best_fit(
    d: &[f64],
    pool: &[f64],
    normaliser: usize,
    rem: &[f64],
    ns: usize,
    mf: usize,
    fits: impl Fn(usize) -> bool,
) -> Option<usize> {
    let r0 = if d[normaliser] > 0.0 {
        normaliser
    } else {
        // The task's dominant resource (first among equals).
        (0..d.len())
            .filter(|&r| pool[r] > 0.0)
            .fold((0, -1.0), |(br, bv), r| {
                let v = d[r] / pool[r];
                if v > bv {
                    (r, v)
                } else {
                    (br, bv)
                }
            })
            .0
    };
    let mut best: Option<(f64, usize)> = None;
    for j in 0..ns {
        if !fits(j) {
            continue;
        }
        let h = crate::fitness(d, &rem[j * mf..(j + 1) * mf], pool, r0);
        if best.is_none_or(|(bh, _)| h < bh) {
            best = Some((h, j));
        }
    }
    best.map(|b| b.1)
}
