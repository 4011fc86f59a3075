//! YARN Fair Scheduler's fair shares (`ComputeFairShares`, Hadoop 3.x):
//! for each resource separately, the children of a queue split the
//! queue's share by a weight-to-resource ratio R found by 25 steps of
//! bisection; a child gets `weight x R` clamped to `[minShare, maxShare]`,
//! truncated to a whole unit (`(long) share`). The root's share is the
//! cluster; a queue's `minShare` is its guarantee, its `maxShare` its
//! limit capped by its subtree's request (a queue that cannot use a share
//! leaves it to the others).

use crate::tree::{split_down, Tree};

/// `COMPUTE_FAIR_SHARES_ITERATIONS` of `ComputeFairShares.java`.
pub const ITERATIONS: usize = 25;

/// One schedulable of one split: its weight and clamps, in the split's
/// units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedulable {
    /// Weight (> 0).
    pub weight: f64,
    /// `minShare`.
    pub min: f64,
    /// `maxShare`.
    pub max: f64,
}

/// `computeShare`: `weight x ratio` clamped to `[min, max]`, truncated to
/// whole units when `whole`.
fn share(s: &Schedulable, ratio: f64, whole: bool) -> f64 {
    let x = (s.weight * ratio).max(s.min).min(s.max);
    if whole {
        x.floor()
    } else {
        x
    }
}

/// `computeSharesInternal`: the fair shares of `children` of `total`
/// (all in units of the resource's quantum when `whole`).
pub fn compute_shares(children: &[Schedulable], total: f64, whole: bool) -> Vec<f64> {
    // `getFairShareIfFixed`: a schedulable with maxShare 0 gets 0.
    let active: Vec<usize> = (0..children.len())
        .filter(|&j| children[j].max > 0.0)
        .collect();
    let mut out = vec![0.0; children.len()];
    if active.is_empty() {
        return out;
    }
    let used = |ratio: f64| -> f64 {
        active
            .iter()
            .map(|&j| share(&children[j], ratio, whole))
            .sum()
    };
    let total_max: f64 = active.iter().map(|&j| children[j].max).sum();
    let total = total.min(total_max);
    let mut right = 1.0;
    // Doubling stops at the latest when every child sits at its max.
    while used(right) < total && right < f64::MAX / 4.0 {
        right *= 2.0;
    }
    let mut left = 0.0;
    for _ in 0..ITERATIONS {
        let mid = (left + right) / 2.0;
        let planned = used(mid);
        if planned == total {
            right = mid;
            break;
        } else if planned < total {
            left = mid;
        } else {
            right = mid;
        }
    }
    for &j in &active {
        out[j] = share(&children[j], right, whole);
    }
    out
}

/// Every node's and user's fair share, top down from the cluster. With a
/// quantum every amount is counted in whole quanta (YARN's `long`s), and
/// converted back only at the end.
pub(crate) fn fair_shares(
    tree: &Tree,
    total: &[f64],
    quantum: Option<&[f64]>,
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let m = tree.m;
    let whole = quantum.is_some();
    let unit = |r: usize| quantum.map_or(1.0, |q| q[r]);
    // An amount in the split's units: whole quanta (rounded down, up to a
    // hair of floating point) with a quantum, itself without.
    let units = |x: f64, r: usize| {
        if whole {
            (x / unit(r) + 1e-9).floor()
        } else {
            x
        }
    };
    let root: Vec<f64> = (0..m).map(|r| units(total[r], r)).collect();
    let (node_units, user_units) = split_down(tree, root, |kids, r, amount| {
        let scheds: Vec<Schedulable> = kids
            .iter()
            .map(|&c| {
                let max = units(
                    tree.limit_of(c, r)
                        .unwrap_or(f64::INFINITY)
                        .min(tree.request_of(c, r)),
                    r,
                );
                Schedulable {
                    weight: tree.weight_of(c),
                    min: units(tree.guarantee_of(c, r), r).min(max),
                    max,
                }
            })
            .collect();
        compute_shares(&scheds, amount, whole)
    });
    let back = |rows: Vec<Vec<f64>>| -> Vec<Vec<f64>> {
        rows.into_iter()
            .map(|row| row.iter().enumerate().map(|(r, &x)| x * unit(r)).collect())
            .collect()
    };
    (back(node_units), back(user_units))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(weight: f64, min: f64, max: f64) -> Schedulable {
        Schedulable { weight, min, max }
    }

    #[test]
    fn equal_weights_split_evenly_and_a_small_max_leaves_the_rest() {
        let out = compute_shares(
            &[s(1.0, 0.0, f64::INFINITY), s(1.0, 0.0, f64::INFINITY)],
            10.0,
            true,
        );
        assert_eq!(out, vec![5.0, 5.0]);
        // The worked case of the schedulers' issue: A demands 1 unit of
        // memory, B 10; B gets the other 9.
        let out = compute_shares(&[s(1.0, 0.0, 1.0), s(1.0, 0.0, 10.0)], 10.0, true);
        assert_eq!(out, vec![1.0, 9.0]);
    }

    #[test]
    fn min_share_is_honoured_and_truncation_leaves_units_unassigned() {
        // Weights 1 and 2 over 10 whole units: any R in [3.5, 11/3) gives
        // 3 + 7; the bisection stops at the first such R.
        let out = compute_shares(
            &[s(1.0, 0.0, f64::INFINITY), s(2.0, 0.0, f64::INFINITY)],
            10.0,
            true,
        );
        assert_eq!(out, vec![3.0, 7.0]);
        let out = compute_shares(&[s(1.0, 8.0, 100.0), s(1.0, 0.0, 100.0)], 10.0, true);
        assert_eq!(out, vec![8.0, 2.0]);
    }
}
