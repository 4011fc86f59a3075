//! The fairness-efficiency trade-off on one instance: k-DF for k = 1..4
//! and FDS along the alpha-fair line, each point measured against exact
//! DRFH (percent fairness) and NFC (percent efficiency), as in Sec. V of
//! 002.
//!
//! `cargo run --release -p leontief --example tradeoff`

use leontief::{sweep, Options, Params, SweepSpec, Swept};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let instance = leontief::generate::heterogeneous(20, 10, 2, 1);
    let options = Options::default();
    for (mechanism, swept, values) in [
        ("kdf", Swept::K, vec![1.0, 2.0, 3.0, 4.0]),
        ("fds", Swept::Alpha, vec![0.25, 0.5, 1.0, 2.0, 4.0]),
    ] {
        let spec = SweepSpec {
            mechanism: mechanism.into(),
            base: Params::default(),
            swept: swept.clone(),
            values,
        };
        let s = sweep(&instance, &spec, &options, &|| {})?;
        println!(
            "{mechanism}: {:>6} {:>10} {:>10} verified",
            swept.name(),
            "fairness",
            "efficiency"
        );
        for p in &s.points {
            let a = p.solution.as_ref().map_err(|e| e.to_string())?;
            println!(
                "{mechanism}: {:>6} {:>9.2}% {:>9.2}% {}",
                p.value,
                s.references
                    .percent_fairness(a.metrics.min_normalised_share()),
                s.references.percent_efficiency(a.metrics.total_tasks),
                a.verification.as_ref().is_some_and(|v| v.ok)
            );
        }
    }
    Ok(())
}
