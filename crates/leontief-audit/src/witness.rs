//! What a failed check shows: the users whose tasks change and the
//! allocation that changes them, in names, so a reader can check it.

use crate::polytope::Polytope;
pub use leontief_core::checks::{Change, Placed};
use leontief_core::{Instance, Tasks};
use leontief_model::LoadedLp;

/// The nonzero x_{n,i} of an LP solution on the polytope.
pub(crate) fn placed<L: LoadedLp>(
    instance: &Instance,
    p: &Polytope<L>,
    sol: &[f64],
) -> Vec<Placed> {
    p.pairs
        .iter()
        .filter(|(_, _, c)| sol[c.0] > 0.0)
        .map(|&(n, i, c)| Placed {
            user: instance.users()[n].name.clone(),
            server: instance.servers()[i].name.clone(),
            tasks: sol[c.0],
        })
        .collect()
}

/// The nonzero entries of a dense allocation (per user, per server entry).
pub(crate) fn placed_dense(instance: &Instance, tasks: &Tasks) -> Vec<Placed> {
    tasks
        .nonzeros()
        .filter(|&(_, _, t)| t > 0.0)
        .map(|(n, i, t)| Placed {
            user: instance.users()[n].name.clone(),
            server: instance.servers()[i].name.clone(),
            tasks: t,
        })
        .collect()
}

/// The users whose tasks in `sol` differ from `x` by more than `share`
/// in dominant-share units (mu_n |gets - has|), largest change first.
pub(crate) fn changes<L: LoadedLp>(
    instance: &Instance,
    p: &Polytope<L>,
    x: &[f64],
    sol: &[f64],
    share: f64,
) -> Vec<Change> {
    let mut out: Vec<(f64, Change)> = (0..x.len())
        .filter_map(|n| {
            let gets = sol[p.y[n].0];
            let d = (gets - x[n]).abs() * crate::polytope::mu(instance, n);
            (d > share).then(|| {
                (
                    d,
                    Change {
                        user: instance.users()[n].name.clone(),
                        has: x[n],
                        gets,
                    },
                )
            })
        })
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0));
    out.into_iter().map(|(_, c)| c).collect()
}
