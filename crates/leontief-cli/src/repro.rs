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

use crate::{bad_input, Failure};
use leontief_drfh::maxmin::progressive_filling;
use rand::{Rng, SeedableRng};

/// `repro fds-prop2` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct Prop2Args {
    /// Numbers of users (comma-separated).
    #[arg(long, default_value = "100,1000,10000,100000")]
    pub n: String,
    /// Numbers of resources (comma-separated).
    #[arg(long, default_value = "2,3,5")]
    pub m: String,
    /// nu: requirements are U[0, nu C].
    #[arg(long, default_value_t = 1.0)]
    pub nu: f64,
    /// Samples per (n, m).
    #[arg(long, default_value_t = 20)]
    pub samples: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

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
