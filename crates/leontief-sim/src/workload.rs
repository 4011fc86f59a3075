//! Workloads for the simulator: jobs of tasks arriving over time.
//!
//! A [`Workload`] is a list of tasks, each with its user, job, submission
//! time, running time and per-task demand (one value per cluster resource,
//! in the units of the cluster's capacities). Two sources:
//!
//! * **A trace in the Google cluster-data 2011 `task_events` schema**
//!   ([`read_task_events`]): 13 comma-separated columns, no header,
//!
//!   | # | column | used |
//!   |---|---|---|
//!   | 1 | timestamp (microseconds) | yes |
//!   | 2 | missing info | no |
//!   | 3 | job ID | yes |
//!   | 4 | task index | yes |
//!   | 5 | machine ID | no |
//!   | 6 | event type (0 SUBMIT, 1 SCHEDULE, 2 EVICT, 3 FAIL, 4 FINISH, 5 KILL, 6 LOST, 7 UPDATE_PENDING, 8 UPDATE_RUNNING) | yes |
//!   | 7 | user name (hashed) | yes |
//!   | 8 | scheduling class | no |
//!   | 9 | priority | no |
//!   | 10 | CPU request (normalised to the largest machine) | yes |
//!   | 11 | memory request (normalised) | yes |
//!   | 12 | disk space request | no |
//!   | 13 | different-machine restriction | no |
//!
//!   As in Sec. VI of 000, the trace gives each task's demand and running
//!   time; the simulator then schedules the tasks itself. A task (job ID,
//!   task index) arrives at its first SUBMIT; its running time is the time
//!   from its last SCHEDULE to the terminal event (EVICT, FAIL, FINISH,
//!   KILL or LOST) that follows it, or to the end of the trace if none
//!   does (counted as `censored`); its demand is the last CPU and memory
//!   request seen. Tasks never scheduled, or without a request, are left
//!   out and counted. Timestamps 0 (before the trace) and 2^63 - 1 (after
//!   it) are clamped to the trace's window. The real trace ships as
//!   `part-?????-of-00500.csv.gz`; `zcat` the parts into one file.
//!
//! * **Synthetic** ([`SyntheticSpec`]), documented on its fields, and
//!   written out in the same schema by [`write_task_events`] (SUBMIT and
//!   SCHEDULE at arrival, FINISH after the running time), so a synthetic
//!   trace read back gives the same workload.
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{BufRead, Write};

/// One task of a workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Index into [`Workload::users`].
    pub user: usize,
    /// Index into [`Workload::jobs`].
    pub job: usize,
    /// Arrival (seconds).
    pub submit: f64,
    /// Running time once placed (seconds).
    pub duration: f64,
    /// Demand per resource, cluster units.
    pub demand: Vec<f64>,
}

/// A workload: tasks sorted by arrival, with their users and jobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// Resource names (must match the cluster's).
    pub resources: Vec<String>,
    /// User names.
    pub users: Vec<String>,
    /// Weight of each user (1 unless given).
    pub weights: Vec<f64>,
    /// Job IDs as in the trace.
    pub jobs: Vec<u64>,
    /// Tasks sorted by (submit, job, input order).
    pub tasks: Vec<Task>,
    /// End of the workload's window (seconds): the last trace timestamp, or
    /// the synthetic horizon.
    pub end: f64,
    /// What reading left out, in words (empty for synthetic workloads).
    pub notes: Vec<String>,
    /// The queue tree the hierarchical scheduler (`hdrfh`) shares the
    /// cluster by (empty: none).
    pub queues: Vec<leontief_core::RawQueue>,
    /// Each user's queue by name (empty, or `None` for a user: the root).
    pub user_queue: Vec<Option<String>>,
}

/// A workload could not be read or generated.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A line or field is malformed.
    #[error("{path}:{line}: {reason}")]
    Parse {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong, naming the column.
        reason: String,
    },
    /// A parameter is out of range.
    #[error("{field} {reason}")]
    Invalid {
        /// The field, as in the config.
        field: String,
        /// What is wrong.
        reason: String,
    },
}

