//! The Alibaba GPU cluster trace of 2023 (cluster-trace-gpu-v2023, the
//! "openb" node and pod lists): nodes as servers, task shapes as users,
//! GPU models as placement lists.
//!
//! * **Servers**: one per node of the node list (`sn, cpu_milli,
//!   memory_mib, gpu, model`), capacities cpu (cores), memory (MiB) and
//!   gpu (whole GPUs).
//! * **A task's request**: cpu_milli / 1000 cores, memory_mib MiB, and
//!   `num_gpu` GPUs, or `gpu_milli / 1000` of one GPU when `num_gpu` is 1
//!   (GPU sharing).
//! * **Placement**: a task asking for GPUs may run on the nodes whose GPU
//!   model its `gpu_spec` lists (`V100M16|V100M32`), or on every node with
//!   a GPU model when `gpu_spec` is empty; a task without GPUs on every
//!   node.
//! * **Which tasks**: every task of the list, or with `at` the tasks
//!   running at time T (created and scheduled at or before T, not deleted
//!   by T; the list then needs its time columns).
//! * **Users**: by task shape (request and `gpu_spec`; the default), by
//!   QoS class and shape, or one per task; each capped at its tasks.
//!
//! The trace does not say on which node a task ran, so there is no
//! allocation: the instance is what the mechanisms share out. Bad rows are
//! refused naming the file, the line and the column.

use super::snapshot::{validated, ImportSummary, Imported};
use crate::error::{bad_input, Error};
use leontief_core::{RawInstance, RawQueue, RawServer, RawUser};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::str::FromStr;

/// How tasks become users.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AlibabaGroup {
    /// One user per task shape (request and GPU models allowed).
    #[default]
    Shape,
    /// One user per QoS class and shape.
    Qos,
    /// One user per task (cap 1).
    None,
}

impl FromStr for AlibabaGroup {
    type Err = Error;
    fn from_str(s: &str) -> Result<AlibabaGroup, Error> {
        match s {
            "shape" => Ok(AlibabaGroup::Shape),
            "qos" => Ok(AlibabaGroup::Qos),
            "none" => Ok(AlibabaGroup::None),
            other => Err(bad_input(format!(
                "--group-by {other}: use shape, qos or none"
            ))),
        }
    }
}

/// What `import alibaba-gpu` reads.
#[derive(Debug, Clone, Default)]
pub struct AlibabaOptions {
    /// Only the tasks running at this time (seconds of the trace).
    pub at: Option<f64>,
    /// Users.
    pub group_by: AlibabaGroup,
    /// One queue per QoS class, each user in its class's queue (users
    /// are then grouped by QoS class and shape at least), for the
    /// hierarchical mechanisms.
    pub queues_by_qos: bool,
}

/// One CSV with its header: columns by name.
pub(super) struct Table {
    file: String,
    header: Vec<String>,
    pub(super) rows: Vec<csv::StringRecord>,
}

impl Table {
    pub(super) fn read(input: impl Read, file: &str) -> Result<Table, Error> {
        let mut r = csv::ReaderBuilder::new()
            .trim(csv::Trim::All)
            .from_reader(input);
        let header: Vec<String> = r
            .headers()
            .map_err(|e| bad_input(format!("{file}: header: {e}")))?
            .iter()
            .map(str::to_string)
            .collect();
        let rows = r
            .records()
            .enumerate()
            .map(|(j, rec)| rec.map_err(|e| bad_input(format!("{file} line {}: {e}", j + 2))))
            .collect::<Result<_, _>>()?;
        Ok(Table {
            file: file.to_string(),
            header,
            rows,
        })
    }

    pub(super) fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    pub(super) fn required(&self, name: &str) -> Result<usize, Error> {
        self.column(name).ok_or_else(|| {
            bad_input(format!(
                "{}: no column \"{name}\" (header: {})",
                self.file,
                self.header.join(",")
            ))
        })
    }

    /// Row `j`'s `col` as a finite number >= 0 (`name` for the message).
    pub(super) fn number(&self, j: usize, col: usize, name: &str) -> Result<f64, Error> {
        let text = self.rows[j].get(col).unwrap_or("");
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                bad_input(format!(
                    "{} line {} column {name}: \"{text}\" is not a number >= 0",
                    self.file,
                    j + 2
                ))
            })
    }

    /// Row `j`'s optional time column: `None` when empty.
    pub(super) fn time(
        &self,
        j: usize,
        col: Option<usize>,
        name: &str,
    ) -> Result<Option<f64>, Error> {
        match col.map(|c| self.rows[j].get(c).unwrap_or("")) {
            None | Some("") => Ok(None),
            Some(_) => self.number(j, col.unwrap_or(0), name).map(Some),
        }
    }

    pub(super) fn text(&self, j: usize, col: Option<usize>) -> &str {
        col.and_then(|c| self.rows[j].get(c)).unwrap_or("")
    }
}

