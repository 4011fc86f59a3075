//! `audit::exact`: the certificates the solver prints are proved in exact
//! arithmetic; a price one ulp below zero (dual infeasible) is refused, as
//! is a certificate that does not fit the allocation.

use leontief::audit::{
    audit, exact, exact_into, read_allocation, suggest_exact, AllocationFormat, AuditOptions,
};
use leontief::{generated, to_json, Instance, Layout, Mechanism, Options};
use serde_json::Value;

fn solved(inst: &Instance, m: &Mechanism) -> (String, Vec<Vec<f64>>) {
    let a = leontief::solve(inst, m, &Options::default()).unwrap();
    let text = to_json(a, Layout::Dense, false).unwrap();
    let tasks = read_allocation(inst, &text, AllocationFormat::Json).unwrap();
    (text, tasks.to_dense())
}

/// A dense allocation as the audit reads it.
fn as_tasks(t: &[Vec<f64>]) -> leontief::audit::Tasks {
    leontief::audit::Tasks::from(t.to_vec())
}

fn cases() -> Vec<(String, Instance, Mechanism)> {
    let mut v = Vec::new();
    for seed in 0..6u64 {
        let het = generated("heterogeneous", 12, 9, 2, seed, 0).unwrap();
        let three = generated("heterogeneous", 8, 6, 3, seed, 0).unwrap();
        let place = generated("placement", 10, 8, 2, seed, 3).unwrap();
        for (name, inst) in [("het", het), ("3 res", three), ("placement", place)] {
            for m in [Mechanism::Drfh, Mechanism::Kdf { k: 2 }, Mechanism::Tsf] {
                v.push((format!("{m} on {name} seed {seed}"), inst.clone(), m));
            }
        }
    }
    v
}

#[test]
fn printed_certificates_are_proved_exactly() {
    let mut proved = 0;
    for (name, inst, m) in cases() {
        let (text, tasks) = solved(&inst, &m);
        let v: Value = serde_json::from_str(&text).unwrap();
        if v.pointer("/certificate/rounds").is_none() {
            continue;
        }
        let shares = (m != Mechanism::Drfh).then_some(&m);
        let e = exact(&inst, &text, &as_tasks(&tasks), shares).unwrap();
        assert!(e.ok, "{name}: {e:?}");
        assert!(e.proven_rise_bound <= 1e-6, "{name}");
        assert_eq!(e.negative_prices, 0);
        proved += 1;
    }
    assert!(proved >= 40, "only {proved} certificates");
}

fn with_price(text: &str, f: impl Fn(f64) -> Option<f64>) -> Option<String> {
    let mut v: Value = serde_json::from_str(text).unwrap();
    for round in v["certificate"]["rounds"].as_array_mut()? {
        for row in round["prices"].as_array_mut().unwrap() {
            for p in row.as_array_mut().unwrap() {
                if let Some(new) = f(p.as_f64().unwrap()) {
                    *p = serde_json::json!(new);
                    return Some(v.to_string());
                }
            }
        }
    }
    None
}

#[test]
fn one_ulp_below_zero_is_refused() {
    let below_zero = f64::from_bits(0x8000_0000_0000_0001); // -5e-324
    let mut refused = 0;
    for (name, inst, m) in cases().into_iter().filter(|c| c.2 == Mechanism::Drfh) {
        let (text, tasks) = solved(&inst, &m);
        // A zero price one ulp lower: dual infeasible, refused.
        let Some(bad) = with_price(&text, |p| (p == 0.0).then_some(below_zero)) else {
            continue;
        };
        let e = exact(&inst, &bad, &as_tasks(&tasks), None).unwrap();
        assert!(!e.ok, "{name}");
        assert_eq!(e.negative_prices, 1, "{name}");
        // A positive price one ulp higher stays a valid bound, proved.
        let up = with_price(&text, |p| (p > 0.0).then_some(p.next_up())).unwrap();
        assert!(
            exact(&inst, &up, &as_tasks(&tasks), None).unwrap().ok,
            "{name}"
        );
        refused += 1;
    }
    assert!(refused >= 5, "only {refused} instances with a zero price");
}

