//! Prices from a round's duals, and the proof by weak duality that the
//! users they price cannot rise.

use crate::lp::build::MaxMinLp;
use crate::lp::closing::Closing;
use leontief_core::Instance;

const INF: f64 = f64::INFINITY;

/// Prices per unit of each resource on each entry (`y_{i,r} / c_{i,r}`,
/// entry-major; 0 where there is no row) from a solve's row duals.
pub(crate) fn unit_prices(lp: &MaxMinLp, row_dual: &[f64]) -> Vec<f64> {
    lp.cap_row
        .iter()
        .zip(&lp.row_scale)
        .map(|(&j, &s)| {
            if j == usize::MAX {
                0.0
            } else {
                row_dual[j] * s
            }
        })
        .collect()
}

/// [`unit_prices`] as a certificate: a capacity row's dual is >= 0 up to
/// the LP's tolerance, a certificate's prices must be >= 0 (the check
/// refuses others), and a 0 only weakens the bound.
pub(crate) fn certificate_prices(lp: &MaxMinLp, row_dual: &[f64]) -> Vec<f64> {
    unit_prices(lp, row_dual)
        .into_iter()
        .map(|p| p.max(0.0))
        .collect()
}

/// The users of `candidates` that the capacity prices of `row_dual` prove
/// blocked, by weak duality over every runnable pair (the audit's
/// certificate check, in the LP's units): with u_n each user's cheapest
/// level unit and C the priced capacity, an allocation that keeps every
/// user k at least `lower[k]` raises user n by at most
/// (C - sum_k u_k lower_k) / u_n; proved when that is at most `tol`, the
/// growth LPs' own test. An interior point method's duals are not a
/// vertex's, but they need not be: the bound holds for any prices, and
/// at an optimum near the centre of the optimal face (where an interior
/// point method ends) every user that cannot rise carries a positive
/// price. Returns those users and the prices (the round's certificate,
/// [`certificate_prices`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn dual_blocked(
    mm: &MaxMinLp,
    instance: &Instance,
    placement: bool,
    row_dual: &[f64],
    lower: &[f64],
    candidates: &[usize],
    tol: f64,
    closing: Option<&Closing>,
) -> (Vec<usize>, Vec<f64>) {
    let prices = certificate_prices(mm, row_dual);
    let u = match closing {
        None => crate::lp::pricing::cheapest(instance, placement, &mm.runnable, &mm.coef, &prices),
        Some(c) => cheapest_open(mm, instance, &prices, c),
    };
    let (cost, held, rounding) = weighed(mm, instance, row_dual, &u, lower);
    let room = (cost - held).max(0.0) + rounding;
    let proved = candidates
        .iter()
        .copied()
        .filter(|&n| u[n] > 0.0 && room <= tol * u[n])
        .collect();
    (proved, prices)
}

/// Whether the capacity prices of `row_dual` prove, by weak duality over
/// every runnable pair, that no allocation gives every runnable user k at
/// least `want[k]` (in the LP's units): sum_k u_k want_k exceeds the
/// priced capacity C beyond the rounding of the two sums (see
/// [`dual_blocked`]). Any prices may be tried; a column generation's
/// restricted duals prove it before the last columns are priced in.
pub(crate) fn out_of_reach(
    mm: &MaxMinLp,
    instance: &Instance,
    placement: bool,
    row_dual: &[f64],
    want: &[f64],
) -> bool {
    let prices = certificate_prices(mm, row_dual);
    let u = crate::lp::pricing::cheapest(instance, placement, &mm.runnable, &mm.coef, &prices);
    let (cost, held, rounding) = weighed(mm, instance, row_dual, &u, want);
    held > cost + rounding
}

