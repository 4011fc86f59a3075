//! Where an allocation sits between fairness and efficiency (Sec. V of
//! 002): exact DRFH's smallest normalised dominant share and the NFC
//! total on the same instance.

use crate::error::{could_not_run, Error};
use leontief_core::Instance;
use leontief_drfh::maxmin::MaxMinSettings;
use leontief_highs::Highs;

/// The references of Sec. V of 002 on one instance: exact DRFH's smallest
/// normalised dominant share (DRF on one server) and the NFC total.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct References {
    /// DRFH's smallest normalised dominant share.
    pub fairness: f64,
    /// The NFC optimum.
    pub efficiency: f64,
}

impl References {
    /// Solve DRFH and NFC once.
    pub fn compute(highs: &Highs, instance: &Instance) -> Result<References, Error> {
        let settings = MaxMinSettings::default();
        let drfh = leontief_drfh::drfh(highs, instance, &settings)
            .map_err(|e| could_not_run(format!("reference DRFH: {e}")))?;
        let nfc = leontief_drfh::nfc(highs, instance)
            .map_err(|e| could_not_run(format!("reference NFC: {e}")))?;
        Ok(References {
            fairness: drfh.metrics.min_normalised_share(),
            efficiency: nfc.metrics.total_tasks,
        })
    }

    /// The efficiency reference of an exact DRFH answer (which is its own
    /// fairness reference): the NFC total alone (one solve: NFC's column
    /// generation, about a tenth of DRFH's time at 10^7 pairs; no tasks
    /// matrix). `None` when NFC ends without an optimum (the answer then
    /// has no references, as above the size limit).
    pub fn nfc_total(highs: &Highs, instance: &Instance) -> Result<Option<f64>, Error> {
        leontief_drfh::nfc::nfc_total(highs, instance)
            .map_err(|e| could_not_run(format!("reference NFC: {e}")))
    }

    /// 100 x (smallest normalised share) / DRFH's.
    pub fn percent_fairness(&self, min_share: f64) -> f64 {
        100.0 * min_share / self.fairness
    }

    /// 100 x (total tasks) / the NFC optimum.
    pub fn percent_efficiency(&self, total: f64) -> f64 {
        100.0 * total / self.efficiency
    }
}
