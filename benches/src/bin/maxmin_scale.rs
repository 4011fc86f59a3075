//! One-shot measurements of the max-min family at datacenter scale, end
//! to end as `leontief solve` runs it (normalise, solve, restore units,
//! verify), one process per size so peak memory is per size.
//!
//! `cargo run --release -p leontief-benches --bin maxmin_scale -- MECH FAMILY N K M SEED [ELIGIBLE]`
//! with MECH `drfh`, `kdf2`, `tsf` or `nfc`, FAMILY `hetero`, `google`
//! (the 10 Table I classes as 10 entries, K ignored), `google-listed` (the
//! same cell listed as K separate server entries drawn from the classes
//! in proportion) or `placement` (ELIGIBLE servers per user). Prints one
//! markdown table row.

use leontief_benches::peak_rss;
use leontief_core::{generate, Instance, RawServer};
use std::time::Instant;

fn google_listed(users: usize, servers: usize, seed: u64) -> Instance {
    let cell = generate::google_cell(users, seed);
    let mut raw = cell.to_raw();
    let total: u64 = raw.servers.iter().map(|s| s.count.unwrap_or(1)).sum();
    let mut listed = Vec::new();
    for s in &raw.servers {
        let share = (s.count.unwrap_or(1) as f64 * servers as f64 / total as f64).round() as usize;
        for j in 0..share.max(1) {
            listed.push(RawServer {
                name: format!("{}-{j}", s.name),
                capacity: s.capacity.clone(),
                count: None,
            });
        }
    }
    raw.servers = listed;
    Instance::new(raw).expect("valid")
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    if a.len() < 6 {
        eprintln!("usage: maxmin_scale MECH FAMILY N K M SEED [ELIGIBLE]");
        std::process::exit(2);
    }
    let (mech, family) = (a[0].as_str(), a[1].as_str());
    let n: usize = a[2].parse().expect("N");
    let k: usize = a[3].parse().expect("K");
    let m: usize = a[4].parse().expect("M");
    let seed: u64 = a[5].parse().expect("SEED");
    let eligible: usize = a.get(6).map(|e| e.parse().expect("ELIGIBLE")).unwrap_or(10);
    let t0 = Instant::now();
    let inst = match family {
        "google" => generate::google_cell(n, seed),
        "google-listed" => google_listed(n, k, seed),
        "placement" => generate::placement(n, k, m, eligible, seed),
        _ => generate::heterogeneous(n, k, m, seed),
    };
    let gen_s = t0.elapsed().as_secs_f64();
    let spec = match mech {
        "kdf2" => "kdf:k=2",
        other => other,
    };
    let mechanism: leontief::Mechanism = spec.parse().expect("a mechanism");
    let t1 = Instant::now();
    let out = leontief::solve(&inst, &mechanism, &leontief::Options::default());
    let total = t1.elapsed().as_secs_f64();
    let peak = peak_rss().unwrap_or(0) as f64 / 1e6;
    let shape = match family {
        "placement" => format!("placement {n} x {k}, {m} res., {eligible} eligible, seed {seed}"),
        "google" => format!("Google cell (10 classes), {n} users, seed {seed}"),
        "google-listed" => format!(
            "Google cell as {} entries, {n} users, seed {seed}",
            inst.num_entries()
        ),
        _ => format!("hetero {n} x {k}, {m} res., seed {seed}"),
    };
    match out {
        Ok(a) => {
            let v = a.verification.clone().unwrap_or_default();
            let (path, cols, passes) = a
                .certificate
                .as_ref()
                .map(|c| (c.path.name(), c.columns, c.pricing_passes))
                .or_else(|| {
                    a.total_certificate
                        .as_ref()
                        .map(|c| (c.path.name(), c.columns, c.pricing_passes))
                })
                .unwrap_or(("-", 0, 0));
            let flat = v.max_min.as_ref().and_then(|m| m.checked());
            let by = if v.certificate.as_ref().is_some_and(|c| c.ok()) {
                if flat.is_none() {
                    "certificate"
                } else {
                    "certificate + flat LPs"
                }
            } else if flat.is_some_and(|c| c.ok) {
                "flat LPs"
            } else {
                "-"
            };
            println!(
                "| {mech} | {shape} | {} | {path} | {cols} | {passes} | {:.3} | {total:.3} | {} ({by}) | {} | {peak:.0} | (gen {gen_s:.2} s) |",
                inst.num_users() * inst.num_entries(),
                a.solve_seconds,
                v.ok,
                a.status,
            );
        }
        Err(e) => println!(
            "| {mech} | {shape} | | | | | | {total:.3} | error: {} | | {peak:.0} | |",
            e
        ),
    }
}
