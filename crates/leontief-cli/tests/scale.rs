//! The datacenter-scale output of issue 19 through the binary: the sparse
//! and dense layouts describe the same allocation, and above 20,000 pairs
//! the max-min answer is verified by its certificate alone, as is NFC's
//! total.

mod common;

use common::leontief;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A generated instance in `dir` (removed when the test ends).
fn generated(
    dir: &tempfile::TempDir,
    name: &str,
    users: &str,
    servers: &str,
    extra: &[&str],
) -> PathBuf {
    let p = dir.path().join(name);
    let mut args = vec![
        "generate",
        "heterogeneous",
        "--users",
        users,
        "--servers",
        servers,
        "--seed",
        "2",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = leontief(&args);
    assert_eq!(code, Some(0), "{err}");
    std::fs::write(&p, out).unwrap();
    p
}

fn solve(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["solve", path.to_str().unwrap(), "--mechanism", "drfh"];
    args.extend_from_slice(extra);
    let (code, out, err) = leontief(&args);
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).unwrap()
}

/// Either layout, as a reader of the contract reads it.
fn dense_tasks(v: &Value) -> Vec<Vec<f64>> {
    if let Some(s) = v.get("tasks_sparse") {
        assert_eq!(v["layout"], "sparse");
        let s: leontief_core::SparseTasks = serde_json::from_value(s.clone()).unwrap();
        s.to_dense().expect("indices in range")
    } else {
        serde_json::from_value(v["tasks"].clone()).unwrap()
    }
}

#[test]
fn sparse_and_dense_layouts_describe_the_same_allocation() {
    let tmp = tempfile::tempdir().unwrap();
    let p = generated(&tmp, "h20x100.json", "20", "100", &[]);
    let dense = solve(&p, &["--layout", "dense"]);
    let sparse = solve(&p, &["--layout", "sparse"]);
    assert!(dense.get("tasks_sparse").is_none());
    assert!(sparse.get("tasks").is_none());
    let (a, b) = (dense_tasks(&dense), dense_tasks(&sparse));
    assert_eq!(a.len(), 20);
    assert_eq!(a, b);
    let nonzeros = sparse["tasks_sparse"]["tasks"].as_array().unwrap().len();
    assert!(nonzeros > 0 && nonzeros < 20 * 100);
    assert_eq!(dense["user_tasks"], sparse["user_tasks"]);
    // Small instances print the dense layout by default (the contract).
    let auto = solve(&p, &[]);
    assert!(auto.get("tasks").is_some() && auto.get("layout").is_none());
}

#[test]
fn above_twenty_thousand_pairs_the_certificate_alone_verifies() {
    for resources in ["2", "3"] {
        let tmp = tempfile::tempdir().unwrap();
        let p = generated(
            &tmp,
            &format!("h60x400x{resources}.json"),
            "60",
            "400",
            &["--resources", resources],
        );
        let v = solve(&p, &[]);
        assert_eq!(v["status"], "optimal");
        let ver = &v["verification"];
        assert_eq!(ver["ok"], true, "{ver}");
        assert_eq!(ver["certificate"]["ok"], true);
        assert_eq!(ver["max_min"]["by"], "certificate");
        assert_eq!(ver["certificate"]["pairs"], 60 * 400);
        let c = &v["certificate"];
        assert_eq!(c["pairs"], 60 * 400);
        assert!(c["columns"].as_u64().unwrap() < 60 * 400);
        // Above 20,000 pairs (up to 10^6) DRFH still gets its
        // references: it is its own fairness reference, and NFC bounds
        // its total.
        let refs = &v["gap"];
        assert!((refs["percent_fairness"].as_f64().unwrap() - 100.0).abs() < 1e-9);
        let eff = refs["percent_efficiency"].as_f64().unwrap();
        assert!(eff > 0.0 && eff <= 100.0 + 1e-6, "{eff}");
        // `--verify always` adds the flat LP checks, which agree.
        let always = solve(&p, &["--verify", "always"]);
        assert_eq!(always["verification"]["max_min"]["ok"], true);
        assert_eq!(always["verification"]["pareto"]["ok"], true);
        assert_eq!(dense_tasks(&always), dense_tasks(&v));
    }
}

/// NFC above 50,000 pairs: column generation, and the verification proves
/// the total by the printed prices over every pair (the library's tests
/// cross-check the flat and generated paths).
#[test]
fn nfc_at_scale_prints_a_certificate_that_proves_its_total() {
    let tmp = tempfile::tempdir().unwrap();
    let p = generated(&tmp, "h60x1000.json", "60", "1000", &["--resources", "3"]);
    let (code, out, err) = leontief(&["solve", p.to_str().unwrap(), "--mechanism", "nfc"]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "optimal");
    let c = &v["total_certificate"];
    assert_eq!(c["path"], "generated");
    assert_eq!(c["pairs"], 60 * 1000);
    assert!(c["columns"].as_u64().unwrap() < 60 * 1000 / 4);
    assert_eq!(c["prices"].as_array().unwrap().len(), 1000);
    let ver = &v["verification"];
    assert_eq!(ver["ok"], true, "{ver}");
    assert_eq!(ver["certificate"]["ok"], true);
    assert_eq!(ver["certificate"]["pairs"], 60 * 1000);
    let total: f64 = v["user_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .sum();
    let bound = ver["certificate"]["bound"].as_f64().unwrap();
    assert!((bound - total).abs() <= 1e-6 * bound, "{bound} vs {total}");
    assert!((v["objective"].as_f64().unwrap() - total).abs() <= 1e-6 * total);
}
