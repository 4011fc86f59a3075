//! A Kubernetes snapshot as an instance and its allocation: the output of
//! `kubectl get nodes -o json` (servers: each node's allocatable) and
//! `kubectl get pods -A -o json` (users: workloads, each task one pod with
//! the pod's effective request; the allocation: pods per node).

use super::quantity::parse_quantity;
use super::snapshot::{ImportSummary, Imported, Item, Merge, Snapshot};
use crate::error::{bad_input, Error};
use leontief_core::RawServer;
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};

/// Which pods make one user.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum GroupBy {
    /// The pod's controller (`namespace/Kind/name` of the controlling
    /// ownerReference; a pod without owner is its own user).
    #[default]
    Owner,
    /// The namespace.
    Namespace,
    /// The value of a label (`KEY=value`; pods without it: `KEY=<none>`).
    Label(String),
}

impl std::str::FromStr for GroupBy {
    type Err = Error;
    fn from_str(s: &str) -> Result<GroupBy, Error> {
        match s {
            "owner" => Ok(GroupBy::Owner),
            "namespace" => Ok(GroupBy::Namespace),
            _ => match s.strip_prefix("label=") {
                Some(k) if !k.is_empty() => Ok(GroupBy::Label(k.to_string())),
                _ => Err(bad_input(format!(
                    "group-by \"{s}\": use owner, namespace or label=KEY"
                ))),
            },
        }
    }
}

/// How a snapshot is read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KubernetesOptions {
    /// Which pods make one user.
    pub group_by: GroupBy,
    /// Differing request vectors within a user.
    pub merge: Merge,
    /// The resources (Kubernetes names); default cpu, memory and every
    /// other resource a counted pod requests.
    pub resources: Option<Vec<String>>,
    /// Leave users uncapped (default: a user's task cap is its number of
    /// pods, running and pending: the replicas it asked for).
    pub uncapped: bool,
}

fn items<'a>(v: &'a Value, file: &str) -> Result<&'a Vec<Value>, Error> {
    v.get("items").and_then(Value::as_array).ok_or_else(|| {
        bad_input(format!(
            "{file}: no \"items\" array (expected `kubectl get {file} -o json`)"
        ))
    })
}

fn quantities(v: Option<&Value>, at: &str) -> Result<Map<String, Value>, Error> {
    match v {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(bad_input(format!("{at} is not an object"))),
    }
}

fn quantity(v: &Value, at: &str) -> Result<f64, Error> {
    let q = match v {
        Value::String(s) => parse_quantity(s).map_err(|e| bad_input(format!("{at}: {e}")))?,
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        _ => return Err(bad_input(format!("{at} is not a quantity"))),
    };
    if q.is_nan() || q < 0.0 {
        return Err(bad_input(format!("{at} is negative")));
    }
    Ok(q)
}

/// One container's request per resource name (requests, or limits where a
/// request is absent: what the API server defaults them to).
fn container(c: &Value, at: &str) -> Result<HashMap<String, f64>, Error> {
    let req = quantities(
        c.pointer("/resources/requests"),
        &format!("{at}.resources.requests"),
    )?;
    let lim = quantities(
        c.pointer("/resources/limits"),
        &format!("{at}.resources.limits"),
    )?;
    let mut out = HashMap::new();
    for (k, v) in &lim {
        out.insert(
            k.clone(),
            quantity(v, &format!("{at}.resources.limits.{k}"))?,
        );
    }
    for (k, v) in &req {
        out.insert(
            k.clone(),
            quantity(v, &format!("{at}.resources.requests.{k}"))?,
        );
    }
    Ok(out)
}

fn add(into: &mut HashMap<String, f64>, from: &HashMap<String, f64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_insert(0.0) += v;
    }
}

fn max_into(into: &mut HashMap<String, f64>, from: &HashMap<String, f64>) {
    for (k, v) in from {
        let e = into.entry(k.clone()).or_insert(0.0);
        *e = e.max(*v);
    }
}

