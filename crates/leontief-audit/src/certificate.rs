//! The max-min certificate check: weak duality, one pass per round over
//! every runnable pair (over the groups of entries priced alike where no
//! placement list applies), no LP.
//!
//! For prices `p_{i,r} >= 0` (per unit of resource r on entry i) and any
//! feasible allocation x, every entry's use is within its capacity, so
//!
//! ```text
//!   sum_n u_n X_n <= sum_i sum_n (d_n . p_i) x_{n,i} <= sum_{i,r} c_{i,r} p_{i,r} =: C(p),
//!   u_n = min over the entries i user n may run on of d_n . p_i,
//! ```
//!
//! (with placement lists, over the entries the closure rule of
//! [`crate::closure`] leaves open to n in that round: the lexicographic
//! max-min allocation keeps off the others, so the bound holds for it),
//!
//! with X_n user n's tasks. In round r of the lexicographic max-min every
//! user frozen earlier keeps at least its tasks and every other user at
//! least the tasks of the round's level theta_r: lower bounds X'_k. Then for
//! every user n with u_n > 0 in any allocation meeting the other bounds,
//!
//! ```text
//!   X_n - X'_n <= (C(p) - sum_k u_k X'_k) / u_n,
//! ```
//!
//! so when the right side is at most `tolerance * X'_n`, user n cannot rise
//! above theta_r (relatively) without pushing another user below its bound:
//! it is blocked, as the max-min answer claims. A user frozen by its cap is
//! proved by its cap; one that froze before round 1 by having no entry to
//! run on. A lexicographic max-min proved this way is also Pareto
//! optimal: an improvement would raise some user n while keeping every
//! other user at or above its level, which meets round r(n)'s bounds.
//!
//! The check reads only the instance, the allocation's task counts and
//! rounds, and the prices; it never sees the solver.

pub use leontief_core::checks::CertificateCheck;
use leontief_core::{Instance, RoundPrices, ServerId, UserId};

/// Room in the weak-duality bound below this fraction of all capacity,
/// valued at the prices of the entry where the user is cheapest, is read
/// as round-off (see [`max_min_certificate`]).
pub const CAPACITY_ROUNDING: f64 = 1e-12;

