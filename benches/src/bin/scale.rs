//! One-shot DRFH measurements at sizes too large for criterion's 10
//! samples: build time, HiGHS time, rounds, and memory.
//!
//! `cargo run --release -p leontief-benches --bin scale -- [FAMILY N K]...`
//! with FAMILY `google` or `hetero`; no arguments runs the default grid.
//! Prints one markdown table row per size. `LEONTIEF_ALGORITHM=simplex|ipm|choose`
//! picks the HiGHS algorithm (default: auto). `LEONTIEF_BUILD_ONLY=1` times
//! the model build alone (for sizes whose solve takes too long).

use leontief_benches::{instance, peak_rss, problem_bytes, rss, Family};
use leontief_drfh::dominant_sigma;
use leontief_drfh::maxmin::{build, lex_max_min, Columns, MaxMinSettings};
use leontief_highs::{Algorithm, Highs, HighsSettings};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs: Vec<(Family, usize, usize)> = Vec::new();
    for chunk in args.chunks(3) {
        let fam = if chunk[0] == "google" {
            Family::GoogleCell
        } else {
            Family::Heterogeneous
        };
        runs.push((
            fam,
            chunk[1].parse().expect("N"),
            chunk[2].parse().expect("K"),
        ));
    }
    if runs.is_empty() {
        runs = vec![
            (Family::Heterogeneous, 1000, 1000),
            (Family::Heterogeneous, 100, 10000),
            (Family::Heterogeneous, 1000, 10000),
        ];
    }
    println!("| family | users | servers | columns | nonzeros | build s | HiGHS load+solve s | build / solve | rounds | LPs | model MB | peak RSS MB | HiGHS own MB (est.) | peak / HiGHS own |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (fam, n, k) in runs {
        let inst = instance(fam, n, k);
        let sigma = dominant_sigma(&inst);
        let t0 = Instant::now();
        let lp = build(&inst, &sigma, true, None);
        let build_s = t0.elapsed().as_secs_f64();
        let (cols, nnz, bytes) = (
            lp.problem.num_cols(),
            lp.problem.num_nonzeros(),
            problem_bytes(&lp.problem),
        );
        drop(lp);
        if std::env::var_os("LEONTIEF_BUILD_ONLY").is_some() {
            println!(
                "| {} | {n} | {k} | {cols} | {nnz} | {build_s:.3} | (build only) | | | | {:.0} | {:.0} | | |",
                if fam == Family::GoogleCell { "google" } else { "hetero" },
                bytes as f64 / 1e6,
                peak_rss().unwrap_or(0) as f64 / 1e6,
            );
            continue;
        }
        let before = rss().unwrap_or(0);
        let t1 = Instant::now();
        let algorithm = match std::env::var("LEONTIEF_ALGORITHM").as_deref() {
            Ok("simplex") => Algorithm::Simplex,
            Ok("ipm") => Algorithm::InteriorPoint,
            Ok("choose") => Algorithm::Choose,
            _ => Algorithm::Auto,
        };
        let highs = Highs::new(HighsSettings {
            algorithm,
            ..Default::default()
        })
        .expect("settings");
        // The flat LP (every pair): this runner measures it; the
        // large-scale path has its own runner, `maxmin_scale`.
        let flat = MaxMinSettings {
            columns: Columns::All,
            ..Default::default()
        };
        let o = lex_max_min(&highs, &inst, &sigma, true, &flat).expect("solve runs");
        let total = t1.elapsed().as_secs_f64();
        // lex_max_min rebuilds the model (build_s again) and then spends the
        // rest in HiGHS: passing the LP, the rounds and any growth LPs.
        let solve_s = total - build_s;
        let peak = peak_rss().unwrap_or(0);
        // What the solve added beyond the model copy we keep: HiGHS's own.
        let highs_own = peak.saturating_sub(before).saturating_sub(bytes);
        println!(
            "| {} | {n} | {k} | {cols} | {nnz} | {build_s:.3} | {solve_s:.3} | {:.1}% | {} | {} | {:.0} | {:.0} | {:.0} | {:.2} |",
            if fam == Family::GoogleCell { "google" } else { "hetero" },
            100.0 * build_s / solve_s,
            o.rounds,
            o.lps,
            bytes as f64 / 1e6,
            peak as f64 / 1e6,
            highs_own as f64 / 1e6,
            peak as f64 / highs_own.max(1) as f64,
        );
        assert_eq!(
            o.status,
            leontief_core::Status::Optimal,
            "status {}",
            o.status
        );
    }
}
