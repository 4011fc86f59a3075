//! The schedulers' share algorithms from the command line: the worked
//! case compared per queue with the exact answer, and their input refused
//! by entry.

mod common;
use common::leontief as run;
use std::path::PathBuf;

fn case(name: &str) -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../../datasets/paper-examples")
    .join(name)
}

#[test]
fn the_worked_case_is_compared_per_queue_with_the_exact_answer() {
    let inst = case("schedulers-worked.json");
    let (code, out, err) = run(&[
        "audit",
        inst.to_str().unwrap(),
        "--against",
        "hdrf,yarn-fair,kai,volcano-proportion,kueue",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["reference"]["mechanism"], "hdrf");
    let algorithms = r["algorithms"].as_array().unwrap();
    assert_eq!(algorithms.len(), 4);
    for a in algorithms {
        assert_eq!(a["verified"], true, "{a}");
        let f = a["fairness_percent"].as_f64().unwrap();
        assert!((f - 99.0).abs() < 1e-9, "{}: {f}", a["mechanism"]);
        let pareto = a["properties"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["property"] == "Pareto optimality")
            .unwrap();
        assert_eq!(pareto["holds"], false, "{a}");
    }
    let yarn = &algorithms[0];
    assert_eq!(yarn["queues"][0]["share"], serde_json::json!([9.0, 1.0]));
    let why = yarn["lost_most"][0]["why"].as_str().unwrap();
    assert!(
        why.contains("fit 9 tasks") && why.contains("10.0% of its mem share goes unused"),
        "{why}"
    );
    let (code, table, err) = run(&[
        "audit",
        inst.to_str().unwrap(),
        "--against",
        "hdrf,yarn-fair",
        "--table",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        table.contains("yarn-fair") && table.contains("0.99x"),
        "{table}"
    );
}

/// Solve `json` with `mechanism`: refused with exit 2; the message.
fn refused(json: &str, mechanism: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("bad.json");
    std::fs::write(&p, json).unwrap();
    let (code, _, err) = run(&["solve", p.to_str().unwrap(), "--mechanism", mechanism]);
    assert_eq!(code, Some(2), "{err}");
    err
}

#[test]
fn a_bad_quantum_is_refused_by_entry() {
    let err = refused(
        r#"{"resources":["cpu","mem"],"servers":[{"name":"s","capacity":[4,4]}],"quantum":[1,0],
            "users":[{"name":"u","demand":[1,1]}]}"#,
        "yarn-fair",
    );
    assert!(err.contains("quantum[1]"), "{err}");
    let err = refused(
        r#"{"resources":["cpu"],"servers":[{"name":"s","capacity":[4]}],
            "queues":[{"name":"A","guarantee":[2],"lending_limit":[3]}],
            "users":[{"name":"u","demand":[1],"queue":"A"}]}"#,
        "kueue",
    );
    assert!(
        err.contains("queues[0].lending_limit[0]") && err.contains("above queues[0].guarantee[0]"),
        "{err}"
    );
}

#[test]
fn every_scheduler_solves_and_verifies_a_generated_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("t.json");
    let (code, text, err) = run(&[
        "generate",
        "shaped",
        "--users",
        "40",
        "--servers",
        "20",
        "--shape",
        "queues=6:2",
        "--seed",
        "3",
    ]);
    assert_eq!(code, Some(0), "{err}");
    std::fs::write(&p, text).unwrap();
    for m in ["yarn-fair", "kai", "volcano-proportion", "kueue"] {
        let (code, out, err) = run(&["solve", p.to_str().unwrap(), "--mechanism", m]);
        assert_eq!(code, Some(0), "{m}: {err}");
        let a: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(a["verification"]["ok"], true, "{m}: {}", a["verification"]);
        assert!(a["gap"]["min_share_ratio"].as_f64().is_some(), "{m}");
        assert_eq!(a["gap"]["exact_mechanism"], "hdrf", "{m}");
    }
}

const CLUSTER_QUEUES: &str = r#"{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"team-a"},
  "spec":{"cohort":"org","fairSharing":{"weight":"2"},"resourceGroups":[{"coveredResources":["cpu","memory"],
   "flavors":[{"name":"default","resources":[{"name":"cpu","nominalQuota":"6","borrowingLimit":"2"},{"name":"memory","nominalQuota":"24Gi"}]}]}]}},
 {"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"team-b"},
  "spec":{"cohort":"org","resourceGroups":[{"coveredResources":["cpu","memory"],
   "flavors":[{"name":"default","resources":[{"name":"cpu","nominalQuota":"4"},{"name":"memory","nominalQuota":"16Gi","lendingLimit":"8Gi"}]}]}]}}]}"#;

