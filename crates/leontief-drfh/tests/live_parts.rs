//! Placement lists: entries closed to the users still rising once a round
//! below them is complete, and the rounds gone on with the live part
//! alone. Both give the rounds of the whole LP; the certificates hold
//! under the audit's own closure rule, and the audit's flat max-min check
//! (its own LPs) agrees.

mod support;

use leontief_audit::max_min_certificate;
use leontief_core::{generate, Status};
use leontief_drfh::dominant_sigma;
use leontief_drfh::maxmin::{lex_max_min, MaxMinSettings};
use leontief_highs::Highs;
use support::{round_prices, user_tasks};

#[test]
fn live_parts_give_the_rounds_of_the_whole_lp_and_certify() {
    for (m, seed) in [(2, 1), (3, 2), (4, 3)] {
        let inst = generate::placement(60, 600, m, 10, seed);
        let sigma = dominant_sigma(&inst);
        let run = |live_parts: bool| {
            let settings = MaxMinSettings {
                live_parts,
                ..MaxMinSettings::default()
            };
            let t0 = std::time::Instant::now();
            let o = lex_max_min(&Highs::default(), &inst, &sigma, true, &settings).unwrap();
            // Each part times its own build: the sum stays within the run.
            let wall = t0.elapsed().as_secs_f64();
            assert!(
                o.build_seconds + o.solve_seconds <= wall,
                "m {m} seed {seed}: build {} s + solve {} s in a run of {wall} s",
                o.build_seconds,
                o.solve_seconds
            );
            o
        };
        let (parts, whole) = (run(true), run(false));
        for o in [&parts, &whole] {
            assert_eq!(
                o.status,
                Status::Optimal,
                "m {m} seed {seed}: {}",
                o.raw_status
            );
            assert!(o.closed_pairs > 0, "m {m} seed {seed}");
        }
        assert!(
            parts.live_parts > 0 && whole.live_parts == 0,
            "m {m} seed {seed}"
        );
        assert_eq!(parts.frozen_round, whole.frozen_round, "m {m} seed {seed}");
        for n in 0..inst.num_users() {
            let (a, b) = (parts.levels[n], whole.levels[n]);
            assert!(
                (a - b).abs() <= 1e-9 * a.abs().max(b.abs()),
                "m {m} seed {seed} user {n}: {a} in parts, {b} whole"
            );
        }
        let x = user_tasks(&parts);
        let check = |x: &[f64]| {
            max_min_certificate(
                &inst,
                &sigma,
                x,
                &parts.frozen_round,
                &round_prices(m, &parts),
                true,
                1e-7,
                1e-6,
            )
        };
        let c = check(&x);
        assert!(c.ok, "m {m} seed {seed}: {c:?}");
        let flat = leontief_audit::max_min(
            &Highs::default(),
            &inst,
            &sigma,
            &x,
            true,
            &Default::default(),
        )
        .unwrap();
        assert!(flat.ok, "m {m} seed {seed}: {flat:?}");
        // The last round's users (certified in a live part) holding 1%
        // less: refused.
        let last = parts.frozen_round.iter().copied().max().unwrap();
        let n = (0..inst.num_users())
            .find(|&n| parts.frozen_round[n] == last)
            .unwrap();
        let mut y = x.clone();
        y[n] *= 0.99;
        assert!(!check(&y).ok, "m {m} seed {seed}");
    }
}
