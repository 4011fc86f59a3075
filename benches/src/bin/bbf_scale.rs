//! One-shot BBF runs too long for criterion's ten samples: enumerate-bbf on
//! the random instances of Table 1 (N = 5m unless given), with and without
//! the polytope dimensions, and the Eisenberg-Gale / ODE solves at scale.
//!
//! `bbf_scale enumerate M [N] [dim]` or `bbf_scale eg N M` or
//! `bbf_scale ode N M`; prints one Markdown row.

use leontief_bbf::{eg, enumerate, ode, Pool};
use leontief_benches::peak_rss;
use leontief_highs::{Algorithm, Highs, HighsSettings};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num =
        |i: usize, d: usize| -> usize { args.get(i).and_then(|v| v.parse().ok()).unwrap_or(d) };
    let mib = || peak_rss().unwrap_or(0) as f64 / 1048576.0;
    match args.first().map(String::as_str) {
        Some("enumerate") => {
            let m = num(1, 16);
            let n = num(2, 5 * m);
            let dim = args.get(3).is_some_and(|v| v == "dim");
            let pool = Pool::random(n, m, 16);
            let highs = Highs::new(HighsSettings {
                presolve: false,
                algorithm: Algorithm::Simplex,
                ..HighsSettings::default()
            })
            .unwrap();
            let o = enumerate::Options {
                dimension: dim,
                ..Default::default()
            };
            let t = Instant::now();
            let e = enumerate::enumerate(&highs, &pool, o, &|| {}).unwrap();
            println!(
                "| enumerate m={m} N={n} dimension={dim} | {} subsets, {} LPs, {} solutions | {:.2} s | {:.0} MiB |",
                e.subsets_tried,
                e.lps_solved,
                e.solutions.len(),
                t.elapsed().as_secs_f64(),
                mib()
            );
        }
        Some("eg") => {
            let (n, m) = (num(1, 10_000), num(2, 100));
            let pool = Pool::random(n, m, 7);
            let t = Instant::now();
            let o = eg::solve_dual(&pool).unwrap();
            println!(
                "| eg dual N={n} m={m} | {} ({}), certificate {:.1e} | {:.3} s | {:.0} MiB |",
                o.status,
                o.raw_status,
                o.certificate.worst(),
                t.elapsed().as_secs_f64(),
                mib()
            );
        }
        Some("ode") => {
            let (n, m) = (num(1, 10_000), num(2, 20));
            let pool = Pool::random(n, m, 7);
            let t = Instant::now();
            let o = ode::trajectory(&pool, &ode::OdeSettings::default()).unwrap();
            let e = eg::solve_dual(&pool).unwrap();
            let diff =
                o.x.iter()
                    .zip(&e.x)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
            println!(
                "| ode log-c N={n} m={m} | {} steps, {} evaluations, max |x - x_EG| {diff:.1e} | {:.3} s | {:.0} MiB |",
                o.steps,
                o.evaluations,
                t.elapsed().as_secs_f64(),
                mib()
            );
        }
        _ => eprintln!("usage: bbf_scale enumerate M [N] [dim] | eg N M | ode N M"),
    }
}