#[test]
fn a_certificate_that_does_not_fit_is_not_proved() {
    for (name, inst, m) in cases()
        .into_iter()
        .filter(|c| c.2 == Mechanism::Drfh)
        .take(6)
    {
        let (text, mut tasks) = solved(&inst, &m);
        // Cut every task count by 10%: the prices now leave room.
        let mut v: Value = serde_json::from_str(&text).unwrap();
        for t in tasks.iter_mut().flatten() {
            *t *= 0.9;
        }
        v["user_tasks"] = serde_json::json!(tasks
            .iter()
            .map(|r| r.iter().sum::<f64>())
            .collect::<Vec<_>>());
        v["tasks"] = serde_json::json!(tasks);
        let e = exact(&inst, &v.to_string(), &as_tasks(&tasks), None).unwrap();
        assert!(!e.ok, "{name}");
        assert!(e.proven_rise_bound > 0.1, "{name}: {}", e.proven_rise_bound);
    }
}

#[test]
fn outputs_without_a_certificate_are_refused() {
    let inst = generated("heterogeneous", 5, 3, 2, 1, 0).unwrap();
    let (text, tasks) = solved(&inst, &"psdsf".parse().unwrap());
    let e = exact(&inst, &text, &as_tasks(&tasks), None).unwrap_err();
    assert!(e.is_bad_input());
    assert!(
        e.to_string()
            .starts_with("the allocation carries no max-min certificate"),
        "{e}"
    );
    let (text, tasks) = solved(&inst, &Mechanism::Kdf { k: 2 });
    let e = exact(&inst, &text, &as_tasks(&tasks), None).unwrap_err();
    assert!(e.to_string().contains("--exact kdf:k=2"), "{e}");
}

/// The fuzzer's open tsf case (docs/fuzzing.md): u1 needs 3.3e6 times more
/// memory than CPU per unit of capacity, so the flat LP's tolerance on CPU
/// (1e-7 of a row) let it "rise" 0.8%, and the answer was printed optimal
/// but not verified. The certificate proves it, exactly; the flat witness
/// is marked unresolved (within the LP's resolution for that user), and the
/// answer is verified.
#[test]
fn the_fuzzers_tsf_case_is_proved() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem", "net"],
            "servers": [{"name": "s1", "capacity": [12, 4, 75]}, {"name": "s2", "capacity": [8, 16, 0]}],
            "users": [{"name": "u1", "demand": [1, 3333333, 5]}, {"name": "u3", "demand": [0.12, 0, 0]},
                      {"name": "u4", "demand": [0.5, 1, 0]}]}"#,
    )
    .unwrap();
    let a = leontief::solve(&inst, &Mechanism::Tsf, &Options::default()).unwrap();
    assert_eq!(a.status, leontief::Status::Optimal);
    let v = a.verification.as_ref().unwrap();
    assert!(v.ok, "{v}");
    let flat = v.max_min.as_ref().and_then(|m| m.checked()).unwrap();
    assert!(!flat.witness.as_ref().unwrap().resolved);
    assert!(leontief_audit::resolution(&inst, 0) > 0.1);
    let text = to_json(a, Layout::Dense, false).unwrap();
    let tasks = read_allocation(&inst, &text, AllocationFormat::Json).unwrap();
    let e = exact(&inst, &text, &tasks, Some(&Mechanism::Tsf)).unwrap();
    assert!(e.ok && e.proven_rise_bound < 1e-8, "{e:?}");
}