/// Check the certificate of a weighted lexicographic max-min allocation
/// with shares `s_n = sigma_n x_n` (see the module docs). `placement`:
/// honour `users[].servers`. `tolerance` bounds the relative room.
#[allow(clippy::too_many_arguments)]
pub fn max_min_certificate(
    instance: &Instance,
    sigma: &[f64],
    user_tasks: &[f64],
    frozen_round: &[usize],
    rounds: &[RoundPrices],
    placement: bool,
    feasibility: f64,
    tolerance: f64,
) -> CertificateCheck {
    let (k, m, nu) = (
        instance.num_entries(),
        instance.num_resources(),
        instance.num_users(),
    );
    let mut out = CertificateCheck {
        ok: true,
        rounds: rounds.len(),
        pairs: 0,
        worst_room: 0.0,
        violations: Vec::new(),
    };
    let fail = |out: &mut CertificateCheck, why: String| {
        out.ok = false;
        if out.violations.len() < 20 {
            out.violations.push(why);
        }
    };
    if sigma.len() != nu || user_tasks.len() != nu || frozen_round.len() != nu {
        fail(
            &mut out,
            "sigma, tasks or rounds do not have one entry per user".into(),
        );
        return out;
    }
    let users = instance.users();
    let level = |n: usize| sigma[n] * user_tasks[n] / users[n].weight;
    // Which users need a price certificate: frozen in a round, not capped.
    let capped = |n: usize| {
        users[n]
            .tasks
            .is_some_and(|t| user_tasks[n] >= t * (1.0 - feasibility))
    };
    // Every entry's capacity summed, per resource.
    let total: Vec<f64> = (0..m)
        .map(|r| {
            instance
                .server_ids()
                .map(|i| instance.class_capacities(i)[r])
                .sum()
        })
        .collect();
    // With placement lists, each round's bound is over the pairs the
    // closure rule leaves open (see [`crate::closure`]).
    let closure = crate::closure::Closure::new(
        instance,
        sigma,
        user_tasks,
        frozen_round,
        placement,
        tolerance,
    );
    let levels: Vec<f64> = (0..nu).map(level).collect();
    let order = RoundOrder::new(&levels, frozen_round);
    let mut certified = vec![false; nu];
    for c in rounds {
        let r_k = c.round;
        if c.prices.len() != k || c.prices.iter().any(|row| row.len() != m) {
            fail(
                &mut out,
                format!("round {r_k}: prices are not one row of {m} per entry ({k})"),
            );
            continue;
        }
        if c.prices
            .iter()
            .flatten()
            .any(|p| !p.is_finite() || *p < 0.0)
        {
            fail(
                &mut out,
                format!("round {r_k}: a price is negative or not finite"),
            );
            continue;
        }
        if let Some(&n) = c.users.iter().find(|&&n| n >= nu || frozen_round[n] != r_k) {
            fail(
                &mut out,
                format!("round {r_k}: user index {n} did not freeze in this round"),
            );
            continue;
        }
        let cost: f64 = (0..k)
            .map(|i| {
                instance
                    .class_capacities(ServerId(i))
                    .iter()
                    .zip(&c.prices[i])
                    .map(|(c, p)| c * p)
                    .sum::<f64>()
            })
            .sum();
        // One pass: each user's cheapest task; the bound's left side with
        // the users frozen in rounds 1..=r at their tasks (`held`), and
        // the later ones per unit of level (`later`, tasks w_k / sigma_k).
        let mut u = vec![0.0; nu];
        // Per user, all capacity valued at the prices of its cheapest
        // entry: the scale of its round-off allowance.
        let mut own_scale = vec![0.0; nu];
        let (mut held, mut later) = (0.0, 0.0);
        // Only where no closure rule closes an entry to some user.
        let alike = closure
            .always_open()
            .then(|| Alike::new(instance, &c.prices));
        for n in 0..nu {
            if frozen_round[n] == 0 {
                continue;
            }
            let d = &users[n].demand;
            let listed = placement && users[n].servers.is_some();
            let (best, at) = match alike.as_ref().filter(|_| !listed) {
                Some(alike) => {
                    let (v, i, pairs) = alike.cheapest(d, &c.prices);
                    out.pairs += pairs;
                    (v, i)
                }
                None => {
                    let (mut best, mut at) = (f64::INFINITY, None);
                    for i in instance.runnable_entries(UserId(n), placement) {
                        out.pairs += 1;
                        if closure.is_open(n, i.0, r_k) {
                            let v = task_price(d, &c.prices[i.0]);
                            if v < best {
                                (best, at) = (v, Some(i.0));
                            }
                        }
                    }
                    (best, at)
                }
            };
            u[n] = if best.is_finite() { best } else { 0.0 };
            if let Some(i) = at {
                own_scale[n] = total.iter().zip(&c.prices[i]).map(|(c, p)| c * p).sum();
            }
            if frozen_round[n] <= r_k {
                held += u[n] * user_tasks[n];
            } else {
                later += u[n] * users[n].weight / sigma[n];
            }
        }
        // User n may be pushed to its own level by nobody: the users
        // frozen later may fall to its level, no further.
        for &n in &c.users {
            if let Some(why) = order.violation(instance, n, r_k, level(n), tolerance) {
                fail(&mut out, why);
                continue;
            }
            let room = (cost - held - level(n) * later).max(0.0);
            let denominator = u[n] * user_tasks[n];
            let rel = if denominator > 0.0 {
                room / denominator
            } else {
                f64::INFINITY
            };
            out.worst_room = out.worst_room.max(rel);
            // Or the room is round-off: a rise that needs at most 1e-12 of
            // all capacity (far below the 1e-7 feasibility tolerance),
            // valued at the prices of the entry the user is cheapest on,
            // is no rise. It matters for a user whose task takes a sliver
            // of the blocking resource (a demand 1e11 times heavier
            // elsewhere): relative to its own tasks the rounding of the
            // others' use looks large. Valued at the user's own prices,
            // not the priced capacity C(p): prices 1e13 on some entries
            // would otherwise excuse a real rise on the cheap ones (a
            // test below).
            // A user without a priced task is not bounded by the prices
            // at all, as in the exact check (zero prices made the room and
            // its allowance both zero, which read as proved).
            if denominator > 0.0 && (rel <= tolerance || room <= CAPACITY_ROUNDING * own_scale[n]) {
                certified[n] = true;
            } else {
                fail(
                    &mut out,
                    if denominator > 0.0 {
                        format!(
                            "round {r_k}: the prices leave {} room {rel:.3e} (relative) above its level",
                            users[n].name
                        )
                    } else {
                        format!("round {r_k}: {} has no priced task", users[n].name)
                    },
                );
            }
        }
    }
    for n in 0..nu {
        let proved = match frozen_round[n] {
            0 => {
                instance
                    .runnable_entries(UserId(n), placement)
                    .next()
                    .is_none()
                    || sigma[n] <= 0.0
                    || !sigma[n].is_finite()
            }
            _ => certified[n] || capped(n),
        };
        if !proved {
            fail(
                &mut out,
                format!(
                    "{} (round {}) is proved neither by prices nor by its cap{}",
                    users[n].name,
                    frozen_round[n],
                    if frozen_round[n] == 0 {
                        " nor by having nowhere to run"
                    } else {
                        ""
                    }
                ),
            );
        }
    }
    out
}

