//! The pooled levels realised group by group (`Columns::Grouped`, what
//! `Auto` runs with many users on many entries) against the flat LP: the
//! same levels and rounds, and a certificate that `leontief-audit`'s
//! one-pass check accepts and that refuses a perturbed allocation or a
//! perturbed price.
//!
//! 256 cases per property (PROPTEST_CASES for more), fixed seed; failures
//! are kept in `tests/groups.proptest-regressions`.

mod support;

use leontief_core::{generate, Instance, Status};
use leontief_drfh::maxmin::Columns;
use leontief_drfh::{dominant_sigma, kdf_sigma};
use proptest::prelude::*;
use support::{certifies, close, run, user_tasks};

/// The feature each case draws on top of the heterogeneous servers.
#[derive(Debug, Clone, Copy)]
enum Feature {
    Plain,
    Weights,
    Caps,
    ZeroDemands,
    UnusedResource,
    ListedTwice,
    Ties,
    /// The last resource (a GPU) on a third of the entries and users
    /// only: two kinds of entries, each dealt into groups of its own.
    Gpu,
}

fn shape(n: usize, k: usize, m: usize, seed: u64, feature: Feature) -> Instance {
    let mut raw = generate::heterogeneous(n, k, m, seed).to_raw();
    match feature {
        Feature::Plain => {}
        Feature::Weights => {
            for (j, u) in raw.users.iter_mut().enumerate() {
                u.weight = Some([1.0, 3.0, 0.25, 10.0][j % 4]);
            }
        }
        Feature::Caps => {
            // A few users capped low: they freeze at their caps first.
            for (j, u) in raw.users.iter_mut().enumerate() {
                if j % 5 == 0 {
                    u.tasks = Some(0.05 / u.demand.iter().copied().fold(0.0, f64::max));
                }
            }
        }
        Feature::ZeroDemands => {
            for (j, u) in raw.users.iter_mut().enumerate() {
                if j % 3 == 0 {
                    u.demand[j % m] = 0.0;
                }
            }
        }
        Feature::UnusedResource => {
            for u in &mut raw.users {
                u.demand[m - 1] = 0.0;
            }
        }
        Feature::ListedTwice => {
            // Every other entry listed again under another name: identical
            // entries, merged before solving.
            let extra: Vec<_> = raw
                .servers
                .iter()
                .step_by(2)
                .map(|s| leontief_core::RawServer {
                    name: format!("{}-again", s.name),
                    ..s.clone()
                })
                .collect();
            raw.servers.extend(extra);
        }
        Feature::Ties => {
            // Users in pairs with the same demand.
            for j in (1..raw.users.len()).step_by(2) {
                let d = raw.users[j - 1].demand.clone();
                raw.users[j].demand = d;
            }
        }
        Feature::Gpu => {
            for (j, s) in raw.servers.iter_mut().enumerate() {
                if j % 3 != 0 {
                    s.capacity[m - 1] = 0.0;
                }
            }
            for (j, u) in raw.users.iter_mut().enumerate() {
                if j % 3 != 1 {
                    u.demand[m - 1] = 0.0;
                }
            }
        }
    }
    Instance::new(raw).expect("valid")
}

fn feature() -> impl Strategy<Value = Feature> {
    prop_oneof![
        Just(Feature::Plain),
        Just(Feature::Weights),
        Just(Feature::Caps),
        Just(Feature::ZeroDemands),
        Just(Feature::UnusedResource),
        Just(Feature::ListedTwice),
        Just(Feature::Ties),
        Just(Feature::Gpu),
    ]
}

