//! How a call runs: verification, time limit, LP algorithm.

use crate::error::{bad_input, Error};
use leontief_highs::{Highs, HighsSettings};

pub use leontief_highs::Algorithm;

pub use leontief_audit::verify::VerifyMode;

/// Options of [`solve`](crate::solve) and the other entry points.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Options {
    /// When to run the verification.
    pub verify: VerifyMode,
    /// Seconds: per LP (HiGHS) and per cone program (Clarabel), and for
    /// the whole best-response run of psdsf and vds and the whole
    /// sequence of max-min rounds; a run that hits it ends with status
    /// `time_limit`.
    pub time_limit: Option<f64>,
    /// The HiGHS algorithm.
    pub algorithm: Algorithm,
    /// Make every LP of the max-min rounds exact to double-double
    /// precision from HiGHS's basis: always (`Some(true)`), never
    /// (`Some(false)`), or where the instance has placement lists (`None`,
    /// the default; [`leontief_drfh::maxmin::MaxMinSettings::exact_pivots`]).
    pub exact_pivots: Option<bool>,
}

impl Options {
    /// The max-min operator's settings these options describe.
    pub(crate) fn max_min_settings(
        &self,
        progress: Option<&leontief_drfh::progress::Progress>,
    ) -> leontief_drfh::maxmin::MaxMinSettings {
        leontief_drfh::maxmin::MaxMinSettings {
            progress: progress.cloned(),
            exact_pivots: self.exact_pivots,
            ..Default::default()
        }
    }

    /// The HiGHS back end these options describe.
    pub(crate) fn backend(&self) -> Result<Highs, Error> {
        let mut s = HighsSettings {
            algorithm: self.algorithm,
            ..HighsSettings::default()
        };
        if let Some(t) = self.time_limit {
            s = s.with_time_limit(t).map_err(|e| {
                Error::Parameter(crate::ParamError::Invalid {
                    parameter: "time_limit",
                    value: t.to_string(),
                    reason: e.to_string(),
                })
            })?;
        }
        Highs::new(s).map_err(|e| bad_input(e.to_string()))
    }
}

/// When iterative methods (best-response sweeps) must stop: the time
/// limit after `start`, or never.
pub(crate) fn deadline(highs: &Highs, start: std::time::Instant) -> Option<std::time::Instant> {
    highs
        .settings()
        .time_limit
        .and_then(|t| start.checked_add(std::time::Duration::try_from_secs_f64(t).ok()?))
}

/// Clarabel with the run's time limit (per cone program, as for LPs).
pub(crate) fn clarabel(highs: &Highs) -> leontief_clarabel::Clarabel {
    leontief_clarabel::Clarabel::new(leontief_clarabel::ClarabelSettings {
        time_limit: highs.settings().time_limit,
        ..leontief_clarabel::ClarabelSettings::default()
    })
    .unwrap_or_default()
}
