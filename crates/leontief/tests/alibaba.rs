//! `import::alibaba_gpu` on fixtures written here in the trace's schema,
//! and on the trace itself (`LEONTIEF_DATA`, default ../shared/data; under
//! CI=true a missing folder fails the test).

mod alibaba_fixture;
mod common;
use alibaba_fixture::{NODES, PODS};
use leontief::import::{alibaba_gpu, AlibabaGroup, AlibabaOptions};
use leontief::{Instance, Mechanism, Options};
use std::path::PathBuf;

fn import(
    nodes: &str,
    pods: &str,
    o: &AlibabaOptions,
) -> Result<leontief::import::Imported, leontief::Error> {
    alibaba_gpu(
        nodes.as_bytes(),
        "nodes.csv",
        pods.as_bytes(),
        "pods.csv",
        o,
    )
}

#[test]
fn shapes_become_users_and_gpu_models_placement_lists() {
    let i = import(NODES, PODS, &AlibabaOptions::default()).unwrap();
    let inst = Instance::new(i.instance.clone()).unwrap();
    assert_eq!(inst.num_entries(), 4);
    // p1 and p2 share a shape; p5 requests nothing.
    assert_eq!(i.summary.users, 4);
    assert_eq!(i.summary.left_out.get("requests nothing"), Some(&1));
    let users = inst.users();
    // GPU sharing: 460 milli-GPU is 0.46 of a GPU; two tasks of it.
    let shared = users.iter().find(|u| u.demand[2] == 0.46).unwrap();
    assert_eq!(shared.tasks, Some(2.0));
    assert_eq!(shared.demand[..2], [6.0, 12288.0]);
    // Any GPU model: every GPU node, never the CPU-only one.
    let names = |u: &leontief_core::User| -> Vec<String> {
        u.servers
            .iter()
            .flatten()
            .map(|i| inst.servers()[i.0].name.clone())
            .collect()
    };
    assert_eq!(names(shared), ["n1", "n2", "n3"]);
    // gpu_spec V100M16: its two nodes only; two whole GPUs.
    let v100 = users.iter().find(|u| u.demand[2] == 2.0).unwrap();
    assert_eq!(names(v100), ["n1", "n2"]);
    // No GPU: every node.
    let cpu = users.iter().find(|u| u.demand[2] == 0.0).unwrap();
    assert!(cpu.servers.is_none());
}

#[test]
fn at_t_keeps_the_tasks_running_then_and_qos_splits_users() {
    let o = AlibabaOptions {
        at: Some(100.0),
        group_by: AlibabaGroup::Qos,
        ..AlibabaOptions::default()
    };
    let i = import(NODES, PODS, &o).unwrap();
    // Running at 100: p1, p2 (deleted at 200), p3 (never deleted); p0 is
    // deleted at 100, p4 never scheduled, p5 deleted at 1.
    assert_eq!(i.summary.pending, 3);
    assert_eq!(i.summary.left_out.get("not running at --at"), Some(&3));
    // p1 (LS) and p2 (BE): one shape, two QoS classes.
    assert_eq!(i.summary.users, 3);
    assert!(i.instance.users.iter().any(|u| u.name.starts_with("LS/")));
    let none = import(
        NODES,
        PODS,
        &AlibabaOptions {
            group_by: AlibabaGroup::None,
            ..AlibabaOptions::default()
        },
    )
    .unwrap();
    assert_eq!(none.summary.users, 5);
}

#[test]
fn queues_by_qos_class_hold_their_users_and_hdrfh_solves_them() {
    let i = import(
        NODES,
        PODS,
        &AlibabaOptions {
            queues_by_qos: true,
            ..AlibabaOptions::default()
        },
    )
    .unwrap();
    let inst = Instance::new(i.instance.clone()).unwrap();
    let names: Vec<&str> = inst.queues().iter().map(|q| q.name.as_str()).collect();
    assert!(names.contains(&"LS") && names.contains(&"BE"), "{names:?}");
    // Every user sits in the queue its name starts with.
    for (n, u) in inst.users().iter().enumerate() {
        let q = inst.user_queue(leontief_core::UserId(n)).unwrap();
        assert!(
            u.name.starts_with(&format!("{}/", inst.queues()[q].name)),
            "{}",
            u.name
        );
    }
    let a = leontief::solve(&inst, &Mechanism::Hdrfh, &Options::default()).unwrap();
    assert_eq!(a.status, leontief::Status::Optimal);
    assert!(
        a.verification.as_ref().is_some_and(|v| v.ok),
        "{:?}",
        a.verification
    );
    assert_eq!(a.hierarchy.as_ref().unwrap().queues.len(), names.len());
}

