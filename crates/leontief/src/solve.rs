//! The dispatch: every mechanism solved in normalised units, its
//! references and verification added, and the answer mapped back to the
//! instance's units.

use crate::bbf::BbfKind;
use crate::error::{bad_input, Error};
use crate::families::ConicPoint;
use crate::mechanism::{Mechanism, OdeVariable, PsdsfSelect, VdsSchedule};
use crate::options::VerifyMode;
use crate::references::References;
use crate::{bbf, conic, server_based, verify};
use leontief_core::Instance;
use leontief_drfh::{maxmin::MaxMinSettings, DrfhError};
use leontief_highs::Highs;

pub(crate) fn solve_one(
    highs: &Highs,
    instance: &Instance,
    mechanism: &Mechanism,
    verify_mode: VerifyMode,
    settings: &MaxMinSettings,
) -> Result<leontief_core::Allocation, Error> {
    mechanism.validate()?;
    let (scaled, scaling) = instance.normalised();
    // Exact DRFH's only reference solve, NFC's total, does not depend on
    // the answer: it runs beside the solve (the pooled path's Clarabel
    // solve takes one core; measured at 100 x 1,000 with 4 resources,
    // 0.32 -> 0.26 s end to end).
    let size = scaled.num_users() * scaled.num_entries();
    let (a, nfc) = if *mechanism == Mechanism::Drfh && references_at(verify_mode, size, true) {
        let (a, nfc) = rayon::join(
            || solve_unchecked(highs, &scaled, mechanism, settings),
            || References::nfc_total(highs, &scaled),
        );
        (a?, Some(nfc?))
    } else {
        (solve_unchecked(highs, &scaled, mechanism, settings)?, None)
    };
    let mut a = finish_with(highs, &scaled, mechanism, a, verify_mode, nfc)?;
    restore_units(instance, &scaling, &mut a);
    Ok(a)
}

/// An allocation computed on `instance.normalised()` in the units of
/// `instance`: task counts are the same numbers on both (the factors are
/// powers of two), metrics are recomputed on the original, and every price
/// per unit of a resource (the server prices of vds) is mapped back
/// exactly.
pub(crate) fn restore_units(
    original: &Instance,
    scaling: &leontief_core::Scaling,
    a: &mut leontief_core::Allocation,
) {
    a.metrics = leontief_core::Metrics::compute(original, &a.tasks);
    if let Some(gap) = a.gap.as_mut() {
        if let Some(refs) = gap.references.as_mut() {
            refs.leftover_capacity = a.metrics.unused_capacity.clone();
        }
        if let Some(eq) = gap.equilibrium.as_mut() {
            for row in eq.server_prices.iter_mut() {
                for (r, p) in row.iter_mut().enumerate() {
                    *p = scaling.price_to_original(r, *p);
                }
            }
        }
    }
    if let Some(c) = a.certificate.as_mut() {
        for round in &mut c.rounds {
            for row in &mut round.prices {
                for (r, p) in row.iter_mut().enumerate() {
                    *p = scaling.price_to_original(r, *p);
                }
            }
        }
    }
    if let Some(c) = a.total_certificate.as_mut() {
        for row in &mut c.prices {
            for (r, p) in row.iter_mut().enumerate() {
                *p = scaling.price_to_original(r, *p);
            }
        }
    }
    if let Some(h) = a.hierarchy.as_mut() {
        for q in &mut h.queues {
            for (r, u) in q.usage.iter_mut().enumerate() {
                *u = scaling.amount_to_original(r, *u);
            }
        }
    }
    if let Some(s) = a.scheduler.as_mut() {
        let back = |v: &mut Vec<f64>| {
            for (r, x) in v.iter_mut().enumerate() {
                *x = scaling.amount_to_original(r, *x);
            }
        };
        for q in &mut s.queues {
            back(&mut q.share);
            back(&mut q.usage);
            back(&mut q.request);
        }
        for u in &mut s.users {
            back(&mut u.share);
        }
        if let Some(q) = s.quantum.as_mut() {
            back(q);
        }
    }
    // BBF prices are per unit of capacity fraction: the same in any units.
}

