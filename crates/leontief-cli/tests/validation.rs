//! One test per rejection: exit code 2, the message names the field and
//! entry, and nothing is printed on stdout (nothing was solved).

use std::io::Write;
use std::process::Command;

fn run(json: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut f = tempfile();
    f.write_all(json.as_bytes()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
        .args(["solve", f.path().to_str().unwrap(), "--mechanism", "drfh"])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A file removed when the test ends.
fn tempfile() -> tempfile::NamedTempFile {
    tempfile::Builder::new().suffix(".json").tempfile().unwrap()
}

/// A valid base instance with one field replaced.
fn with(users: &str, servers: &str, resources: &str) -> String {
    format!(r#"{{"resources": {resources}, "servers": {servers}, "users": {users}}}"#)
}

const R: &str = r#"["cpu", "mem"]"#;
const S: &str = r#"[{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}]"#;
const U: &str = r#"[{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]"#;

fn rejects(json: String, field: &str, words: &str) {
    let (code, stdout, stderr) = run(&json, &[]);
    assert_eq!(code, Some(2), "exit code for {field}: {stderr}");
    assert!(stdout.is_empty(), "nothing may be solved: {stdout}");
    assert!(
        stderr.contains(field),
        "message must name {field}: {stderr}"
    );
    assert!(
        stderr.contains(words),
        "message must say '{words}': {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn the_base_instance_is_valid() {
    let (code, stdout, stderr) = run(&with(U, S, R), &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("\"user_tasks\""));
}

#[test]
fn wrong_demand_dimension() {
    rejects(
        with(r#"[{"name": "u1", "demand": [0.2]}]"#, S, R),
        "users[0].demand",
        "expected 2",
    );
}

#[test]
fn wrong_capacity_dimension() {
    rejects(
        with(U, r#"[{"name": "s1", "capacity": [1, 2, 3]}]"#, R),
        "servers[0].capacity",
        "expected 2",
    );
}

#[test]
fn negative_demand() {
    rejects(
        with(
            r#"[{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, -0.5]}]"#,
            S,
            R,
        ),
        "users[1].demand[1]",
        "negative",
    );
}

#[test]
fn negative_capacity() {
    rejects(
        with(U, r#"[{"name": "s1", "capacity": [-2, 12]}]"#, R),
        "servers[0].capacity[0]",
        "negative",
    );
}

#[test]
fn non_finite_number() {
    // JSON has no NaN or inf; a number out of f64's range is refused where it stands.
    rejects(
        with(r#"[{"name": "u1", "demand": [1e999, 1]}]"#, S, R),
        "users[0].demand[0]",
        "",
    );
}

#[test]
fn all_zero_demand() {
    rejects(
        with(r#"[{"name": "u1", "demand": [0, 0]}]"#, S, R),
        "users[0].demand",
        "all zero",
    );
}

#[test]
fn all_zero_capacity() {
    rejects(
        with(U, r#"[{"name": "s1", "capacity": [0, 0]}]"#, R),
        "servers[0].capacity",
        "all zero",
    );
}

#[test]
fn non_positive_weight() {
    rejects(
        with(r#"[{"name": "u1", "demand": [1, 1], "weight": 0}]"#, S, R),
        "users[0].weight",
        "> 0",
    );
    rejects(
        with(r#"[{"name": "u1", "demand": [1, 1], "weight": -2}]"#, S, R),
        "users[0].weight",
        "> 0",
    );
}

#[test]
fn non_positive_task_cap() {
    rejects(
        with(r#"[{"name": "u1", "demand": [1, 1], "tasks": 0}]"#, S, R),
        "users[0].tasks",
        "> 0",
    );
}

#[test]
fn zero_count() {
    rejects(
        with(U, r#"[{"name": "s1", "capacity": [1, 1], "count": 0}]"#, R),
        "servers[0].count",
        ">= 1",
    );
}

#[test]
fn fractional_count() {
    rejects(
        with(
            U,
            r#"[{"name": "s1", "capacity": [1, 1], "count": 2.5}]"#,
            R,
        ),
        "servers[0].count",
        "",
    );
}

#[test]
fn unknown_server_in_list() {
    rejects(
        with(
            r#"[{"name": "u1", "demand": [1, 1], "servers": ["s1", "s9"]}]"#,
            S,
            R,
        ),
        "users[0].servers[1]",
        "unknown server \"s9\"",
    );
}

#[test]
fn empty_server_list() {
    rejects(
        with(r#"[{"name": "u1", "demand": [1, 1], "servers": []}]"#, S, R),
        "users[0].servers",
        "empty",
    );
}

#[test]
fn duplicate_names() {
    rejects(
        with(U, S, r#"["cpu", "cpu"]"#),
        "resources[1]",
        "duplicates resources[0]",
    );
    rejects(
        with(
            U,
            r#"[{"name": "a", "capacity": [1, 1]}, {"name": "a", "capacity": [1, 1]}]"#,
            R,
        ),
        "servers[1].name",
        "duplicates",
    );
    rejects(
        with(
            r#"[{"name": "u", "demand": [1, 1]}, {"name": "u", "demand": [1, 1]}]"#,
            S,
            R,
        ),
        "users[1].name",
        "duplicates",
    );
}

#[test]
fn empty_lists() {
    rejects(with(U, S, "[]"), "resources", "empty");
    rejects(with(U, "[]", R), "servers", "empty");
    rejects(with("[]", S, R), "users", "empty");
}

#[test]
fn misspelt_field_is_not_ignored() {
    rejects(
        with(r#"[{"name": "u1", "demand": [1, 1], "weigth": 2}]"#, S, R),
        "users[0]",
        "unknown field `weigth`",
    );
}

#[test]
fn wrong_type() {
    rejects(
        with(r#"[{"name": "u1", "demand": ["a", 1]}]"#, S, R),
        "users[0].demand[0]",
        "invalid type",
    );
}

#[test]
fn not_json_and_missing_file() {
    let (code, _, stderr) = run("{not json", &[]);
    assert_eq!(code, Some(2), "{stderr}");
    let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
        .args(["solve", "/nonexistent/instance.json", "--mechanism", "drfh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/instance.json"));
}

#[test]
fn every_issue_is_reported_at_once() {
    let (code, _, stderr) = run(
        &with(
            r#"[{"name": "u1", "demand": [-1, 1], "weight": 0, "tasks": -3}]"#,
            S,
            R,
        ),
        &[],
    );
    assert_eq!(code, Some(2));
    for field in ["users[0].demand[0]", "users[0].weight", "users[0].tasks"] {
        assert!(stderr.contains(field), "{field} missing from {stderr}");
    }
}

#[test]
fn bad_parameters_are_bad_input() {
    let base = with(U, S, R);
    let (code, _, stderr) = run(&base, &["--k", "2"]);
    assert_eq!(code, Some(2), "--k with drfh: {stderr}");
    assert!(stderr.contains("--k"));
    let (code, _, stderr) = run(&base, &["--time-limit", "-1"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("time_limit"));
    let mut f = tempfile();
    f.write_all(base.as_bytes()).unwrap();
    for (mech, k, msg) in [
        ("kdf", None, "--k"),
        ("kdf", Some("0"), "--k"),
        ("nosuch", None, "unknown mechanism"),
    ] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_leontief"));
        cmd.args(["solve", f.path().to_str().unwrap(), "--mechanism", mech]);
        if let Some(k) = k {
            cmd.args(["--k", k]);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{mech} {k:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(msg));
    }
}

#[test]
fn validate_reports_what_it_found() {
    let mut f = tempfile();
    f.write_all(
        with(
            U,
            r#"[{"name": "big", "capacity": [1, 1], "count": 3863}]"#,
            R,
        )
        .as_bytes(),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
        .args(["validate", f.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["servers"], 3863);
    assert_eq!(v["server_entries"], 1);
    assert_eq!(v["classes"], 1);
    assert_eq!(v["users"], 2);
}

#[test]
fn heuristic_parameters_are_checked() {
    let mut f = tempfile();
    f.write_all(with(U, S, R).as_bytes()).unwrap();
    let path = f.path().to_str().unwrap().to_string();
    for (args, msg) in [
        (vec!["--mechanism", "slots", "--slots", "0"], "--slots"),
        (
            vec!["--mechanism", "best-fit", "--normaliser", "gpu"],
            "--normaliser gpu",
        ),
        (
            vec!["--mechanism", "drfh", "--slots", "4"],
            "--slots does not apply",
        ),
        (
            vec!["--mechanism", "first-fit", "--on-full", "skip"],
            "--on-full does not apply",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
            .arg("solve")
            .arg(&path)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
        .args([
            "solve",
            &path,
            "--mechanism",
            "best-fit",
            "--normaliser",
            "mem",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["gap"]["exact_mechanism"], "drfh");
    assert_eq!(v["verification"]["ok"], true);
}
