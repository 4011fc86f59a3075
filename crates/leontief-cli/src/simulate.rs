//! `leontief simulate CONFIG`: the trace-driven simulator of leontief-sim.
//!
//! The config is JSON (paths relative to the config's folder):
//!
//! ```json
//! {
//!   "cluster": {"google": {"servers": 2000, "seed": 1}},
//!   "workload": {"trace": "google-synthetic-task-events.csv"},
//!   "scheduler": "best-fit",
//!   "horizon": 7200,
//!   "sample_interval": 30,
//!   "dedicated": true
//! }
//! ```
//!
//! * `cluster`: `{"google": {"servers": K, "seed": S}}` (K servers drawn
//!   from Table I of 000) or `{"instance": "file.json"}` (its servers);
//! * `workload`: `{"trace": "task_events.csv"}` (Google cluster-data 2011
//!   schema), `{"synthetic": {...}}` (fields of `SyntheticSpec`, all
//!   optional) or `{"users": [{"name", "demand", "weight"?, "jobs":
//!   [{"submit", "tasks", "duration"}]}]}`;
//! * `scheduler`: first-fit, best-fit (with `normaliser`, a resource
//!   name), slots (with `slots`), or drfh (exact, divisible tasks);
//! * `horizon`, `sample_interval` (seconds), `dedicated` (also run each
//!   user on its dedicated cloud, Fig. 8), `dedicated_seed`, `weights`
//!   (`{"user name": w}`: weighted shares order the users; default 1).
use crate::{bad_input, Failure};
use anyhow::Context;
use leontief_highs::Highs;
use leontief_sim::sim::{
    dedicated_clouds, simulate, Cluster, Scheduler, SimResult, SimRunError, SimSettings,
};
use leontief_sim::workload::{self, ExplicitUser, SyntheticSpec, Workload};
use serde::Deserialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// `leontief simulate` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// The config JSON (see `leontief simulate --help`).
    pub config: PathBuf,
    /// Override the config's scheduler: first-fit, best-fit, slots, drfh.
    #[arg(long)]
    pub scheduler: Option<String>,
    /// Override the slots per maximum server (slots).
    #[arg(long)]
    pub slots: Option<u32>,
    /// Run the Slots scheduler once per S in this list and print the mean
    /// CPU and memory utilisation of each (Table II of 000), e.g.
    /// 10,12,14,16,20.
    #[arg(long, value_delimiter = ',')]
    pub slots_sweep: Option<Vec<u32>>,
    /// Override the horizon (seconds).
    #[arg(long)]
    pub horizon: Option<f64>,
    /// Also run every user alone on its dedicated cloud (Fig. 8).
    #[arg(long)]
    pub dedicated: bool,
    /// Write the result JSON here instead of stdout.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Also write utilisation.csv, shares.csv, jobs.csv and users.csv here.
    #[arg(long)]
    pub csv_dir: Option<PathBuf>,
    /// Write the workload as a task_events trace here and stop.
    #[arg(long)]
    pub write_trace: Option<PathBuf>,
    /// Pretty-print the JSON.
    #[arg(long)]
    pub pretty: bool,
}

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    cluster: ClusterSpec,
    workload: WorkloadSpec,
    #[serde(default = "default_scheduler")]
    scheduler: String,
    slots: Option<u32>,
    normaliser: Option<String>,
    horizon: Option<f64>,
    sample_interval: Option<f64>,
    #[serde(default)]
    dedicated: bool,
    #[serde(default = "one")]
    dedicated_seed: u64,
    /// Weights by user name (default 1), for any workload.
    #[serde(default)]
    weights: std::collections::BTreeMap<String, f64>,
}

fn default_scheduler() -> String {
    "best-fit".into()
}

