//! `leontief simulate`: the bundled configs run, the synthetic trace in
//! datasets/ replays to the same result as the synthetic workload it was
//! written from, the slots sweep has one row per S, bad configs name the
//! field and exit 2.

mod common;

use common::leontief;
use serde_json::Value;
use std::path::PathBuf;

fn sims(name: &str) -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../../datasets/simulations")
    .join(name)
}

fn simulate(config: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec!["simulate", config.to_str().unwrap()];
    args.extend_from_slice(extra);
    let (code, out, err) = leontief(&args);
    assert_eq!(code, Some(0), "{err}");
    serde_json::from_str(&out).unwrap()
}

fn conserved(r: &Value) {
    let t = &r["totals"];
    assert_eq!(t["conserved"], true, "{t}");
    let n = |k: &str| t[k].as_u64().unwrap();
    assert_eq!(
        n("submitted"),
        n("finished") + n("running") + n("waiting") + n("unschedulable")
    );
    assert!(r["max_overcommit"].as_f64().unwrap() <= 1e-9);
}

#[test]
fn the_bundled_trace_replays_like_the_workload_it_was_written_from() {
    let from_spec = simulate(&sims("synthetic.json"), &[]);
    let from_trace = simulate(&sims("trace.json"), &[]);
    conserved(&from_spec);
    conserved(&from_trace);
    assert_eq!(from_spec["totals"], from_trace["totals"]);
    for (a, b) in from_spec["mean_utilisation"]
        .as_array()
        .unwrap()
        .iter()
        .zip(from_trace["mean_utilisation"].as_array().unwrap())
    {
        assert!((a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-6);
    }
    // trace.json asks for the dedicated clouds too.
    let users = from_trace["users"].as_array().unwrap();
    assert!(users
        .iter()
        .all(|u| u["dedicated_completion_ratio"].is_number()));
}

#[test]
fn schedulers_and_csvs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for s in ["first-fit", "best-fit", "drfh"] {
        let r = simulate(
            &sims("fig4.json"),
            &["--scheduler", s, "--csv-dir", dir.to_str().unwrap()],
        );
        conserved(&r);
        assert_eq!(r["scheduler"]["name"], s);
        for f in ["utilisation.csv", "shares.csv", "jobs.csv", "users.csv"] {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            assert!(text.lines().count() >= 2, "{f}: {text}");
        }
    }
    let r = simulate(
        &sims("fig4.json"),
        &["--scheduler", "slots", "--slots", "14"],
    );
    conserved(&r);
}

#[test]
fn the_slots_sweep_has_a_row_per_slot_count() {
    let (code, out, err) = leontief(&[
        "simulate",
        sims("synthetic.json").to_str().unwrap(),
        "--slots-sweep",
        "10,14,20",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let rows = v["slots_sweep"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1]["slots"], 14);
    assert!(err.contains("slots  14: mean utilisation cpu"), "{err}");
}

#[test]
fn bad_configs_name_the_field_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let cases = [
        (
            r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"users": [{"name": "a", "demand": [0.1, -1], "jobs": []}]}}"#,
            "workload.users[0].demand[1]",
        ),
        (
            r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"users": []}, "scheduler": "fastest"}"#,
            "scheduler fastest",
        ),
        (
            r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"synthetic": {"users": 0}}}"#,
            "workload.synthetic.users",
        ),
        (
            r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"synthetic": {"userz": 3}}}"#,
            "workload.synthetic",
        ),
        (
            r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"users": []}, "scheduler": "slots"}"#,
            "needs slots",
        ),
        (
            r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"users": []}, "horizon": -3}"#,
            "horizon",
        ),
        (
            r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"trace": "missing.csv"}}"#,
            "missing.csv",
        ),
        (
            r#"{"cluster": {"google": {"servers": 5, "seed": 1}}, "workload": {"users": []}, "weights": {"bob": 2}}"#,
            "weights.bob: no user",
        ),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let p = dir.join(format!("bad{i}.json"));
        std::fs::write(&p, text).unwrap();
        let (code, out, err) = leontief(&["simulate", p.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{text}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(expected), "{text}: {err}");
    }
}

