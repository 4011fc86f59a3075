//! One-shot runs of the server-based mechanisms (004) at the sizes of
//! issue 5: `vds_scale psdsf USERS SERVERS ELIGIBLE [plain|norelax|norestart]`
//! (plain: no exact finish, Gauss-Seidel alone; norelax: the finish on
//! sweeps that are not over-relaxed; norestart: no restart of the sweeps
//! from a failed finish's levels), `vds_scale vds ALPHA
//! USERS SERVERS ELIGIBLE [jacobi|plain]` (plain: Gauss-Seidel not
//! over-relaxed), `vds_scale pf USERS SERVERS ELIGIBLE`
//! (alpha = 1 as one exponential-cone program on Clarabel). Instances from
//! `generate::placement` (3 resources, or the environment's RESOURCES;
//! weights in [1, 4], each user on ELIGIBLE random servers; seed 1, or the
//! environment's SEED). With MIX=1, `psdsf` and `vds` mix in zero demands and
//! caps: every fifth user needs none of one resource, and every seventh is
//! capped at 70% of what it gets without caps (MIX_ONLY=zeros or caps: one
//! of the two). Prints one Markdown row.

use leontief_benches::peak_rss;
use leontief_core::generate;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: f64| -> f64 { args.get(i).and_then(|v| v.parse().ok()).unwrap_or(d) };
    let mib = || peak_rss().unwrap_or(0) as f64 / 1048576.0;
    let seed: u64 = std::env::var("SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let resources: usize = std::env::var("RESOURCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // USERS SERVERS ELIGIBLE from argument `at` on, and the instance.
    let sized = |at: usize| {
        let (n, k, e) = (
            num(at, 1000.0) as usize,
            num(at + 1, 1000.0) as usize,
            num(at + 2, 50.0) as usize,
        );
        (n, k, e, generate::placement(n, k, resources, e, seed))
    };
    match args.first().map(String::as_str) {
        Some("psdsf") => {
            let (n, k, e, inst) = sized(1);
            let mix = std::env::var("MIX").is_ok_and(|v| v == "1");
            let inst = if mix { mixed(&inst) } else { inst };
            let t = Instant::now();
            let mode = args.get(4).map(String::as_str);
            let o = leontief_vds::psdsf_with(
                &inst,
                &leontief_vds::PsdsfSettings {
                    exact_finish: mode != Some("plain"),
                    over_relax: mode.is_none() || mode == Some("norestart"),
                    restart: mode.is_none(),
                    ..Default::default()
                },
            );
            let secs = t.elapsed().as_secs_f64();
            let c = leontief_vds::certificate(&inst, &o.tasks, 1e-9);
            println!(
                "| PS-DSF {n} users x {k} servers, {e} eligible each, {resources} resources, seed {seed}{}{} | {} sweeps, converged {}, exact finish {} ({} tried, {} restarts), Definition 4 holds {} (worst {:.1e}) | {secs:.3} s | {:.0} MiB |",
                if mix { ", zero demands and caps" } else { "" },
                mode.map(|m| format!(" ({m})")).unwrap_or_default(),
                o.sweeps, o.converged, o.exact_finish, o.finishes_tried, o.restarts, c.holds, c.worst_violation, mib()
            );
        }
        Some("vds") => {
            let alpha = num(1, 3.0);
            let (n, k, e, inst) = sized(2);
            let mix = std::env::var("MIX").is_ok_and(|v| v == "1");
            let inst = if mix { mixed(&inst) } else { inst };
            let jacobi = args.get(5).is_some_and(|v| v == "jacobi").then_some(0.5);
            let t = Instant::now();
            let o = leontief_vds::vds(
                &inst,
                &leontief_vds::VdsSettings {
                    alpha,
                    jacobi,
                    over_relax: args.get(5).map(String::as_str) != Some("plain"),
                    finish: !matches!(args.get(5).map(String::as_str), Some("plain" | "nofinish")),
                    ..Default::default()
                },
            );
            println!(
                "| alphaPF-VDS alpha={alpha} {} {n} users x {k} servers, {e} eligible each, {resources} resources, seed {seed}{} | {} sweeps, {} Newton steps ({} responses short of tolerance), converged {}, ended by the interior-point finish {} ({} tried, {} iterations), NI gap {:.1e}, KKT {:.1e} | {:.3} s | {:.0} MiB |",
                match (jacobi.is_some(), o.over_relaxation != 1.0) {
                    (true, _) => "Jacobi".to_string(),
                    (false, true) => format!("Gauss-Seidel over-relaxed (omega {:.3})", o.over_relaxation),
                    (false, false) => "Gauss-Seidel".to_string(),
                },
                if mix { ", zero demands and caps" } else { "" },
                o.sweeps,
                o.newton_steps,
                o.inexact_responses,
                o.converged,
                o.finished,
                o.finishes_tried,
                o.finish_iterations,
                o.certificate.nikaido_isoda_gap,
                o.certificate.kkt_residual,
                t.elapsed().as_secs_f64(),
                mib()
            );
        }
        Some("pf") => {
            let (n, k, e, inst) = sized(1);
            let t = Instant::now();
            let clarabel = leontief_clarabel::Clarabel::default();
            let a =
                leontief_fds::solve_alpha_conic(&clarabel, &inst, leontief_fds::Family::Gfj, 1.0)
                    .unwrap();
            println!(
                "| alphaPF-VDS alpha=1 (one exponential-cone program) {n} users x {k} servers, {e} eligible each | status {} | {:.3} s (build {:.3} s, solve {:.3} s) | {:.0} MiB |",
                a.status,
                t.elapsed().as_secs_f64(),
                a.build_seconds,
                a.solve_seconds,
                mib()
            );
        }
        _ => eprintln!("usage: vds_scale psdsf|vds|pf ..."),
    }
}

/// Zero demands and caps mixed in (MIX=1): every fifth user needs none of
/// resource n mod m (when it needs another), every seventh is capped at 70%
/// of its tasks in the PS-DSF answer without caps.
fn mixed(inst: &leontief_core::Instance) -> leontief_core::Instance {
    let free = leontief_vds::psdsf(inst, 100_000);
    let mut raw = inst.to_raw();
    let m = raw.resources.len();
    for (n, u) in raw.users.iter_mut().enumerate() {
        let r = n % m;
        let only = std::env::var("MIX_ONLY").unwrap_or_default();
        if only != "caps"
            && n % 5 == 0
            && u.demand.iter().enumerate().any(|(j, &d)| j != r && d > 0.0)
        {
            u.demand[r] = 0.0;
        }
        if only != "zeros" && n % 7 == 0 {
            let x: f64 = free.tasks[n].iter().sum();
            if x > 0.0 {
                u.tasks = Some(0.7 * x);
            }
        }
    }
    leontief_core::Instance::new(raw).expect("a valid instance")
}