/// The request columns of a pod list.
pub(super) struct Requests {
    cpu: usize,
    mem: usize,
    num_gpu: usize,
    gpu_milli: usize,
}

impl Requests {
    /// The columns, or the error naming the one missing.
    pub(super) fn find(pt: &Table) -> Result<Requests, Error> {
        Ok(Requests {
            cpu: pt.required("cpu_milli")?,
            mem: pt.required("memory_mib")?,
            num_gpu: pt.required("num_gpu")?,
            gpu_milli: pt.required("gpu_milli")?,
        })
    }

    /// Row `j`'s request: cpu in cores, memory in MiB, and `num_gpu` GPUs
    /// or `gpu_milli / 1000` of one GPU when `num_gpu` is 1 (GPU sharing).
    pub(super) fn of(&self, pt: &Table, j: usize) -> Result<Vec<f64>, Error> {
        let line = j + 2;
        let g = pt.number(j, self.num_gpu, "num_gpu")?;
        let milli = pt.number(j, self.gpu_milli, "gpu_milli")?;
        if g.fract() != 0.0 {
            return Err(bad_input(format!(
                "{} line {line} column num_gpu: {g} is not a whole number of GPUs",
                pt.file
            )));
        }
        if g == 1.0 && milli > 1000.0 {
            return Err(bad_input(format!(
                "{} line {line} column gpu_milli: {milli} is more than one GPU (1000)",
                pt.file
            )));
        }
        Ok(vec![
            pt.number(j, self.cpu, "cpu_milli")? / 1000.0,
            pt.number(j, self.mem, "memory_mib")?,
            if g == 1.0 { milli / 1000.0 } else { g },
        ])
    }
}

/// One user being read: name (its key), demand, allowed nodes, tasks.
type Shape = (String, Vec<f64>, Option<Vec<String>>, usize);

/// Read the node list and the pod list (see the module docs).
pub fn alibaba_gpu(
    nodes: impl Read,
    nodes_file: &str,
    pods: impl Read,
    pods_file: &str,
    options: &AlibabaOptions,
) -> Result<Imported, Error> {
    let (servers, models) = read_nodes(nodes, nodes_file)?;

    let pt = Table::read(pods, pods_file)?;
    if pt.column("sn").is_some() {
        return Err(bad_input(format!(
            "{pods_file} looks like a node list (it has sn): give the pod list second"
        )));
    }
    let name_c = pt.required("name")?;
    let request = Requests::find(&pt)?;
    let (spec_c, qos_c) = (pt.column("gpu_spec"), pt.column("qos"));
    let times = match options.at {
        None => None,
        Some(_) => Some((
            pt.required("creation_time")?,
            pt.required("scheduled_time")?,
            pt.required("deletion_time")?,
        )),
    };
    let mut summary = ImportSummary {
        resources: vec![
            "cpu (cores)".into(),
            "memory (MiB)".into(),
            "gpu (GPUs)".into(),
        ],
        ..ImportSummary::default()
    };
    // Users in order of first appearance.
    let mut users: Vec<Shape> = Vec::new();
    let mut user_qos: Vec<String> = Vec::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut lists: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    for j in 0..pt.rows.len() {
        let name = pt.text(j, Some(name_c)).to_string();
        if let (Some(t), Some((created, scheduled, deleted))) = (options.at, times) {
            let c = pt.time(j, Some(created), "creation_time")?;
            let s = pt.time(j, Some(scheduled), "scheduled_time")?;
            let d = pt.time(j, Some(deleted), "deletion_time")?;
            let running =
                c.is_some_and(|c| c <= t) && s.is_some_and(|s| s <= t) && d.is_none_or(|d| d > t);
            if !running {
                summary.leave_out(&name, "not running at --at");
                continue;
            }
        }
        let demand = request.of(&pt, j)?;
        let gpus = demand[2];
        if demand.iter().all(|&d| d == 0.0) {
            summary.leave_out(&name, "requests nothing");
            continue;
        }
        let spec = pt.text(j, spec_c).to_string();
        let allowed = match lists.get(&spec) {
            Some(l) if gpus > 0.0 => l.clone(),
            _ if gpus == 0.0 => None,
            _ => {
                let wanted: Vec<&str> = spec.split('|').filter(|m| !m.is_empty()).collect();
                let l: Vec<String> = servers
                    .iter()
                    .zip(&models)
                    .filter(|(s, m)| {
                        s.capacity[2] > 0.0
                            && !m.is_empty()
                            && (wanted.is_empty() || wanted.contains(&m.as_str()))
                    })
                    .map(|(s, _)| s.name.clone())
                    .collect();
                lists.insert(spec.clone(), Some(l.clone()));
                Some(l)
            }
        };
        if allowed.as_ref().is_some_and(Vec::is_empty) {
            summary.leave_out(
                &name,
                &format!("no node has a GPU of the models it allows ({spec})"),
            );
            continue;
        }
        let shape = format!(
            "cpu{}-mem{}-gpu{}{}",
            demand[0],
            demand[1],
            demand[2],
            if spec.is_empty() || gpus == 0.0 {
                String::new()
            } else {
                format!("-{spec}")
            }
        );
        let qos = match pt.text(j, qos_c) {
            "" => "unknown",
            q => q,
        }
        .to_string();
        let key = match options.group_by {
            AlibabaGroup::Shape if options.queues_by_qos => format!("{qos}/{shape}"),
            AlibabaGroup::Shape => shape,
            AlibabaGroup::Qos => format!("{}/{shape}", pt.text(j, qos_c)),
            AlibabaGroup::None => name.clone(),
        };
        summary.pending += 1;
        match by_key.get(&key) {
            Some(&u) => users[u].3 += 1,
            None => {
                by_key.insert(key.clone(), users.len());
                users.push((key, demand, allowed, 1));
                user_qos.push(qos);
            }
        }
    }
    summary.servers = servers.len();
    summary.users = users.len();
    let k = servers.len();
    let mut classes: Vec<String> = user_qos.clone();
    classes.sort();
    classes.dedup();
    let queues = options.queues_by_qos.then(|| {
        classes
            .iter()
            .map(|q| RawQueue {
                name: q.clone(),
                parent: None,
                weight: None,
                guarantee: None,
                limit: None,
                lending_limit: None,
            })
            .collect::<Vec<_>>()
    });
    let raw_users: Vec<RawUser> = users
        .into_iter()
        .zip(user_qos)
        .map(|((name, demand, allowed, tasks), qos)| RawUser {
            queue: options.queues_by_qos.then_some(qos),
            name,
            demand,
            weight: None,
            tasks: Some(tasks as f64),
            servers: allowed,
            rank_weights: None,
        })
        .collect();
    let tasks = vec![vec![0.0; k]; raw_users.len()];
    let origins: Vec<String> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{nodes_file} line {} ({})", i + 2, s.name))
        .collect();
    validated(
        Imported {
            instance: RawInstance {
                queues,
                quantum: None,
                name: Some("alibaba gpu trace".into()),
                description: None,
                resources: vec!["cpu".into(), "memory".into(), "gpu".into()],
                servers,
                users: raw_users,
            },
            tasks,
            summary,
        },
        &|i| origins[i].clone(),
    )
}

