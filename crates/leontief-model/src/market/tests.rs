use super::*;

/// A small deterministic generator (no dev-dependency for one test).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The KKT conditions of the primal, checked from (lambda, x) with
/// their own arithmetic: each buyer's total is its best response to
/// its net price (powf, not the solver's exp/log), no resource is
/// overloaded, and every priced resource is full.
/// One generated program: exponent, resources, rows, b^alpha, bounds
/// and linear terms.
struct Case {
    alpha: f64,
    m: usize,
    r: Vec<f64>,
    coef: Vec<f64>,
    lo: Vec<f64>,
    hi: Vec<f64>,
    d: Vec<f64>,
}

fn kkt_holds(case: &Case, lam: &[f64], x: &[f64]) -> Result<(), String> {
    let Case {
        alpha,
        m,
        r,
        coef,
        lo,
        hi,
        d,
    } = case;
    let (alpha, m) = (*alpha, *m);
    let mut load = vec![0.0; m];
    for k in 0..coef.len() {
        let row = &r[k * m..(k + 1) * m];
        let p: f64 = row.iter().zip(lam).map(|(a, b)| a * b).sum::<f64>() - d[k];
        let best = if p <= 0.0 {
            hi[k]
        } else {
            (coef[k] / p).powf(1.0 / alpha).clamp(lo[k], hi[k])
        };
        if (best - x[k]).abs() > 1e-7 * best.max(1e-300) {
            return Err(format!("buyer {k}: x {} but best response {best}", x[k]));
        }
        for j in 0..m {
            load[j] += row[j] * (x[k] - lo[k]);
        }
    }
    for j in 0..m {
        if load[j] > 1.0 + 1e-9 {
            return Err(format!("resource {j} overloaded: {}", load[j]));
        }
        // Prices here are of order 1 (coefficients and rows are): a
        // price below 1e-10 is zero to the solver's tolerance.
        if lam[j] > 1e-10 && load[j] < 1.0 - 1e-7 {
            return Err(format!(
                "resource {j} priced {} but load {}",
                lam[j], load[j]
            ));
        }
    }
    Ok(())
}

/// Program `case` of the generated family: None where a buyer uses
/// nothing (it would take hi for free).
fn generate(rng: &mut Lcg, case: usize) -> Option<Case> {
    let alpha = [0.5, 1.0, 2.0, 3.0, 8.0][case % 5];
    let m = 1 + case % 4;
    let e = 2 + (rng.next() * 12.0) as usize;
    let r: Vec<f64> = (0..e * m)
        .map(|_| {
            if rng.next() < 0.2 {
                0.0
            } else {
                0.05 + rng.next()
            }
        })
        .collect();
    // Every buyer uses something (else it takes hi for free).
    if (0..e).any(|k| r[k * m..(k + 1) * m].iter().all(|&v| v == 0.0)) {
        return None;
    }
    let coef: Vec<f64> = (0..e).map(|_| 0.1 + rng.next()).collect();
    let lo: Vec<f64> = (0..e)
        .map(|_| if rng.next() < 0.5 { 0.0 } else { rng.next() })
        .collect();
    let hi: Vec<f64> = lo
        .iter()
        .map(|&l| {
            if rng.next() < 0.3 {
                l + 0.3 * rng.next()
            } else {
                INF
            }
        })
        .collect();
    let linear = case.is_multiple_of(3);
    let d: Vec<f64> = (0..e)
        .map(|k| {
            if linear && hi[k].is_finite() {
                2.0 * rng.next()
            } else {
                0.0
            }
        })
        .collect();
    Some(Case {
        alpha,
        m,
        r,
        coef,
        lo,
        hi,
        d,
    })
}

/// Programs 0..300 of the generated family from `seed`, with their
/// numbers (those `generate` skips left out).
fn cases(seed: u64) -> impl Iterator<Item = (usize, Case)> {
    let mut rng = Lcg(seed);
    (0..300).filter_map(move |case| generate(&mut rng, case).map(|c| (case, c)))
}

impl Case {
    /// The program as a [`Market`] (b^alpha = coef, the linear terms d).
    fn market(&self) -> Market<'_> {
        let ln_b = self.coef.iter().map(|c| c.ln() / self.alpha).collect();
        let shift = if self.d.iter().any(|&v| v != 0.0) {
            self.d.clone()
        } else {
            Vec::new()
        };
        Market::new(
            self.alpha,
            self.m,
            &self.r,
            ln_b,
            self.lo.clone(),
            self.hi.clone(),
            shift,
        )
    }
}

