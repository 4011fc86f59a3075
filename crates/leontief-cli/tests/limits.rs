//! Every count and size has a stated maximum, refused with exit code 2
//! and the field named; a bad output path is bad input before any work;
//! inputs that were silently misread are refused or said. Each test
//! failed on the code before its fix.

mod common;

use common::leontief;
use std::path::{Path, PathBuf};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const TWO: &str = r#"{"resources":["cpu","mem"],"servers":[{"name":"a","capacity":[1,1]},{"name":"b","capacity":[2,1]}],
    "users":[{"name":"u1","demand":[0.1,0.05]},{"name":"u2","demand":[0.05,0.1]}]}"#;

fn refused(args: &[&str], names: &str) {
    let (code, out, err) = leontief(args);
    assert_eq!(code, Some(2), "{args:?}: {out} {err}");
    assert!(err.contains(names), "{args:?}: {err}");
}

/// Sweeps of a million values ran for minutes; NaN and inf were taken as
/// lambda (exit 0).
#[test]
fn sweeps_have_a_most_values_and_finite_lambda() {
    let tmp = tempfile::tempdir().unwrap();
    let inst = write(tmp.path(), "i.json", TWO);
    let csv = tmp.path().join("out.csv");
    refused(
        &[
            "sweep",
            s(&inst),
            "--mechanism",
            "gfj",
            "--alpha",
            "0.25..8:1000000",
            "--csv",
            s(&csv),
        ],
        "at most 1000",
    );
    refused(
        &[
            "sweep",
            s(&inst),
            "--mechanism",
            "slots",
            "--slots",
            "1..1000000:1000000",
            "--csv",
            s(&csv),
        ],
        "at most 1000",
    );
    for l in ["fixed:NaN", "fixed:inf"] {
        refused(
            &[
                "sweep",
                s(&inst),
                "--mechanism",
                "fds",
                "--beta",
                "0.6..0.9:3",
                "--lambda-rule",
                l,
                "--csv",
                s(&csv),
            ],
            "--lambda-rule",
        );
    }
    refused(
        &[
            "sweep",
            s(&inst),
            "--mechanism",
            "gfj",
            "--alpha",
            "1,inf",
            "--csv",
            s(&csv),
        ],
        "not a finite number",
    );
}

/// `--budget 18446744073709551615` hung; `generate` with huge sizes
/// panicked (capacity overflow) or aborted.
#[test]
fn probe_budgets_and_generated_sizes_are_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let inst = write(tmp.path(), "i.json", TWO);
    refused(
        &[
            "audit",
            s(&inst),
            "--probe-sp",
            "drfh",
            "--budget",
            "18446744073709551615",
        ],
        "--budget",
    );
    refused(
        &[
            "generate",
            "heterogeneous",
            "--users",
            "1000000000000",
            "--servers",
            "10",
            "--seed",
            "1",
        ],
        "users",
    );
    refused(
        &[
            "generate",
            "heterogeneous",
            "--users",
            "100000",
            "--servers",
            "100000",
            "--seed",
            "1",
        ],
        "user-server pairs",
    );
    refused(
        &[
            "generate",
            "google-cell",
            "--users",
            "18446744073709551615",
            "--seed",
            "1",
        ],
        "users",
    );
}

/// Bad output paths exited 1, `simulate -o` only after the whole run.
#[test]
fn bad_output_paths_are_bad_input_before_any_work() {
    let tmp = tempfile::tempdir().unwrap();
    let inst = write(tmp.path(), "i.json", TWO);
    let nodes = write(
        tmp.path(),
        "nodes.json",
        r#"{"items":[{"metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi"}}}]}"#,
    );
    let pods = write(tmp.path(), "pods.json", r#"{"items":[]}"#);
    let cfg = write(
        tmp.path(),
        "c.json",
        r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"synthetic": {}}, "scheduler": "best-fit"}"#,
    );
    let ok = tmp.path().join("ok.csv");
    refused(
        &[
            "import",
            "kubernetes",
            s(&nodes),
            s(&pods),
            "--instance",
            "/dev/null/x",
            "--allocation",
            s(&ok),
        ],
        "--instance /dev/null/x",
    );
    refused(
        &["simulate", s(&cfg), "-o", "/dev/null/x"],
        "-o /dev/null/x",
    );
    refused(
        &["simulate", s(&cfg), "--csv-dir", "/dev/null/x"],
        "--csv-dir /dev/null/x",
    );
    refused(
        &[
            "solve",
            s(&inst),
            "--mechanism",
            "bbf-ode",
            "--trajectory",
            "/dev/null/x",
        ],
        "--trajectory /dev/null/x",
    );
}