proptest! {
    #![proptest_config(leontief_core::strategies::config(256))]

    /// Groups of 3 to 8 entries on 12 to 40 heterogeneous entries, 8 to 40
    /// users, 2 to 6 resources (with 5 and 6 and more entries than twice
    /// the users, step 1 on roomy groups and the pure users on every
    /// group), with weights, caps, zero demands, a
    /// resource nobody demands, identical entries listed separately, ties
    /// or a GPU on a third of the entries; DRFH and 2-DF shares.
    #[test]
    fn group_path_matches_the_flat_lp_and_certifies(
        n in 8usize..40,
        k in 12usize..40,
        m in 2usize..7,
        seed in 1u64..10_000,
        entries in 3usize..9,
        feature in feature(),
        kdf in any::<bool>(),
    ) {
        let inst = shape(n, k, m, seed, feature);
        let sigma = if kdf { kdf_sigma(&inst, 2) } else { dominant_sigma(&inst) };
        let flat = run(&inst, &sigma, Columns::All);
        let grouped = run(&inst, &sigma, Columns::Grouped(entries));
        prop_assert_eq!(flat.status, Status::Optimal);
        prop_assert_eq!(grouped.status, Status::Optimal);
        // A case whose groups fall short runs the one LP: the same
        // assertions cover it (how often the groups succeed: below).
        if grouped.path.groups().is_some() {
            prop_assert!(grouped.path.is_pooled());
        }
        for u in 0..inst.num_users() {
            prop_assert!(
                close(flat.levels[u], grouped.levels[u], 1e-6),
                "user {}: flat {} grouped {} (groups {:?})",
                u, flat.levels[u], grouped.levels[u], grouped.path.groups()
            );
        }
        prop_assert_eq!(&flat.frozen_round, &grouped.frozen_round);
        let x = user_tasks(&grouped);
        prop_assert!(certifies(&inst, &sigma, &grouped, &x), "groups {:?}", grouped.path.groups());
        // A certified user 1% short, or one entry's prices doubled: refused.
        if let Some(c) = grouped.certificates.first() {
            let u = c.users[0];
            let mut y = x.clone();
            y[u] *= 0.99;
            prop_assert!(!certifies(&inst, &sigma, &grouped, &y));
            let mut bad = grouped.clone();
            let first = &mut bad.certificates[0];
            if let Some(e) = first.prices.iter().position(|&p| p > 0.0) {
                let i = e / m;
                for p in &mut first.prices[i * m..(i + 1) * m] {
                    *p *= 2.0;
                }
                prop_assert!(!certifies(&inst, &sigma, &bad, &x));
            }
        }
    }
}

/// The property above is not vacuous: on its shapes (every feature,
/// groups of 6 entries) and on larger heterogeneous instances the group
/// path, not the fallback, realises most runs whose pooled levels are
/// within reach.
#[test]
fn group_path_is_taken() {
    let features = [
        Feature::Plain,
        Feature::Weights,
        Feature::Caps,
        Feature::ZeroDemands,
        Feature::UnusedResource,
        Feature::ListedTwice,
        Feature::Ties,
        Feature::Gpu,
    ];
    let mut cases: Vec<(Instance, usize, String)> = Vec::new();
    for (j, &f) in features.iter().enumerate() {
        for seed in 1..=3u64 {
            let m = 2 + (j + seed as usize) % 3;
            cases.push((
                shape(30, 36, m, seed, f),
                6,
                format!("{f:?}, seed {seed}, {m} resources"),
            ));
        }
    }
    for seed in 1..=2u64 {
        for m in 2..=4 {
            let inst = generate::heterogeneous(80, 120, m, seed);
            cases.push((inst, 20, format!("80 x 120, seed {seed}, {m} resources")));
            let gpu = generate::Family::new(80, 120, m, seed)
                .from_spec("gpu=0.2")
                .expect("a shape");
            cases.push((
                generate::family(&gpu),
                20,
                format!("80 x 120, GPUs on a fifth, seed {seed}, {m} resources"),
            ));
        }
    }
    let (mut taken, mut reachable) = (0, 0);
    // Of them, the cases with two kinds of entries (a GPU on some).
    let (mut gpu_taken, mut gpu_reachable) = (0, 0);
    for (inst, entries, what) in &cases {
        let sigma = dominant_sigma(inst);
        let grouped = run(inst, &sigma, Columns::Grouped(*entries));
        let flat = run(inst, &sigma, Columns::All);
        assert_eq!(grouped.status, Status::Optimal, "{what}");
        // The groups can realise the pooled levels only where the one LP
        // does (with 4 resources on 36 entries they are often out of reach).
        let one = run(inst, &sigma, Columns::Generated);
        reachable += usize::from(one.path.is_pooled());
        let kinds = inst.servers().iter().any(|s| s.capacity.contains(&0.0));
        gpu_reachable += usize::from(kinds && one.path.is_pooled());
        if grouped.path.groups().is_some() {
            assert!(one.path.is_pooled(), "{what}");
            taken += 1;
            gpu_taken += usize::from(kinds);
            // Fewer pairs than the instance has: the answer is sparse.
            let pairs = inst.num_users() * inst.num_entries();
            assert!(grouped.columns < pairs, "{what}");
        }
        for u in 0..inst.num_users() {
            assert!(
                close(flat.levels[u], grouped.levels[u], 1e-6),
                "{what}: user {u}"
            );
        }
        assert!(
            certifies(inst, &sigma, &grouped, &user_tasks(&grouped)),
            "{what}"
        );
    }
    assert!(
        reachable >= cases.len() / 2 && taken * 4 >= reachable * 3,
        "the group path realised {taken} of the {reachable} runs whose pooled levels are reachable ({} runs)",
        cases.len()
    );
    assert!(
        gpu_reachable >= 3 && gpu_taken * 4 >= gpu_reachable * 3,
        "with a GPU on some entries, the group path realised {gpu_taken} of {gpu_reachable}"
    );
}

