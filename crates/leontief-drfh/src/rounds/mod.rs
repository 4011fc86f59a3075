//! The operator's rounds on its LP ([`crate::lp`]).
//!
//! Each round is one line of `rounds`, a stage over the explicit
//! `state::RoundState`:
//!
//! 1. **limit**: the round limit or the run's time limit ends the rounds.
//! 2. **level**: the level LP, theta maximised with every active user at
//!    least theta ([`crate::lp::retry`] solves it to an answer).
//! 3. **cap jumps**: users whose task cap the level passed freeze at it,
//!    and the round is solved again without them.
//! 4. **verdicts**: an active user whose level row carries a positive
//!    dual at a vertex cannot rise above theta* without pushing another
//!    user below its own (LP duality: theta* - theta >= sum_n y_n slack_n
//!    for every feasible point). In floating point that holds only as far
//!    as the round's own prices prove it ([`crate::lp::duality`]), so a
//!    user its prices do not prove is undecided. With
//!    [`crate::settings::MaxMinSettings::defer_growth`] the undecided
//!    users of a round that froze some are left to the next level LP: its
//!    level rises only if every user it keeps active can rise; if it does
//!    not, it is the same round going on.
//! 5. **growth**: for the users still undecided, theta fixed at theta*
//!    and the sum of their levels maximised; users that end above theta*
//!    can rise and stay active; if none does, none can (one that could
//!    would raise the sum), so all freeze. Iterating on the undecided
//!    users gives the verdicts of one growth LP per user in far fewer
//!    solves.
//! 6. **freeze**: a frozen user's level row is set free and its level
//!    column bounded below by its level: only bounds change, so every
//!    re-solve is warm-started. Some user freezes every round, so at most
//!    N rounds run. With placement lists, the entries of complete rounds'
//!    users are closed to the users still rising ([`crate::lp::closing`]).
//! 7. **live parts**: once the complete rounds' users share no entry with
//!    the live ones, the rounds go on with each connected component of
//!    the live users as an LP of its own ([`live`]).
//!
//! The rounds end through one `state::Stop`: every user frozen, a limit
//! (the allocation is then the last level LP's point, feasible, the
//! frozen users at their exact levels, the others at least at the last
//! of them: [`crate::outcome::Freeze::Rising`]), a round where none froze
//! (a numerical failure), or the live parts.
//!
//! Where the rounds are not exact: with sparse placement lists users
//! sharing servers form chains, and a later round's level can move by
//! 10^7 times a change in an earlier one; HiGHS's 1e-9 tolerances then
//! decide nothing. [`crate::settings::MaxMinSettings::exact_pivots`]
//! continues the primal simplex from HiGHS's basis in double-double
//! arithmetic there ([`leontief_model::polish`]), so that no frozen
//! bound is relaxed; the closed entries remove most of the chains.
//! `docs/design/maxmin-operator.md` has the measurements.

pub mod live;
pub mod state;
pub mod verdicts;

use crate::lp::finish::{stopped, wrap_up};
use crate::outcome::MaxMinOutcome;
use crate::settings::MaxMinSettings;
use leontief_core::{Instance, Status};
use leontief_model::{BackendError, LoadedLp, LpBackend};
pub(crate) use state::RoundsLp;
use state::{RoundState, Stop};
use std::time::Instant;

/// The operator's rounds on `start`'s LP: with every runnable pair, or
/// with the pairs of a seed grown by pricing when `generate`. `t_build`
/// starts the run's time limit.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rounds<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    settings: &MaxMinSettings,
    start: RoundsLp,
    generate: bool,
    t_build: Instant,
) -> Result<MaxMinOutcome, BackendError> {
    let mut st = match RoundState::start(
        backend, instance, sigma, placement, settings, start, generate, t_build,
    )? {
        Ok(st) => st,
        Err(out) => return Ok(out),
    };
    let stop = loop {
        if st.rising() == 0 {
            break Stop::Finished;
        }
        if let Some(stop) = st.limit() {
            break stop;
        }
        let round = match st.level()? {
            Ok(round) => round,
            Err(stop) => break stop,
        };
        let Some(round) = st.jump_caps(round)? else {
            continue;
        };
        let verdicts = st.verdicts(&round);
        let blocked = match st.growth(&round, verdicts)? {
            Ok(blocked) => blocked,
            Err(stop) => break stop,
        };
        if blocked.is_empty() {
            break Stop::NoneFroze;
        }
        st.freeze(blocked, round)?;
        if let Some(parts) = st.live_parts() {
            break Stop::Parts(parts);
        }
    };
    end(st, stop, t_build)
}

