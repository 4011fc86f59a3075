//! PS-DSF by Gauss-Seidel water-filling best responses (see the crate docs).

use crate::forest::forest_finish;
use crate::Eligibility;
use leontief_core::{Instance, ServerId};

/// What [`psdsf`] returns.
#[derive(Debug, Clone)]
pub struct PsdsfOutcome {
    /// x_{n,i}.
    pub tasks: Vec<Vec<f64>>,
    /// Gauss-Seidel sweeps over the servers.
    pub sweeps: usize,
    /// True when a sweep changed nothing (to 1e-13 relative), or the exact
    /// finish produced an allocation that passes Definition 4.
    pub converged: bool,
    /// True when the answer is the exact forest finish on the sweeps'
    /// structure (see `forest.rs`), false when it is the last sweep.
    pub exact_finish: bool,
    /// Exact finishes tried (each one a forest solve, its checks and, when
    /// those pass, the Definition-4 certificate).
    pub finishes_tried: usize,
    /// Times a failed finish restarted the sweeps from its levels.
    pub restarts: usize,
    /// Stopped by [`PsdsfSettings::deadline`] before converging.
    pub timed_out: bool,
    /// The over-relaxation factor the last sweep used (1: plain
    /// Gauss-Seidel, by the settings, the servers' density or the
    /// safeguard).
    pub over_relaxation: f64,
}

/// The eligible pairs laid out flat, server by server (the order of
/// `Eligibility::on_server`), so a best response reads contiguous memory.
struct Flat {
    /// Each server's first pair (and one past the last server).
    start: Vec<usize>,
    /// The user of each pair.
    user: Vec<usize>,
    /// w_n gamma_{n,i} per pair.
    a: Vec<f64>,
    /// D_n per pair (m entries each).
    demand: Vec<f64>,
    /// Each user's task cap (+inf without one).
    cap: Vec<f64>,
}

impl Flat {
    fn new(instance: &Instance, elig: &Eligibility) -> Flat {
        let users = instance.users();
        let mut flat = Flat {
            start: elig.pair_starts(),
            user: Vec::new(),
            a: Vec::new(),
            demand: Vec::new(),
            cap: users
                .iter()
                .map(|u| u.tasks.unwrap_or(f64::INFINITY))
                .collect(),
        };
        for list in &elig.on_server {
            for &(n, g) in list {
                flat.user.push(n);
                flat.a.push(users[n].weight * g);
                flat.demand.extend_from_slice(&users[n].demand);
            }
        }
        flat
    }
}

/// Buffers of [`best_response`], kept across servers and sweeps.
#[derive(Default)]
struct Scratch {
    room: Vec<f64>,
    events: Vec<Event>,
    keys: Vec<(f64, usize)>,
    val: Vec<f64>,
    slope: Vec<f64>,
    rising: Vec<usize>,
    state: Vec<u8>,
    saturated: Vec<bool>,
}

/// One event of the water-filling sweep: user `user` starts rising at
/// `t` (`start`) or reaches its cap there.
#[derive(Clone, Copy)]
struct Event {
    t: f64,
    user: usize,
    start: bool,
}

