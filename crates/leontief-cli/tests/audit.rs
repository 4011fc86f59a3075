//! `leontief import kubernetes` then `leontief audit` on the bundled
//! snapshot (datasets/kubernetes, the README's worked example), and the
//! command's refusals.

mod common;
use common::leontief;
use serde_json::Value;

fn datasets() -> std::path::PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../../datasets")
}

/// `leontief import kubernetes` on `datasets/FOLDER` into `dir`: the
/// instance and allocation paths and the printed summary.
fn import(dir: &std::path::Path, folder: &str) -> (std::path::PathBuf, std::path::PathBuf, Value) {
    let k = datasets().join(folder);
    let inst = dir.join("cluster.json");
    let alloc = dir.join("pods.csv");
    let (code, out, err) = leontief(&[
        "import",
        "kubernetes",
        k.join("nodes.json").to_str().unwrap(),
        k.join("pods.json").to_str().unwrap(),
        "--instance",
        inst.to_str().unwrap(),
        "--allocation",
        alloc.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    (inst, alloc, serde_json::from_str(&out).unwrap())
}

#[test]
fn kubernetes_snapshot_round_trip() {
    let tmp = tempdir();
    let (inst, alloc, summary) = import(tmp.path(), "kubernetes");
    assert_eq!(summary["users"], 5);
    assert_eq!(summary["placed"], 16);
    assert_eq!(summary["pending"], 1);
    let (code, out, err) = leontief(&["audit", inst.to_str().unwrap(), alloc.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["feasibility"]["ok"], true);
    // The scheduler left a trainer pod pending where it fits.
    let p = &r["pareto"];
    assert_eq!(p["ok"], false);
    assert_eq!(
        p["improvement"]["gainers"][0]["user"],
        "ml/StatefulSet/trainer"
    );
    assert_eq!(p["improvement"]["gainers"][0]["gets"], 3.0);
    assert_eq!(
        r["drfh_max_min"]["rise"]["payers"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    assert_eq!(r["against"][0]["mechanism"], "drfh");
    assert_eq!(
        r["against"][0]["lost_most"][0]["user"],
        "ml/StatefulSet/trainer"
    );
    let (code, table, _) = leontief(&[
        "audit",
        inst.to_str().unwrap(),
        alloc.to_str().unwrap(),
        "--table",
        "--against",
        "drfh,kdf:2,psdsf",
    ]);
    assert_eq!(code, Some(0));
    assert!(table.contains("Pareto optimality      NO     all keep their tasks while ml/StatefulSet/trainer 2 -> 3"), "{table}");
    assert!(table.contains("kdf:k=2"), "{table}");
    // The README's worked example is what the command prints.
    let (_, table, _) = leontief(&[
        "audit",
        inst.to_str().unwrap(),
        alloc.to_str().unwrap(),
        "--table",
        "--against",
        "drfh,psdsf",
    ]);
    let readme = std::fs::read_to_string(datasets().join("../README.md")).unwrap();
    let section = &readme[readme
        .find("## Audit the allocation your cluster made")
        .unwrap()..];
    let start = section.find("```text\n").unwrap() + 8;
    let shown = &section[start..start + section[start..].find("```").unwrap()];
    assert!(
        table.starts_with(shown),
        "README shows:\n{shown}\nthe command prints:\n{table}"
    );
    let doc = std::fs::read_to_string(datasets().join("../docs/audit.md")).unwrap();
    let start = doc.find("```text\n").unwrap() + 8;
    let shown = &doc[start..start + doc[start..].find("```").unwrap()];
    assert_eq!(shown, table, "docs/audit.md");
}

/// docs/audit.md's second worked example: a tainted control plane, a
/// tainted GPU node, a node selector; two Pending pods and why each waits.
#[test]
fn placement_rules_and_pending_reasons() {
    let tmp = tempdir();
    let (inst, alloc, summary) = import(tmp.path(), "kubernetes-placement");
    assert_eq!(
        (summary["placed"].as_u64(), summary["pending"].as_u64()),
        (Some(18), Some(2))
    );
    let instance: Value = serde_json::from_str(&std::fs::read_to_string(&inst).unwrap()).unwrap();
    let list = |name: &str| {
        instance["users"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"] == name)
            .unwrap_or_else(|| panic!("no user {name}"))["servers"]
            .clone()
    };
    assert_eq!(
        list("shop/ReplicaSet/web-7d4b9c6f5"),
        serde_json::json!(["node-a", "node-b"])
    );
    assert_eq!(list("batch/Job/report"), serde_json::json!(["node-b"]));
    assert_eq!(
        list("ml/StatefulSet/trainer"),
        serde_json::json!(["node-c"])
    );
    assert_eq!(list("kube-system/Pod/etcd-cp"), serde_json::json!(["cp"]));
    assert_eq!(list("monitoring/DaemonSet/node-exporter"), Value::Null);
    let (code, out, err) = leontief(&["audit", inst.to_str().unwrap(), alloc.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let pending = r["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 2);
    assert_eq!(pending[0]["user"], "batch/Job/report");
    let block = &pending[0]["blocked_on"][0];
    assert_eq!(
        (&block["server"], &block["resource"]),
        (&"node-b".into(), &"cpu".into())
    );
    assert!(
        (block["free"].as_f64().unwrap() - 0.31).abs() < 1e-9,
        "{block}"
    );
    assert_eq!(pending[1]["user"], "ml/StatefulSet/trainer");
    assert!(pending[1]["reason"]
        .as_str()
        .unwrap()
        .starts_with("node-c has room for 1"));
    assert_eq!(r["nodes"][2]["fullest"], "cpu");
    let (code, table, err) = leontief(&[
        "audit",
        inst.to_str().unwrap(),
        alloc.to_str().unwrap(),
        "--table",
        "--nodes",
        "--against",
        "drfh",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let doc = std::fs::read_to_string(datasets().join("../docs/audit.md")).unwrap();
    let section = &doc[doc.find("## A worked example: placement rules").unwrap()..];
    let start = section.find("```text\n").unwrap() + 8;
    let shown = &section[start..start + section[start..].find("```").unwrap()];
    assert_eq!(shown, table, "docs/audit.md");
    // --top ranks: the fullest node first, the user furthest below DRFH.
    let (code, table, _) = leontief(&[
        "audit",
        inst.to_str().unwrap(),
        alloc.to_str().unwrap(),
        "--table",
        "--nodes",
        "--top",
        "1",
        "--against",
        "drfh",
    ]);
    assert_eq!(code, Some(0));
    assert!(table.contains("\nbatch/Job/report "), "{table}");
    assert!(table.contains("(7 more users in the JSON)"), "{table}");
    assert!(table.contains("\nnode-b  cpu      96.0809"), "{table}");
    assert!(!table.contains("\ncp "), "{table}");
}

#[test]
fn bad_input_exits_2_naming_the_entry() {
    let tmp = tempdir();
    let dir = tmp.path();
    let inst = datasets().join("paper-examples/drfh-fig1.json");
    let csv = dir.join("a.csv");
    std::fs::write(&csv, "user,server,tasks\nu1,s1,1\nu9,s1,2\n").unwrap();
    let (code, _, err) = leontief(&["audit", inst.to_str().unwrap(), csv.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("a.csv: allocation line 3: unknown user \"u9\""),
        "{err}"
    );
    let json = dir.join("a.json");
    std::fs::write(&json, "{\"tasks\": [[1, 0], [0, -1e999]]}").unwrap();
    let (code, _, err) = leontief(&["audit", inst.to_str().unwrap(), json.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    std::fs::write(&csv, "user,server,tasks\nu1,s1,1\n").unwrap();
    let (code, _, err) = leontief(&[
        "audit",
        inst.to_str().unwrap(),
        csv.to_str().unwrap(),
        "--against",
        "drfh,nosuch",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("nosuch"), "{err}");
    // `none` compares with nothing (the REPORT's audit rows use it).
    let (code, out, err) = leontief(&[
        "audit",
        inst.to_str().unwrap(),
        csv.to_str().unwrap(),
        "--against",
        "none",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert!(
        r["against"].as_array().is_none_or(|a| a.is_empty()),
        "{out}"
    );
}

/// A directory removed when the test ends.
fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn google_trace_snapshot_then_audit() {
    let tmp = tempdir();
    let dir = tmp.path().join("google");
    std::fs::create_dir_all(&dir).unwrap();
    let machines = dir.join("machine_events.csv");
    std::fs::write(&machines, "0,1,0,p,0.5,0.5\n0,2,0,p,1,1\n").unwrap();
    let events = dir.join("task_events.csv");
    // Two users, one task each, both running at 60 s; bob also has a
    // pending task that fits.
    std::fs::write(
        &events,
        "1000000,,7,0,1,1,alice,0,0,0.25,0.25,0,0\n\
         1000000,,8,0,2,1,bob,0,0,0.25,0.25,0,0\n\
         2000000,,8,1,,0,bob,0,0,0.25,0.25,0,0\n",
    )
    .unwrap();
    let (inst, alloc) = (dir.join("i.json"), dir.join("a.json"));
    let (code, out, err) = leontief(&[
        "import",
        "google-trace",
        events.to_str().unwrap(),
        "--machines",
        machines.to_str().unwrap(),
        "--at",
        "60",
        "--instance",
        inst.to_str().unwrap(),
        "--allocation",
        alloc.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (s["placed"].as_u64(), s["pending"].as_u64()),
        (Some(2), Some(1))
    );
    let (code, out, err) = leontief(&["audit", inst.to_str().unwrap(), alloc.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["pareto"]["improvement"]["gainers"][0]["user"], "bob");
    let (code, _, err) = leontief(&[
        "import",
        "google-trace",
        events.to_str().unwrap(),
        "--machines",
        machines.to_str().unwrap(),
        "--at=-1",
        "--instance",
        inst.to_str().unwrap(),
        "--allocation",
        alloc.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--at -1 must be a time >= 0"), "{err}");
}
