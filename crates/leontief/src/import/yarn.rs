//! A YARN Fair Scheduler configuration as an instance with queues: the
//! allocation file (`fair-scheduler.xml`: the queue tree with `weight`,
//! `minResources`, `maxResources`, `schedulingPolicy`) and the
//! ResourceManager's `ws/v1/cluster/apps` JSON (the applications, their
//! queues, running containers and outstanding requests), with the
//! cluster's total from `ws/v1/cluster/metrics` or given.
//!
//! * Resources: `memory-mb` (MB) and `vcores`, counted in whole units
//!   (`quantum` [1, 1], as YARN's `long` shares are).
//! * Servers: one pool of the cluster's total.
//! * Queues: every `<queue>` (names are paths without `root.`: `eng`,
//!   `eng.dev`); `minResources` is the guarantee, `maxResources` the limit
//!   (percentages of the cluster allowed), `weight` the weight; a queue an
//!   application names but the file does not is created under its parent,
//!   as YARN does.
//! * Users: one per application and container shape (running containers:
//!   allocated / running; outstanding: each `ANY` request's capability),
//!   tasks its containers; the allocation: its running containers.

use super::snapshot::{ImportSummary, Imported};
use crate::error::{bad_input, Error};
use leontief_core::{RawInstance, RawQueue, RawServer, RawUser};
use quick_xml::events::Event;
use quick_xml::Reader;
use serde_json::Value;

/// The most queues and applications one import reads.
pub const MAX_YARN_OBJECTS: usize = 100_000;

/// One queue of the allocation file.
#[derive(Debug, Clone, Default)]
struct XmlQueue {
    path: String,
    weight: Option<f64>,
    min: Option<String>,
    max: Option<String>,
    line: usize,
}

/// A resource amount of the allocation file, `[mb, vcores]`, absolute or
/// as a fraction of the cluster: `1024 mb, 2 vcores`,
/// `memory-mb=1024, vcores=2`, `50%`, `50% memory, 25% cpu`,
/// `memory-mb=50%, vcores=25%`.
fn amount(text: &str, cluster: [f64; 2], at: &str) -> Result<[f64; 2], Error> {
    let t = text.trim().to_ascii_lowercase();
    let bad = |why: &str| bad_input(format!("{at}: \"{text}\" {why}"));
    let number = |s: &str| -> Result<f64, Error> {
        let s = s.trim();
        let v: f64 = s
            .parse()
            .map_err(|_| bad("holds a number that does not parse"))?;
        if !v.is_finite() || v < 0.0 {
            return Err(bad("holds a negative or non-finite number"));
        }
        Ok(v)
    };
    let pct = |s: &str| -> Result<Option<f64>, Error> {
        match s.trim().strip_suffix('%') {
            Some(p) => Ok(Some(number(p)? / 100.0)),
            None => Ok(None),
        }
    };
    if !t.contains(',') && !t.contains('=') {
        if let Some(f) = pct(&t)? {
            return Ok([f * cluster[0], f * cluster[1]]);
        }
    }
    let mut out = [None, None];
    for part in t.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = if let Some((k, v)) = part.split_once('=') {
            (k.trim().to_string(), v.trim().to_string())
        } else {
            let mut w = part.split_whitespace();
            let v = w.next().unwrap_or("").to_string();
            (w.next().unwrap_or("").to_string(), v)
        };
        let r = match key.as_str() {
            "mb" | "memory" | "memory-mb" => 0,
            "vcores" | "cpu" => 1,
            "" => return Err(bad("names no resource (mb, vcores)")),
            other => {
                return Err(bad(&format!(
                    "names {other}: only memory-mb and vcores are read"
                )))
            }
        };
        let v = match pct(&value)? {
            Some(f) => f * cluster[r],
            None => number(value.trim_end_matches("mb").trim_end_matches("vcores"))?,
        };
        out[r] = Some(v);
    }
    match out {
        [Some(a), Some(b)] => Ok([a, b]),
        _ => Err(bad("does not give both memory and vcores")),
    }
}