/// Server i's water-filling best response given the users' tasks
/// elsewhere `other` and their caps: x_{n,i}(t) = clamp(t w_n gamma_{n,i}
/// - o_n, 0, room_n), raised until every user is frozen by a saturated
///   resource (or stops at its cap).
///
/// One sweep over the sorted breakpoints (a user starts at o_n / a_n and
/// stops at (o_n + room_n) / a_n): between two breakpoints every resource's
/// usage is linear in t, so the first saturation is found exactly; the
/// users needing a saturated resource freeze and the sweep goes on.
/// O(E log E + E m) for the E users eligible on the server.
fn best_response(
    instance: &Instance,
    flat: &Flat,
    i: usize,
    other: &[f64],
    out: &mut [f64],
    scratch: &mut Scratch,
    order: &mut [usize],
) {
    let m = instance.num_resources();
    let Scratch {
        room,
        events,
        keys,
        val,
        slope,
        rising,
        state,
        saturated,
    } = scratch;
    let cap = instance.class_capacities(ServerId(i));
    let (p0, p1) = (flat.start[i], flat.start[i + 1]);
    let list = &flat.user[p0..p1];
    let a = &flat.a[p0..p1];
    let demand = |k: usize| &flat.demand[(p0 + k) * m..(p0 + k + 1) * m];
    room.clear();
    room.extend(list.iter().map(|&n| (flat.cap[n] - other[n]).max(0.0)));
    events.clear();
    for &n in list {
        out[n] = 0.0;
    }
    let before = |p: &Event, q: &Event| {
        p.t.total_cmp(&q.t)
            .then(q.start.cmp(&p.start))
            .then(p.user.cmp(&q.user))
    };
    if room.iter().all(|r| r.is_infinite()) {
        // No caps here: start events only, in last sweep's order, which
        // an insertion sort brings up to date in O(E + inversions) (the
        // same total order as a full sort).
        // Keys (t, user) alone, compared as plain pairs: every t here is
        // finite and at least 0, where that is the order of `before`.
        let order = &mut order[p0..p1];
        keys.clear();
        keys.extend(order.iter().map(|&k| (other[list[k]] / a[k], k)));
        for j in 1..keys.len() {
            let key = keys[j];
            let mut h = j;
            while h > 0 && key < keys[h - 1] {
                keys[h] = keys[h - 1];
                h -= 1;
            }
            keys[h] = key;
        }
        for (o, &(t, k)) in order.iter_mut().zip(keys.iter()) {
            *o = k;
            events.push(Event {
                t,
                user: k,
                start: true,
            });
        }
    } else {
        for (k, &n) in list.iter().enumerate() {
            if room[k] > 0.0 {
                events.push(Event {
                    t: other[n] / a[k],
                    user: k,
                    start: true,
                });
                let stop = (other[n] + room[k]) / a[k];
                if stop.is_finite() {
                    events.push(Event {
                        t: stop,
                        user: k,
                        start: false,
                    });
                }
            }
        }
        events.sort_unstable_by(before);
    }
    val.clear();
    val.resize(m, 0.0);
    slope.clear();
    slope.resize(m, 0.0);
    // Rising users per resource: a slope with none is exactly zero (no
    // rounding residue from the subtractions).
    rising.clear();
    rising.resize(m, 0);
    // 0: waiting, 1: rising, 2: done (frozen or at its cap).
    state.clear();
    state.resize(list.len(), 0);
    let mut t = 0.0;
    let mut next = 0;
    let at = |k: usize, t: f64| (t * a[k] - other[list[k]]).clamp(0.0, room[k]);
    loop {
        let next_t = events.get(next).map_or(f64::INFINITY, |e| e.t);
        // The first saturation before the next breakpoint.
        let mut t_sat = f64::INFINITY;
        for r in 0..m {
            if slope[r] > 0.0 {
                t_sat = t_sat.min(t + ((cap[r] - val[r]) / slope[r]).max(0.0));
            }
        }
        if t_sat <= next_t && t_sat.is_finite() {
            for r in 0..m {
                val[r] += slope[r] * (t_sat - t);
            }
            t = t_sat;
            saturated.clear();
            saturated.extend((0..m).map(|r| slope[r] > 0.0 && val[r] >= cap[r] * (1.0 - 1e-12)));
            for (k, &n) in list.iter().enumerate() {
                if state[k] == 2 {
                    continue;
                }
                let d = demand(k);
                if (0..m).any(|r| saturated[r] && d[r] > 0.0) {
                    if state[k] == 1 {
                        for r in (0..m).filter(|&r| d[r] > 0.0) {
                            slope[r] -= d[r] * a[k];
                            rising[r] -= 1;
                        }
                    }
                    out[n] = at(k, t);
                    state[k] = 2;
                }
            }
            for r in 0..m {
                if saturated[r] || rising[r] == 0 {
                    slope[r] = 0.0;
                }
            }
            continue;
        }
        if next_t.is_infinite() {
            break;
        }
        for r in 0..m {
            val[r] += slope[r] * (next_t - t);
        }
        t = next_t;
        let e = events[next];
        next += 1;
        let k = e.user;
        let d = demand(k);
        match (state[k], e.start) {
            (0, true) => {
                state[k] = 1;
                for r in (0..m).filter(|&r| d[r] > 0.0) {
                    slope[r] += d[r] * a[k];
                    rising[r] += 1;
                }
            }
            (1, false) => {
                state[k] = 2;
                out[list[k]] = room[k];
                for r in (0..m).filter(|&r| d[r] > 0.0) {
                    slope[r] -= d[r] * a[k];
                    rising[r] -= 1;
                }
            }
            _ => {}
        }
        for r in 0..m {
            if rising[r] == 0 {
                slope[r] = 0.0;
            }
        }
    }
}