/// The priced capacity C, the priced levels sum_k u_k `lower[k]` over the
/// runnable users, and the rounding a comparison of the two must clear.
fn weighed(
    mm: &MaxMinLp,
    instance: &Instance,
    row_dual: &[f64],
    u: &[f64],
    lower: &[f64],
) -> (f64, f64, f64) {
    let cost = compensated_sum(
        mm.cap_row
            .iter()
            .filter(|&&j| j != usize::MAX)
            .map(|&j| row_dual[j].max(0.0)),
    );
    let held = compensated_sum(
        (0..u.len())
            .filter(|&k| mm.runnable[k])
            .map(|k| u[k] * lower[k]),
    );
    // The room is a difference of two sums that can be 1e8 times larger
    // than it (an ill-conditioned round's prices: measured on placement
    // 100 x 1,000 with 10 eligible servers, 3 resources, seed 1, C = 5.8e7
    // against a test of 3.7e-10, where the float difference was exactly 0
    // and a user that could rise 30% was "proved" blocked). Each u_k is a
    // dot product of m terms, scaled twice, so the computed sums are each
    // within (m + 8) eps of their own size: a proof must clear that.
    let m = instance.num_resources() as f64;
    let rounding = (m + 8.0) * f64::EPSILON * (cost + held);
    (cost, held, rounding)
}

/// Each runnable user's cheapest level unit at `prices` over its pairs in
/// `mm` that `closing` leaves open (0 where none is).
fn cheapest_open(
    mm: &MaxMinLp,
    instance: &Instance,
    prices: &[f64],
    closing: &Closing,
) -> Vec<f64> {
    let m = instance.num_resources();
    (0..mm.pairs.len())
        .map(|n| {
            if !mm.runnable[n] {
                return 0.0;
            }
            let d = &instance.users()[n].demand;
            let best = mm.pairs[n]
                .iter()
                .filter(|&&(_, c)| !closing.is_closed(c))
                .map(|&(i, _)| {
                    let p = &prices[i.0 * m..(i.0 + 1) * m];
                    d.iter().zip(p).map(|(d, p)| d * p).sum::<f64>()
                })
                .fold(INF, f64::min);
            if best.is_finite() {
                mm.coef[n] * best
            } else {
                0.0
            }
        })
        .collect()
}

