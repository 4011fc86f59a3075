//! The operator's LP, built once (see [`crate::lp`]).

use leontief_core::{Instance, ResourceId, ServerId, UserId};
use leontief_model::{Col, ProblemBuilder, Row, Sense};
use rayon::prelude::*;

const INF: f64 = f64::INFINITY;

/// The smallest capacity-row coefficient kept, absolute and relative to
/// the row's largest (HiGHS drops entries below 1e-12; one decade of
/// margin).
const MIN_COEFFICIENT: f64 = 1e-11;

/// The entries user `n` may run on: eligible (when `placement`) and having
/// every resource it demands.
pub fn runnable_entries(instance: &Instance, n: UserId, placement: bool) -> Vec<ServerId> {
    let mut l = Vec::new();
    crate::lp::pricing::for_each_runnable(instance, n, placement, |i| l.push(i));
    l
}

/// The operator's LP with the indices of its rows and columns.
pub struct MaxMinLp {
    /// Why the LP cannot hold the instance (a capacity row's coefficients
    /// too far apart), if it cannot.
    pub too_wide: Option<String>,
    /// The LP (round 1: every runnable user active).
    pub problem: leontief_model::Problem,
    /// The pairs in the LP: (entry, column) per user.
    pub(crate) pairs: Vec<Vec<(ServerId, Col)>>,
    pub(crate) runnable: Vec<bool>,
    pub(crate) ycols: Vec<Col>,
    pub(crate) y_upper: Vec<f64>,
    /// The level of user n alone on every entry, ignoring its cap (with
    /// 1e-6 to spare) where its cap is below it; elsewhere `y_upper`.
    pub(crate) y_alone: Vec<f64>,
    pub(crate) level: Vec<Row>,
    pub(crate) link: Vec<Row>,
    pub(crate) theta: Col,
    pub(crate) coef: Vec<f64>,
    pub(crate) scale: f64,
    /// Capacity row of (i, r), entry-major (`usize::MAX`: none).
    pub(crate) cap_row: Vec<usize>,
    /// 1 / c_{i,r} where the row exists.
    pub(crate) row_scale: Vec<f64>,
    /// Runnable pairs in all.
    pub(crate) total_pairs: usize,
}

/// The column of user `n` on entry `i`: its capacity-row entries and link.
pub(crate) fn column(
    instance: &Instance,
    n: usize,
    i: ServerId,
    coef: f64,
    cap_row: &[usize],
    row_scale: &[f64],
    link: Row,
) -> Vec<(Row, f64)> {
    let m = instance.num_resources();
    let d = &instance.users()[n].demand;
    let mut e = Vec::with_capacity(m + 1);
    for r in 0..m {
        if d[r] > 0.0 {
            let j = i.0 * m + r;
            e.push((Row(cap_row[j]), d[r] * coef * row_scale[j]));
        }
    }
    e.push((link, 1.0));
    e
}

