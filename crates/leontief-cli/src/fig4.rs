//! `leontief repro sim-fig4`: Fig. 4 of 000 over random cluster draws.

use crate::args::{Fig4Args, SimulateArgs};
use crate::failure::{bad_input, Failure};
use crate::simulate::load;
use anyhow::Context;
use leontief::simulate::Simulation;
use leontief_sim::sim::{Cluster, Scheduler, SimResult, SimSettings};

/// Mean global dominant share of the users in `set` over the samples where
/// exactly they hold resources (a phase of Fig. 4).
fn phase_share(r: &SimResult, set: &[usize]) -> Option<f64> {
    let vals: Vec<f64> = r
        .shares
        .iter()
        .filter(|s| (0..s.len()).all(|n| (s[n] > 0.0) == set.contains(&n)))
        .flat_map(|s| set.iter().map(move |&n| s[n]))
        .collect();
    (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
}

/// Fig. 4 of 000 over `draws` random 100-server clusters: the mean global
/// dominant share while exactly the first two users, and while all three,
/// hold resources, for whole-task Best-Fit DRFH and exact divisible DRFH.
pub fn cmd(args: &Fig4Args) -> Result<(), Failure> {
    if args.draws == 0 {
        return Err(bad_input("--draws must be >= 1"));
    }
    let base = load(&SimulateArgs::for_config(args.config.clone()))?;
    let servers = base.cluster.servers.len();
    let mut rows = Vec::new();
    for seed in 1..=args.draws {
        let l = Simulation {
            cluster: Cluster::google_sample(servers, seed),
            ..base.clone()
        };
        let mut row = serde_json::json!({ "seed": seed, "pool": l.cluster.pool() });
        for s in [Scheduler::BestFit { normaliser: 0 }, Scheduler::Drfh] {
            let settings = SimSettings {
                scheduler: s,
                ..l.settings.clone()
            };
            let r = leontief::simulate::simulate(&l, &settings, false, &|_| {}, &|| {})?;
            row[s.name()] = serde_json::json!({
                "two_users": phase_share(&r, &[0, 1]),
                "three_users": phase_share(&r, &[0, 1, 2]),
            });
        }
        rows.push(row);
    }
    let mean = |s: &str, w: &str| {
        rows.iter()
            .map(|r| r[s][w].as_f64().unwrap_or(f64::NAN))
            .sum::<f64>()
            / rows.len() as f64
    };
    let summary = serde_json::json!({
        "draws": args.draws,
        "best-fit": {"two_users": mean("best-fit", "two_users"), "three_users": mean("best-fit", "three_users")},
        "drfh": {"two_users": mean("drfh", "two_users"), "three_users": mean("drfh", "three_users")},
        "paper": {"two_users": 0.44, "three_users": 0.26},
        "runs": rows,
    });
    eprintln!(
        "mean global dominant share over {} draws: Best-Fit {:.1}% (two users), {:.1}% (three); exact DRFH {:.1}%, {:.1}%; paper (Best-Fit) 44%, 26%",
        args.draws,
        100.0 * mean("best-fit", "two_users"),
        100.0 * mean("best-fit", "three_users"),
        100.0 * mean("drfh", "two_users"),
        100.0 * mean("drfh", "three_users"),
    );
    let text = if args.pretty {
        serde_json::to_string_pretty(&summary)
    } else {
        serde_json::to_string(&summary)
    }
    .context("serialising")?;
    println!("{text}");
    Ok(())
}
