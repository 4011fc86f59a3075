//! `leontief::audit` on generated instances: every mechanism's own output
//! passes the properties the mechanism guarantees, and every failure's
//! witness is re-checked here, independently of the audit's code.

use leontief::audit::{audit, read_allocation, AllocationFormat, AuditOptions, AuditReport};
use leontief::{generated, Instance, Mechanism, Options};
use leontief_audit::{feasibility, AuditTolerance, Placed};
use leontief_core::{Tasks, UserId};

fn quick() -> AuditOptions {
    AuditOptions {
        against: vec![],
        ..AuditOptions::default()
    }
}

fn instances() -> Vec<(String, Instance)> {
    let mut v = Vec::new();
    for seed in 0..4u64 {
        for (kind, users, servers, res, el) in [
            ("heterogeneous", 6, 4, 2, 0),
            ("heterogeneous", 5, 3, 3, 0),
            ("placement", 6, 5, 2, 2),
            ("heterogeneous", 4, 1, 2, 0),
        ] {
            let i = generated(kind, users, servers, res, seed, el).unwrap();
            v.push((format!("{kind} {users}x{servers}x{res} seed {seed}"), i));
        }
    }
    v
}

fn solved(inst: &Instance, m: &str) -> Vec<Vec<f64>> {
    let m: Mechanism = m.parse().unwrap();
    let a = leontief::solve(inst, &m, &Options::default()).unwrap();
    assert!(a.status.has_solution(), "{m}: {}", a.status);
    a.tasks.to_dense()
}

/// A dense allocation as the audit reads it.
fn as_tasks(t: &[Vec<f64>]) -> Tasks {
    Tasks::from(t.to_vec())
}

fn holds(r: &AuditReport, property: &str) -> Option<bool> {
    r.judgement
        .summary
        .iter()
        .find(|v| v.property == property)
        .unwrap_or_else(|| panic!("no verdict {property}"))
        .holds
}

/// Each mechanism's own output passes what the mechanism guarantees.
#[test]
fn own_outputs_pass_their_properties() {
    let guarantees: [(&str, &[&str]); 5] = [
        (
            "drfh",
            &["feasibility", "Pareto optimality", "DRFH max-min"],
        ),
        ("nfc", &["feasibility", "Pareto optimality"]),
        (
            "psdsf",
            &["feasibility", "PS-DSF (Definition 4)", "sharing incentive"],
        ),
        ("first-fit", &["feasibility", "whole tasks"]),
        ("best-fit", &["feasibility", "whole tasks"]),
    ];
    for (name, inst) in instances() {
        for (m, props) in guarantees {
            let r = audit(&inst, &as_tasks(&solved(&inst, m)), &quick()).unwrap();
            for p in props {
                assert_eq!(
                    holds(&r, p),
                    Some(true),
                    "{m} on {name}: {p}: {:#?}",
                    r.judgement.summary
                );
            }
        }
        // BBF in its own model: one pooled server.
        if inst.num_entries() == 1 {
            let r = audit(&inst, &as_tasks(&solved(&inst, "bbf-eg")), &quick()).unwrap();
            assert_eq!(
                holds(&r, "BBF condition (2)"),
                Some(true),
                "bbf-eg on {name}"
            );
            let r = audit(&inst, &as_tasks(&solved(&inst, "drf")), &quick()).unwrap();
            assert_eq!(holds(&r, "DRFH max-min"), Some(true), "drf on {name}");
        }
    }
}

fn dense(inst: &Instance, placed: &[Placed]) -> Vec<Vec<f64>> {
    let mut t = vec![vec![0.0; inst.num_entries()]; inst.num_users()];
    for p in placed {
        let n = inst.users().iter().position(|u| u.name == p.user).unwrap();
        let i = inst
            .servers()
            .iter()
            .position(|s| s.name == p.server)
            .unwrap();
        t[n][i] += p.tasks;
    }
    t
}

fn user(inst: &Instance, name: &str) -> usize {
    inst.users().iter().position(|u| u.name == name).unwrap()
}

fn level(inst: &Instance, n: usize, x: f64) -> f64 {
    inst.mu(UserId(n)) * x / inst.users()[n].weight
}

fn is_feasible(inst: &Instance, t: &[Vec<f64>]) -> bool {
    let x: Vec<f64> = t.iter().map(|r| r.iter().sum()).collect();
    let tol = AuditTolerance {
        feasibility: 1e-6,
        ..AuditTolerance::default()
    };
    feasibility(inst, &x, &as_tasks(t), true, &tol).ok
}

