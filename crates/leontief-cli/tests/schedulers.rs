//! The schedulers' share algorithms from the command line: the worked
//! case compared per queue with the exact answer, and their input refused
//! by entry.

mod common;
use common::leontief as run;
use std::path::PathBuf;

fn case(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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
        why.contains("cpu share binds") && why.contains("mem share goes unused"),
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

#[test]
fn a_bad_quantum_is_refused_by_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("q.json");
    std::fs::write(
        &p,
        r#"{"resources":["cpu","mem"],"servers":[{"name":"s","capacity":[4,4]}],"quantum":[1,0],
            "users":[{"name":"u","demand":[1,1]}]}"#,
    )
    .unwrap();
    let (code, _, err) = run(&["solve", p.to_str().unwrap(), "--mechanism", "yarn-fair"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("quantum[1]"), "{err}");
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
