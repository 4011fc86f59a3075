//! The max-min family of leontief on the LP layer
//! (`docs/mechanisms.md`, "Max-min family"):
//!
//! | mechanism | share s_n | how |
//! |---|---|---|
//! | DRF (Ghodsi et al.) | x_n mu_n on the pooled servers | closed-form progressive filling |
//! | DRFH (000, LP (7), Sec. V-A) | x_n mu_n, x_n = sum_i x_{n,i} | [`maxmin::lex_max_min`] |
//! | k-DF (001, Sec. IV) | x_n prod_{l<=k} w_{n,l} d_{n,(l)} | closed form on one server, LP on several |
//! | per-server DRF (000, Sec. III-D) | DRF inside each server | closed form per entry |
//! | NFC | maximise sum_n x_n | one LP, or column generation at scale ([`mod@nfc`]) |
//! | TSF (Wang et al., SC'16; 004) | x_n / y_n, y_n = sum_i gamma'_{n,i} ignoring placement | [`maxmin::lex_max_min`] with placement |
//!
//! mu_n = max_r D_{n,r} / C_r is the global dominant share of one task;
//! d_{n,r} = D_{n,r} / C_r. Weights w_n, task caps T_n and placement lists
//! E_n are honoured everywhere (pooled DRF has one server, so placement
//! lists do not apply to it: the output says so).
//!
//! ## The max-min operator in stages
//!
//! Each stage imports only the stages below it:
//!
//! | stage | modules | what |
//! |---|---|---|
//! | 6. mechanisms | this file, [`mod@nfc`] | DRF, DRFH, k-DF, TSF, per-server DRF, NFC as allocations |
//! | 5. dispatcher | [`maxmin`] | which path runs ([`maxmin::Path`]), in order |
//! | 4. rounds | `rounds` (`state`, `verdicts`, `live`) | the round loop over an explicit state: limit, level, cap jumps, verdicts, growth, freeze, live parts; one `Stop` |
//! | 3. shortcut paths | [`merge`], `capped`, [`patterns`], `pooled`, `groups` | each answers a shape of instance in fewer LPs, or declines |
//! | 2. the LP and its duality | `lp` (`build`, `duality`, [`pricing`], `colgen`, `closing`, `retry`, `finish`, `part`) | build once, prices and proofs, column generation, closed entries, solve to an answer, read back |
//! | 1. solvers | `solvers` (`direct`, `block_ipm`) | the Clarabel users: Clarabel as it stands, and the block interior point method |
//! | 0. vocabulary | [`settings`], [`outcome`], [`closed_form`], [`progress`], [`DrfhError`] | every setting and path threshold, the outcome and its [`maxmin::Path`], the closed form on one pool |
//!
//! `docs/design/maxmin-operator.md` says why each path and threshold is
//! what it is; `benches/REPORT.md` how fast each is today.
#![deny(missing_docs)]

// Stage 0: the vocabulary.
pub mod closed_form;
mod error;
pub mod outcome;
pub mod progress;
pub mod settings;
// Stage 1: the Clarabel users.
pub mod solvers;
// Stage 2: the LP and its duality.
pub mod lp;
// Stage 3: the shortcut paths.
pub mod paths;
// Stage 4: the rounds.
pub mod rounds;
// Stage 5: the dispatcher.
pub mod maxmin;
// Stage 6: the mechanisms (this file and NFC).
pub mod nfc;

pub use error::DrfhError;
pub use lp::pricing;
pub use paths::{merge, patterns};

pub use leontief_core::shares::{dominant_sigma, kdf_sigma, tsf_sigma};
use leontief_core::{Allocation, Instance, ResourceId, ServerId, Status, UserId};
use leontief_model::LpBackend;
use maxmin::{lex_max_min, progressive_filling, Freeze, MaxMinOutcome, MaxMinSettings};
pub use nfc::nfc;
use std::time::Instant;

