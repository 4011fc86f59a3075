//! `leontief repro fds-prop2`: Prop. 2 of 002 by Monte Carlo.
//!
//! n users with requirements R_{ij} ~ U[0, nu C_i] on m resources of
//! capacity C_i = 1, one pool. At beta = inf, lambda = -1, maximising FDS is
//! max-min of dominant shares (DRF) and maximising GFJ is max-min of tasks;
//! both are computed by the weighted progressive filling of the max-min
//! operator (`leontief_drfh::maxmin::progressive_filling`, sigma_n = mu_n
//! and sigma_n = 1). Prop. 2 says that the first level times
//! n (m + 1) / (2m) and the second times nu (sqrt(m n / 3) + n) / 2 tend
//! to 1 in probability as n grows.

use crate::args::{ContoursArgs, Prop2Args};
use crate::failure::{bad_input, Failure};
use leontief_drfh::maxmin::progressive_filling;
use rand::{Rng, SeedableRng};

fn list(flag: &str, s: &str) -> Result<Vec<usize>, Failure> {
    s.split(',')
        .map(|v| v.trim().parse::<usize>().ok().filter(|&x| x >= 1))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            bad_input(format!(
                "{flag} {s}: expected positive integers, comma-separated"
            ))
        })
}

/// The two ratios of Prop. 2 for one sample: (FDS level / 2m/(n(m+1)),
/// GFJ level / 2/(nu (sqrt(mn/3) + n))).
pub fn sample(n: usize, m: usize, nu: f64, seed: u64) -> (f64, f64) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let r: Vec<Vec<f64>> = (0..n)
        .map(|_| (0..m).map(|_| nu * rng.gen::<f64>()).collect())
        .collect();
    let demand: Vec<&[f64]> = r.iter().map(Vec::as_slice).collect();
    let ones = vec![1.0; n];
    let caps = vec![f64::INFINITY; n];
    let capacity = vec![1.0; m];
    let mu: Vec<f64> = r
        .iter()
        .map(|d| d.iter().copied().fold(0.0, f64::max))
        .collect();
    let (_, fds, _, _) = progressive_filling(&demand, &ones, &caps, &mu, &capacity);
    let (_, gfj, _, _) = progressive_filling(&demand, &ones, &caps, &ones, &capacity);
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (n, m) = (n as f64, m as f64);
    (
        min(&fds) / (2.0 * m / (n * (m + 1.0))),
        min(&gfj) / (2.0 / (nu * ((m * n / 3.0).sqrt() + n))),
    )
}

