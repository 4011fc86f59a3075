//! Every bottleneck-based fair allocation of the 4 x 4 cyclic example of
//! 003 (11 bottleneck sets; the paper says 7, see docs/mechanisms.md),
//! each re-checked by the independent BBF test, and the Eisenberg-Gale
//! member with its prices.
//!
//! `cargo run --release -p leontief --example bbf_enumeration`

use leontief::{enumerate_bbf, solve, EnumerateOptions, Instance, Mechanism, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../datasets/paper-examples/bbf-cyclic4.json"
    );
    let instance = Instance::from_path(path)?;
    let all = enumerate_bbf(&instance, &EnumerateOptions::default(), &|| {})?;
    println!("{} BBF allocations:", all.solutions.len());
    for s in &all.solutions {
        println!(
            "  bottlenecks {:?}: x = {:?} (dimension {:?})",
            s.bottlenecks, s.fractions, s.dimension
        );
    }
    let eg = solve(
        &instance,
        &"bbf-eg".parse::<Mechanism>()?,
        &Options::default(),
    )?;
    // The typed BBF block: the Fisher-market prices by resource.
    if let Some(leontief::details::BbfDetails::Eg(details)) = &eg.bbf {
        println!(
            "Eisenberg-Gale: x = {:?}, prices {:?}",
            eg.user_tasks, details.prices
        );
    }
    Ok(())
}
