//! DRFH on the Google cell (Table I of 000: 12,583 servers in 10 classes)
//! with 1,000 users: solved exactly, certified, and explained.
//!
//! `cargo run --release -p leontief --example google_cell [USERS]`

use leontief::{solve, Mechanism, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let users = std::env::args()
        .nth(1)
        .map(|u| u.parse())
        .transpose()?
        .unwrap_or(1000);
    let cell = leontief::generate::google_cell(users, 1);
    let t0 = std::time::Instant::now();
    let a = solve(&cell, &Mechanism::Drfh, &Options::default())?;
    let verified = a.verification.as_ref().is_some_and(|v| v.ok);
    println!(
        "DRFH, {} users on {} servers: {} in {:.3} s, verified: {verified}",
        cell.num_users(),
        cell.num_physical_servers(),
        a.status,
        t0.elapsed().as_secs_f64()
    );
    println!(
        "smallest normalised share {:.6}, Jain {:.4}, {:.0} tasks, utilisation cpu {:.1}% mem {:.1}%",
        a.metrics.min_normalised_share(),
        a.metrics.jain_index,
        a.metrics.total_tasks,
        100.0 * a.metrics.utilisation[0],
        100.0 * a.metrics.utilisation[1]
    );
    if let Some(c) = &a.certificate {
        println!(
            "certificate: path {}, {} rounds of prices",
            c.path,
            c.rounds.len()
        );
    }
    for line in a.explanation.iter().take(3) {
        println!("  {line}");
    }
    assert!(verified, "the answer must verify");
    Ok(())
}
