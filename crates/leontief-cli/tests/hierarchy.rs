//! The hierarchical mechanisms from the command line: a queue's weight
//! swept, an allocation audited against hdrfh per queue, and queue input
//! refused by entry.

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
fn a_queue_weight_sweep_raises_that_queue() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("w.csv");
    let inst = case("hdrf-saturated.json");
    let (code, _, err) = run(&[
        "sweep",
        inst.to_str().unwrap(),
        "--mechanism",
        "hdrf",
        "--queue-weight",
        "A=0.5..4:6",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (share, verified) = (col("dominant_share_A"), col("verified"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 6);
    let shares: Vec<f64> = rows.iter().map(|r| r[share].parse().unwrap()).collect();
    assert!(rows.iter().all(|r| r[verified] == "true"), "{text}");
    assert!(
        shares.windows(2).all(|w| w[1] >= w[0] - 1e-12),
        "{shares:?}"
    );
    assert!(shares[5] > shares[0], "{shares:?}");
    // Only the hierarchical mechanisms, only a queue that exists.
    let (code, _, err) = run(&[
        "sweep",
        inst.to_str().unwrap(),
        "--mechanism",
        "drf",
        "--queue-weight",
        "A=1,2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("hdrf, hdrfh, hdrf-naive and the schedulers' algorithms (yarn-fair, kai, volcano-proportion, kueue), not drf"), "{err}");
    let (code, _, err) = run(&[
        "sweep",
        inst.to_str().unwrap(),
        "--mechanism",
        "hdrf",
        "--queue-weight",
        "Z=1,2",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no queue named \"Z\""), "{err}");
}

#[test]
fn the_audit_compares_queues() {
    let tmp = tempfile::tempdir().unwrap();
    let inst = case("hdrf-saturated.json");
    let (code, naive, err) = run(&["solve", inst.to_str().unwrap(), "--mechanism", "hdrf-naive"]);
    assert_eq!(code, Some(0), "{err}");
    let alloc = tmp.path().join("naive.json");
    std::fs::write(&alloc, naive).unwrap();
    let (code, out, err) = run(&[
        "audit",
        inst.to_str().unwrap(),
        alloc.to_str().unwrap(),
        "--against",
        "hdrfh",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let queues = r["against"][0]["queues"].as_array().unwrap();
    assert_eq!(queues.len(), 2);
    // Under naive hierarchical DRF queue A's GPU user gets 5/36 where
    // H-DRF gives 1/6; A's dominant share (its CPU user's 1/3) is the same.
    assert_eq!(queues[0]["queue"], "A");
    let lost = &r["against"][0]["lost_most"][0];
    assert_eq!(lost["user"], "a2");
    assert!((lost["ratio"].as_f64().unwrap() - 5.0 / 6.0).abs() < 1e-9);
}

#[test]
fn bad_queues_exit_2_naming_the_entry() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.json");
    std::fs::write(
        &path,
        r#"{"resources": ["cpu"], "servers": [{"name": "s", "capacity": [4]}],
            "queues": [{"name": "A", "parent": "B"}, {"name": "B", "parent": "A", "limit": [-1]}],
            "users": [{"name": "u", "demand": [1], "queue": "C"}]}"#,
    )
    .unwrap();
    let (code, out, err) = run(&["solve", path.to_str().unwrap(), "--mechanism", "hdrfh"]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.is_empty());
    for needle in [
        "queues[1].limit[0] is negative (-1)",
        "queues[0].parent makes a cycle",
        "users[0].queue names unknown queue \"C\"",
    ] {
        assert!(err.contains(needle), "{needle} not in {err}");
    }
}

/// docs/mechanisms.md, "H-DRF is not strategy-proof": c1 gains by asking
/// for a resource it does not use (inflating only), in all three
/// hierarchical mechanisms; without the queues (DRF) nobody gains.
#[test]
fn a_user_gains_by_inflating_its_queues_share() {
    let inst = case("hdrf-sp-truthful.json");
    let probe = |inst: &str, mech: &str| {
        let (code, out, err) = run(&[
            "audit",
            inst,
            "--probe-sp",
            mech,
            "--inflate-only",
            "--budget",
            "60",
        ]);
        assert_eq!(code, Some(0), "{err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };
    for mech in ["hdrf", "hdrfh", "hdrf-naive"] {
        let p = probe(inst.to_str().unwrap(), mech);
        assert_eq!(p["manipulable"], true, "{mech}: {p}");
        let c1 = &p["users"][2];
        assert_eq!(c1["user"], "c1");
        assert!((c1["truthful"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
        // The best inflation is r1 = (sqrt(17) - 3) / 4 per task: 4.28%.
        let gain = c1["gain"].as_f64().unwrap();
        assert!(gain > 0.03 && gain < 0.0429, "{mech}: {gain}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let flat = tmp.path().join("flat.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&inst).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("queues");
    for u in v["users"].as_array_mut().unwrap() {
        u.as_object_mut().unwrap().remove("queue");
    }
    std::fs::write(&flat, v.to_string()).unwrap();
    let p = probe(flat.to_str().unwrap(), "drf");
    assert_eq!(p["manipulable"], false, "{p}");
}
