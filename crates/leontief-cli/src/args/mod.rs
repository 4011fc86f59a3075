//! The command line: clap's view of every command and flag, and their
//! mapping onto the library's types.

mod audit;
mod commands;
mod solve;

pub use audit::*;
use clap::{Parser, Subcommand};
pub use commands::*;
pub use solve::*;
use std::path::PathBuf;

pub(crate) const MECHANISMS: &str = "\
Mechanisms (--mechanism):
  drf        DRF on the pooled servers, closed-form progressive filling (Ghodsi et al.; all-in-one model of 000)
  drfh       DRFH: max-min of global dominant shares over heterogeneous servers, weights, caps, placement (000, LP (7), Sec. V-A)
  kdf        k-DF with --k K: max-min of k-dominant weighted shares, one pool or servers (001, Sec. IV-C/E)
  naive-drf  per-server DRF, the naive baseline (000, Sec. III-D)
  hdrf       H-DRF over the instance's queue tree (weights, guarantees, limits) on the pooled servers (Bhattacharya et al., SoCC 2013)
  hdrfh      H-DRF over heterogeneous servers: global dominant shares, per-server feasibility, placement
  hdrf-naive naive hierarchical DRF (every queue's share from its subtree's total), pooled, to compare
  nfc        no fairness constraints: maximum total tasks (001, Sec. V; efficiency reference)
  psdsf      PS-DSF: per-server dominant share fairness by water-filling best responses ended by an exact forest solve, Definition-4 certificate; --select sweeps: the best responses alone; --select max-tasks: the member with most tasks, exact MILP on HiGHS (004)
  vds        alphaPF-VDS, --alpha A >= 1: alpha = 1 one exponential-cone program; gamma separable one power-cone program; otherwise Gauss-Seidel best responses among servers (--jacobi [THETA] for the damped distributed form), certified by the Nikaido-Isoda gap (004)
  tsf        task share fairness: max-min of x_n / y_n, y_n the tasks a user could run on all servers, with placement (Wang et al., SC'16; 004)
  first-fit  First-Fit DRFH on whole tasks: lowest global dominant share first, first server that fits (000, Sec. V-B)
  best-fit   Best-Fit DRFH on whole tasks: server with least H(i,l) of eq. (9), --normaliser RESOURCE (000, Sec. V-B)
  slots      Slots scheduler: --slots S per maximum server, fair share of slots (000, Sec. VI, Table II)
  kdf-online online k-DF, Algorithm 1 on whole tasks, --k K --on-full stop|skip (001, Sec. IV-D)
  (heuristics also print `gap`: their distance to exact DRFH, or to exact k-DF for kdf-online)
  yarn-fair  YARN Fair Scheduler: per-resource fair shares over the queue tree (ComputeFairShares' bisection, min/max resources, demand caps), whole tasks inside them
  kai        KAI Scheduler: per-resource division, deserved quota then over-quota by weight, rounded to the instance's quantum
  volcano-proportion  Volcano's proportion plugin: flat queues, deserved by weight capped by request, drf job order inside a queue
  kueue      Kueue fair sharing: whole workloads admitted lowest dominant resource share first, cohorts, limits
  (scheduler algorithms print `scheduler` (every queue's and user's share) and `gap` to exact hdrf; docs/schedulers.md)
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
  scheduler  first-fit | best-fit (\"normaliser\": resource) | slots (\"slots\": S) | drfh | hdrfh
             | hdrf-first-fit | hdrf-naive-first-fit (whole tasks along the queue tree, H-DRF's or the naive shares)
             | yarn-fair | kai | volcano-proportion | kueue (the schedulers' share algorithms, pooled, whole tasks)
  queues     the queue tree the hierarchical schedulers and the share algorithms use (the instance format's \"queues\"), user_queues {\"user name\": \"queue\"}
  horizon, sample_interval (seconds), dedicated (true: Fig. 8 dedicated clouds), dedicated_seed,
  weights ({\"user name\": w}, default 1)
Example: datasets/simulations/fig4.json; plot with `leontief plot RESULT --kind utilisation`.";

#[derive(Parser)]
#[command(name = "leontief", version, about = "Exact multi-resource fair allocations (DRF, DRFH, k-DF, ...)", after_help = MECHANISMS)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Solve an instance with a mechanism and print the allocation JSON.
    #[command(after_help = MECHANISMS, allow_negative_numbers = true)]
    Solve {
        /// Instance JSON (docs/instance-format.md).
        instance: PathBuf,
        /// Mechanism name (see below).
        #[arg(long)]
        mechanism: String,
        #[command(flatten)]
        params: MechParams,
        /// When to run the LP-based check of the mechanism's defining property.
        #[arg(long, value_enum, default_value = "auto")]
        verify: VerifyArg,
        /// Time limit, seconds: per LP (HiGHS) and per cone program
        /// (Clarabel), and for the whole best-response run of psdsf and vds
        /// and the whole sequence of max-min rounds (drfh, kdf, tsf); a run
        /// that hits it ends with status time_limit.
        #[arg(long)]
        time_limit: Option<f64>,
        /// HiGHS algorithm: auto (interior point from 10,000 columns,
        /// else HiGHS decides), choose (HiGHS decides), simplex, or ipm
        /// (interior point with crossover).
        #[arg(long, value_enum, default_value = "auto")]
        algorithm: AlgorithmArg,
        /// drfh, kdf, tsf: make every LP of the max-min rounds exact to
        /// double-double precision (about 32 digits) by the simplex
        /// continued from HiGHS's basis: on, off, or auto (where the
        /// instance has placement lists, whose rounds HiGHS's own
        /// tolerances cannot decide; about 2x slower there).
        #[arg(long, value_enum, default_value = "auto")]
        exact_pivots: SwitchArg,
        /// Pretty-print the JSON.
        #[arg(long)]
        pretty: bool,
        /// How `tasks` is printed: dense (`tasks[n][i]`), sparse
        /// (`tasks_sparse`: the nonzero entries, with `"layout": "sparse"`),
        /// or auto (sparse from 1,000,000 user-server pairs).
        #[arg(long, value_enum, default_value = "auto")]
        layout: LayoutArg,
    },
    /// Solve one mechanism over a range of one parameter and write a CSV
    /// (user tasks, percent fairness vs DRFH, percent efficiency vs NFC,
    /// leftover capacity and utilisation per resource).
    #[command(allow_negative_numbers = true)]
    Sweep {
        /// Instance JSON.
        instance: PathBuf,
        #[command(flatten)]
        args: SweepArgs,
    },
    /// Every bottleneck set of a BBF allocation (003 Sec. 6): one LP per
    /// subset of resources, in parallel; prints JSON with a witness
    /// allocation and the polytope dimension of each.
    EnumerateBbf {
        #[command(flatten)]
        args: EnumerateArgs,
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
        args: SimulateArgs,
    },
    /// Draw a figure from leontief's output (SVG or PNG): utilisation,
    /// shares, jct-cdf, completion (simulate JSON) or tradeoff (sweep CSV).
    Plot {
        #[command(flatten)]
        args: PlotArgs,
    },
    /// Regenerate a paper's table.
    Repro {
        #[command(subcommand)]
        what: Repro,
    },
    /// Audit an allocation made elsewhere (a scheduler's snapshot, a
    /// heuristic, a paper's table): feasibility, whole tasks, sharing
    /// incentive, envy-freeness, Pareto optimality, DRFH max-min, the BBF
    /// condition (2) and PS-DSF Definition 4, each with a witness where it
    /// fails, and the distance to exact mechanisms on the same instance.
    Audit {
        #[command(flatten)]
        args: AuditArgs,
    },
    /// Import a real cluster snapshot as an instance and the allocation
    /// the cluster made (for `leontief audit`).
    Import {
        #[command(subcommand)]
        what: Import,
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
        /// `google-cell` (Table I of 000), `heterogeneous`, `placement`
        /// (heterogeneous with weights in [1, 4] and --eligible random
        /// servers per user: the server-based mechanisms of 004), or
        /// `shaped` (the shapes of real clusters, described by --shape).
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
        /// shaped: comma-separated, over U[0.25, 1) capacities and
        /// U[0.01, 0.2] demands: capacity=uniform:LOW|google|pools:K,
        /// demand=uniform|lognormal|bimodal|few-huge, gpu=FRACTION (the
        /// last resource only on that fraction of servers and users),
        /// weights (1-4), caps=FRACTION (users capped),
        /// placement=none|attribute:K|random:E, queues=Q:L (Q queues in L levels, users in the last level).
        #[arg(long)]
        shape: Option<String>,
    },
}

/// `leontief import` sources.
#[derive(Subcommand)]
pub(crate) enum Import {
    /// `kubectl get nodes -o json` and `kubectl get pods -A -o json`:
    /// servers are nodes (allocatable), users are workloads (each pod one
    /// task of its effective request), the allocation is pods per node.
    Kubernetes(KubernetesArgs),
    /// A Google cluster-data 2011 snapshot at time T: machines alive at T
    /// (machine_events) are servers, users (or jobs) users, tasks running
    /// at T the allocation.
    #[command(name = "google-trace")]
    GoogleTrace(GoogleTraceArgs),
    /// The Alibaba GPU cluster trace of 2023 (node list and pod list):
    /// nodes are servers, task shapes users, GPU models placement lists.
    /// The trace does not say where a task ran: the instance only.
    #[command(name = "alibaba-gpu")]
    AlibabaGpu(AlibabaGpuArgs),
    /// A Kueue configuration (`kubectl get clusterqueues|cohorts|workloads
    /// -o json`): flavor/resource pairs are resources, the pool holds every
    /// quota, cohorts and ClusterQueues are queues (nominal quota the
    /// guarantee, plus borrowing limit the limit), workload pod sets are
    /// users; the allocation is the admitted pods.
    Kueue(KueueArgs),
    /// A YARN Fair Scheduler configuration: the allocation file's queue
    /// tree and the ResourceManager's applications (ws/v1/cluster/apps);
    /// the allocation is the running containers.
    Yarn(YarnArgs),
}

/// `leontief repro` targets.
#[derive(Subcommand)]
pub(crate) enum Repro {
    /// The strategy-proofness table of docs/audit.md: the misreport probe
    /// of every mechanism on generated instances.
    #[command(name = "sp-table")]
    SpTable(SpTableArgs),
    /// Table I of 001: average total tasks of NFC, DRF and 2-DF over every
    /// request combination of three users on a pool (C, C, C), and how
    /// often 2-DF runs more than DRF.
    #[command(name = "kdf-table1")]
    KdfTable1(KdfTable1Args),
    /// Table 1 of 003: mean number of BBF solutions for random requests.
    #[command(name = "bbf-table1")]
    BbfTable1(Table1Args),
    /// Prop. 2 of 002 by Monte Carlo: the optimal FDS and GFJ values at
    /// beta = inf, lambda = -1 against their asymptotic forms.
    #[command(name = "fds-prop2")]
    FdsProp2(Prop2Args),
    /// Fig. 4 of 000: global dominant shares of three users joining a
    /// 100-server cluster, whole-task Best-Fit against exact DRFH, over
    /// random server draws.
    #[command(name = "sim-fig4")]
    SimFig4(Fig4Args),
    /// Figs. 15-16 of 002: FDS or GFJ fairness-efficiency points over a
    /// (beta, lambda) grid, one contour per capacity of a resource (CSV).
    #[command(name = "fds-contours")]
    FdsContours(ContoursArgs),
    /// The measured table of docs/schedulers.md: the production
    /// schedulers' share algorithms against exact hdrf on the Alibaba GPU
    /// cluster in queues and on generated hierarchical clusters.
    #[command(name = "schedulers-table")]
    SchedulersTable(SchedTableArgs),
}