/// The queues of the allocation file, in document order.
fn read_xml(xml: &str) -> Result<Vec<XmlQueue>, Error> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().trim_text(true);
    let mut stack: Vec<XmlQueue> = Vec::new();
    let mut done: Vec<XmlQueue> = Vec::new();
    let mut field: Option<String> = None;
    let mut saw_allocations = false;
    // The line an event ends on (a tag's own line).
    let line = |pos: u64| {
        1 + xml.as_bytes()[..(pos as usize).min(xml.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    };
    loop {
        let ev = reader.read_event();
        let pos = reader.buffer_position();
        let ev = ev.map_err(|e| bad_input(format!("allocation file line {}: {e}", line(pos))))?;
        match ev {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"allocations" => {
                saw_allocations = true;
            }
            Event::Start(e) if e.name().as_ref() == b"queue" || e.name().as_ref() == b"pool" => {
                let mut name = None;
                for a in e.attributes().flatten() {
                    if a.key.as_ref() == b"name" {
                        name = Some(
                            a.unescape_value()
                                .map_err(|err| {
                                    bad_input(format!("allocation file line {}: {err}", line(pos)))
                                })?
                                .to_string(),
                        );
                    }
                }
                let name = name.ok_or_else(|| {
                    bad_input(format!(
                        "allocation file line {}: a <queue> without a name",
                        line(pos)
                    ))
                })?;
                let parent = stack.last().map(|q| q.path.clone()).unwrap_or_default();
                let path = if parent.is_empty() {
                    // `root` wraps the top-level queues when written.
                    if name == "root" {
                        String::new()
                    } else {
                        name.clone()
                    }
                } else {
                    format!("{parent}.{name}")
                };
                stack.push(XmlQueue {
                    path,
                    line: line(pos),
                    ..Default::default()
                });
                if stack.len() > 64 {
                    return Err(bad_input(format!(
                        "allocation file line {}: queues nested more than 64 deep",
                        line(pos)
                    )));
                }
            }
            Event::End(e) if e.name().as_ref() == b"queue" || e.name().as_ref() == b"pool" => {
                if let Some(q) = stack.pop() {
                    if !q.path.is_empty() {
                        done.push(q);
                    }
                }
            }
            Event::Start(e) => {
                field = Some(String::from_utf8_lossy(e.name().as_ref()).to_string());
            }
            Event::Text(t) => {
                if let (Some(f), Some(q)) = (&field, stack.last_mut()) {
                    let text = t
                        .unescape()
                        .map_err(|e| bad_input(format!("allocation file line {}: {e}", line(pos))))?
                        .to_string();
                    match f.as_str() {
                        "weight" => {
                            let w: f64 = text.trim().parse().map_err(|_| {
                                bad_input(format!(
                                    "allocation file line {}: queue {} weight \"{text}\" is not a number",
                                    line(pos),
                                    q.path
                                ))
                            })?;
                            q.weight = Some(w);
                        }
                        "minResources" => q.min = Some(text),
                        "maxResources" => q.max = Some(text),
                        _ => {}
                    }
                }
            }
            Event::End(_) => field = None,
            Event::Eof => break,
            _ => {}
        }
        if done.len() > MAX_YARN_OBJECTS {
            return Err(bad_input(format!(
                "allocation file: more than {MAX_YARN_OBJECTS} queues"
            )));
        }
    }
    if !saw_allocations {
        return Err(bad_input(
            "allocation file: no <allocations> element (expected a Fair Scheduler allocation file)",
        ));
    }
    // Parents before children (document order closes children first).
    done.sort_by_key(|q| q.line);
    Ok(done)
}

/// The cluster's total [MB, vcores] from `ws/v1/cluster/metrics`.
pub fn cluster_metrics(text: &str) -> Result<[f64; 2], Error> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| bad_input(format!("metrics: not JSON: {e}")))?;
    let get = |k: &str| {
        v.pointer(&format!("/clusterMetrics/{k}"))
            .and_then(Value::as_f64)
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| {
                bad_input(format!(
                    "metrics: clusterMetrics.{k} is missing or not > 0 (expected ws/v1/cluster/metrics)"
                ))
            })
    };
    Ok([get("totalMB")?, get("totalVirtualCores")?])
}

