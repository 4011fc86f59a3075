//! Whole tasks inside a share: what a Leontief user can run with the
//! per-resource amounts a scheduler gave it, and the drf job order inside
//! a queue's deserved vector.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Slack, in tasks, when a share divided by a demand is rounded down (a
/// share of exactly k tasks computed in floating point may land a hair
/// below k).
pub const TASK_SLACK: f64 = 1e-9;

/// Slack, as a fraction of a resource's total, when a task is fitted
/// into a queue's deserved vector (Volcano's deserved loop stops with up
/// to 1e-9 of each resource undivided).
pub const ROOM_SLACK: f64 = 1e-6;

/// Whole tasks a user with per-task `demand` runs inside `share` (at most
/// `most`), and the resource whose share stops it (`None`: `most`).
pub fn tasks_in_share(share: &[f64], demand: &[f64], most: f64) -> (f64, Option<usize>) {
    let mut tasks = most;
    let mut bound = None;
    for (r, (&s, &d)) in share.iter().zip(demand).enumerate() {
        if d > 0.0 {
            let k = (s / d + TASK_SLACK).floor().max(0.0);
            if k < tasks {
                tasks = k;
                bound = Some(r);
            }
        }
    }
    (tasks, bound)
}

/// The users' tasks `x` trimmed to the pooled capacity `total`: a
/// scheduler's shares may add up to a hair more than the cluster (YARN's
/// bisection stops on the high side); tasks are taken back one at a time
/// from the last user in input order that holds the short resource.
/// Returns the tasks taken back.
pub fn trim_to_capacity(x: &mut [f64], demand: &[&[f64]], total: &[f64]) -> f64 {
    let m = total.len();
    let mut used = vec![0.0; m];
    for (t, d) in x.iter().zip(demand) {
        for (u, &dr) in used.iter_mut().zip(*d) {
            *u += t * dr;
        }
    }
    let mut taken = 0.0;
    for r in 0..m {
        let limit = total[r] * (1.0 + 1e-12);
        for n in (0..x.len()).rev() {
            if used[r] <= limit {
                break;
            }
            let d = demand[n][r];
            if d <= 0.0 || x[n] <= 0.0 {
                continue;
            }
            let k = ((used[r] - total[r]) / d).ceil().min(x[n]);
            x[n] -= k;
            taken += k;
            for (u, &dr) in used.iter_mut().zip(demand[n]) {
                *u -= k * dr;
            }
        }
    }
    taken
}

/// Whole tasks inside `room` (per resource, up to [`ROOM_SLACK`] of the
/// resource's total, as Volcano's `LessEqual` allows its own minimum
/// quantity), one at a time to the user of lowest dominant share (`max_r used_r / total_r`; ties: the earlier
/// user), each user at most `most[j]` tasks; a user whose next task does
/// not fit is passed over. `budget` counts down the tasks placed; the
/// fill stops when it reaches 0 (returns false then).
pub fn drf_fill(
    demand: &[&[f64]],
    most: &[f64],
    room: &[f64],
    total: &[f64],
    budget: &mut usize,
) -> (Vec<f64>, bool) {
    let m = room.len();
    let tol: Vec<f64> = total.iter().map(|&c| c * ROOM_SLACK).collect();
    let mut left = room.to_vec();
    let mut tasks = vec![0.0; demand.len()];
    let share = |d: &[f64], k: f64| -> f64 {
        d.iter()
            .zip(total)
            .filter(|(_, &c)| c > 0.0)
            .map(|(&x, &c)| x * k / c)
            .fold(0.0, f64::max)
    };
    // Dominant shares are >= 0, so their bit patterns order as they do.
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = (0..demand.len())
        .filter(|&j| most[j] >= 1.0)
        .map(|j| Reverse((0f64.to_bits(), j)))
        .collect();
    while let Some(Reverse((_, j))) = heap.pop() {
        if *budget == 0 {
            return (tasks, false);
        }
        let d = demand[j];
        if (0..m).any(|r| d[r] > left[r] + tol[r]) {
            continue;
        }
        for r in 0..m {
            left[r] -= d[r];
        }
        tasks[j] += 1.0;
        *budget -= 1;
        if tasks[j] + 1.0 <= most[j] {
            heap.push(Reverse((share(d, tasks[j]).to_bits(), j)));
        }
    }
    (tasks, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_admits_the_tasks_its_tightest_resource_allows() {
        assert_eq!(
            tasks_in_share(&[9.0, 1.0], &[1.0, 0.1], 10.0),
            (9.0, Some(0))
        );
        assert_eq!(tasks_in_share(&[9.0, 1.0], &[1.0, 0.1], 4.0), (4.0, None));
    }

    #[test]
    fn drf_order_alternates_and_passes_over_what_does_not_fit() {
        let a = [1.0, 0.1];
        let b = [0.1, 1.0];
        let mut budget = 100;
        let (x, done) = drf_fill(
            &[&a, &b],
            &[10.0, 10.0],
            &[5.0, 5.0],
            &[10.0, 10.0],
            &mut budget,
        );
        assert!(done);
        // Each task of one user leaves 0.1 of its light resource for the
        // other: 4 + 4 uses (4.4, 4.4); a fifth of A needs CPU 5.4 > 5.
        assert_eq!(x, vec![4.0, 4.0]);
    }

    #[test]
    fn trimming_takes_back_from_the_last_user() {
        let a = [1.0];
        let b = [1.0];
        let mut x = vec![6.0, 5.0];
        assert_eq!(trim_to_capacity(&mut x, &[&a, &b], &[10.0]), 1.0);
        assert_eq!(x, vec![6.0, 4.0]);
    }
}
