//! A Google cluster-data 2011 snapshot at time T as an instance and its
//! allocation: machines alive at T (from `machine_events`) are servers,
//! users (or jobs) are users, and every task running at T is one task on
//! its machine. `task_events` is read with the simulator's streaming reader
//! ([`leontief_sim::workload::for_each_task_event`]).

use super::snapshot::{ImportSummary, Imported, Item, Merge, Snapshot};
use crate::error::{bad_input, Error};
use leontief_core::RawServer;
use leontief_sim::workload::for_each_task_event;
use std::collections::HashMap;
use std::io::BufRead;

/// Which tasks make one user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TraceGroup {
    /// The trace's user (hashed name).
    #[default]
    User,
    /// The job (`user/job ID`).
    Job,
}

impl std::str::FromStr for TraceGroup {
    type Err = Error;
    fn from_str(s: &str) -> Result<TraceGroup, Error> {
        match s {
            "user" => Ok(TraceGroup::User),
            "job" => Ok(TraceGroup::Job),
            _ => Err(bad_input(format!("group-by \"{s}\": use user or job"))),
        }
    }
}

/// How a trace snapshot is read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TraceOptions {
    /// The time of the snapshot, seconds (trace timestamps are
    /// microseconds).
    pub at: f64,
    /// Which tasks make one user.
    pub group_by: TraceGroup,
    /// Differing requests within a user.
    pub merge: Merge,
    /// Leave users uncapped (default: a user's cap is its tasks running or
    /// pending at T).
    pub uncapped: bool,
}

/// The state of one task at T.
#[derive(Default)]
struct TaskAt {
    user: String,
    /// Last state event at or before T: 0/7 pending, 1/8 running, else dead.
    state: Option<u8>,
    machine: Option<u64>,
    cpu: Option<f64>,
    mem: Option<f64>,
}

/// Machines alive at T with their capacities, from `machine_events`
/// (timestamp, machine ID, event type 0 ADD / 1 REMOVE / 2 UPDATE,
/// platform ID, CPUs, memory; normalised capacities).
fn machines(
    reader: impl BufRead,
    name: &str,
    at: u64,
    summary: &mut ImportSummary,
) -> Result<Vec<(u64, f64, f64)>, Error> {
    let mut state: HashMap<u64, (bool, Option<f64>, Option<f64>)> = HashMap::new();
    let mut order = Vec::new();
    for (j, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| bad_input(format!("{name}: {e}")))?;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at_line = |what: String| bad_input(format!("{name}:{}: {what}", j + 1));
        let cols: Vec<&str> = line.split(',').collect();
        if cols.len() < 6 {
            return Err(at_line(format!(
                "expected 6 columns of machine_events (timestamp, machine ID, event type, platform ID, CPUs, memory), found {}",
                cols.len()
            )));
        }
        let int = |i: usize, what: &str| {
            cols[i].trim().parse::<u64>().map_err(|_| {
                at_line(format!(
                    "column {} ({what}) is not an integer: {:?}",
                    i + 1,
                    cols[i]
                ))
            })
        };
        let real = |i: usize, what: &str| -> Result<Option<f64>, Error> {
            match cols[i].trim() {
                "" => Ok(None),
                s => match s.parse::<f64>() {
                    Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
                    _ => Err(at_line(format!(
                        "column {} ({what}) must be a number >= 0: {:?}",
                        i + 1,
                        cols[i]
                    ))),
                },
            }
        };
        let ts = int(0, "timestamp")?;
        let id = int(1, "machine ID")?;
        let kind = int(2, "event type")?;
        if kind > 2 {
            return Err(at_line(format!(
                "column 3 (event type) must be 0..=2, found {kind}"
            )));
        }
        let (cpu, mem) = (real(4, "CPUs")?, real(5, "memory")?);
        if ts > at {
            continue;
        }
        let e = state.entry(id).or_insert_with(|| {
            order.push(id);
            (false, None, None)
        });
        match kind {
            1 => e.0 = false,
            _ => {
                e.0 = true;
                if cpu.is_some() {
                    e.1 = cpu;
                }
                if mem.is_some() {
                    e.2 = mem;
                }
            }
        }
    }
    let mut out = Vec::new();
    for id in order {
        match state[&id] {
            (true, Some(c), Some(m)) if c > 0.0 || m > 0.0 => out.push((id, c, m)),
            (true, _, _) => {
                summary.leave_out(&format!("machine {id}"), "machine without capacities")
            }
            (false, _, _) => {}
        }
    }
    Ok(out)
}