/// The references of Sec. V of 002 and the verification, for an
/// allocation however it was computed (the sweep's warm-started line).
pub(crate) fn finish(
    highs: &Highs,
    instance: &Instance,
    mechanism: &Mechanism,
    a: leontief_core::Allocation,
    verify_mode: VerifyMode,
) -> Result<leontief_core::Allocation, Error> {
    finish_with(highs, instance, mechanism, a, verify_mode, None)
}

/// [`finish`], with NFC's total already solved when `nfc` is `Some`.
fn finish_with(
    highs: &Highs,
    instance: &Instance,
    mechanism: &Mechanism,
    mut a: leontief_core::Allocation,
    verify_mode: VerifyMode,
    nfc: Option<Option<f64>>,
) -> Result<leontief_core::Allocation, Error> {
    add_references(highs, instance, &mut a, verify_mode, nfc)?;
    a.verification = Some(verify::verify(highs, instance, mechanism, &a, verify_mode)?);
    Ok(a)
}

fn solve_unchecked(
    highs: &Highs,
    instance: &Instance,
    mechanism: &Mechanism,
    settings: &MaxMinSettings,
) -> Result<leontief_core::Allocation, Error> {
    use leontief_fds::Family;
    use leontief_sim::Heuristic;
    let drfh_error = |e: DrfhError| match e {
        DrfhError::InvalidParameter { .. } => bad_input(e.to_string()),
        DrfhError::Backend(b) => Error::from(b),
    };
    let heuristic = |h: Heuristic| -> Result<leontief_core::Allocation, Error> {
        let mut a = leontief_sim::run(instance, &h).map_err(|e| bad_input(e.to_string()))?;
        // Always the distance to the matching exact mechanism.
        let e = match h {
            Heuristic::KdfOnline { k, .. } => leontief_drfh::kdf(highs, instance, k, settings),
            _ => leontief_drfh::drfh(highs, instance, settings),
        }
        .map_err(drfh_error)?;
        a.gap = Some(leontief_core::details::Gap {
            heuristic: Some(leontief_sim::gap(instance, &a, &e)),
            ..Default::default()
        });
        Ok(a)
    };
    let conic = |point: ConicPoint| conic::solve(highs, instance, point);
    let hier = |v: leontief_hier::Variant| {
        leontief_hier::solve(highs, instance, v).map_err(|e| match e {
            leontief_hier::HierError::Backend(b) => Error::from(b),
        })
    };
    // A production scheduler's algorithm, with its distance to the exact
    // hierarchical allocation on the same pooled cluster.
    let scheduler = |s: leontief_sched::Scheduler| -> Result<leontief_core::Allocation, Error> {
        let mut a = leontief_sched::run(instance, s).map_err(|e| bad_input(e.to_string()))?;
        let exact = hier(leontief_hier::Variant::Hdrf)?;
        a.gap = Some(leontief_core::details::Gap {
            heuristic: Some(leontief_sim::gap(instance, &a, &exact)),
            ..Default::default()
        });
        Ok(a)
    };
    Ok(match mechanism {
        Mechanism::Drf => leontief_drfh::drf(instance),
        Mechanism::Drfh => leontief_drfh::drfh(highs, instance, settings).map_err(drfh_error)?,
        Mechanism::Kdf { k } => {
            leontief_drfh::kdf(highs, instance, *k, settings).map_err(drfh_error)?
        }
        Mechanism::NaiveDrf => leontief_drfh::naive_drf(instance),
        Mechanism::Hdrf => hier(leontief_hier::Variant::Hdrf)?,
        Mechanism::Hdrfh => hier(leontief_hier::Variant::Hdrfh)?,
        Mechanism::HdrfNaive => hier(leontief_hier::Variant::Naive)?,
        Mechanism::YarnFair => scheduler(leontief_sched::Scheduler::YarnFair)?,
        Mechanism::Kai => scheduler(leontief_sched::Scheduler::Kai)?,
        Mechanism::VolcanoProportion => scheduler(leontief_sched::Scheduler::VolcanoProportion)?,
        Mechanism::Kueue => scheduler(leontief_sched::Scheduler::Kueue)?,
        Mechanism::Nfc => leontief_drfh::nfc(highs, instance).map_err(drfh_error)?,
        Mechanism::Tsf => leontief_drfh::tsf(highs, instance, settings).map_err(drfh_error)?,
        Mechanism::FirstFit => heuristic(Heuristic::FirstFit)?,
        Mechanism::BestFit { normaliser } => heuristic(Heuristic::BestFit {
            normaliser: Mechanism::normaliser_index(normaliser.as_deref(), instance)?,
        })?,
        Mechanism::Slots { slots } => heuristic(Heuristic::Slots { slots: *slots })?,
        Mechanism::KdfOnline { k, on_full } => heuristic(Heuristic::KdfOnline {
            k: *k,
            on_full: Mechanism::on_full(on_full),
        })?,
        Mechanism::Fds { fairness } => conic(ConicPoint::of(Family::Fds, fairness))?,
        Mechanism::Gfj { fairness } => conic(ConicPoint::of(Family::Gfj, fairness))?,
        Mechanism::Pnorm { p, fairness } => conic(ConicPoint::of(Family::PNorm(*p), fairness))?,
        Mechanism::BbfEg { method } => {
            bbf::solve(highs, instance, &BbfKind::Eg { method: *method })?
        }
        Mechanism::BbfOde { by, trajectory } => bbf::solve(
            highs,
            instance,
            &BbfKind::Ode {
                by_t: *by == OdeVariable::T,
                trajectory: trajectory.clone(),
            },
        )?,
        Mechanism::Psdsf { select } => server_based::psdsf(
            highs,
            instance,
            *select == PsdsfSelect::MaxTasks,
            *select != PsdsfSelect::Sweeps,
        )?,
        Mechanism::Vds { alpha, .. } if *alpha == 1.0 => conic(ConicPoint::vds_alpha_one())?,
        Mechanism::Vds { alpha, schedule } => {
            // Solved with the weights scaled (see `weights_normalised`);
            // the printed price scales are for the weights as given:
            // e^ell scales with w^alpha.
            let (reweighted, f) = instance.weights_normalised();
            let jacobi = match schedule {
                VdsSchedule::GaussSeidel => None,
                VdsSchedule::Jacobi(t) => Some(*t),
            };
            let mut a = server_based::vds(highs, &reweighted, *alpha, jacobi)?;
            a.metrics = leontief_core::Metrics::compute(instance, &a.tasks);
            if let Some(eq) = a.gap.as_mut().and_then(|g| g.equilibrium.as_mut()) {
                for e in eq.server_log_price_scale.iter_mut() {
                    *e -= alpha * f.ln();
                }
            }
            a
        }
    })
}