/// A task of demand `d` at an entry's prices `p`.
fn task_price(d: &[f64], p: &[f64]) -> f64 {
    d.iter().zip(p).map(|(d, p)| d * p).sum()
}

/// A round's entries grouped by what a user sees of them: the same prices
/// and the same resources present (so the same users may run on them).
/// The pooled paths price every entry alike, the pattern paths each
/// class alike: a user's cheapest entry is then found over the groups.
struct Alike {
    groups: Vec<Group>,
}

/// Entries of one [`Alike`] group.
struct Group {
    /// The lowest entry of the group.
    first: usize,
    /// Entries in the group.
    size: usize,
    /// Per resource: whether the group's entries have any of it.
    has: Vec<bool>,
}

impl Alike {
    /// The groups of `prices` (one row per entry), ordered by their first
    /// entry.
    fn new(instance: &Instance, prices: &[Vec<f64>]) -> Alike {
        let mut index: std::collections::HashMap<(Vec<u64>, Vec<bool>), usize> =
            std::collections::HashMap::new();
        let mut groups: Vec<Group> = Vec::new();
        for (i, row) in prices.iter().enumerate() {
            let has: Vec<bool> = instance
                .class_capacities(ServerId(i))
                .iter()
                .map(|&c| c > 0.0)
                .collect();
            let key = (row.iter().map(|p| p.to_bits()).collect(), has.clone());
            let g = *index.entry(key).or_insert_with(|| {
                groups.push(Group {
                    first: i,
                    size: 0,
                    has,
                });
                groups.len() - 1
            });
            groups[g].size += 1;
        }
        Alike { groups }
    }

    /// For demand `d` over every entry it may run on: the cheapest task
    /// at `prices` (infinite where there is none), the lowest entry
    /// attaining it, and how many entries it may run on. Every entry of a
    /// group prices a task alike, so its first entry stands for the
    /// group.
    fn cheapest(&self, d: &[f64], prices: &[Vec<f64>]) -> (f64, Option<usize>, usize) {
        let (mut best, mut at, mut pairs) = (f64::INFINITY, None, 0);
        for g in &self.groups {
            if d.iter().zip(&g.has).all(|(&d, &h)| d == 0.0 || h) {
                pairs += g.size;
                let v = task_price(d, &prices[g.first]);
                if v < best {
                    (best, at) = (v, Some(g.first));
                }
            }
        }
        (best, at, pairs)
    }
}

