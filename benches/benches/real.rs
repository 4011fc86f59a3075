//! The Alibaba GPU cluster trace (`LEONTIEF_DATA`, default ../shared/data;
//! under CI=true a missing folder fails the bench): each task list
//! imported as `leontief import alibaba-gpu` does (1,523 nodes listed one
//! by one, placement by GPU model, users capped at their task counts) and
//! solved through `leontief::solve` with verification, as the CLI runs it:
//! `real/MECHANISM/LIST`. The one-shot runner `benches/real_clusters.py`
//! adds the uncapped and merged shapes and highspy's interior point.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use leontief::import::{alibaba_gpu, AlibabaOptions};
use leontief::{Instance, Mechanism, Options, VdsSchedule};
use std::hint::black_box;
use std::path::PathBuf;

fn trace() -> Option<PathBuf> {
    let dir = std::env::var_os("LEONTIEF_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data")))
        .join("alibaba-gpu-v2023");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing (set LEONTIEF_DATA)",
        dir.display()
    );
    eprintln!("skipped: {} is missing (LEONTIEF_DATA)", dir.display());
    None
}

fn bench(c: &mut Criterion) {
    let Some(dir) = trace() else { return };
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    let nodes = read("openb_node_list_all_node.csv");
    let mut g = c.benchmark_group("real");
    g.sample_size(10);
    for list in ["default", "gpuspec20", "multigpu20", "gpushare40"] {
        let pods = read(&format!("openb_pod_list_{list}.csv"));
        let imp = alibaba_gpu(
            nodes.as_bytes(),
            "nodes",
            pods.as_bytes(),
            "pods",
            &AlibabaOptions::default(),
        )
        .unwrap();
        let instance = Instance::new(imp.instance).unwrap();
        for (name, m) in [
            ("drfh", Mechanism::Drfh),
            ("nfc", Mechanism::Nfc),
            (
                "vds_alpha2",
                Mechanism::Vds {
                    alpha: 2.0,
                    schedule: VdsSchedule::GaussSeidel,
                },
            ),
        ] {
            g.bench_function(BenchmarkId::new(name, list), |b| {
                b.iter(|| black_box(leontief::solve(&instance, &m, &Options::default()).unwrap()))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
