//! The arguments of `audit`, `import` and the `repro` tables.

use super::VerifyArg;
use std::path::PathBuf;

/// `leontief audit`.
#[derive(clap::Args, Debug)]
pub struct AuditArgs {
    /// Instance JSON.
    pub instance: PathBuf,
    /// The allocation: the allocation JSON `leontief solve` prints (dense
    /// `tasks` or sparse `tasks_sparse`), or a CSV (`.csv`) with the
    /// columns user,server,tasks (names; rows of one pair add up). Not
    /// with --probe-sp. Without it, --against MECHANISMS compares the
    /// mechanisms' own answers on INSTANCE per queue (the schedulers'
    /// share algorithms beside the exact hierarchical answer).
    #[arg(required_unless_present_any = ["probe_sp", "against"])]
    pub allocation: Option<PathBuf>,
    /// Probe MECHANISM (a spec string) for strategy-proofness on INSTANCE
    /// instead: search misreported demands per user and report the
    /// largest gain in true tasks, with the misreport.
    #[arg(long, value_name = "MECHANISM", conflicts_with = "allocation")]
    pub probe_sp: Option<String>,
    /// --probe-sp: the users probed (names, comma-separated; default all).
    #[arg(long, requires = "probe_sp")]
    pub users: Option<String>,
    /// --probe-sp: mechanism solves per user (1 to 100,000).
    #[arg(long, default_value_t = 40, requires = "probe_sp",
          value_parser = clap::value_parser!(u64).range(1..=leontief::audit::MAX_BUDGET as u64))]
    pub budget: u64,
    /// --probe-sp: seed of the local search.
    #[arg(long, default_value_t = 1, requires = "probe_sp")]
    pub seed: u64,
    /// --probe-sp: only misreports asking at least the true demand of every
    /// resource (the setting of the theorems of 000 and 001).
    #[arg(long, requires = "probe_sp")]
    pub inflate_only: bool,
    /// Mechanisms to compare with, comma-separated spec strings
    /// (`drfh,kdf:2,psdsf,bbf-eg`, `pnorm:p=inf,beta=2`); auto: drfh,
    /// and nfc up to 1,000,000 user-server pairs; none: no comparison.
    #[arg(long, default_value = "auto")]
    pub against: String,
    /// The LP-based properties (Pareto, DRFH max-min): auto runs them up to
    /// 20,000 user-server pairs the placement lists allow.
    #[arg(long, value_enum, default_value_t = VerifyArg::Auto)]
    pub verify: VerifyArg,
    /// Time limit of each mechanism's solve, seconds.
    #[arg(long)]
    pub time_limit: Option<f64>,
    /// Re-check the allocation's max-min certificate (drfh, kdf, tsf on
    /// several servers) in exact rational arithmetic and report the proven
    /// bound on the distance from the optimal level; the value names the
    /// shares where the output does not (`--exact kdf:k=2`).
    #[arg(long, value_name = "SHARES", num_args = 0..=1, default_missing_value = "")]
    pub exact: Option<String>,
    /// Print readable tables instead of JSON.
    #[arg(long)]
    pub table: bool,
    /// --table: list the N users furthest below the first --against
    /// mechanism (lowest ratio, then lowest level), the N pending users
    /// with most tasks waiting and, with --nodes, the N fullest nodes
    /// (default: the first 20 of each in instance order).
    #[arg(long, value_name = "N", requires = "table",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub top: Option<u64>,
    /// --table: add a per-node view (each node's fullest resource, its
    /// load and the users there).
    #[arg(long, requires = "table")]
    pub nodes: bool,
    /// Pretty-print the JSON.
    #[arg(long)]
    pub pretty: bool,
}

/// `leontief import kubernetes`.
#[derive(clap::Args, Debug)]
pub struct KubernetesArgs {
    /// `kubectl get nodes -o json` output.
    pub nodes: PathBuf,
    /// `kubectl get pods -A -o json` output.
    pub pods: PathBuf,
    /// Write the instance here.
    #[arg(long)]
    pub instance: PathBuf,
    /// Write the allocation (pods per node) here: CSV user,server,tasks
    /// for a `.csv` path, the allocation JSON otherwise.
    #[arg(long)]
    pub allocation: PathBuf,
    /// Users: owner (the pod's controller), namespace, or label=KEY.
    #[arg(long, default_value = "owner")]
    pub group_by: String,
    /// Pods of one user with different requests: refuse, split (one user
    /// per request vector) or max (the largest request of each resource).
    #[arg(long, default_value = "refuse")]
    pub merge: String,
    /// Resources, comma-separated Kubernetes names (default cpu, memory
    /// and every other resource a pod requests).
    #[arg(long)]
    pub resources: Option<String>,
    /// Leave users uncapped (default: each user's task cap is its number
    /// of pods, running and pending).
    #[arg(long)]
    pub uncapped: bool,
}

/// `leontief repro sp-table`.
#[derive(clap::Args, Debug)]
pub struct SpTableArgs {
    /// Generated instances per shape.
    #[arg(long, default_value_t = 8)]
    pub instances: u64,
    /// Mechanism solves per user (1 to 100,000).
    #[arg(long, default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=leontief::audit::MAX_BUDGET as u64))]
    pub budget: u64,
    /// Mechanisms (comma-separated spec strings).
    #[arg(
        long,
        default_value = "drf,drfh,kdf:k=1,kdf:k=2,tsf,naive-drf,nfc,psdsf,vds:alpha=2,fds:alpha=1,gfj:alpha=2,bbf-eg,first-fit,best-fit,slots:slots=4"
    )]
    pub mechanisms: String,
}