/// User-server pairs (N x K) up to which an answer gets its two
/// reference solves (a DRFH max-min and an NFC LP) under `--verify auto`.
const REFERENCE_PAIRS: usize = 20_000;

/// Pairs up to which an exact DRFH answer, its own fairness reference,
/// gets its one reference solve (NFC's total) under `--verify auto`.
/// NFC's column generation took 0.6-0.9 s alone at 10^6 pairs (300 x
/// 3,000 with 4 resources and placement by attribute; 1,000 x 1,000 with
/// 6, weights and caps on half the users), within noise of DRFH's wall
/// time beside it. At 10^7 pairs with 6 resources it took 10-14 s alone,
/// 7 s of DRFH's 24 s beside it (weights and caps, 1,000 x 10,000), and
/// at 10^8 pairs 74 s alone, 34 s of DRFH's 84 s (10,000 x 10,000, seed
/// 2): the reference cost more than the answer.
const OWN_REFERENCE_PAIRS: usize = 1_000_000;

/// Whether an answer on `size` pairs gets its references under
/// `verify_mode` (`own`: an exact DRFH answer, which needs NFC's alone).
fn references_at(verify_mode: VerifyMode, size: usize, own: bool) -> bool {
    match verify_mode {
        VerifyMode::Never => false,
        VerifyMode::Always => true,
        VerifyMode::Auto => {
            size <= if own {
                OWN_REFERENCE_PAIRS
            } else {
                REFERENCE_PAIRS
            }
        }
    }
}