fn one() -> u64 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum ClusterSpec {
    Google { servers: usize, seed: u64 },
    Instance(PathBuf),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum WorkloadSpec {
    Trace(PathBuf),
    Synthetic(SyntheticSpec),
    Users(Vec<ExplicitUser>),
}

/// A loaded config: cluster, workload and settings.
#[derive(Clone)]
pub struct Loaded {
    /// The cluster.
    pub cluster: Cluster,
    /// The workload.
    pub workload: Workload,
    /// The settings.
    pub settings: SimSettings,
    /// Run the dedicated clouds too.
    pub dedicated: bool,
    /// Their seed.
    pub dedicated_seed: u64,
}

fn parse_scheduler(
    name: &str,
    slots: Option<u32>,
    normaliser: Option<&str>,
    resources: &[String],
) -> Result<Scheduler, Failure> {
    if slots.is_some() && name != "slots" {
        return Err(bad_input(format!("slots does not apply to {name}")));
    }
    if normaliser.is_some() && name != "best-fit" {
        return Err(bad_input(format!("normaliser does not apply to {name}")));
    }
    Ok(match name {
        "first-fit" => Scheduler::FirstFit,
        "best-fit" => Scheduler::BestFit {
            normaliser: match normaliser {
                None => 0,
                Some(r) => resources.iter().position(|x| x == r).ok_or_else(|| {
                    bad_input(format!(
                        "normaliser {r} is not a resource of the cluster ({})",
                        resources.join(", ")
                    ))
                })?,
            },
        },
        "slots" => match slots {
            None => {
                return Err(bad_input(
                    "scheduler slots needs slots S (slots per maximum server)",
                ))
            }
            Some(0) => return Err(bad_input("slots must be >= 1 (got 0)")),
            Some(s) => Scheduler::Slots { slots: s },
        },
        "drfh" => Scheduler::Drfh,
        other => {
            return Err(bad_input(format!(
                "scheduler {other}: use first-fit, best-fit, slots or drfh"
            )))
        }
    })
}

/// The most servers a simulated Google cluster may have (each is a record
/// in memory; 10^7 is ten Google cells of the largest kind).
pub const MAX_SERVERS: usize = 10_000_000;

/// Read and check a config, with the command-line overrides.
pub fn load(args: &SimulateArgs) -> Result<Loaded, Failure> {
    let text = std::fs::read_to_string(&args.config)
        .map_err(|e| bad_input(format!("{}: {e}", args.config.display())))?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    let c: Config = serde_path_to_error::deserialize(&mut *de).map_err(|e| {
        bad_input(format!(
            "{}: {} ({})",
            args.config.display(),
            e.inner(),
            e.path()
        ))
    })?;
    de.end().map_err(|e| {
        bad_input(format!(
            "{}: trailing data after the config: {e}",
            args.config.display()
        ))
    })?;
    let dir = args.config.parent().unwrap_or(Path::new("."));
    let cluster = match c.cluster {
        ClusterSpec::Google { servers, seed } => {
            if servers == 0 {
                return Err(bad_input("cluster.google.servers must be >= 1"));
            }
            if servers > MAX_SERVERS {
                return Err(bad_input(format!(
                    "cluster.google.servers is {servers}, above {MAX_SERVERS}, the most one simulation holds"
                )));
            }
            Cluster::google_sample(servers, seed)
        }
        ClusterSpec::Instance(p) => Cluster::from_instance(&crate::load(&dir.join(p))?),
    };
    let workload = match c.workload {
        WorkloadSpec::Trace(p) => workload::read_task_events(&dir.join(p)),
        WorkloadSpec::Synthetic(s) => s.generate(&cluster.resources),
        WorkloadSpec::Users(u) => workload::explicit(&cluster.resources, &u),
    }
    .map_err(|e| bad_input(e.to_string()))?;
    let mut workload = workload;
    for (user, w) in &c.weights {
        let n = workload
            .users
            .iter()
            .position(|u| u == user)
            .ok_or_else(|| {
                bad_input(format!(
                    "weights.{user}: no user of that name in the workload"
                ))
            })?;
        if !(w.is_finite() && *w > 0.0) {
            return Err(bad_input(format!(
                "weights.{user} must be finite and > 0 (got {w})"
            )));
        }
        workload.weights[n] = *w;
    }
    let name = args.scheduler.as_deref().unwrap_or(&c.scheduler);
    let slots = args.slots.or(c.slots);
    let scheduler = parse_scheduler(name, slots, c.normaliser.as_deref(), &cluster.resources)?;
    Ok(Loaded {
        settings: SimSettings {
            scheduler,
            horizon: args.horizon.or(c.horizon),
            sample_interval: c.sample_interval,
        },
        cluster,
        workload,
        dedicated: args.dedicated || c.dedicated,
        dedicated_seed: c.dedicated_seed,
    })
}

fn run_error(e: SimRunError) -> Failure {
    match e {
        SimRunError::Invalid { .. } => bad_input(e.to_string()),
        SimRunError::Solve { .. } => Failure {
            code: 1,
            message: e.to_string(),
        },
    }
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

/// One simulation with a progress bar on stderr (hidden when stderr is not
/// a terminal).
pub fn run_one(
    highs: &Highs,
    l: &Loaded,
    settings: &SimSettings,
    dedicated: bool,
) -> Result<SimResult, Failure> {
    let horizon = settings.horizon.unwrap_or(l.workload.end).max(0.0);
    let b = bar(
        horizon.ceil() as u64,
        &format!("simulating {} (s)", settings.scheduler.name()),
    );
    let mut r = simulate(highs, &l.cluster, &l.workload, settings, &|t| {
        b.set_position(t as u64)
    })
    .map_err(run_error)?;
    b.finish_and_clear();
    if dedicated {
        let users = r.users.iter().filter(|u| u.submitted > 0).count() as u64;
        let b = bar(users, "dedicated clouds (users)");
        dedicated_clouds(
            highs,
            &l.cluster,
            &l.workload,
            settings,
            &mut r,
            l.dedicated_seed,
            &|| b.inc(1),
        )
        .map_err(run_error)?;
        b.finish_and_clear();
    }
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
        Some(p) => {
            std::fs::write(p, text + "\n").with_context(|| format!("writing {}", p.display()))?
        }
        None => println!("{text}"),
    }
    Ok(())
}

/// The command.
pub fn cmd(args: &SimulateArgs) -> Result<(), Failure> {
    let l = load(args)?;
    if let Some(p) = &args.write_trace {
        if l.workload.resources.len() != 2 {
            return Err(bad_input(
                "--write-trace: the task_events schema holds two resources (CPU and memory)",
            ));
        }
        let f = std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?;
        let mut w = std::io::BufWriter::new(f);
        workload::write_task_events(&l.workload, &mut w)
            .and_then(|_| w.flush())
            .with_context(|| format!("writing {}", p.display()))?;
        eprintln!("wrote {} tasks to {}", l.workload.tasks.len(), p.display());
        return Ok(());
    }
    let highs = crate::backend()?;
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
            let r = run_one(&highs, &l, &settings, false)?;
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
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
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
            std::fs::write(dir.join("slots_sweep.csv"), text).context("writing slots_sweep.csv")?;
        }
        return write_json(&serde_json::json!({ "slots_sweep": rows }), args);
    }
    let r = run_one(&highs, &l, &l.settings, l.dedicated)?;
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
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
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
        std::fs::write(dir.join(file), text).with_context(|| format!("writing {file}"))?;
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

