//! `leontief demo`: the bundled paper examples, then the Google cell with
//! every mechanism, as comparison tables.

use crate::cases::{compare, load_cases};
use crate::failure::{bad_input, Failure};
use crate::input::mechanism;
use leontief::Mechanism;
use leontief_core::{generate, Instance};
use std::path::Path;
use std::time::Instant;

pub fn run(datasets: &Path, users: usize) -> Result<(), Failure> {
    let options = leontief::Options::default();
    let dir = datasets.join("paper-examples");
    let cases = load_cases(&dir).map_err(|e| bad_input(format!("{}: {e}", dir.display())))?;
    println!("== Paper examples ({}) ==", dir.display());
    println!(
        "{:<36} {:<10} {:>10} {:>9}  result",
        "case", "mechanism", "max err", "verified"
    );
    let (mut pass, mut fail, mut refused, mut skipped) = (0, 0, 0, Vec::new());
    for case in &cases {
        let params = case.params();
        if case.mechanism() == "enumerate-bbf" {
            let inst = Instance::from_path(&case.instance)
                .map_err(|e| bad_input(format!("{}: {e}", case.name)))?;
            // Every printed solution passed the independent BBF test.
            let e = leontief::enumerate_bbf(&inst, &Default::default(), &|| {})?;
            let out = serde_json::to_value(&e).map_err(|e| anyhow::anyhow!(e))?;
            let result = match compare(case, &out) {
                Ok(_) => {
                    pass += 1;
                    format!("ok: {} bottleneck sets", e.solutions.len())
                }
                Err(msg) => {
                    fail += 1;
                    format!("MISMATCH: {msg}")
                }
            };
            println!(
                "{:<36} {:<10} {:>10} {:>9}  {}",
                case.name, "enum-bbf", "exact", true, result
            );
            continue;
        }
        let Ok(mech) = mechanism(case.mechanism(), &params) else {
            skipped.push(case.mechanism().to_string());
            continue;
        };
        let inst = Instance::from_path(&case.instance)
            .map_err(|e| bad_input(format!("{}: {e}", case.name)))?;
        let a = match leontief::solve(&inst, &mech, &options).map_err(Failure::from) {
            Ok(a) => a,
            Err(f) if f.code == 2 => {
                // A parameter region this build refuses (e.g. degenerate parameters).
                println!(
                    "{:<36} {:<10} {:>10} {:>9}  refused: {}",
                    case.name,
                    case.mechanism(),
                    "-",
                    "-",
                    f.message
                );
                refused += 1;
                continue;
            }
            Err(f) => return Err(f),
        };
        let out = serde_json::to_value(&a).map_err(|e| anyhow::anyhow!(e))?;
        let verified = out["verification"]["ok"].as_bool().unwrap_or(false);
        let (err, result) = match compare(case, &out) {
            Ok(e) => {
                pass += 1;
                (format!("{e:.1e}"), "ok".to_string())
            }
            Err(msg) => {
                fail += 1;
                ("-".into(), format!("MISMATCH: {msg}"))
            }
        };
        println!(
            "{:<36} {:<10} {:>10} {:>9}  {}",
            case.name,
            case.mechanism(),
            err,
            verified,
            result
        );
    }
    skipped.sort();
    skipped.dedup();
    let waiting = cases.len() - pass - fail - refused;
    if waiting == 0 {
        println!("{pass} matched, {fail} mismatched, {refused} refused\n");
    } else {
        println!(
            "{pass} matched, {fail} mismatched, {refused} refused; {waiting} cases wait for options not in this build ({}: see `leontief solve --help`)\n",
            skipped.join(", ")
        );
    }

    let inst = generate::google_cell(users, 1);
    println!(
        "== Google cell (Table I of 000): {} servers in {} classes, {} users (seed 1) ==",
        inst.num_physical_servers(),
        inst.num_entries(),
        inst.num_users()
    );
    println!(
        "{:<10} {:>12} {:>8} {:>12} {:>8} {:>8} {:>7} {:>10} {:>9}",
        "mechanism",
        "min share",
        "Jain",
        "total tasks",
        "cpu",
        "mem",
        "rounds",
        "seconds",
        "verified"
    );
    for mech in [
        Mechanism::Drf,
        Mechanism::Drfh,
        Mechanism::Kdf { k: 2 },
        Mechanism::NaiveDrf,
        Mechanism::Nfc,
    ] {
        let t0 = Instant::now();
        let a = leontief::solve(&inst, &mech, &options)?;
        let secs = t0.elapsed().as_secs_f64();
        let min_share = a.metrics.min_normalised_share();
        let rounds = a.frozen_round.as_ref().map_or("-".to_string(), |r| {
            r.iter().max().unwrap_or(&0).to_string()
        });
        let verified = a.verification.as_ref().is_some_and(|v| v.ok);
        println!(
            "{:<10} {:>12.6} {:>8.4} {:>12.2} {:>7.1}% {:>7.1}% {:>7} {:>10.4} {:>9}",
            match mech {
                Mechanism::Kdf { .. } => "kdf (k=2)",
                _ => mech.name(),
            },
            min_share,
            a.metrics.jain_index,
            a.metrics.total_tasks,
            100.0 * a.metrics.utilisation[0],
            100.0 * a.metrics.utilisation[1],
            rounds,
            secs,
            verified
        );
    }
    println!("(drf pools the cell into one server; drfh, kdf and nfc are exact over the 10 classes; naive-drf runs DRF inside each class.)");
    simulations(&datasets.join("simulations"))?;
    if fail > 0 {
        return Err(Failure {
            code: 1,
            message: format!("{fail} paper examples did not match"),
        });
    }
    Ok(())
}

