//! Whole-task heuristics on generated instances: feasible, whole, placement
//! and caps honoured; the grouped Best-Fit and its ratio index (two
//! resources) make the same decisions as a naive scan, server by server;
//! online k-DF with skip extends the printed (stop) version; Best-Fit's
//! shares approach DRFH's as tasks shrink.

use leontief_audit::{self as audit, AuditTolerance};
use leontief_core::strategies::{config, instance, Shape};
use leontief_core::{Instance, RawInstance};
use leontief_drfh::maxmin::MaxMinSettings;
use leontief_highs::Highs;
use leontief_sim::{expand_servers, gap, run, Heuristic, OnFull};
use proptest::prelude::*;

/// Scale every capacity so that a few dozen tasks fit (the strategies draw
/// capacities and demands of similar size).
fn roomy(inst: &Instance, factor: f64) -> Instance {
    let mut raw: RawInstance = inst.to_raw();
    for s in &mut raw.servers {
        for c in &mut s.capacity {
            *c *= factor;
        }
    }
    Instance::new(raw).unwrap()
}

/// Naive Best-Fit: every server scanned for every task, users by a linear
/// scan. The reference the grouped engine must agree with.
fn naive_best_fit(inst: &Instance, r0: usize) -> (Vec<u64>, Vec<Vec<f64>>) {
    let servers = expand_servers(inst);
    let pool = inst.total_capacity();
    let mut rem: Vec<Vec<f64>> = servers.iter().map(|s| s.1.clone()).collect();
    let nu = inst.num_users();
    let mut count = vec![0u64; nu];
    let mut per_entry = vec![vec![0.0; inst.num_entries()]; nu];
    let mut active = vec![true; nu];
    let caps: Vec<u64> = inst
        .users()
        .iter()
        .map(|u| u.tasks.map_or(u64::MAX, |t| (t + 1e-9).floor() as u64))
        .collect();
    for n in 0..nu {
        active[n] = caps[n] > 0;
    }
    loop {
        let mut best: Option<(usize, f64)> = None;
        for n in (0..nu).filter(|&n| active[n]) {
            let s = count[n] as f64 * inst.mu(leontief_core::UserId(n)) / inst.users()[n].weight;
            if best.is_none_or(|(_, b)| s < b - 1e-12 * b.abs()) {
                best = Some((n, s));
            }
        }
        let Some((n, _)) = best else { break };
        let d = &inst.users()[n].demand;
        let rn = if d[r0] > 0.0 {
            r0
        } else {
            inst.dominant_resource(leontief_core::UserId(n)).0
        };
        let mut pick: Option<(f64, usize)> = None;
        for (j, (entry, cap)) in servers.iter().enumerate() {
            let fits = (0..d.len()).all(|r| d[r] <= rem[j][r] + cap[r] * 1e-9);
            if !inst.can_run_on(leontief_core::UserId(n), *entry) || !fits {
                continue;
            }
            let c0 = rem[j][rn] / pool[rn];
            let h: f64 = (0..d.len())
                .filter(|&r| pool[r] > 0.0)
                .map(|r| {
                    ((d[r] / pool[r]) / (d[rn] / pool[rn]) - (rem[j][r].max(0.0) / pool[r]) / c0)
                        .abs()
                })
                .sum();
            let h = if h.is_nan() { f64::INFINITY } else { h };
            if pick.is_none_or(|(bh, _)| h < bh) {
                pick = Some((h, j));
            }
        }
        match pick {
            Some((_, j)) => {
                for r in 0..d.len() {
                    rem[j][r] -= d[r];
                }
                count[n] += 1;
                per_entry[n][servers[j].0 .0] += 1.0;
                if count[n] >= caps[n] {
                    active[n] = false;
                }
            }
            None => active[n] = false,
        }
    }
    (count, per_entry)
}