/// DRFH's answer with one user cut to a fraction: the audit finds the
/// rise, the Pareto improvement and the sharing-incentive shortfall, and
/// each witness is real.
#[test]
fn witnesses_of_a_cut_allocation_are_real() {
    let mut rises = 0;
    for (name, inst) in instances() {
        let mut t = solved(&inst, "drfh");
        let x0: Vec<f64> = t.iter().map(|r| r.iter().sum()).collect();
        let Some(cut) = (0..t.len()).max_by(|&a, &b| x0[a].total_cmp(&x0[b])) else {
            continue;
        };
        t[cut].iter_mut().for_each(|v| *v *= 0.3);
        let x: Vec<f64> = t.iter().map(|r| r.iter().sum()).collect();
        let r = audit(&inst, &as_tasks(&t), &quick()).unwrap();
        let j = &r.judgement;
        assert!(j.feasibility.ok, "{name}");
        // Pareto: the improvement is feasible, nobody loses, somebody gains.
        let p = j.pareto.as_ref().unwrap();
        assert!(!p.ok, "{name}: cutting a user leaves room");
        let imp = p.improvement.as_ref().unwrap();
        let w = dense(&inst, &imp.allocation);
        assert!(is_feasible(&inst, &w), "{name}: Pareto witness infeasible");
        let y: Vec<f64> = w.iter().map(|r| r.iter().sum()).collect();
        for n in 0..x.len() {
            assert!(
                y[n] >= x[n] * (1.0 - 1e-6) - 1e-9,
                "{name}: {n} loses in the Pareto witness"
            );
        }
        assert!(imp.gainers.iter().all(|g| g.gets > g.has), "{name}");
        assert!(
            y.iter().zip(&x).any(|(a, b)| *a > b * (1.0 + 1e-6)),
            "{name}"
        );
        // Max-min: the rise is feasible, the riser gains, everyone at or
        // below its level keeps its tasks, payers end no lower than it.
        let m = j.drfh_max_min.as_ref().unwrap();
        assert!(!m.check.ok, "{name}");
        let rise = m.rise.as_ref().expect("a concrete rise");
        rises += 1;
        let w = dense(&inst, &rise.allocation);
        assert!(is_feasible(&inst, &w), "{name}: rise witness infeasible");
        let y: Vec<f64> = w.iter().map(|r| r.iter().sum()).collect();
        let n = user(&inst, &rise.user.user);
        assert!(
            y[n] > x[n] * (1.0 + 1e-6),
            "{name}: the riser does not rise"
        );
        assert!((y[n] - rise.user.gets).abs() <= 1e-6 * y[n], "{name}");
        for k in 0..x.len() {
            if k != n && level(&inst, k, x[k]) <= level(&inst, n, x[n]) * (1.0 + 1e-9) {
                assert!(
                    y[k] >= x[k] * (1.0 - 1e-6),
                    "{name}: {k} at or below the riser pays"
                );
            }
        }
        for payer in &rise.payers {
            let k = user(&inst, &payer.user);
            assert!(y[k] < x[k], "{name}: a payer that does not pay");
            assert!(
                level(&inst, k, y[k]) >= level(&inst, n, y[n]) * (1.0 - 1e-6),
                "{name}: payer {} ends below the riser",
                payer.user
            );
        }
        // Sharing incentive: the shortfall is real where reported.
        if let Some(s) = &j.sharing_incentive.witness {
            assert!(s.has < s.equal_split, "{name}");
            let k = user(&inst, &s.user);
            assert_eq!(s.has, x[k], "{name}");
        }
    }
    assert!(rises > 0);
}

