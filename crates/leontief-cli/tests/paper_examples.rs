//! Every worked case in `datasets/paper-examples/` through `leontief solve`.
//!
//! A case whose mechanism is not built yet must be listed in `PENDING` with
//! the issue that will build it; any other case must match within its
//! tolerance and carry a verification that holds. A case of an unknown
//! mechanism fails the test, so no case is ever skipped silently.

use leontief_cli::cases::{compare, load_cases};
use std::path::PathBuf;
use std::process::Command;

/// Mechanisms whose cases wait for an open issue.
const PENDING: &[(&str, u32)] = &[
    ("bbf-eg", 4),
    ("bbf-ode", 4),
    ("enumerate-bbf", 4),
    ("psdsf", 5),
    ("vds", 5),
    ("tsf", 5),
];

/// Cases whose parameters lie in region N of 002 (the global search over S
/// is not built yet, issue 3): they must be refused with exit code 2 and a
/// message that names region N, never answered wrongly.
const PENDING_CASES: &[(&str, u32)] = &[
    ("joewong-prop3-below-b0.5-l0.1", 3),
    ("joewong-prop3-below-b0.5-l0.5-n11", 3),
    ("joewong-prop3-below-b2-l-0.1", 3),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_paper_example_reproduces_through_the_cli() {
    let dir = root().join("datasets/paper-examples");
    let cases = load_cases(&dir).expect("datasets/paper-examples is readable");
    assert!(
        cases.len() >= 60,
        "expected the full set of cases, found {}",
        cases.len()
    );
    let mut ran = 0;
    let mut failures = Vec::new();
    for case in &cases {
        let mech = case.mechanism();
        if PENDING.iter().any(|(m, _)| *m == mech) {
            continue;
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_leontief"));
        cmd.arg("solve")
            .arg(&case.instance)
            .arg("--mechanism")
            .arg(mech);
        cmd.args(case.flags());
        let out = cmd.output().expect("the binary runs");
        if PENDING_CASES.iter().any(|(c, _)| *c == case.name) {
            let err = String::from_utf8_lossy(&out.stderr);
            if out.status.code() != Some(2) || !err.contains("region N") {
                failures.push(format!(
                    "{}: expected a region-N refusal, got exit {:?}: {err}",
                    case.name,
                    out.status.code()
                ));
            }
            continue;
        }
        if !out.status.success() {
            failures.push(format!(
                "{}: exit {:?}: {}",
                case.name,
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        let json: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("solve prints JSON");
        if let Err(e) = compare(case, &json) {
            failures.push(format!("{}: {e}", case.name));
        }
        if json["verification"]["ok"] != serde_json::Value::Bool(true) {
            failures.push(format!(
                "{}: verification failed: {}",
                case.name, json["verification"]
            ));
        }
        // The contract: user_tasks[n] is the sum of tasks[n].
        for (n, row) in json["tasks"].as_array().unwrap().iter().enumerate() {
            let sum: f64 = row
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .sum();
            let x = json["user_tasks"][n].as_f64().unwrap();
            if (sum - x).abs() > 1e-9 * x.abs().max(1.0) {
                failures.push(format!(
                    "{}: user_tasks[{n}] = {x} but tasks[{n}] sums to {sum}",
                    case.name
                ));
            }
        }
        ran += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ran >= 39, "only {ran} cases ran");
}

#[test]
fn pending_mechanisms_are_refused_clearly_not_silently() {
    // Until their issues land, pending mechanisms exit 2 with a message.
    let inst = root().join("datasets/paper-examples/drfh-fig1.json");
    for (mech, _) in PENDING.iter().filter(|(m, _)| *m != "enumerate-bbf") {
        let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
            .args(["solve", inst.to_str().unwrap(), "--mechanism", mech])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{mech}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(mech) && err.contains("not implemented"),
            "{mech}: {err}"
        );
    }
}

#[test]
fn datasets_match_the_shared_cases_when_present() {
    // The repository is self-contained; when ../shared is beside it, the
    // copies must not have drifted.
    let shared = root().join("../shared/cases");
    let Ok(entries) = std::fs::read_dir(&shared) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap();
        let ours = root().join("datasets/paper-examples").join(name);
        assert_eq!(
            std::fs::read(&p).unwrap(),
            std::fs::read(&ours).unwrap_or_default(),
            "datasets/paper-examples/{} differs from shared/cases",
            name.to_string_lossy()
        );
    }
}
