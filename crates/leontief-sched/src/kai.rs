//! KAI Scheduler's resource division (`resource_division.go` of the
//! proportion plugin, NVIDIA/KAI-Scheduler v0.x): for each resource
//! separately and level by level down the queue tree, every child first
//! gets `min(deserved, requestable)`; what remains is divided over quota
//! in rounds, each unsatisfied child receiving its weight's part of the
//! round's amount, or its remaining request if that is less; a child not
//! satisfied by a round gets its part rounded down to whole units, and
//! the fractions left over go one unit at a time to the children with the
//! largest fraction. The instance's queues carry no priority (one
//! priority level) and no usage history (`kValue` then drops out of the
//! weights).

use crate::tree::{round_down, split_down, Tree};

/// One child of one division.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KaiQueue {
    /// Over-quota weight.
    pub weight: f64,
    /// Deserved quota (0: none).
    pub deserved: f64,
    /// Request.
    pub request: f64,
    /// `maxAllowed` (`None`: unlimited).
    pub max_allowed: Option<f64>,
}

impl KaiQueue {
    /// `GetRequestableShare`: the request capped by `maxAllowed`.
    fn requestable(&self) -> f64 {
        self.max_allowed
            .map_or(self.request, |m| m.min(self.request))
    }

    /// `isQueueSatisfied`.
    fn satisfied(&self, fair: f64) -> bool {
        self.request <= fair || self.max_allowed.is_some_and(|m| m <= fair)
    }
}

/// `setResourceShare` for one resource: the fair share of each child of
/// `total`, rounding to whole multiples of `quantum` (none: no rounding).
pub fn divide(total: f64, queues: &[KaiQueue], quantum: Option<f64>) -> Vec<f64> {
    let n = queues.len();
    let mut fair = vec![0.0; n];
    let mut remaining = total;
    for (f, q) in fair.iter_mut().zip(queues) {
        let amount = q.deserved.min(q.requestable());
        *f += amount;
        remaining -= amount;
    }
    if remaining <= 0.0 || n == 0 {
        return fair;
    }
    // divideUpToFairShare (one priority level).
    let mut fraction: Vec<Option<f64>> = vec![None; n];
    for _round in 0..=n + 1 {
        if n == 1 {
            // A lone child takes everything left, as the source does.
            fair[0] += remaining;
            return fair;
        }
        let unsatisfied: Vec<usize> = (0..n).filter(|&j| !queues[j].satisfied(fair[j])).collect();
        let weight_sum: f64 = unsatisfied.iter().map(|&j| queues[j].weight).sum();
        if weight_sum <= 0.0 {
            break;
        }
        let amount = remaining;
        let mut again = false;
        for &j in &unsatisfied {
            if remaining <= 0.0 {
                break;
            }
            let q = &queues[j];
            if q.weight == 0.0 {
                continue;
            }
            let requested = (q.requestable() - fair[j]).max(0.0);
            let part = amount * q.weight / weight_sum;
            let give = if requested <= part {
                fraction[j] = None;
                requested
            } else {
                let whole = round_down(part, quantum);
                if part - whole > 0.0 {
                    fraction[j] = Some(part - whole);
                }
                whole
            };
            if give == 0.0 {
                continue;
            }
            fair[j] += give;
            remaining -= give;
            again = again || requested < part;
        }
        if !again || remaining <= 0.0 {
            break;
        }
    }
    // divideRemainingResource: one unit each, largest fraction first
    // (ties: the earlier child).
    if let Some(unit) = quantum {
        let mut order: Vec<(usize, f64)> = fraction
            .iter()
            .enumerate()
            .filter_map(|(j, f)| f.map(|f| (j, f)))
            .collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for (j, _) in order {
            if remaining <= 0.0 {
                break;
            }
            let give = unit.min(remaining);
            fair[j] += give;
            remaining -= give;
        }
    }
    fair
}

/// Every node's and user's fair share, top down from the cluster.
pub(crate) fn fair_shares(
    tree: &Tree,
    total: &[f64],
    quantum: Option<&[f64]>,
) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    split_down(tree, total.to_vec(), |kids, r, amount| {
        let queues: Vec<KaiQueue> = kids
            .iter()
            .map(|&c| KaiQueue {
                weight: tree.weight_of(c),
                deserved: tree.guarantee_of(c, r),
                request: tree.request_of(c, r),
                max_allowed: tree.limit_of(c, r),
            })
            .collect();
        divide(amount, &queues, quantum.map(|q| q[r]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(weight: f64, deserved: f64, request: f64) -> KaiQueue {
        KaiQueue {
            weight,
            deserved,
            request,
            max_allowed: None,
        }
    }

    #[test]
    fn deserved_first_then_over_quota_by_weight() {
        // 10 GPUs; A deserves 2 and asks 10, B deserves 2 and asks 3:
        // quotas 2 + 2; the 6 left split 3/3, B takes the 1 it still asks
        // and A 3; a second round gives A the 2 left: A 7, B 3.
        let out = divide(10.0, &[q(1.0, 2.0, 10.0), q(1.0, 2.0, 3.0)], Some(1.0));
        assert_eq!(out, vec![7.0, 3.0]);
    }

    #[test]
    fn fractions_go_one_unit_at_a_time_to_the_largest() {
        // 10 units over weights 1, 1, 1, all unsatisfied: 3 each, and the
        // last unit to the first (equal fractions: the earliest child).
        let out = divide(
            10.0,
            &[q(1.0, 0.0, 20.0), q(1.0, 0.0, 20.0), q(1.0, 0.0, 20.0)],
            Some(1.0),
        );
        assert_eq!(out, vec![4.0, 3.0, 3.0]);
        // Without a quantum nothing is rounded.
        let out = divide(
            10.0,
            &[q(1.0, 0.0, 20.0), q(1.0, 0.0, 20.0), q(1.0, 0.0, 20.0)],
            None,
        );
        assert!(out.iter().all(|&x| (x - 10.0 / 3.0).abs() < 1e-12));
    }
}