/// Sweeps before a failed finish may restart the sweeps from its levels
/// (the elastic split of `split.rs`). A Newton step on the structure the
/// sweeps reached corrects the levels all at once where the sweeps spread
/// a correction one server per sweep: at 1,000 x 1,000 with 50 eligible
/// servers and 2 resources the finish then succeeds after 290-570 sweeps
/// instead of 1,100-6,900. Earlier restarts slowed the instances the
/// finish ends within 100 sweeps (3-4 resources) by up to 2x
/// (docs/design/server-based.md).
pub const RESTART_FROM: usize = 128;

/// Restarts at most per run (the sweeps alone then go on to their limit).
const MAX_RESTARTS: usize = 16;

/// Each exact finish runs on a second thread, from a copy of the sweeps'
/// point, while the sweeps go on; its answer is taken this fraction of the
/// interval to the next try later (at least one sweep), at a fixed sweep,
/// so a run does not depend on the clock. A restart it proposes then
/// replaces the sweeps done meanwhile. Measured at 1,000 x 1,000 with 50
/// eligible each, against the finish on the sweeps' thread, interleaved:
/// 2 resources
/// 0.92 -> 0.83, 0.70 -> 0.55, 0.86 -> 0.68 s (seeds 1-3); a half of the
/// interval restarted too late (1.26 s on seed 1), an eighth was no
/// better on average.
const FINISH_LAG: usize = 4;

/// Sweeps before the first exact finish is tried.
const FIRST_FINISH: usize = 8;

/// The over-relaxation factor of the sweeps that end by the exact finish:
/// each server's new tasks are x + omega (BR(x) - x) (negatives at 0).
/// A fixed point of the best responses is one of the relaxed sweeps too,
/// and the finish and the Definition-4 certificate decide, as without
/// it. Measured at 1,000 x 1,000 with 50 eligible (docs/design/server-based.md):
/// sweeps to the finish fall 1.5-2x with 3-4 resources and the sweeps
/// alone converge 1.5-3x sooner with 2; 1.3 and 1.5 gained less, 1.9
/// oscillated on one seed. Sweeps from zero are far from any fixed
/// point: the first two stay plain.
pub const OVER_RELAXATION: f64 = 1.8;

/// The sweeps are over-relaxed where servers have at most this many
/// eligible users on average. On denser servers (1,000 x 100 with 50
/// eligible each: 500 users a server) relaxing took 1.2-3x longer to the
/// finish with 2-3 resources, at omega 1.2, 1.4 and 1.8 alike.
const RELAX_UP_TO: usize = 100;

/// Sweeps per block of the over-relaxation's safeguard: when a block's
/// largest change is [`DIVERGING`] times the previous block's, the sweeps
/// go on plain (omega = 1) to the end. (The change is not monotone when
/// relaxed: falling back at any rise undid the gain with 2 resources.)
const RELAXATION_BLOCK: usize = 64;

/// See [`RELAXATION_BLOCK`].
const DIVERGING: f64 = 4.0;

/// Blocks without a new smallest block change after which the sweeps go
/// on plain. Relaxed sweeps can settle into a steady oscillation: with
/// zero demands and caps mixed in (1,000 x 1,000, 20 eligible, 3
/// resources, seed 1) they did not converge in 100,000 sweeps, where
/// plain ones converge in 11,595.
const STALLED_BLOCKS: usize = 48;