/// Event types of the task_events table.
const SUBMIT: u8 = 0;
const SCHEDULE: u8 = 1;
const FINISH: u8 = 4;

#[derive(Default)]
struct Building {
    user: String,
    submit: Option<u64>,
    schedule: Option<u64>,
    end: Option<u64>,
    cpu: Option<f64>,
    mem: Option<f64>,
}

/// Read a `task_events` trace (see the module docs).
pub fn read_task_events(path: &std::path::Path) -> Result<Workload, WorkloadError> {
    let p = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| WorkloadError::Io {
        path: p.clone(),
        source,
    })?;
    parse_task_events(std::io::BufReader::new(file), &p)
}

/// One line of a `task_events` trace, parsed (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEvent {
    /// 1-based line of the file.
    pub line: usize,
    /// Timestamp, microseconds (0: before the trace; 2^63 - 1: after it).
    pub timestamp: u64,
    /// Job ID.
    pub job: u64,
    /// Task index within the job.
    pub index: u64,
    /// Machine ID, when given.
    pub machine: Option<u64>,
    /// Event type (0 SUBMIT, 1 SCHEDULE, 2 EVICT, 3 FAIL, 4 FINISH, 5 KILL,
    /// 6 LOST, 7 UPDATE_PENDING, 8 UPDATE_RUNNING).
    pub kind: u8,
    /// User name (hashed in the real trace).
    pub user: String,
    /// CPU request, when given.
    pub cpu: Option<f64>,
    /// Memory request, when given.
    pub mem: Option<f64>,
}

/// Read `task_events` lines from any reader, one [`TaskEvent`] at a time
/// (streaming: the real trace is tens of GB); `name` labels errors, which
/// name the line and the column.
pub fn for_each_task_event(
    reader: impl BufRead,
    name: &str,
    mut each: impl FnMut(TaskEvent) -> Result<(), WorkloadError>,
) -> Result<(), WorkloadError> {
    let err = |line: usize, reason: String| WorkloadError::Parse {
        path: name.to_string(),
        line,
        reason,
    };
    let mut buf = String::new();
    let mut reader = reader;
    let mut lineno = 0usize;
    loop {
        buf.clear();
        let read = reader
            .read_line(&mut buf)
            .map_err(|source| WorkloadError::Io {
                path: name.to_string(),
                source,
            })?;
        if read == 0 {
            return Ok(());
        }
        lineno += 1;
        let line = buf.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split(',').collect();
        if cols.len() < 11 {
            return Err(err(
                lineno,
                format!(
                    "expected 13 columns of task_events, found {} (columns 1 timestamp, 3 job ID, 4 task index, 6 event type, 7 user, 10 CPU request, 11 memory request are needed)",
                    cols.len()
                ),
            ));
        }
        let int = |i: usize, what: &str| -> Result<u64, WorkloadError> {
            cols[i].trim().parse::<u64>().map_err(|_| {
                err(
                    lineno,
                    format!("column {} ({what}) is not an integer: {:?}", i + 1, cols[i]),
                )
            })
        };
        let real = |i: usize, what: &str| -> Result<Option<f64>, WorkloadError> {
            let s = cols[i].trim();
            if s.is_empty() {
                return Ok(None);
            }
            match s.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
                _ => Err(err(
                    lineno,
                    format!(
                        "column {} ({what}) must be a number >= 0: {:?}",
                        i + 1,
                        cols[i]
                    ),
                )),
            }
        };
        let kind = int(5, "event type")?;
        if kind > 8 {
            return Err(err(
                lineno,
                format!("column 6 (event type) must be 0..=8, found {kind}"),
            ));
        }
        let machine = match cols[4].trim() {
            "" => None,
            _ => Some(int(4, "machine ID")?),
        };
        each(TaskEvent {
            line: lineno,
            timestamp: int(0, "timestamp")?,
            job: int(2, "job ID")?,
            index: int(3, "task index")?,
            machine,
            kind: kind as u8,
            user: cols[6].trim().to_string(),
            cpu: real(9, "CPU request")?,
            mem: real(10, "memory request")?,
        })?;
    }
}

