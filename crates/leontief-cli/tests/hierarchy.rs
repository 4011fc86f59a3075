//! The hierarchical mechanisms from the command line: a queue's weight
//! swept, an allocation audited against hdrfh per queue, and queue input
//! refused by entry.

mod common;
use common::leontief as run;
use std::path::PathBuf;

fn case(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
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