/// The last solution's point over all `num_cols` columns of the LP:
/// columns priced in after it was solved hold 0 there (k-DF with a GPU on
/// a fifth of the servers, 1,000 x 3,000: a round's pricing added columns
/// its point did not have, and the allocation read past its end).
fn last_point(last: Option<leontief_model::Solution>, num_cols: usize) -> Vec<f64> {
    let mut x = last.map_or_else(Vec::new, |s| s.x);
    x.resize(num_cols.max(x.len()), 0.0);
    x
}

/// The outcome of rounds ended by `stop`.
fn end<B: LpBackend>(
    st: RoundState<'_, B>,
    stop: Stop,
    t_build: Instant,
) -> Result<MaxMinOutcome, BackendError> {
    let RoundState {
        backend,
        instance,
        sigma,
        settings,
        lp,
        mm,
        mut out,
        active,
        last,
        jumped,
        runnable_users,
        ..
    } = st;
    let num_cols = lp.problem().num_cols();
    match stop {
        Stop::Finished => {
            // No user could run at all: everything is zero.
            let x = last_point(last, num_cols);
            wrap_up(&mut out, &mm, &x, instance, sigma);
        }
        Stop::Early(point) => {
            stopped(
                &mut out,
                &mm,
                point.as_ref(),
                &active,
                num_cols,
                instance,
                sigma,
            );
            return Ok(out);
        }
        Stop::NoneFroze => {
            // Cannot happen in exact arithmetic (see the module docs); stop
            // rather than loop, and say so through the status.
            out.status = out.status.worst(Status::NumericalFailure);
            out.raw_status = "max-min: no user froze in a round".into();
            return Ok(out);
        }
        Stop::Parts(parts) => {
            let round = out.rounds;
            let live = (0..active.len())
                .filter(|&n| mm.runnable[n] && (active[n] || out.frozen_round[n] == round))
                .count();
            // This round's point for the complete rounds' users; the
            // parts' answers for the rest. The LP itself is done with:
            // dropped before the parts run (each part splits again, about
            // a hundred deep at 1,000 x 10,000).
            let x = last_point(last, num_cols);
            drop(lp);
            let mut subs = Vec::with_capacity(parts.len());
            // Users frozen before each part, for the progress reports.
            let mut frozen_before = runnable_users - live;
            let (mut lps_before, mut rounds_before) = (out.lps, round - 1);
            for part in &parts {
                let sub_sigma: Vec<f64> = part.users.iter().map(|&n| sigma[n]).collect();
                let mut sub_settings = settings.clone();
                if let Some(p) = settings.progress.clone() {
                    let (f, l, r) = (frozen_before, lps_before, rounds_before);
                    sub_settings.progress = Some(crate::progress::Progress::new(move |q| {
                        p.report(&crate::progress::RoundProgress {
                            round: q.round + r,
                            frozen: q.frozen + f,
                            users: runnable_users,
                            lps: q.lps + l,
                            level: q.level,
                        })
                    }));
                }
                let sub = rounds(
                    backend,
                    &part.instance,
                    &sub_sigma,
                    true,
                    &sub_settings,
                    RoundsLp::Build(None),
                    false,
                    t_build,
                )?;
                frozen_before += part.users.len();
                lps_before += sub.lps;
                rounds_before += sub.rounds;
                subs.push(sub);
            }
            wrap_up(&mut out, &mm, &x, instance, sigma);
            live::merge(
                &mut out,
                &parts,
                subs,
                round,
                instance.num_entries(),
                instance.num_resources(),
            );
        }
    }
    if jumped {
        out.number_rounds(settings.level_tolerance);
    }
    Ok(out)
}
