//! The strategy-proofness probe: search misreported demand vectors for a
//! user and measure what it really gains under a mechanism.
//!
//! Under a misreport d' user n receives, on every server entry i, the
//! resources of x'_{n,i} tasks of d'; with its true demand d it runs
//! sum_i min over r with d_r > 0 of x'_{n,i} d'_r / d_r tasks (capped at
//! its cap T_n). A gain is that number above its truthful tasks.

use crate::error::Error;
use crate::{Instance, Mechanism, Options, Solution, VerifyMode};
use leontief_core::RawInstance;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;

/// The most mechanism solves per user a probe spends.
pub const MAX_BUDGET: usize = 100_000;

/// What the probe searches.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeOptions {
    /// The users probed (names); default every user.
    pub users: Option<Vec<String>>,
    /// Mechanism solves per user (the structured misreports first, then a
    /// seeded local search).
    pub budget: usize,
    /// Seed of the local search.
    pub seed: u64,
    /// Only misreports that ask for at least the true demand of every
    /// resource (inflate, or claim a resource not needed): the setting of
    /// the strategy-proofness theorems of 000 and 001.
    pub inflate_only: bool,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            users: None,
            budget: 40,
            seed: 1,
            inflate_only: false,
        }
    }
}

/// One user's probe.
#[derive(Debug, Clone, Serialize)]
pub struct UserProbe {
    /// The user.
    pub user: String,
    /// Its tasks when it reports truthfully.
    pub truthful: f64,
    /// Its true tasks under the best misreport found.
    pub best: f64,
    /// (best - truthful) / truthful (0 when nothing helps; infinite when
    /// truthful is 0 and a misreport gets tasks).
    pub gain: f64,
    /// The best misreport (a demand vector), when it gains.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub misreport: Option<Vec<f64>>,
    /// How the best misreport was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub how: Option<String>,
    /// Mechanism solves spent.
    pub solves: usize,
}

/// The probe of one mechanism on one instance.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    /// The mechanism (spec string).
    pub mechanism: String,
    /// Relative gains below this are solver round-off, not manipulation.
    pub threshold: f64,
    /// Some user gains more than the threshold.
    pub manipulable: bool,
    /// The largest gain found.
    pub max_gain: f64,
    /// Per probed user.
    pub users: Vec<UserProbe>,
}

/// Gains at most this (relative) are read as round-off.
pub const GAIN_THRESHOLD: f64 = 1e-6;

/// The whole-task heuristics: true tasks are whole there too.
fn whole(m: &Mechanism) -> bool {
    matches!(
        m,
        Mechanism::FirstFit
            | Mechanism::BestFit { .. }
            | Mechanism::Slots { .. }
            | Mechanism::KdfOnline { .. }
    )
}

/// The tasks user `n` truly runs with the allocation of `s`, made for the
/// reported demand `report` (whole tasks per server when `whole`).
fn true_tasks(instance: &Instance, n: usize, report: &[f64], s: &Solution, whole: bool) -> f64 {
    let d = &instance.users()[n].demand;
    let per_task = |x: f64| {
        let t = d
            .iter()
            .zip(report)
            .filter(|(&dr, _)| dr > 0.0)
            .map(|(&dr, &rr)| x * rr / dr)
            .fold(f64::INFINITY, f64::min);
        // A whole task's worth less round-off still runs one task.
        if whole {
            (t * (1.0 + 1e-9)).floor()
        } else {
            t
        }
    };
    let got = if n < s.tasks.users() && s.tasks.servers() > 0 && !s.pooled {
        s.tasks
            .row(n)
            .iter()
            .map(|(_, x)| if x > 0.0 { per_task(x) } else { 0.0 })
            .sum()
    } else {
        per_task(s.user_tasks[n])
    };
    let got = if got.is_finite() { got } else { 0.0 };
    got.min(instance.users()[n].tasks.unwrap_or(f64::INFINITY))
}

fn with_report(raw: &RawInstance, n: usize, report: &[f64]) -> Result<Instance, Error> {
    let mut r = raw.clone();
    r.users[n].demand = report.to_vec();
    Instance::new(r).map_err(|e| Error::Input(e.to_string()))
}

/// The structured misreports of the issue: inflate each resource the user
/// needs least of (relative to the total), claim a little of a resource it
/// does not need, drop a resource (report half, a tenth).
fn structured(instance: &Instance, n: usize, inflate_only: bool) -> Vec<(Vec<f64>, String)> {
    let d = &instance.users()[n].demand;
    let names = instance.resources();
    let cap = instance.total_capacity();
    let mut out = Vec::new();
    for r in 0..d.len() {
        if d[r] > 0.0 {
            let factors: &[f64] = if inflate_only {
                &[1.5, 2.0, 4.0]
            } else {
                &[1.5, 2.0, 4.0, 0.5, 0.1]
            };
            for f in factors {
                let mut v = d.clone();
                v[r] *= f;
                out.push((v, format!("{} x{f}", names[r])));
            }
        } else if cap[r] > 0.0 {
            // A resource it does not need: claim 1% of the largest share
            // it has of another resource.
            let share = d
                .iter()
                .zip(cap)
                .filter(|(_, &c)| c > 0.0)
                .map(|(&x, &c)| x / c)
                .fold(0.0, f64::max);
            let mut v = d.clone();
            v[r] = 0.01 * share * cap[r];
            out.push((v, format!("claims {} it does not need", names[r])));
        }
    }
    out
}

