//! `leontief simulate CONFIG`: [`leontief::simulate`] with progress bars,
//! written as JSON and CSVs (the config format is in
//! [`leontief::simulate`]'s docs and `leontief simulate --help`).

use crate::args::SimulateArgs;
use crate::failure::{bad_input, Failure};
use anyhow::Context;
use leontief::simulate::{load_config, Overrides, Simulation};
use leontief_sim::sim::{Scheduler, SimResult, SimSettings};
use leontief_sim::workload;
use std::io::Write;
use std::path::{Path, PathBuf};

impl SimulateArgs {
    /// The arguments of `leontief simulate CONFIG` with no overrides.
    pub fn for_config(config: PathBuf) -> Self {
        SimulateArgs {
            config,
            scheduler: None,
            slots: None,
            slots_sweep: None,
            horizon: None,
            dedicated: false,
            output: None,
            csv_dir: None,
            write_trace: None,
            pretty: false,
        }
    }
}

/// Read and check a config, with the command-line overrides.
pub fn load(args: &SimulateArgs) -> Result<Simulation, Failure> {
    Ok(load_config(
        &args.config,
        &Overrides {
            scheduler: args.scheduler.clone(),
            slots: args.slots,
            horizon: args.horizon,
            dedicated: args.dedicated,
        },
    )?)
}

fn bar(len: u64, what: &str) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::new(len);
    b.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{what} [{{bar:40}}] {{pos}}/{{len}} {{elapsed}} (eta {{eta}})"
        ))
        .expect("a valid template"),
    );
    b
}

/// One simulation with progress bars on stderr (hidden when stderr is
/// not a terminal).
pub fn run_one(
    l: &Simulation,
    settings: &SimSettings,
    dedicated: bool,
) -> Result<SimResult, Failure> {
    let horizon = settings.horizon.unwrap_or(l.workload.end).max(0.0);
    let b = bar(
        horizon.ceil() as u64,
        &format!("simulating {} (s)", settings.scheduler.name()),
    );
    let users = bar(l.workload.users.len() as u64, "dedicated clouds (users)");
    let r = leontief::simulate::simulate(
        l,
        settings,
        dedicated,
        &|t| b.set_position(t as u64),
        &|| {
            b.finish_and_clear();
            users.inc(1)
        },
    )?;
    b.finish_and_clear();
    users.finish_and_clear();
    Ok(r)
}

fn write_json(value: &impl serde::Serialize, args: &SimulateArgs) -> Result<(), Failure> {
    let text = if args.pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .context("serialising the result")?;
    match &args.output {
        Some(p) => crate::output::write("-o", p, &(text + "\n"))?,
        None => println!("{text}"),
    }
    Ok(())
}

