//! Server-based mechanisms (004): PS-DSF on generated placement instances
//! (`generate::placement`: 3 resources, weights in [1, 4], ELIGIBLE random
//! servers per user), with the exact forest finish (the default), by
//! Gauss-Seidel sweeps alone at 200 x 200, and the issue-5 target size
//! 1,000 users x 1,000 servers with the finish. The one-shot `vds_scale`
//! runner covers the plain sweeps at the sizes too slow for repeated
//! samples (1,000 x 100: ~15 s, 1,000 x 1,000: minutes).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use leontief_core::generate;
use leontief_vds::{psdsf_with, PsdsfSettings};
use std::hint::black_box;

fn settings(exact_finish: bool) -> PsdsfSettings {
    PsdsfSettings {
        exact_finish,
        ..PsdsfSettings::default()
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("psdsf");
    g.sample_size(10);
    let small = generate::placement(200, 200, 3, 20, 1);
    for (name, finish) in [("finish", true), ("sweeps", false)] {
        g.bench_function(BenchmarkId::new(name, "200x200_e20"), |b| {
            b.iter(|| black_box(psdsf_with(&small, &settings(finish))))
        });
    }
    for (n, k, e) in [(1000, 100, 10), (200, 200, 50)] {
        let inst = generate::placement(n, k, 3, e, 1);
        g.bench_function(BenchmarkId::new("finish", format!("{n}x{k}_e{e}")), |b| {
            b.iter(|| black_box(psdsf_with(&inst, &settings(true))))
        });
    }
    for e in [20, 50] {
        let inst = generate::placement(1000, 1000, 3, e, 1);
        g.bench_function(BenchmarkId::new("finish", format!("1000x1000_e{e}")), |b| {
            b.iter(|| black_box(psdsf_with(&inst, &settings(true))))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
