//! BBF on generated instances: the Eisenberg-Gale answer and the ODE limit
//! pass the BBF test (condition (2)), agree with each other, and carry small
//! KKT residuals; every allocation `enumerate` prints passes the test with
//! exactly its stated bottleneck set, and the Eisenberg-Gale bottleneck set
//! is among them; the ODE's right-hand side agrees with finite differences
//! of f; shards merge to the whole enumeration.

use leontief_bbf::{check, eg, enumerate, ode, Pool};
use leontief_clarabel::Clarabel;
use leontief_core::strategies::{config, instance, Shape};
use leontief_highs::{Highs, HighsSettings};
use proptest::prelude::*;

fn highs() -> Highs {
    Highs::new(HighsSettings::default()).unwrap()
}

fn shape() -> Shape {
    Shape {
        max_users: 7,
        max_servers: 2,
        max_resources: 4,
        weights: true,
        caps: true,
        ..Shape::default()
    }
}

fn pool_of(inst: &leontief_core::Instance) -> Option<Pool> {
    Pool::new(inst).ok()
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn eisenberg_gale_is_bbf_with_small_kkt_residuals(inst in instance(shape())) {
        let Some(pool) = pool_of(&inst) else { return Ok(()) };
        let o = eg::solve(&Clarabel::default(), &pool).unwrap();
        prop_assert!(o.status.has_solution(), "{:?}", o.status);
        prop_assert!(o.polished, "the polish did not certify: {:?}", o.certificate);
        prop_assert!(o.certificate.worst() < 1e-9, "{:?}", o.certificate);
        let c = check(&pool, &o.x, 1e-9);
        prop_assert!(c.holds, "{c:?}");
        // The certificate is recomputed here from (x, p) alone.
        let again = eg::certify(&pool, &o.x, &o.prices);
        prop_assert!(again.worst() < 1e-9);
        // The dual bound is an upper bound: no feasible point (a scaled
        // allocation) beats it.
        let shrunk: Vec<f64> = o.x.iter().map(|v| 0.5 * v).collect();
        prop_assert!(eg::objective(&pool, &shrunk) <= eg::dual_value(&pool, &o.prices) + 1e-12);
    }

    #[test]
    fn the_dual_newton_solver_agrees_with_the_cone_program(inst in instance(shape())) {
        let Some(pool) = pool_of(&inst) else { return Ok(()) };
        let conic = eg::solve(&Clarabel::default(), &pool).unwrap();
        let dual = eg::solve_dual(&pool).unwrap();
        prop_assert_eq!(dual.status, leontief_model::Status::Optimal, "{}", dual.raw_status);
        prop_assert!(dual.certificate.worst() < 1e-9, "{:?}", dual.certificate);
        for (a, b) in dual.x.iter().zip(&conic.x) {
            prop_assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "dual {:?} vs conic {:?}", dual.x, conic.x);
        }
        prop_assert!(check(&pool, &dual.x, 1e-9).holds);
    }

    #[test]
    fn the_ode_limit_is_the_eisenberg_gale_allocation(inst in instance(shape()), by_t in any::<bool>()) {
        let Some(pool) = pool_of(&inst) else { return Ok(()) };
        let o = eg::solve(&Clarabel::default(), &pool).unwrap();
        let settings = ode::OdeSettings {
            param: if by_t { ode::Param::T } else { ode::Param::LogC },
            ..ode::OdeSettings::default()
        };
        let t = ode::trajectory(&pool, &settings).unwrap();
        prop_assert!(t.error.is_none(), "{:?}", t.error);
        for (a, b) in t.x.iter().zip(&o.x) {
            prop_assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "ode {:?} vs eg {:?}", t.x, o.x);
        }
        prop_assert!(check(&pool, &t.x, 1e-6).holds);
    }

    #[test]
    fn every_enumerated_allocation_is_bbf_with_its_bottleneck_set(inst in instance(shape())) {
        let Some(pool) = pool_of(&inst) else { return Ok(()) };
        let e = enumerate::enumerate(&highs(), &pool, enumerate::Options::default(), &|| {}).unwrap();
        prop_assert!(e.complete, "{:?}", e.unsettled);
        prop_assert!(enumerate::audit(&pool, &e, 1e-9).is_empty(), "{:?}", enumerate::audit(&pool, &e, 1e-9));
        // The Eisenberg-Gale allocation is BBF: its bottleneck set is listed.
        let o = eg::solve(&Clarabel::default(), &pool).unwrap();
        let c = check(&pool, &o.x, 1e-7);
        if !c.bottlenecks.is_empty() {
            prop_assert!(
                e.solutions.iter().any(|s| s.bottlenecks == c.bottlenecks),
                "EG's set {:?} not among {:?}",
                c.bottlenecks,
                e.solutions.iter().map(|s| &s.bottlenecks).collect::<Vec<_>>()
            );
        } else {
            // No bottleneck: every user got its whole request.
            prop_assert!(c.users.iter().all(|u| u.full));
        }
        for s in &e.solutions {
            prop_assert!(s.dimension <= pool.num_users());
        }
    }

    #[test]
    fn shards_merge_to_the_whole_enumeration(inst in instance(shape()), count in 2u64..5) {
        let Some(pool) = pool_of(&inst) else { return Ok(()) };
        let h = highs();
        let whole = enumerate::enumerate(&h, &pool, enumerate::Options::default(), &|| {}).unwrap();
        let parts: Vec<_> = (0..count)
            .map(|i| {
                let o = enumerate::Options { shard: (i, count), ..Default::default() };
                enumerate::enumerate(&h, &pool, o, &|| {}).unwrap()
            })
            .collect();
        let merged = enumerate::merge(None, parts).unwrap();
        prop_assert_eq!(merged.subsets_tried, whole.subsets_tried);
        let key = |e: &enumerate::Enumeration| e.solutions.iter().map(|s| s.bottlenecks.clone()).collect::<Vec<_>>();
        prop_assert_eq!(key(&merged), key(&whole));
    }

    #[test]
    fn the_ode_right_hand_side_matches_finite_differences_of_f(
        inst in instance(shape()),
        frac in 0.05f64..0.6,
    ) {
        let Some(pool) = pool_of(&inst) else { return Ok(()) };
        // An interior point: scale the initial ray until the largest load
        // (dummy resources included) is `frac`.
        let nu = pool.num_users();
        let ray: Vec<f64> = (0..nu).map(|n| pool.e[n] / pool.row(n).iter().sum::<f64>()).collect();
        let loads = pool.loads(&ray);
        let most = (0..nu)
            .filter(|&n| pool.ub[n].is_finite())
            .map(|n| ray[n])
            .chain(loads)
            .fold(0.0, f64::max);
        let x: Vec<f64> = ray.iter().map(|v| v * frac / most).collect();
        let flow = ode::Flow::new(&pool, ode::Param::LogC, 1e10);
        let v = flow.tangent(&x).unwrap();
        // phi_n(x) = x_n df/dx_n by central differences of f; along v,
        // d phi_n / dc must be e_n (condition (12) differentiated).
        let phi = |x: &[f64]| -> Vec<f64> {
            (0..nu)
                .map(|n| {
                    let h = 1e-5 * x[n];
                    let (mut p, mut m) = (x.to_vec(), x.to_vec());
                    p[n] += h;
                    m[n] -= h;
                    x[n] * (flow.f(&p) - flow.f(&m)) / (2.0 * h)
                })
                .collect()
        };
        // Step in c: 1e-3 of c itself, where c = x_n g_n / e_n.
        let g = flow.gradient(&x).unwrap();
        let c = x[0] * g[0] / pool.e[0];
        let mut h = 1e-3 * c;
        while (0..nu).any(|n| (x[n] - h * v[n]).abs() < 0.5 * x[n]) {
            h *= 0.5;
        }
        let xp: Vec<f64> = x.iter().zip(&v).map(|(x, v)| x + h * v).collect();
        let xm: Vec<f64> = x.iter().zip(&v).map(|(x, v)| x - h * v).collect();
        let (pp, pm) = (phi(&xp), phi(&xm));
        for n in 0..nu {
            let d = (pp[n] - pm[n]) / (2.0 * h);
            prop_assert!((d - pool.e[n]).abs() <= 1e-4 * pool.e[n], "user {n}: {d} vs e = {}", pool.e[n]);
        }
        // The analytic gradient agrees with the differences too.
        let p0 = phi(&x);
        for n in 0..nu {
            prop_assert!((x[n] * g[n] - p0[n]).abs() <= 1e-6 * p0[n].abs().max(1e-12));
        }
    }
}