/// Parse `task_events` lines from any reader; `name` labels errors.
pub fn parse_task_events(reader: impl BufRead, name: &str) -> Result<Workload, WorkloadError> {
    let mut tasks: HashMap<(u64, u64), Building> = HashMap::new();
    let mut order: Vec<(u64, u64)> = Vec::new();
    let (mut t_min, mut t_max) = (u64::MAX, 0u64);
    for_each_task_event(reader, name, |e| {
        let ts = e.timestamp;
        if ts != 0 && ts != i64::MAX as u64 {
            t_min = t_min.min(ts);
            t_max = t_max.max(ts);
        }
        let b = tasks.entry((e.job, e.index)).or_insert_with(|| {
            order.push((e.job, e.index));
            Building::default()
        });
        if b.user.is_empty() {
            b.user = e.user;
        }
        if e.cpu.is_some() {
            b.cpu = e.cpu;
        }
        if e.mem.is_some() {
            b.mem = e.mem;
        }
        match e.kind {
            SUBMIT if b.submit.is_none() => b.submit = Some(ts),
            SCHEDULE => {
                b.schedule = Some(ts);
                b.end = None;
            }
            2..=6 if b.schedule.is_some() && b.end.is_none() => b.end = Some(ts),
            _ => {}
        }
        Ok(())
    })?;
    if t_min == u64::MAX {
        t_min = 0;
    }
    let clamp = |t: u64| -> f64 {
        let t = if t == 0 {
            t_min
        } else if t == i64::MAX as u64 {
            t_max
        } else {
            t
        };
        t as f64 / 1e6
    };
    let mut users: Vec<String> = Vec::new();
    let mut user_index: HashMap<String, usize> = HashMap::new();
    let mut jobs: Vec<u64> = Vec::new();
    let mut job_index: HashMap<u64, usize> = HashMap::new();
    let (mut never, mut no_request, mut censored) = (0usize, 0usize, 0usize);
    let (mut zero_request, mut ends_first) = (0usize, 0usize);
    let mut out = Vec::with_capacity(order.len());
    for key in order {
        let b = &tasks[&key];
        let (Some(schedule), Some(submit)) = (b.schedule, b.submit.or(b.schedule)) else {
            never += 1;
            continue;
        };
        let (Some(cpu), Some(mem)) = (b.cpu, b.mem) else {
            no_request += 1;
            continue;
        };
        // A task demanding nothing is refused in explicit workloads; in a
        // trace it is left out and counted (real traces hold a few).
        if cpu == 0.0 && mem == 0.0 {
            zero_request += 1;
            continue;
        }
        let start = clamp(schedule);
        let end = match b.end {
            Some(e) => clamp(e),
            None => {
                censored += 1;
                t_max as f64 / 1e6
            }
        };
        // An end before the start is a broken record, not a task that ran
        // for no time: left out and counted.
        if end < start {
            ends_first += 1;
            continue;
        }
        let user = *user_index.entry(b.user.clone()).or_insert_with(|| {
            users.push(b.user.clone());
            users.len() - 1
        });
        let job = *job_index.entry(key.0).or_insert_with(|| {
            jobs.push(key.0);
            jobs.len() - 1
        });
        out.push(Task {
            user,
            job,
            submit: clamp(submit),
            duration: end - start,
            demand: vec![cpu, mem],
        });
    }
    let mut notes = Vec::new();
    if never > 0 {
        notes.push(format!(
            "{never} tasks never scheduled in the trace (no running time): left out"
        ));
    }
    if no_request > 0 {
        notes.push(format!(
            "{no_request} tasks without a CPU or memory request: left out"
        ));
    }
    if zero_request > 0 {
        notes.push(format!(
            "{zero_request} tasks requesting 0 CPU and 0 memory: left out"
        ));
    }
    if ends_first > 0 {
        notes.push(format!(
            "{ends_first} tasks whose last terminal event comes before their SCHEDULE: left out"
        ));
    }
    if censored > 0 {
        notes.push(format!(
            "{censored} tasks still running at the end of the trace: running time taken to the trace's end"
        ));
    }
    sort_tasks(&mut out);
    Ok(Workload {
        queues: Default::default(),
        user_queue: Default::default(),
        resources: vec!["cpu".into(), "mem".into()],
        weights: vec![1.0; users.len()],
        users,
        jobs,
        tasks: out,
        end: t_max as f64 / 1e6,
        notes,
    })
}