/// How [`psdsf_with`] runs.
#[derive(Debug, Clone, Copy)]
pub struct PsdsfSettings {
    /// Gauss-Seidel sweeps at most.
    pub max_sweeps: usize,
    /// Try the exact forest finish along the way (on by default; off
    /// leaves plain Gauss-Seidel, for comparison).
    pub exact_finish: bool,
    /// Stop at the first sweep that starts after this instant (the
    /// outcome says `timed_out`). Default none.
    pub deadline: Option<std::time::Instant>,
    /// Over-relax the sweeps by [`OVER_RELAXATION`] (on by default with
    /// the exact finish; off, the sweeps are plain Gauss-Seidel and their
    /// limit is the best responses' own, as `--select sweeps` promises).
    pub over_relax: bool,
    /// Let a failed finish restart the sweeps from its levels (on by
    /// default; see [`RESTART_FROM`]). Off, the finish only ends runs.
    pub restart: bool,
}

impl Default for PsdsfSettings {
    fn default() -> Self {
        PsdsfSettings {
            max_sweeps: 100_000,
            exact_finish: true,
            deadline: None,
            over_relax: true,
            restart: true,
        }
    }
}

/// PS-DSF by Gauss-Seidel best responses from zero, with the exact forest
/// finish tried along the way (see the crate docs).
///
/// ```
/// let instance = leontief_core::Instance::from_json_str(r#"{
///     "resources": ["cpu", "mem"],
///     "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
///     "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]
/// }"#).unwrap();
/// let o = leontief_vds::psdsf(&instance, 1000);
/// assert!(o.converged);
/// // The Definition-4 check, by leontief-audit.
/// assert!(leontief_vds::certificate(&instance, &o.tasks, 1e-9).holds);
/// ```
pub fn psdsf(instance: &Instance, max_sweeps: usize) -> PsdsfOutcome {
    psdsf_with(
        instance,
        &PsdsfSettings {
            max_sweeps,
            ..PsdsfSettings::default()
        },
    )
}