/// The fuzzer's drf case (docs/fuzzing.md, item 9): u4's task needs 3e12
/// CPU against a pool of 15, so it runs 1.7e-12 tasks; the flat LP let it
/// "rise" on memory the LP's tolerance gave it (unresolved), and DRF on a
/// pool prints no prices. The saturated resources of each round are its
/// certificate (`pooled_prices`), and the rounding of the others' memory
/// use (1e-16 of the capacity) is no room: verified.
#[test]
fn the_fuzzers_drf_case_is_proved_by_its_saturated_resources() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem", "net"],
            "servers": [{"name": "s1", "capacity": [12, 4, 75]}, {"name": "s2", "capacity": [3, 16, 0]}],
            "users": [{"name": "u1", "demand": [0, 5, 5]}, {"name": "u2", "demand": [1, 3.3330333333333333, 5]},
                      {"name": "u3", "demand": [0.25, 1, 0]}, {"name": "u4", "demand": [2999999999999, 0.5, 5]}]}"#,
    )
    .unwrap();
    let a = leontief::solve(&inst, &Mechanism::Drf, &Options::default()).unwrap();
    assert_eq!(a.status, leontief::Status::Optimal);
    let v = a.verification.as_ref().unwrap();
    assert!(v.ok, "{v}");
    assert!(v.certificate.as_ref().unwrap().ok());
    // The prices certify: the round is blocked by memory.
    let pool = inst.pooled();
    let rounds =
        leontief_audit::pooled_prices(&pool, &a.user_tasks, a.frozen_round.as_ref().unwrap());
    assert_eq!(rounds.len(), 1);
    assert!(rounds[0].prices[0][1] > 0.0);
}

/// The sparse layout lists only the entries with a nonzero price in each
/// certificate round; read back, it is the same proof: the same exact
/// verdict and bound as the dense layout. An entry index past the
/// instance is bad input, named.
#[test]
fn sparse_certificates_are_the_same_proofs() {
    let mut compared = 0;
    for (name, inst, m) in cases() {
        let a = leontief::solve(&inst, &m, &Options::default()).unwrap();
        let dense = to_json(a.clone(), Layout::Dense, false).unwrap();
        let sparse = to_json(a, Layout::Sparse, false).unwrap();
        let v: Value = serde_json::from_str(&sparse).unwrap();
        let Some(rounds) = v.pointer("/certificate/rounds").and_then(Value::as_array) else {
            continue;
        };
        let k = inst.num_entries();
        for r in rounds {
            let listed = r["entries"].as_array().expect("sparse rounds list entries");
            assert_eq!(listed.len(), r["prices"].as_array().unwrap().len());
            assert!(listed.len() <= k);
        }
        let shares = (m != Mechanism::Drfh).then_some(&m);
        let tasks = read_allocation(&inst, &dense, AllocationFormat::Json).unwrap();
        let from_sparse = read_allocation(&inst, &sparse, AllocationFormat::Json).unwrap();
        assert_eq!(tasks, from_sparse, "{name}");
        let (e, f) = (
            exact(&inst, &dense, &tasks, shares).unwrap(),
            exact(&inst, &sparse, &tasks, shares).unwrap(),
        );
        assert_eq!(
            (e.ok, e.proven_rise_bound),
            (f.ok, f.proven_rise_bound),
            "{name}"
        );
        compared += 1;
        if rounds
            .iter()
            .any(|r| !r["entries"].as_array().unwrap().is_empty())
        {
            let mut bad = v.clone();
            for r in bad["certificate"]["rounds"].as_array_mut().unwrap() {
                if let Some(first) = r["entries"].as_array_mut().unwrap().first_mut() {
                    *first = serde_json::json!(k);
                }
            }
            let err = exact(&inst, &bad.to_string(), &tasks, shares).unwrap_err();
            assert!(err.to_string().contains("entries[0]"), "{name}: {err}");
        }
    }
    assert!(compared >= 40, "only {compared} certificates");
}