/// Read a snapshot of the trace at `options.at`.
pub fn google_trace(
    task_events: impl BufRead,
    task_events_name: &str,
    machine_events: impl BufRead,
    machine_events_name: &str,
    options: &TraceOptions,
) -> Result<Imported, Error> {
    if !(options.at.is_finite() && options.at >= 0.0) {
        return Err(bad_input(format!(
            "--at {} must be a time >= 0, seconds",
            options.at
        )));
    }
    let at = (options.at * 1e6) as u64;
    let mut summary = ImportSummary::default();
    let live = machines(machine_events, machine_events_name, at, &mut summary)?;
    let index: HashMap<u64, usize> = live.iter().enumerate().map(|(i, m)| (m.0, i)).collect();
    let mut tasks: HashMap<(u64, u64), TaskAt> = HashMap::new();
    let mut order = Vec::new();
    let after = i64::MAX as u64;
    for_each_task_event(task_events, task_events_name, |e| {
        // Timestamp 0 is before the trace; 2^63 - 1 after it.
        if e.timestamp > at || e.timestamp == after {
            return Ok(());
        }
        let t = tasks.entry((e.job, e.index)).or_insert_with(|| {
            order.push((e.job, e.index));
            TaskAt::default()
        });
        if t.user.is_empty() {
            t.user = e.user;
        }
        if e.cpu.is_some() {
            t.cpu = e.cpu;
        }
        if e.mem.is_some() {
            t.mem = e.mem;
        }
        if e.kind == 1 {
            t.machine = e.machine;
        }
        t.state = Some(e.kind);
        Ok(())
    })
    .map_err(|e| bad_input(e.to_string()))?;
    let mut items = Vec::new();
    for key in order {
        let t = &tasks[&key];
        let name = format!("task {}/{}", key.0, key.1);
        let running = matches!(t.state, Some(1 | 8));
        if !running && !matches!(t.state, Some(0 | 7)) {
            summary.leave_out(&name, "not running or pending at T");
            continue;
        }
        let (Some(cpu), Some(mem)) = (t.cpu, t.mem) else {
            summary.leave_out(&name, "no CPU or memory request");
            continue;
        };
        if cpu == 0.0 && mem == 0.0 {
            summary.leave_out(&name, "requests 0 CPU and 0 memory");
            continue;
        }
        let server = match (running, t.machine) {
            (false, _) => None,
            (true, Some(m)) => match index.get(&m) {
                Some(&i) => Some(i),
                None => {
                    summary.leave_out(&name, "runs on a machine not alive at T");
                    continue;
                }
            },
            (true, None) => {
                summary.leave_out(&name, "running without a machine ID");
                continue;
            }
        };
        let key = match options.group_by {
            TraceGroup::User => t.user.clone(),
            TraceGroup::Job => format!("{}/{}", t.user, key.0),
        };
        items.push(Item {
            name,
            key,
            demand: vec![cpu, mem],
            server,
            eligible: None,
        });
    }
    let servers = live
        .iter()
        .map(|&(id, c, m)| RawServer {
            name: format!("m{id}"),
            capacity: vec![c, m],
            count: None,
        })
        .collect();
    let mut snapshot = Snapshot::new(
        &format!("google trace at {} s", options.at),
        vec!["cpu".into(), "mem".into()],
        servers,
        summary,
    );
    snapshot.summary.resources = vec![
        "cpu (normalised to the largest machine)".into(),
        "mem (normalised)".into(),
    ];
    snapshot.build(items, options.merge, options.uncapped)
}