#[test]
fn capped_users_reach_one_and_a_resource_nobody_requests_is_pruned() {
    // u3 asks little of r1 and is capped: it ends at x = 1 (its whole
    // request); r3 is requested by nobody, so no bottleneck set holds it.
    let pool = Pool::from_requests(
        &[
            vec![1.0, 0.0, 0.0],
            vec![1.0, 0.2, 0.0],
            vec![0.05, 0.4, 0.0],
        ],
        &[1.0; 3],
        &[true; 3],
    );
    let o = eg::solve(&Clarabel::default(), &pool).unwrap();
    assert!(o.polished);
    assert!((o.x[2] - 1.0).abs() < 1e-12, "{:?}", o.x);
    let c = check(&pool, &o.x, 1e-9);
    assert!(c.holds && c.users[2].full);
    let e = enumerate::enumerate(&highs(), &pool, enumerate::Options::default(), &|| {}).unwrap();
    assert_eq!(e.pruned_resources, vec!["r2".to_string(), "r3".to_string()]);
    assert_eq!(e.subsets_total, 1);
    assert_eq!(e.solutions.len(), 1);
    assert_eq!(e.solutions[0].bottlenecks, vec!["r1".to_string()]);
    let t = ode::trajectory(&pool, &ode::OdeSettings::default()).unwrap();
    for (a, b) in t.x.iter().zip(&o.x) {
        assert!((a - b).abs() < 1e-8, "{:?} vs {:?}", t.x, o.x);
    }
}

