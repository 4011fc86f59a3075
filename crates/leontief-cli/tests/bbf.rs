//! The BBF commands end to end: shards merge to the whole enumeration,
//! merge-bbf refuses incomplete or mixed shard sets, bad BBF input exits 2
//! naming the entry, the ODE trajectory CSV, and `repro bbf-table1`. (The
//! mechanism's behaviour is tested on the library: crates/leontief/tests/bbf.rs.)

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_leontief"))
}

fn case(name: &str) -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../../datasets/paper-examples")
    .join(format!("{name}.json"))
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn sets(v: &serde_json::Value) -> Vec<Vec<String>> {
    let mut s: Vec<Vec<String>> = v["solutions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["bottlenecks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    s.sort();
    s
}

#[test]
fn shards_merge_to_the_whole_enumeration() {
    let tmp = tempfile::tempdir().unwrap();
    let inst = case("bbf-family-N5");
    let whole = json(&bin().arg("enumerate-bbf").arg(&inst).output().unwrap());
    let mut files = Vec::new();
    for i in 0..3 {
        let out = bin()
            .arg("enumerate-bbf")
            .arg(&inst)
            .args(["--shard", &format!("{i}/3"), "--threads", "1"])
            .output()
            .unwrap();
        let f = tmp.path().join(format!("shard{i}.json"));
        std::fs::write(&f, &out.stdout).unwrap();
        files.push(f);
    }
    let merged = json(&bin().arg("merge-bbf").args(&files).output().unwrap());
    assert_eq!(sets(&merged), sets(&whole));
    assert_eq!(merged["subsets_tried"], whole["subsets_tried"]);
    assert_eq!(sets(&whole).len(), 26);

    // A missing shard is refused, naming it.
    let out = bin().arg("merge-bbf").args(&files[..2]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("shard 2/3 is missing"));
    // A shard of another problem is refused.
    let other = bin()
        .arg("enumerate-bbf")
        .arg(case("bbf-family-N3"))
        .args(["--shard", "2/3"])
        .output()
        .unwrap();
    let f = tmp.path().join("other.json");
    std::fs::write(&f, &other.stdout).unwrap();
    let out = bin()
        .arg("merge-bbf")
        .args([&files[0], &files[1], &f])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("different problem"));

    // Tampered shards (issue 14, defect 6): the merge re-checks what they
    // claim. The untampered set merges with --instance too.
    let out = bin()
        .arg("merge-bbf")
        .args(&files)
        .arg("--instance")
        .arg(&inst)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let k = (0..3)
        .find(|&i| {
            let v: Value = serde_json::from_slice(&std::fs::read(&files[i]).unwrap()).unwrap();
            !v["solutions"].as_array().unwrap().is_empty()
        })
        .unwrap();
    let original: Value = serde_json::from_slice(&std::fs::read(&files[k]).unwrap()).unwrap();
    let tampered = |f: &dyn Fn(&mut Value), name: &str| {
        let mut v = original.clone();
        f(&mut v);
        let p = tmp.path().join(name);
        std::fs::write(&p, serde_json::to_string(&v).unwrap()).unwrap();
        let mut list = files.clone();
        list[k] = p;
        bin()
            .arg("merge-bbf")
            .args(&list)
            .arg("--instance")
            .arg(&inst)
            .output()
            .unwrap()
    };
    // A witness over its caps (x = 5 where x <= 1): the BBF test rejects it.
    let out = tampered(
        &|v| v["solutions"][0]["fractions"][0] = serde_json::json!(5.0),
        "t1.json",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("BBF test"));
    // A bottleneck that is not a resource.
    let out = tampered(
        &|v| v["solutions"][0]["bottlenecks"] = serde_json::json!(["nonexistent"]),
        "t2.json",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a resource"));
    // A duplicated solution.
    let out = tampered(
        &|v| {
            let s = v["solutions"][0].clone();
            v["solutions"].as_array_mut().unwrap().push(s);
        },
        "t3.json",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("appears twice"));
}

#[test]
fn bad_shards_and_parameters_exit_2() {
    let inst = case("bbf-cyclic4");
    for shard in ["3/3", "1/0", "x/2", "1"] {
        let out = bin()
            .arg("enumerate-bbf")
            .arg(&inst)
            .args(["--shard", shard])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--shard {shard}");
        assert!(out.stdout.is_empty());
    }
    let out = bin()
        .arg("solve")
        .arg(&inst)
        .args(["--mechanism", "bbf-eg", "--by", "t"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--by does not apply to bbf-eg"));
}

#[test]
fn a_user_demanding_a_resource_nobody_has_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("nogpu.json");
    std::fs::write(
        &f,
        r#"{"resources": ["cpu", "gpu"],
            "servers": [{"name": "s", "capacity": [4, 0]}],
            "users": [{"name": "a", "demand": [1, 0]}, {"name": "b", "demand": [1, 1]}]}"#,
    )
    .unwrap();
    for mech in ["bbf-eg", "bbf-ode"] {
        let out = bin()
            .arg("solve")
            .arg(&f)
            .args(["--mechanism", mech])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{mech}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("users[1].demand[1]") && err.contains("gpu"),
            "{err}"
        );
    }
    let out = bin().arg("enumerate-bbf").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_trajectory_csv_ends_at_the_eisenberg_gale_allocation() {
    let tmp = tempfile::tempdir().unwrap();
    let inst = case("dolev-sec43-eg");
    let csv = tmp.path().join("traj.csv");
    let eg = json(
        &bin()
            .arg("solve")
            .arg(&inst)
            .args(["--mechanism", "bbf-eg"])
            .output()
            .unwrap(),
    );
    let ode = json(
        &bin()
            .arg("solve")
            .arg(&inst)
            .args(["--mechanism", "bbf-ode", "--trajectory"])
            .arg(&csv)
            .output()
            .unwrap(),
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("log_c,c,u1,"), "{header}");
    assert!(header.ends_with("slack_r2"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert!(rows.len() > 10);
    // c grows along the rows; the last row is the printed allocation.
    assert!(rows.windows(2).all(|w| w[1][1] > w[0][1]));
    let last = rows.last().unwrap();
    for n in 0..6 {
        let x = last[2 + n];
        assert_eq!(x, ode["user_tasks"][n].as_f64().unwrap());
        assert!((x - eg["user_tasks"][n].as_f64().unwrap()).abs() < 1e-8);
    }
    assert_eq!(ode["verification"]["ok"], true);
}

#[test]
fn table1_reproduction_runs_and_prints_the_papers_figures() {
    let out = bin()
        .args(["repro", "bbf-table1", "--samples", "3", "--m", "4..5"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("5.4") && text.contains("14.6"), "{text}");
    assert_eq!(text.lines().count(), 3);
}
