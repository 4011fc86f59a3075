//! The arguments of the other commands.

use super::OnFullArg;
use std::path::PathBuf;

/// `leontief simulate` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct SimulateArgs {
    /// The config JSON (see `leontief simulate --help`).
    pub config: PathBuf,
    /// Override the config's scheduler: first-fit, best-fit, slots, drfh, hdrfh, hdrf-first-fit, hdrf-naive-first-fit, yarn-fair, kai, volcano-proportion, kueue.
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

/// `leontief plot` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct PlotArgs {
    /// Result files: `simulate` JSON, or a `sweep` CSV for --kind tradeoff.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// What to draw.
    #[arg(long, value_enum)]
    pub kind: Kind,
    /// Output file, .svg or .png.
    #[arg(long, short)]
    pub output: PathBuf,
    /// Title (default: from the inputs).
    #[arg(long)]
    pub title: Option<String>,
}

/// Plot kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Utilisation per resource over time.
    Utilisation,
    /// Global dominant share per user over time.
    Shares,
    /// CDF of job completion times.
    JctCdf,
    /// Task completion ratio per user: run against run, or dedicated
    /// against shared.
    Completion,
    /// Percent fairness and efficiency against the swept parameter.
    Tradeoff,
    /// Efficiency against fairness, one point set per capacity.
    Contours,
}

/// `repro fds-prop2` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct Prop2Args {
    /// Numbers of users (comma-separated).
    #[arg(long, default_value = "100,1000,10000,100000")]
    pub n: String,
    /// Numbers of resources (comma-separated).
    #[arg(long, default_value = "2,3,5")]
    pub m: String,
    /// nu: requirements are U[0, nu C].
    #[arg(long, default_value_t = 1.0)]
    pub nu: f64,
    /// Samples per (n, m).
    #[arg(long, default_value_t = 20)]
    pub samples: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `repro fds-contours` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ContoursArgs {
    /// The instance (default: the Sec. V example of 002).
    #[arg(long, default_value = "datasets/paper-examples/joewong-sec5-drf.json")]
    pub instance: std::path::PathBuf,
    /// fds or gfj.
    #[arg(long, default_value = "fds")]
    pub family: String,
    /// The resource whose capacity expands (a name).
    #[arg(long, default_value = "mem")]
    pub resource: String,
    /// Its capacities, comma-separated (default: 4 GB to 25 GB with 6 sqrt 3
    /// and 11.25, the no-tradeoff points of Prop. 7 for FDS and GFJ).
    #[arg(long, default_value = "4,6,8,10.392304845413264,11.25,15,20,25")]
    pub capacities: String,
    /// beta values: evenly spaced over (-5, 5), ends excluded.
    #[arg(long, default_value_t = 40)]
    pub betas: usize,
    /// lambda values per beta, evenly spaced over the figure's range
    /// ((0.01, 1.91) for beta < 0; (0.005, 0.955) x (1/beta - 2) for beta > 0).
    #[arg(long, default_value_t = 12)]
    pub lambdas: usize,
    /// The CSV to write (capacity, beta, lambda, status, percent fairness,
    /// percent efficiency); plot it with `leontief plot CSV --kind contours`.
    #[arg(long)]
    pub csv: std::path::PathBuf,
}

/// `enumerate-bbf` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct EnumerateArgs {
    /// Instance JSON.
    pub instance: PathBuf,
    /// Run the I-th of N disjoint slices of the subsets (0 <= I < N), e.g.
    /// `--shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT` with a 0-based
    /// array; merge the outputs with `leontief merge-bbf`.
    #[arg(long)]
    pub shard: Option<String>,
    /// Skip the polytope dimensions (saves a few LPs per solution).
    #[arg(long)]
    pub no_dimension: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Pretty-print the JSON.
    #[arg(long)]
    pub pretty: bool,
}

/// `repro bbf-table1` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct Table1Args {
    /// Samples per m.
    #[arg(long, default_value_t = 100)]
    pub samples: usize,
    /// Range of m, `a..b` inclusive.
    #[arg(long, default_value = "4..9")]
    pub m: String,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// What `sweep` takes besides the instance.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepArgs {
    /// Mechanism name.
    #[arg(long)]
    pub mechanism: String,
    /// beta values (fds, gfj, pnorm).
    #[arg(long)]
    pub beta: Option<String>,
    /// alpha values (fds, gfj, pnorm: the alpha-fair line).
    #[arg(long)]
    pub alpha: Option<String>,
    /// k values (kdf, kdf-online).
    #[arg(long)]
    pub k: Option<String>,
    /// slots values (slots).
    #[arg(long)]
    pub slots: Option<String>,
    /// A queue's weight (hdrf, hdrfh, hdrf-naive): NAME=VALUES.
    #[arg(long)]
    pub queue_weight: Option<String>,
    /// With --beta: lambda = (1-beta)/beta (`alpha-fair`, default) or a
    /// fixed value (`fixed:L`).
    #[arg(long)]
    pub lambda_rule: Option<String>,
    /// pnorm: p.
    #[arg(long)]
    pub p: Option<String>,
    /// kdf-online: stop or skip.
    #[arg(long, value_enum)]
    pub on_full: Option<OnFullArg>,
    /// best-fit: the normalising resource.
    #[arg(long)]
    pub normaliser: Option<String>,
    /// Output CSV.
    #[arg(long)]
    pub csv: std::path::PathBuf,
}