/// Where an allocation sits between fairness and efficiency (Sec. V of
/// 002), for every mechanism: percent fairness (its smallest normalised
/// dominant share against exact DRFH's), percent efficiency (its total
/// tasks against NFC's) and leftover capacity, merged into `gap`. Only
/// when the verification runs (not `--verify never`) and the instance
/// has at most [`REFERENCE_PAIRS`] pairs, or [`OWN_REFERENCE_PAIRS`] for
/// an exact DRFH answer (`--verify always`: at any size).
fn add_references(
    highs: &Highs,
    instance: &Instance,
    a: &mut leontief_core::Allocation,
    verify_mode: VerifyMode,
    nfc: Option<Option<f64>>,
) -> Result<(), Error> {
    // N x K, not the eligible pairs: a reference DRFH solve with sparse
    // placement lists costs far more than its pairs say (hundreds of
    // rounds), so they get references only up to this size as before.
    let size = instance.num_users() * instance.num_entries();
    let own_drfh = a.mechanism == "drfh" && a.status == leontief_core::Status::Optimal && !a.pooled;
    if !a.status.has_solution() || !references_at(verify_mode, size, own_drfh) {
        return Ok(());
    }
    // A pooled allocation (drf, BBF) is measured against the pooled
    // references: on the real servers it need not be placeable.
    let pooled;
    let reference_instance = if a.pooled {
        pooled = instance.pooled();
        &pooled
    } else {
        instance
    };
    let refs = if own_drfh {
        let total = match nfc {
            Some(total) => total,
            None => References::nfc_total(highs, instance)?,
        };
        match total {
            Some(efficiency) => References {
                fairness: a.metrics.min_normalised_share(),
                efficiency,
            },
            None => return Ok(()),
        }
    } else {
        References::compute(highs, reference_instance)?
    };
    let min = a.metrics.min_normalised_share();
    let references = leontief_core::details::ReferenceGap {
        percent_fairness: refs.percent_fairness(min),
        percent_efficiency: refs.percent_efficiency(a.metrics.total_tasks),
        leftover_capacity: a.metrics.unused_capacity.clone(),
        fairness_reference: "exact DRFH (DRF on one server): smallest normalised dominant share"
            .into(),
        efficiency_reference: "NFC: maximum total tasks".into(),
        references_on: if a.pooled {
            "the pooled servers (the allocation is pooled)"
        } else {
            "the servers as given"
        }
        .into(),
    };
    // Keep what the mechanism put there (heuristics' distance to the exact
    // mechanism, the region-N search, the equilibrium).
    a.gap.get_or_insert_with(Default::default).references = Some(references);
    Ok(())
}

/// `solve_one` for the mechanism as asked (vds at alpha = 1 runs the
/// proportional-fairness program and says why).
pub(crate) fn solve_named(
    highs: &Highs,
    instance: &Instance,
    mechanism: &Mechanism,
    verify_mode: VerifyMode,
    settings: &MaxMinSettings,
) -> Result<leontief_core::Allocation, Error> {
    let mut a = solve_one(highs, instance, mechanism, verify_mode, settings)?;
    if matches!(mechanism, Mechanism::Vds { .. }) && mechanism.conic().is_some() {
        a.mechanism = "vds".into();
        a.notes.push("alphaPF-VDS at alpha = 1: gamma drops out of every server's utility, and the Nash equilibrium among servers is the optimum of max sum_n w_n log x_n over all servers jointly (one exponential-cone program, x_n unique); equilibrium and optimum coincide".into());
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_by_size_mode_and_answer() {
        // Every answer: two reference solves up to 20,000 pairs.
        assert!(references_at(VerifyMode::Auto, REFERENCE_PAIRS, false));
        assert!(!references_at(VerifyMode::Auto, REFERENCE_PAIRS + 1, false));
        // An exact DRFH answer: NFC's alone, up to 10^6 pairs.
        assert!(references_at(VerifyMode::Auto, 1_000_000, true));
        assert!(!references_at(VerifyMode::Auto, 1_000_001, true));
        // `always` at any size, `never` at none.
        for own in [false, true] {
            assert!(references_at(VerifyMode::Always, 100_000_000, own));
            assert!(!references_at(VerifyMode::Never, 1, own));
        }
    }
}