/// An allocation that gives one user more than a server holds: the audit
/// names that server and resource, and envy where a user holds nothing.
#[test]
fn overload_and_envy_witnesses() {
    let mut envies = 0;
    for (name, inst) in instances() {
        let mut t = solved(&inst, "drfh");
        // The user with most tasks on server 0 takes twice as many there.
        let Some(n) = (0..t.len())
            .filter(|&n| t[n][0] > 0.0)
            .max_by(|&a, &b| t[a][0].total_cmp(&t[b][0]))
        else {
            continue;
        };
        t[n][0] *= 2.0;
        let r = audit(&inst, &as_tasks(&t), &quick()).unwrap();
        let f = &r.judgement.feasibility;
        assert!(!f.ok, "{name}");
        let full = f.fullest.as_ref().unwrap();
        assert!(full.load > 1.0, "{name}");
        // Recompute the load of the named server and resource.
        let i = inst
            .servers()
            .iter()
            .position(|s| s.name == full.server)
            .unwrap();
        let res = inst
            .resources()
            .iter()
            .position(|r| *r == full.resource)
            .unwrap();
        let used: f64 = (0..t.len())
            .map(|k| t[k][i] * inst.users()[k].demand[res])
            .sum();
        let cap = inst.class_capacity(leontief_core::ServerId(i), leontief_core::ResourceId(res));
        assert!((used / cap - full.load).abs() <= 1e-9 * full.load, "{name}");
        // Envy: empty one user; if the audit says it envies, the bundle it
        // names really gives it more tasks.
        let mut t = solved(&inst, "drfh");
        let Some(poor) = (0..t.len()).find(|&k| t[k].iter().sum::<f64>() > 0.0) else {
            continue;
        };
        t[poor].iter_mut().for_each(|v| *v = 0.0);
        let r = audit(&inst, &as_tasks(&t), &quick()).unwrap();
        let e = &r.judgement.envy_freeness;
        if let Some(w) = &e.witness {
            let a = user(&inst, &w.user);
            let b = user(&inst, &w.envies);
            let d = &inst.users()[a].demand;
            let with: f64 = (0..inst.num_entries())
                .filter(|&i| inst.eligible(UserId(a), leontief_core::ServerId(i)))
                .map(|i| {
                    (0..d.len())
                        .filter(|&r| d[r] > 0.0)
                        .map(|r| t[b][i] * inst.users()[b].demand[r] / d[r])
                        .fold(f64::INFINITY, f64::min)
                })
                .sum();
            let scaled = with * inst.users()[a].weight / inst.users()[b].weight;
            let could = scaled.min(inst.users()[a].tasks.unwrap_or(f64::INFINITY));
            assert!((could - w.could_run).abs() <= 1e-9 * could, "{name}");
            assert!(could > w.has, "{name}");
            envies += 1;
        } else {
            assert!(e.holds);
        }
    }
    assert!(envies > 0, "no instance produced envy");
}

/// The comparison: the mechanism's own answer is at 100% of itself.
#[test]
fn against_itself_is_one_hundred_percent() {
    let inst = generated("heterogeneous", 8, 5, 2, 3, 0).unwrap();
    let t = solved(&inst, "drfh");
    let r = audit(&inst, &as_tasks(&t), &AuditOptions::default()).unwrap();
    let drfh = &r.against[0];
    assert_eq!(drfh.mechanism, "drfh");
    assert!((drfh.fairness_percent.unwrap() - 100.0).abs() < 1e-4);
    assert!((drfh.efficiency_percent.unwrap() - 100.0).abs() < 1e-4);
    assert!(drfh.lost_most.is_empty());
    // nfc maximises the total tasks: no fewer than the audited allocation.
    let nfc = &r.against[1];
    let (mine, theirs) = nfc
        .users
        .iter()
        .fold((0.0, 0.0), |(a, b), u| (a + u.tasks, b + u.mechanism_tasks));
    assert!(theirs >= mine * (1.0 - 1e-7), "{nfc:?}");
}

