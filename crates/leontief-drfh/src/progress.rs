//! Progress of the max-min operator's rounds, for a caller that shows it
//! (the command line's progress bar on long solves).
//!
//! The rounds of the general path can run for minutes (placement lists at
//! 1,000 x 10,000 with 10 eligible servers each: hundreds of rounds, each
//! an LP over every pair); after each round the operator reports how many
//! users are frozen.

use std::sync::Arc;

/// Where the operator's rounds stand, reported after each round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundProgress {
    /// Rounds finished.
    pub round: usize,
    /// Users frozen so far, of `users`.
    pub frozen: usize,
    /// Users that can run (the others are fixed at zero before round 1).
    pub users: usize,
    /// LPs solved so far.
    pub lps: usize,
    /// The level the round froze its users at (s_n / w_n).
    pub level: f64,
}

/// A callback the rounds report to (cheap to clone; called from the
/// solving thread).
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(&RoundProgress) + Send + Sync>);

impl Progress {
    /// A callback from a closure.
    pub fn new(f: impl Fn(&RoundProgress) + Send + Sync + 'static) -> Progress {
        Progress(Arc::new(f))
    }

    /// Report `p`.
    pub fn report(&self, p: &RoundProgress) {
        (self.0)(p)
    }
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// The same callback (settings compare equal when they report to the same
/// place).
impl PartialEq for Progress {
    fn eq(&self, other: &Progress) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
