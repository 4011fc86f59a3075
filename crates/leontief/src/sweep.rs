//! One mechanism over a range of one numeric parameter (tradeoff curves,
//! Figs. 13-16 of 002, and utilisation-versus-parameter plots).
//!
//! Percent fairness is the allocation's smallest normalised dominant share
//! over that of exact DRFH on the same instance (DRF on one server), times
//! 100; percent efficiency is its total tasks over the NFC optimum, times
//! 100 (Sec. V of 002).

use crate::error::Error;
use crate::families::ConicPoint;
use crate::mechanism::{Mechanism, ParamError, Params};
use crate::options::Options;
use crate::references::References;
use crate::solve::{finish, restore_units, solve_one};
use crate::Solution;
use leontief_core::Instance;

/// The swept parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Swept {
    /// beta (fds, gfj, pnorm).
    Beta,
    /// alpha (fds, gfj, pnorm: the alpha-fair line).
    Alpha,
    /// k (kdf, kdf-online), rounded.
    K,
    /// slots (slots), rounded.
    Slots,
    /// The weight of the named queue (hdrf, hdrfh, hdrf-naive).
    QueueWeight(String),
}

impl Swept {
    /// The parameter's name.
    pub fn name(&self) -> &'static str {
        match self {
            Swept::Beta => "beta",
            Swept::Alpha => "alpha",
            Swept::K => "k",
            Swept::Slots => "slots",
            Swept::QueueWeight(_) => "queue_weight",
        }
    }
}

/// A sweep: `mechanism` with the fixed parameters `base`, and `swept` set
/// to each of `values` in turn.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSpec {
    /// The mechanism's name.
    pub mechanism: String,
    /// The parameters held fixed (lambda too: with a beta sweep, a fixed
    /// lambda; without, lambda = (1-beta)/beta).
    pub base: Params,
    /// The swept parameter.
    pub swept: Swept,
    /// Its values.
    pub values: Vec<f64>,
}

/// One point of a sweep.
#[derive(Debug)]
pub struct SweepPoint {
    /// The swept parameter's value.
    pub value: f64,
    /// The verified answer, or why this point was refused (bad input for
    /// this value only: degenerate (beta, lambda), k = 0, ...).
    pub solution: Result<Solution, Error>,
}

/// A whole sweep.
#[derive(Debug)]
pub struct Sweep {
    /// The references every point is measured against.
    pub references: References,
    /// One point per value, in order.
    pub points: Vec<SweepPoint>,
}

/// Run the sweep. The alpha-fair line and regions A and B of fds and gfj
/// are warm-started from point to point (one pool, each point from the
/// previous point's prices); a point that does not reach `optimal` that
/// way is solved afresh, with its fallbacks. A parameter error that does
/// not depend on the swept value stops the sweep (`Err`); one that does
/// (a refused (beta, lambda)) is that point's `Err`.
pub fn sweep(
    original: &Instance,
    spec: &SweepSpec,
    options: &Options,
    tick: &dyn Fn(),
) -> Result<Sweep, Error> {
    let highs = options.backend()?;
    // Every point in the solver's units (see `solve`), returned in the user's.
    let (instance, scaling) = original.normalised();
    let references = References::compute(&highs, &instance)?;
    if let Swept::QueueWeight(q) = &spec.swept {
        if !matches!(
            spec.mechanism.as_str(),
            "hdrf" | "hdrfh" | "hdrf-naive" | "yarn-fair" | "kai" | "volcano-proportion" | "kueue"
        ) {
            return Err(crate::error::bad_input(format!(
                "a queue's weight is swept for hdrf, hdrfh, hdrf-naive and the schedulers' algorithms (yarn-fair, kai, volcano-proportion, kueue), not {}",
                spec.mechanism
            )));
        }
        if !original.queues().iter().any(|x| &x.name == q) {
            return Err(crate::error::bad_input(format!(
                "the instance has no queue named \"{q}\""
            )));
        }
    }
    let mut line: Option<leontief_fds::LineSolver> = None;
    let mut line_family: Option<leontief_fds::Family> = None;
    let mut region: Option<leontief_fds::RegionSolver> = None;
    let mut region_family: Option<leontief_fds::Family> = None;
    let mut points = Vec::with_capacity(spec.values.len());
    for &v in &spec.values {
        tick();
        let mut p = spec.base.clone();
        match spec.swept {
            Swept::Beta => p.beta = Some(v),
            Swept::Alpha => p.alpha = Some(v),
            Swept::K => p.k = Some(v.round().max(0.0) as usize),
            Swept::Slots => p.slots = Some(v.round().max(0.0) as u32),
            Swept::QueueWeight(_) => {}
        }
        // The instance of this point: the queue's weight set to v (a
        // weight the format refuses is this point's refusal).
        let reweighted = match &spec.swept {
            Swept::QueueWeight(q) => {
                let mut raw = original.to_raw();
                for queue in raw.queues.iter_mut().flatten() {
                    if &queue.name == q {
                        queue.weight = Some(v);
                    }
                }
                match Instance::new(raw) {
                    Ok(i) => Some(i.normalised().0),
                    Err(e) => {
                        points.push(SweepPoint {
                            value: v,
                            solution: Err(crate::error::bad_input(e.to_string())),
                        });
                        continue;
                    }
                }
            }
            _ => None,
        };
        let instance = reweighted.as_ref().unwrap_or(&instance);
        // A point whose (beta, lambda) is refused (degenerate, scale-free)
        // is a point refused; any other bad parameter stops the sweep.
        let refused_point = spec.swept == Swept::Beta
            && leontief_fds::classify(v, p.lambda.unwrap_or((1.0 - v) / v)).is_err();
        let asked = match Mechanism::from_params(&spec.mechanism, &p) {
            Ok(m) => m,
            Err(e @ ParamError::Refused(_)) if refused_point => {
                points.push(SweepPoint {
                    value: v,
                    solution: Err(e.into()),
                });
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        asked.validate()?;
        let m = asked;
        let warm = match m.conic() {
            Some(ConicPoint {
                family: f @ (leontief_fds::Family::Fds | leontief_fds::Family::Gfj),
                beta,
                lambda,
                ..
            }) if (lambda - (1.0 - beta) / beta).abs() <= 1e-12 * lambda.abs().max(1.0) => {
                if line_family != Some(f) {
                    line = leontief_fds::LineSolver::new(instance, f);
                    line_family = Some(f);
                }
                line.as_mut()
                    .and_then(|l| l.solve(instance, beta))
                    .filter(|a| a.status == leontief_core::Status::Optimal)
            }
            Some(ConicPoint {
                family: f,
                beta,
                lambda,
                ..
            }) if matches!(
                leontief_fds::classify(beta, lambda),
                Ok(leontief_fds::Classified::Region(
                    leontief_fds::Region::A | leontief_fds::Region::B
                ))
            ) =>
            {
                if region_family != Some(f) {
                    region = leontief_fds::RegionSolver::new(instance, f);
                    region_family = Some(f);
                }
                region
                    .as_mut()
                    .and_then(|r| r.solve(instance, beta, lambda))
            }
            _ => None,
        };
        let solution = match warm {
            Some(a) => finish(&highs, instance, &m, a, options.verify),
            None => solve_one(
                &highs,
                instance,
                &m,
                options.verify,
                &options.max_min_settings(None),
            ),
        }
        .map(|mut a| {
            restore_units(original, &scaling, &mut a);
            a
        });
        match solution {
            Err(e) if !e.is_bad_input() => return Err(e),
            solution => points.push(SweepPoint { value: v, solution }),
        }
    }
    Ok(Sweep { references, points })
}