/// `repro sim-fig4` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct Fig4Args {
    /// The Fig. 4 scenario (its cluster is redrawn for each seed).
    #[arg(long, default_value = "datasets/simulations/fig4.json")]
    pub config: PathBuf,
    /// Server draws (seeds 1..=DRAWS).
    #[arg(long, default_value_t = 20)]
    pub draws: u64,
    /// Pretty-print the JSON.
    #[arg(long)]
    pub pretty: bool,
}

/// Mean global dominant share of the users in `set` over the samples where
/// exactly they hold resources (a phase of Fig. 4).
fn phase_share(r: &SimResult, set: &[usize]) -> Option<f64> {
    let vals: Vec<f64> = r
        .shares
        .iter()
        .filter(|s| (0..s.len()).all(|n| (s[n] > 0.0) == set.contains(&n)))
        .flat_map(|s| set.iter().map(move |&n| s[n]))
        .collect();
    (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
}

/// Fig. 4 of 000 over `draws` random 100-server clusters: the mean global
/// dominant share while exactly the first two users, and while all three,
/// hold resources, for whole-task Best-Fit DRFH and exact divisible DRFH.
pub fn fig4_cmd(args: &Fig4Args) -> Result<(), Failure> {
    if args.draws == 0 {
        return Err(bad_input("--draws must be >= 1"));
    }
    let base = load(&SimulateArgs::for_config(args.config.clone()))?;
    let highs = crate::backend()?;
    let servers = base.cluster.servers.len();
    let mut rows = Vec::new();
    for seed in 1..=args.draws {
        let l = Loaded {
            cluster: Cluster::google_sample(servers, seed),
            ..base.clone()
        };
        let mut row = serde_json::json!({ "seed": seed, "pool": l.cluster.pool() });
        for s in [Scheduler::BestFit { normaliser: 0 }, Scheduler::Drfh] {
            let settings = SimSettings {
                scheduler: s,
                ..l.settings.clone()
            };
            let r =
                simulate(&highs, &l.cluster, &l.workload, &settings, &|_| {}).map_err(run_error)?;
            row[s.name()] = serde_json::json!({
                "two_users": phase_share(&r, &[0, 1]),
                "three_users": phase_share(&r, &[0, 1, 2]),
            });
        }
        rows.push(row);
    }
    let mean = |s: &str, w: &str| {
        rows.iter()
            .map(|r| r[s][w].as_f64().unwrap_or(f64::NAN))
            .sum::<f64>()
            / rows.len() as f64
    };
    let summary = serde_json::json!({
        "draws": args.draws,
        "best-fit": {"two_users": mean("best-fit", "two_users"), "three_users": mean("best-fit", "three_users")},
        "drfh": {"two_users": mean("drfh", "two_users"), "three_users": mean("drfh", "three_users")},
        "paper": {"two_users": 0.44, "three_users": 0.26},
        "runs": rows,
    });
    eprintln!(
        "mean global dominant share over {} draws: Best-Fit {:.1}% (two users), {:.1}% (three); exact DRFH {:.1}%, {:.1}%; paper (Best-Fit) 44%, 26%",
        args.draws,
        100.0 * mean("best-fit", "two_users"),
        100.0 * mean("best-fit", "three_users"),
        100.0 * mean("drfh", "two_users"),
        100.0 * mean("drfh", "three_users"),
    );
    let text = if args.pretty {
        serde_json::to_string_pretty(&summary)
    } else {
        serde_json::to_string(&summary)
    }
    .context("serialising")?;
    println!("{text}");
    Ok(())
}