/// Reading: dense JSON, sparse JSON and CSV give the same tasks; bad
/// entries are named.
#[test]
fn readers_agree_and_name_bad_entries() {
    let inst = generated("placement", 5, 4, 2, 1, 2).unwrap();
    let a = leontief::solve(&inst, &Mechanism::Drfh, &Options::default()).unwrap();
    let dense = leontief::to_json(a.clone(), leontief::Layout::Dense, false).unwrap();
    let sparse = leontief::to_json(a.clone(), leontief::Layout::Sparse, false).unwrap();
    let mut csv = String::from("server,user,tasks\n");
    for (n, i, v) in a.tasks.nonzeros().filter(|&(_, _, v)| v > 0.0) {
        csv += &format!(
            "{},{},{v:e}\n",
            inst.servers()[i].name,
            inst.users()[n].name
        );
    }
    let d = read_allocation(&inst, &dense, AllocationFormat::Json).unwrap();
    let s = read_allocation(&inst, &sparse, AllocationFormat::Json).unwrap();
    let c = read_allocation(&inst, &csv, AllocationFormat::Csv).unwrap();
    assert_eq!(d, a.tasks);
    assert_eq!(s, a.tasks);
    assert_eq!(c, a.tasks);
    let bad = |text: &str, f| read_allocation(&inst, text, f).unwrap_err();
    let j = AllocationFormat::Json;
    for (text, msg) in [
        ("[1]", "allocation is not a JSON object"),
        ("{\"tasks\": [[1]]}", "allocation.tasks has 1 rows, the instance has 5 users"),
        (
            "{\"tasks\": [[0,0,0,0],[0,0,0,0],[0,0,\"x\",0],[0,0,0,0],[0,0,0,0]]}",
            "allocation.tasks[2][2] is not a finite number",
        ),
        (
            "{\"tasks_sparse\": {\"users\": 5, \"servers\": 4, \"user\": [9], \"server\": [0], \"tasks\": [1]}}",
            "allocation.tasks_sparse.user[0] is 9, not below 5",
        ),
        ("{\"status\": \"infeasible\"}", "allocation has neither tasks nor tasks_sparse (status infeasible)"),
    ] {
        let e = bad(text, j);
        assert!(e.is_bad_input());
        assert_eq!(e.to_string(), msg);
    }
    let c = AllocationFormat::Csv;
    assert_eq!(
        bad("user,server\nu1,s1\n", c).to_string(),
        "allocation CSV header has no column \"tasks\" (expected user,server,tasks)"
    );
    let u = &inst.users()[0].name;
    assert_eq!(
        bad(&format!("user,server,tasks\n{u},nowhere,1\n"), c).to_string(),
        "allocation line 2: unknown server \"nowhere\""
    );
    let s0 = &inst.servers()[0].name;
    assert_eq!(
        bad(&format!("user,server,tasks\n{u},{s0},NaN\n"), c).to_string(),
        "allocation line 2: tasks \"NaN\" is not a finite number"
    );
}

/// Every mechanism's output can be audited; the ones Pareto optimal by
/// their papers (k-DF: 001 Theorem; FDS/GFJ off region N: 002; TSF and
/// alphaPF-VDS at alpha >= 1 reach no Pareto improvement either on these
/// instances) pass Pareto optimality.
#[test]
fn every_mechanism_output_is_audited() {
    let specs = [
        ("drf", false),
        ("drfh", true),
        ("kdf:k=2", true),
        ("naive-drf", false),
        ("hdrf", false),
        ("hdrfh", true),
        ("hdrf-naive", false),
        ("yarn-fair", false),
        ("kai", false),
        ("volcano-proportion", false),
        ("kueue", false),
        ("nfc", true),
        ("psdsf", false),
        ("vds:alpha=2", false),
        ("tsf", true),
        ("first-fit", false),
        ("best-fit", false),
        ("slots:slots=4", false),
        ("kdf-online:k=2", false),
        ("fds:alpha=1", true),
        ("gfj:alpha=2", true),
        ("pnorm:p=2,alpha=1", false),
        ("bbf-eg", false),
        ("bbf-ode", false),
    ];
    assert_eq!(specs.len(), leontief::NAMES.len());
    for seed in 0..3u64 {
        let inst = generated("heterogeneous", 5, 3, 2, seed, 0).unwrap();
        for (spec, pareto) in specs {
            let m: Mechanism = spec.parse().unwrap();
            let a = leontief::solve(&inst, &m, &Options::default()).unwrap();
            if !a.status.has_solution() {
                continue;
            }
            // A pooled answer (drf, bbf on the pool) has no per-server
            // split: audit its user totals on the pooled instance.
            let (inst, tasks) = if a.pooled {
                let p = inst.pooled();
                let t = a.user_tasks.iter().map(|&x| vec![x]).collect();
                (p, t)
            } else {
                (inst.clone(), a.tasks.to_dense())
            };
            let r =
                audit(&inst, &as_tasks(&tasks), &quick()).unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(r.judgement.summary.len(), 8, "{spec}");
            assert_eq!(holds(&r, "feasibility"), Some(true), "{spec} seed {seed}");
            if pareto {
                assert_eq!(
                    holds(&r, "Pareto optimality"),
                    Some(true),
                    "{spec} seed {seed}"
                );
            }
        }
    }
}