/// The node list: one server per node (cpu in cores, memory in MiB, gpu
/// in GPUs) and each node's GPU model (empty without GPUs).
pub(crate) fn read_nodes(
    nodes: impl Read,
    nodes_file: &str,
) -> Result<(Vec<RawServer>, Vec<String>), Error> {
    let nt = Table::read(nodes, nodes_file)?;
    if nt.column("num_gpu").is_some() {
        return Err(bad_input(format!(
            "{nodes_file} looks like a pod list (it has num_gpu): give the node list first"
        )));
    }
    let (sn, cpu, mem, gpu) = (
        nt.required("sn")?,
        nt.required("cpu_milli")?,
        nt.required("memory_mib")?,
        nt.required("gpu")?,
    );
    let model_col = nt.column("model");
    let mut servers = Vec::with_capacity(nt.rows.len());
    let mut models: Vec<String> = Vec::with_capacity(nt.rows.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for j in 0..nt.rows.len() {
        let name = nt.text(j, Some(sn)).to_string();
        if name.is_empty() {
            return Err(bad_input(format!(
                "{nodes_file} line {} column sn: empty",
                j + 2
            )));
        }
        if let Some(first) = seen.insert(name.clone(), j) {
            return Err(bad_input(format!(
                "{nodes_file} line {} column sn: node {name} appears twice (first on line {})",
                j + 2,
                first + 2
            )));
        }
        let capacity = vec![
            nt.number(j, cpu, "cpu_milli")? / 1000.0,
            nt.number(j, mem, "memory_mib")?,
            nt.number(j, gpu, "gpu")?,
        ];
        let model = nt.text(j, model_col).to_string();
        if capacity[2] > 0.0 && model.is_empty() {
            return Err(bad_input(format!(
                "{nodes_file} line {} column model: empty on a node with {} GPUs",
                j + 2,
                capacity[2]
            )));
        }
        servers.push(RawServer {
            name,
            capacity,
            count: None,
        });
        models.push(model);
    }

    Ok((servers, models))
}
