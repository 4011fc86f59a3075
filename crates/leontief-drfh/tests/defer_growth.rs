//! Deferred growth (`MaxMinSettings::defer_growth`): leaving the users no
//! dual blocks to the next round's level LP gives the rounds and levels
//! of the growth LPs, with fewer LPs, with and without placement lists.

use leontief_core::generate;
use leontief_drfh::dominant_sigma;
use leontief_drfh::maxmin::{lex_max_min, Columns, MaxMinOutcome, MaxMinSettings};
use leontief_highs::Highs;

fn run(inst: &leontief_core::Instance, placement: bool, defer_growth: bool) -> MaxMinOutcome {
    let sigma = dominant_sigma(inst);
    let settings = MaxMinSettings {
        defer_growth,
        // The flat rounds (the pattern master and the pooled paths have
        // rounds of their own).
        columns: Columns::All,
        ..MaxMinSettings::default()
    };
    lex_max_min(&Highs::default(), inst, &sigma, placement, &settings).unwrap()
}

fn same_rounds(what: &str, deferred: &MaxMinOutcome, grown: &MaxMinOutcome) {
    assert_eq!(deferred.status, grown.status, "{what}");
    assert_eq!(deferred.frozen_round, grown.frozen_round, "{what}");
    assert_eq!(deferred.rounds, grown.rounds, "{what}");
    for (n, (a, b)) in deferred.levels.iter().zip(&grown.levels).enumerate() {
        assert!(
            (a - b).abs() <= 1e-6 * a.abs().max(b.abs()),
            "{what} user {n}: {a} deferred, {b} by growth LPs"
        );
    }
}

#[test]
fn deferred_growth_gives_the_rounds_of_the_growth_lps_with_fewer_lps() {
    for seed in [1, 2] {
        let inst = generate::placement(100, 1000, 2, 10, seed);
        let (deferred, grown) = (run(&inst, true, true), run(&inst, true, false));
        let what = format!("placement seed {seed}");
        same_rounds(&what, &deferred, &grown);
        assert!(
            deferred.lps < grown.lps,
            "{what}: {} LPs deferred, {} with growth LPs",
            deferred.lps,
            grown.lps
        );
        assert!(deferred.growth_lps < grown.growth_lps, "{what}");
    }
    for seed in [1, 2, 3] {
        let inst = generate::heterogeneous(40, 30, 3, seed);
        let what = format!("heterogeneous seed {seed}");
        same_rounds(&what, &run(&inst, false, true), &run(&inst, false, false));
    }
}