/// Weights exactly 1e12 apart ended numerical_failure with tasks [0, 0]:
/// the documented spread is now 1e9, refused beyond; a class of 10^8
/// servers aborted first-fit and a count of 10^12 panicked drf and
/// bbf-eg: counts add up to at most 10^12, the heuristics expand at most
/// 10^7 servers, and a user's tasks in the whole cluster at most 10^12.
#[test]
fn documented_limits_are_answered_or_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let far = write(
        tmp.path(),
        "w.json",
        r#"{"resources":["cpu"],"servers":[{"name":"a","capacity":[1]}],
            "users":[{"name":"u1","demand":[0.1],"weight":1e12},{"name":"u2","demand":[0.1]}]}"#,
    );
    refused(
        &["solve", s(&far), "--mechanism", "drfh"],
        "users[1].weight",
    );
    let near = write(
        tmp.path(),
        "w9.json",
        r#"{"resources":["cpu","mem"],"servers":[{"name":"a","capacity":[1,1]},{"name":"b","capacity":[2,1]}],
            "users":[{"name":"u1","demand":[0.1,0.05],"weight":1e9},{"name":"u2","demand":[0.05,0.1]}]}"#,
    );
    for m in ["drfh", "tsf", "kdf"] {
        let (code, out, err) = leontief(
            &["solve", s(&near), "--mechanism", m, "--k", "2"][..if m == "kdf" { 6 } else { 4 }],
        );
        assert_eq!(code, Some(0), "{m}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["status"], "optimal", "{m}");
        assert_eq!(v["verification"]["ok"], true, "{m}");
        assert!(v["user_tasks"][1].as_f64().unwrap() > 0.0, "{m}: {out}");
    }
    let big = write(
        tmp.path(),
        "c8.json",
        r#"{"resources":["cpu","mem"],"servers":[{"name":"a","capacity":[1,1],"count":100000000}],
            "users":[{"name":"u1","demand":[0.5,0.25]},{"name":"u2","demand":[0.25,0.5]}]}"#,
    );
    refused(
        &["solve", s(&big), "--mechanism", "first-fit"],
        "physical servers",
    );
    let huge = write(
        tmp.path(),
        "c12.json",
        r#"{"resources":["cpu","mem"],"servers":[{"name":"a","capacity":[1,1],"count":999999999999},{"name":"b","capacity":[1,2]}],
            "users":[{"name":"u1","demand":[2000,1000]},{"name":"u2","demand":[1000,2000]}]}"#,
    );
    for m in ["drf", "drfh", "bbf-eg", "nfc"] {
        let (code, out, err) = leontief(&["solve", s(&huge), "--mechanism", m]);
        assert_eq!(code, Some(0), "{m}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["verification"]["ok"], true, "{m}: {out}");
    }
    let over = write(
        tmp.path(),
        "c13.json",
        r#"{"resources":["cpu"],"servers":[{"name":"a","capacity":[1],"count":600000000000},{"name":"b","capacity":[1],"count":600000000000}],
            "users":[{"name":"u1","demand":[1000]}]}"#,
    );
    refused(&["validate", s(&over)], "physical servers");
    let many_tasks = write(
        tmp.path(),
        "t.json",
        r#"{"resources":["cpu"],"servers":[{"name":"a","capacity":[1],"count":1000000000}],
            "users":[{"name":"u1","demand":[1e-12]}]}"#,
    );
    refused(&["validate", s(&many_tasks)], "users[0].demand[0]");
    let whole = write(
        tmp.path(),
        "wt.json",
        r#"{"resources":["cpu"],"servers":[{"name":"a","capacity":[1],"count":1000}],
            "users":[{"name":"u1","demand":[1e-6]}]}"#,
    );
    refused(
        &["solve", s(&whole), "--mechanism", "best-fit"],
        "users[0] (u1)",
    );
    let users = write(
        tmp.path(),
        "s.json",
        r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"synthetic": {"users": 100001}}, "scheduler": "best-fit"}"#,
    );
    refused(&["simulate", s(&users)], "workload.synthetic.users");
}

