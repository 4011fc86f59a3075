//! A Kueue configuration as an instance with queues: the output of
//! `kubectl get clusterqueues -o json`, `kubectl get cohorts -o json` and
//! `kubectl get workloads -A -o json` (and, for workloads not yet
//! admitted, `kubectl get localqueues -A -o json` to find their
//! ClusterQueue).
//!
//! * Resources: every (flavor, resource) pair of the ClusterQueues'
//!   resource groups, named `flavor/resource` (`default/cpu`,
//!   `a100/nvidia.com/gpu`), in Kubernetes' base units (cores, bytes).
//! * Servers: one pool holding every quota (Kueue's capacity is its
//!   quotas, not its nodes).
//! * Queues: cohorts (parent: `spec.parentName`) and ClusterQueues
//!   (parent: `spec.cohortName`); a queue's guarantee is its subtree's
//!   nominal quota, its limit nominal quota plus borrowingLimit; a
//!   top-level cohort, and a ClusterQueue without one, cannot borrow
//!   beyond its own quota (limit = guarantee); `fairSharing.weight` is the
//!   weight; `lendingLimit` is the queue's `lending_limit` (the rest of
//!   its quota stays reserved for it).
//! * Users: one per workload (`namespace/name`), whose one task is the
//!   whole workload (Kueue admits a workload whole): its demand is every
//!   pod set's `count` times the pod template's effective request, on the
//!   flavors its admission assigned (or, pending, the first flavor of its
//!   ClusterQueue covering each resource), at most 1 task; the
//!   allocation: 1 for an admitted workload (the summary counts pods).

use super::kubernetes::{document, items, pod_request, quantity};
use super::snapshot::{ImportSummary, Imported};
use crate::error::{bad_input, Error};
use leontief_core::{RawInstance, RawQueue, RawServer, RawUser};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// The most ClusterQueues, cohorts and workloads one import reads.
pub const MAX_KUEUE_OBJECTS: usize = 100_000;

fn name_of(v: &Value, at: &str) -> Result<String, Error> {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| bad_input(format!("{at}.metadata.name is missing")))
}

/// `spec.<new>` or, in older API versions, `spec.<old>`.
fn spec_str<'a>(v: &'a Value, new: &str, old: &str) -> Option<&'a str> {
    v.pointer(&format!("/spec/{new}"))
        .or_else(|| v.pointer(&format!("/spec/{old}")))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn weight_of(v: &Value, at: &str) -> Result<Option<f64>, Error> {
    match v.pointer("/spec/fairSharing/weight") {
        None | Some(Value::Null) => Ok(None),
        Some(w) => {
            let x = quantity(w, &format!("{at}.spec.fairSharing.weight"))?;
            if x <= 0.0 {
                return Err(bad_input(format!(
                    "{at}.spec.fairSharing.weight is 0: leontief's weights are > 0 (a weight of 0 never borrows first; give it a small weight instead)"
                )));
            }
            Ok(Some(x))
        }
    }
}

/// One object's quotas: nominal and borrowing limit per `flavor/resource`,
/// the flavors in order per resource, and the lendingLimits set.
#[derive(Default)]
struct Quotas {
    nominal: BTreeMap<String, f64>,
    borrowing: BTreeMap<String, f64>,
    flavors: BTreeMap<String, Vec<String>>,
    lending: BTreeMap<String, f64>,
}

