//! proptest strategies for instances (feature `proptest`).
//!
//! Small instances that exercise every legal edge case: zero demands on
//! some resources, resources nobody demands, servers lacking a resource,
//! server classes (`count`), weights, task caps and placement lists.

use crate::instance::{Instance, RawInstance, RawQueue, RawServer, RawUser};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// The project's proptest configuration: `cases` cases and a fixed seed,
/// unless PROPTEST_CASES / PROPTEST_RNG_SEED say otherwise. Failures are
/// kept in the test file's `.proptest-regressions` and replayed first.
pub fn config(cases: u32) -> ProptestConfig {
    let mut c = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = cases;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        c.rng_seed = RngSeed::Fixed(20_261_122);
    }
    c
}

/// What the generated instances may contain.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Most users.
    pub max_users: usize,
    /// Most server entries.
    pub max_servers: usize,
    /// Most resources.
    pub max_resources: usize,
    /// Draw weights other than 1.
    pub weights: bool,
    /// Draw task caps.
    pub caps: bool,
    /// Draw placement lists.
    pub placement: bool,
    /// Every server entry gets the same capacity vector (and count 1).
    pub identical_servers: bool,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            max_users: 5,
            max_servers: 3,
            max_resources: 3,
            weights: true,
            caps: true,
            placement: true,
            identical_servers: false,
        }
    }
}

impl Shape {
    /// At most 4 users, 3 server entries, 3 resources, every feature on:
    /// what the property tests that solve every mechanism per case use.
    pub fn small() -> Shape {
        Shape {
            max_users: 4,
            ..Shape::default()
        }
    }
}

/// A value that is 0 with probability about 1/4, else in [lo, hi].
fn maybe_zero(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    prop_oneof![1 => Just(0.0), 3 => lo..hi]
}

/// A vector of `m` numbers, not all zero (the first nonzero entry is forced
/// where all came out zero).
fn nonzero_vec(m: usize, lo: f64, hi: f64) -> impl Strategy<Value = Vec<f64>> {
    (
        proptest::collection::vec(maybe_zero(lo, hi), m),
        0..m,
        lo..hi,
    )
        .prop_map(|(mut v, j, x)| {
            if v.iter().all(|&a| a == 0.0) {
                v[j] = x;
            }
            v
        })
}

/// Instances of the given shape.
pub fn instance(shape: Shape) -> impl Strategy<Value = Instance> {
    (
        1..=shape.max_resources,
        1..=shape.max_servers,
        1..=shape.max_users,
    )
        .prop_flat_map(move |(m, k, n)| {
            let servers = proptest::collection::vec((nonzero_vec(m, 1.0, 10.0), 1u64..=3), k);
            let users = proptest::collection::vec(
                (
                    nonzero_vec(m, 0.1, 2.0),
                    prop_oneof![2 => Just(1.0), 1 => 0.25f64..4.0],
                    prop_oneof![3 => Just(None), 1 => (0.5f64..20.0).prop_map(Some)],
                    proptest::collection::vec(any::<bool>(), k),
                ),
                n,
            );
            (Just(m), servers, users)
        })
        .prop_map(move |(m, servers, users)| {
            let first = servers[0].0.clone();
            let raw = RawInstance {
                queues: None,
                quantum: None,
                name: None,
                description: None,
                resources: (0..m).map(|r| format!("r{r}")).collect(),
                servers: servers
                    .into_iter()
                    .enumerate()
                    .map(|(i, (cap, count))| RawServer {
                        name: format!("s{i}"),
                        capacity: if shape.identical_servers {
                            first.clone()
                        } else {
                            cap
                        },
                        count: (!shape.identical_servers && count > 1).then_some(count),
                    })
                    .collect(),
                users: users
                    .into_iter()
                    .enumerate()
                    .map(|(n, (demand, w, cap, elig))| {
                        let list: Vec<String> = elig
                            .iter()
                            .enumerate()
                            .filter(|(_, &e)| e)
                            .map(|(i, _)| format!("s{i}"))
                            .collect();
                        RawUser {
                            queue: None,
                            name: format!("u{n}"),
                            demand,
                            weight: shape.weights.then_some(w).filter(|&w| w != 1.0),
                            tasks: if shape.caps { cap } else { None },
                            servers: (shape.placement
                                && !list.is_empty()
                                && list.len() < elig.len())
                            .then_some(list),
                            rank_weights: None,
                        }
                    })
                    .collect(),
            };
            Instance::new(raw).expect("strategies generate valid instances")
        })
}

/// A queue tree over `base`'s users: `parents[q]` < q picks each queue's
/// parent (or the root), `home[u]` each user's queue (or the root),
/// weights, and per-queue guarantee / limit fractions of the cluster.
#[allow(clippy::type_complexity)]
pub fn with_tree(
    base: &Instance,
    parents: &[usize],
    weights: &[f64],
    home: &[usize],
    bounds: &[(Option<f64>, Option<f64>)],
) -> Instance {
    let mut raw = base.to_raw();
    let total = base.total_capacity();
    let nq = parents.len();
    let mut queues: Vec<RawQueue> = (0..nq)
        .map(|q| RawQueue {
            name: format!("q{q}"),
            parent: (q > 0 && parents[q] % (q + 1) < q)
                .then(|| format!("q{}", parents[q] % (q + 1))),
            weight: Some(weights[q]),
            guarantee: None,
            limit: None,
            lending_limit: None,
        })
        .collect();
    // Guarantees only on the root's children, at most 1/(2 nq) of the
    // cluster each (their sum stays under the capacity).
    for (q, (g, l)) in bounds.iter().enumerate().take(nq) {
        if let (Some(g), None) = (g, &queues[q].parent) {
            let guarantee: Vec<f64> = total.iter().map(|c| c * g / (2.0 * nq as f64)).collect();
            // Every other guaranteed queue lends only half of it.
            if q % 2 == 0 {
                queues[q].lending_limit = Some(guarantee.iter().map(|x| x / 2.0).collect());
            }
            queues[q].guarantee = Some(guarantee);
        }
        if let Some(l) = l {
            let floor = queues[q].guarantee.clone();
            queues[q].limit = Some(
                total
                    .iter()
                    .enumerate()
                    .map(|(r, c)| (c * l).max(floor.as_ref().map_or(0.0, |g| g[r])))
                    .collect(),
            );
        }
    }
    for (u, user) in raw.users.iter_mut().enumerate() {
        let h = home[u % home.len()] % (nq + 1);
        user.queue = (h < nq).then(|| format!("q{h}"));
    }
    raw.queues = Some(queues);
    Instance::new(raw).expect("a valid tree")
}

/// An instance of `shape` under a generated queue tree (up to 4 queues at
/// any depth, weights, guarantees on the root's children, limits; users at
/// any queue or the root), as [`with_tree`] builds it.
pub fn tree_instance(shape: Shape) -> impl Strategy<Value = Instance> {
    (
        instance(shape),
        proptest::collection::vec(0usize..8, 1..5),
        proptest::collection::vec(prop_oneof![2 => Just(1.0), 1 => 0.25f64..4.0], 5),
        proptest::collection::vec(0usize..8, 1..6),
        proptest::collection::vec(
            (
                prop_oneof![2 => Just(None), 1 => (0.2f64..1.0).prop_map(Some)],
                prop_oneof![2 => Just(None), 1 => (0.1f64..0.8).prop_map(Some)],
            ),
            5,
        ),
    )
        .prop_map(|(inst, parents, weights, home, bounds)| {
            with_tree(&inst, &parents, &weights, &home, &bounds)
        })
}
