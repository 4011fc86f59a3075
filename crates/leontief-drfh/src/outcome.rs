//! What the operator returns: the outcome, why each user stopped, the
//! round certificates, and which path ran ([`Path`]).

use leontief_core::{Status, Tasks};

/// Why a user stopped rising.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freeze {
    /// It cannot run anywhere it may be placed (fixed at 0 before round 1).
    CannotRun,
    /// It reached its task cap.
    Capped,
    /// Raising it would lower a user whose level is no larger.
    Blocked,
    /// Still rising when the run's time limit stopped the rounds: it holds
    /// at least the level of the last round solved, not its own
    /// max-min level (see [`MaxMinOutcome::tasks`]).
    Rising,
}

/// The result of the max-min operator.
#[derive(Debug, Clone)]
pub struct MaxMinOutcome {
    /// Worst status over all solves.
    pub status: Status,
    /// Raw backend status of the solve that decided `status`.
    pub raw_status: String,
    /// x_{n,i} (no users when there is no solution).
    pub tasks: Tasks,
    /// Level s_n / w_n of each user.
    pub levels: Vec<f64>,
    /// Round in which each user froze (0: could not run).
    pub frozen_round: Vec<usize>,
    /// Why each user froze.
    pub freeze: Vec<Freeze>,
    /// theta* of round 1 (the paper's single-LP value).
    pub first_level: Option<f64>,
    /// Rounds run.
    pub rounds: usize,
    /// LPs solved.
    pub lps: usize,
    /// Seconds building the LP.
    pub build_seconds: f64,
    /// Seconds in solves.
    pub solve_seconds: f64,
    /// Runnable user-entry pairs.
    pub pairs: usize,
    /// Pair columns the LP held at the end.
    pub columns: usize,
    /// Pricing passes over every runnable pair (column generation).
    pub pricing_passes: usize,
    /// Seconds in pricing passes.
    pub pricing_seconds: f64,
    /// Each pricing pass (its solve, its pricing, the columns it added).
    pub passes: Vec<leontief_core::PricingPass>,
    /// The dual certificate of each round (users frozen by a positive
    /// dual, and those frozen by a growth LP), see [`RoundCertificate`].
    pub certificates: Vec<RoundCertificate>,
    /// Growth LPs solved (each with its pricing passes): rounds whose
    /// users neither a vertex's duals nor the round's prices
    /// (`dual_blocked`) proved blocked.
    pub growth_lps: usize,
    /// Which path produced the outcome, and why it was taken.
    pub path: Path,
    /// Classes solved when identical entries were merged
    /// ([`crate::paths::merge`]).
    pub merged_classes: Option<usize>,
    /// Pairs closed to the users still rising ([`crate::lp::closing`]).
    pub closed_pairs: usize,
    /// Times the rounds went on with the live part alone
    /// ([`crate::rounds::live`]).
    pub live_parts: usize,
    /// Users a round of the pattern master priced blocked but whose
    /// proof left them more room than [`crate::settings::BLOCKED_ROOM`]:
    /// each stayed active for a later round.
    pub deferred_users: usize,
}

impl MaxMinOutcome {
    /// The outcome before any round: `nu` users not placed, `pairs`
    /// runnable pairs, nothing solved (each path fills in the rest).
    pub(crate) fn start(nu: usize, pairs: usize) -> Self {
        MaxMinOutcome {
            status: Status::Optimal,
            raw_status: String::new(),
            tasks: Tasks::default(),
            levels: vec![0.0; nu],
            frozen_round: vec![0; nu],
            freeze: vec![Freeze::CannotRun; nu],
            first_level: None,
            rounds: 0,
            lps: 0,
            build_seconds: 0.0,
            solve_seconds: 0.0,
            pairs,
            columns: 0,
            pricing_passes: 0,
            pricing_seconds: 0.0,
            passes: Vec::new(),
            certificates: Vec::new(),
            growth_lps: 0,
            path: Path::Flat,
            merged_classes: None,
            closed_pairs: 0,
            live_parts: 0,
            deferred_users: 0,
        }
    }

    /// Number the rounds by level, as the flat LP's progressive filling does:
    /// each distinct level (within `tolerance`, relative, of the group's
    /// first) is one round, lowest first. The master freezes every user its
    /// theta capped at once, and a user blocked under degenerate duals (a
    /// zero price) waits for a round whose level does not rise; both get the
    /// flat LP's round this way. The certificates follow their users.
    pub(crate) fn number_rounds(&mut self, tolerance: f64) {
        let mut order: Vec<usize> = (0..self.levels.len())
            .filter(|&n| self.frozen_round[n] > 0)
            .collect();
        order.sort_by(|&a, &b| self.levels[a].total_cmp(&self.levels[b]));
        let raw = self.frozen_round.clone();
        let (mut round, mut group) = (0, f64::NEG_INFINITY);
        for &n in &order {
            if round == 0 || self.levels[n] > group * (1.0 + tolerance) {
                round += 1;
                group = self.levels[n];
            }
            self.frozen_round[n] = round;
        }
        for c in self.certificates.iter_mut() {
            if let Some(&n) = c.users.first() {
                debug_assert!(c.users.iter().all(|&k| raw[k] == raw[n]));
                c.round = self.frozen_round[n];
            }
        }
        self.rounds = round;
        self.first_level = order.first().map(|&n| self.levels[n]);
    }

    /// Account for one solve; false when it left no solution.
    pub(crate) fn record(&mut self, sol: &leontief_model::Solution) -> bool {
        self.lps += 1;
        self.solve_seconds += sol.seconds;
        self.status = self.status.worst(sol.status);
        // Keep the raw status of the solve that decided `status`.
        if sol.status != Status::Optimal || self.raw_status.is_empty() {
            self.raw_status = sol.raw_status.clone();
        }
        sol.status.has_solution()
    }
}

/// The dual certificate of one round: prices per unit of each resource on
/// each entry (`prices[i * m + r] >= 0`, the instance's units) that prove
/// the users listed cannot rise above their round's level without pushing
/// another user below its own (weak duality; see `leontief-audit`'s
/// certificate check).
#[derive(Debug, Clone, PartialEq)]
pub struct RoundCertificate {
    /// The round (1-based).
    pub round: usize,
    /// p_{i,r}, entry-major.
    pub prices: Vec<f64>,
    /// The users these prices certify (frozen in `round`, not capped).
    pub users: Vec<usize>,
}

impl RoundCertificate {
    /// The round as the certificate checks read it: prices per entry, a
    /// row of `m` resources each.
    pub fn to_prices(&self, m: usize) -> leontief_core::RoundPrices {
        leontief_core::RoundPrices {
            round: self.round,
            users: self.users.clone(),
            prices: self.prices.chunks(m.max(1)).map(<[f64]>::to_vec).collect(),
        }
    }
}

/// Which path of the operator produced an outcome (`crate::maxmin`
/// dispatches; the order and the rule of each are in its module docs).
pub use leontief_core::Path;