#[test]
fn solutions_satisfy_kkt_with_bounds_caps_and_linear_terms() {
    let mut solved = 0;
    for (case, case_data) in cases(7) {
        let (alpha, e) = (case_data.alpha, case_data.coef.len());
        let market = case_data.market();
        let mut lam = vec![1.0; case_data.m];
        let mut x = vec![0.0; e];
        let (_, ok) = market.solve(&mut lam, &mut x, 1e-12);
        assert!(ok, "case {case}: not solved");
        kkt_holds(&case_data, &lam, &x)
            .unwrap_or_else(|err| panic!("case {case} (alpha {alpha}): {err}"));
        solved += 1;
    }
    assert!(solved > 200, "only {solved} cases generated");
}

/// The descent reads the totals from the values its line search took
/// (`value_x`) in place of the gradient's own: they must be the same
/// bits, and so must the value and the gradient built from them, at
/// prices that put buyers inside, at and beyond their bounds (zero and
/// negative net prices included).
#[test]
fn the_totals_of_a_value_are_the_gradients_bit_for_bit() {
    let mut rng = Lcg(11);
    let mut checked = 0;
    for (case, c) in cases(11) {
        let market = c.market();
        let e = c.coef.len();
        for trial in 0..20 {
            let lam: Vec<f64> = (0..c.m)
                .map(|_| match trial % 4 {
                    0 => 0.0f64.max(rng.next() - 0.3),
                    1 => 10.0 * rng.next(),
                    2 => 1e-3 * rng.next(),
                    _ => rng.next(),
                })
                .collect();
            let (mut xv, mut xg) = (vec![0.0; e], vec![0.0; e]);
            let f = market.value_x(&lam, &mut xv);
            let g = market.gradient(&lam, &mut xg);
            assert_eq!(f.to_bits(), market.value(&lam).to_bits(), "case {case}");
            for k in 0..e {
                assert_eq!(xv[k].to_bits(), xg[k].to_bits(), "case {case}, buyer {k}");
            }
            let from_totals = market.usage_gap(&xv);
            for j in 0..c.m {
                assert_eq!(g[j].to_bits(), from_totals[j].to_bits(), "case {case}");
            }
            checked += 1;
        }
    }
    assert!(checked > 4000, "only {checked} points checked");
}

#[test]
fn capped_buyers_whose_linear_value_exceeds_the_price_still_converge() {
    // Both at their caps with a negative net price at the start: no
    // curvature anywhere (the step once overflowed to NaN; found by
    // leontief-fds's warm-start property test).
    let r = [0.1973305700316014, 6.251736193950572];
    let (alpha, coef) = (0.4, [5724.461246976477, 45521.690700373736]);
    let market = Market::new(
        alpha,
        1,
        &r,
        coef.iter().map(|c: &f64| c.ln() / alpha).collect(),
        vec![0.0; 2],
        vec![1.0; 2],
        vec![0.39466114006320285, 12.503472387901146],
    );
    let (mut lam, mut x) = (vec![1.0], vec![0.0; 2]);
    let (_, ok) = market.solve(&mut lam, &mut x, 1e-12);
    assert!(ok && lam[0] > 1.0, "{lam:?} {x:?}");
    let load = r[0] * x[0] + r[1] * x[1];
    assert!((load - 1.0).abs() < 1e-9, "load {load}");
}

#[test]
fn gram_by_product_matches_rank_one_updates() {
    let mut rng = Lcg(3);
    let (e, m) = (40, 20);
    let r: Vec<f64> = (0..e * m).map(|_| rng.next()).collect();
    let w: Vec<(usize, f64)> = (0..e).map(|k| (k, rng.next())).collect();
    let idx: Vec<usize> = (0..m).filter(|j| j % 3 != 1).collect();
    let h = gram(&r, m, &idx, w.iter().copied());
    for (a, &ja) in idx.iter().enumerate() {
        for (b, &jb) in idx.iter().enumerate() {
            let want: f64 = w
                .iter()
                .map(|&(k, c)| c * r[k * m + ja] * r[k * m + jb])
                .sum();
            assert!(
                (h[(a, b)] - want).abs() < 1e-12 * want.max(1.0),
                "({a}, {b})"
            );
        }
    }
}
