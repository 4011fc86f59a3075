//! Capacity an allocation leaves idle, given to users that can take it.
//!
//! A round's proof charges capacity left idle to each of its users
//! (`leontief-audit`'s weak-duality room), so an LP's round-off idle on a
//! full server leaves every user of a crowded round a little room: 2e-10
//! of the CPU idle on GPU servers whose GPU is full, none of their users
//! able to take it, left each of 8,000 users room 1.9e-6 (k-DF with a
//! GPU on a fifth of the servers, 10,000 x 10,000, 2 resources, seed 2),
//! and GPU idle on servers whose CPU the CPU-only users filled left the
//! 2,000 GPU users 7e-7.

use crate::lp::finish::{repair, used};
use crate::outcome::{Freeze, MaxMinOutcome};
use leontief_core::{Instance, ServerId};
use rayon::prelude::*;

/// Idle capacity [`fill_idle`] fills: more than this part of a
/// resource's capacity on an entry.
const IDLE_FILLED: f64 = 1e-13;

/// The most of its tasks on an entry a user gives up there so that a
/// user of an earlier round can take idle capacity ([`fill_idle`]).
const GIVEN_UP_MOST: f64 = 1e-6;

/// The most a user's tasks rise by taking idle capacity ([`fill_idle`]),
/// relative to its tasks before: a round's users share one level to
/// 1e-6 in the verification (`leontief-audit`), and a user that took all
/// the idle capacity of an entry rose 3.6e-6 (a GPU on a fifth of the
/// servers, 10,000 x 10,000, 2 resources, seed 3, first step on 2
/// sub-pools). Idle capacity beyond it stays idle and the caller's proof
/// check decides.
const RISE_MOST: f64 = 1e-7;

/// The users that take idle capacity on one entry in step 1 of
/// [`fill_idle`], each within [`RISE_MOST`].
const TAKERS_PER_ENTRY: usize = 4;