/// Build the operator's LP (see the module docs) in one column-wise pass:
/// with every runnable pair (`initial` `None`) or with the pairs listed.
pub fn build(
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    initial: Option<&[Vec<ServerId>]>,
) -> MaxMinLp {
    let (m, k, nu) = (
        instance.num_resources(),
        instance.num_entries(),
        instance.num_users(),
    );
    let usable = |n: usize| sigma[n].is_finite() && sigma[n] > 0.0;
    // Pass 1 over every runnable pair: tasks each user runs with every
    // entry it may use to itself, which capacity rows are needed ((i, r)
    // demanded by a user that may run on i), how many pairs there are.
    // In parallel over users (10^8 pairs at 10,000 x 10,000): each
    // user's own sums in order, the needed rows OR-ed, so the same result
    // on any number of threads.
    type Pass1 = (Vec<(usize, f64, usize)>, Vec<bool>);
    let (per_user, needed): Pass1 = (0..nu)
        .into_par_iter()
        .filter(|&n| usable(n))
        .fold(
            || (Vec::new(), vec![false; k * m]),
            |(mut users, mut needed), n| {
                let d = &instance.users()[n].demand;
                let (mut sum, mut pairs) = (0.0, 0usize);
                crate::lp::pricing::for_each_runnable(instance, UserId(n), placement, |i| {
                    pairs += 1;
                    let c = instance.class_capacities(i);
                    let mut g = INF;
                    for r in 0..m {
                        if d[r] > 0.0 {
                            g = g.min(c[r] / d[r]);
                            needed[i.0 * m + r] = true;
                        }
                    }
                    sum += g;
                });
                users.push((n, sum, pairs));
                (users, needed)
            },
        )
        .reduce(
            || (Vec::new(), vec![false; k * m]),
            |(mut ua, mut na), (ub, nb)| {
                ua.extend(ub);
                for (a, b) in na.iter_mut().zip(nb) {
                    *a |= b;
                }
                (ua, na)
            },
        );
    let mut cap_row: Vec<usize> = needed
        .iter()
        .map(|&b| if b { 0 } else { usize::MAX })
        .collect();
    let mut alone_sum = vec![0.0; nu];
    let mut count = vec![0usize; nu];
    for (n, sum, pairs) in per_user {
        alone_sum[n] = sum;
        count[n] = pairs;
    }
    let runnable: Vec<bool> = count.iter().map(|&c| c > 0).collect();
    let total_pairs: usize = count.iter().sum();
    let alone: Vec<f64> = (0..nu)
        .map(|n| alone_sum[n].min(instance.users()[n].tasks.unwrap_or(INF)))
        .collect();
    // Max-min is invariant to a common scale of sigma; pick the scale that
    // makes the smallest "alone" level (the level a user reaches with every
    // server to itself) equal to 1, so theta* lies in about [1/N, 1] and is
    // well above the LP's absolute tolerances whatever the units of sigma
    // (k-DF shares are products of k small ratios).
    let alone_level = |n: usize| sigma[n] * alone[n] / instance.users()[n].weight;
    let reference = (0..nu)
        .filter(|&n| runnable[n])
        .map(alone_level)
        .fold(INF, f64::min);
    let scale = if reference.is_finite() && reference > 0.0 {
        1.0 / reference
    } else {
        1.0
    };
    // coef_n: tasks of user n per unit of level. Every column of user n is
    // in level units (x = coef_n x'), so each user's level row reads
    // y'_n >= theta and the LP's absolute tolerances are the same fraction
    // of every user's level, whatever the weights (1e9 apart) or the size
    // of a task; every capacity row is divided by its capacity, so its
    // tolerance is the same fraction of every server.
    let coef: Vec<f64> = (0..nu)
        .map(|n| {
            if runnable[n] {
                instance.users()[n].weight / (sigma[n] * scale)
            } else {
                0.0
            }
        })
        .collect();
    let entries: Vec<Vec<ServerId>> = (0..nu)
        .map(|n| {
            if !runnable[n] {
                return Vec::new();
            }
            match initial {
                Some(lists) => lists[n].clone(),
                None => {
                    let mut l = Vec::with_capacity(count[n]);
                    crate::lp::pricing::for_each_runnable(instance, UserId(n), placement, |i| {
                        l.push(i)
                    });
                    l
                }
            }
        })
        .collect();
    let ncols: usize = entries.iter().map(Vec::len).sum();
    let mut b = ProblemBuilder::new(Sense::Maximise);
    b.reserve(k * m + 2 * nu, ncols + nu + 1, ncols * (m + 1) + 3 * nu);
    let mut row_scale = vec![0.0; k * m];
    for i in 0..k {
        for r in 0..m {
            if cap_row[i * m + r] == 0 {
                let c = instance.class_capacity(ServerId(i), ResourceId(r));
                row_scale[i * m + r] = 1.0 / c;
                cap_row[i * m + r] = b.add_row(-INF, 1.0).0;
            }
        }
    }
    let link: Vec<Row> = (0..nu).map(|_| b.add_row(0.0, 0.0)).collect();
    let level: Vec<Row> = (0..nu)
        .map(|n| {
            if runnable[n] {
                b.add_row(0.0, INF)
            } else {
                b.add_row(-INF, INF)
            }
        })
        .collect();
    // Pass 2: each capacity row's smallest and largest coefficient over
    // every runnable pair (in the LP or not): an LP solver drops an entry
    // far below the others (HiGHS: below 1e-12 absolute), and a user whose
    // use of a row vanishes may overfill it.
    // In parallel over users, each thread its own extremes (min and max
    // do not depend on the order).
    let empty = || (vec![INF; k * m], vec![0.0f64; k * m]);
    let (row_lo, row_hi) = (0..nu)
        .into_par_iter()
        .filter(|&n| runnable[n])
        .fold(empty, |(mut lo, mut hi), n| {
            let d = &instance.users()[n].demand;
            crate::lp::pricing::for_each_runnable(instance, UserId(n), placement, |i| {
                for r in 0..m {
                    if d[r] > 0.0 {
                        let j = i.0 * m + r;
                        let v = d[r] * coef[n] * row_scale[j];
                        lo[j] = lo[j].min(v);
                        hi[j] = hi[j].max(v);
                    }
                }
            });
            (lo, hi)
        })
        .reduce(empty, |(mut la, mut ha), (lb, hb)| {
            for (a, b) in la.iter_mut().zip(lb) {
                *a = a.min(b);
            }
            for (a, b) in ha.iter_mut().zip(hb) {
                *a = a.max(b);
            }
            (la, ha)
        });
    let pairs: Vec<Vec<(ServerId, Col)>> = entries
        .iter()
        .enumerate()
        .map(|(n, list)| {
            list.iter()
                .map(|&i| {
                    let e = column(instance, n, i, coef[n], &cap_row, &row_scale, link[n]);
                    (i, b.add_col(0.0, 0.0, INF, e))
                })
                .collect()
        })
        .collect();
    // y'_n never exceeds the level of user n alone on every entry (its
    // cap, or the sum of gamma): a bound that never binds at an answer and
    // keeps every LP bounded.
    let y_upper: Vec<f64> = (0..nu)
        .map(|n| {
            if runnable[n] {
                let most = alone[n];
                if instance.users()[n].tasks.is_some_and(|t| t <= most) {
                    most / coef[n]
                } else {
                    most * (1.0 + 1e-6) / coef[n]
                }
            } else {
                0.0
            }
        })
        .collect();
    // Above a cap below the level alone: that level (see the cap jumps).
    let y_alone: Vec<f64> = (0..nu)
        .map(|n| {
            if runnable[n] && instance.users()[n].tasks.is_some_and(|t| t < alone_sum[n]) {
                alone_sum[n] * (1.0 + 1e-6) / coef[n]
            } else {
                y_upper[n]
            }
        })
        .collect();
    let ycols: Vec<Col> = (0..nu)
        .map(|n| b.add_col(0.0, 0.0, y_upper[n], [(link[n], -1.0), (level[n], 1.0)]))
        .collect();
    let theta = b.add_col(
        1.0,
        0.0,
        INF,
        (0..nu).filter(|&n| runnable[n]).map(|n| (level[n], -1.0)),
    );
    let too_wide = (0..k * m)
        .find(|&j| row_hi[j] > 0.0 && (row_lo[j] < MIN_COEFFICIENT || row_lo[j] < row_hi[j] * MIN_COEFFICIENT))
        .map(|j| {
            format!(
                "max-min: the coefficients of capacity row {} on {} span {:.1e} to {:.1e} (users' weights times their shares per task are too far apart for a double-precision LP); not solved",
                instance.resources()[j % m],
                instance.servers()[j / m].name,
                row_lo[j],
                row_hi[j]
            )
        });
    MaxMinLp {
        too_wide,
        problem: b.build(),
        pairs,
        runnable,
        ycols,
        y_upper,
        y_alone,
        level,
        link,
        theta,
        coef,
        scale,
        cap_row,
        row_scale,
        total_pairs,
    }
}

/// The block of each row of `lp` for [`crate::solvers::block_ipm`]: entry i's
/// capacity rows form block i; links and levels are dense.
/// `m` resources, `rows` rows in all.
pub(crate) fn row_blocks(lp: &MaxMinLp, m: usize, rows: usize) -> Vec<u32> {
    let m = m.max(1);
    let mut blocks = vec![crate::solvers::block_ipm::DENSE; rows];
    for (j, &row) in lp.cap_row.iter().enumerate() {
        if row != usize::MAX {
            blocks[row] = (j / m) as u32;
        }
    }
    blocks
}