/// The pod's effective request, by the Kubernetes rule: the larger of
/// (the app containers plus the sidecars, restartable init containers)
/// and, for every init container, its request plus the sidecars started
/// before it; plus the pod overhead.
pub fn pod_request(pod: &Value, at: &str) -> Result<HashMap<String, f64>, Error> {
    let list = |field: &str| -> Result<Vec<Value>, Error> {
        match pod.pointer(&format!("/spec/{field}")) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.clone()),
            Some(_) => Err(bad_input(format!("{at}.spec.{field} is not an array"))),
        }
    };
    let mut running = HashMap::new();
    for (j, c) in list("containers")?.iter().enumerate() {
        add(
            &mut running,
            &container(c, &format!("{at}.spec.containers[{j}]"))?,
        );
    }
    let mut sidecars = HashMap::new();
    let mut init = HashMap::new();
    for (j, c) in list("initContainers")?.iter().enumerate() {
        let r = container(c, &format!("{at}.spec.initContainers[{j}]"))?;
        let mut start = sidecars.clone();
        add(&mut start, &r);
        max_into(&mut init, &start);
        if c.get("restartPolicy").and_then(Value::as_str) == Some("Always") {
            add(&mut sidecars, &r);
        }
    }
    add(&mut running, &sidecars);
    max_into(&mut running, &init);
    let overhead = quantities(
        pod.pointer("/spec/overhead"),
        &format!("{at}.spec.overhead"),
    )?;
    for (k, v) in &overhead {
        *running.entry(k.clone()).or_insert(0.0) +=
            quantity(v, &format!("{at}.spec.overhead.{k}"))?;
    }
    Ok(running)
}

fn text<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str)
}

fn user_key(pod: &Value, group: &GroupBy) -> String {
    let ns = text(pod, "/metadata/namespace").unwrap_or("default");
    match group {
        GroupBy::Namespace => ns.to_string(),
        GroupBy::Label(k) => {
            let v = pod
                .pointer("/metadata/labels")
                .and_then(|l| l.get(k))
                .and_then(Value::as_str)
                .unwrap_or("<none>");
            format!("{k}={v}")
        }
        GroupBy::Owner => {
            let owners = pod
                .pointer("/metadata/ownerReferences")
                .and_then(Value::as_array);
            let owner = owners.and_then(|o| {
                o.iter()
                    .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
                    .or_else(|| o.first())
            });
            match owner {
                Some(o) => format!(
                    "{ns}/{}/{}",
                    text(o, "/kind").unwrap_or("Owner"),
                    text(o, "/name").unwrap_or("?")
                ),
                None => format!("{ns}/Pod/{}", text(pod, "/metadata/name").unwrap_or("?")),
            }
        }
    }
}

