//! Whole-task heuristics and the simulator at criterion-friendly sizes:
//! static Best-Fit / First-Fit / Slots on the Google cell (12,583 servers)
//! with 100 users and about 10^5 tasks, and a simulated day on 2,000
//! servers with 10^5 task events, and the exact DRFH mode on the trace
//! config (issue 19: 0.5 ms per event). The issue-6 targets (10^6 tasks, 10^6
//! events) run once with `sim_scale` (benches/REPORT.md).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use leontief_benches::{day_workload, scaled_cell};
use leontief_highs::Highs;
use leontief_sim::sim::{simulate, Cluster, Scheduler, SimSettings};
use leontief_sim::{run, Heuristic};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("heuristics");
    g.sample_size(10);
    let inst = scaled_cell(100, 1e5);
    for (name, h) in [
        ("best-fit", Heuristic::BestFit { normaliser: 0 }),
        ("first-fit", Heuristic::FirstFit),
        ("slots14", Heuristic::Slots { slots: 14 }),
    ] {
        g.bench_function(BenchmarkId::new(name, "google/n100/tasks1e5"), |b| {
            b.iter(|| black_box(run(&inst, &h).unwrap()))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("simulate");
    g.sample_size(10);
    let cluster = Cluster::google_sample(2000, 1);
    let w = day_workload(&cluster, 1e5);
    for s in [
        Scheduler::BestFit { normaliser: 0 },
        Scheduler::FirstFit,
        Scheduler::Slots { slots: 14 },
    ] {
        let settings = SimSettings {
            scheduler: s,
            horizon: None,
            sample_interval: Some(60.0),
        };
        g.bench_function(BenchmarkId::new(s.name(), "k2000/events1e5"), |b| {
            b.iter(|| {
                black_box(simulate(&Highs::default(), &cluster, &w, &settings, &|_| {}).unwrap())
            })
        });
    }
    // Issue 19's target: the exact DRFH mode on the trace config (2,763
    // events; the time per event is this over 2,763), without its
    // dedicated clouds (they run beside it on the other core).
    let config =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../datasets/simulations/trace.json");
    let overrides = leontief::simulate::Overrides {
        scheduler: Some("drfh".into()),
        ..Default::default()
    };
    let trace = leontief::simulate::load_config(&config, &overrides).unwrap();
    g.bench_function(BenchmarkId::new("drfh", "trace/events2763"), |b| {
        b.iter(|| {
            black_box(
                simulate(
                    &Highs::default(),
                    &trace.cluster,
                    &trace.workload,
                    &trace.settings,
                    &|_| {},
                )
                .unwrap(),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
