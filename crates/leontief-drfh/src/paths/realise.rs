//! Given user totals, split over the servers: the pooled path's machinery
//! (groups of entries first, then one LP on candidate pairs grown by
//! pricing) asked for fixed totals instead of the pooled levels. The
//! hierarchical mechanisms use it to place a pooled answer on the
//! servers: when it fits, it is the answer there too.

use super::groups::{realise_on_lists, try_groups};
use super::merge::ListPools;
use super::pooled::{totals_bound, try_pooled, Pooled};
use crate::outcome::MaxMinOutcome;
use crate::settings::Columns;
use leontief_core::shares::dominant_sigma;
use leontief_core::{Instance, ServerId, Status, Tasks};
use leontief_model::{BackendError, LpBackend};

/// What [`realise`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Realisation {
    /// Tasks per user and server entry; `None` when the totals do not fit
    /// (or the LP did not end optimal).
    pub tasks: Option<Tasks>,
    /// LPs solved.
    pub lps: usize,
}

/// The tasks per user and server entry that give every user `x[n]` tasks
/// at once (capacities, placement lists), and the LPs solved.
pub fn realise<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    x: &[f64],
) -> Result<Realisation, BackendError> {
    let nu = instance.num_users();
    let sigma = dominant_sigma(instance);
    let bound = totals_bound(instance, &sigma, x);
    if (0..nu).any(|n| x[n] > 0.0 && !bound.runnable[n]) {
        return Ok(Realisation {
            tasks: None,
            lps: 0,
        });
    }
    let tolerance = 1e-9;
    let spent = match try_groups(
        backend,
        instance,
        &sigma,
        true,
        &bound,
        tolerance,
        Columns::Auto,
    )? {
        Ok(out) => return Ok(accept(out, x)),
        Err(spent) => spent,
    };
    match try_pooled(backend, instance, &sigma, true, tolerance, bound, spent)? {
        Pooled::Realised(out) => Ok(accept(*out, x)),
        Pooled::Short(_, s) | Pooled::Failed(s) => {
            let mut o = MaxMinOutcome::start(nu, 0);
            s.charge(&mut o);
            Ok(Realisation {
                tasks: None,
                lps: o.lps,
            })
        }
    }
}

/// [`realise`] where the totals come with their shares of the groups of
/// entries every list holds alike (`pools`, `shares[n][g]`, which sum to
/// `x[n]`): each group's users hold their shares on its entries (a group
/// that falls short solved again with the next), else [`realise`].
pub fn realise_on_groups<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    pools: &ListPools,
    shares: &Tasks,
    x: &[f64],
) -> Result<Realisation, BackendError> {
    let nu = instance.num_users();
    let sigma = dominant_sigma(instance);
    let bound = totals_bound(instance, &sigma, x);
    let mut members = vec![Vec::new(); pools.instance.num_entries()];
    for (i, &g) in pools.group_of.iter().enumerate() {
        members[g].push(ServerId(i));
    }
    let first = MaxMinOutcome {
        tasks: shares.clone(),
        ..MaxMinOutcome::start(nu, 0)
    };
    match realise_on_lists(backend, instance, &sigma, &bound, &members, &first, 1e-9)? {
        Ok(out) => {
            let found = accept(out, x);
            if found.tasks.is_some() {
                return Ok(found);
            }
            let mut more = realise(backend, instance, x)?;
            more.lps += found.lps;
            Ok(more)
        }
        Err(spent) => {
            let mut more = realise(backend, instance, x)?;
            more.lps += spent.lps;
            Ok(more)
        }
    }
}

/// The outcome's tasks when it is optimal and gives every user its total
/// (to 1e-9 relative).
fn accept(out: MaxMinOutcome, x: &[f64]) -> Realisation {
    let lps = out.lps;
    let ok = out.status == Status::Optimal
        && out.tasks.users() == x.len()
        && x.iter().enumerate().all(|(n, &want)| {
            let got = out.tasks.user_total(n);
            (got - want).abs() <= 1e-9 * want.abs().max(1.0)
        });
    Realisation {
        tasks: ok.then_some(out.tasks),
        lps,
    }
}
