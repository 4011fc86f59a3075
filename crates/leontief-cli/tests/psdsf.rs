//! `leontief solve --mechanism psdsf` end to end on a generated placement
//! instance: the default selection is ended by the exact forest finish and
//! says so, `--select sweeps` runs the best responses to their limit; both
//! pass the independent verification (Definition 4, sharing incentive,
//! envy); an unknown selection is bad input (exit 2, nothing solved).

mod common;

use common::leontief;
use serde_json::Value;

fn instance() -> std::path::PathBuf {
    let (code, json, err) = leontief(&[
        "generate",
        "placement",
        "--users",
        "60",
        "--servers",
        "30",
        "--resources",
        "3",
        "--eligible",
        "5",
        "--seed",
        "1",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let p = std::env::temp_dir().join(format!("leontief-psdsf-{}.json", std::process::id()));
    std::fs::write(&p, json).unwrap();
    p
}

fn solve(path: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec!["solve", path.to_str().unwrap(), "--mechanism", "psdsf"];
    args.extend_from_slice(extra);
    let (code, out, err) = leontief(&args);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "optimal", "{v}");
    assert_eq!(v["verification"]["ok"], true, "{}", v["verification"]);
    assert_eq!(v["verification"]["certificate"]["holds"], true);
    v
}

#[test]
fn both_selections_are_certified_and_say_how_they_ended() {
    let p = instance();
    let finish = solve(&p, &[]);
    let status = finish["backend_status"].as_str().unwrap();
    assert!(status.contains("exact forest finish"), "{status}");
    let sweeps = solve(&p, &["--select", "sweeps"]);
    let status = sweeps["backend_status"].as_str().unwrap();
    assert!(
        status.contains("converged") && !status.contains("forest"),
        "{status}"
    );
    // "...: N sweeps, ..."
    let count = |v: &Value| -> usize {
        let s = v["backend_status"].as_str().unwrap();
        let words: Vec<&str> = s.split_whitespace().collect();
        let at = words.iter().position(|w| w.starts_with("sweeps")).unwrap();
        words[at - 1].parse().unwrap()
    };
    assert!(count(&finish) < count(&sweeps), "{finish} vs {sweeps}");
    let (code, out, err) = leontief(&[
        "solve",
        p.to_str().unwrap(),
        "--mechanism",
        "psdsf",
        "--select",
        "fastest",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty() && err.contains("--select fastest"), "{err}");
    std::fs::remove_file(p).ok();
}