/// A sum of non-negative terms, compensated (Neumaier): within 2 eps of
/// the exact sum of the terms as given, whatever their number.
fn compensated_sum(terms: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut carry) = (0.0f64, 0.0f64);
    for x in terms {
        let t = sum + x;
        carry += if sum.abs() >= x.abs() {
            (sum - t) + x
        } else {
            (x - t) + sum
        };
        sum = t;
    }
    sum + carry
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lp::build::build;

    /// Two entries of one resource, each user placed on one of them: the
    /// instance, its LP, row duals with prices `p_a` on a and `p_b` on b,
    /// and each user's level at `times` the tasks that fill its entry.
    fn two_entries(p_a: f64, p_b: f64, times: f64) -> (Instance, MaxMinLp, Vec<f64>, Vec<f64>) {
        let instance = Instance::from_json_str(
            r#"{
            "resources": ["cpu"],
            "servers": [{"name": "a", "capacity": [1]}, {"name": "b", "capacity": [1]}],
            "users": [{"name": "u1", "demand": [1], "servers": ["a"]},
                      {"name": "u2", "demand": [1], "servers": ["b"]}]
        }"#,
        )
        .unwrap();
        let mm = build(&instance, &[1.0, 1.0], true, None);
        let mut row_dual = vec![0.0; mm.problem.num_rows()];
        row_dual[mm.cap_row[0]] = p_a;
        row_dual[mm.cap_row[1]] = p_b;
        let level: Vec<f64> = mm.coef.iter().map(|c| times / c).collect();
        (instance, mm, row_dual, level)
    }

    /// `dual_blocked` on [`two_entries`], each user held at exactly the
    /// level that fills its entry (no room at all).
    fn proved_with(p_a: f64, p_b: f64) -> Vec<usize> {
        let (instance, mm, row_dual, lower) = two_entries(p_a, p_b, 1.0);
        let tol = 1e-7 * lower[0].min(lower[1]);
        dual_blocked(&mm, &instance, true, &row_dual, &lower, &[0, 1], tol, None).0
    }

    #[test]
    fn weak_duality_proves_blocked_users_under_balanced_prices() {
        assert_eq!(proved_with(1.0, 1.0), vec![0, 1]);
    }

    /// `out_of_reach` on [`two_entries`], each user asked `times` the
    /// tasks that fill its entry.
    fn out_of_reach_with(p_a: f64, p_b: f64, times: f64) -> bool {
        let (instance, mm, row_dual, want) = two_entries(p_a, p_b, times);
        out_of_reach(&mm, &instance, true, &row_dual, &want)
    }

    #[test]
    fn levels_beyond_the_entries_are_out_of_reach_and_levels_within_them_are_not() {
        // 0.1% beyond: proved by any price on one entry.
        assert!(out_of_reach_with(1.0, 1.0, 1.001));
        assert!(out_of_reach_with(0.0, 3.0, 1.001));
        // Exactly full, or within: never, whatever the prices.
        for (a, b) in [(1.0, 1.0), (1e8, 1e-3), (0.0, 5.0), (2.0, 0.0)] {
            assert!(!out_of_reach_with(a, b, 1.0));
            assert!(!out_of_reach_with(a, b, 0.5));
        }
        // No prices prove nothing.
        assert!(!out_of_reach_with(0.0, 0.0, 2.0));
    }

    proptest::proptest! {
        #![proptest_config(leontief_core::strategies::config(256))]

        /// Levels some allocation within every entry's capacity reaches
        /// (each runnable pair an equal slice of its entry) are never
        /// proved out of reach, whatever the prices (weak duality, with
        /// its rounding allowance).
        #[test]
        fn reachable_levels_are_never_out_of_reach(
            instance in leontief_core::strategies::instance(leontief_core::strategies::Shape::default()),
            prices in proptest::collection::vec(
                proptest::prop_oneof![proptest::strategy::Just(0.0), 1e-6..1e-3, 0.1..10.0, 1e3..1e8], 64),
        ) {
            use leontief_core::{ServerId, UserId};
            use proptest::prop_assert;
            let nu = instance.num_users();
            let m = instance.num_resources();
            let sigma = vec![1.0; nu];
            let mm = build(&instance, &sigma, true, None);
            let mut on: Vec<Vec<ServerId>> = vec![Vec::new(); instance.num_entries()];
            for n in 0..nu {
                crate::lp::pricing::for_each_runnable(&instance, UserId(n), true, |i| on[i.0].push(ServerId(n)));
            }
            let mut tasks = vec![0.0; nu];
            for (i, users) in on.iter().enumerate() {
                let cap = instance.class_capacities(ServerId(i));
                for &ServerId(n) in users {
                    let d = &instance.users()[n].demand;
                    let fit = (0..m)
                        .filter(|&r| d[r] > 0.0)
                        .map(|r| cap[r] / (d[r] * users.len() as f64))
                        .fold(f64::INFINITY, f64::min);
                    if fit.is_finite() {
                        tasks[n] += fit;
                    }
                }
            }
            let want: Vec<f64> = (0..nu)
                .map(|n| if mm.runnable[n] { tasks[n] / mm.coef[n] } else { 0.0 })
                .collect();
            let mut row_dual = vec![0.0; mm.problem.num_rows()];
            for (k, &j) in mm.cap_row.iter().enumerate() {
                if j != usize::MAX {
                    row_dual[j] = prices[k % prices.len()];
                }
            }
            prop_assert!(!out_of_reach(&mm, &instance, true, &row_dual, &want));
        }
    }

    #[test]
    fn a_room_within_the_rounding_of_huge_prices_proves_nothing() {
        // Priced at 1e8, entry a's cost and hold agree to the last bit:
        // the float room is 0 either way, but its rounding (1e-7 here) is
        // far above what user 2's cheap price can pay for (1e-10), so only
        // user 1, whose price pays for the rounding, is proved.
        assert_eq!(proved_with(1e8, 1e-3), vec![0]);
    }
}