/// Read a snapshot.
pub fn kubernetes(nodes: &str, pods: &str, options: &KubernetesOptions) -> Result<Imported, Error> {
    let nodes: Value =
        serde_json::from_str(nodes).map_err(|e| bad_input(format!("nodes: not JSON: {e}")))?;
    let pods: Value =
        serde_json::from_str(pods).map_err(|e| bad_input(format!("pods: not JSON: {e}")))?;
    let nodes = items(&nodes, "nodes")?;
    let pods = items(&pods, "pods")?;
    let mut node_index = HashMap::new();
    let mut allocatable = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if !n.is_object() {
            return Err(bad_input(format!(
                "nodes.items[{i}] is not an object (a Node)"
            )));
        }
        let name = text(n, "/metadata/name")
            .ok_or_else(|| bad_input(format!("nodes.items[{i}].metadata.name is missing")))?;
        if node_index.insert(name.to_string(), i).is_some() {
            return Err(bad_input(format!(
                "nodes.items[{i}]: node \"{name}\" appears twice"
            )));
        }
        let at = format!("nodes.items[{i}] ({name}).status.allocatable");
        if n.pointer("/status/allocatable").is_none() {
            return Err(bad_input(format!(
                "{at} is missing: the node's capacity for pods is not known"
            )));
        }
        let mut caps = HashMap::new();
        for (k, v) in quantities(n.pointer("/status/allocatable"), &at)? {
            caps.insert(k.clone(), quantity(&v, &format!("{at}.{k}"))?);
        }
        allocatable.push((name.to_string(), caps));
    }
    let mut summary = ImportSummary::default();

    // Requests per pod, by name, before the resources are chosen.
    let mut read = Vec::new();
    // Each pod once: by uid where it has one, else by namespace and name.
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (j, p) in pods.iter().enumerate() {
        let at = format!("pods.items[{j}]");
        if !p.is_object() {
            return Err(bad_input(format!("{at} is not an object (a Pod)")));
        }
        let name = format!(
            "pod {}/{}",
            text(p, "/metadata/namespace").unwrap_or("default"),
            text(p, "/metadata/name").unwrap_or("?")
        );
        let identity = match (text(p, "/metadata/uid"), text(p, "/metadata/name")) {
            (Some(uid), _) => Some(format!("uid {uid}")),
            (None, Some(_)) => Some(name.clone()),
            (None, None) => None,
        };
        if let Some(id) = identity {
            if let Some(first) = seen.insert(id.clone(), j) {
                return Err(bad_input(format!(
                    "{at}: {name} ({id}) is listed twice, first at pods.items[{first}]"
                )));
            }
        }
        let phase = text(p, "/status/phase").unwrap_or("Pending");
        if phase == "Succeeded" || phase == "Failed" {
            summary.leave_out(&name, "finished (Succeeded or Failed)");
            continue;
        }
        let node = match text(p, "/spec/nodeName") {
            Some(n) if !n.is_empty() => Some(*node_index.get(n).ok_or_else(|| {
                bad_input(format!("{at}.spec.nodeName \"{n}\" is not among the nodes"))
            })?),
            _ => None,
        };
        read.push((
            name,
            user_key(p, &options.group_by),
            pod_request(p, &at)?,
            node,
        ));
    }
    let resources: Vec<String> = match &options.resources {
        Some(r) => r.clone(),
        None => {
            let mut others: BTreeSet<String> = BTreeSet::new();
            for (_, _, req, _) in &read {
                others.extend(req.iter().filter(|(_, &v)| v > 0.0).map(|(k, _)| k.clone()));
            }
            let mut r = vec!["cpu".to_string(), "memory".to_string()];
            r.extend(others.into_iter().filter(|k| k != "cpu" && k != "memory"));
            r
        }
    };
    let mut list = Vec::new();
    for (name, key, req, node) in read {
        let demand: Vec<f64> = resources
            .iter()
            .map(|r| req.get(r).copied().unwrap_or(0.0))
            .collect();
        if demand.iter().all(|&d| d == 0.0) {
            summary.leave_out(&name, "BestEffort (no request on the chosen resources)");
            continue;
        }
        list.push(Item {
            name,
            key,
            demand,
            server: node,
        });
    }
    let resource_units: Vec<String> = resources
        .iter()
        .map(|r| match r.as_str() {
            "cpu" => "cpu (cores)".to_string(),
            "memory" | "ephemeral-storage" => format!("{r} (bytes)"),
            _ => r.clone(),
        })
        .collect();
    let servers = allocatable
        .into_iter()
        .map(|(name, caps)| RawServer {
            name,
            capacity: resources
                .iter()
                .map(|r| caps.get(r).copied().unwrap_or(0.0))
                .collect(),
            count: None,
        })
        .collect();
    let mut snapshot = Snapshot::new("kubernetes snapshot", resources, servers, summary);
    snapshot.summary.resources = resource_units;
    snapshot.build(list, options.merge, options.uncapped)
}