fn quotas(v: &Value, at: &str) -> Result<Quotas, Error> {
    let mut q = Quotas::default();
    let groups = match v.pointer("/spec/resourceGroups") {
        None | Some(Value::Null) => return Ok(q),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(bad_input(format!(
                "{at}.spec.resourceGroups is not an array"
            )))
        }
    };
    for (g, group) in groups.iter().enumerate() {
        let gat = format!("{at}.spec.resourceGroups[{g}]");
        let flavors = group
            .get("flavors")
            .and_then(Value::as_array)
            .ok_or_else(|| bad_input(format!("{gat}.flavors is missing")))?;
        for (f, flavor) in flavors.iter().enumerate() {
            let fat = format!("{gat}.flavors[{f}]");
            let fname = flavor
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad_input(format!("{fat}.name is missing")))?;
            let resources = flavor
                .get("resources")
                .and_then(Value::as_array)
                .ok_or_else(|| bad_input(format!("{fat}.resources is missing")))?;
            for (r, res) in resources.iter().enumerate() {
                let rat = format!("{fat}.resources[{r}]");
                let rname = res
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad_input(format!("{rat}.name is missing")))?;
                let key = format!("{fname}/{rname}");
                let nominal = res
                    .get("nominalQuota")
                    .ok_or_else(|| bad_input(format!("{rat}.nominalQuota is missing")))?;
                *q.nominal.entry(key.clone()).or_insert(0.0) +=
                    quantity(nominal, &format!("{rat}.nominalQuota"))?;
                if let Some(b) = res.get("borrowingLimit").filter(|b| !b.is_null()) {
                    *q.borrowing.entry(key.clone()).or_insert(0.0) +=
                        quantity(b, &format!("{rat}.borrowingLimit"))?;
                }
                if let Some(l) = res.get("lendingLimit").filter(|l| !l.is_null()) {
                    *q.lending.entry(key.clone()).or_insert(0.0) +=
                        quantity(l, &format!("{rat}.lendingLimit"))?;
                }
                q.flavors
                    .entry(rname.to_string())
                    .or_default()
                    .push(fname.to_string());
            }
        }
    }
    Ok(q)
}

struct Node {
    name: String,
    parent: Option<String>,
    weight: Option<f64>,
    quotas: Quotas,
    cluster_queue: bool,
}