/// TSF (task share fairness): weighted lexicographic max-min of x_n / y_n,
/// y_n the tasks user n would run alone on every server ignoring
/// placement, over the servers its placement list allows.
///
/// ```
/// use leontief_drfh::{maxmin::MaxMinSettings, tsf};
/// let instance = leontief_core::Instance::from_json_str(r#"{
///     "resources": ["cpu", "mem"],
///     "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
///     "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]
/// }"#).unwrap();
/// let a = tsf(&leontief_highs::Highs::default(), &instance, &MaxMinSettings::default()).unwrap();
/// // Fig. 1 of 000: each user runs 12 tasks alone; 10 each, symmetric.
/// assert!((a.user_tasks[0] - 10.0).abs() < 1e-6 && (a.user_tasks[1] - 10.0).abs() < 1e-6);
/// ```
pub fn tsf<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    settings: &MaxMinSettings,
) -> Result<Allocation, DrfhError> {
    settings.validate()?;
    let o = lex_max_min(backend, instance, &tsf_sigma(instance), true, settings)?;
    Ok(from_outcome(instance, "tsf", o, settings.explain))
}

/// DRF on the pooled servers by closed-form progressive filling.
pub fn drf(instance: &Instance) -> Allocation {
    let sigma = dominant_sigma(instance);
    let mut a = single_pool(instance, &sigma, "drf");
    if instance.num_entries() > 1 || instance.servers()[0].count > 1 {
        a.pooled = true;
        a.notes.push(format!(
            "drf pools the {} servers into one of capacity C (the all-in-one model of the DRF paper); \
             tasks[n][i] splits x_n across entries in proportion to their capacity of the user's \
             dominant resource and need not be placeable: use drfh for a per-server allocation",
            instance.num_physical_servers()
        ));
    }
    if instance.has_placement() {
        a.notes.push(
            "placement lists (users[].servers) do not apply to pooled DRF and were not used".into(),
        );
    }
    a
}

/// Progressive filling on the pooled capacity with shares `sigma`.
fn single_pool(instance: &Instance, sigma: &[f64], mechanism: &str) -> Allocation {
    let t0 = Instant::now();
    let users = instance.users();
    let demand: Vec<&[f64]> = users.iter().map(|u| u.demand.as_slice()).collect();
    let weight: Vec<f64> = users.iter().map(|u| u.weight).collect();
    let caps: Vec<f64> = users
        .iter()
        .map(|u| u.tasks.unwrap_or(f64::INFINITY))
        .collect();
    let (x, levels, round, why) =
        progressive_filling(&demand, &weight, &caps, sigma, instance.total_capacity());
    let seconds = t0.elapsed().as_secs_f64();
    let tasks = instance.split_pooled(&x);
    let mut a = Allocation::new(instance, mechanism, Status::Optimal, tasks);
    a.solve_seconds = seconds;
    a.objective = Some(first_level(&levels, &round));
    a.explanation = explain(instance, &a, &round, &why, &levels);
    a.levels = Some(levels);
    a.frozen_round = Some(round);
    a
}

/// The level of the first round: the smallest level among users that froze
/// in round 1 (0 when nobody can run).
fn first_level(levels: &[f64], round: &[usize]) -> f64 {
    let l = levels
        .iter()
        .zip(round)
        .filter(|(_, &r)| r == 1)
        .map(|(&l, _)| l)
        .fold(f64::INFINITY, f64::min);
    if l.is_finite() {
        l
    } else {
        0.0
    }
}