/// `exact_into`: a proved certificate makes the summary's Pareto verdict
/// hold, and with drfh's shares its DRFH max-min verdict, saying why,
/// whatever the floating-point LPs said (here: not run); with k-DF's
/// shares only Pareto; a certificate that does not fit changes nothing.
#[test]
fn a_proved_certificate_decides_the_summary() {
    let inst = generated("placement", 10, 8, 2, 1, 3).unwrap();
    let opts = AuditOptions {
        against: Vec::new(),
        mode: leontief::VerifyMode::Never,
        time_limit: None,
    };
    let verdict = |r: &leontief::audit::AuditReport, p: &str| {
        let v = r
            .judgement
            .summary
            .iter()
            .find(|v| v.property == p)
            .unwrap();
        (v.holds, v.detail.clone())
    };
    let kdf = Mechanism::Kdf { k: 2 };
    for (m, shares, drfh) in [
        (Mechanism::Drfh, None, true),
        (kdf.clone(), Some(&kdf), false),
    ] {
        let (text, tasks) = solved(&inst, &m);
        let mut r = audit(&inst, &as_tasks(&tasks), &opts).unwrap();
        assert_eq!(verdict(&r, "Pareto optimality").0, None);
        assert_eq!(verdict(&r, "DRFH max-min").0, None);
        exact_into(&mut r, &inst, &text, &as_tasks(&tasks), shares).unwrap();
        assert!(r.exact.as_ref().unwrap().ok, "{m}");
        let (holds, detail) = verdict(&r, "Pareto optimality");
        assert_eq!(holds, Some(true), "{m}: {detail}");
        assert!(detail.contains("exact arithmetic"), "{m}: {detail}");
        let (holds, detail) = verdict(&r, "DRFH max-min");
        assert_eq!(holds, drfh.then_some(true), "{m}: {detail}");
        // Every task cut by 10%: not proved, no verdict changed.
        let mut v: Value = serde_json::from_str(&text).unwrap();
        let cut: Vec<Vec<f64>> = tasks
            .iter()
            .map(|r| r.iter().map(|t| t * 0.9).collect())
            .collect();
        v["user_tasks"] = serde_json::json!(cut
            .iter()
            .map(|r| r.iter().sum::<f64>())
            .collect::<Vec<_>>());
        v["tasks"] = serde_json::json!(cut);
        let mut r = audit(&inst, &as_tasks(&cut), &opts).unwrap();
        exact_into(&mut r, &inst, &v.to_string(), &as_tasks(&cut), shares).unwrap();
        assert!(!r.exact.as_ref().unwrap().ok, "{m}");
        assert_eq!(verdict(&r, "Pareto optimality").0, None, "{m}");
        assert_eq!(verdict(&r, "DRFH max-min").0, None, "{m}");
    }
}

/// Without `--exact`: a failing Pareto or DRFH max-min verdict on
/// placement lists, for an allocation that carries a certificate, gets a
/// note that the certificate decides; not without placement lists, nor
/// when the verdicts hold.
#[test]
fn a_failing_lp_check_on_placement_lists_points_to_the_certificate() {
    let opts = AuditOptions {
        against: Vec::new(),
        ..AuditOptions::default()
    };
    let note = |r: &leontief::audit::AuditReport| r.notes.iter().any(|n| n.contains("--exact"));
    let place = generated("placement", 10, 8, 2, 1, 3).unwrap();
    let het = generated("heterogeneous", 12, 9, 2, 1, 0).unwrap();
    for (inst, lists) in [(place, true), (het, false)] {
        let (text, tasks) = solved(&inst, &Mechanism::Drfh);
        let mut r = audit(&inst, &as_tasks(&tasks), &opts).unwrap();
        suggest_exact(&mut r, &inst, &text);
        assert!(!note(&r), "the verdicts hold: {:?}", r.notes);
        // Every task cut by 10%: Pareto and max-min fail.
        let cut: Vec<Vec<f64>> = tasks
            .iter()
            .map(|r| r.iter().map(|t| t * 0.9).collect())
            .collect();
        let mut r = audit(&inst, &as_tasks(&cut), &opts).unwrap();
        let pareto = r
            .judgement
            .summary
            .iter()
            .find(|v| v.property == "Pareto optimality");
        assert_eq!(pareto.unwrap().holds, Some(false));
        suggest_exact(&mut r, &inst, &text);
        assert_eq!(note(&r), lists, "placement lists {lists}: {:?}", r.notes);
    }
}

