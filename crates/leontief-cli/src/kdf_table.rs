//! `leontief repro kdf-table1`: Table I of 001 (Sec. VI-A). Three users
//! share one pool of capacity (C, C, C); every request d_ij is an integer
//! in 1..=C, so there are C^9 request combinations. For each, the total
//! tasks (NTT) under NFC, DRF and 2-DF, averaged over all combinations,
//! and how often 2-DF runs more tasks than DRF. One combination in 50 is
//! also verified (each answer against its defining property).

use crate::args::KdfTable1Args;
use crate::failure::{bad_input, Failure};
use leontief::{Instance, Mechanism, Options, VerifyMode};
use leontief_core::{RawInstance, RawServer, RawUser};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

/// The paper's Table I and Sec. VI-A percentages: (C, NFC, DRF, 2-DF, % of
/// combinations where 2-DF > DRF).
const PAPER: [(u64, f64, f64, f64, f64); 2] =
    [(3, 1.62, 1.34, 1.39, 51.7), (5, 1.81, 1.48, 1.56, 58.1)];

fn instance(c: u64, mut index: u64) -> Instance {
    let mut d = [[0.0; 3]; 3];
    for row in d.iter_mut() {
        for v in row.iter_mut() {
            *v = (index % c + 1) as f64;
            index /= c;
        }
    }
    let raw = RawInstance {
        queues: None,
        quantum: None,
        name: None,
        description: None,
        resources: vec!["r1".into(), "r2".into(), "r3".into()],
        servers: vec![RawServer {
            name: "pool".into(),
            capacity: vec![c as f64; 3],
            count: None,
        }],
        users: (0..3)
            .map(|n| RawUser {
                queue: None,
                name: format!("u{}", n + 1),
                demand: d[n].to_vec(),
                weight: None,
                tasks: None,
                servers: None,
                rank_weights: None,
            })
            .collect(),
    };
    // Valid by construction: positive integers on a positive pool.
    Instance::new(raw).expect("a valid instance")
}

/// Every this many combinations the three answers are verified too (the
/// independent check of each mechanism's defining property); an answer
/// that fails it stops the table.
const VERIFY_EVERY: u64 = 50;

/// NTT under NFC, DRF and 2-DF for one combination, verified when
/// `verify`.
fn ntt(inst: &Instance, verify: bool) -> Result<[f64; 3], Failure> {
    let options = Options {
        verify: if verify {
            VerifyMode::Auto
        } else {
            VerifyMode::Never
        },
        ..Options::default()
    };
    let mut out = [0.0; 3];
    for (slot, m) in [Mechanism::Nfc, Mechanism::Drf, Mechanism::Kdf { k: 2 }]
        .iter()
        .enumerate()
    {
        let a = leontief::solve(inst, m, &options)?;
        if a.status != leontief::Status::Optimal {
            return Err(Failure {
                code: 1,
                message: format!("{m} ended {} on {:?}", a.status, inst.to_raw()),
            });
        }
        if verify && !a.verification.as_ref().is_some_and(|v| v.ok) {
            return Err(Failure {
                code: 1,
                message: format!(
                    "{m} not verified on {:?}: {:?}",
                    inst.to_raw(),
                    a.verification
                ),
            });
        }
        out[slot] = a.user_tasks.iter().sum();
    }
    Ok(out)
}

pub(crate) fn kdf_table1(args: &KdfTable1Args) -> Result<(), Failure> {
    let caps: Vec<u64> = args
        .c
        .split(',')
        .map(|s| s.trim().parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad_input(format!("--c {}: integers >= 1, comma-separated", args.c)))?;
    if caps.iter().any(|&c| c == 0 || c > 9) {
        return Err(bad_input(format!(
            "--c {}: each C in 1..=9 (C^9 combinations)",
            args.c
        )));
    }
    println!(
        "| C | combinations | NFC | DRF | 2-DF | 2-DF > DRF | paper: NFC, DRF, 2-DF, 2-DF > DRF |"
    );
    println!("|---|---|---|---|---|---|---|");
    for c in caps {
        let total = c.pow(9);
        // Streamed and summed, never collected: C = 9 has 3.9e8
        // combinations.
        let (count, sample) = match args.sample {
            Some(s) if (s as u64) < total => (s as u64, true),
            _ => (total, false),
        };
        let index = |j: u64| {
            if sample {
                rand_chacha::ChaCha8Rng::seed_from_u64(
                    args.seed ^ j.wrapping_mul(0x9e37_79b9_7f4a_7c15),
                )
                .gen_range(0..total)
            } else {
                j
            }
        };
        let zero = || [0.0f64; 4];
        let sums = (0..count)
            .into_par_iter()
            .map(|j| {
                let r = ntt(&instance(c, index(j)), j % VERIFY_EVERY == 0)?;
                // "More tasks": beyond the LPs' round-off.
                let better = if r[2] > r[1] * (1.0 + 1e-9) { 1.0 } else { 0.0 };
                Ok::<_, Failure>([r[0], r[1], r[2], better])
            })
            .try_reduce(zero, |a, b| {
                Ok([a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]])
            })?;
        let n = count as f64;
        let mean = |k: usize| sums[k] / n;
        let better = sums[3];
        let paper = PAPER
            .iter()
            .find(|p| p.0 == c)
            .map_or("-".to_string(), |p| {
                format!("{}, {}, {}, {}%", p.1, p.2, p.3, p.4)
            });
        println!(
            "| {c} | {count} | {:.3} | {:.3} | {:.3} | {:.1}% | {paper} |",
            mean(0),
            mean(1),
            mean(2),
            100.0 * better / n
        );
    }
    Ok(())
}
