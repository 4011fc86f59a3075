//! DRFH: model build and HiGHS solve, timed separately, for users n in
//! {10, 100, 1000} and servers k in {100, 1000, 10000}, on the Google cell
//! (10 classes whatever k) and on k heterogeneous servers. The largest
//! heterogeneous sizes (n * k > 10^5) take seconds to minutes per solve
//! and are measured once by `cargo run --release -p leontief-benches --bin
//! scale` instead (criterion needs at least 10 samples). `maxmin_scale`:
//! the datacenter-scale path of issue 19 end to end, with verification.
//! `maxmin_shapes`: DRFH, k-DF and TSF end to end on every shape of
//! `leontief generate shaped` (issue 47).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use leontief_benches::{instance, Family};
use leontief_drfh::maxmin::{build, lex_max_min, MaxMinSettings};
use leontief_drfh::{dominant_sigma, drfh};
use leontief_highs::Highs;
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let highs = Highs::default();
    let settings = MaxMinSettings::default();
    let mut g = c.benchmark_group("drfh");
    g.sample_size(10);
    for &(family, name) in &[
        (Family::GoogleCell, "google"),
        (Family::Heterogeneous, "hetero"),
    ] {
        for &n in &[10usize, 100, 1000] {
            for &k in &[100usize, 1000, 10000] {
                if family == Family::GoogleCell && k != 100 {
                    continue; // the cell is 10 classes whatever k
                }
                if family == Family::Heterogeneous && n * k > 100_000 {
                    continue; // measured once by the scale runner
                }
                let inst = instance(family, n, k);
                let sigma = dominant_sigma(&inst);
                let id = format!("{name}/n{n}/k{k}");
                g.bench_function(BenchmarkId::new("build", &id), |b| {
                    b.iter(|| black_box(build(&inst, &sigma, true, None)))
                });
                g.bench_function(BenchmarkId::new("solve", &id), |b| {
                    b.iter(|| {
                        black_box(lex_max_min(&highs, &inst, &sigma, true, &settings).unwrap())
                    })
                });
                if family == Family::GoogleCell && n == 1000 {
                    g.bench_function(BenchmarkId::new("end_to_end", &id), |b| {
                        b.iter(|| black_box(drfh(&highs, &inst, &settings).unwrap()))
                    });
                }
            }
        }
    }
    g.finish();
}

/// Issue 19: end to end as `leontief solve` runs it (normalise, the
/// large-scale path, certificate check), where ten samples fit: the
/// Google cell with 1,000 users (seeds 1-3), 100 x
/// 1,000 heterogeneous with 2, 3 and 4 resources, the two hardest
/// seeds with 4, the group path at 300 x 3,000 and 1,000 x 10,000, and
/// placement lists of 10 at 300 x 3,000 and at 1,000 x 10,000 with 4
/// resources (the other shapes there, and the larger sizes: the
/// `maxmin_scale` runner).
fn datacenter(c: &mut Criterion) {
    use leontief::{Mechanism, Options};
    let mut g = c.benchmark_group("maxmin_scale");
    g.sample_size(10);
    let o = Options::default();
    // The Google cell with 1,000 users (the pattern master), three seeds.
    for seed in 1..=3u64 {
        let inst = leontief_core::generate::google_cell(1000, seed);
        g.bench_function(
            BenchmarkId::new("drfh_verified", format!("google/n1000/seed{seed}")),
            |b| b.iter(|| black_box(leontief::solve(&inst, &Mechanism::Drfh, &o).unwrap())),
        );
    }
    for m in [2usize, 3, 4] {
        let inst = leontief_core::generate::heterogeneous(100, 1000, m, 1);
        g.bench_function(
            BenchmarkId::new("drfh_verified", format!("hetero/n100/k1000/m{m}")),
            |b| b.iter(|| black_box(leontief::solve(&inst, &Mechanism::Drfh, &o).unwrap())),
        );
    }
    // The hardest seeds with 4 resources: the pooled levels out of reach
    // (seed 2), one pricing pass (seed 5).
    for seed in [2u64, 5] {
        let inst = leontief_core::generate::heterogeneous(100, 1000, 4, seed);
        g.bench_function(
            BenchmarkId::new("drfh_verified", format!("hetero/n100/k1000/m4/seed{seed}")),
            |b| b.iter(|| black_box(leontief::solve(&inst, &Mechanism::Drfh, &o).unwrap())),
        );
    }
    // The group path ([`leontief_drfh`]'s `groups`): 300 x 3,000 (4 groups
    // of 750 entries) with 2-4 resources, 1,000 x 10,000 (14 groups) with
    // 2 resources.
    for (n, k, m) in [
        (300usize, 3000usize, 2usize),
        (300, 3000, 3),
        (300, 3000, 4),
        (1000, 10000, 2),
    ] {
        let inst = leontief_core::generate::heterogeneous(n, k, m, 1);
        g.bench_function(
            BenchmarkId::new("drfh_verified", format!("hetero/n{n}/k{k}/m{m}")),
            |b| b.iter(|| black_box(leontief::solve(&inst, &Mechanism::Drfh, &o).unwrap())),
        );
    }
    // Sparse placement lists (10 eligible each): closed entries and live
    // parts, every LP made exact; 1,000 x 10,000 with 4 resources, the
    // slowest shape there (about 8 s a sample).
    for (n, k, m) in [
        (300usize, 3000usize, 2usize),
        (300, 3000, 4),
        (1000, 10000, 4),
    ] {
        let inst = leontief_core::generate::placement(n, k, m, 10, 1);
        g.bench_function(
            BenchmarkId::new("drfh_verified", format!("placement/n{n}/k{k}/e10/m{m}")),
            |b| b.iter(|| black_box(leontief::solve(&inst, &Mechanism::Drfh, &o).unwrap())),
        );
    }
    g.finish();
}

/// The shapes of `leontief generate shaped` (the grid of
/// `benches/run_shapes.sh`).
const SHAPES: [&str; 8] = [
    "capacity=uniform:0.1,demand=lognormal",
    "capacity=pools:8",
    "capacity=google",
    "demand=bimodal",
    "demand=few-huge",
    "gpu=0.2",
    "placement=attribute:4",
    "weights,caps=0.5",
];

/// Issue 47: DRFH, k-DF (k = 2) and TSF end to end with verification on
/// every shape, 2, 3, 4 and 6 resources, seeds 1-3, at 300 x 3,000, where
/// ten samples fit; the sizes of 10^7 and 10^8 pairs are the one-shot
/// runner's (`benches/run_shapes.sh`).
fn shapes(c: &mut Criterion) {
    use leontief::{Mechanism, Options};
    use std::time::Duration;
    let mut g = c.benchmark_group("maxmin_shapes");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    let o = Options::default();
    let mechanisms = [
        ("drfh", Mechanism::Drfh),
        ("kdf2", Mechanism::Kdf { k: 2 }),
        ("tsf", Mechanism::Tsf),
    ];
    for m in [2usize, 3, 4, 6] {
        for shape in SHAPES {
            for seed in 1..=3u64 {
                let inst = leontief::generated_shaped(300, 3000, m, seed, shape)
                    .expect("every shape of the grid is valid");
                for (name, mech) in &mechanisms {
                    let id = format!("{name}/{shape}/n300/k3000/m{m}/seed{seed}");
                    g.bench_function(BenchmarkId::new("verified", id), |b| {
                        b.iter(|| black_box(leontief::solve(&inst, mech, &o).unwrap()))
                    });
                }
            }
        }
    }
    g.finish();
}

criterion_group!(benches, bench, datacenter, shapes);
criterion_main!(benches);