/// Give capacity `out` leaves idle to blocked users that can take it, on
/// an instance without placement lists; returns the pairs changed. On
/// each entry with a resource idle beyond [`IDLE_FILLED`] of its
/// capacity:
///
/// 1. the blocked user (not capped) whose tasks there fill the largest
///    part of the idle capacity (summed over resources, relative to
///    capacity; ties to the user with the most tasks, whose level rises
///    least) takes as many tasks as the idle capacity holds, within
///    [`RISE_MOST`] of its own; then the next, up to
///    [`TAKERS_PER_ENTRY`] users;
/// 2. where the most idle resource r is still idle because another is
///    full, a blocked user demanding r (of the earliest round, then the
///    one leaning most on r) takes enough tasks to fill it, the users on
///    the entry of its round or later whose use leans less on r giving
///    up the same least part (at most [`GIVEN_UP_MOST`]) of their tasks
///    there to make room (the taker within [`RISE_MOST`]). The entry
///    then uses more of r and no less of anything else, so no round's
///    proof loses by it.
///
/// The levels rise (or fall) by these parts of the users' own tasks:
/// 1e-8 where 300 servers share 2e-10 of the CPU among 8,000 users. The
/// caller checks the proof again.
pub(crate) fn fill_idle(out: &mut MaxMinOutcome, instance: &Instance, sigma: &[f64]) -> usize {
    let m = instance.num_resources();
    let users = instance.users();
    let mut used = used(&out.tasks, instance);
    let mut total = out.tasks.user_totals();
    let most: Vec<f64> = total.iter().map(|&t| t * (1.0 + RISE_MOST)).collect();
    let takers: Vec<usize> = (0..instance.num_users())
        .filter(|&n| out.freeze[n] == Freeze::Blocked && users[n].servers.is_none())
        .collect();
    // User n's tasks on an entry of capacity `cap` within `idle`.
    let room_for = |n: usize, cap: &[f64], idle: &[f64], total: f64| {
        let d = &users[n].demand;
        if !(0..m).all(|r| d[r] == 0.0 || cap[r] > 0.0) {
            return 0.0;
        }
        let mut t = (0..m)
            .filter(|&r| d[r] > 0.0)
            .map(|r| idle[r] / d[r])
            .fold(f64::INFINITY, f64::min);
        if let Some(cap) = users[n].tasks {
            t = t.min(cap - total);
        }
        t = t.min(most[n] - total);
        if t.is_finite() {
            (t * (1.0 - 4.0 * f64::EPSILON)).max(0.0)
        } else {
            0.0
        }
    };
    let mut changed = 0;
    for i in 0..instance.num_entries() {
        let cap = instance.class_capacities(ServerId(i));
        let idle = |used: &[f64]| -> Vec<f64> {
            (0..m)
                .map(|r| (cap[r] - used[i * m + r]).max(0.0))
                .collect()
        };
        let idle_beyond =
            |idle: &[f64]| (0..m).any(|r| cap[r] > 0.0 && idle[r] > IDLE_FILLED * cap[r]);
        if !idle_beyond(&idle(&used)) {
            continue;
        }
        // Step 1: (tasks, part of the idle filled, the user's tasks, user).
        for _ in 0..TAKERS_PER_ENTRY {
            let free = idle(&used);
            if !idle_beyond(&free) {
                break;
            }
            let best = takers
                .par_iter()
                .filter_map(|&n| {
                    let t = room_for(n, cap, &free, total[n]);
                    (t > 0.0).then(|| {
                        let d = &users[n].demand;
                        let part: f64 = (0..m)
                            .filter(|&r| cap[r] > 0.0)
                            .map(|r| d[r] * t / cap[r])
                            .sum();
                        (t, part, total[n], n)
                    })
                })
                .max_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)));
            let Some((t, _, _, n)) = best else { break };
            out.tasks.add(n, i, t);
            total[n] += t;
            for r in 0..m {
                used[i * m + r] += users[n].demand[r] * t;
            }
            changed += 1;
        }
        // Step 2: the most idle resource r, room made by users of the
        // taker's round or later whose use leans less on r.
        let free = idle(&used);
        if !idle_beyond(&free) {
            continue;
        }
        let r = (0..m)
            .filter(|&r| cap[r] > 0.0)
            .max_by(|&a, &b| (free[a] / cap[a]).total_cmp(&(free[b] / cap[b])))
            .unwrap_or(0);
        // The part of a user's use that is r, each resource relative to
        // the entry's capacity.
        let lean = |k: usize| {
            let d = &users[k].demand;
            let all: f64 = (0..m)
                .filter(|&s| cap[s] > 0.0)
                .map(|s| d[s] / cap[s])
                .sum();
            d[r] / cap[r] / all
        };
        let on_entry: Vec<(usize, f64, f64)> = (0..instance.num_users())
            .filter_map(|k| {
                let x = out.tasks.get(k, i);
                (x > 0.0 && out.freeze[k] == Freeze::Blocked).then(|| (k, x, lean(k)))
            })
            .collect();
        // (taker's round, minus its lean, part given up, tasks, taker)
        let swap = takers
            .iter()
            .filter(|&&n| users[n].demand[r] > 0.0)
            .filter_map(|&n| {
                let (round, d, leans) = (out.frozen_round[n], &users[n].demand, lean(n));
                let mut given = vec![0.0; m];
                for &(k, x, _) in on_entry
                    .iter()
                    .filter(|e| e.0 != n && out.frozen_round[e.0] >= round && e.2 < leans)
                {
                    for s in 0..m {
                        given[s] += users[k].demand[s] * x;
                    }
                }
                // Tasks t = (free_r + part given_r) / d_r must fit every
                // other resource s: part (given_r d_s / d_r - given_s) <=
                // free_s - free_r d_s / d_r.
                let (mut low, mut high) = (0.0_f64, GIVEN_UP_MOST);
                for s in (0..m).filter(|&s| s != r) {
                    let a = given[r] * d[s] / d[r] - given[s];
                    let b = free[s] - free[r] * d[s] / d[r];
                    if a < 0.0 {
                        low = low.max(b / a);
                    } else if a > 0.0 {
                        high = high.min(b / a);
                    } else if b < 0.0 {
                        return None;
                    }
                }
                let t = (free[r] + low * given[r]) / d[r] * (1.0 - 4.0 * f64::EPSILON);
                let within_cap =
                    users[n].tasks.is_none_or(|cap| total[n] + t <= cap) && total[n] + t <= most[n];
                (low <= high && t > 0.0 && within_cap).then_some((round, -leans, low, t, n))
            })
            .min_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        if let Some((round, _, part, t, n)) = swap {
            let leans = lean(n);
            for &(k, x, _) in on_entry
                .iter()
                .filter(|e| e.0 != n && out.frozen_round[e.0] >= round && e.2 < leans)
            {
                let less = x * part;
                if less > 0.0 {
                    out.tasks.set(k, i, x - less);
                    total[k] -= less;
                    for s in 0..m {
                        used[i * m + s] -= users[k].demand[s] * less;
                    }
                    changed += 1;
                }
            }
            out.tasks.add(n, i, t);
            total[n] += t;
            for s in 0..m {
                used[i * m + s] += users[n].demand[s] * t;
            }
            changed += 1;
        }
    }
    if changed > 0 {
        repair(&mut out.tasks, instance);
        for n in 0..instance.num_users() {
            out.levels[n] = out.tasks.user_total(n) * sigma[n] / users[n].weight;
        }
    }
    changed
}
