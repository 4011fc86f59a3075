//! BBF (003): Table 1 (100 samples per m, N = 5m), enumerate-bbf at m = 12
//! (m = 16 is one-shot in the `bbf_scale` runner: ~10 s per run), the
//! Eisenberg-Gale allocation at N = 10,000 (dual Newton; m = 20 and 100)
//! and on Clarabel (N = 1,000, m = 20), and the ODE trajectory at
//! N = 10,000, m = 20.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use leontief_bbf::{eg, enumerate, ode, Pool};
use leontief_clarabel::Clarabel;
use leontief_highs::{Algorithm, Highs, HighsSettings};
use std::hint::black_box;

fn subset_highs() -> Highs {
    Highs::new(HighsSettings {
        presolve: false,
        algorithm: Algorithm::Simplex,
        ..HighsSettings::default()
    })
    .unwrap()
}

fn no_dimension() -> enumerate::Options {
    enumerate::Options {
        dimension: false,
        ..Default::default()
    }
}

fn bench(c: &mut Criterion) {
    let highs = subset_highs();
    let mut g = c.benchmark_group("bbf");
    g.sample_size(10);
    for m in 4..=9usize {
        // One iteration = the 100 samples of one row of Table 1.
        let pools: Vec<Pool> = (0..100)
            .map(|s| Pool::random(5 * m, m, ((m as u64) << 32) ^ s))
            .collect();
        g.bench_function(BenchmarkId::new("table1", format!("m{m}")), |b| {
            b.iter(|| {
                for p in &pools {
                    black_box(enumerate::enumerate(&highs, p, no_dimension(), &|| {}).unwrap());
                }
            })
        });
    }
    let p12 = Pool::random(60, 12, 12);
    g.bench_function("enumerate/m12_n60", |b| {
        b.iter(|| black_box(enumerate::enumerate(&highs, &p12, no_dimension(), &|| {}).unwrap()))
    });
    g.bench_function("enumerate_with_dimension/m12_n60", |b| {
        b.iter(|| {
            black_box(
                enumerate::enumerate(&highs, &p12, enumerate::Options::default(), &|| {}).unwrap(),
            )
        })
    });
    for m in [20usize, 100] {
        let p = Pool::random(10_000, m, 7);
        g.bench_function(BenchmarkId::new("eg_dual", format!("n10000_m{m}")), |b| {
            b.iter(|| black_box(eg::solve_dual(&p).unwrap()))
        });
    }
    let p = Pool::random(1_000, 20, 7);
    g.bench_function("eg_conic/n1000_m20", |b| {
        b.iter(|| black_box(eg::solve(&Clarabel::default(), &p).unwrap()))
    });
    let p = Pool::random(10_000, 20, 7);
    g.bench_function("ode_logc/n10000_m20", |b| {
        b.iter(|| black_box(ode::trajectory(&p, &ode::OdeSettings::default()).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