const WORKLOADS: &str = r#"{"apiVersion":"v1","kind":"List","items":[
 {"kind":"Workload","metadata":{"name":"wl-a1","namespace":"eng"},
  "spec":{"queueName":"lq-a","podSets":[{"name":"main","count":3,"template":{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"4Gi"}}}]}}}]},
  "status":{"admission":{"clusterQueue":"team-a","podSetAssignments":[{"name":"main","flavors":{"cpu":"default","memory":"default"},"count":3}]}}},
 {"kind":"Workload","metadata":{"name":"wl-b1","namespace":"research"},
  "spec":{"queueName":"lq-b","podSets":[{"name":"main","count":10,"template":{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"500m","memory":"1Gi"}}}]}}}]}},
 {"kind":"Workload","metadata":{"name":"wl-gpu","namespace":"research"},
  "spec":{"queueName":"lq-b","podSets":[{"name":"main","count":1,"template":{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1","nvidia.com/gpu":"1"}}}]}}}]}}]}"#;

const LOCAL_QUEUES: &str = r#"{"items":[{"metadata":{"name":"lq-b","namespace":"research"},"spec":{"clusterQueue":"team-b"}},
 {"metadata":{"name":"lq-a","namespace":"eng"},"spec":{"clusterQueue":"team-a"}}]}"#;

#[test]
fn a_kueue_configuration_imports_with_its_cohort_and_quotas() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |n: &str| tmp.path().join(n);
    std::fs::write(path("cq.json"), CLUSTER_QUEUES).unwrap();
    std::fs::write(path("co.json"), r#"{"items":[]}"#).unwrap();
    std::fs::write(path("wl.json"), WORKLOADS).unwrap();
    std::fs::write(path("lq.json"), LOCAL_QUEUES).unwrap();
    let p = |n: &str| path(n).to_str().unwrap().to_string();
    let (code, out, err) = run(&[
        "import",
        "kueue",
        &p("cq.json"),
        &p("co.json"),
        &p("wl.json"),
        "--local-queues",
        &p("lq.json"),
        "--instance",
        &p("inst.json"),
        "--allocation",
        &p("alloc.csv"),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(summary["users"], 2);
    assert_eq!(summary["placed"], 3);
    assert_eq!(summary["pending"], 10);
    let notes = summary["notes"].to_string();
    assert!(notes.contains("org is not listed"), "{notes}");
    assert!(
        summary["examples"].to_string().contains("nvidia.com/gpu"),
        "{summary}"
    );
    let inst: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path("inst.json")).unwrap()).unwrap();
    assert_eq!(
        inst["resources"],
        serde_json::json!(["default/cpu", "default/memory"])
    );
    let gi = 1024.0 * 1024.0 * 1024.0;
    assert_eq!(
        inst["servers"][0]["capacity"],
        serde_json::json!([10.0, 40.0 * gi])
    );
    let queues = inst["queues"].as_array().unwrap();
    let q = |n: &str| queues.iter().find(|q| q["name"] == n).unwrap().clone();
    assert_eq!(
        q("team-a")["guarantee"],
        serde_json::json!([6.0, 24.0 * gi])
    );
    assert_eq!(q("team-a")["limit"], serde_json::json!([8.0, 40.0 * gi]));
    assert_eq!(q("team-a")["weight"], 2.0);
    assert_eq!(q("org")["limit"], serde_json::json!([10.0, 40.0 * gi]));
    assert_eq!(
        q("team-b")["lending_limit"],
        serde_json::json!([4.0, 8.0 * gi])
    );
    // A workload is one task of its pods' total request (admitted whole).
    let users = inst["users"].as_array().unwrap();
    assert_eq!(users[0]["demand"], serde_json::json!([3.0, 12.0 * gi]));
    assert_eq!(users[1]["demand"], serde_json::json!([5.0, 10.0 * gi]));
    assert_eq!(users[1]["tasks"], 1.0);
    let alloc = std::fs::read_to_string(path("alloc.csv")).unwrap();
    assert!(alloc.contains("eng/wl-a1,pool,1"), "{alloc}");
    let (code, out, err) = run(&["solve", &p("inst.json"), "--mechanism", "kueue"]);
    assert_eq!(code, Some(0), "{err}");
    let a: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(a["verification"]["ok"], true, "{}", a["verification"]);
    // Both workloads fit their ClusterQueues' quotas: both admitted.
    assert_eq!(a["user_tasks"], serde_json::json!([1.0, 1.0]));
    // Without the LocalQueues, the pending workload's ClusterQueue is
    // unknown: refused, naming it.
    let (code, _, err) = run(&[
        "import",
        "kueue",
        &p("cq.json"),
        &p("co.json"),
        &p("wl.json"),
        "--instance",
        &p("i2.json"),
        "--allocation",
        &p("a2.csv"),
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("workloads.items[1] (research/wl-b1)") && err.contains("--local-queues"),
        "{err}"
    );
}

const ALLOCATION_FILE: &str = r#"<?xml version="1.0"?>
<allocations>
  <queue name="root">
    <queue name="eng">
      <weight>2.0</weight>
      <minResources>20000 mb, 20 vcores</minResources>
      <schedulingPolicy>drf</schedulingPolicy>
      <queue name="dev"><minResources>vcores=10, memory-mb=10000</minResources></queue>
    </queue>
    <queue name="research">
      <maxResources>50%</maxResources>
    </queue>
  </queue>
  <userMaxAppsDefault>5</userMaxAppsDefault>
</allocations>"#;

const APPS: &str = r#"{"apps":{"app":[
 {"id":"application_1_0001","user":"ann","queue":"root.eng.dev","state":"RUNNING","runningContainers":4,"allocatedMB":8192,"allocatedVCores":4,
  "resourceRequests":[{"resourceName":"*","numContainers":6,"capability":{"memory":2048,"vCores":1}},
                      {"resourceName":"node-1","numContainers":6,"capability":{"memory":2048,"vCores":1}}]},
 {"id":"application_1_0002","user":"bob","queue":"root.research","state":"ACCEPTED",
  "resourceRequests":[{"resourceName":"*","numContainers":100,"capability":{"memory":1024,"vCores":2}}]},
 {"id":"application_1_0003","user":"cy","queue":"root.eng.dev","state":"FINISHED","runningContainers":0}]}}"#;

#[test]
fn a_yarn_configuration_imports_with_its_queue_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |n: &str| tmp.path().join(n);
    std::fs::write(path("fair-scheduler.xml"), ALLOCATION_FILE).unwrap();
    std::fs::write(path("apps.json"), APPS).unwrap();
    std::fs::write(
        path("metrics.json"),
        r#"{"clusterMetrics":{"totalMB":100000,"totalVirtualCores":100}}"#,
    )
    .unwrap();
    let p = |n: &str| path(n).to_str().unwrap().to_string();
    let (code, out, err) = run(&[
        "import",
        "yarn",
        &p("fair-scheduler.xml"),
        &p("apps.json"),
        "--metrics",
        &p("metrics.json"),
        "--instance",
        &p("inst.json"),
        "--allocation",
        &p("alloc.csv"),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let summary: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(summary["users"], 2, "{summary}");
    assert_eq!(summary["placed"], 4);
    assert_eq!(summary["pending"], 106);
    let inst: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path("inst.json")).unwrap()).unwrap();
    assert_eq!(inst["quantum"], serde_json::json!([1.0, 1.0]));
    let queues = inst["queues"].as_array().unwrap();
    let q = |n: &str| queues.iter().find(|q| q["name"] == n).unwrap().clone();
    assert_eq!(q("eng")["guarantee"], serde_json::json!([20000.0, 20.0]));
    assert_eq!(q("eng")["weight"], 2.0);
    assert_eq!(q("eng.dev")["parent"], "eng");
    assert_eq!(
        q("eng.dev")["guarantee"],
        serde_json::json!([10000.0, 10.0])
    );
    assert_eq!(q("research")["limit"], serde_json::json!([50000.0, 50.0]));
    let users = inst["users"].as_array().unwrap();
    assert_eq!(users[0]["demand"], serde_json::json!([2048.0, 1.0]));
    assert_eq!(users[0]["tasks"], 10.0);
    let (code, out, err) = run(&["solve", &p("inst.json"), "--mechanism", "yarn-fair"]);
    assert_eq!(code, Some(0), "{err}");
    let a: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(a["verification"]["ok"], true, "{}", a["verification"]);
    assert!(a["user_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t.as_f64().unwrap().fract() == 0.0));
    // A resource amount YARN would not read is refused with its line.
    std::fs::write(
        path("bad.xml"),
        ALLOCATION_FILE.replace("20000 mb, 20 vcores", "20000 mb, 2 gpus"),
    )
    .unwrap();
    let (code, _, err) = run(&[
        "import",
        "yarn",
        &p("bad.xml"),
        &p("apps.json"),
        "--capacity",
        "100000,100",
        "--instance",
        &p("i2.json"),
        "--allocation",
        &p("a2.csv"),
    ]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("line 4 (queue eng) minResources") && err.contains("gpus"),
        "{err}"
    );
}
