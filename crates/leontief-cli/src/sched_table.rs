//! `leontief repro schedulers-table`: the measured table of
//! docs/schedulers.md. Every production scheduler's share algorithm
//! against exact `hdrf` on the Alibaba GPU cluster grouped into queues (by
//! QoS class, and under a generated 3-level tree) and on generated
//! hierarchical clusters over several seeds; per instance and algorithm
//! the percent fairness and efficiency (the worst seed), the worst-off
//! queue and the properties violated.

use crate::args::SchedTableArgs;
use crate::failure::{bad_input, Failure};
use leontief::audit::{compare_algorithms, AlgorithmsReport};
use leontief::import::{alibaba_gpu, AlibabaGroup, AlibabaOptions};
use leontief::{Instance, Mechanism, VerifyMode};
use leontief_core::RawQueue;
use std::path::{Path, PathBuf};

/// The algorithms, in the table's order.
const ALGORITHMS: [Mechanism; 5] = [
    Mechanism::Hdrf,
    Mechanism::YarnFair,
    Mechanism::Kai,
    Mechanism::VolcanoProportion,
    Mechanism::Kueue,
];

/// One row: the worst over the instances of one kind.
struct Row {
    instance: String,
    algorithm: String,
    fairness: f64,
    efficiency: f64,
    worst_queue: String,
    violates: Vec<String>,
    seconds: f64,
}

fn alibaba(dir: &Path) -> Result<Instance, Failure> {
    let open = |name: &str| -> Result<std::io::BufReader<std::fs::File>, Failure> {
        let p = dir.join(name);
        std::fs::File::open(&p)
            .map(std::io::BufReader::new)
            .map_err(|e| bad_input(format!("{}: {e}", p.display())))
    };
    let nodes = "openb_node_list_all_node.csv";
    let pods = "openb_pod_list_default.csv";
    let imported = alibaba_gpu(
        open(nodes)?,
        nodes,
        open(pods)?,
        pods,
        &AlibabaOptions {
            at: None,
            group_by: AlibabaGroup::Shape,
            queues_by_qos: true,
        },
    )?;
    Instance::new(imported.instance).map_err(|e| bad_input(e.to_string()))
}

/// `base`'s users under a 3-level tree: 2 departments (weights 1 and 2,
/// the first limited to 60% of the cluster), 3 teams each, 3 projects per
/// team; users dealt to the 18 projects in turn.
fn three_levels(base: &Instance) -> Result<Instance, Failure> {
    let mut raw = base.to_raw();
    let total = base.total_capacity();
    let mut queues = Vec::new();
    for d in 0..2 {
        queues.push(RawQueue {
            name: format!("d{d}"),
            parent: None,
            weight: Some(1.0 + d as f64),
            guarantee: None,
            limit: (d == 0).then(|| total.iter().map(|c| 0.6 * c).collect()),
            lending_limit: None,
        });
        for t in 0..3 {
            queues.push(RawQueue {
                name: format!("d{d}.t{t}"),
                parent: Some(format!("d{d}")),
                weight: None,
                guarantee: None,
                limit: None,
                lending_limit: None,
            });
            for p in 0..3 {
                queues.push(RawQueue {
                    name: format!("d{d}.t{t}.p{p}"),
                    parent: Some(format!("d{d}.t{t}")),
                    weight: Some(1.0 + p as f64),
                    guarantee: None,
                    limit: None,
                    lending_limit: None,
                });
            }
        }
    }
    let leaves: Vec<String> = queues
        .iter()
        .filter(|q| q.name.matches('.').count() == 2)
        .map(|q| q.name.clone())
        .collect();
    for (n, u) in raw.users.iter_mut().enumerate() {
        u.queue = Some(leaves[n % leaves.len()].clone());
    }
    raw.queues = Some(queues);
    Instance::new(raw).map_err(|e| bad_input(e.to_string()))
}

/// `base` with every user's task cap removed.
fn uncapped(base: &Instance) -> Result<Instance, Failure> {
    let mut raw = base.to_raw();
    for u in &mut raw.users {
        u.tasks = None;
    }
    Instance::new(raw).map_err(|e| bad_input(e.to_string()))
}