/// Dual prices that certify a lexicographic max-min on one pooled server
/// (DRF's progressive filling prints none): in round r, price 1 / C_j on
/// every resource j that is saturated (load >= 1 - 1e-9) and demanded by a
/// user frozen in round r. Progressive filling freezes every user that
/// demands a saturated resource, so the users frozen later use none of
/// them and the weak-duality room of [`max_min_certificate`] is the
/// resources' slack: the prices prove the round exactly when it is
/// blocked. Any prices >= 0 are a valid bound; [`max_min_certificate`]
/// still decides.
pub fn pooled_prices(pool: &Instance, x: &[f64], frozen_round: &[usize]) -> Vec<RoundPrices> {
    let m = pool.num_resources();
    let cap: Vec<f64> = (0..m)
        .map(|r| pool.class_capacity(ServerId(0), leontief_core::ResourceId(r)))
        .collect();
    let users = pool.users();
    let mut load = vec![0.0; m];
    for (n, u) in users.iter().enumerate() {
        for r in 0..m {
            load[r] += x[n] * u.demand[r];
        }
    }
    let saturated: Vec<bool> = (0..m)
        .map(|r| cap[r] > 0.0 && load[r] >= cap[r] * (1.0 - 1e-9))
        .collect();
    let last = frozen_round.iter().copied().max().unwrap_or(0);
    (1..=last)
        .filter_map(|round| {
            let members: Vec<usize> = (0..users.len())
                .filter(|&n| frozen_round[n] == round)
                .collect();
            if members.is_empty() {
                return None;
            }
            let row: Vec<f64> = (0..m)
                .map(|r| {
                    let used = members.iter().any(|&n| users[n].demand[r] > 0.0);
                    if saturated[r] && used {
                        1.0 / cap[r]
                    } else {
                        0.0
                    }
                })
                .collect();
            Some(RoundPrices {
                round,
                users: members,
                prices: vec![row],
            })
        })
        .collect()
}

/// Whether a certificate's rounds are the rounds of the shares it is
/// checked in. The weak-duality bound of [`max_min_certificate`] holds the
/// users of round r and before at their tasks and the later ones at the
/// riser's level: that is the max-min condition ("no user can rise without
/// lowering one whose level is no larger") only when every user frozen in
/// round r or before sits at or below the riser's level and every later
/// user at or above it. Without this, any Pareto-optimal allocation with
/// any rounds would pass (a 2-DF allocation "proved" DRFH max-min).
#[derive(Debug, Clone)]
pub struct RoundOrder {
    /// Highest level over the users of rounds 1..=r (index r).
    up_to: Vec<f64>,
    /// Lowest level over the users of rounds r.. (index r).
    from: Vec<f64>,
    /// Who holds those extremes (for the message).
    up_to_user: Vec<usize>,
    from_user: Vec<usize>,
}

impl RoundOrder {
    /// The order of `levels` (per user, in the shares checked) over
    /// `frozen_round` (0: never ran, left out).
    pub fn new(levels: &[f64], frozen_round: &[usize]) -> RoundOrder {
        let last = frozen_round.iter().copied().max().unwrap_or(0);
        let mut high = vec![(f64::NEG_INFINITY, usize::MAX); last + 2];
        let mut low = vec![(f64::INFINITY, usize::MAX); last + 2];
        for (n, &r) in frozen_round.iter().enumerate() {
            if r == 0 {
                continue;
            }
            if levels[n] > high[r].0 {
                high[r] = (levels[n], n);
            }
            if levels[n] < low[r].0 {
                low[r] = (levels[n], n);
            }
        }
        for r in 1..high.len() {
            if high[r - 1].0 > high[r].0 {
                high[r] = high[r - 1];
            }
        }
        for r in (0..low.len() - 1).rev() {
            if low[r + 1].0 < low[r].0 {
                low[r] = low[r + 1];
            }
        }
        RoundOrder {
            up_to: high.iter().map(|h| h.0).collect(),
            up_to_user: high.iter().map(|h| h.1).collect(),
            from: low.iter().map(|l| l.0).collect(),
            from_user: low.iter().map(|l| l.1).collect(),
        }
    }