#[test]
fn bad_rows_and_swapped_files_are_refused_by_file_line_and_column() {
    let e = import(
        NODES,
        &PODS.replace("p3,4000", "p3,4k"),
        &AlibabaOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "pods.csv line 5 column cpu_milli: \"4k\" is not a number >= 0"
    );
    let e = import(
        NODES,
        &PODS.replace("p1,6000,12288,1,460", "p1,6000,12288,1,1460"),
        &AlibabaOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("pods.csv line 3 column gpu_milli"),
        "{e}"
    );
    let e = import(
        &NODES.replace("n2,", "n1,"),
        PODS,
        &AlibabaOptions::default(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("line 4 column sn: node n1 appears twice"),
        "{e}"
    );
    let e = import(PODS, NODES, &AlibabaOptions::default()).unwrap_err();
    assert!(e.to_string().contains("looks like a pod list"), "{e}");
    // --at needs the time columns (the multigpu20 list has none).
    let short = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,1000\n";
    assert!(import(NODES, short, &AlibabaOptions::default()).is_ok());
    let e = import(
        NODES,
        short,
        &AlibabaOptions {
            at: Some(1.0),
            ..AlibabaOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("no column \"creation_time\""), "{e}");
    // A model no node has: the task is left out, counted.
    let i = import(
        NODES,
        &PODS.replace("V100M16,LS", "H100,LS"),
        &AlibabaOptions::default(),
    )
    .unwrap();
    assert_eq!(i.summary.left_out.len(), 2, "{:?}", i.summary.left_out);
}

fn data() -> Option<PathBuf> {
    common::shared_data("alibaba-gpu-v2023")
}

/// The real trace: every task list imports; the 1,523 nodes fall into
/// 27 classes of interchangeable nodes, and DRFH solved on the listed
/// nodes is the answer of the classes, verified.
#[test]
fn the_alibaba_trace_imports_and_solves_as_its_classes() {
    let Some(dir) = data() else { return };
    let open = |f: &str| std::fs::File::open(dir.join(f)).unwrap();
    for list in ["default", "gpuspec20", "multigpu20", "gpushare40"] {
        let i = alibaba_gpu(
            open("openb_node_list_all_node.csv"),
            "nodes",
            open(&format!("openb_pod_list_{list}.csv")),
            list,
            &AlibabaOptions::default(),
        )
        .unwrap();
        assert_eq!(i.summary.servers, 1523, "{list}");
        assert!(i.summary.pending >= 8000, "{list}: {:?}", i.summary);
        if list != "gpuspec20" {
            continue;
        }
        let inst = Instance::new(i.instance).unwrap();
        let a = leontief::solve(&inst, &Mechanism::Drfh, &Options::default()).unwrap();
        assert!(a.verification.as_ref().is_some_and(|v| v.ok));
        assert_eq!(a.certificate.as_ref().unwrap().merged_classes, Some(27));
    }
}

/// The pod list as a simulator workload: arrival at creation_time, running
/// time deletion_time - scheduled_time (to the window's end when never
/// deleted), never-scheduled tasks and empty requests left out with notes;
/// a simulation of the node list and the pod list runs every task.
#[test]
fn the_pod_list_is_a_simulator_workload() {
    use leontief::import::{alibaba_workload, AlibabaGroup};
    let w = alibaba_workload(PODS.as_bytes(), "pods.csv", AlibabaGroup::Shape).unwrap();
    assert_eq!(w.resources, ["cpu", "memory", "gpu"]);
    assert_eq!(w.end, 200.0);
    let durations: Vec<(f64, f64)> = w.tasks.iter().map(|t| (t.submit, t.duration)).collect();
    // p0 100 s; p1, p2 188 s; p3 never deleted: to the end, 140 s.
    assert_eq!(
        durations,
        [(0.0, 100.0), (10.0, 188.0), (10.0, 188.0), (50.0, 140.0)]
    );
    // p1 and p2 share a shape: one user.
    assert_eq!(w.users.len(), 3);
    assert_eq!(w.tasks[1].demand, [6.0, 12288.0, 0.46]);
    assert!(
        w.notes
            .iter()
            .any(|n| n == "1 tasks never scheduled in the trace (no running time) left out"),
        "{:?}",
        w.notes
    );
    let bad = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time,scheduled_time\nq,1000,10,0,0,5,3,4\n";
    let e = alibaba_workload(bad.as_bytes(), "pods.csv", AlibabaGroup::Shape).unwrap_err();
    assert_eq!(
        e.to_string(),
        "pods.csv line 2 column deletion_time: 3 is before scheduled_time 4"
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("nodes.csv"), NODES).unwrap();
    std::fs::write(dir.path().join("pods.csv"), PODS).unwrap();
    let config = dir.path().join("sim.json");
    std::fs::write(
        &config,
        r#"{"cluster": {"alibaba_gpu": "nodes.csv"}, "workload": {"alibaba_gpu": "pods.csv"}, "scheduler": "best-fit"}"#,
    )
    .unwrap();
    let s = leontief::simulate::load_config(&config, &Default::default()).unwrap();
    assert_eq!(s.cluster.servers.len(), 4);
    let r = leontief::simulate::simulate(&s, &s.settings, false, &|_| {}, &|| {}).unwrap();
    assert_eq!(r.servers, 4);
    assert_eq!(r.totals.finished, 4, "{:?}", r.totals);
}

/// The cluster written by hand as its classes: servers with equal
/// capacities and the same users listing them as one entry with a count
/// (in order of first appearance), placement lists naming the classes.
fn merged_by_hand(raw: &leontief_core::RawInstance) -> leontief_core::RawInstance {
    use std::collections::HashMap;
    let mut listing: HashMap<&str, Vec<usize>> = HashMap::new();
    for (n, u) in raw.users.iter().enumerate() {
        for s in u.servers.iter().flatten() {
            listing.entry(s.as_str()).or_default().push(n);
        }
    }
    let mut classes: Vec<leontief_core::RawServer> = Vec::new();
    let mut key_of: HashMap<(Vec<u64>, Vec<usize>), usize> = HashMap::new();
    let mut class_of: HashMap<&str, String> = HashMap::new();
    for s in &raw.servers {
        let key = (
            s.capacity.iter().map(|c| c.to_bits()).collect(),
            listing.get(s.name.as_str()).cloned().unwrap_or_default(),
        );
        let c = *key_of.entry(key).or_insert_with(|| {
            classes.push(leontief_core::RawServer {
                name: format!("class{}", classes.len()),
                capacity: s.capacity.clone(),
                count: Some(0),
            });
            classes.len() - 1
        });
        *classes[c].count.as_mut().unwrap() += 1;
        class_of.insert(s.name.as_str(), classes[c].name.clone());
    }
    let mut out = raw.clone();
    out.servers = classes;
    for u in &mut out.users {
        if let Some(list) = &u.servers {
            let mut names: Vec<String> =
                list.iter().map(|s| class_of[s.as_str()].clone()).collect();
            names.sort();
            names.dedup();
            u.servers = Some(names);
        }
    }
    out
}

/// Every mechanism that merges interchangeable servers gives the same
/// user totals on the listed Alibaba cluster as on the cluster written as
/// its classes, verified on the listed nodes.
#[test]
fn every_mechanism_on_the_listed_cluster_is_its_answer_on_the_classes() {
    let Some(dir) = data() else { return };
    let open = |f: &str| std::fs::File::open(dir.join(f)).unwrap();
    for list in ["gpuspec20", "multigpu20"] {
        let i = alibaba_gpu(
            open("openb_node_list_all_node.csv"),
            "nodes",
            open(&format!("openb_pod_list_{list}.csv")),
            list,
            &AlibabaOptions::default(),
        )
        .unwrap();
        let classes = Instance::new(merged_by_hand(&i.instance)).unwrap();
        let listed = Instance::new(i.instance).unwrap();
        assert_eq!(classes.num_entries(), 27, "{list}");
        for m in [
            Mechanism::Drfh,
            Mechanism::Tsf,
            Mechanism::Kdf { k: 2 },
            Mechanism::Nfc,
            Mechanism::Psdsf {
                select: leontief::PsdsfSelect::BestResponse,
            },
            Mechanism::Vds {
                alpha: 2.0,
                schedule: leontief::VdsSchedule::GaussSeidel,
            },
        ] {
            let a = leontief::solve(&listed, &m, &Options::default()).unwrap();
            let b = leontief::solve(&classes, &m, &Options::default()).unwrap();
            assert!(
                a.verification.as_ref().is_some_and(|v| v.ok),
                "{list} {m}: {:?}",
                a.status
            );
            for (n, (x, y)) in a.user_tasks.iter().zip(&b.user_tasks).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-6 * x.abs().max(1.0),
                    "{list} {m}: user {n}: {x} listed, {y} on the classes"
                );
            }
        }
    }
}
