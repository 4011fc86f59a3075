//! Server-based mechanisms (004): PS-DSF on generated placement instances
//! (`generate::placement`: 3 resources unless the id ends `_rR`, weights in
//! [1, 4], ELIGIBLE random servers per user), with the exact forest finish
//! on over-relaxed sweeps (the default), by plain Gauss-Seidel sweeps
//! alone at 200 x 200 (`--select sweeps`), and the target size 1,000 users
//! x 1,000 servers with the finish for 2, 3 and 4 resources (issue 18).
//! alphaPF-VDS at alpha = 3 (Gauss-Seidel with the interior-point finish,
//! the default) at the target size of issue 18, 1,000 x 100 with 10
//! eligible each, for 2, 3 and 4 resources (`vds/alpha3/...`).
//! The one-shot `vds_scale` runner covers the plain sweeps at the sizes
//! too slow for repeated samples (1,000 x 100: ~15 s, 1,000 x 1,000:
//! minutes).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use leontief_core::generate;
use leontief_vds::{psdsf_with, vds, PsdsfSettings, VdsSettings};
use std::hint::black_box;

fn settings(exact_finish: bool) -> PsdsfSettings {
    PsdsfSettings {
        exact_finish,
        // As `leontief solve` runs them: `--select sweeps` is plain.
        over_relax: exact_finish,
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
        for r in [2, 3, 4] {
            let inst = generate::placement(1000, 1000, r, e, 1);
            let id = if r == 3 {
                format!("1000x1000_e{e}")
            } else {
                format!("1000x1000_e{e}_r{r}")
            };
            g.bench_function(BenchmarkId::new("finish", id), |b| {
                b.iter(|| black_box(psdsf_with(&inst, &settings(true))))
            });
        }
    }
    g.finish();
    let mut g = c.benchmark_group("vds");
    g.sample_size(10);
    for r in [2, 3, 4] {
        let inst = generate::placement(1000, 100, r, 10, 1);
        let settings = VdsSettings {
            alpha: 3.0,
            ..VdsSettings::default()
        };
        g.bench_function(
            BenchmarkId::new("alpha3", format!("1000x100_e10_r{r}")),
            |b| b.iter(|| black_box(vds(&inst, &settings))),
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
