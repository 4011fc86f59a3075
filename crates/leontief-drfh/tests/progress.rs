//! The max-min operator reports its rounds: one report per round of the
//! general path, rounds counting up, frozen users never fewer, the last
//! report with every user frozen and the outcome's own counts.

use leontief_core::generate;
use leontief_drfh::dominant_sigma;
use leontief_drfh::maxmin::{lex_max_min, MaxMinSettings};
use leontief_drfh::progress::{Progress, RoundProgress};
use leontief_highs::Highs;
use std::sync::{Arc, Mutex};

#[test]
fn every_round_is_reported_in_order() {
    for seed in 1..=3 {
        // Placement lists: the general path, several rounds.
        let inst = generate::placement(20, 60, 2, 4, seed);
        let seen: Arc<Mutex<Vec<RoundProgress>>> = Arc::default();
        let sink = seen.clone();
        let settings = MaxMinSettings {
            progress: Some(Progress::new(move |p| sink.lock().unwrap().push(*p))),
            ..MaxMinSettings::default()
        };
        let out = lex_max_min(
            &Highs::default(),
            &inst,
            &dominant_sigma(&inst),
            true,
            &settings,
        )
        .unwrap();
        let seen = seen.lock().unwrap();
        assert!(out.rounds > 1, "seed {seed}: {} rounds", out.rounds);
        assert_eq!(seen.len(), out.rounds, "seed {seed}");
        for (k, p) in seen.iter().enumerate() {
            assert_eq!(p.round, k + 1);
            assert_eq!(p.users, 20);
            assert!(k == 0 || (p.frozen >= seen[k - 1].frozen && p.lps > seen[k - 1].lps));
            // The level is the one the round froze its users at.
            let frozen_here = (0..20).filter(|&n| out.frozen_round[n] == p.round);
            for n in frozen_here {
                let rel = (out.levels[n] - p.level).abs() / p.level;
                assert!(
                    rel < 1e-9,
                    "seed {seed} round {}: {} vs {}",
                    p.round,
                    out.levels[n],
                    p.level
                );
            }
        }
        let last = seen.last().unwrap();
        assert_eq!(last.frozen, 20);
        assert_eq!(last.lps, out.lps);
    }
}