/// [`psdsf`] with its settings.
pub fn psdsf_with(instance: &Instance, settings: &PsdsfSettings) -> PsdsfOutcome {
    let max_sweeps = settings.max_sweeps;
    let (nu, k) = (instance.num_users(), instance.num_entries());
    let elig = Eligibility::new(instance);
    let pairs: usize = elig.on_server.iter().map(Vec::len).sum();
    let m = instance.num_resources().max(1);
    let flat = Flat::new(instance, &elig);
    let start = &flat.start;
    // Each server's events in the order of its last best response (users
    // by position in its list).
    let mut order: Vec<usize> = (0..k).flat_map(|i| 0..elig.on_server[i].len()).collect();
    // x_{n,i} per eligible pair, server by server (the order of
    // `elig.on_server`), and each user's pairs for its re-sum.
    let mut user_pairs: Vec<Vec<usize>> = vec![Vec::new(); nu];
    for i in 0..k {
        for (t, &(n, _)) in elig.on_server[i].iter().enumerate() {
            user_pairs[n].push(start[i] + t);
        }
    }
    let dense = |xp: &[f64]| {
        let mut tasks = vec![vec![0.0; k]; nu];
        for i in 0..k {
            for (t, &(n, _)) in elig.on_server[i].iter().enumerate() {
                tasks[n][i] = xp[start[i] + t];
            }
        }
        tasks
    };
    let mut xp = vec![0.0; pairs];
    let mut total = vec![0.0; nu];
    let mut other = vec![0.0; nu];
    let mut x = vec![0.0; nu];
    let mut scratch = Scratch::default();
    let mut sweeps = 0;
    let mut converged = false;
    let mut exact_finish = false;
    let mut finishes_tried = 0;
    let mut restarts = 0;
    let mut next_finish = FIRST_FINISH;
    let mut finished = None;
    let mut timed_out = false;
    let mut omega = if settings.over_relax && pairs <= RELAX_UP_TO * k {
        OVER_RELAXATION
    } else {
        1.0
    };
    let (mut block_change, mut last_block) = (0.0f64, f64::INFINITY);
    let (mut best_block, mut stalled) = (f64::INFINITY, 0);
    // Each exact finish runs on a second thread from a copy of the sweeps'
    // point while the sweeps go on (see [`FINISH_LAG`]).
    type Try = (Option<Vec<Vec<f64>>>, Option<Vec<f64>>);
    std::thread::scope(|scope| {
        let mut pending: Option<(usize, std::thread::ScopedJoinHandle<'_, Try>)> = None;
        while sweeps < max_sweeps {
            if crate::past(settings.deadline) {
                timed_out = true;
                break;
            }
            sweeps += 1;
            let mut change = 0.0f64;
            let mut scale = 0.0f64;
            // Plain for the first sweeps (from zero the responses are far
            // from any fixed point).
            let relax = omega != 1.0 && sweeps > 2;
            for i in 0..k {
                let here = &mut xp[start[i]..start[i + 1]];
                for (&(n, _), &v) in elig.on_server[i].iter().zip(here.iter()) {
                    other[n] = total[n] - v;
                }
                best_response(instance, &flat, i, &other, &mut x, &mut scratch, &mut order);
                for (&(n, _), v) in elig.on_server[i].iter().zip(here.iter_mut()) {
                    change = change.max((x[n] - *v).abs());
                    scale = scale.max(x[n].abs());
                    *v = if relax {
                        (*v + omega * (x[n] - *v)).max(0.0)
                    } else {
                        x[n]
                    };
                    total[n] = other[n] + *v;
                }
            }
            // Re-sum so rounding does not drift over many sweeps.
            for n in 0..nu {
                total[n] = user_pairs[n].iter().map(|&p| xp[p]).sum();
            }
            if change <= 1e-13 * scale.max(1e-300) {
                converged = true;
                break;
            }
            block_change = block_change.max(change / scale.max(1e-300));
            if sweeps % RELAXATION_BLOCK == 0 {
                if block_change < best_block {
                    (best_block, stalled) = (block_change, 0);
                } else {
                    stalled += 1;
                }
                if block_change > DIVERGING * last_block || stalled >= STALLED_BLOCKS {
                    omega = 1.0;
                }
                (last_block, block_change) = (block_change, 0.0);
            }
            // The try launched a lag ago ([`FINISH_LAG`]) ends here, whatever the
            // clock says: the run stays deterministic.
            if pending.as_ref().is_some_and(|(at, _)| *at == sweeps) {
                let (_, handle) = pending.take().expect("checked");
                let (got, restart) = handle.join().expect("the finish does not panic");
                if let Some(r) = restart {
                    // Restart the sweeps from the finish's levels (`split.rs`).
                    restarts += 1;
                    xp = r;
                    for n in 0..nu {
                        total[n] = user_pairs[n].iter().map(|&p| xp[p]).sum();
                    }
                }
                if let Some(t) = got {
                    finished = Some(t);
                    converged = true;
                    exact_finish = true;
                    break;
                }
            }
            if settings.exact_finish && sweeps == next_finish && pending.is_none() {
                finishes_tried += 1;
                let interval = (sweeps / 4).max(FIRST_FINISH);
                next_finish = sweeps + interval;
                // At most about an eighth of the work of the sweeps so far (a
                // sweep touches every eligible pair m times): failed tries stay
                // cheap; a quarter or a sixteenth was measured slower at
                // 1,000 x 1,000 (docs/design/server-based.md).
                let budget = sweeps * pairs * m / 8;
                let may_restart =
                    settings.restart && sweeps >= RESTART_FROM && restarts < MAX_RESTARTS;
                let (snap_x, snap_total, elig) = (xp.clone(), total.clone(), &elig);
                let lag = (interval / FINISH_LAG).max(1);
                pending = Some((
                    sweeps + lag,
                    scope.spawn(move || {
                        let mut restart = None;
                        let got = forest_finish(
                            instance,
                            elig,
                            &snap_x,
                            &snap_total,
                            budget,
                            may_restart.then_some(&mut restart),
                        );
                        let restart = if got.is_none() { restart } else { None };
                        let got = got.filter(|t| crate::certificate(instance, t, 1e-9).holds);
                        (got, restart)
                    }),
                ));
            }
        }
    });
    let tasks = finished.unwrap_or_else(|| dense(&xp));
    PsdsfOutcome {
        tasks,
        sweeps,
        converged,
        exact_finish,
        finishes_tried,
        restarts,
        timed_out,
        over_relaxation: omega,
    }
}
