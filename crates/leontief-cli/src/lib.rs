//! The `leontief` command line: exact multi-resource fair allocations from the command line.
//!
//! Exit codes: 0 when the command ran (whatever the solver status: the
//! status is in the JSON), 2 for bad input (invalid instance, unknown
//! mechanism, bad parameter; nothing is solved), 1 when a solve could not
//! run (backend failure).

pub mod bbf;
pub mod cases;
mod conic;
mod demo;
pub mod plot;
pub mod repro;
mod server_based;
pub mod simulate;
pub mod sweep;
pub mod verify;

use anyhow::Context;
use clap::{Parser, Subcommand};
use leontief_core::{Instance, InstanceError};
use leontief_drfh::{maxmin::MaxMinSettings, DrfhError, Mechanism};
use leontief_highs::{Highs, HighsSettings};
use std::path::PathBuf;
use std::process::ExitCode;
use verify::VerifyMode;

const MECHANISMS: &str = "\
Mechanisms (--mechanism):
  drf        DRF on the pooled servers, closed-form progressive filling (Ghodsi et al.; all-in-one model of 000)
  drfh       DRFH: max-min of global dominant shares over heterogeneous servers, weights, caps, placement (000, LP (7), Sec. V-A)
  kdf        k-DF with --k K: max-min of k-dominant weighted shares, one pool or servers (001, Sec. IV-C/E)
  naive-drf  per-server DRF, the naive baseline (000, Sec. III-D)
  nfc        no fairness constraints: maximum total tasks (001, Sec. V; efficiency reference)
  psdsf      PS-DSF: per-server dominant share fairness by water-filling best responses ended by an exact forest solve, Definition-4 certificate; --select sweeps: the best responses alone; --select max-tasks: the member with most tasks, exact MILP on HiGHS (004)
  vds        alphaPF-VDS, --alpha A >= 1: alpha = 1 one exponential-cone program; gamma separable one power-cone program; otherwise Gauss-Seidel best responses among servers (--jacobi [THETA] for the damped distributed form), certified by the Nikaido-Isoda gap (004)
  tsf        task share fairness: max-min of x_n / y_n, y_n the tasks a user could run on all servers, with placement (Wang et al., SC'16; 004)
  first-fit  First-Fit DRFH on whole tasks: lowest global dominant share first, first server that fits (000, Sec. V-B)
  best-fit   Best-Fit DRFH on whole tasks: server with least H(i,l) of eq. (9), --normaliser RESOURCE (000, Sec. V-B)
  slots      Slots scheduler: --slots S per maximum server, fair share of slots (000, Sec. VI, Table II)
  kdf-online online k-DF, Algorithm 1 on whole tasks, --k K --on-full stop|skip (001, Sec. IV-D)
  (heuristics also print `gap`: their distance to exact DRFH, or to exact k-DF for kdf-online)
  fds        FDS f_{beta,lambda} on dominant shares: --beta B [--lambda L] or --alpha A (002; cone programs on Clarabel)
  gfj        GFJ f_{beta,lambda} on task counts: same parameters (002)
  pnorm      the p-norm family (19): --p P and the same parameters (002)
  (fds/gfj/pnorm solve the whole (beta, lambda) plane: the alpha-fair line and regions A, B as cone programs, region N by a certified global search over S)
  bbf-eg     bottleneck-based fairness: the Eisenberg-Gale allocation with its prices, --method auto|conic|dual (exponential cones on Clarabel, or projected Newton on the prices), Newton-polished (003 Sec. 5)
  bbf-ode    the same limit along the paper's ODE trajectory (003 Sec. 5.3, corrected), --by t|log-c, --trajectory out.csv
  (all BBF allocations: `leontief enumerate-bbf INSTANCE`, 003 Sec. 6)";

const SIMULATE_HELP: &str = "\
Config (JSON; paths relative to its folder):
  cluster    {\"google\": {\"servers\": K, \"seed\": S}}  K servers drawn from Table I of 000
             {\"instance\": \"file.json\"}                the instance's servers
  workload   {\"trace\": \"task_events.csv\"}            Google cluster-data 2011 task_events schema
             {\"synthetic\": {\"users\", \"jobs\", \"arrival_window\", \"horizon\", \"max_tasks\",
                            \"duration\": [lo, hi], \"demand\": [lo, hi], \"seed\"}}
             {\"users\": [{\"name\", \"demand\", \"weight\", \"jobs\": [{\"submit\", \"tasks\", \"duration\"}]}]}
  scheduler  first-fit | best-fit (\"normaliser\": resource) | slots (\"slots\": S) | drfh
  horizon, sample_interval (seconds), dedicated (true: Fig. 8 dedicated clouds), dedicated_seed,
  weights ({\"user name\": w}, default 1)
Example: datasets/simulations/fig4.json; plot with `leontief plot RESULT --kind utilisation`.";

#[derive(Parser)]
#[command(name = "leontief", version, about = "Exact multi-resource fair allocations (DRF, DRFH, k-DF, ...)", after_help = MECHANISMS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Solve an instance with a mechanism and print the allocation JSON.
    #[command(after_help = MECHANISMS, allow_negative_numbers = true)]
    Solve {
        /// Instance JSON (shared/spec/instance-format.md).
        instance: PathBuf,
        /// Mechanism name (see below).
        #[arg(long)]
        mechanism: String,
        #[command(flatten)]
        params: MechParams,
        /// When to run the LP-based check of the mechanism's defining property.
        #[arg(long, value_enum, default_value = "auto")]
        verify: VerifyMode,
        /// Time limit, seconds: per LP (HiGHS) and per cone program
        /// (Clarabel), and for the whole best-response run of psdsf and vds;
        /// a run that hits it ends with status time_limit.
        #[arg(long)]
        time_limit: Option<f64>,
        /// HiGHS algorithm: auto (interior point from 10,000 columns,
        /// else HiGHS decides), choose (HiGHS decides), simplex, or ipm
        /// (interior point with crossover).
        #[arg(long, value_enum, default_value = "auto")]
        algorithm: AlgorithmArg,
        /// Pretty-print the JSON.
        #[arg(long)]
        pretty: bool,
        /// How `tasks` is printed: dense (`tasks[n][i]`), sparse
        /// (`tasks_sparse`: the nonzero entries, with `"layout": "sparse"`),
        /// or auto (sparse from 1,000,000 user-server pairs).
        #[arg(long, value_enum, default_value = "auto")]
        layout: Layout,
    },
    /// Solve one mechanism over a range of one parameter and write a CSV
    /// (user tasks, percent fairness vs DRFH, percent efficiency vs NFC,
    /// leftover capacity and utilisation per resource).
    #[command(allow_negative_numbers = true)]
    Sweep {
        /// Instance JSON.
        instance: PathBuf,
        #[command(flatten)]
        args: sweep::SweepArgs,
    },
    /// Every bottleneck set of a BBF allocation (003 Sec. 6): one LP per
    /// subset of resources, in parallel; prints JSON with a witness
    /// allocation and the polytope dimension of each.
    EnumerateBbf {
        #[command(flatten)]
        args: bbf::EnumerateArgs,
    },
    /// Merge `enumerate-bbf --shard I/N` outputs into one.
    MergeBbf {
        /// The shard outputs.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The instance the shards were computed from: every witness is
        /// then re-checked by the independent BBF test (without it only
        /// the shards' structure is checked).
        #[arg(long)]
        instance: Option<PathBuf>,
        /// Pretty-print the JSON.
        #[arg(long)]
        pretty: bool,
    },
    /// Discrete-event simulation of jobs arriving on a cluster (000 Sec.
    /// VI): First-Fit / Best-Fit DRFH, Slots, or exact DRFH at every event;
    /// a Google task_events trace, a synthetic workload or explicit jobs.
    /// Writes utilisation and share time series, job completion times,
    /// completion ratios per user (and on dedicated clouds) as JSON, and
    /// CSVs with --csv-dir.
    #[command(long_about = None, after_help = SIMULATE_HELP)]
    Simulate {
        #[command(flatten)]
        args: simulate::SimulateArgs,
    },
    /// Draw a figure from leontief's output (SVG or PNG): utilisation,
    /// shares, jct-cdf, completion (simulate JSON) or tradeoff (sweep CSV).
    Plot {
        #[command(flatten)]
        args: plot::PlotArgs,
    },
    /// Regenerate a paper's table.
    Repro {
        #[command(subcommand)]
        what: Repro,
    },
    /// Validate an instance and print what it holds, or every error.
    Validate {
        /// Instance JSON.
        instance: PathBuf,
    },
    /// Solve the bundled paper examples and the Google cell with every
    /// mechanism and print comparison tables.
    Demo {
        /// The datasets folder.
        #[arg(long, default_value = "datasets")]
        datasets: PathBuf,
        /// Users in the Google-cell comparison.
        #[arg(long, default_value_t = 100)]
        users: usize,
    },
    /// Write a generated instance (seeded) as JSON.
    Generate {
        /// `google-cell` (Table I of 000), `heterogeneous`, or `placement`
        /// (heterogeneous with weights in [1, 4] and --eligible random
        /// servers per user: the server-based mechanisms of 004).
        kind: String,
        /// Users.
        #[arg(long, default_value_t = 100)]
        users: usize,
        /// Servers (heterogeneous and placement; default 100).
        #[arg(long)]
        servers: Option<usize>,
        /// Resources (heterogeneous and placement; default 2).
        #[arg(long)]
        resources: Option<usize>,
        /// Seed.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// placement: servers each user may use (default 10, at most
        /// --servers).
        #[arg(long)]
        eligible: Option<usize>,
    },
}

/// `leontief repro` targets.
#[derive(Subcommand)]
enum Repro {
    /// Table 1 of 003: mean number of BBF solutions for random requests.
    #[command(name = "bbf-table1")]
    BbfTable1(bbf::Table1Args),
    /// Prop. 2 of 002 by Monte Carlo: the optimal FDS and GFJ values at
    /// beta = inf, lambda = -1 against their asymptotic forms.
    #[command(name = "fds-prop2")]
    FdsProp2(repro::Prop2Args),
    /// Fig. 4 of 000: global dominant shares of three users joining a
    /// 100-server cluster, whole-task Best-Fit against exact DRFH, over
    /// random server draws.
    #[command(name = "sim-fig4")]
    SimFig4(simulate::Fig4Args),
    /// Figs. 15-16 of 002: FDS or GFJ fairness-efficiency points over a
    /// (beta, lambda) grid, one contour per capacity of a resource (CSV).
    #[command(name = "fds-contours")]
    FdsContours(repro::ContoursArgs),
}

/// `--algorithm` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AlgorithmArg {
    /// Interior point from 10,000 columns, else HiGHS decides.
    Auto,
    /// HiGHS decides (dual simplex for most LPs).
    Choose,
    /// Simplex.
    Simplex,
    /// Interior point with crossover.
    Ipm,
}

impl From<AlgorithmArg> for leontief_highs::Algorithm {
    fn from(a: AlgorithmArg) -> Self {
        match a {
            AlgorithmArg::Auto => leontief_highs::Algorithm::Auto,
            AlgorithmArg::Choose => leontief_highs::Algorithm::Choose,
            AlgorithmArg::Simplex => leontief_highs::Algorithm::Simplex,
            AlgorithmArg::Ipm => leontief_highs::Algorithm::InteriorPoint,
        }
    }
}

/// A failure with its exit code.
#[derive(Debug)]
pub struct Failure {
    /// Exit code: 2 bad input, 1 could not run.
    pub code: u8,
    /// What to print.
    pub message: String,
}

fn bad_input(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure {
            code: 1,
            message: format!("{e:#}"),
        }
    }
}

pub(crate) fn load(path: &PathBuf) -> Result<Instance, Failure> {
    Instance::from_path(path).map_err(|e| match e {
        InstanceError::Io { .. } => bad_input(e.to_string()),
        _ => bad_input(format!("{}: {e}", path.display())),
    })
}

/// Mechanism parameters on the command line (each applies to some
/// mechanisms only; a parameter given to a mechanism that ignores it is an
/// error, not silently dropped).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MechParams {
    /// k for kdf and kdf-online (k >= 1; k = 1 is DRF).
    #[arg(long)]
    pub k: Option<usize>,
    /// kdf-online: what happens when a task does not fit: stop (Algorithm 1
    /// as printed) or skip (retire that user and go on).
    #[arg(long, value_enum)]
    pub on_full: Option<OnFullArg>,
    /// slots: slots per maximum server (S >= 1).
    #[arg(long)]
    pub slots: Option<u32>,
    /// best-fit: the normalising resource of H(i, l) (a resource name;
    /// default the first resource).
    #[arg(long)]
    pub normaliser: Option<String>,
    /// fds, gfj, pnorm: beta of f_{beta,lambda}.
    #[arg(long)]
    pub beta: Option<f64>,
    /// fds, gfj, pnorm: lambda (default (1-beta)/beta, the alpha-fair line).
    #[arg(long)]
    pub lambda: Option<f64>,
    /// fds, gfj, pnorm: the alpha-fair member, beta = alpha and
    /// lambda = (1-alpha)/alpha; alpha = 1 is proportional fairness.
    #[arg(long)]
    pub alpha: Option<f64>,
    /// pnorm: p >= 1, or inf (p = inf is FDS).
    #[arg(long)]
    pub p: Option<String>,
    /// bbf-ode: the independent variable, t (the paper's, df/dt = 1) or
    /// log-c (default; far less stiff).
    #[arg(long, value_enum)]
    pub by: Option<ByArg>,
    /// bbf-ode: write every accepted step (parameter, c, x, slacks) as CSV.
    #[arg(long)]
    pub trajectory: Option<PathBuf>,
    /// bbf-eg: conic (Clarabel), dual (projected Newton on the prices), or
    /// auto (conic up to 50,000 nonzero requests).
    #[arg(long, value_enum)]
    pub method: Option<bbf::EgMethod>,
    /// psdsf: which PS-DSF allocation (PS-DSF is not unique):
    /// best-response (default: Gauss-Seidel best responses from zero, ended
    /// by the exact forest finish on their structure), sweeps (the
    /// best responses alone to their limit; slow at scale) or max-tasks
    /// (exact MILP, small instances).
    #[arg(long)]
    pub select: Option<String>,
    /// vds: damped Jacobi best responses (all servers at once, the
    /// distributed form) with damping THETA in (0, 1] (default 0.5),
    /// instead of Gauss-Seidel.
    #[arg(long, num_args = 0..=1, default_missing_value = "0.5")]
    pub jacobi: Option<f64>,
}

/// `--by` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ByArg {
    /// The paper's t.
    T,
    /// log c.
    LogC,
}

/// `--on-full` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnFullArg {
    /// End the allocation at the first task that does not fit.
    Stop,
    /// Retire the user whose task does not fit and go on.
    Skip,
}

/// A mechanism of any family.
#[derive(Debug, Clone, PartialEq)]
pub enum Mech {
    /// An exact mechanism of the max-min family.
    Exact(Mechanism),
    /// A whole-task heuristic.
    Heuristic(leontief_sim::Heuristic),
    /// A fairness-efficiency family member on the conic layer.
    Conic {
        /// FDS, GFJ or p-norm.
        family: leontief_fds::Family,
        /// beta (= alpha on the line).
        beta: f64,
        /// lambda.
        lambda: f64,
        /// Given as --alpha (the alpha-fair form, which includes alpha = 1).
        alpha_form: bool,
    },
    /// Bottleneck-based fairness.
    Bbf(bbf::BbfKind),
    /// PS-DSF (004) by best responses, with the Definition-4 certificate;
    /// `max_tasks`: the member with most tasks (MILP).
    Psdsf {
        /// --select max-tasks.
        max_tasks: bool,
        /// False with --select sweeps (no exact finish).
        exact_finish: bool,
    },
    /// alphaPF-VDS (004) for alpha > 1 (alpha = 1 is `Conic`).
    Vds {
        /// alpha > 1.
        alpha: f64,
        /// Damped Jacobi instead of Gauss-Seidel.
        jacobi: Option<f64>,
    },
}

impl Mech {
    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            Mech::Exact(m) => m.name(),
            Mech::Heuristic(h) => h.name(),
            Mech::Conic { family, .. } => family.name(),
            Mech::Bbf(bbf::BbfKind::Eg { .. }) => "bbf-eg",
            Mech::Bbf(bbf::BbfKind::Ode { .. }) => "bbf-ode",
            Mech::Psdsf { .. } => "psdsf",
            Mech::Vds { .. } => "vds",
        }
    }
}

/// Parse `--mechanism` and its parameters; unknown names and bad
/// parameters are bad input. The Best-Fit normaliser is resolved against
/// the instance by [`resolve_normaliser`].
pub(crate) fn parse_mechanism(name: &str, p: &MechParams) -> Result<Mech, Failure> {
    use leontief_sim::{Heuristic, OnFull};
    let need_k = |what: &str| -> Result<usize, Failure> {
        match p.k {
            None => Err(bad_input(format!(
                "--mechanism {what} needs --k K (K >= 1; K = 1 is DRF)"
            ))),
            Some(0) => Err(bad_input("--k must be >= 1 (got 0; k = 1 is DRF)")),
            Some(k) => Ok(k),
        }
    };
    let m = match name {
        "drf" => Mech::Exact(Mechanism::Drf),
        "drfh" => Mech::Exact(Mechanism::Drfh),
        "kdf" => Mech::Exact(Mechanism::Kdf { k: need_k("kdf")? }),
        "naive-drf" => Mech::Exact(Mechanism::NaiveDrf),
        "nfc" => Mech::Exact(Mechanism::Nfc),
        "tsf" => Mech::Exact(Mechanism::Tsf),
        "first-fit" => Mech::Heuristic(Heuristic::FirstFit),
        "best-fit" => Mech::Heuristic(Heuristic::BestFit { normaliser: 0 }),
        "slots" => match p.slots {
            None => {
                return Err(bad_input(
                    "--mechanism slots needs --slots S (slots per maximum server, S >= 1)",
                ))
            }
            Some(0) => return Err(bad_input("--slots must be >= 1 (got 0)")),
            Some(slots) => Mech::Heuristic(Heuristic::Slots { slots }),
        },
        "kdf-online" => Mech::Heuristic(Heuristic::KdfOnline {
            k: need_k("kdf-online")?,
            on_full: match p.on_full {
                Some(OnFullArg::Stop) | None => OnFull::Stop,
                Some(OnFullArg::Skip) => OnFull::Skip,
            },
        }),
        "fds" | "gfj" | "pnorm" => {
            let family = match name {
                "fds" => leontief_fds::Family::Fds,
                "gfj" => leontief_fds::Family::Gfj,
                _ => match p.p.as_deref() {
                    None => {
                        return Err(bad_input("--mechanism pnorm needs --p P (P >= 1, or inf)"))
                    }
                    Some("inf") => leontief_fds::Family::PNorm(f64::INFINITY),
                    Some(v) => match v.parse::<f64>() {
                        Ok(x) if x >= 1.0 && x.is_finite() => leontief_fds::Family::PNorm(x),
                        _ => {
                            return Err(bad_input(format!(
                                "--p {v}: must be a number >= 1, or inf"
                            )))
                        }
                    },
                },
            };
            match (p.alpha, p.beta) {
                (Some(_), Some(_)) => {
                    return Err(bad_input("give --alpha or --beta [--lambda], not both"))
                }
                (Some(a), None) => {
                    if p.lambda.is_some() {
                        return Err(bad_input("--lambda does not apply with --alpha (the line fixes lambda = (1-alpha)/alpha)"));
                    }
                    if !(a.is_finite() && a > 0.0) {
                        return Err(bad_input(format!("--alpha {a}: must be finite and > 0")));
                    }
                    Mech::Conic {
                        family,
                        beta: a,
                        lambda: (1.0 - a) / a,
                        alpha_form: true,
                    }
                }
                (None, Some(b)) => {
                    let lambda = p.lambda.unwrap_or((1.0 - b) / b);
                    leontief_fds::classify(b, lambda).map_err(|e| bad_input(e.to_string()))?;
                    Mech::Conic {
                        family,
                        beta: b,
                        lambda,
                        alpha_form: false,
                    }
                }
                (None, None) => {
                    return Err(bad_input(format!(
                        "--mechanism {name} needs --beta B [--lambda L] or --alpha A"
                    )))
                }
            }
        }
        "bbf-eg" => Mech::Bbf(bbf::BbfKind::Eg {
            method: p.method.unwrap_or(bbf::EgMethod::Auto),
        }),
        "bbf-ode" => Mech::Bbf(bbf::BbfKind::Ode {
            by_t: p.by == Some(ByArg::T),
            trajectory: p.trajectory.clone(),
        }),
        "psdsf" => {
            let (max_tasks, exact_finish) = match p.select.as_deref() {
                None | Some("best-response") => (false, true),
                Some("sweeps") => (false, false),
                Some("max-tasks") => (true, true),
                Some(other) => {
                    return Err(bad_input(format!(
                        "--select {other}: use best-response (the Gauss-Seidel point from zero, ended by the exact finish), sweeps (the best responses alone, to their limit) or max-tasks (the member with most tasks, an exact MILP)"
                    )))
                }
            };
            Mech::Psdsf {
                max_tasks,
                exact_finish,
            }
        }
        "vds" => match p.alpha {
            None => return Err(bad_input("--mechanism vds needs --alpha A (A >= 1)")),
            Some(1.0) if p.jacobi.is_some() => {
                return Err(bad_input(
                    "--jacobi does not apply to vds at --alpha 1: it is one exponential-cone program (the equilibrium is the joint optimum), with no best responses to damp",
                ))
            }
            Some(1.0) => Mech::Conic {
                family: leontief_fds::Family::Gfj,
                beta: 1.0,
                lambda: 0.0,
                alpha_form: true,
            },
            Some(a) if a.is_finite() && a > 1.0 => {
                if let Some(t) = p.jacobi {
                    if !(t > 0.0 && t <= 1.0) {
                        return Err(bad_input(format!(
                            "--jacobi {t}: the damping must be in (0, 1]"
                        )));
                    }
                }
                Mech::Vds {
                    alpha: a,
                    jacobi: p.jacobi,
                }
            }
            Some(a) => {
                return Err(bad_input(format!(
                    "--alpha {a}: alphaPF-VDS needs a finite alpha >= 1"
                )))
            }
        },
        _ => return Err(bad_input(format!("unknown mechanism {name}\n{MECHANISMS}"))),
    };
    let uses = |flag: &str| match flag {
        "--k" => matches!(name, "kdf" | "kdf-online"),
        "--on-full" => name == "kdf-online",
        "--slots" => name == "slots",
        "--beta" | "--lambda" => matches!(name, "fds" | "gfj" | "pnorm"),
        "--alpha" => matches!(name, "fds" | "gfj" | "pnorm" | "vds"),
        "--select" => name == "psdsf",
        "--jacobi" => name == "vds",
        "--p" => name == "pnorm",
        "--by" | "--trajectory" => name == "bbf-ode",
        "--method" => name == "bbf-eg",
        _ => name == "best-fit",
    };
    for (flag, given) in [
        ("--k", p.k.is_some()),
        ("--on-full", p.on_full.is_some()),
        ("--slots", p.slots.is_some()),
        ("--normaliser", p.normaliser.is_some()),
        ("--beta", p.beta.is_some()),
        ("--lambda", p.lambda.is_some()),
        ("--alpha", p.alpha.is_some()),
        ("--p", p.p.is_some()),
        ("--by", p.by.is_some()),
        ("--trajectory", p.trajectory.is_some()),
        ("--method", p.method.is_some()),
        ("--select", p.select.is_some()),
        ("--jacobi", p.jacobi.is_some()),
    ] {
        if given && !uses(flag) {
            return Err(bad_input(format!("{flag} does not apply to {name}")));
        }
    }
    Ok(m)
}

/// Resolve `--normaliser NAME` against the instance's resources.
pub(crate) fn resolve_normaliser(
    m: Mech,
    p: &MechParams,
    instance: &Instance,
) -> Result<Mech, Failure> {
    match (m, &p.normaliser) {
        (Mech::Heuristic(leontief_sim::Heuristic::BestFit { .. }), Some(name)) => {
            let r = instance
                .resources()
                .iter()
                .position(|x| x == name)
                .ok_or_else(|| {
                    bad_input(format!(
                        "--normaliser {name} is not a resource of the instance ({})",
                        instance.resources().join(", ")
                    ))
                })?;
            Ok(Mech::Heuristic(leontief_sim::Heuristic::BestFit {
                normaliser: r,
            }))
        }
        (m, _) => Ok(m),
    }
}

pub(crate) fn backend(time_limit: Option<f64>, algorithm: AlgorithmArg) -> Result<Highs, Failure> {
    let mut s = HighsSettings {
        algorithm: algorithm.into(),
        ..HighsSettings::default()
    };
    if let Some(t) = time_limit {
        s = s
            .with_time_limit(t)
            .map_err(|e| bad_input(format!("--time-limit: {e}")))?;
    }
    Highs::new(s).map_err(|e| bad_input(e.to_string()))
}

/// Solve and verify `mechanism` on `instance`, in the solver's units
/// ([`Instance::normalised`]: each resource scaled by a power of two so
/// that its largest capacity lies in (0.5, 1]), the output in the user's.
/// When iterative methods (best-response sweeps) must stop: `--time-limit`
/// seconds after `start`, or never.
pub(crate) fn deadline(highs: &Highs, start: std::time::Instant) -> Option<std::time::Instant> {
    highs
        .settings()
        .time_limit
        .and_then(|t| start.checked_add(std::time::Duration::try_from_secs_f64(t).ok()?))
}

/// Clarabel with the run's `--time-limit` (per cone program, as for LPs).
pub(crate) fn clarabel(highs: &Highs) -> leontief_clarabel::Clarabel {
    leontief_clarabel::Clarabel::new(leontief_clarabel::ClarabelSettings {
        time_limit: highs.settings().time_limit,
        ..leontief_clarabel::ClarabelSettings::default()
    })
    .unwrap_or_default()
}

pub(crate) fn solve_one(
    highs: &Highs,
    instance: &Instance,
    mechanism: &Mech,
    verify_mode: VerifyMode,
) -> Result<leontief_core::Allocation, Failure> {
    let (scaled, scaling) = instance.normalised();
    let a = solve_unchecked(highs, &scaled, mechanism)?;
    let mut a = finish(highs, &scaled, mechanism, a, verify_mode)?;
    restore_units(instance, &scaling, &mut a);
    Ok(a)
}

/// An allocation computed on `instance.normalised()` in the units of
/// `instance`: task counts are the same numbers on both (the factors are
/// powers of two), metrics are recomputed on the original, and every price
/// per unit of a resource (the server prices of vds) is mapped back
/// exactly.
pub(crate) fn restore_units(
    original: &Instance,
    scaling: &leontief_core::Scaling,
    a: &mut leontief_core::Allocation,
) {
    a.metrics = leontief_core::Metrics::compute(original, &a.tasks);
    if let Some(serde_json::Value::Object(gap)) = a.gap.as_mut() {
        if gap.contains_key("leftover_capacity") {
            gap.insert(
                "leftover_capacity".into(),
                serde_json::json!(a.metrics.unused_capacity),
            );
        }
        if let Some(serde_json::Value::Array(servers)) = gap.get_mut("server_prices") {
            for row in servers.iter_mut() {
                if let serde_json::Value::Array(row) = row {
                    for (r, p) in row.iter_mut().enumerate() {
                        if let Some(v) = p.as_f64() {
                            *p = serde_json::json!(scaling.price_to_original(r, v));
                        }
                    }
                }
            }
        }
    }
    if let Some(c) = a.certificate.as_mut() {
        for round in &mut c.rounds {
            for row in &mut round.prices {
                for (r, p) in row.iter_mut().enumerate() {
                    *p = scaling.price_to_original(r, *p);
                }
            }
        }
    }
    // BBF prices are per unit of capacity fraction: the same in any units.
}

/// The references of Sec. V of 002 and the verification, for an
/// allocation however it was computed (the sweep's warm-started line).
pub(crate) fn finish(
    highs: &Highs,
    instance: &Instance,
    mechanism: &Mech,
    mut a: leontief_core::Allocation,
    verify_mode: VerifyMode,
) -> Result<leontief_core::Allocation, Failure> {
    add_references(highs, instance, &mut a, verify_mode)?;
    a.verification = Some(verify::verify(highs, instance, mechanism, &a, verify_mode)?);
    Ok(a)
}

fn solve_unchecked(
    highs: &Highs,
    instance: &Instance,
    mechanism: &Mech,
) -> Result<leontief_core::Allocation, Failure> {
    let exact = |m: &Mechanism| {
        leontief_drfh::solve(highs, instance, m, &MaxMinSettings::default()).map_err(|e| match e {
            DrfhError::InvalidParameter { .. } => bad_input(e.to_string()),
            DrfhError::Backend(b) => Failure {
                code: 1,
                message: format!("the solver could not run: {b}"),
            },
        })
    };
    let a = match mechanism {
        Mech::Exact(m) => exact(m)?,
        Mech::Bbf(kind) => bbf::solve(highs, instance, kind)?,
        Mech::Psdsf {
            max_tasks,
            exact_finish,
        } => server_based::psdsf(highs, instance, *max_tasks, *exact_finish)?,
        Mech::Vds { alpha, jacobi } => {
            // Solved with the weights scaled (see `weights_normalised`);
            // the printed price scales are for the weights as given:
            // e^ell scales with w^alpha.
            let (reweighted, f) = instance.weights_normalised();
            let mut a = server_based::vds(highs, &reweighted, *alpha, *jacobi)?;
            a.metrics = leontief_core::Metrics::compute(instance, &a.tasks);
            if let Some(serde_json::Value::Array(ell)) = a
                .gap
                .as_mut()
                .and_then(|g| g.get_mut("server_log_price_scale"))
            {
                for e in ell.iter_mut() {
                    if let Some(v) = e.as_f64() {
                        *e = serde_json::json!(v - alpha * f.ln());
                    }
                }
            }
            a
        }
        Mech::Conic {
            family,
            beta,
            lambda,
            alpha_form,
        } => conic::solve(highs, instance, *family, *beta, *lambda, *alpha_form)?,
        Mech::Heuristic(h) => {
            let mut a = leontief_sim::run(instance, h).map_err(|e| bad_input(e.to_string()))?;
            // Always the distance to the matching exact mechanism.
            let reference = match h {
                leontief_sim::Heuristic::KdfOnline { k, .. } => Mechanism::Kdf { k: *k },
                _ => Mechanism::Drfh,
            };
            let e = exact(&reference)?;
            a.gap = Some(serde_json::to_value(leontief_sim::gap(instance, &a, &e)).context("gap")?);
            a
        }
    };
    Ok(a)
}

/// Where an allocation sits between fairness and efficiency (Sec. V of
/// 002), for every mechanism: percent fairness (its smallest normalised
/// dominant share against exact DRFH's), percent efficiency (its total
/// tasks against NFC's) and leftover capacity, merged into `gap`. Two
/// reference solves (a DRFH max-min and an NFC LP), so only when the
/// verification runs (not `--verify never`) and the instance has at most
/// 20,000 user-server pairs (`--verify always`: at any size). Above that
/// the NFC reference alone, a flat LP, cost several times the certified
/// max-min answer (measured: 2.2 s of 3.1 s at 100 x 1,000).
fn add_references(
    highs: &Highs,
    instance: &Instance,
    a: &mut leontief_core::Allocation,
    verify_mode: VerifyMode,
) -> Result<(), Failure> {
    let size = instance.num_users() * instance.num_entries();
    if !a.status.has_solution()
        || verify_mode == VerifyMode::Never
        || (verify_mode == VerifyMode::Auto && size > 20_000)
    {
        return Ok(());
    }
    // A pooled allocation (drf, BBF) is measured against the pooled
    // references: on the real servers it need not be placeable.
    let pooled;
    let reference_instance = if a.pooled {
        pooled = instance.pooled();
        &pooled
    } else {
        instance
    };
    let refs = sweep::References::compute(highs, reference_instance)?;
    let min = a.metrics.min_normalised_share();
    let mut block = serde_json::json!({
        "percent_fairness": refs.percent_fairness(min),
        "percent_efficiency": refs.percent_efficiency(a.metrics.total_tasks),
        "leftover_capacity": a.metrics.unused_capacity,
        "fairness_reference": "exact DRFH (DRF on one server): smallest normalised dominant share",
        "efficiency_reference": "NFC: maximum total tasks",
        "references_on": if a.pooled { "the pooled servers (the allocation is pooled)" } else { "the servers as given" },
    });
    // Keep what the mechanism put there (heuristics' distance to the exact
    // mechanism, the region-N search).
    if let (Some(serde_json::Value::Object(old)), serde_json::Value::Object(new)) =
        (a.gap.take(), &mut block)
    {
        new.extend(old);
    }
    a.gap = Some(block);
    Ok(())
}

/// `leontief solve` as a library call: the mechanism named as on the
/// command line with its parameters, solved and verified, in the
/// instance's units. `Err` with code 2 for a bad mechanism or parameter,
/// 1 when a solver could not run.
pub fn solve(
    instance: &Instance,
    mechanism: &str,
    params: &MechParams,
    verify_mode: VerifyMode,
) -> Result<leontief_core::Allocation, Failure> {
    let mech = parse_mechanism(mechanism, params)?;
    let highs = backend(None, AlgorithmArg::Auto)?;
    let mech = resolve_normaliser(mech, params, instance)?;
    solve_named(&highs, instance, mechanism, &mech, verify_mode)
}

/// `solve_one` under the mechanism's command-line name (vds --alpha 1 runs
/// the proportional-fairness program and says why).
pub(crate) fn solve_named(
    highs: &Highs,
    instance: &Instance,
    name: &str,
    mechanism: &Mech,
    verify_mode: VerifyMode,
) -> Result<leontief_core::Allocation, Failure> {
    let mut a = solve_one(highs, instance, mechanism, verify_mode)?;
    if name == "vds" && matches!(mechanism, Mech::Conic { .. }) {
        a.mechanism = "vds".into();
        a.notes.push("alphaPF-VDS at alpha = 1: gamma drops out of every server's utility, and the Nash equilibrium among servers is the optimum of max sum_n w_n log x_n over all servers jointly (one exponential-cone program, x_n unique); equilibrium and optimum coincide".into());
    }
    Ok(a)
}

/// How `tasks` is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Layout {
    /// Sparse above [`SPARSE_FROM`] user-server pairs, dense below.
    Auto,
    /// `tasks[n][i]`, every entry.
    Dense,
    /// `tasks_sparse`: the nonzero entries only (and `"layout": "sparse"`).
    Sparse,
}

