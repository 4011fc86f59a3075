//! Issue 3's sweep target: a 50-point sweep of the alpha-fair line
//! (alpha = 0.25..8, evenly spaced, as `leontief sweep --alpha 0.25..8:50`)
//! on one server entry, `fds_sweep USERS RESOURCES [family]`: 50
//! independent `solve_alpha_dual` calls (each builds the pool and starts
//! from uniform prices) against one `LineSolver` (pool built once, each
//! point warm-started from the previous prices). Random single-pool
//! instance: demands U[0.1, 1], capacities USERS / 10 (seed 11). Prints
//! one Markdown row and the largest difference between the two.
//!
//! `fds_sweep USERS RESOURCES FAMILY LAMBDA`: the same for a beta sweep at
//! fixed lambda in region A (lambda > 0: beta from 1/(1+lambda) + 0.01 to
//! 0.99) or B (lambda < 0: beta 1.25..8): 50 independent
//! `solve_region_dual` calls against one `RegionSolver`.

use leontief_core::{Instance, RawInstance, RawServer, RawUser};
use leontief_fds::{solve_alpha_dual, solve_region_dual, Family, LineSolver, RegionSolver};
use rand::{Rng, SeedableRng};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let m: usize = args.get(1).and_then(|v| v.parse().ok()).unwrap_or(4);
    let family = match args.get(2).map(String::as_str) {
        Some("gfj") => Family::Gfj,
        _ => Family::Fds,
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let inst = Instance::new(RawInstance {
        queues: None,
        quantum: None,
        name: None,
        description: None,
        resources: (0..m).map(|r| format!("r{r}")).collect(),
        servers: vec![RawServer {
            name: "pool".into(),
            capacity: vec![n as f64 / 10.0; m],
            count: None,
        }],
        users: (0..n)
            .map(|j| RawUser {
                queue: None,
                name: format!("u{j}"),
                demand: (0..m).map(|_| rng.gen_range(0.1..1.0)).collect(),
                weight: None,
                tasks: None,
                servers: None,
                rank_weights: None,
            })
            .collect(),
    })
    .expect("a valid instance");
    let lambda: Option<f64> = args.get(3).and_then(|v| v.parse().ok());
    let (lo, hi) = match lambda {
        None => (0.25, 8.0),
        Some(l) if l > 0.0 => (1.0 / (1.0 + l) + 0.01, 0.99),
        Some(_) => (1.25, 8.0),
    };
    let betas: Vec<f64> = (0..50).map(|j| lo + (hi - lo) * j as f64 / 49.0).collect();
    let t = Instant::now();
    let cold: Vec<_> = betas
        .iter()
        .map(|&b| match lambda {
            None => solve_alpha_dual(&inst, family, b),
            Some(l) => solve_region_dual(&inst, family, b, l),
        })
        .map(|a| a.expect("the dual applies and certifies"))
        .collect();
    let t_cold = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let warm: Vec<_> = match lambda {
        None => {
            let mut line = LineSolver::new(&inst, family).expect("the dual applies");
            betas.iter().map(|&a| line.solve(&inst, a)).collect()
        }
        Some(l) => {
            let mut region = RegionSolver::new(&inst, family).expect("the dual applies");
            betas.iter().map(|&b| region.solve(&inst, b, l)).collect()
        }
    };
    let warm: Vec<_> = warm
        .into_iter()
        .map(|a| a.expect("the dual applies and certifies"))
        .collect();
    let t_warm = t.elapsed().as_secs_f64();
    let optimal = |v: &[leontief_core::Allocation]| {
        v.iter()
            .filter(|a| a.status == leontief_core::Status::Optimal)
            .count()
    };
    let diff = cold
        .iter()
        .zip(&warm)
        .flat_map(|(a, b)| {
            a.user_tasks
                .iter()
                .zip(&b.user_tasks)
                .map(|(x, y)| (x - y).abs() / x.abs().max(1.0))
        })
        .fold(0.0, f64::max);
    let what = match lambda {
        None => "alpha sweep 0.25..8".to_string(),
        Some(l) => format!("beta sweep {lo:.2}..{hi:.2} at lambda {l}"),
    };
    let solver = if lambda.is_none() {
        "LineSolver"
    } else {
        "RegionSolver"
    };
    println!(
        "| 50-point {what}, {n} users x {m} resources, {} | 50 independent solves: {t_cold:.3} s ({} optimal) | warm-started {solver}: {t_warm:.3} s ({} optimal) | largest relative difference {diff:.1e} |",
        family.name(),
        optimal(&cold),
        optimal(&warm),
    );
}