#[test]
fn every_plot_kind_draws_with_labelled_axes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let run = |extra: &[&str], out: &str| {
        let p = dir.join(out);
        let mut args = vec!["simulate", extra[0]];
        args.extend_from_slice(&extra[1..]);
        args.extend_from_slice(&["-o", p.to_str().unwrap()]);
        let (code, _, err) = leontief(&args);
        assert_eq!(code, Some(0), "{err}");
        p
    };
    let trace = sims("trace.json");
    let best = run(&[trace.to_str().unwrap()], "best.json");
    let slots = run(
        &[
            trace.to_str().unwrap(),
            "--scheduler",
            "slots",
            "--slots",
            "14",
        ],
        "slots.json",
    );
    let (b, s) = (best.to_str().unwrap(), slots.to_str().unwrap());
    let sweep_csv = dir.join("sweep.csv");
    let inst = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    )
    .join("../../datasets/paper-examples/joewong-sec5-drf.json");
    let (code, _, err) = leontief(&[
        "sweep",
        inst.to_str().unwrap(),
        "--mechanism",
        "gfj",
        "--alpha",
        "0.5,1,2",
        "--csv",
        sweep_csv.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let cases: [(&[&str], &str, &[&str]); 6] = [
        (
            &[b, s],
            "utilisation",
            &["time (s)", "utilisation (%)", "slots (14 slots): cpu"],
        ),
        (&[b], "shares", &["global dominant share (%)"]),
        (
            &[b, s],
            "jct-cdf",
            &["job completion time (s)", "fraction of completed jobs"],
        ),
        (
            &[s, b],
            "completion",
            &["task completion ratio, slots (14 slots)"],
        ),
        (&[b], "completion", &["dedicated cloud", "shared cloud"]),
        (
            &[sweep_csv.to_str().unwrap()],
            "tradeoff",
            &["percent fairness"],
        ),
    ];
    for (i, (inputs, kind, texts)) in cases.iter().enumerate() {
        let out = dir.join(format!("{kind}{i}.svg"));
        let mut args = vec!["plot"];
        args.extend_from_slice(inputs);
        args.extend_from_slice(&["--kind", kind, "-o", out.to_str().unwrap()]);
        let (code, _, err) = leontief(&args);
        assert_eq!(code, Some(0), "{kind}: {err}");
        let svg = std::fs::read_to_string(&out).unwrap();
        for t in *texts {
            assert!(svg.contains(t), "{kind}: no {t:?} in the SVG");
        }
    }
    let png = dir.join("u.png");
    let (code, _, err) = leontief(&[
        "plot",
        b,
        "--kind",
        "utilisation",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let (code, _, err) = leontief(&["plot", b, "--kind", "shares", "-o", "x.pdf"]);
    assert_eq!(code, Some(2));
    assert!(err.contains(".svg or .png"), "{err}");
    let plain = run(&[sims("synthetic.json").to_str().unwrap()], "plain.json");
    let (code, _, err) = leontief(&[
        "plot",
        plain.to_str().unwrap(),
        "--kind",
        "completion",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert_eq!(
        code,
        Some(2),
        "a run without dedicated clouds, alone: {err}"
    );
}

/// A weight doubles a user's entitlement: with two identical users on a
/// saturated cluster, the one with weight 2 holds about twice the share.
#[test]
fn weights_in_the_config_order_the_users() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let p = dir.join("w.json");
    std::fs::write(
        &p,
        r#"{"cluster": {"google": {"servers": 20, "seed": 3}},
            "workload": {"users": [
              {"name": "a", "demand": [0.05, 0.05], "jobs": [{"submit": 0, "tasks": 1000, "duration": 100}]},
              {"name": "b", "demand": [0.05, 0.05], "jobs": [{"submit": 0, "tasks": 1000, "duration": 100}]}]},
            "weights": {"b": 2}, "horizon": 50, "sample_interval": 10}"#,
    )
    .unwrap();
    let r = simulate(&p, &[]);
    let s = r["shares"].as_array().unwrap().last().unwrap();
    let (a, b) = (s[0].as_f64().unwrap(), s[1].as_f64().unwrap());
    assert!((b / a - 2.0).abs() < 0.1, "{a} {b}");
}

/// The hdrfh scheduler shares by the queue tree: queue A's three users
/// and queue B's one user split the CPU by queue (B's user half), where
/// flat drfh gives each user a quarter.
#[test]
fn the_hdrfh_scheduler_shares_by_queue() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("c.json"),
        r#"{"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [8, 8]}, {"name": "t", "capacity": [4, 4]}],
            "users": [{"name": "x", "demand": [1, 1]}]}"#,
    )
    .unwrap();
    let p = dir.join("q.json");
    std::fs::write(
        &p,
        r#"{"cluster": {"instance": "c.json"},
            "workload": {"users": [
              {"name": "a1", "demand": [1, 0.5], "jobs": [{"submit": 0, "tasks": 200, "duration": 10}]},
              {"name": "a2", "demand": [1, 0.5], "jobs": [{"submit": 0, "tasks": 200, "duration": 10}]},
              {"name": "a3", "demand": [1, 0.5], "jobs": [{"submit": 0, "tasks": 200, "duration": 10}]},
              {"name": "b", "demand": [1, 0.5], "jobs": [{"submit": 0, "tasks": 200, "duration": 10}]}]},
            "scheduler": "hdrfh", "queues": [{"name": "A"}, {"name": "B"}],
            "user_queues": {"a1": "A", "a2": "A", "a3": "A", "b": "B"},
            "horizon": 20, "sample_interval": 5}"#,
    )
    .unwrap();
    let share = |r: &Value, n: usize| r["shares"].as_array().unwrap()[1][n].as_f64().unwrap();
    let h = simulate(&p, &[]);
    conserved(&h);
    assert!(
        (share(&h, 3) / share(&h, 0) - 3.0).abs() < 1e-6,
        "{}",
        h["shares"]
    );
    let d = simulate(&p, &["--scheduler", "drfh"]);
    assert!(
        (share(&d, 3) / share(&d, 0) - 1.0).abs() < 1e-6,
        "{}",
        d["shares"]
    );
    // The schedulers' share algorithms split by queue too (the pool of 12
    // CPUs: 6 each, A's 6 tasks over its three users); Kueue admits A's
    // workloads in order of creation, so a1 holds all of A's.
    for s in ["yarn-fair", "kai", "volcano-proportion"] {
        let r = simulate(&p, &["--scheduler", s]);
        conserved(&r);
        assert!(
            (share(&r, 3) / share(&r, 0) - 3.0).abs() < 1e-6,
            "{s}: {}",
            r["shares"]
        );
    }
    let k = simulate(&p, &["--scheduler", "kueue"]);
    conserved(&k);
    assert!(
        (share(&k, 3) - share(&k, 0)).abs() < 1e-9 && share(&k, 1) == 0.0,
        "{}",
        k["shares"]
    );
    // An unknown queue is named.
    std::fs::write(
        &p,
        std::fs::read_to_string(&p)
            .unwrap()
            .replace(r#""b": "B""#, r#""b": "Z""#),
    )
    .unwrap();
    let (code, _, err) = leontief(&["simulate", p.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("user_queues.b.queue names unknown queue \"Z\""),
        "{err}"
    );
}

/// The bundled starvation example (docs/reproduction.md): task by task,
/// H-DRF keeps n2,2 at half of the GPUs; the naive rule starves it. A
/// guarantee is refused by field, exit 2.
#[test]
fn the_starvation_example_runs_task_by_task() {
    let config = sims("hdrf-starvation.json");
    let finished = |r: &Value, n: usize| r["users"][n]["finished"].as_u64().unwrap();
    let h = simulate(&config, &[]);
    conserved(&h);
    assert_eq!(h["scheduler"]["name"], "hdrf-first-fit");
    assert_eq!((finished(&h, 0), finished(&h, 2)), (100, 140));
    let naive = simulate(&config, &["--scheduler", "hdrf-naive-first-fit"]);
    conserved(&naive);
    assert_eq!((finished(&naive, 0), finished(&naive, 2)), (196, 4));
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("g.json");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace(
            "../paper-examples/hdrf-starvation.json",
            config
                .parent()
                .unwrap()
                .join("../paper-examples/hdrf-starvation.json")
                .to_str()
                .unwrap(),
        )
        .replace(
            r#"{"name": "n1"}"#,
            r#"{"name": "n1", "guarantee": [0, 2]}"#,
        );
    std::fs::write(&p, text).unwrap();
    let (code, out, err) = leontief(&["simulate", p.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(out.is_empty());
    assert!(
        err.contains("queues[0].guarantee is not handed out task by task"),
        "{err}"
    );
}