/// User-server pairs from which [`Layout::Auto`] prints the sparse layout
/// (a dense `tasks` of 10^6 entries is about 10 MB of JSON, nearly all
/// zeros at that size: 2,096 nonzeros of 100,000 at 100 x 1,000).
pub const SPARSE_FROM: usize = 1_000_000;

/// The allocation's JSON in the chosen layout.
pub fn allocation_text(
    mut a: leontief_core::Allocation,
    layout: Layout,
    pretty: bool,
) -> Result<String, Failure> {
    let servers = a.metrics.server_utilisation.len();
    let sparse = match layout {
        Layout::Dense => false,
        Layout::Sparse => true,
        Layout::Auto => a.tasks.len() * servers >= SPARSE_FROM,
    };
    let text = if sparse {
        let dense = std::mem::take(&mut a.tasks);
        let coo = leontief_core::SparseTasks::from_dense(&dense, servers);
        drop(dense);
        let mut v = serde_json::to_value(&a).context("serialising the allocation")?;
        if let serde_json::Value::Object(map) = &mut v {
            map.remove("tasks");
            map.insert("layout".into(), serde_json::json!("sparse"));
            map.insert(
                "tasks_sparse".into(),
                serde_json::to_value(&coo).context("serialising the allocation")?,
            );
        }
        if pretty {
            serde_json::to_string_pretty(&v)
        } else {
            serde_json::to_string(&v)
        }
    } else if pretty {
        serde_json::to_string_pretty(&a)
    } else {
        serde_json::to_string(&a)
    };
    Ok(text.context("serialising the allocation")?)
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Solve {
            instance,
            mechanism,
            params,
            verify,
            time_limit,
            algorithm,
            pretty,
            layout,
        } => {
            let mech = parse_mechanism(&mechanism, &params)?;
            let highs = backend(time_limit, algorithm)?;
            let inst = load(&instance)?;
            let mech = resolve_normaliser(mech, &params, &inst)?;
            let a = solve_named(&highs, &inst, &mechanism, &mech, verify)?;
            let text = allocation_text(a, layout, pretty)?;
            println!("{text}");
            Ok(())
        }
        Command::Validate { instance } => {
            let inst = load(&instance)?;
            let summary = serde_json::json!({
                "valid": true,
                "users": inst.num_users(),
                "server_entries": inst.num_entries(),
                "servers": inst.num_physical_servers(),
                "classes": inst.servers().iter().filter(|s| s.count > 1).count(),
                "resources": inst.resources(),
                "total_capacity": inst.total_capacity(),
                "weighted_users": inst.users().iter().filter(|u| u.weight != 1.0).count(),
                "capped_users": inst.users().iter().filter(|u| u.tasks.is_some()).count(),
                "users_with_placement": inst.users().iter().filter(|u| u.servers.is_some()).count(),
                "resources_nobody_demands": inst.resource_ids()
                    .filter(|&r| inst.users().iter().all(|u| u.demand[r.0] == 0.0))
                    .map(|r| inst.resources()[r.0].clone()).collect::<Vec<_>>(),
                "users_who_cannot_run": inst.user_ids()
                    .filter(|&n| !inst.server_ids().any(|i| inst.can_run_on(n, i)))
                    .map(|n| inst.user(n).name.clone()).collect::<Vec<_>>(),
            });
            println!(
                "{}",
                serde_json::to_string_pretty(&summary).context("serialising")?
            );
            Ok(())
        }
        Command::Simulate { args } => simulate::cmd(&args),
        Command::Plot { args } => plot::cmd(&args),
        Command::Demo { datasets, users } => demo::run(&datasets, users),
        Command::EnumerateBbf { args } => bbf::enumerate_cmd(&args),
        Command::MergeBbf {
            files,
            instance,
            pretty,
        } => bbf::merge_cmd(&files, instance.as_ref(), pretty),
        Command::Repro { what } => match what {
            Repro::BbfTable1(args) => bbf::table1(&args),
            Repro::FdsProp2(args) => repro::fds_prop2(&args),
            Repro::SimFig4(args) => simulate::fig4_cmd(&args),
            Repro::FdsContours(args) => repro::fds_contours(&args),
        },
        Command::Sweep { instance, args } => {
            let highs = backend(None, AlgorithmArg::Auto)?;
            let rows = sweep::run(&highs, &instance, &args)?;
            eprintln!("wrote {rows} rows to {}", args.csv.display());
            Ok(())
        }
        Command::Generate {
            kind,
            users,
            servers,
            resources,
            seed,
            eligible,
        } => {
            // A flag the generator does not use is an error, not ignored.
            let given = [
                ("--servers", servers.is_some()),
                ("--resources", resources.is_some()),
                ("--eligible", eligible.is_some()),
            ];
            let uses = |flag: &str| match kind.as_str() {
                "google-cell" => false,
                "heterogeneous" => flag != "--eligible",
                _ => true,
            };
            if let Some((flag, _)) = given.iter().find(|(f, g)| *g && !uses(f)) {
                return Err(bad_input(format!(
                    "{flag} does not apply to generate {kind}"
                )));
            }
            let servers = servers.unwrap_or(100);
            let resources = resources.unwrap_or(2);
            let eligible = eligible.unwrap_or(10);
            let inst = match kind.as_str() {
                "google-cell" => leontief_core::generate::google_cell(users, seed),
                "heterogeneous" => {
                    if servers == 0 || resources == 0 || users == 0 {
                        return Err(bad_input("--users, --servers and --resources must be >= 1"));
                    }
                    leontief_core::generate::heterogeneous(users, servers, resources, seed)
                }
                "placement" => {
                    if servers == 0 || resources == 0 || users == 0 || eligible == 0 {
                        return Err(bad_input(
                            "--users, --servers, --resources and --eligible must be >= 1",
                        ));
                    }
                    if eligible > servers {
                        return Err(bad_input(format!(
                            "--eligible {eligible}: a user cannot be eligible on more than the {servers} servers"
                        )));
                    }
                    leontief_core::generate::placement(users, servers, resources, eligible, seed)
                }
                _ => {
                    return Err(bad_input(format!(
                        "unknown generator {kind} (google-cell, heterogeneous, placement)"
                    )))
                }
            };
            println!(
                "{}",
                serde_json::to_string_pretty(&inst.to_raw()).context("serialising")?
            );
            Ok(())
        }
    }
}

/// Parse the command line, run, and map failures to exit codes.
pub fn main_entry() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
