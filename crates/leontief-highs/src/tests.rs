use super::*;
use leontief_model::{residuals, ProblemBuilder};

const INF: f64 = f64::INFINITY;

fn small(sense: Sense) -> Problem {
    // max/min x + y s.t. x + 2y <= 4, 3x + y <= 6, x, y in [0, inf)
    let mut b = ProblemBuilder::new(sense);
    let r1 = b.add_row(-INF, 4.0);
    let r2 = b.add_row(-INF, 6.0);
    b.add_col(1.0, 0.0, INF, [(r1, 1.0), (r2, 3.0)]);
    b.add_col(1.0, 0.0, INF, [(r1, 2.0), (r2, 1.0)]);
    b.build()
}

#[test]
fn a_basis_set_is_where_the_simplex_starts() {
    let h = Highs::new(HighsSettings {
        presolve: false,
        algorithm: Algorithm::Simplex,
        ..HighsSettings::default()
    })
    .unwrap();
    // The optimal basis (both columns basic, both rows tight): no
    // iteration left.
    let mut lp = h.load(small(Sense::Maximise)).unwrap();
    lp.set_basic(&[true, true], &[false, false]).unwrap();
    let s = lp.solve().unwrap();
    assert_eq!(s.status, Status::Optimal);
    assert_eq!(s.iterations, 0);
    assert!((s.x[0] - 1.6).abs() < 1e-9 && (s.x[1] - 1.2).abs() < 1e-9);
    // An iteration limit of zero ends the solve where it starts.
    let h0 = Highs::new(HighsSettings {
        presolve: false,
        algorithm: Algorithm::Simplex,
        iteration_limit: Some(0),
        ..HighsSettings::default()
    })
    .unwrap();
    let mut lp = h0.load(small(Sense::Maximise)).unwrap();
    lp.set_basic(&[false, false], &[true, true]).unwrap();
    assert_eq!(lp.solve().unwrap().status, Status::IterationLimit);
    // From the slack basis the simplex has to pivot.
    let mut lp = h.load(small(Sense::Maximise)).unwrap();
    lp.set_basic(&[false, false], &[true, true]).unwrap();
    let s = lp.solve().unwrap();
    assert_eq!(s.status, Status::Optimal);
    assert!(s.iterations > 0);
    // A basis of the wrong shape is refused; one with too many basic
    // variables does not stop the solve.
    let mut lp = h.load(small(Sense::Maximise)).unwrap();
    assert!(lp.set_basic(&[true], &[false, false]).is_err());
    let _ = lp.set_basic(&[true, true], &[true, true]);
    let s = lp.solve().unwrap();
    assert_eq!(s.status, Status::Optimal);
}

#[test]
fn solves_and_duals_follow_the_model_convention() {
    let h = Highs::default();
    let s = h.solve(small(Sense::Maximise)).unwrap();
    assert_eq!(s.status, Status::Optimal);
    assert!((s.objective - 2.8).abs() < 1e-9);
    assert!((s.x[0] - 1.6).abs() < 1e-9 && (s.x[1] - 1.2).abs() < 1e-9);
    let r = residuals(&small(Sense::Maximise), &s.x, &s.row_dual);
    assert!(r.within(1e-9), "{r:?} duals {:?}", s.row_dual);
}

#[test]
fn refill_and_resolve() {
    let h = Highs::default();
    let mut lp = h.load(small(Sense::Maximise)).unwrap();
    assert_eq!(lp.solve().unwrap().status, Status::Optimal);
    // x <= 1 now: optimum x = 1, y = 1.5, value 2.5.
    lp.set_col_bounds(Col(0), 0.0, 1.0).unwrap();
    let s = lp.solve().unwrap();
    assert!((s.objective - 2.5).abs() < 1e-9, "{s:?}");
    assert!(residuals(lp.problem(), &s.x, &s.row_dual).within(1e-9));
    // Change a coefficient: x + 4y <= 4 with x <= 1: y = 0.75, 1.75.
    lp.set_coefficient(Row(0), Col(1), 4.0).unwrap();
    let s = lp.solve().unwrap();
    assert!((s.objective - 1.75).abs() < 1e-9, "{s:?}");
    assert!(residuals(lp.problem(), &s.x, &s.row_dual).within(1e-9));
    assert!(matches!(
        lp.set_coefficient(Row(5), Col(0), 1.0),
        Err(BackendError::NotInPattern { .. })
    ));
}

#[test]
fn infeasible_and_unbounded_are_distinct_outcomes() {
    let h = Highs::new(HighsSettings {
        presolve: false,
        ..Default::default()
    })
    .unwrap();
    // x >= 1 and x <= 0.
    let mut b = ProblemBuilder::new(Sense::Minimise);
    let r = b.add_row(1.0, INF);
    b.add_col(1.0, 0.0, 0.0, [(r, 1.0)]);
    let s = h.solve(b.build()).unwrap();
    assert_eq!(s.status, Status::Infeasible, "{}", s.raw_status);
    assert!(s.x.is_empty());
    // max x, x >= 0, no rows binding it.
    let mut b = ProblemBuilder::new(Sense::Maximise);
    let r = b.add_row(0.0, INF);
    b.add_col(1.0, 0.0, INF, [(r, 1.0)]);
    let s = h.solve(b.build()).unwrap();
    assert!(
        matches!(s.status, Status::Unbounded | Status::InfeasibleOrUnbounded),
        "{}",
        s.raw_status
    );
    assert_ne!(s.status, Status::Infeasible);
}