fn sort_tasks(tasks: &mut [Task]) {
    // Stable: equal arrivals keep job and input order.
    tasks.sort_by(|a, b| a.submit.total_cmp(&b.submit).then(a.job.cmp(&b.job)));
}

/// Write `workload` as a `task_events` trace (two resources: CPU and
/// memory). Each task: SUBMIT and SCHEDULE at its arrival, FINISH after its
/// running time; times in microseconds, rounded.
pub fn write_task_events(workload: &Workload, out: &mut impl Write) -> std::io::Result<()> {
    let mut index_in_job = vec![0u64; workload.jobs.len()];
    let mut lines: Vec<(u64, String)> = Vec::with_capacity(3 * workload.tasks.len());
    for t in &workload.tasks {
        let idx = index_in_job[t.job];
        index_in_job[t.job] += 1;
        let start = (t.submit * 1e6).round() as u64;
        let end = ((t.submit + t.duration) * 1e6).round() as u64;
        let (cpu, mem) = (t.demand[0], t.demand.get(1).copied().unwrap_or(0.0));
        let job = workload.jobs[t.job];
        let user = &workload.users[t.user];
        for (ts, kind) in [(start, SUBMIT), (start, SCHEDULE), (end, FINISH)] {
            lines.push((
                ts,
                format!("{ts},,{job},{idx},,{kind},{user},0,0,{cpu},{mem},0,0"),
            ));
        }
    }
    lines.sort_by_key(|l| l.0);
    for (_, l) in lines {
        writeln!(out, "{l}")?;
    }
    Ok(())
}

/// The most tasks (and jobs, users) a workload may hold: each task is a
/// record in memory (about 100 bytes), so 10^8 is about 10 GB. Inputs
/// above it are refused, naming the field, before anything is allocated.
pub const MAX_TASKS: u64 = 100_000_000;

/// The most users a synthetic workload has: the simulator samples every
/// user's share at every sample time.
pub const MAX_SYNTHETIC_USERS: usize = 100_000;

/// A synthetic workload: users of unequal activity submitting jobs of
/// identical tasks. Defaults give a light Google-like mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SyntheticSpec {
    /// Users (default 20).
    pub users: usize,
    /// Jobs in all (default 200). Job j goes to user n with probability
    /// proportional to 1 / (n + 1) (a few heavy users, many light ones).
    pub jobs: usize,
    /// Arrivals are uniform over [0, arrival_window] seconds (default 3,600).
    pub arrival_window: f64,
    /// End of the window the simulation covers, seconds (default 7,200).
    pub horizon: f64,
    /// Tasks per job, log-uniform on [1, max_tasks] (default 100).
    pub max_tasks: u32,
    /// Running time of a job's tasks: log-uniform on [min, max] seconds
    /// per job (default [30, 1,800]), each task within +-20% of it.
    pub duration: [f64; 2],
    /// Each user's per-task demand per resource: log-uniform on [min, max]
    /// (cluster units; default [0.005, 0.1]); each job scales its user's
    /// demand by a factor in [0.5, 1.5].
    pub demand: [f64; 2],
    /// Seed (default 1).
    pub seed: u64,
}