/// Run the table.
pub fn fds_prop2(args: &Prop2Args) -> Result<(), Failure> {
    let ns = list("--n", &args.n)?;
    let ms = list("--m", &args.m)?;
    if !(args.nu.is_finite() && args.nu > 0.0) || args.samples == 0 {
        return Err(bad_input("--nu must be > 0 and --samples >= 1"));
    }
    println!("n        m   samples  FDS ratio (sd)       GFJ ratio (sd)       seconds");
    for &m in &ms {
        for &n in &ns {
            let t = std::time::Instant::now();
            let s: Vec<(f64, f64)> = (0..args.samples)
                .map(|k| {
                    sample(
                        n,
                        m,
                        args.nu,
                        args.seed ^ ((n as u64) << 20) ^ ((m as u64) << 8) ^ k as u64,
                    )
                })
                .collect();
            let stats = |v: Vec<f64>| {
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                    / (v.len().max(2) - 1) as f64)
                    .sqrt();
                (mean, sd)
            };
            let (f, fs) = stats(s.iter().map(|p| p.0).collect());
            let (g, gs) = stats(s.iter().map(|p| p.1).collect());
            println!(
                "{n:<8} {m:<3} {:<8} {f:.4} ({fs:.4})      {g:.4} ({gs:.4})      {:.2}",
                args.samples,
                t.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

/// Figs. 15-16 of 002: the (fairness, efficiency) points attained by FDS or
/// GFJ over a (beta, lambda) grid, one contour per capacity of a resource.
/// Percent fairness is against DRF (exact DRFH, one server) and percent
/// efficiency against NFC, both on the instance with that capacity.
pub fn fds_contours(args: &ContoursArgs) -> Result<(), Failure> {
    use std::io::Write;
    let family = match args.family.as_str() {
        "fds" => leontief_fds::Family::Fds,
        "gfj" => leontief_fds::Family::Gfj,
        f => return Err(bad_input(format!("--family {f}: use fds or gfj"))),
    };
    if args.betas < 2 || args.lambdas < 1 {
        return Err(bad_input("--betas must be >= 2 and --lambdas >= 1"));
    }
    let base = crate::input::load(&args.instance)?;
    let r = base
        .resources()
        .iter()
        .position(|x| *x == args.resource)
        .ok_or_else(|| {
            bad_input(format!(
                "--resource {}: not a resource of the instance ({})",
                args.resource,
                base.resources().join(", ")
            ))
        })?;
    let capacities: Vec<f64> = args
        .capacities
        .split(',')
        .map(|v| {
            v.trim()
                .parse::<f64>()
                .ok()
                .filter(|c| c.is_finite() && *c > 0.0)
        })
        .collect::<Option<_>>()
        .ok_or_else(|| {
            bad_input(format!(
                "--capacities {}: positive numbers, comma-separated",
                args.capacities
            ))
        })?;
    let highs = crate::input::backend()?;
    let clarabel = leontief_clarabel::Clarabel::default();
    let mut out = std::fs::File::create(&args.csv)
        .map_err(|e| bad_input(format!("--csv {}: {e}", args.csv.display())))?;
    let io = |e: std::io::Error| Failure {
        code: 1,
        message: format!("writing {}: {e}", args.csv.display()),
    };
    writeln!(
        out,
        "capacity,beta,lambda,status,percent_fairness,percent_efficiency"
    )
    .map_err(io)?;
    let t0 = std::time::Instant::now();
    let (mut solved, mut refused) = (0usize, 0usize);
    for &c in &capacities {
        let mut raw = base.to_raw();
        for s in &mut raw.servers {
            s.capacity[r] = c;
        }
        let inst = leontief_core::Instance::new(raw)
            .map_err(|e| bad_input(format!("capacity {c}: {e}")))?;
        let refs = leontief::References::compute(&highs, &inst)?;
        let (mut best_f, mut best_e) = (0.0f64, 0.0f64);
        for bi in 0..args.betas {
            let beta = -5.0 + 10.0 * (bi as f64 + 0.5) / args.betas as f64;
            for li in 0..args.lambdas {
                let u = (li as f64 + 0.5) / args.lambdas as f64;
                let lambda = if beta < 0.0 {
                    0.01 + 1.9 * u
                } else {
                    (0.005 + 0.95 * u) * (1.0 / beta - 2.0)
                };
                let a = match leontief_fds::solve(&clarabel, &inst, family, beta, lambda) {
                    Ok(a) => a,
                    Err(leontief_fds::FdsError::Refused(_)) => {
                        refused += 1;
                        continue;
                    }
                    Err(e) => {
                        return Err(Failure {
                            code: 1,
                            message: format!("beta {beta}, lambda {lambda}: {e}"),
                        })
                    }
                };
                solved += 1;
                let min = a.metrics.min_normalised_share();
                let (f, e) = (
                    refs.percent_fairness(min),
                    refs.percent_efficiency(a.metrics.total_tasks),
                );
                if a.status.has_solution() {
                    best_f = best_f.max(f);
                    best_e = best_e.max(e.min(100.0 + 1e-9));
                }
                writeln!(out, "{c},{beta},{lambda},{},{f},{e}", a.status).map_err(io)?;
            }
        }
        eprintln!("capacity {c}: fairness up to {best_f:.2}%, efficiency up to {best_e:.2}%");
    }
    eprintln!(
        "{solved} points solved, {refused} refused (degenerate or scale-free parameters), {:.1} s; wrote {}",
        t0.elapsed().as_secs_f64(),
        args.csv.display()
    );
    Ok(())
}