/// A transport-like LP of `k` x `k` columns HiGHS needs iterations for.
fn transport(k: usize) -> Problem {
    let mut b = ProblemBuilder::new(Sense::Minimise);
    let supply: Vec<_> = (0..k).map(|_| b.add_row(f64::NEG_INFINITY, 1.0)).collect();
    let demand: Vec<_> = (0..k).map(|_| b.add_row(1.0, INF)).collect();
    for (i, &s) in supply.iter().enumerate() {
        for (j, &d) in demand.iter().enumerate() {
            let cost = ((i * 7919 + j * 104_729) % 1000) as f64 / 1000.0 + 0.5;
            b.add_col(cost, 0.0, INF, [(s, 1.0), (d, 1.0)]);
        }
    }
    b.build()
}

#[test]
fn a_loaded_lp_keeps_the_time_it_is_given_per_solve() {
    let h = Highs::new(HighsSettings {
        presolve: false,
        algorithm: Algorithm::Simplex,
        ..HighsSettings::default().with_time_limit(30.0).unwrap()
    })
    .unwrap();
    let mut lp = h.load(transport(60)).unwrap();
    lp.limit_time(0.0).unwrap();
    let s = lp.solve().unwrap();
    assert_eq!(s.status, Status::TimeLimit, "{}", s.raw_status);
    // The time given back, the same LP finishes: the clock of the
    // first run does not count against the second.
    lp.limit_time(1e9).unwrap();
    let s = lp.solve().unwrap();
    assert_eq!(s.status, Status::Optimal, "{}", s.raw_status);
    let fresh = h.solve(transport(60)).unwrap();
    assert!(
        (s.objective - fresh.objective).abs() <= 1e-9 * fresh.objective,
        "{} against {}",
        s.objective,
        fresh.objective
    );
}

#[test]
fn a_cold_start_solves_from_scratch_and_a_warm_one_from_the_last_basis() {
    let h = Highs::new(HighsSettings {
        presolve: false,
        algorithm: Algorithm::Simplex,
        ..HighsSettings::default()
    })
    .unwrap();
    let mut lp = h.load(transport(30)).unwrap();
    let first = lp.solve().unwrap();
    assert!(first.iterations > 0);
    // Unchanged, from its optimal basis: no iteration.
    assert_eq!(lp.solve().unwrap().iterations, 0);
    lp.prefer_cold_start().unwrap();
    let cold = lp.solve().unwrap();
    assert_eq!(cold.iterations, first.iterations);
    assert_eq!(cold.objective, first.objective);
    // Warm again.
    lp.prefer_warm_simplex().unwrap();
    assert_eq!(lp.solve().unwrap().iterations, 0);
}

#[test]
fn a_warm_primal_start_goes_on_from_the_last_optimum_when_room_opens() {
    let h = Highs::default();
    let mut lp = h.load(transport(30)).unwrap();
    let first = lp.solve().unwrap();
    assert_eq!(first.status, Status::Optimal, "{}", first.raw_status);
    // Room opens (one supplier may ship twice as much): the last
    // optimum stays feasible, and primal simplex goes on from it.
    lp.set_row_bounds(Row(0), f64::NEG_INFINITY, 2.0).unwrap();
    lp.prefer_warm_primal().unwrap();
    let warm = lp.solve().unwrap();
    let cold = h.solve(lp.problem().clone()).unwrap();
    assert_eq!(warm.status, Status::Optimal, "{}", warm.raw_status);
    assert!(warm.objective < first.objective);
    assert!(
        (warm.objective - cold.objective).abs() <= 1e-9 * cold.objective,
        "{} against {}",
        warm.objective,
        cold.objective
    );
    assert!(
        warm.iterations < cold.iterations,
        "{} iterations warm, {} cold",
        warm.iterations,
        cold.iterations
    );
}

#[test]
fn the_default_algorithm_is_auto() {
    // Library users get the measured policy, not only the CLI.
    assert_eq!(HighsSettings::default().algorithm, Algorithm::Auto);
    assert_eq!(Highs::default().settings().algorithm, Algorithm::Auto);
}

#[test]
fn settings_are_validated_by_name() {
    let e = HighsSettings::default().with_time_limit(-1.0).unwrap_err();
    assert_eq!(e.field, "time_limit");
    let e = Highs::new(HighsSettings {
        primal_feasibility_tolerance: 2.0,
        ..Default::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("primal_feasibility_tolerance"));
}

#[test]
fn status_mapping_is_lossless() {
    use HighsModelStatus as H;
    assert_eq!(map_status(H::Optimal, false), Ok(Status::Optimal));
    assert_eq!(map_status(H::Optimal, true), Ok(Status::ReducedAccuracy));
    assert_eq!(
        map_status(H::UnboundedOrInfeasible, false),
        Ok(Status::InfeasibleOrUnbounded)
    );
    assert_eq!(
        map_status(H::ReachedTimeLimit, false),
        Ok(Status::TimeLimit)
    );
    assert_eq!(
        map_status(H::ReachedIterationLimit, false),
        Ok(Status::IterationLimit)
    );
    assert_eq!(
        map_status(H::SolveError, false),
        Ok(Status::NumericalFailure)
    );
    assert!(map_status(H::ModelError, false).is_err());
}