impl Default for SyntheticSpec {
    fn default() -> Self {
        SyntheticSpec {
            users: 20,
            jobs: 200,
            arrival_window: 3600.0,
            horizon: 7200.0,
            max_tasks: 100,
            duration: [30.0, 1800.0],
            demand: [0.005, 0.1],
            seed: 1,
        }
    }
}

impl SyntheticSpec {
    /// Check every field; the error names it.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        let bad = |field: &str, reason: &str| {
            Err(WorkloadError::Invalid {
                field: format!("workload.synthetic.{field}"),
                reason: reason.into(),
            })
        };
        let range =
            |r: [f64; 2]| r[0].is_finite() && r[1].is_finite() && 0.0 < r[0] && r[0] <= r[1];
        if self.users == 0 {
            return bad("users", "must be >= 1");
        }
        if !(self.arrival_window.is_finite() && self.arrival_window >= 0.0) {
            return bad("arrival_window", "must be finite and >= 0");
        }
        if !(self.horizon.is_finite() && self.horizon > 0.0) {
            return bad("horizon", "must be finite and > 0");
        }
        if self.max_tasks == 0 {
            return bad("max_tasks", "must be >= 1");
        }
        if self.users > MAX_SYNTHETIC_USERS {
            return bad(
                "users",
                &format!("must be at most {MAX_SYNTHETIC_USERS} (the share time series hold one column per user)"),
            );
        }
        // Tasks per job are log-uniform on [1, max_tasks]: their mean.
        let m = f64::from(self.max_tasks.max(2));
        let mean = (m - 1.0) / m.ln();
        if self.jobs as f64 * mean > MAX_TASKS as f64 {
            return bad(
                "jobs",
                &format!(
                    "{} jobs of about {mean:.0} tasks each exceed {MAX_TASKS} tasks, the most one simulation holds",
                    self.jobs
                ),
            );
        }
        if !range(self.duration) {
            return bad("duration", "must be [min, max] with 0 < min <= max");
        }
        if !range(self.demand) {
            return bad("demand", "must be [min, max] with 0 < min <= max");
        }
        Ok(())
    }

    /// Generate the workload over `resources` (deterministic for the seed).
    pub fn generate(&self, resources: &[String]) -> Result<Workload, WorkloadError> {
        self.validate()?;
        let m = resources.len();
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let log_uniform = |rng: &mut ChaCha8Rng, lo: f64, hi: f64| {
            (rng.gen_range(0.0..=1.0) * (hi / lo).ln()).exp() * lo
        };
        let base: Vec<Vec<f64>> = (0..self.users)
            .map(|_| {
                (0..m)
                    .map(|_| log_uniform(&mut rng, self.demand[0], self.demand[1]))
                    .collect()
            })
            .collect();
        let zipf: Vec<f64> = (0..self.users).map(|n| 1.0 / (n + 1) as f64).collect();
        let total: f64 = zipf.iter().sum();
        let mut tasks = Vec::new();
        for j in 0..self.jobs {
            let mut pick = rng.gen_range(0.0..total);
            let mut user = self.users - 1;
            for (n, z) in zipf.iter().enumerate() {
                if pick < *z {
                    user = n;
                    break;
                }
                pick -= z;
            }
            let submit = rng.gen_range(0.0..=1.0) * self.arrival_window;
            let count = log_uniform(&mut rng, 1.0, self.max_tasks as f64 + 1.0)
                .floor()
                .clamp(1.0, self.max_tasks as f64) as usize;
            let dur = log_uniform(&mut rng, self.duration[0], self.duration[1]);
            let scale = rng.gen_range(0.5..1.5);
            let demand: Vec<f64> = base[user].iter().map(|d| round6(d * scale)).collect();
            for _ in 0..count {
                let d = round6(dur * rng.gen_range(0.8..1.2));
                tasks.push(Task {
                    user,
                    job: j,
                    submit: round6(submit),
                    duration: d.max(1e-6),
                    demand: demand.clone(),
                });
            }
        }
        sort_tasks(&mut tasks);
        Ok(Workload {
            queues: Default::default(),
            user_queue: Default::default(),
            resources: resources.to_vec(),
            users: (0..self.users).map(|n| format!("user{}", n + 1)).collect(),
            weights: vec![1.0; self.users],
            jobs: (0..self.jobs as u64).map(|j| j + 1).collect(),
            tasks,
            end: self.horizon,
            notes: Vec::new(),
        })
    }
}