/// The command.
pub fn cmd(args: &SimulateArgs) -> Result<(), Failure> {
    // Output paths before the config and the run: a bad one is bad input.
    if let Some(p) = &args.output {
        crate::output::check_file("-o", p)?;
    }
    if let Some(p) = &args.write_trace {
        crate::output::check_file("--write-trace", p)?;
    }
    if let Some(dir) = &args.csv_dir {
        crate::output::make_dir("--csv-dir", dir)?;
    }
    let l = load(args)?;
    if let Some(p) = &args.write_trace {
        if l.workload.resources.len() != 2 {
            return Err(bad_input(
                "--write-trace: the task_events schema holds two resources (CPU and memory)",
            ));
        }
        let f = std::fs::File::create(p)
            .map_err(|e| bad_input(format!("--write-trace {}: {e}", p.display())))?;
        let mut w = std::io::BufWriter::new(f);
        workload::write_task_events(&l.workload, &mut w)
            .and_then(|_| w.flush())
            .with_context(|| format!("writing {}", p.display()))?;
        eprintln!("wrote {} tasks to {}", l.workload.tasks.len(), p.display());
        return Ok(());
    }
    if let Some(list) = &args.slots_sweep {
        if list.is_empty() || list.contains(&0) {
            return Err(bad_input(
                "--slots-sweep needs slot counts >= 1, e.g. 10,12,14,16,20",
            ));
        }
        let mut rows = Vec::new();
        for &s in list {
            let settings = SimSettings {
                scheduler: Scheduler::Slots { slots: s },
                ..l.settings.clone()
            };
            let r = run_one(&l, &settings, false)?;
            rows.push(serde_json::json!({
                "slots": s,
                "mean_utilisation": r.mean_utilisation,
                "finished": r.totals.finished,
                "submitted": r.totals.submitted,
                "wall_seconds": r.wall_seconds,
            }));
            eprintln!(
                "slots {s:>3}: mean utilisation {}",
                r.resources
                    .iter()
                    .zip(&r.mean_utilisation)
                    .map(|(n, u)| format!("{n} {:.1}%", 100.0 * u))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if let Some(dir) = &args.csv_dir {
            crate::output::make_dir("--csv-dir", dir)?;
            let mut text = format!(
                "slots,{}\n",
                l.cluster
                    .resources
                    .iter()
                    .map(|r| format!("mean_utilisation_{r}"))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            for row in &rows {
                let u: Vec<String> = row["mean_utilisation"]
                    .as_array()
                    .expect("an array")
                    .iter()
                    .map(|x| x.to_string())
                    .collect();
                text += &format!("{},{}\n", row["slots"], u.join(","));
            }
            crate::output::write("--csv-dir", &dir.join("slots_sweep.csv"), &text)?;
        }
        return write_json(&serde_json::json!({ "slots_sweep": rows }), args);
    }
    let r = run_one(&l, &l.settings, l.dedicated)?;
    if let Some(dir) = &args.csv_dir {
        write_csvs(&r, dir)?;
    }
    eprintln!(
        "{}: {} tasks submitted, {} finished, {} running, {} waiting, {} unschedulable; mean utilisation {}; {:.2} s",
        r.scheduler.name(),
        r.totals.submitted,
        r.totals.finished,
        r.totals.running,
        r.totals.waiting,
        r.totals.unschedulable,
        r.resources
            .iter()
            .zip(&r.mean_utilisation)
            .map(|(n, u)| format!("{n} {:.1}%", 100.0 * u))
            .collect::<Vec<_>>()
            .join(", "),
        r.wall_seconds
    );
    write_json(&r, args)
}

/// utilisation.csv, shares.csv, jobs.csv, users.csv.
pub fn write_csvs(r: &SimResult, dir: &Path) -> Result<(), Failure> {
    crate::output::make_dir("--csv-dir", dir)?;
    let fmt = |x: &f64| format!("{x}");
    let mut u = format!("time_s,{}\n", r.resources.join(","));
    for (t, row) in r.sample_times.iter().zip(&r.utilisation) {
        u += &format!(
            "{t},{}\n",
            row.iter().map(fmt).collect::<Vec<_>>().join(",")
        );
    }
    let names: Vec<String> = r.users.iter().map(|u| csv_field(&u.name)).collect();
    let mut s = format!("time_s,{}\n", names.join(","));
    for (t, row) in r.sample_times.iter().zip(&r.shares) {
        s += &format!(
            "{t},{}\n",
            row.iter().map(fmt).collect::<Vec<_>>().join(",")
        );
    }
    let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
    let mut j = String::from("job,user,tasks,submit_s,finish_s,completion_time_s\n");
    for job in &r.jobs {
        j += &format!(
            "{},{},{},{},{},{}\n",
            job.id,
            names[job.user],
            job.tasks,
            job.submit,
            opt(job.finish),
            opt(job.completion_time)
        );
    }
    let mut us = String::from(
        "user,submitted,finished,running,waiting,unschedulable,completion_ratio,dedicated_completion_ratio\n",
    );
    for (name, x) in names.iter().zip(&r.users) {
        us += &format!(
            "{name},{},{},{},{},{},{},{}\n",
            x.submitted,
            x.finished,
            x.running,
            x.waiting,
            x.unschedulable,
            x.completion_ratio,
            opt(x.dedicated_completion_ratio)
        );
    }
    for (file, text) in [
        ("utilisation.csv", u),
        ("shares.csv", s),
        ("jobs.csv", j),
        ("users.csv", us),
    ] {
        crate::output::write("--csv-dir", &dir.join(file), &text)?;
    }
    Ok(())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