/// The bundled simulator configs (Fig. 4 of 000 and the Google-schema
/// trace) under each scheduler.
fn simulations(dir: &Path) -> Result<(), Failure> {
    use leontief_sim::sim::Scheduler;
    println!(
        "\n== Simulations ({}; leontief simulate CONFIG) ==",
        dir.display()
    );
    println!(
        "{:<12} {:<16} {:>9} {:>9} {:>8} {:>8} {:>10} {:>9}",
        "config", "scheduler", "submitted", "finished", "cpu %", "mem %", "mean JCT s", "conserved"
    );
    let runs: [(&str, &[Scheduler]); 2] = [
        (
            "fig4.json",
            &[Scheduler::BestFit { normaliser: 0 }, Scheduler::Drfh],
        ),
        (
            "trace.json",
            &[
                Scheduler::BestFit { normaliser: 0 },
                Scheduler::FirstFit,
                Scheduler::Slots { slots: 14 },
            ],
        ),
    ];
    for (file, schedulers) in runs {
        let args = crate::args::SimulateArgs::for_config(dir.join(file));
        let l = crate::simulate::load(&args)?;
        for s in schedulers {
            let settings = leontief_sim::sim::SimSettings {
                scheduler: *s,
                ..l.settings.clone()
            };
            let r = crate::simulate::run_one(&l, &settings, false)?;
            let jct: Vec<f64> = r.jobs.iter().filter_map(|j| j.completion_time).collect();
            let name = match s {
                Scheduler::Slots { slots } => format!("slots ({slots})"),
                _ => s.name().to_string(),
            };
            println!(
                "{:<12} {:<16} {:>9} {:>9} {:>8.1} {:>8.1} {:>10.0} {:>9}",
                file,
                name,
                r.totals.submitted,
                r.totals.finished,
                100.0 * r.mean_utilisation[0],
                100.0 * r.mean_utilisation.get(1).copied().unwrap_or(0.0),
                jct.iter().sum::<f64>() / jct.len().max(1) as f64,
                r.totals.conserved
            );
        }
    }
    println!("(fig4.json: whole-task Best-Fit against exact divisible DRFH; `leontief repro sim-fig4` averages the shares over 20 server draws.)");
    Ok(())
}