#[test]
fn uncapped_users_with_no_request_in_j_rule_j_out() {
    // u2 has no cap and requests only r2: a set J = {r1} cannot satisfy it.
    let pool = Pool::from_requests(
        &[vec![1.0, 1.0], vec![0.0, 1.0]],
        &[1.0, 1.0],
        &[true, false],
    );
    let e = enumerate::enumerate(&highs(), &pool, enumerate::Options::default(), &|| {}).unwrap();
    assert!(e
        .solutions
        .iter()
        .all(|s| s.bottlenecks.contains(&"r2".to_string())));
    assert!(enumerate::audit(&pool, &e, 1e-9).is_empty());
}

#[test]
fn the_cyclic_example_has_eleven_sets_and_only_the_full_one_is_a_point() {
    let r = vec![
        vec![1.0, 1.0, 0.0, 1.0],
        vec![1.0, 1.0, 1.0, 0.0],
        vec![0.0, 1.0, 1.0, 1.0],
        vec![1.0, 0.0, 1.0, 1.0],
    ];
    let pool = Pool::from_requests(&r, &[1.0; 4], &[true; 4]);
    let e = enumerate::enumerate(&highs(), &pool, enumerate::Options::default(), &|| {}).unwrap();
    assert_eq!(e.solutions.len(), 11);
    for s in &e.solutions {
        let want = match s.bottlenecks.len() {
            4 => 0,
            3 => 1,
            _ => 2,
        };
        assert_eq!(s.dimension, want, "{:?}", s.bottlenecks);
    }
}

/// dim Q_J by brute force: 2N LPs (min and max of every x_n over
/// {A_J x = 1, lb <= x <= ub}) find the coordinates Q_J fixes, then the
/// rank of A_J on the others (independent of the enumeration's LPs).
fn brute_dimension(pool: &Pool, jset: &[usize]) -> usize {
    use leontief_model::{LpBackend, ProblemBuilder, Sense};
    let nu = pool.num_users();
    let lb: Vec<f64> = (0..nu)
        .map(|n| {
            let best = jset.iter().map(|&j| pool.req(n, j)).fold(0.0, f64::max);
            if best > 0.0 {
                (pool.e[n] / best).min(pool.ub[n])
            } else {
                pool.ub[n]
            }
        })
        .collect();
    let h = highs();
    let mut fixed = vec![false; nu];
    for target in 0..nu {
        let mut range = [0.0; 2];
        for (k, sense) in [Sense::Minimise, Sense::Maximise].into_iter().enumerate() {
            let mut b = ProblemBuilder::new(sense);
            let rows: Vec<_> = jset.iter().map(|_| b.add_row(1.0, 1.0)).collect();
            for n in 0..nu {
                let e: Vec<_> = jset
                    .iter()
                    .enumerate()
                    .filter(|(_, &j)| pool.req(n, j) > 0.0)
                    .map(|(a, &j)| (rows[a], pool.req(n, j)))
                    .collect();
                let ub = pool.ub[n].min(1e6);
                b.add_col(if n == target { 1.0 } else { 0.0 }, lb[n], ub, e);
            }
            let s = h.solve(b.build()).unwrap();
            range[k] = s.objective;
        }
        fixed[target] = range[1] - range[0] <= 1e-9 * range[1].abs().max(1.0);
    }
    let free: Vec<usize> = (0..nu).filter(|&n| !fixed[n]).collect();
    if free.is_empty() {
        return 0;
    }
    let a = nalgebra::DMatrix::from_fn(jset.len(), free.len(), |a, b| pool.req(free[b], jset[a]));
    let sv = a.singular_values();
    let top = sv.iter().copied().fold(0.0, f64::max);
    free.len() - sv.iter().filter(|&&s| s > 1e-9 * top.max(1e-300)).count()
}

proptest! {
    #![proptest_config(config(32))]

    #[test]
    fn polytope_dimensions_match_a_brute_force_count(inst in instance(Shape { max_users: 5, max_servers: 1, max_resources: 3, weights: true, caps: true, ..Shape::default() })) {
        let Some(pool) = pool_of(&inst) else { return Ok(()) };
        let e = enumerate::enumerate(&highs(), &pool, enumerate::Options::default(), &|| {}).unwrap();
        for s in &e.solutions {
            let jset: Vec<usize> = s.bottlenecks.iter().map(|b| pool.resources.iter().position(|r| r == b).unwrap()).collect();
            prop_assert_eq!(s.dimension, brute_dimension(&pool, &jset), "J = {:?}", s.bottlenecks);
        }
    }
}