    /// Why user `n` of round `round` at `level` cannot be proved by its
    /// round's prices (a user of its round or an earlier one sits above
    /// it, or a later one below it, by more than `tolerance` relative),
    /// naming the other user; `None` when the order holds.
    pub fn violation(
        &self,
        instance: &Instance,
        n: usize,
        round: usize,
        level: f64,
        tolerance: f64,
    ) -> Option<String> {
        let name = |k: usize| instance.users()[k].name.as_str();
        let slack = tolerance * level.abs() + 1e-300;
        let r = round.min(self.up_to.len() - 2);
        if self.up_to[r] > level + slack {
            let k = self.up_to_user[r];
            return Some(format!(
                "round {round}: {} (level {level:.6e}) is proved with {} (round of its own or earlier, level {:.6e}) held at its tasks, but in these shares that user sits above it: the rounds are not this mechanism's",
                name(n),
                name(k),
                self.up_to[r]
            ));
        }
        if self.from[r + 1] < level - slack {
            let k = self.from_user[r + 1];
            return Some(format!(
                "round {round}: {} (level {level:.6e}) is proved with {} (a later round, level {:.6e}) held at its level, but in these shares that user sits below it: the rounds are not this mechanism's",
                name(n),
                name(k),
                self.from[r + 1]
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Entries with capacities `caps` (a zero: the resource is absent; the
    /// first resource is on every entry)
    /// and one user.
    fn instance(caps: &[Vec<f64>]) -> Instance {
        let m = caps[0].len();
        let servers: Vec<String> = caps
            .iter()
            .enumerate()
            .map(|(i, c)| format!(r#"{{"name": "s{i}", "capacity": {c:?}}}"#))
            .collect();
        let resources: Vec<String> = (0..m).map(|r| format!(r#""r{r}""#)).collect();
        Instance::from_json_str(&format!(
            r#"{{"resources": [{}], "servers": [{}], "users": [{{"name": "u", "demand": {:?}}}]}}"#,
            resources.join(", "),
            servers.join(", "),
            vec![1.0; m]
        ))
        .unwrap()
    }

    proptest! {
        /// The groups find what a pass over every entry finds: the
        /// cheapest task, the lowest entry attaining it, and the entries
        /// the demand may run on, with prices and resources repeated
        /// across entries.
        #[test]
        fn groups_find_the_cheapest_entry_of_a_pass_over_all(
            m in 1usize..4,
            picks in prop::collection::vec((0usize..3, 0usize..3), 1..12),
            demand in prop::collection::vec(prop::sample::select(vec![0.0, 0.5, 2.0]), 4),
        ) {
            let rows = [[1.0, 0.0, 2.0, 0.5], [0.0, 0.0, 0.0, 0.0], [3.0, 1.0, 0.25, 1.0]];
            let shapes = [[1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]];
            let prices: Vec<Vec<f64>> = picks.iter().map(|&(p, _)| rows[p][..m].to_vec()).collect();
            let caps: Vec<Vec<f64>> = picks.iter().map(|&(_, c)| shapes[c][..m].to_vec()).collect();
            let inst = instance(&caps);
            let d = &demand[..m];
            let (mut best, mut at, mut pairs) = (f64::INFINITY, None, 0);
            for (i, c) in caps.iter().enumerate() {
                if d.iter().zip(c).all(|(&d, &c)| d == 0.0 || c > 0.0) {
                    pairs += 1;
                    let v = task_price(d, &prices[i]);
                    if v < best {
                        (best, at) = (v, Some(i));
                    }
                }
            }
            let got = Alike::new(&inst, &prices).cheapest(d, &prices);
            prop_assert_eq!(got, (best, at, pairs));
        }
    }
}