/// Best-Fit with normaliser `r0` (modulo the resources) places every task
/// where the naive scan does, server entry by server entry.
fn same_as_naive(inst: &Instance, r0: usize) -> Result<(), TestCaseError> {
    let r0 = r0 % inst.num_resources();
    let a = run(inst, &Heuristic::BestFit { normaliser: r0 }).unwrap();
    let (naive, per_entry) = naive_best_fit(inst, r0);
    let got: Vec<u64> = a.user_tasks.iter().map(|&x| x as u64).collect();
    prop_assert_eq!(got, naive);
    prop_assert_eq!(&a.tasks.to_dense(), &per_entry);
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn heuristics_are_feasible_whole_and_honour_placement_and_caps(
        inst in instance(Shape::default()), slots in 4u32..20, k in 1usize..=3
    ) {
        let inst = roomy(&inst, 5.0);
        for h in [
            Heuristic::FirstFit,
            Heuristic::BestFit { normaliser: 0 },
            Heuristic::Slots { slots },
            Heuristic::KdfOnline { k, on_full: OnFull::Stop },
            Heuristic::KdfOnline { k, on_full: OnFull::Skip },
        ] {
            let a = run(&inst, &h).unwrap();
            let f = audit::feasibility(&inst, &a.user_tasks, &a.tasks, true, &AuditTolerance::default());
            prop_assert!(f.ok, "{}: {:?}", h.name(), f.violations);
            for (_, _, x) in a.tasks.nonzeros() {
                prop_assert_eq!(x.fract(), 0.0, "{} placed a fractional task", h.name());
            }
        }
    }

    /// What rounding allows: a heuristic allocation is feasible, so its
    /// smallest weighted share is at most DRFH's first level, and it never
    /// gives every user at least its DRFH tasks with one user more (DRFH is
    /// Pareto optimal over divisible allocations, whole ones included).
    /// Utilisation itself may exceed DRFH's: see
    /// `whole_tasks_can_use_more_than_drfh_when_fragments_strand_a_user`.
    #[test]
    fn heuristics_never_beat_drfh_on_its_own_terms(
        inst in instance(Shape::default()), scale in 1.0f64..6.0
    ) {
        let inst = roomy(&inst, scale);
        let exact = leontief_drfh::drfh(&Highs::default(), &inst, &MaxMinSettings::default()).unwrap();
        prop_assert!(exact.status.has_solution());
        for h in [Heuristic::FirstFit, Heuristic::BestFit { normaliser: 0 }, Heuristic::Slots { slots: 10 }] {
            let a = run(&inst, &h).unwrap();
            let g = gap(&inst, &a, &exact);
            prop_assert!(g.min_share_ratio <= 1.0 + 1e-7, "{}: {g:?}", h.name());
            let tol = |x: f64| 1e-7 * x.abs().max(1.0);
            let all_at_least = (0..inst.num_users())
                .all(|n| a.user_tasks[n] >= exact.user_tasks[n] - tol(exact.user_tasks[n]));
            let one_more = (0..inst.num_users())
                .any(|n| a.user_tasks[n] > exact.user_tasks[n] + tol(exact.user_tasks[n]));
            prop_assert!(!(all_at_least && one_more), "{} Pareto-dominates DRFH: {:?} vs {:?}", h.name(), a.user_tasks, exact.user_tasks);
        }
    }

    #[test]
    fn grouped_best_fit_decides_like_a_naive_scan(inst in instance(Shape::default()), r0 in 0usize..3) {
        same_as_naive(&roomy(&inst, 4.0), r0)?;
    }

    /// Two resources and no placement lists: Best-Fit's ordered ratio index
    /// (not the grouped scan) decides, on many servers and many tasks.
    #[test]
    fn the_ratio_index_decides_like_a_naive_scan(
        inst in instance(Shape { max_servers: 12, max_resources: 2, placement: false, ..Shape::default() }),
        r0 in 0usize..2,
        scale in 3.0f64..12.0,
    ) {
        same_as_naive(&roomy(&inst, scale), r0)?;
    }

    #[test]
    fn online_kdf_skip_extends_the_printed_stop(inst in instance(Shape::default()), k in 1usize..=3) {
        let inst = roomy(&inst, 3.0);
        let stop = run(&inst, &Heuristic::KdfOnline { k, on_full: OnFull::Stop }).unwrap();
        let skip = run(&inst, &Heuristic::KdfOnline { k, on_full: OnFull::Skip }).unwrap();
        for n in 0..stop.user_tasks.len() {
            prop_assert!(skip.user_tasks[n] >= stop.user_tasks[n]);
        }
    }
}

/// 1 - (min normalised share of Best-Fit) / (that of DRFH) on the instance
/// scaled by each factor: tasks shrink relative to servers as s grows.
fn best_fit_gaps(json: &str, scales: &[f64]) -> Vec<f64> {
    let base = Instance::from_json_str(json).unwrap();
    let h = Highs::default();
    scales
        .iter()
        .map(|&s| {
            let inst = roomy(&base, s);
            let exact = leontief_drfh::drfh(&h, &inst, &MaxMinSettings::default()).unwrap();
            let heur = run(&inst, &Heuristic::BestFit { normaliser: 0 }).unwrap();
            1.0 - gap(&inst, &heur, &exact).min_share_ratio
        })
        .collect()
}

