//! A Kubernetes snapshot as an instance and its allocation: the output of
//! `kubectl get nodes -o json` (servers: each node's allocatable) and
//! `kubectl get pods -A -o json` (users: workloads, each task one pod with
//! the pod's effective request; the allocation: pods per node).

use super::placement::{NodeFacts, PodRules};
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

pub(crate) fn items<'a>(v: &'a Value, file: &str) -> Result<&'a Vec<Value>, Error> {
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

pub(crate) fn quantity(v: &Value, at: &str) -> Result<f64, Error> {
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

/// The document of `file` as JSON, with a hint when it is YAML.
pub(crate) fn document(text: &str, file: &str) -> Result<Value, Error> {
    serde_json::from_str(text).map_err(|e| {
        let yaml = text.trim_start().starts_with("apiVersion:")
            || text.trim_start().starts_with("items:")
            || text.trim_start().starts_with("kind:");
        bad_input(if yaml {
            format!("{file}: this is YAML; write it with `kubectl get {file} -o json`")
        } else {
            format!("{file}: not JSON: {e}")
        })
    })
}

/// Refuse a list of the wrong objects (the two files swapped, say).
fn check_kind(v: &Value, file: &str, kind: &str) -> Result<(), Error> {
    let upper = if file == "nodes" { "NODES" } else { "PODS" };
    let list = v.get("kind").and_then(Value::as_str).unwrap_or("List");
    if list != "List" && list != format!("{kind}List") {
        return Err(bad_input(format!(
            "{upper} holds {list}, not a {kind}List: expected `kubectl get {file} -o json`{}",
            if list == "NodeList" || list == "PodList" {
                " (are the two files swapped?)"
            } else {
                ""
            }
        )));
    }
    if let Some(items) = v.get("items").and_then(Value::as_array) {
        for (i, item) in items.iter().enumerate() {
            match item.get("kind").and_then(Value::as_str) {
                Some(k) if k != kind => {
                    return Err(bad_input(format!(
                        "{file}.items[{i}] is a {k}, not a {kind}: expected `kubectl get {file} -o json`{}",
                        if k == "Node" || k == "Pod" {
                            " (are the two files swapped?)"
                        } else {
                            ""
                        }
                    )))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// A static pod's mirror: the kubelet runs it from a file on its node.
fn is_mirror(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some()
        || pod
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .is_some_and(|o| {
                o.iter()
                    .any(|r| r.get("kind").and_then(Value::as_str) == Some("Node"))
            })
}

/// The host ports a pod binds (`hostPort 80/TCP`), each a resource of
/// capacity 1 per node.
fn host_ports(pod: &Value, at: &str) -> Result<BTreeSet<String>, Error> {
    let mut out = BTreeSet::new();
    for field in ["containers", "initContainers"] {
        let Some(list) = pod
            .pointer(&format!("/spec/{field}"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        for (j, c) in list.iter().enumerate() {
            let Some(ports) = c.get("ports").and_then(Value::as_array) else {
                continue;
            };
            for (k, p) in ports.iter().enumerate() {
                let Some(hp) = p.get("hostPort").filter(|v| !v.is_null()) else {
                    continue;
                };
                if hp.as_u64() == Some(0) {
                    continue;
                }
                let port = hp.as_u64().filter(|&v| v <= 65535).ok_or_else(|| {
                    bad_input(format!(
                        "{at}.spec.{field}[{j}].ports[{k}].hostPort is not a port (1 to 65535)"
                    ))
                })?;
                let protocol = p.get("protocol").and_then(Value::as_str).unwrap_or("TCP");
                out.insert(format!("hostPort {port}/{protocol}"));
            }
        }
    }
    Ok(out)
}

/// One pod read, before the resources are chosen.
struct Read {
    name: String,
    key: String,
    request: HashMap<String, f64>,
    node: Option<usize>,
    eligible: Option<Vec<usize>>,
}

/// Read a snapshot.
pub fn kubernetes(nodes: &str, pods: &str, options: &KubernetesOptions) -> Result<Imported, Error> {
    let nodes = document(nodes, "nodes")?;
    let pods = document(pods, "pods")?;
    check_kind(&nodes, "nodes", "Node")?;
    check_kind(&pods, "pods", "Pod")?;
    let nodes = items(&nodes, "nodes")?;
    let pods = items(&pods, "pods")?;
    let mut node_index = HashMap::new();
    let mut allocatable = Vec::new();
    let mut facts = Vec::with_capacity(nodes.len());
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
        facts.push(NodeFacts::read(
            n,
            name,
            &format!("nodes.items[{i}] ({name})"),
        )?);
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
            Some(n) if !n.is_empty() => match node_index.get(n) {
                Some(&i) => Some(i),
                None => {
                    summary.leave_out(&name, "bound to a node missing from the node list");
                    continue;
                }
            },
            _ => None,
        };
        let mirror = is_mirror(p);
        let rules = PodRules::read(p, &at)?;
        // A static pod stays on its node; any other may go where the
        // scheduler would put a new replica, and where it is bound.
        let mut eligible: Vec<usize> = if mirror {
            Vec::new()
        } else {
            (0..facts.len())
                .filter(|&i| rules.refusal(&facts[i]).is_none())
                .collect()
        };
        if let Some(i) = node {
            if let Err(at) = eligible.binary_search(&i) {
                eligible.insert(at, i);
            }
        }
        if eligible.is_empty() {
            let why = facts
                .first()
                .and_then(|f| rules.refusal(f).map(|r| format!(" ({}: {r})", f.name)))
                .unwrap_or_default();
            summary.leave_out(
                &format!("{name}{why}"),
                "Pending and no node accepts it (nodeSelector, affinity, taints)",
            );
            continue;
        }
        let key = if mirror && options.group_by == GroupBy::Owner {
            format!(
                "{}/Pod/{}",
                text(p, "/metadata/namespace").unwrap_or("default"),
                text(p, "/metadata/name").unwrap_or("?")
            )
        } else {
            user_key(p, &options.group_by)
        };
        let mut request = pod_request(p, &at)?;
        for port in host_ports(p, &at)? {
            request.insert(port, 1.0);
        }
        read.push(Read {
            name,
            key,
            request,
            node,
            eligible: (eligible.len() < facts.len()).then_some(eligible),
        });
    }
    let ports: BTreeSet<String> = read
        .iter()
        .flat_map(|r| {
            r.request
                .keys()
                .filter(|k| k.starts_with("hostPort "))
                .cloned()
        })
        .collect();
    let mut resources: Vec<String> = match &options.resources {
        Some(r) => r.clone(),
        None => {
            let mut others: BTreeSet<String> = BTreeSet::new();
            for r in &read {
                others.extend(
                    r.request
                        .iter()
                        .filter(|(k, &v)| v > 0.0 && !k.starts_with("hostPort "))
                        .map(|(k, _)| k.clone()),
                );
            }
            let mut r = vec!["cpu".to_string(), "memory".to_string()];
            r.extend(others.into_iter().filter(|k| k != "cpu" && k != "memory"));
            r
        }
    };
    // Host ports are placement rules, not a choice of resources.
    for p in ports {
        if !resources.contains(&p) {
            resources.push(p);
        }
    }
    let mut list = Vec::new();
    for r in read {
        let demand: Vec<f64> = resources
            .iter()
            .map(|res| match res.as_str() {
                "pods" => 1.0,
                _ => r.request.get(res).copied().unwrap_or(0.0),
            })
            .collect();
        if demand.iter().all(|&d| d == 0.0) {
            summary.leave_out(&r.name, "BestEffort (no request on the chosen resources)");
            continue;
        }
        list.push(Item {
            name: r.name,
            key: r.key,
            demand,
            server: r.node,
            eligible: r.eligible,
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
    let servers: Vec<RawServer> = allocatable
        .into_iter()
        .map(|(name, caps)| RawServer {
            name,
            capacity: resources
                .iter()
                .map(|r| {
                    if r.starts_with("hostPort ") {
                        1.0
                    } else {
                        caps.get(r).copied().unwrap_or(0.0)
                    }
                })
                .collect(),
            count: None,
        })
        .collect();
    let origins = (0..servers.len())
        .map(|i| format!("nodes.items[{i}] ({}).status.allocatable", servers[i].name))
        .collect();
    let mut snapshot =
        Snapshot::new("kubernetes snapshot", resources, servers, summary).with_origins(origins);
    snapshot.summary.resources = resource_units;
    snapshot.build(list, options.merge, options.uncapped)
}