fn rows_of(name: &str, reports: &[(AlgorithmsReport, f64)], out: &mut Vec<Row>) {
    let Some((first, _)) = reports.first() else {
        return;
    };
    let names: Vec<String> = std::iter::once(first.reference.mechanism.clone())
        .chain(first.algorithms.iter().map(|a| a.mechanism.clone()))
        .collect();
    for (k, algorithm) in names.iter().enumerate() {
        let mut row = Row {
            instance: name.to_string(),
            algorithm: algorithm.clone(),
            fairness: f64::INFINITY,
            efficiency: f64::INFINITY,
            worst_queue: "-".into(),
            violates: Vec::new(),
            seconds: 0.0,
        };
        let mut worst_ratio = f64::INFINITY;
        for (r, seconds) in reports {
            let a = if k == 0 {
                &r.reference
            } else {
                &r.algorithms[k - 1]
            };
            row.seconds = row.seconds.max(*seconds);
            if k == 0 {
                row.fairness = 100.0;
                row.efficiency = 100.0;
            } else {
                row.fairness = row.fairness.min(a.fairness_percent.unwrap_or(f64::NAN));
                row.efficiency = row.efficiency.min(a.efficiency_percent.unwrap_or(f64::NAN));
            }
            if let Some(l) = a.lost_most.first() {
                if l.ratio < worst_ratio {
                    worst_ratio = l.ratio;
                    row.worst_queue = format!("{} ({:.3}x: {})", l.queue, l.ratio, l.why);
                }
            }
            for p in a.properties.iter().filter(|p| p.holds == Some(false)) {
                if !row.violates.contains(&p.property) {
                    row.violates.push(p.property.clone());
                }
            }
        }
        out.push(row);
    }
}

pub(crate) fn cmd(args: &SchedTableArgs) -> Result<(), Failure> {
    let mut rows = Vec::new();
    let run = |inst: &Instance| -> Result<(AlgorithmsReport, f64), Failure> {
        let t = std::time::Instant::now();
        let r = compare_algorithms(inst, &ALGORITHMS, VerifyMode::Auto, None)?;
        Ok((r, t.elapsed().as_secs_f64()))
    };
    let dir: Option<PathBuf> = args
        .alibaba
        .clone()
        .or_else(|| std::env::var_os("LEONTIEF_ALIBABA_DIR").map(PathBuf::from));
    let mut notes = Vec::new();
    match dir {
        Some(dir) => {
            let qos = alibaba(&dir)?;
            let r = run(&qos)?;
            rows_of("Alibaba GPU 2023, queues by QoS class", &[r], &mut rows);
            let tree = three_levels(&qos)?;
            let r = run(&tree)?;
            rows_of("Alibaba GPU 2023, 3-level tree of 18 projects", &[r], &mut rows);
            // The trace's tasks fit the cluster; with every task shape
            // asking for more than it holds, the algorithms must divide.
            for (inst, label) in [
                (&qos, "Alibaba GPU 2023, queues by QoS class, every shape uncapped"),
                (&tree, "Alibaba GPU 2023, 3-level tree, every shape uncapped"),
            ] {
                let r = run(&uncapped(inst)?)?;
                rows_of(label, &[r], &mut rows);
            }
        }
        None => notes.push(
            "Alibaba rows left out: give --alibaba DIR (or LEONTIEF_ALIBABA_DIR) with the trace's node and pod lists",
        ),
    }
    for (shape, label) in [
        (
            "queues=12:3",
            "generated, 12 queues in 3 levels, 2 resources",
        ),
        (
            "queues=12:3,capacity=pools:4,demand=bimodal,gpu=0.3",
            "generated, 12 queues in 3 levels, node pools, bimodal demands, GPUs on 30%",
        ),
    ] {
        let resources = if shape.contains("gpu") { 3 } else { 2 };
        let mut reports = Vec::new();
        for seed in 1..=args.seeds {
            let inst = leontief::generated_shaped(
                args.users as usize,
                args.servers as usize,
                resources,
                seed,
                shape,
            )?;
            reports.push(run(&inst)?);
        }
        rows_of(
            &format!(
                "{label} ({} x {}, {} seeds)",
                args.users, args.servers, args.seeds
            ),
            &reports,
            &mut rows,
        );
    }
    println!("| instance | algorithm | fairness % | efficiency % | worst-off queue (its dominant share / exact's: why) | violates | seconds |");
    println!("|---|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {} | {:.2} | {:.2} | {} | {} | {:.2} |",
            r.instance,
            r.algorithm,
            r.fairness,
            r.efficiency,
            r.worst_queue,
            if r.violates.is_empty() {
                "-".to_string()
            } else {
                r.violates.join(", ")
            },
            r.seconds
        );
    }
    for n in notes {
        println!("\n{n}");
    }
    Ok(())
}