/// A user of an explicit workload (configs such as the Fig. 4 scenario).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitUser {
    /// Name.
    pub name: String,
    /// Per-task demand per resource.
    pub demand: Vec<f64>,
    /// Weight (default 1).
    #[serde(default)]
    pub weight: Option<f64>,
    /// Its jobs.
    pub jobs: Vec<ExplicitJob>,
}

/// A job of identical tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplicitJob {
    /// Arrival of all its tasks (seconds).
    pub submit: f64,
    /// Number of tasks.
    pub tasks: u64,
    /// Running time of each task (seconds).
    pub duration: f64,
}

/// Build a workload from explicit users; errors name the field
/// (`workload.users[1].jobs[0].duration`). `end` is the latest task
/// completion if every task ran at once on arrival.
pub fn explicit(resources: &[String], users: &[ExplicitUser]) -> Result<Workload, WorkloadError> {
    let bad = |field: String, reason: String| WorkloadError::Invalid { field, reason };
    let mut tasks = Vec::new();
    let mut jobs = Vec::new();
    let mut end = 0.0f64;
    let mut total_tasks = 0u64;
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (n, u) in users.iter().enumerate() {
        let at = format!("workload.users[{n}]");
        if let Some(first) = names.insert(u.name.as_str(), n) {
            return Err(bad(
                format!("{at}.name"),
                format!(
                    "duplicates workload.users[{first}].name (\"{}\"): each user is one name",
                    u.name
                ),
            ));
        }
        if u.demand.len() != resources.len() {
            return Err(bad(
                format!("{at}.demand"),
                format!(
                    "has {} entries but the cluster has {} resources",
                    u.demand.len(),
                    resources.len()
                ),
            ));
        }
        for (r, d) in u.demand.iter().enumerate() {
            if !(d.is_finite() && *d >= 0.0) {
                return Err(bad(
                    format!("{at}.demand[{r}]"),
                    format!("must be finite and >= 0 (got {d})"),
                ));
            }
        }
        if u.demand.iter().all(|d| *d == 0.0) {
            return Err(bad(format!("{at}.demand"), "is all zero".into()));
        }
        if let Some(w) = u.weight {
            if !(w.is_finite() && w > 0.0) {
                return Err(bad(
                    format!("{at}.weight"),
                    format!("must be > 0 (got {w})"),
                ));
            }
        }
        for (j, job) in u.jobs.iter().enumerate() {
            let at = format!("{at}.jobs[{j}]");
            if !(job.submit.is_finite() && job.submit >= 0.0) {
                return Err(bad(
                    format!("{at}.submit"),
                    format!("must be finite and >= 0 (got {})", job.submit),
                ));
            }
            if !(job.duration.is_finite() && job.duration > 0.0) {
                return Err(bad(
                    format!("{at}.duration"),
                    format!("must be finite and > 0 (got {})", job.duration),
                ));
            }
            total_tasks = total_tasks.saturating_add(job.tasks);
            if total_tasks > MAX_TASKS {
                return Err(bad(
                    format!("{at}.tasks"),
                    format!(
                        "brings the workload to more than {MAX_TASKS} tasks, the most one simulation holds ({} given here)",
                        job.tasks
                    ),
                ));
            }
            jobs.push(jobs.len() as u64 + 1);
            end = end.max(job.submit + job.duration);
            for _ in 0..job.tasks {
                tasks.push(Task {
                    user: n,
                    job: jobs.len() - 1,
                    submit: job.submit,
                    duration: job.duration,
                    demand: u.demand.clone(),
                });
            }
        }
    }
    sort_tasks(&mut tasks);
    Ok(Workload {
        queues: Default::default(),
        user_queue: Default::default(),
        resources: resources.to_vec(),
        users: users.iter().map(|u| u.name.clone()).collect(),
        weights: users.iter().map(|u| u.weight.unwrap_or(1.0)).collect(),
        jobs,
        tasks,
        end,
        notes: Vec::new(),
    })
}

