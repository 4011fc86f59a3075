//! `import::alibaba_gpu` on fixtures written here in the trace's schema,
//! and on the trace itself (`LEONTIEF_DATA`, default ../shared/data; under
//! CI=true a missing folder fails the test).

use leontief::import::{alibaba_gpu, AlibabaGroup, AlibabaOptions};
use leontief::{Instance, Mechanism, Options};
use std::path::PathBuf;

const NODES: &str = "sn,cpu_milli,memory_mib,gpu,model
n0,32000,262144,0,
n1,96000,786432,8,V100M16
n2,96000,786432,8,V100M16
n3,64000,524288,2,T4
";

const PODS: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p0,12000,16384,1,1000,,LS,Running,0,100,0
p1,6000,12288,1,460,,LS,Running,10,200,12
p2,6000,12288,1,460,,BE,Running,10,200,12
p3,4000,8192,0,0,,BE,Running,50,,60
p4,8000,30000,2,1000,V100M16,LS,Pending,70,,
p5,0,0,0,0,,BE,Failed,0,1,0
";

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
    let dir = std::env::var_os("LEONTIEF_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
        });
    let dir = dir.join("alibaba-gpu-v2023");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing (set LEONTIEF_DATA to the shared data folder)",
        dir.display()
    );
    eprintln!("skipped: {} is missing (LEONTIEF_DATA)", dir.display());
    None
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