/// k-DF (k = 2) with a GPU on a fifth of the entries: one pool would
/// hand the GPU users the first resource of the entries without a GPU
/// (their shares weigh the GPU little, so their pooled levels are high)
/// and, with 2 resources at 200 x 600, seed 2, those levels are out of
/// reach; the pools by kind bound them tightly enough to be realised.
/// The same levels as the flat LP, and a certificate the audit accepts.
#[test]
fn kdf_with_a_gpu_on_some_entries_is_bounded_by_kind_and_realised() {
    for seed in 1..=3u64 {
        let family = generate::Family::new(200, 600, 2, seed)
            .from_spec("gpu=0.2")
            .expect("a shape");
        let inst = generate::family(&family);
        let sigma = kdf_sigma(&inst, 2);
        let what = format!("200 x 600, GPUs on a fifth, seed {seed}");
        let flat = run(&inst, &sigma, Columns::All);
        let o = run(&inst, &sigma, Columns::Generated);
        assert_eq!(o.status, Status::Optimal, "{what}");
        assert!(o.path.is_pooled(), "{what}: {:?}", o.path);
        for u in 0..inst.num_users() {
            assert!(close(flat.levels[u], o.levels[u], 1e-6), "{what}: user {u}");
        }
        assert!(certifies(&inst, &sigma, &o, &user_tasks(&o)), "{what}");
    }
}

/// Past Clarabel's users (1,600 users on 10 groups of 40 entries,
/// weights and caps on half of them, k-DF): step 1's level columns are
/// bounded at the levels asked. The group path realises the pooled
/// levels, the same as the one LP's, with a certificate the audit
/// accepts.
#[test]
fn many_users_with_weights_and_caps_are_realised_by_the_groups() {
    let family = generate::Family::new(1_600, 400, 3, 1)
        .from_spec("weights,caps=0.5")
        .expect("a shape");
    let inst = generate::family(&family);
    let sigma = kdf_sigma(&inst, 2);
    let one = run(&inst, &sigma, Columns::Generated);
    let grouped = run(&inst, &sigma, Columns::Grouped(40));
    assert_eq!(one.status, Status::Optimal);
    assert_eq!(grouped.status, Status::Optimal);
    assert!(grouped.path.groups().is_some(), "{:?}", grouped.path);
    for u in 0..inst.num_users() {
        assert!(close(one.levels[u], grouped.levels[u], 1e-6), "user {u}");
    }
    assert!(certifies(&inst, &sigma, &grouped, &user_tasks(&grouped)));
}