/// The search state of one user: the best report so far.
struct Search<'a> {
    instance: &'a Instance,
    raw: &'a RawInstance,
    mechanism: &'a Mechanism,
    n: usize,
    run: Options,
    solves: usize,
    best: (f64, Option<Vec<f64>>, Option<String>),
}

impl Search<'_> {
    /// Solve with report `v`; true if it beats the best so far. A report
    /// the mechanism refuses (bad input) is no gain.
    fn attempt(&mut self, v: &[f64], how: &str) -> Result<bool, Error> {
        self.solves += 1;
        let Ok(inst) = with_report(self.raw, self.n, v) else {
            return Ok(false);
        };
        let s = match crate::solve(&inst, self.mechanism, &self.run) {
            Ok(s) => s,
            Err(e) if e.is_bad_input() => return Ok(false),
            Err(e) => return Err(e),
        };
        if !s.status.has_solution() {
            return Ok(false);
        }
        let t = true_tasks(self.instance, self.n, v, &s, whole(self.mechanism));
        if t > self.best.0 {
            self.best = (t, Some(v.to_vec()), Some(how.to_string()));
            return Ok(true);
        }
        Ok(false)
    }
}

fn probe_user(
    instance: &Instance,
    raw: &RawInstance,
    mechanism: &Mechanism,
    n: usize,
    truthful: f64,
    options: &ProbeOptions,
) -> Result<UserProbe, Error> {
    let run = Options {
        verify: VerifyMode::Never,
        ..Options::default()
    };
    let mut search = Search {
        instance,
        raw,
        mechanism,
        n,
        run,
        solves: 0,
        best: (truthful, None, None),
    };
    for (v, how) in structured(instance, n, options.inflate_only)
        .iter()
        .take(options.budget)
    {
        search.attempt(v, how)?;
    }
    // Local search: multiplicative steps from the best report so far.
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed ^ (n as u64).wrapping_mul(0x9e37_79b9));
    let d = instance.users()[n].demand.clone();
    let mut step = 0.5f64;
    while search.solves < options.budget {
        let from = search.best.1.clone().unwrap_or_else(|| d.clone());
        let v: Vec<f64> = from
            .iter()
            .zip(&d)
            .map(|(&x, &t)| {
                let y = if t > 0.0 || x > 0.0 {
                    x * (step * rng.gen_range(-1.0..1.0f64)).exp()
                } else {
                    x
                };
                if options.inflate_only {
                    y.max(t)
                } else {
                    y
                }
            })
            .collect();
        if !search.attempt(&v, "local search")? {
            step = (step * 0.9).max(0.02);
        }
    }
    let (solves, best) = (search.solves, search.best);
    let gain = if truthful > 0.0 {
        (best.0 - truthful) / truthful
    } else if best.0 > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    let gains = gain > GAIN_THRESHOLD;
    Ok(UserProbe {
        user: instance.users()[n].name.clone(),
        truthful,
        best: best.0,
        gain: if gains { gain } else { 0.0 },
        misreport: best.1.filter(|_| gains),
        how: best.2.filter(|_| gains),
        solves,
    })
}

/// Probe `mechanism` on `instance` for profitable misreports.
///
/// ```
/// use leontief::audit::{probe_sp, ProbeOptions};
/// let instance = leontief::Instance::from_json_str(r#"{
///     "resources": ["cpu", "mem"],
///     "servers": [{"name": "s1", "capacity": [9, 18]}],
///     "users": [{"name": "a", "demand": [1, 4]}, {"name": "b", "demand": [3, 1]}]
/// }"#).unwrap();
/// let p = probe_sp(&instance, &"drf".parse().unwrap(), &ProbeOptions::default()).unwrap();
/// assert!(!p.manipulable); // DRF is strategy-proof
/// ```
pub fn probe_sp(
    instance: &Instance,
    mechanism: &Mechanism,
    options: &ProbeOptions,
) -> Result<Probe, Error> {
    if options.budget == 0 || options.budget > MAX_BUDGET {
        return Err(crate::error::bad_input(format!(
            "budget {}: must be 1 to {MAX_BUDGET} solves per user",
            options.budget
        )));
    }
    let run = Options {
        verify: VerifyMode::Never,
        ..Options::default()
    };
    let truthful = crate::solve(instance, mechanism, &run)?;
    if !truthful.status.has_solution() {
        return Err(Error::Run(format!(
            "{mechanism} ended {} on the truthful instance: nothing to probe",
            truthful.status
        )));
    }
    let users: Vec<usize> = match &options.users {
        None => (0..instance.num_users()).collect(),
        Some(names) => names
            .iter()
            .map(|name| {
                instance
                    .users()
                    .iter()
                    .position(|u| &u.name == name)
                    .ok_or_else(|| Error::Input(format!("--users: no user named \"{name}\"")))
            })
            .collect::<Result<_, _>>()?,
    };
    let raw = instance.to_raw();
    let users: Vec<UserProbe> = users
        .par_iter()
        .map(|&n| {
            let t = true_tasks(
                instance,
                n,
                &instance.users()[n].demand,
                &truthful,
                whole(mechanism),
            );
            probe_user(instance, &raw, mechanism, n, t, options)
        })
        .collect::<Result<_, _>>()?;
    let max_gain = users.iter().map(|u| u.gain).fold(0.0, f64::max);
    Ok(Probe {
        mechanism: mechanism.to_string(),
        threshold: GAIN_THRESHOLD,
        manipulable: max_gain > GAIN_THRESHOLD,
        max_gain,
        users,
    })
}
