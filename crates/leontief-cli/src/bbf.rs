//! The BBF commands: `enumerate-bbf`, `merge-bbf` and `repro bbf-table1`.

use crate::args::{EnumerateArgs, Table1Args};
use crate::failure::{bad_input, Failure};
use crate::input::load;
use anyhow::Context;
use leontief_bbf::{enumerate, Pool};
use serde_json::json;
use std::path::PathBuf;

fn parse_shard(s: &str) -> Result<(u64, u64), Failure> {
    let bad = || bad_input(format!("--shard {s}: expected I/N with 0 <= I < N"));
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

fn print(v: &impl serde::Serialize, pretty: bool) -> Result<(), Failure> {
    let text = if pretty {
        serde_json::to_string_pretty(v)
    } else {
        serde_json::to_string(v)
    }
    .context("serialising")?;
    println!("{text}");
    Ok(())
}

fn progress_bar(len: u64) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(len);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{elapsed_precise} [{bar:40}] {pos}/{len} subsets ({eta} left)",
            )
            .expect("a valid template"),
        );
        bar
    } else {
        indicatif::ProgressBar::hidden()
    }
}

/// Run `enumerate` on a thread pool of the requested size.
fn in_pool<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T, Failure> {
    match threads {
        Some(0) => Err(bad_input("--threads must be >= 1")),
        Some(t) => Ok(rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .context("starting the worker threads")?
            .install(f)),
        None => Ok(f()),
    }
}

/// `enumerate-bbf`.
pub fn enumerate_cmd(args: &EnumerateArgs) -> Result<(), Failure> {
    let shard = match &args.shard {
        Some(s) => parse_shard(s)?,
        None => (0, 1),
    };
    let inst = load(&args.instance)?;
    let bar = progress_bar(leontief::subsets(&inst, shard)?);
    let opts = leontief::EnumerateOptions {
        shard,
        dimension: !args.no_dimension,
    };
    let e = in_pool(args.threads, || {
        leontief::enumerate_bbf(&inst, &opts, &|| bar.inc(1))
    })??;
    bar.finish_and_clear();
    print(&e, args.pretty)
}

/// `merge-bbf FILES...`.
pub fn merge_cmd(
    files: &[PathBuf],
    instance: Option<&PathBuf>,
    pretty: bool,
) -> Result<(), Failure> {
    let mut parts = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f)
            .map_err(|e| bad_input(format!("cannot read {}: {e}", f.display())))?;
        let e: enumerate::Enumeration = serde_json::from_str(&text)
            .map_err(|e| bad_input(format!("{}: not an enumerate-bbf output: {e}", f.display())))?;
        parts.push(e);
    }
    let inst = instance.map(load).transpose()?;
    let merged = leontief::merge_bbf(parts, inst.as_ref()).map_err(|e| {
        let f = Failure::from(e);
        match instance {
            Some(path) if f.message.starts_with("the shards come from") => {
                bad_input(format!("--instance {}: {}", path.display(), f.message))
            }
            _ => f,
        }
    })?;
    print(&merged, pretty)
}

/// Table 1 of 003: mean number of BBF solutions, N = 5m, r ~ U[0,1].
const PAPER_TABLE1: [(usize, f64); 6] = [
    (4, 5.4),
    (5, 14.6),
    (6, 34.8),
    (7, 77.0),
    (8, 186.0),
    (9, 401.0),
];

/// `repro bbf-table1`.
pub fn table1(args: &Table1Args) -> Result<(), Failure> {
    let (a, b) = args
        .m
        .split_once("..")
        .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
        .filter(|(a, b)| *a >= 1 && a <= b && *b <= 20)
        .ok_or_else(|| {
            bad_input(format!(
                "--m {}: expected a..b with 1 <= a <= b <= 20",
                args.m
            ))
        })?;
    if args.samples == 0 {
        return Err(bad_input("--samples must be >= 1"));
    }
    let highs = leontief::subset_backend()?;
    let t0 = std::time::Instant::now();
    let mut rows = Vec::new();
    println!("m   N   samples  mean     sd      paper  seconds");
    for m in a..=b {
        let t1 = std::time::Instant::now();
        let nu = 5 * m;
        let counts: Vec<f64> = (0..args.samples)
            .map(|s| {
                let pool = Pool::random(nu, m, args.seed ^ ((m as u64) << 32) ^ s as u64);
                let opts = enumerate::Options {
                    shard: (0, 1),
                    dimension: false,
                };
                enumerate::enumerate(&highs, &pool, opts, &|| {})
                    .map(|e| e.solutions.len() as f64)
                    .map_err(|e| Failure {
                        code: 1,
                        message: e.to_string(),
                    })
            })
            .collect::<Result<_, _>>()?;
        let mean = counts.iter().sum::<f64>() / counts.len() as f64;
        let sd = (counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>()
            / (counts.len().max(2) - 1) as f64)
            .sqrt();
        let paper = PAPER_TABLE1.iter().find(|p| p.0 == m).map(|p| p.1);
        let secs = t1.elapsed().as_secs_f64();
        println!(
            "{m:<3} {nu:<3} {:<8} {mean:<8.2} {sd:<7.2} {:<6} {secs:.2}",
            args.samples,
            paper.map_or("-".into(), |p| format!("{p}")),
        );
        rows.push(json!({"m": m, "users": nu, "samples": args.samples, "mean": mean, "sd": sd, "paper_mean": paper, "seconds": secs}));
    }
    eprintln!(
        "total {:.2} s; {}",
        t0.elapsed().as_secs_f64(),
        serde_json::to_string(&rows).context("serialising")?
    );
    Ok(())
}