/// A certificate proves only the mechanism it was made for: a 2-DF
/// allocation checked in DRFH's shares, or DRFH's in TSF's or 2-DF's,
/// fails wherever the two answers differ (every Pareto-optimal
/// allocation's round prices show that nobody can rise while all others
/// keep theirs; the proof must also see the levels in the named shares).
#[test]
fn a_certificate_checked_in_another_mechanisms_shares_is_not_a_proof() {
    let pairs = [
        (Mechanism::Kdf { k: 2 }, Mechanism::Drfh),
        (Mechanism::Drfh, Mechanism::Kdf { k: 2 }),
        (Mechanism::Drfh, Mechanism::Tsf),
        (Mechanism::Tsf, Mechanism::Drfh),
    ];
    let mut refuted = 0;
    for seed in 0..6u64 {
        let het = generated("heterogeneous", 12, 9, 2, seed, 0).unwrap();
        let place = generated("placement", 10, 8, 2, seed, 3).unwrap();
        for inst in [het, place] {
            for (made, named) in &pairs {
                let (text, tasks) = solved(&inst, made);
                let v: Value = serde_json::from_str(&text).unwrap();
                if v.pointer("/certificate/rounds").is_none() {
                    continue;
                }
                let theirs = leontief::solve(&inst, named, &Options::default()).unwrap();
                let mine: Vec<f64> = tasks.iter().map(|r| r.iter().sum()).collect();
                let differ = mine
                    .iter()
                    .zip(&theirs.user_tasks)
                    .any(|(a, b)| (a - b).abs() > 1e-5 * b.abs().max(1.0));
                let e = exact(&inst, &text, &as_tasks(&tasks), Some(named)).unwrap();
                if differ {
                    assert!(!e.ok, "{made} checked as {named}, seed {seed}: {e:?}");
                    assert!(
                        e.violations
                            .iter()
                            .any(|v| v.contains("not this mechanism's")),
                        "{:?}",
                        e.violations
                    );
                    refuted += 1;
                }
            }
        }
    }
    assert!(refuted >= 20, "only {refuted} mismatched cases");
}

/// The 2-DF example of 001 (k-DF gives (25/13, 200/13)): its allocation
/// audited with `--exact drfh` leaves "DRFH max-min" failing, as the LP
/// check found.
#[test]
fn the_2df_example_is_not_proved_drfh() {
    let inst = Instance::from_path(
        std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
        )
        .join("../../datasets/paper-examples/kdf-2df-example.json"),
    )
    .unwrap();
    // On several servers, so that drfh and kdf print certificates.
    let json = serde_json::json!({
        "resources": ["bandwidth", "memory", "cpu"],
        "servers": [
            {"name": "a", "capacity": [100, 100, 100]},
            {"name": "b", "capacity": [100, 100, 100]}
        ],
        "users": inst.users().iter().map(|u| serde_json::json!({"name": u.name, "demand": u.demand})).collect::<Vec<_>>()
    });
    let inst = Instance::from_json_str(&json.to_string()).unwrap();
    let kdf = Mechanism::Kdf { k: 2 };
    let (text, tasks) = solved(&inst, &kdf);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(v.pointer("/certificate/rounds").is_some(), "{text}");
    let mut report = audit(&inst, &as_tasks(&tasks), &AuditOptions::default()).unwrap();
    exact_into(
        &mut report,
        &inst,
        &text,
        &as_tasks(&tasks),
        Some(&Mechanism::Drfh),
    )
    .unwrap();
    let e = report.exact.as_ref().unwrap();
    assert!(!e.ok, "{e:?}");
    let line = report
        .judgement
        .summary
        .iter()
        .find(|l| l.property == "DRFH max-min")
        .unwrap();
    assert_eq!(line.holds, Some(false), "{line:?}");
    // Its own shares prove it.
    let own = exact(&inst, &text, &as_tasks(&tasks), Some(&kdf)).unwrap();
    assert!(own.ok, "{own:?}");
}