/// Read a Kueue configuration (see the module).
pub fn kueue(
    cluster_queues: &str,
    cohorts: &str,
    workloads: &str,
    local_queues: Option<&str>,
) -> Result<Imported, Error> {
    let cq_doc = document(cluster_queues, "clusterqueues")?;
    let co_doc = document(cohorts, "cohorts")?;
    let wl_doc = document(workloads, "workloads")?;
    let lq_doc = local_queues
        .map(|t| document(t, "localqueues"))
        .transpose()?;
    let cq_items = items(&cq_doc, "clusterqueues")?;
    let co_items = items(&co_doc, "cohorts")?;
    let wl_items = items(&wl_doc, "workloads")?;
    for (what, n) in [
        ("clusterqueues", cq_items.len()),
        ("cohorts", co_items.len()),
        ("workloads", wl_items.len()),
    ] {
        if n > MAX_KUEUE_OBJECTS {
            return Err(bad_input(format!(
                "{what}: {n} items, above {MAX_KUEUE_OBJECTS}, the most one import reads"
            )));
        }
    }
    let mut summary = ImportSummary::default();
    let mut nodes: Vec<Node> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, c) in co_items.iter().enumerate() {
        let at = format!("cohorts.items[{i}]");
        let name = name_of(c, &at)?;
        let at = format!("{at} ({name})");
        if index.insert(name.clone(), nodes.len()).is_some() {
            return Err(bad_input(format!("{at}: a second cohort named {name}")));
        }
        nodes.push(Node {
            parent: spec_str(c, "parentName", "parent").map(str::to_string),
            weight: weight_of(c, &at)?,
            quotas: quotas(c, &at)?,
            cluster_queue: false,
            name,
        });
    }
    let first_cq = nodes.len();
    for (i, c) in cq_items.iter().enumerate() {
        let at = format!("clusterqueues.items[{i}]");
        let name = name_of(c, &at)?;
        let at = format!("{at} ({name})");
        if index.contains_key(&name) {
            return Err(bad_input(format!(
                "{at}: the name {name} is already a cohort's or another ClusterQueue's"
            )));
        }
        index.insert(name.clone(), nodes.len());
        nodes.push(Node {
            parent: spec_str(c, "cohortName", "cohort").map(str::to_string),
            weight: weight_of(c, &at)?,
            quotas: quotas(c, &at)?,
            cluster_queue: true,
            name,
        });
    }
    // Cohorts named but not listed exist implicitly, without quota.
    for j in 0..nodes.len() {
        if let Some(p) = nodes[j].parent.clone() {
            if !index.contains_key(&p) {
                index.insert(p.clone(), nodes.len());
                summary.notes.push(format!(
                    "cohort {p} is not listed: taken as an implicit cohort without quota"
                ));
                nodes.push(Node {
                    name: p,
                    parent: None,
                    weight: None,
                    quotas: Quotas::default(),
                    cluster_queue: false,
                });
            } else if nodes[index[&p]].cluster_queue {
                return Err(bad_input(format!(
                    "{}: its cohort {p} is a ClusterQueue",
                    nodes[j].name
                )));
            }
        }
    }
    // Resources: every flavor/resource with a quota anywhere.
    let mut resources: Vec<String> = nodes
        .iter()
        .flat_map(|n| n.quotas.nominal.keys().cloned())
        .collect();
    resources.sort();
    resources.dedup();
    if resources.is_empty() {
        return Err(bad_input(
            "clusterqueues: no resource group has a quota: nothing to share",
        ));
    }
    let m = resources.len();
    let col: HashMap<&str, usize> = resources
        .iter()
        .enumerate()
        .map(|(r, s)| (s.as_str(), r))
        .collect();
    // Subtree quotas, children before parents.
    let count = nodes.len();
    let parent: Vec<Option<usize>> = nodes
        .iter()
        .map(|n| n.parent.as_ref().map(|p| index[p]))
        .collect();
    let mut depth = vec![0usize; count];
    for v in 0..count {
        let mut at = parent[v];
        let mut d = 0;
        while let Some(p) = at {
            d += 1;
            if d > count {
                return Err(bad_input(format!(
                    "cohorts: {} sits in a cycle of parents",
                    nodes[v].name
                )));
            }
            at = parent[p];
        }
        depth[v] = d;
    }
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&v| std::cmp::Reverse(depth[v]));
    let mut subtree = vec![vec![0.0; m]; count];
    for &v in &order {
        for (k, &x) in &nodes[v].quotas.nominal {
            subtree[v][col[k.as_str()]] += x;
        }
        if let Some(p) = parent[v] {
            let add = subtree[v].clone();
            for (a, b) in subtree[p].iter_mut().zip(add) {
                *a += b;
            }
        }
    }
    let mut total = vec![0.0; m];
    for v in (0..count).filter(|&v| parent[v].is_none()) {
        for (t, s) in total.iter_mut().zip(&subtree[v]) {
            *t += s;
        }
    }
    let queues: Vec<RawQueue> = (0..count)
        .map(|v| {
            let n = &nodes[v];
            let g = subtree[v].clone();
            // A top-level node cannot borrow beyond its own quota; a node
            // with borrowing limits may borrow that much more of those
            // resources (the others without limit: the pool).
            let limit = if parent[v].is_none() {
                Some(g.clone())
            } else if n.quotas.borrowing.is_empty() {
                None
            } else {
                Some(
                    (0..m)
                        .map(|r| match n.quotas.borrowing.get(&resources[r]) {
                            Some(b) => g[r] + b,
                            None => total[r],
                        })
                        .collect(),
                )
            };
            // lendingLimit: of its own quota, only that much is lent; the
            // rest stays reserved for its subtree.
            let lending_limit = (!n.quotas.lending.is_empty()).then(|| {
                (0..m)
                    .map(|r| {
                        let key = &resources[r];
                        match n.quotas.lending.get(key) {
                            Some(l) => {
                                let own = n.quotas.nominal.get(key).copied().unwrap_or(0.0);
                                (g[r] - (own - l.min(own)).max(0.0)).max(0.0)
                            }
                            None => g[r],
                        }
                    })
                    .collect()
            });
            RawQueue {
                name: n.name.clone(),
                parent: n.parent.clone(),
                weight: n.weight,
                guarantee: Some(g),
                limit,
                lending_limit,
            }
        })
        .collect();
    // LocalQueue -> ClusterQueue.
    let mut local: HashMap<(String, String), String> = HashMap::new();
    if let Some(doc) = &lq_doc {
        for (i, lq) in items(doc, "localqueues")?.iter().enumerate() {
            let at = format!("localqueues.items[{i}]");
            let name = name_of(lq, &at)?;
            let ns = lq
                .pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("default")
                .to_string();
            let cq = spec_str(lq, "clusterQueue", "clusterQueue")
                .ok_or_else(|| bad_input(format!("{at} ({name}).spec.clusterQueue is missing")))?;
            local.insert((ns, name), cq.to_string());
        }
    }
    let mut users = Vec::new();
    let mut tasks = Vec::new();
    for (i, w) in wl_items.iter().enumerate() {
        let at = format!("workloads.items[{i}]");
        let name = name_of(w, &at)?;
        let ns = w
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default");
        let full = format!("{ns}/{name}");
        let at = format!("{at} ({full})");
        let admitted = w.pointer("/status/admission").filter(|a| !a.is_null());
        let cq = match admitted
            .and_then(|a| a.get("clusterQueue"))
            .and_then(Value::as_str)
        {
            Some(cq) => cq.to_string(),
            None => {
                let lq = w
                    .pointer("/spec/queueName")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad_input(format!("{at}.spec.queueName is missing")))?;
                match local.get(&(ns.to_string(), lq.to_string())) {
                    Some(cq) => cq.clone(),
                    None if lq_doc.is_none() => {
                        return Err(bad_input(format!(
                            "{at} is not admitted and its LocalQueue {lq} needs the localqueues list (--local-queues) to find its ClusterQueue"
                        )))
                    }
                    None => {
                        summary.leave_out(&full, "its LocalQueue is not in the localqueues list");
                        continue;
                    }
                }
            }
        };
        let Some(&v) = index.get(&cq).filter(|&&v| v >= first_cq) else {
            summary.leave_out(&full, "its ClusterQueue is not in the clusterqueues list");
            continue;
        };
        let sets = w
            .pointer("/spec/podSets")
            .and_then(Value::as_array)
            .ok_or_else(|| bad_input(format!("{at}.spec.podSets is missing")))?;
        // The whole workload is one task: Kueue admits it whole.
        let mut demand = vec![0.0; m];
        let mut pods = 0.0;
        let mut uncovered = None;
        for (j, set) in sets.iter().enumerate() {
            let sat = format!("{at}.spec.podSets[{j}]");
            let count = set
                .get("count")
                .and_then(Value::as_f64)
                .filter(|c| *c >= 0.0 && c.fract() == 0.0)
                .ok_or_else(|| bad_input(format!("{sat}.count is not a whole number >= 0")))?;
            let template = set
                .get("template")
                .ok_or_else(|| bad_input(format!("{sat}.template is missing")))?;
            let request = pod_request(template, &format!("{sat}.template"))?;
            let assigned = admitted
                .and_then(|a| a.pointer(&format!("/podSetAssignments/{j}/flavors")))
                .and_then(Value::as_object);
            pods += count;
            for (res, &x) in &request {
                if x == 0.0 {
                    continue;
                }
                let flavor = assigned
                    .and_then(|f| f.get(res))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| {
                        nodes[v]
                            .quotas
                            .flavors
                            .get(res)
                            .and_then(|f| f.first().cloned())
                    });
                match flavor.and_then(|f| col.get(format!("{f}/{res}").as_str()).copied()) {
                    Some(r) => demand[r] += count * x,
                    None => uncovered = Some(res.clone()),
                }
            }
        }
        if let Some(res) = uncovered {
            summary.leave_out(
                &full,
                &format!("requests {res}, which its ClusterQueue does not cover"),
            );
            continue;
        }
        if pods == 0.0 || demand.iter().all(|&d| d == 0.0) {
            summary.leave_out(&full, "no pods, or no request of a covered resource");
            continue;
        }
        let placed = if admitted.is_some() { 1.0 } else { 0.0 };
        summary.placed += (placed * pods) as usize;
        summary.pending += ((1.0 - placed) * pods) as usize;
        users.push(RawUser {
            name: full.clone(),
            demand,
            weight: None,
            tasks: Some(1.0),
            servers: None,
            rank_weights: None,
            queue: Some(cq.clone()),
        });
        tasks.push(vec![placed]);
    }
    if users.is_empty() {
        return Err(bad_input(
            "workloads: no workload requests a covered resource",
        ));
    }
    summary.servers = 1;
    summary.users = users.len();
    summary.resources = resources
        .iter()
        .map(|r| {
            let unit = if r.ends_with("/cpu") {
                "cores"
            } else if r.ends_with("/memory") || r.ends_with("storage") {
                "bytes"
            } else {
                "units"
            };
            format!("{r} ({unit})")
        })
        .collect();
    let instance = RawInstance {
        name: Some("kueue".into()),
        description: Some(
            "a Kueue configuration: the pool holds every quota; queues are cohorts and ClusterQueues; users are workload pod sets"
                .into(),
        ),
        resources,
        servers: vec![RawServer {
            name: "pool".into(),
            capacity: total,
            count: None,
        }],
        users,
        queues: Some(queues),
        quantum: None,
    };
    Ok(Imported {
        instance,
        tasks,
        summary,
    })
}