/// Above the flat LPs' size the audit decides DRFH max-min against a
/// certified DRFH answer; on small instances both ways must agree, and the
/// comparison's witness (the DRFH allocation) is feasible, raises the
/// riser, and keeps every user at or below its level at its tasks.
#[test]
fn max_min_by_drfh_agrees_with_the_flat_lp() {
    use leontief_audit::judge::max_min_by_drfh;
    let mut failures = 0;
    for (name, inst) in instances() {
        let drfh = leontief::solve(&inst, &Mechanism::Drfh, &Options::default()).unwrap();
        assert!(drfh.verification.as_ref().unwrap().ok);
        for cut in [1.0, 0.97, 0.5] {
            let mut t = drfh.tasks.to_dense();
            let n = t.len() - 1;
            t[n].iter_mut().for_each(|v| *v *= cut);
            let x: Vec<f64> = t.iter().map(|r| r.iter().sum()).collect();
            let by = max_min_by_drfh(&inst, &x, &drfh, &AuditTolerance::default());
            let flat = audit(&inst, &as_tasks(&t), &quick()).unwrap();
            let flat_ok = flat.judgement.drfh_max_min.as_ref().unwrap().check.ok;
            assert_eq!(by.check.ok, flat_ok, "{name} cut {cut}");
            if let Some(rise) = &by.rise {
                failures += 1;
                let w = dense(&inst, &rise.allocation);
                assert!(is_feasible(&inst, &w), "{name}");
                let y: Vec<f64> = w.iter().map(|r| r.iter().sum()).collect();
                let r = user(&inst, &rise.user.user);
                assert!(y[r] > x[r], "{name}");
                for k in 0..x.len() {
                    if level(&inst, k, x[k]) <= level(&inst, r, x[r]) {
                        assert!(y[k] >= x[k] * (1.0 - 1e-7), "{name}: {k} pays");
                    }
                }
            }
        }
    }
    assert!(failures > 10, "{failures}");
}

#[test]
fn default_references_include_nfc_at_every_size() {
    use leontief::audit::default_against;
    for (n, k) in [(5, 3), (1001, 1000)] {
        let inst = generated("heterogeneous", n, k, 2, 1, 0).unwrap();
        assert_eq!(
            default_against(&inst),
            (vec![Mechanism::Drfh, Mechanism::Nfc], None)
        );
    }
}

/// On an infeasible allocation no optimality property holds and no
/// distance is measured: a negative entry and a CPU over capacity, and
/// DRFH's own answer 5e-7 over one capacity (above the audit's one
/// feasibility tolerance, 1e-7 relative, but within PS-DSF's saturation
/// tolerance of 1e-6).
#[test]
fn an_infeasible_allocation_gets_no_yes() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
            "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]}"#,
    )
    .unwrap();
    let optimality = [
        "Pareto optimality",
        "DRFH max-min",
        "BBF condition (2)",
        "PS-DSF (Definition 4)",
    ];
    let drfh = solved(&inst, "drfh");
    let over = |f: f64| -> Vec<Vec<f64>> {
        let mut t = drfh.clone();
        for row in t.iter_mut() {
            for v in row.iter_mut() {
                *v *= f;
            }
        }
        t
    };
    let mut negative = drfh.clone();
    negative[0][1] = -1.0;
    negative[1][1] += 3.0; // cpu on s2 over capacity
    let options = AuditOptions::default();
    for tasks in [negative, over(1.0 + 5e-7)] {
        let r = audit(&inst, &as_tasks(&tasks), &options).unwrap();
        assert_eq!(holds(&r, "feasibility"), Some(false));
        for p in optimality {
            assert_eq!(holds(&r, p), Some(false), "{p}: {:?}", r.judgement.summary);
        }
        for p in ["sharing incentive", "envy-freeness", "whole tasks"] {
            assert_eq!(holds(&r, p), None, "{p}");
        }
        assert!(!r.judgement.psdsf.holds && !r.judgement.sharing_incentive.holds);
        for c in &r.against {
            assert!(c.fairness_percent.is_none() && c.efficiency_percent.is_none());
            assert!(c.note.is_some());
        }
    }
    // Within the tolerance it is feasible, for PS-DSF too, and the LP
    // checks decide (their capacity rows relaxed by the same tolerance,
    // where the exact rows hold nothing as good).
    let r = audit(&inst, &as_tasks(&over(1.0 + 5e-8)), &options).unwrap();
    for p in [
        "feasibility",
        "PS-DSF (Definition 4)",
        "Pareto optimality",
        "DRFH max-min",
    ] {
        assert_eq!(holds(&r, p), Some(true), "{p}: {:?}", r.judgement.summary);
    }
    // And say no where a user can rise far beyond that tolerance: u1 at
    // half its tasks on s1, the rest over capacity by 5e-8.
    let mut half = over(1.0 + 5e-8);
    half[0][0] /= 2.0;
    let r = audit(&inst, &as_tasks(&half), &options).unwrap();
    assert_eq!(holds(&r, "feasibility"), Some(true));
    for p in ["Pareto optimality", "DRFH max-min"] {
        assert_eq!(holds(&r, p), Some(false), "{p}: {:?}", r.judgement.summary);
    }
}