fn from_outcome(
    instance: &Instance,
    mechanism: &str,
    o: MaxMinOutcome,
    explain_users: bool,
) -> Allocation {
    if o.tasks.is_empty() {
        let mut a = Allocation::empty(instance, mechanism, o.status);
        a.backend_status = Some(o.raw_status);
        a.lps_solved = o.lps;
        a.build_seconds = o.build_seconds;
        a.solve_seconds = o.solve_seconds;
        a.notes.push(format!(
            "no allocation: the solve in round {} ended with status {}",
            o.rounds, o.status
        ));
        return a;
    }
    let mut a = Allocation::new(instance, mechanism, o.status, o.tasks);
    a.backend_status = Some(o.raw_status);
    a.objective = o.first_level;
    a.lps_solved = o.lps;
    a.build_seconds = o.build_seconds;
    a.solve_seconds = o.solve_seconds;
    if explain_users {
        a.explanation = explain(instance, &a, &o.frozen_round, &o.freeze, &o.levels);
    }
    let m = instance.num_resources();
    a.certificate = Some(leontief_core::MaxMinCertificate {
        path: o.path,
        pairs: o.pairs,
        columns: o.columns,
        pricing_passes: o.pricing_passes,
        passes: o.passes,
        merged_classes: o.merged_classes,
        groups: o.path.groups(),
        rounds: o.certificates.iter().map(|c| c.to_prices(m)).collect(),
    });
    a.levels = Some(o.levels);
    a.frozen_round = Some(o.frozen_round);
    a
}

/// DRFH: weighted lexicographic max-min of global dominant shares over all
/// servers jointly, with caps and placement.
pub fn drfh<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    settings: &MaxMinSettings,
) -> Result<Allocation, DrfhError> {
    settings.validate()?;
    let sigma = dominant_sigma(instance);
    let o = lex_max_min(backend, instance, &sigma, true, settings)?;
    Ok(from_outcome(instance, "drfh", o, settings.explain))
}

/// k-DF: closed form on one server entry, k-DFH (the LP operator) on several.
pub fn kdf<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    k: usize,
    settings: &MaxMinSettings,
) -> Result<Allocation, DrfhError> {
    settings.validate()?;
    if k == 0 {
        return Err(DrfhError::InvalidParameter {
            name: "--k".into(),
            reason: "must be >= 1 (k = 1 is DRF)".into(),
        });
    }
    let sigma = kdf_sigma(instance, k);
    if instance.num_entries() == 1 && !instance.has_placement() {
        return Ok(single_pool(instance, &sigma, "kdf"));
    }
    let o = lex_max_min(backend, instance, &sigma, true, settings)?;
    Ok(from_outcome(instance, "kdf", o, settings.explain))
}

/// Per-server DRF: DRF inside each server entry separately (the naive
/// baseline of 000, Sec. III-D), honouring placement. Task caps are shared
/// across servers in input order: entry i sees T_n minus what n got on the
/// entries before it.
pub fn naive_drf(instance: &Instance) -> Allocation {
    let t0 = Instant::now();
    let (k, m, nu) = (
        instance.num_entries(),
        instance.num_resources(),
        instance.num_users(),
    );
    let users = instance.users();
    let mut tasks = vec![vec![0.0; k]; nu];
    let mut got = vec![0.0; nu];
    for i in instance.server_ids() {
        let cap = instance.class_capacities(i);
        let demand: Vec<&[f64]> = users.iter().map(|u| u.demand.as_slice()).collect();
        let weight: Vec<f64> = users.iter().map(|u| u.weight).collect();
        let caps: Vec<f64> = users
            .iter()
            .enumerate()
            .map(|(n, u)| u.tasks.map_or(f64::INFINITY, |t| (t - got[n]).max(0.0)))
            .collect();
        // Per-server dominant share of one task; 0 where n may not run on i.
        let sigma: Vec<f64> = instance
            .user_ids()
            .map(|n| {
                if !instance.can_run_on(n, i) || caps[n.0] <= 0.0 {
                    return 0.0;
                }
                (0..m)
                    .filter(|&r| users[n.0].demand[r] > 0.0)
                    .map(|r| users[n.0].demand[r] / cap[r])
                    .fold(0.0, f64::max)
            })
            .collect();
        let (x, _, _, _) = progressive_filling(&demand, &weight, &caps, &sigma, cap);
        for n in 0..nu {
            tasks[n][i.0] = x[n];
            got[n] += x[n];
        }
    }
    let mut a = Allocation::new(instance, "naive-drf", Status::Optimal, tasks);
    a.solve_seconds = t0.elapsed().as_secs_f64();
    a.objective = Some(a.metrics.min_normalised_share());
    a.notes.push(
        "per-server DRF: DRF inside each server separately (000, Sec. III-D); objective is the \
         smallest global normalised dominant share"
            .into(),
    );
    a
}