/// Round to 6 decimals (microseconds for times), so a synthetic workload
/// survives the round trip through a trace file exactly.
fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_synthetic_workload_survives_the_trace_round_trip() {
        let spec = SyntheticSpec {
            jobs: 30,
            ..Default::default()
        };
        let w = spec.generate(&["cpu".into(), "mem".into()]).unwrap();
        let mut buf = Vec::new();
        write_task_events(&w, &mut buf).unwrap();
        let back = parse_task_events(&buf[..], "mem").unwrap();
        assert_eq!(back.tasks.len(), w.tasks.len());
        for (a, b) in w.tasks.iter().zip(&back.tasks) {
            assert!((a.submit - b.submit).abs() < 1e-6, "{a:?} {b:?}");
            assert!((a.duration - b.duration).abs() < 2e-6, "{a:?} {b:?}");
            assert_eq!(a.demand, b.demand);
            assert_eq!(w.users[a.user], back.users[b.user]);
        }
    }

    #[test]
    fn trace_semantics_last_schedule_to_terminal_event() {
        // Task (7, 0): submitted at 1 s, scheduled at 2 s, evicted at 5 s,
        // rescheduled at 6 s, finished at 16 s: runs 10 s, arrives at 1 s.
        // Task (7, 1): never scheduled. Task (8, 0): scheduled, never ends.
        let text = "\
1000000,,7,0,,0,alice,0,0,0.1,0.2,0,0
1000000,,7,1,,0,alice,0,0,0.1,0.2,0,0
2000000,,7,0,,1,alice,0,0,,,0,0
5000000,,7,0,,2,alice,0,0,,,0,0
6000000,,7,0,,1,alice,0,0,0.15,,0,0
16000000,,7,0,,4,alice,0,0,,,0,0
3000000,,8,0,,0,bob,0,0,0.3,0.05,0,0
4000000,,8,0,,1,bob,0,0,,,0,0
20000000,,9,0,,0,carol,0,0,0.3,,0,0
";
        let w = parse_task_events(text.as_bytes(), "t").unwrap();
        assert_eq!(w.tasks.len(), 2, "{w:?}");
        let a = &w.tasks[0];
        assert_eq!((a.submit, a.duration), (1.0, 10.0));
        assert_eq!(a.demand, vec![0.15, 0.2]);
        let b = &w.tasks[1];
        assert_eq!((b.submit, b.duration), (3.0, 16.0));
        assert_eq!(w.end, 20.0);
        assert_eq!(w.notes.len(), 2, "{:?}", w.notes);
    }

    #[test]
    fn malformed_lines_name_line_and_column() {
        let e = parse_task_events("1,,x,0,,0,u,0,0,0.1,0.1,0,0\n".as_bytes(), "t").unwrap_err();
        assert!(e.to_string().contains("t:1: column 3 (job ID)"), "{e}");
        let e = parse_task_events("1,,2,0,,0,u,0,0,-0.1,0.1,0,0\n".as_bytes(), "t").unwrap_err();
        assert!(e.to_string().contains("column 10 (CPU request)"), "{e}");
        let e = parse_task_events("1,2,3\n".as_bytes(), "t").unwrap_err();
        assert!(e.to_string().contains("expected 13 columns"), "{e}");
    }
}
