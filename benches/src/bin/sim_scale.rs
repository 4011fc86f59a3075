//! One-shot runs of issue 6's targets:
//!
//! * `sim_scale best-fit|first-fit USERS TASKS`: static Best-Fit DRFH (or
//!   First-Fit) on the Google cell (12,583 servers) of
//!   `leontief_benches::scaled_cell` (about TASKS whole tasks fit);
//! * `sim_scale simulate SERVERS EVENTS [best-fit|first-fit|slotsS]`: a
//!   simulated 24 hours on SERVERS servers drawn from Table I, with
//!   `leontief_benches::day_workload` (EVENTS task events).
//!
//! Prints one Markdown row.

use leontief_benches::{day_workload, peak_rss, scaled_cell};
use leontief_highs::Highs;
use leontief_sim::sim::{simulate, Cluster, Scheduler, SimSettings};
use leontief_sim::{run, Heuristic};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: f64| -> f64 { args.get(i).and_then(|v| v.parse().ok()).unwrap_or(d) };
    let mib = || peak_rss().unwrap_or(0) as f64 / 1048576.0;
    match args.first().map(String::as_str) {
        Some("best-fit") | Some("first-fit") => {
            let (users, tasks) = (num(1, 1000.0) as usize, num(2, 1e6));
            let inst = scaled_cell(users, tasks);
            let h = if args[0] == "best-fit" {
                Heuristic::BestFit { normaliser: 0 }
            } else {
                Heuristic::FirstFit
            };
            let t = Instant::now();
            let a = run(&inst, &h).expect("valid parameters");
            println!(
                "| {} on the Google cell (12,583 servers), {users} users | {:.0} tasks placed | {:.3} s | {:.0} MiB |",
                args[0],
                a.metrics.total_tasks,
                t.elapsed().as_secs_f64(),
                mib()
            );
        }
        Some("simulate") => {
            let (servers, events) = (num(1, 2000.0) as usize, num(2, 1e6));
            let scheduler = match args.get(3).map(String::as_str) {
                None | Some("best-fit") => Scheduler::BestFit { normaliser: 0 },
                Some("first-fit") => Scheduler::FirstFit,
                Some(s) => Scheduler::Slots {
                    slots: s.trim_start_matches("slots").parse().unwrap_or(14),
                },
            };
            let cluster = Cluster::google_sample(servers, 1);
            let t0 = Instant::now();
            let w = day_workload(&cluster, events);
            let gen = t0.elapsed().as_secs_f64();
            let t = Instant::now();
            let r = simulate(
                &Highs::default(),
                &cluster,
                &w,
                &SimSettings {
                    scheduler,
                    horizon: None,
                    sample_interval: Some(60.0),
                },
                &|_| {},
            )
            .expect("valid settings");
            println!(
                "| simulate {} 24 h, {servers} servers, {} tasks ({} task events), 1,000 users | {} placed, {} finished, mean utilisation cpu {:.1}% mem {:.1}%, conserved {} | {:.2} s (+{gen:.2} s generating) | {:.0} MiB |",
                scheduler.name(),
                w.tasks.len(),
                3 * w.tasks.len(),
                r.decisions,
                r.totals.finished,
                100.0 * r.mean_utilisation[0],
                100.0 * r.mean_utilisation[1],
                r.totals.conserved,
                t.elapsed().as_secs_f64(),
                mib()
            );
        }
        _ => eprintln!("usage: sim_scale best-fit|first-fit USERS TASKS | simulate SERVERS EVENTS [best-fit|first-fit|slotsS]"),
    }
}