/// One sentence per user on why it got what it got.
fn explain(
    instance: &Instance,
    a: &Allocation,
    round: &[usize],
    why: &[Freeze],
    levels: &[f64],
) -> Vec<String> {
    let m = instance.num_resources();
    instance
        .user_ids()
        .map(|n| {
            let u = instance.user(n);
            match why[n.0] {
                Freeze::CannotRun => {
                    let missing: Vec<&str> = (0..m)
                        .filter(|&r| u.demand[r] > 0.0)
                        .filter(|&r| {
                            !instance
                                .server_ids()
                                .any(|i| instance.eligible(n, i) && instance.class_capacity(i, ResourceId(r)) > 0.0)
                        })
                        .map(|r| instance.resources()[r].as_str())
                        .collect();
                    format!(
                        "{}: 0 tasks: no server it may use has every resource it demands (none of its servers has {})",
                        u.name,
                        if missing.is_empty() { "all of them together".to_string() } else { missing.join(", ") }
                    )
                }
                Freeze::Rising => format!(
                    "{}: {:.6} tasks (level {:.6}): still rising when the time limit stopped the rounds: \
                     at least the level of the last round solved, not its own max-min level",
                    u.name, a.user_tasks[n.0], levels[n.0]
                ),
                Freeze::Capped => format!(
                    "{}: {:.6} tasks: reached its task cap in round {}",
                    u.name, a.user_tasks[n.0], round[n.0]
                ),
                Freeze::Blocked => {
                    let sat = saturated_used(instance, a, n);
                    format!(
                        "{}: {:.6} tasks (level {:.6}): froze in round {}: it cannot rise without lowering a user \
                         whose level is no larger; saturated resources it uses: {}",
                        u.name,
                        a.user_tasks[n.0],
                        levels[n.0],
                        round[n.0],
                        if sat.is_empty() { "none at this precision".to_string() } else { sat.join(", ") }
                    )
                }
            }
        })
        .collect()
}

/// Resources on entries where user n runs tasks and that are (nearly) full.
fn saturated_used(instance: &Instance, a: &Allocation, n: UserId) -> Vec<String> {
    const SHOWN: usize = 6;
    let d = &instance.user(n).demand;
    let mut out = Vec::new();
    if a.pooled || instance.num_entries() == 1 {
        for r in instance.resource_ids() {
            if d[r.0] > 0.0 && a.metrics.utilisation[r.0] >= 1.0 - 1e-7 {
                out.push(instance.resources()[r.0].clone());
            }
        }
        out.truncate(SHOWN);
        return out;
    }
    // The first few only: formatting every saturated entry a user runs on
    // cost 1 s on the Google cell listed as 12,583 entries.
    for (i, x) in a.tasks.row(n.0) {
        let i = ServerId(i);
        if out.len() >= SHOWN {
            break;
        }
        if x <= 1e-9 * a.user_tasks[n.0].max(1.0) {
            continue;
        }
        for r in instance.resource_ids() {
            if d[r.0] > 0.0 && a.metrics.server_utilisation[i.0][r.0] >= 1.0 - 1e-7 {
                out.push(format!(
                    "{}@{}",
                    instance.resources()[r.0],
                    instance.servers()[i.0].name
                ));
            }
        }
    }
    out.truncate(SHOWN);
    out
}
