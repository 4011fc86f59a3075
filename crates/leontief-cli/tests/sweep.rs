//! `leontief sweep` writes one row per parameter value with the metrics of
//! Sec. V of 002, and keeps refused points in the table.

use std::path::PathBuf;
use std::process::Command;

fn case(name: &str) -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../../datasets/paper-examples")
    .join(name)
}

fn sweep(args: &[&str]) -> (Option<i32>, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("sweep.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
        .arg("sweep")
        .args(args)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    (
        out.status.code(),
        std::fs::read_to_string(&csv).unwrap_or_default(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let j = header
        .iter()
        .position(|h| *h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    lines
        .map(|l| l.split(',').nth(j).unwrap().to_string())
        .collect()
}

#[test]
fn gfj_alpha_sweep_meets_drf_at_the_crossing() {
    let inst = case("joewong-sec5-drf.json");
    let (code, csv, err) = sweep(&[
        inst.to_str().unwrap(),
        "--mechanism",
        "gfj",
        "--alpha",
        "0.5,2.709511291351455,4",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(
        column(&csv, "verified").iter().all(|v| v == "true"),
        "{csv}"
    );
    let fairness: Vec<f64> = column(&csv, "percent_fairness")
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    let efficiency: Vec<f64> = column(&csv, "percent_efficiency")
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    // At beta = ln 3 / ln 1.5 GFJ is the DRF allocation (3, 2).
    assert!((fairness[1] - 100.0).abs() < 1e-6, "{fairness:?}");
    assert!(
        efficiency.iter().all(|&e| e <= 100.0 + 1e-9),
        "{efficiency:?}"
    );
    let x: Vec<f64> = column(&csv, "tasks_u1")
        .iter()
        .map(|v| v.parse().unwrap())
        .collect();
    assert!((x[1] - 3.0).abs() < 1e-6, "{x:?}");
}

#[test]
fn beta_sweep_with_a_fixed_lambda_keeps_refused_points() {
    // lambda = -0.1: beta = 0.95 is degenerate (sgn(1-beta) lambda < 0):
    // refused, and kept as a row; beta = 2 lies in region N
    // ((1-2)/2 = -0.5 < -0.1 < 0): solved by the global search.
    let inst = case("joewong-sec5-drf.json");
    let (code, csv, err) = sweep(&[
        inst.to_str().unwrap(),
        "--mechanism",
        "fds",
        "--beta",
        "0.95,2",
        "--lambda-rule",
        "fixed:-0.1",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let status = column(&csv, "status");
    assert_eq!(
        status,
        vec!["refused".to_string(), "optimal".to_string()],
        "{csv}"
    );
}

#[test]
fn ranges_and_bad_specs() {
    let inst = case("kdf-2df-example.json");
    let (code, csv, err) = sweep(&[
        inst.to_str().unwrap(),
        "--mechanism",
        "kdf",
        "--k",
        "1..3:3",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(column(&csv, "value"), vec!["1", "2", "3"]);
    let (code, _, err) = sweep(&[
        inst.to_str().unwrap(),
        "--mechanism",
        "kdf",
        "--k",
        "1..3:1",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--k 1..3:1"), "{err}");
    let (code, _, err) = sweep(&[inst.to_str().unwrap(), "--mechanism", "kdf"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("swept parameter"), "{err}");
}

#[test]
fn prop2_monte_carlo_ratios_approach_one() {
    // Prop. 2 of 002: both ratios tend to 1 as n grows; at n = 20,000
    // they are within 1% (0.998 and 1.002 at n = 10^5, docs/reproduction.md).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_leontief"))
        .args([
            "repro",
            "fds-prop2",
            "--n",
            "20000",
            "--m",
            "2,4",
            "--samples",
            "3",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    for r in rows {
        for col in [3, 5] {
            let v: f64 = r[col].parse().unwrap();
            assert!((v - 1.0).abs() < 0.01, "{text}");
        }
    }
}

/// Figs. 15-16 of 002: at the capacities of Prop. 7 the contour collapses
/// to one point: FDS at RAM 6 sqrt 3 is 100% fair and 100% efficient for
/// every (beta, lambda); GFJ at 11.25 is 100% efficient for every one.
/// Elsewhere there is a tradeoff.
#[test]
fn fds_contours_collapse_at_the_prop7_capacities() {
    let run = |family: &str, capacity: &str| -> Vec<(f64, f64)> {
        let tmp = tempfile::tempdir().unwrap();
        let csv = tmp.path().join("contours.csv");
        let out = Command::new(env!("CARGO_BIN_EXE_leontief"))
            .args(["repro", "fds-contours", "--family", family])
            .args(["--capacities", capacity, "--betas", "6", "--lambdas", "3"])
            .arg("--instance")
            .arg(case("joewong-sec5-drf.json"))
            .arg("--csv")
            .arg(&csv)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(
            column(&text, "status").iter().all(|s| s == "optimal"),
            "{text}"
        );
        let f = column(&text, "percent_fairness");
        let e = column(&text, "percent_efficiency");
        f.iter()
            .zip(&e)
            .map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap()))
            .collect()
    };
    let fds = run("fds", "10.392304845413264");
    assert!(!fds.is_empty());
    for (f, e) in &fds {
        assert!(
            (f - 100.0).abs() < 1e-4 && (e - 100.0).abs() < 1e-4,
            "{f} {e}"
        );
    }
    for (_, e) in run("gfj", "11.25") {
        assert!((e - 100.0).abs() < 1e-4, "{e}");
    }
    let spread = run("fds", "4");
    let lo = spread.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    assert!(lo < 90.0, "a tradeoff at 4 GB: {spread:?}");
}
