//! `leontief_model::polish` against HiGHS on random bounded LPs: from
//! HiGHS's final basis and from the all-slack basis alike, the polished
//! vertex is feasible, its duals prove it optimal (weak duality, checked
//! here with its own sums), and its objective is HiGHS's.

use leontief_highs::Highs;
use leontief_model::polish::polish;
use leontief_model::{BasisStatus, LoadedLp, LpBackend, Problem, ProblemBuilder, Sense};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// max c.x, rows lo <= A x <= up with 0 in range (x = 0 feasible), 0 <= x
/// <= u: feasible and bounded.
fn random_lp(rng: &mut Rng, n: usize, m: usize, sense: Sense) -> Problem {
    let mut b = ProblemBuilder::new(sense);
    let rows: Vec<_> = (0..m)
        .map(|_| {
            let up = 1.0 + 9.0 * rng.next();
            let lo = if rng.next() < 0.3 {
                -up
            } else {
                f64::NEG_INFINITY
            };
            b.add_row(lo, up)
        })
        .collect();
    for _ in 0..n {
        let mut entries = Vec::new();
        for &r in &rows {
            if rng.next() < 0.5 {
                entries.push((r, 2.0 * rng.next() - 0.5));
            }
        }
        let cost = 2.0 * rng.next() - 0.5;
        b.add_col(cost, 0.0, 1.0 + 4.0 * rng.next(), entries);
    }
    b.build()
}

/// The weak-duality bound of duals `y` (in the backend's convention) on
/// the problem's objective, and the largest violation of a row or bound
/// by `x`.
fn check(p: &Problem, x: &[f64], y: &[f64]) -> (f64, f64) {
    let (n, m) = (p.num_cols(), p.num_rows());
    let s = if p.sense == Sense::Maximise {
        -1.0
    } else {
        1.0
    };
    let mut act = vec![0.0; m];
    let mut bound = 0.0;
    for j in 0..n {
        let mut d = s * p.col_cost[j];
        for e in p.a_start[j]..p.a_start[j + 1] {
            act[p.a_index[e]] += p.a_value[e] * x[j];
            d -= s * y[p.a_index[e]] * p.a_value[e];
        }
        bound += if d >= 0.0 {
            d * p.col_lower[j]
        } else {
            d * p.col_upper[j]
        };
    }
    for i in 0..m {
        let yi = s * y[i];
        if yi > 0.0 {
            assert!(
                p.row_lower[i].is_finite(),
                "row {i}: dual {yi} on no lower bound"
            );
            bound += yi * p.row_lower[i];
        } else if yi < 0.0 {
            assert!(
                p.row_upper[i].is_finite(),
                "row {i}: dual {yi} on no upper bound"
            );
            bound += yi * p.row_upper[i];
        }
    }
    let mut worst: f64 = 0.0;
    for i in 0..m {
        worst = worst
            .max(p.row_lower[i] - act[i])
            .max(act[i] - p.row_upper[i]);
    }
    for j in 0..n {
        worst = worst.max(p.col_lower[j] - x[j]).max(x[j] - p.col_upper[j]);
    }
    (s * bound, worst)
}

#[test]
fn polished_vertices_are_feasible_and_proved_optimal() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..300 {
        let sense = if case % 2 == 0 {
            Sense::Maximise
        } else {
            Sense::Minimise
        };
        let (n, m) = (3 + case % 9, 2 + case % 7);
        let p = random_lp(&mut rng, n, m, sense);
        let mut lp = Highs::default().load(p.clone()).unwrap();
        let sol = lp.solve().unwrap();
        assert!(sol.status.has_solution(), "case {case}: {}", sol.status);
        let (cols, rows) = lp.basis().expect("HiGHS has a basis");
        let slack = (vec![BasisStatus::Lower; n], vec![BasisStatus::Basic; m]);
        for (from, (c, r)) in [("HiGHS's basis", (cols, rows)), ("the slack basis", slack)] {
            let e = polish(&p, &c, &r, 1_000, None)
                .unwrap_or_else(|e| panic!("case {case} from {from}: {e:?}"));
            let (bound, infeasible) = check(&p, &e.x, &e.row_dual);
            let scale = 1.0 + e.objective.abs();
            assert!(
                infeasible <= 1e-12,
                "case {case} from {from}: infeasible by {infeasible}"
            );
            assert!(
                (e.objective - bound).abs() <= 1e-12 * scale,
                "case {case} from {from}: objective {} but the duals bound it by {bound}",
                e.objective
            );
            assert!(
                (e.objective - sol.objective).abs() <= 1e-8 * scale,
                "case {case} from {from}: {} against HiGHS's {}",
                e.objective,
                sol.objective
            );
        }
    }
}