#[test]
fn best_fit_is_exact_on_fig1_but_not_on_its_scaled_copies() {
    // Fig. 1 itself: Best-Fit gives DRFH's (10, 10). Scaled by s >= 10 (ten
    // times as many tasks fit), greedy placement mixes the users across the
    // servers and stays about 13% below DRFH (measured: 0, 12%, 13.2%,
    // 13.3% at s = 1, 10, 100, 1000). Smaller tasks do not make Best-Fit
    // converge to DRFH in general; this test documents it.
    let g = best_fit_gaps(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
            "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]}"#,
        &[1.0, 10.0, 100.0, 1000.0],
    );
    assert!(g[0].abs() < 1e-12, "{g:?}");
    assert!(g[1..].iter().all(|&x| x > 0.1 && x < 0.14), "{g:?}");
}

#[test]
fn best_fit_gap_shrinks_but_can_plateau_above_zero() {
    // A third server (5, 5) and a third user (0.7, 0.7): the granularity
    // part of the gap vanishes as tasks shrink, but greedy placement keeps
    // Best-Fit about 3.4% below DRFH's smallest share (measured: 6.7%,
    // 4.2%, 3.4%, 3.37%, 3.37% at s = 1, 10, 100, 1000, 3000). Best-Fit is
    // not asymptotically DRFH in general; this test documents the plateau.
    let g = best_fit_gaps(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]},
                        {"name": "s3", "capacity": [5, 5]}],
            "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]},
                      {"name": "u3", "demand": [0.7, 0.7]}]}"#,
        &[1.0, 10.0, 100.0, 1000.0],
    );
    for w in g.windows(2) {
        assert!(
            w[1] <= w[0] + 1e-12,
            "the gap must not grow as tasks shrink: {g:?}"
        );
    }
    assert!(g[3] > 0.03 && g[3] < 0.035, "plateau moved: {g:?}");
}

#[test]
fn parameters_are_checked() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["a"], "servers": [{"name": "s", "capacity": [1]}], "users": [{"name": "u", "demand": [0.1]}]}"#,
    )
    .unwrap();
    for h in [
        Heuristic::Slots { slots: 0 },
        Heuristic::KdfOnline {
            k: 0,
            on_full: OnFull::Stop,
        },
        Heuristic::BestFit { normaliser: 3 },
    ] {
        let e = run(&inst, &h).unwrap_err().to_string();
        assert!(e.contains("--"), "{e}");
    }
}

/// Found by exploration: three servers (2.857 CPU, 27.04 memory); u0 needs
/// memory only (1.957 per task), u1 (0.611, 0.1) with weight 1/4. DRFH
/// gives u0 the memory fragments (divisible tasks) and fills memory at
/// 24.9% CPU; whole tasks strand 1.6 memory units per server that u0
/// cannot use, so the heuristics hand them to u1, whose CPU-heavy tasks
/// take CPU utilisation to 85%. Whole-task utilisation is therefore not
/// bounded by DRFH's, not even in total.
#[test]
fn whole_tasks_can_use_more_than_drfh_when_fragments_strand_a_user() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s", "capacity": [2.856904988791523, 27.04487], "count": 3}],
            "users": [{"name": "u0", "demand": [0, 1.9571810759859922]},
                      {"name": "u1", "demand": [0.6110830584603343, 0.1], "weight": 0.25}]}"#,
    )
    .unwrap();
    let exact = leontief_drfh::drfh(&Highs::default(), &inst, &MaxMinSettings::default()).unwrap();
    let a = run(&inst, &Heuristic::FirstFit).unwrap();
    let total = |x: &[f64]| x.iter().sum::<f64>();
    assert!(
        total(&a.metrics.utilisation) > total(&exact.metrics.utilisation) + 0.3,
        "{:?} vs {:?}",
        a.metrics.utilisation,
        exact.metrics.utilisation
    );
    // ... while DRFH's guarantees still hold against it.
    let g = gap(&inst, &a, &exact);
    assert!(g.min_share_ratio < 1.0, "{g:?}");
    assert!(a.user_tasks[0] < exact.user_tasks[0]);
}

/// The example of docs/heuristics.md: Algorithm 1 as printed stops at the
/// first task that does not fit; skip serves the small user once more.
#[test]
fn printed_online_kdf_stops_while_a_small_task_still_fits() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s", "capacity": [10, 10]}],
            "users": [{"name": "big", "demand": [6, 1]}, {"name": "small", "demand": [1, 2]}]}"#,
    )
    .unwrap();
    let run_with = |on_full| {
        run(&inst, &Heuristic::KdfOnline { k: 1, on_full })
            .unwrap()
            .user_tasks
    };
    assert_eq!(run_with(OnFull::Stop), vec![1.0, 3.0]);
    assert_eq!(run_with(OnFull::Skip), vec![1.0, 4.0]);
}