/// `leontief import google-trace`.
#[derive(clap::Args, Debug)]
pub struct GoogleTraceArgs {
    /// The `task_events` table (CSV, no header; `zcat` the parts into one
    /// file).
    pub task_events: PathBuf,
    /// The `machine_events` table (CSV, no header).
    #[arg(long)]
    pub machines: PathBuf,
    /// The time of the snapshot, seconds since the trace's start
    /// (timestamps are microseconds).
    #[arg(long)]
    pub at: f64,
    /// Write the instance here.
    #[arg(long)]
    pub instance: PathBuf,
    /// Write the allocation (tasks per machine) here: CSV for a `.csv`
    /// path, the allocation JSON otherwise.
    #[arg(long)]
    pub allocation: PathBuf,
    /// Users: user (the trace's user) or job.
    #[arg(long, default_value = "user")]
    pub group_by: String,
    /// Tasks of one user with different requests: refuse, split or max.
    #[arg(long, default_value = "refuse")]
    pub merge: String,
    /// Leave users uncapped (default: each user's cap is its tasks running
    /// or pending at T).
    #[arg(long)]
    pub uncapped: bool,
}

/// `leontief import alibaba-gpu`.
#[derive(clap::Args, Debug)]
pub struct AlibabaGpuArgs {
    /// The node list (`openb_node_list_all_node.csv`: sn, cpu_milli,
    /// memory_mib, gpu, model).
    pub nodes: PathBuf,
    /// A pod list (`openb_pod_list_*.csv`: name, cpu_milli, memory_mib,
    /// num_gpu, gpu_milli, and optionally gpu_spec, qos and the times).
    pub pods: PathBuf,
    /// Write the instance here.
    #[arg(long)]
    pub instance: PathBuf,
    /// Only the tasks running at T seconds (created and scheduled by T,
    /// not deleted by T); default every task of the list.
    #[arg(long)]
    pub at: Option<f64>,
    /// Users: shape (request and GPU models allowed), qos (QoS class and
    /// shape) or none (one per task).
    #[arg(long, default_value = "shape")]
    pub group_by: String,
    /// Queues for the hierarchical mechanisms: none, or qos (one queue per
    /// QoS class, each user in its class's).
    #[arg(long, default_value = "none")]
    pub queues: String,
}

/// `leontief repro kdf-table1`.
#[derive(clap::Args, Debug)]
pub struct KdfTable1Args {
    /// Capacities C (comma-separated; C^9 combinations each).
    #[arg(long, default_value = "3,5")]
    pub c: String,
    /// Solve this many random combinations (with replacement) instead of
    /// all of them.
    #[arg(long)]
    pub sample: Option<usize>,
    /// Seed of --sample.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `leontief import kueue`.
#[derive(clap::Args, Debug)]
pub struct KueueArgs {
    /// `kubectl get clusterqueues -o json` output.
    pub cluster_queues: PathBuf,
    /// `kubectl get cohorts -o json` output (an empty list when the
    /// cohorts are implicit).
    pub cohorts: PathBuf,
    /// `kubectl get workloads -A -o json` output.
    pub workloads: PathBuf,
    /// `kubectl get localqueues -A -o json` output: the ClusterQueue of
    /// each workload not yet admitted.
    #[arg(long)]
    pub local_queues: Option<PathBuf>,
    /// Write the instance here.
    #[arg(long)]
    pub instance: PathBuf,
    /// Write the allocation (admitted pods) here: CSV for a `.csv` path,
    /// the allocation JSON otherwise.
    #[arg(long)]
    pub allocation: PathBuf,
}

/// `leontief import yarn`.
#[derive(clap::Args, Debug)]
pub struct YarnArgs {
    /// The Fair Scheduler allocation file (`fair-scheduler.xml`).
    pub allocation_file: PathBuf,
    /// The ResourceManager's `ws/v1/cluster/apps` JSON.
    pub apps: PathBuf,
    /// The ResourceManager's `ws/v1/cluster/metrics` JSON (the cluster's
    /// totalMB and totalVirtualCores); or give --capacity.
    #[arg(
        long,
        conflicts_with = "capacity",
        required_unless_present = "capacity"
    )]
    pub metrics: Option<PathBuf>,
    /// The cluster's total as MB,VCORES.
    #[arg(long, value_name = "MB,VCORES")]
    pub capacity: Option<String>,
    /// Write the instance here.
    #[arg(long)]
    pub instance: PathBuf,
    /// Write the allocation (running containers) here: CSV for a `.csv`
    /// path, the allocation JSON otherwise.
    #[arg(long)]
    pub allocation: PathBuf,
}

/// `leontief repro schedulers-table`.
#[derive(clap::Args, Debug)]
pub struct SchedTableArgs {
    /// The Alibaba GPU trace's folder (openb_node_list_all_node.csv,
    /// openb_pod_list_default.csv); default $LEONTIEF_ALIBABA_DIR; without
    /// either the Alibaba rows are left out, and the output says so.
    #[arg(long)]
    pub alibaba: Option<PathBuf>,
    /// Users of each generated cluster (1 to 100,000).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub users: u64,
    /// Servers of each generated cluster (1 to 100,000).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub servers: u64,
    /// Seeds of each generated shape (1 to 100).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub seeds: u64,
}