/// A basis the statuses cannot make (too many basic) is refused, not
/// solved from.
#[test]
fn a_wrong_count_of_basic_variables_is_refused() {
    let mut rng = Rng(7);
    let p = random_lp(&mut rng, 4, 3, Sense::Maximise);
    let cols = vec![BasisStatus::Basic; 4];
    let rows = vec![BasisStatus::Basic; 3];
    assert!(polish(&p, &cols, &rows, 10, None).is_err());
}

/// max x with x + b1 = 1 and 1e-12 x + b2 = 0 (b1, b2 >= 0), from the
/// basis {b1, b2}: b2's pivot is 1e-12 of x's column, too small to take,
/// and stepping past it to x = 1 leaves b2 = -1e-12, which phase 1
/// undoes: the pivots cycle (as on an LP at 1,000 x 10,000 with
/// placement lists). They must end in an error at the pivot limit (the
/// caller keeps the backend's answer), never with that infeasible
/// vertex or a vertex claimed optimal.
#[test]
fn a_step_past_a_small_pivot_ends_at_the_pivot_limit_not_in_a_wrong_vertex() {
    let mut b = ProblemBuilder::new(Sense::Maximise);
    let r1 = b.add_row(1.0, 1.0);
    let r2 = b.add_row(0.0, 0.0);
    b.add_col(1.0, 0.0, f64::INFINITY, [(r1, 1.0), (r2, 1e-12)]);
    b.add_col(0.0, 0.0, f64::INFINITY, [(r1, 1.0)]);
    b.add_col(0.0, 0.0, f64::INFINITY, [(r2, 1.0)]);
    let p = b.build();
    let cols = [BasisStatus::Lower, BasisStatus::Basic, BasisStatus::Basic];
    let rows = [BasisStatus::Lower, BasisStatus::Lower];
    match polish(&p, &cols, &rows, 50, None) {
        Err(e) => assert_eq!(e, leontief_model::polish::PolishError::PivotLimit),
        // Should the pivots ever find it: the optimum is x = 0.
        Ok(e) => assert_eq!(e.x, vec![0.0, 1.0, 0.0], "{e:?}"),
    }
}

/// A deadline already past stops the pivots (before the first).
#[test]
fn a_past_deadline_stops_the_pivots() {
    let mut rng = Rng(11);
    let p = random_lp(&mut rng, 30, 20, Sense::Maximise);
    let cols = vec![BasisStatus::Lower; 30];
    let rows = vec![BasisStatus::Basic; 20];
    let past = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_millis(2));
    let e = polish(&p, &cols, &rows, 1_000, Some(past));
    assert_eq!(
        e.unwrap_err(),
        leontief_model::polish::PolishError::TimeLimit
    );
    assert!(polish(&p, &cols, &rows, 1_000, None).is_ok());
}

/// The exact vertex's basis goes back to the backend: the next solve
/// starts from it and takes no iteration (the max-min rounds' next LP
/// then does not repeat the pivots).
#[test]
fn the_exact_basis_goes_back_to_the_backend() {
    use leontief_highs::{Algorithm, HighsSettings};
    let mut rng = Rng(23);
    let h = Highs::new(HighsSettings {
        presolve: false,
        algorithm: Algorithm::Simplex,
        ..HighsSettings::default()
    })
    .unwrap();
    for case in 0..20 {
        let p = random_lp(&mut rng, 30, 20, Sense::Maximise);
        let mut lp = h.load(p.clone()).unwrap();
        // From the slack basis, which is not optimal.
        lp.set_basis(&[BasisStatus::Lower; 30], &[BasisStatus::Basic; 20])
            .unwrap();
        let e = leontief_model::polish::polish_loaded(&mut lp, 1_000, None)
            .unwrap_or_else(|| panic!("case {case}: no exact vertex"));
        assert!(e.iterations > 0, "case {case}: the slack basis was optimal");
        let again = lp.solve().unwrap();
        assert_eq!(again.iterations, 0, "case {case}");
        assert!(
            (again.objective - e.objective).abs() <= 1e-9 * (1.0 + e.objective.abs()),
            "case {case}: {} against {}",
            again.objective,
            e.objective
        );
    }
}
