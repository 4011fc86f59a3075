//! The rounds' allocation is read from their last point over every column
//! of the LP: k-DF (k = 2) with a GPU on a fifth of 1,500 servers and 500
//! users (2 resources, `generate shaped --shape gpu=0.2 --seed 2`) runs
//! the general rounds, whose last round priced in columns its point did
//! not have; the allocation read past the point's end and panicked. The
//! answer is the flat answer's: optimal, certified by the audit's check.

use leontief_audit::max_min_certificate;
use leontief_core::generate::{family, Family};
use leontief_core::{RoundPrices, Status};
use leontief_drfh::kdf_sigma;
use leontief_drfh::maxmin::{lex_max_min, MaxMinSettings};
use leontief_highs::Highs;

#[test]
fn kdf_with_a_gpu_on_a_fifth_ends_on_its_last_point() {
    let f = Family::new(500, 1500, 2, 2)
        .from_spec("gpu=0.2")
        .expect("a shape");
    let inst = family(&f);
    let sigma = kdf_sigma(&inst, 2);
    let out = lex_max_min(
        &Highs::default(),
        &inst,
        &sigma,
        true,
        &MaxMinSettings::default(),
    )
    .expect("runs");
    assert_eq!(out.status, Status::Optimal);
    let x = out.tasks.user_totals();
    let rounds: Vec<RoundPrices> = out
        .certificates
        .iter()
        .map(|c| c.to_prices(inst.num_resources()))
        .collect();
    let c = max_min_certificate(
        &inst,
        &sigma,
        &x,
        &out.frozen_round,
        &rounds,
        true,
        1e-7,
        1e-6,
    );
    assert!(c.ok, "{c:?}");
}