/// merge-bbf without --instance merged an empty bottleneck set and a
/// resource named twice and said `complete: true` without saying that
/// the witnesses were not re-checked.
#[test]
fn merged_shards_say_what_was_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let inst = write(
        tmp.path(),
        "b.json",
        r#"{"resources":["r1","r2"],"servers":[{"name":"pool","capacity":[1,1]}],
            "users":[{"name":"a","demand":[1,0.5],"tasks":1},{"name":"b","demand":[0.5,1],"tasks":1}]}"#,
    );
    let (code, out, err) = leontief(&["enumerate-bbf", s(&inst)]);
    assert_eq!(code, Some(0), "{err}");
    let shard = write(tmp.path(), "part.json", &out);
    let (code, merged, err) = leontief(&["merge-bbf", s(&shard)]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&merged).unwrap();
    assert_eq!(v["witnesses_verified"], false);
    let (code, merged, err) = leontief(&["merge-bbf", s(&shard), "--instance", s(&inst)]);
    assert_eq!(code, Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&merged).unwrap();
    assert_eq!(v["witnesses_verified"], true);
    let mut tampered: serde_json::Value = serde_json::from_str(&out).unwrap();
    let first = tampered["solutions"][0]["bottlenecks"][0].clone();
    tampered["solutions"][0]["bottlenecks"] = serde_json::json!([first.clone(), first]);
    let bad = write(tmp.path(), "twice.json", &tampered.to_string());
    refused(&["merge-bbf", s(&bad)], "twice");
    tampered["solutions"][0]["bottlenecks"] = serde_json::json!([]);
    let bad = write(tmp.path(), "empty.json", &tampered.to_string());
    refused(&["merge-bbf", s(&bad)], "empty bottleneck set");
}

/// The Kubernetes importer counted a pod listed twice as two tasks and
/// read non-object items as pods; a node without `status.allocatable`
/// was reported as `servers[1].capacity is all zero`. CSV user names were
/// trimmed, so " a" was charged to "a".
#[test]
fn misread_inputs_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let nodes = write(
        tmp.path(),
        "nodes.json",
        r#"{"items":[{"metadata":{"name":"node-a"},"status":{"allocatable":{"cpu":"4","memory":"8Gi"}}}]}"#,
    );
    let pod = r#"{"metadata":{"name":"p","namespace":"x","uid":"u-1"},"spec":{"nodeName":"node-a","containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]},"status":{"phase":"Running"}}"#;
    let out = tmp.path().join("i.json");
    let alloc = tmp.path().join("a.csv");
    let run = |nodes: &Path, pods: &str| {
        let p = write(tmp.path(), "pods.json", pods);
        leontief(&[
            "import",
            "kubernetes",
            s(nodes),
            s(&p),
            "--instance",
            s(&out),
            "--allocation",
            s(&alloc),
        ])
    };
    let (code, _, err) = run(&nodes, &format!(r#"{{"items":[{pod},{pod}]}}"#));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("listed twice, first at pods.items[0]"),
        "{err}"
    );
    let (code, _, err) = run(&nodes, &format!(r#"{{"items":[{pod}, 7]}}"#));
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("pods.items[1] is not an object"), "{err}");
    let bare = write(
        tmp.path(),
        "bare.json",
        r#"{"items":[{"metadata":{"name":"node-a"},"status":{"allocatable":{"cpu":"4","memory":"8Gi"}}},{"metadata":{"name":"node-b"},"status":{}}]}"#,
    );
    let (code, _, err) = run(&bare, &format!(r#"{{"items":[{pod}]}}"#));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("nodes.items[1] (node-b).status.allocatable is missing"),
        "{err}"
    );

    let inst = write(
        tmp.path(),
        "u.json",
        r#"{"resources":["cpu"],"servers":[{"name":"s","capacity":[4]}],"users":[{"name":"a","demand":[1]}]}"#,
    );
    let csv = write(tmp.path(), "a.csv", "user,server,tasks\n\" a\",s,1\n");
    refused(
        &["audit", s(&inst), s(&csv), "--against", "none"],
        "unknown user \" a\"",
    );
    let padded = write(tmp.path(), "b.csv", "user , server , tasks\na,s, 2 \n");
    let (code, _, err) = leontief(&["audit", s(&inst), s(&padded), "--against", "none"]);
    assert_eq!(code, Some(0), "{err}");
}
