//! How a call runs: verification, time limit, LP algorithm.

use crate::error::{refused_setting, Error};
use leontief_highs::{Highs, HighsSettings};

pub use leontief_audit::verify::VerifyMode;

/// Which LP algorithm the back end runs (the project's own choice; each
/// back end maps it onto its own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Interior point with crossover for large LPs, the back end's choice
    /// otherwise (HiGHS: [`leontief_highs::Algorithm::Auto`]).
    #[default]
    Auto,
    /// The back end chooses for every LP (HiGHS: dual simplex for most).
    Choose,
    /// Simplex.
    Simplex,
    /// Interior point with crossover.
    InteriorPoint,
}

impl Algorithm {
    /// HiGHS's algorithm for this choice.
    fn highs(self) -> leontief_highs::Algorithm {
        match self {
            Algorithm::Auto => leontief_highs::Algorithm::Auto,
            Algorithm::Choose => leontief_highs::Algorithm::Choose,
            Algorithm::Simplex => leontief_highs::Algorithm::Simplex,
            Algorithm::InteriorPoint => leontief_highs::Algorithm::InteriorPoint,
        }
    }
}

/// Options of [`solve`](crate::solve) and the other entry points:
/// backend-neutral; each back end validates what it takes of them and
/// refuses a bad value naming the option.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Options {
    /// When to run the verification.
    pub verify: VerifyMode,
    /// Seconds: per LP (HiGHS) and per cone program (Clarabel), and for
    /// the whole best-response run of psdsf and vds and the whole
    /// sequence of max-min rounds; a run that hits it ends with status
    /// `time_limit`.
    pub time_limit: Option<f64>,
    /// The LP algorithm.
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
        let s = HighsSettings {
            algorithm: self.algorithm.highs(),
            time_limit: self.time_limit,
            ..HighsSettings::default()
        };
        Highs::new(s)
            .map_err(|e| refused_setting(option_of(e.field), shown(self.time_limit), e.to_string()))
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

/// Clarabel with the run's time limit (per cone program, as for LPs);
/// a limit Clarabel refuses is refused as the option it came from.
pub(crate) fn clarabel(highs: &Highs) -> Result<leontief_clarabel::Clarabel, Error> {
    let time_limit = highs.settings().time_limit;
    leontief_clarabel::Clarabel::new(leontief_clarabel::ClarabelSettings {
        time_limit,
        ..leontief_clarabel::ClarabelSettings::default()
    })
    .map_err(|e| refused_setting(option_of(e.field), shown(time_limit), e.to_string()))
}

/// A time limit as the user gave it.
fn shown(t: Option<f64>) -> String {
    t.map_or_else(|| "none".into(), |t| t.to_string())
}

/// The option of [`Options`] a back end's setting `field` comes from.
fn option_of(field: &str) -> &'static str {
    match field {
        "time_limit" => "time_limit",
        "algorithm" => "algorithm",
        _ => "options",
    }
}
