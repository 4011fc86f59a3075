//! Column generation: solve the loaded LP, price the pairs left out, add
//! the attractive ones, until none prices in.

use crate::lp::build::{column, MaxMinLp};
use crate::lp::duality::{out_of_reach, unit_prices};
use crate::outcome::MaxMinOutcome;
use crate::settings::{ADD_PER_USER, PRICING_TOLERANCE};
use leontief_core::{Instance, ServerId};
use leontief_model::{BackendError, Col, LoadedLp, NewCol};
use std::time::Instant;

const INF: f64 = f64::INFINITY;

/// One pricing pass over every pair left out of `mm` under the duals of
/// `sol` ([`crate::lp::pricing::price`]): the attractive pairs' columns and
/// their (user, entry).
fn priced_columns(
    mm: &MaxMinLp,
    instance: &Instance,
    placement: bool,
    sol: &leontief_model::Solution,
) -> (Vec<NewCol>, Vec<(usize, ServerId)>) {
    let u: Vec<f64> = mm.link.iter().map(|r| -sol.row_dual[r.0]).collect();
    let y = unit_prices(mm, &sol.row_dual);
    // The LP's prices are per unit of level-scaled capacity rows; a
    // pair's reduced cost in those units is u_n - coef_n D_n . y_i.
    let pairs = &mm.pairs;
    let present = |n: usize, i: ServerId| pairs[n].iter().any(|&(j, _)| j == i);
    let priced = crate::lp::pricing::price(
        instance,
        placement,
        &mm.runnable,
        &mm.coef,
        &u,
        &y,
        &present,
        PRICING_TOLERANCE,
        ADD_PER_USER,
        1,
        &|_, _| true,
    );
    let mut new = Vec::new();
    let mut owners = Vec::new();
    for (n, list) in priced.add.iter().enumerate() {
        for &i in list {
            let e = column(
                instance,
                n,
                i,
                mm.coef[n],
                &mm.cap_row,
                &mm.row_scale,
                mm.link[n],
            );
            new.push(NewCol {
                cost: 0.0,
                lower: 0.0,
                upper: INF,
                entries: e,
            });
            owners.push((n, i));
        }
    }
    (new, owners)
}

/// Where [`solve_priced`] ends before no pair prices in.
pub(crate) struct Stop<'a> {
    /// A solve where this column reaches this value (the caller knows no
    /// better value exists).
    pub(crate) reached: (Col, f64),
    /// Each runnable user's level (in the LP's units) at that value: a
    /// solve whose prices prove these levels out of reach
    /// ([`out_of_reach`]), before the last pairs are priced in. For a
    /// caller that keeps nothing of a short answer but its cost: the
    /// solution is then no optimum over every pair.
    pub(crate) want: Option<&'a [f64]>,
}

/// Solve the loaded LP; with column generation, price every pair left out
/// and add the attractive ones until none is left (see [`crate::lp::pricing`]).
/// `None` when a solve left no solution (its status is in `out`).
/// With `stop_at`, the loop also ends where [`Stop`] says.
pub(crate) fn solve_priced<L: LoadedLp>(
    lp: &mut L,
    mm: &mut MaxMinLp,
    generate: bool,
    instance: &Instance,
    placement: bool,
    out: &mut MaxMinOutcome,
    stop_at: Option<Stop<'_>>,
) -> Result<Option<leontief_model::Solution>, BackendError> {
    loop {
        let sol = lp.solve()?;
        if !out.record(&sol) {
            return Ok(None);
        }
        if !generate
            || stop_at.as_ref().is_some_and(|s| {
                sol.x[s.reached.0 .0] >= s.reached.1
                    || s.want.is_some_and(|want| {
                        out_of_reach(mm, instance, placement, &sol.row_dual, want)
                    })
            })
        {
            return Ok(Some(sol));
        }
        let t0 = Instant::now();
        let (new, owners) = priced_columns(mm, instance, placement, &sol);
        let pricing = t0.elapsed().as_secs_f64();
        out.pricing_passes += 1;
        out.pricing_seconds += pricing;
        out.passes.push(leontief_core::PricingPass {
            solve_seconds: sol.seconds,
            pricing_seconds: pricing,
            columns: new.len(),
        });
        if new.is_empty() {
            return Ok(Some(sol));
        }
        let cols = lp.add_cols(&new)?;
        out.columns += cols.len();
        for ((n, i), c) in owners.into_iter().zip(cols) {
            mm.pairs[n].push((i, c));
        }
    }
}