/// Read a Fair Scheduler allocation file and the applications (see the
/// module) on a cluster of `cluster` = [MB, vcores].
pub fn yarn(xml: &str, apps: &str, cluster: [f64; 2]) -> Result<Imported, Error> {
    if !cluster.iter().all(|c| c.is_finite() && *c > 0.0) {
        return Err(bad_input("the cluster's total MB and vcores must be > 0"));
    }
    let mut summary = ImportSummary::default();
    let mut queues: Vec<XmlQueue> = read_xml(xml)?;
    let v: Value =
        serde_json::from_str(apps).map_err(|e| bad_input(format!("apps: not JSON: {e}")))?;
    let list = match v.pointer("/apps/app") {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Null) | None if v.pointer("/apps").is_some() => Vec::new(),
        _ => {
            return Err(bad_input(
                "apps: no apps.app array (expected ws/v1/cluster/apps)",
            ))
        }
    };
    if list.len() > MAX_YARN_OBJECTS {
        return Err(bad_input(format!(
            "apps: {} applications, above {MAX_YARN_OBJECTS}",
            list.len()
        )));
    }
    let mut users: Vec<RawUser> = Vec::new();
    let mut tasks: Vec<Vec<f64>> = Vec::new();
    for (i, app) in list.iter().enumerate() {
        let at = format!("apps.app[{i}]");
        let id = app
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| bad_input(format!("{at}.id is missing")))?
            .to_string();
        let at = format!("{at} ({id})");
        let state = app
            .get("state")
            .and_then(Value::as_str)
            .unwrap_or("RUNNING");
        if !matches!(state, "RUNNING" | "ACCEPTED") {
            summary.leave_out(&id, &format!("state {state}"));
            continue;
        }
        let queue = app
            .get("queue")
            .and_then(Value::as_str)
            .ok_or_else(|| bad_input(format!("{at}.queue is missing")))?;
        let path = queue.strip_prefix("root.").unwrap_or(queue).to_string();
        if path.is_empty() || path == "root" {
            return Err(bad_input(format!(
                "{at}.queue is the root: applications run in leaf queues"
            )));
        }
        // A queue named by an application but not the file: created under
        // its parent, as YARN does (and its missing ancestors).
        let mut prefix = String::new();
        for part in path.split('.') {
            prefix = if prefix.is_empty() {
                part.to_string()
            } else {
                format!("{prefix}.{part}")
            };
            if !queues.iter().any(|q| q.path == prefix) {
                summary.notes.push(format!(
                    "queue {prefix} is not in the allocation file: created with weight 1"
                ));
                queues.push(XmlQueue {
                    path: prefix.clone(),
                    line: usize::MAX,
                    ..Default::default()
                });
            }
        }
        let num = |v: Option<&Value>, what: &str| -> Result<f64, Error> {
            match v {
                None | Some(Value::Null) => Ok(0.0),
                Some(x) => x
                    .as_f64()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| bad_input(format!("{at}.{what} is not a number >= 0"))),
            }
        };
        // Shapes: running containers, then each outstanding ANY request.
        let mut shapes: Vec<([f64; 2], f64, f64)> = Vec::new();
        let running = num(app.get("runningContainers"), "runningContainers")?;
        if running > 0.0 {
            let mb = num(app.get("allocatedMB"), "allocatedMB")? / running;
            let vc = num(app.get("allocatedVCores"), "allocatedVCores")? / running;
            shapes.push(([mb, vc], running, running));
        }
        if let Some(reqs) = app.get("resourceRequests").and_then(Value::as_array) {
            for (j, r) in reqs.iter().enumerate() {
                let name = r.get("resourceName").and_then(Value::as_str).unwrap_or("*");
                if name != "*" {
                    continue;
                }
                let rat = format!("resourceRequests[{j}]");
                let n = num(r.get("numContainers"), &format!("{rat}.numContainers"))?;
                let mb = num(
                    r.pointer("/capability/memory"),
                    &format!("{rat}.capability.memory"),
                )?;
                let vc = num(
                    r.pointer("/capability/vCores"),
                    &format!("{rat}.capability.vCores"),
                )?;
                if n == 0.0 {
                    continue;
                }
                match shapes.iter_mut().find(|s| s.0 == [mb, vc]) {
                    Some(s) => s.1 += n,
                    None => shapes.push(([mb, vc], n, 0.0)),
                }
            }
        }
        if shapes.is_empty() {
            summary.leave_out(&id, "no running container and no outstanding request");
            continue;
        }
        for (k, (shape, count, placed)) in shapes.into_iter().enumerate() {
            let name = if k == 0 {
                id.clone()
            } else {
                format!("{id}#{}", k + 1)
            };
            if shape.iter().all(|&x| x == 0.0) {
                summary.leave_out(&name, "containers of zero size");
                continue;
            }
            summary.placed += placed as usize;
            summary.pending += (count - placed) as usize;
            users.push(RawUser {
                name,
                demand: shape.to_vec(),
                weight: None,
                tasks: Some(count),
                servers: None,
                rank_weights: None,
                queue: Some(path.clone()),
            });
            tasks.push(vec![placed]);
        }
    }
    if users.is_empty() {
        return Err(bad_input(
            "apps: no running or accepted application with containers",
        ));
    }
    // Queues: guarantees and limits per [MB, vcores]; a parent guaranteed
    // less than its children are is raised to their sum (YARN does not
    // require the children's minResources to fit the parent's).
    let mut raw: Vec<RawQueue> = Vec::with_capacity(queues.len());
    queues.sort_by_key(|q| q.path.matches('.').count());
    for q in &queues {
        let at = format!("allocation file line {} (queue {})", q.line, q.path);
        let min = q
            .min
            .as_deref()
            .map(|t| amount(t, cluster, &format!("{at} minResources")))
            .transpose()?;
        let mut max = q
            .max
            .as_deref()
            .map(|t| amount(t, cluster, &format!("{at} maxResources")))
            .transpose()?;
        if let (Some(lo), Some(hi)) = (min, max.as_mut()) {
            if lo[0] > hi[0] || lo[1] > hi[1] {
                summary.notes.push(format!(
                    "queue {}: maxResources below minResources, raised to them (YARN's getMaxShare)",
                    q.path
                ));
                hi[0] = hi[0].max(lo[0]);
                hi[1] = hi[1].max(lo[1]);
            }
        }
        if q.weight.is_some_and(|w| !(w.is_finite() && w > 0.0)) {
            return Err(bad_input(format!(
                "{at}: weight {} must be > 0 (leontief's weights are positive)",
                q.weight.unwrap_or(0.0)
            )));
        }
        let parent = q.path.rsplit_once('.').map(|(p, _)| p.to_string());
        raw.push(RawQueue {
            name: q.path.clone(),
            parent,
            weight: q.weight,
            guarantee: min.map(|g| g.to_vec()),
            limit: max.map(|l| l.to_vec()),
            lending_limit: None,
        });
    }
    // Deepest parents first, so a raised child raises its parent too.
    for p in (0..raw.len()).rev() {
        let mut sum = [0.0; 2];
        for c in raw
            .iter()
            .filter(|c| c.parent.as_deref() == Some(raw[p].name.as_str()))
        {
            if let Some(g) = &c.guarantee {
                sum[0] += g[0];
                sum[1] += g[1];
            }
        }
        let name = raw[p].name.clone();
        let q = &mut raw[p];
        let Some(g) = q.guarantee.as_mut() else {
            continue;
        };
        if sum[0] > g[0] || sum[1] > g[1] {
            summary.notes.push(format!(
                "queue {name}: its children's minResources add up to more than its own: raised to their sum"
            ));
            g[0] = g[0].max(sum[0]);
            g[1] = g[1].max(sum[1]);
            if let Some(l) = q.limit.as_mut() {
                l[0] = l[0].max(g[0]);
                l[1] = l[1].max(g[1]);
            }
        }
    }
    summary.servers = 1;
    summary.users = users.len();
    summary.resources = vec!["memory-mb (MB)".into(), "vcores".into()];
    let instance = RawInstance {
        name: Some("yarn".into()),
        description: Some(
            "a YARN Fair Scheduler configuration: the pool is the cluster's total; queues from the allocation file; users are applications by container shape"
                .into(),
        ),
        resources: vec!["memory-mb".into(), "vcores".into()],
        servers: vec![RawServer {
            name: "pool".into(),
            capacity: cluster.to_vec(),
            count: None,
        }],
        users,
        queues: Some(raw),
        quantum: Some(vec![1.0, 1.0]),
    };
    Ok(Imported {
        instance,
        tasks,
        summary,
    })
}

#[cfg(test)]
mod tests {
    use super::amount;

    #[test]
    fn every_written_form_of_an_amount() {
        let c = [100_000.0, 100.0];
        assert_eq!(
            amount("10000 mb, 10 vcores", c, "x").unwrap(),
            [10_000.0, 10.0]
        );
        assert_eq!(
            amount("vcores=10, memory-mb=10000", c, "x").unwrap(),
            [10_000.0, 10.0]
        );
        assert_eq!(amount("50%", c, "x").unwrap(), [50_000.0, 50.0]);
        assert_eq!(
            amount("50% memory, 25% cpu", c, "x").unwrap(),
            [50_000.0, 25.0]
        );
        assert_eq!(
            amount("memory-mb=50%, vcores=10", c, "x").unwrap(),
            [50_000.0, 10.0]
        );
        assert!(amount("10 gpus, 1 mb", c, "x").is_err());
        assert!(amount("1024 mb", c, "x").is_err());
        assert!(amount("-1 mb, 1 vcores", c, "x").is_err());
    }
}
