//! The HiGHS backend's settings, validated field by field.

/// Column count from which [`Algorithm::Auto`] runs interior point.
pub const AUTO_IPM_COLUMNS: usize = 10_000;

/// Row count below which [`Algorithm::Auto`] runs primal simplex without
/// presolve however many columns: with a basis this small every simplex
/// iteration is cheap. Measured: NFC on the Google cell with 1,000 users
/// (20 rows, 10,000 columns) 119 ms by interior point, 40 ms by HiGHS's
/// default, 6 ms this way.
pub const AUTO_IPM_ROWS: usize = 200;

/// [`Algorithm::Auto`] runs interior point only where the LP has at
/// least this many columns per row. Tall sparse LPs (the max-min rounds
/// with placement lists: 1,000 users x 10,000 servers with 10 eligible
/// each, 11,001 columns and 14,661 rows, 3 entries per column) are
/// solved faster by dual simplex after presolve: 0.09 s against 0.41 s
/// by interior point and crossover (highspy, the round-2 LP). The flat
/// max-min LPs (100 x 1,000: 100,001 columns, about 2,100 rows) keep
/// interior point, and so do the pooled and NFC LPs at 1,000 x 10,000
/// (about 3 columns per row): with 4 here those ran dual simplex and
/// were no faster (1,000 x 10,000 end to end 1.80-2.14 s against
/// 1.40-1.91 s, two runs each, within this machine's noise).
pub const AUTO_IPM_WIDTH: usize = 1;

/// Which HiGHS algorithm to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Interior point (with crossover) for LPs of at least
    /// [`AUTO_IPM_COLUMNS`] columns, [`AUTO_IPM_ROWS`] rows and
    /// [`AUTO_IPM_WIDTH`] columns per row, HiGHS's choice otherwise. Measured on the
    /// DRFH LPs (docs/design/maxmin-operator.md): IPM is 1.5 to 20 times faster from
    /// about 10^4 columns, simplex as fast or faster below and when
    /// warm-started.
    #[default]
    Auto,
    /// HiGHS chooses (dual simplex for most LPs).
    Choose,
    /// Dual/primal simplex.
    Simplex,
    /// Interior point with crossover.
    InteriorPoint,
}

/// Typed HiGHS settings.
#[derive(Debug, Clone, PartialEq)]
pub struct HighsSettings {
    /// Wall-clock limit per solve, seconds (`None`: no limit).
    pub time_limit: Option<f64>,
    /// Simplex iterations per solve (`None`: HiGHS's own limit). Unlike
    /// the time limit it ends a solve at the same point on every machine.
    pub iteration_limit: Option<u32>,
    /// HiGHS `primal_feasibility_tolerance`. Default 1e-9 (HiGHS's own
    /// default is 1e-7; leontief reports exact allocations).
    pub primal_feasibility_tolerance: f64,
    /// HiGHS `dual_feasibility_tolerance`. Default 1e-9.
    pub dual_feasibility_tolerance: f64,
    /// Threads HiGHS may use (`None`: HiGHS decides).
    pub threads: Option<u32>,
    /// Let HiGHS print its log. Default false.
    pub verbose: bool,
    /// Run presolve. Default true.
    pub presolve: bool,
    /// The algorithm. Default [`Algorithm::Auto`].
    pub algorithm: Algorithm,
}

impl Default for HighsSettings {
    fn default() -> Self {
        HighsSettings {
            time_limit: None,
            iteration_limit: None,
            primal_feasibility_tolerance: 1e-9,
            dual_feasibility_tolerance: 1e-9,
            threads: None,
            verbose: false,
            presolve: true,
            algorithm: Algorithm::Auto,
        }
    }
}

/// A setting is out of range.
#[derive(Debug, thiserror::Error)]
#[error("HighsSettings.{field} {reason}")]
pub struct SettingsError {
    /// The field.
    pub field: &'static str,
    /// What is wrong.
    pub reason: String,
}

impl HighsSettings {
    /// Check every field, naming the first bad one.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if let Some(t) = self.time_limit {
            if t.is_nan() || t <= 0.0 {
                return Err(SettingsError {
                    field: "time_limit",
                    reason: format!("must be > 0 seconds (got {t})"),
                });
            }
        }
        for (field, v) in [
            (
                "primal_feasibility_tolerance",
                self.primal_feasibility_tolerance,
            ),
            (
                "dual_feasibility_tolerance",
                self.dual_feasibility_tolerance,
            ),
        ] {
            if v.is_nan() || v <= 0.0 || v >= 1.0 {
                return Err(SettingsError {
                    field,
                    reason: format!("must be in (0, 1) (got {v})"),
                });
            }
        }
        if self.threads == Some(0) {
            return Err(SettingsError {
                field: "threads",
                reason: "must be >= 1".into(),
            });
        }
        Ok(())
    }

    /// Set the time limit (validated).
    pub fn with_time_limit(mut self, seconds: f64) -> Result<Self, SettingsError> {
        self.time_limit = Some(seconds);
        self.validate().map(|_| self)
    }
}
