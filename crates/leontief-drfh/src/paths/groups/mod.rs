//! The pooled levels realised group by group, on many entries.
//!
//! The pooled-first path ([`crate::paths::pooled`]) asks one LP for a per-server
//! allocation that gives every user its pooled level. With 10,000 users
//! on 10,000 entries that LP's feasible set has no interior (the pooled
//! levels saturate a resource on every entry), and interior point
//! methods spend most of their time in its last iterations.
//!
//! The same question splits in two levels:
//!
//! 1. The entries are dealt into groups of about [`GROUP_ENTRIES`], in
//!    turn along their direction (each group a sample of every
//!    direction), each group of one kind of entry (the same resources
//!    present: a GPU on some servers makes two kinds), and each group is
//!    merged into [`SUB_POOLS`] servers ([`SUB_POOLS_DENSE`] past
//!    [`DENSE_BLOCK_USERS`] users, and [`SUB_POOLS`] again where those
//!    fall short), its entries sorted by direction
//!    and cut into runs (one server per group would know only the group's
//!    total: with caps on half the users, 9 of 14 groups could not
//!    realise what such a step gave them). On those few servers the same LP
//!    (`crate::paths::pooled::at_levels`, on Clarabel; past
//!    [`DENSE_BLOCK_USERS`] with Clarabel's choice of LDL, a supernodal
//!    one where the factor holds a dense block) finds each user's tasks
//!    per group (summed over its servers) with every user at its pooled
//!    level. Each user may use (every server of) two
//!    of the groups that hold every resource it demands: its own (the
//!    users, sorted by direction, dealt in turn; where the groups hold
//!    different resources, the group with the most room left in what the
//!    user demands, see [`deal_users`]) and one more drawn by a
//!    fixed hash, so every group receives a sample of
//!    every direction and the users link the groups into one well
//!    connected graph along which capacity moves. A user whose use at its
//!    level would take more than [`HEAVY_SHARE`] of a group's capacity in
//!    a resource (k-DF's levels give users whose tasks are small in their
//!    two largest shares up to 70% of a group) may use as many groups as
//!    bring it under, so that no group's step 2 hinges on packing a few
//!    such users (where there are at least `HEAVY_GROUPS` groups). When
//!    two groups leave
//!    pricing to add servers of others (the interior point then spreads
//!    a group's spare room over every user priced there, crowding its
//!    step 2), the step runs again with `MORE_GROUPS` more groups for
//!    each user that pricing placed outside its own, and the answer whose
//!    most crowded group has fewer users is kept. With more than
//!    [`FEW_SHORT_RESOURCES`] resources and more entries than twice the
//!    users, two more rules: the users nearest
//!    each resource alone ([`pure_users`]) may use every group (an entry
//!    rich in the resource the levels fill and poor in several others can
//!    be filled only by such users, and a group dealt none of them cannot
//!    fill it, whatever its shares), and step 1 runs first on groups that
//!    keep [`SLACK_KEPT`] of each resource's room at the pooled levels, so
//!    that no group is given users that fill three or four resources at
//!    once.
//! 2. Each group then realises its users' tasks on its own entries: one
//!    LP per group, with about 2 N / G users on [`GROUP_ENTRIES`] entries
//!    (the block interior point method or Clarabel), in parallel.
//!
//!
//! Merging entries only enlarges the feasible set, so step 1 is a
//! relaxation; when every group realises its share in step 2, the union
//! is a per-server allocation with every user at its pooled level, which
//! *is* the max-min answer, certified by the pooled prices like the
//! one-LP path's (the certificate check then reads every pair). Without
//! placement lists the path checks that the prices prove it, each
//! round's room as the audit computes it ([`proved`]), and gives up where
//! they do not. When a
//! group falls short (a group's users cannot fill its entries exactly)
//! the one-LP path runs as before: the split costs time, never
//! exactness. A group that falls short is first solved again together
//! with the next cluster of groups, up to `MAX_MERGED` groups, never all
//! of them nor `MERGED_USERS_MOST` of the users (that LP is about the
//! one-LP path's), and with placement lists and more than 4 resources
//! not when most groups fall short.
//!
//! The parts, each importing only those listed before it: `levels` (the
//! users at their pooled levels, pure users), `deal` (entries into
//! groups, users onto groups), `second_step`, `first_step`, and this
//! file (the path's entry points). Step 2 runs the whole path again
//! within a cluster of list groups that no list divides; it is handed
//! the path as a function (`second_step::Regroup`) rather than
//! importing it.
//!
//! [`GROUP_ENTRIES`]: crate::settings::GROUP_ENTRIES
//! [`deal_users`]: deal::deal_users
//! [`HEAVY_SHARE`]: deal::HEAVY_SHARE
//! [`FEW_SHORT_RESOURCES`]: second_step::FEW_SHORT_RESOURCES
//! [`pure_users`]: levels::pure_users
//! [`SLACK_KEPT`]: first_step::SLACK_KEPT
//! [`proved`]: crate::lp::proof::proved

mod deal;
mod first_step;
mod levels;
mod second_step;
#[cfg(test)]
mod tests;

use crate::outcome::MaxMinOutcome;
use crate::paths::pooled::{Bound, Spent};
use crate::settings::{Columns, DENSE_BLOCK_USERS, SUB_POOLS, SUB_POOLS_DENSE};
use deal::auto;
use first_step::realise_on;
use leontief_core::{Instance, ServerId};
use leontief_model::{BackendError, LpBackend};
use second_step::on_groups;

/// The pooled levels of `bound` realised group by group, where the
/// instance takes that path (`columns`: [`Columns::Auto`] by
/// [`auto`](deal::auto), or [`Columns::Grouped`]; no placement lists, at
/// most [`MAX_KINDS`](deal::MAX_KINDS) kinds of entries). `Err` with what it solved when it does not realise them
/// (nothing where the path does not apply).
pub(crate) fn try_groups<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    bound: &Bound,
    level_tolerance: f64,
    columns: Columns,
) -> Result<Result<MaxMinOutcome, Spent>, BackendError> {
    let runnable_users = bound.runnable.iter().filter(|&&r| r).count();
    let group_entries = match columns {
        Columns::Auto => auto(instance.num_entries(), runnable_users),
        Columns::Grouped(entries) => Some(entries),
        _ => None,
    };
    let Some(entries) =
        group_entries.filter(|&e| e >= 1 && !(placement && instance.has_placement()))
    else {
        return Ok(Err(Spent::default()));
    };
    let mut found = realise(
        backend,
        instance,
        sigma,
        &bound.level,
        &bound.base,
        level_tolerance,
        entries,
    )?;
    if let Ok(out) = &mut found {
        out.first_level = bound.first;
    }
    Ok(found)
}

/// Realise the pooled `level`s (`base`: the pooled filling's rounds and
/// certificates) group by group; `None` when a step falls short or a
/// solve does not end optimal (the caller then runs the one LP). Past
/// [`DENSE_BLOCK_USERS`] users the first step runs on
/// [`SUB_POOLS_DENSE`] sub-pools per group, and where that falls short
/// (coarser sub-pools can leave more round-off idle than the users'
/// levels may absorb) on [`SUB_POOLS`] again.
fn realise<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    level: &[f64],
    base: &MaxMinOutcome,
    level_tolerance: f64,
    entries: usize,
) -> Result<Result<MaxMinOutcome, Spent>, BackendError> {
    let active_users = level.iter().filter(|&&l| l > 0.0).count();
    if active_users <= DENSE_BLOCK_USERS {
        let on = (entries, SUB_POOLS);
        return realise_on(backend, instance, sigma, level, base, level_tolerance, on);
    }
    let on = (entries, SUB_POOLS_DENSE);
    match realise_on(backend, instance, sigma, level, base, level_tolerance, on)? {
        Ok(out) => Ok(Ok(out)),
        Err(spent) => {
            let on = (entries, SUB_POOLS);
            let again = realise_on(backend, instance, sigma, level, base, level_tolerance, on)?;
            Ok(match again {
                Ok(mut out) => {
                    spent.charge(&mut out);
                    Ok(out)
                }
                Err(more) => Err(spent.and(more)),
            })
        }
    }
}

/// The pooled levels realised on the entries of groups already given
/// their users' tasks: `members` the entries of each group, `first` the
/// answer on the groups (its tasks each user's share of each group).
/// With placement lists (`placement`) the groups are those the lists
/// hold alike ([`crate::paths::merge::pool_by_lists`]): every user with a
/// share of a group may use all of its entries; in a cluster of several
/// groups, each user keeps to its list.
pub(crate) fn realise_on_lists<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    bound: &Bound,
    members: &[Vec<ServerId>],
    first: &MaxMinOutcome,
    level_tolerance: f64,
) -> Result<Result<MaxMinOutcome, Spent>, BackendError> {
    let mut found = on_groups(
        backend,
        instance,
        sigma,
        Some(realise::<B>),
        &bound.level,
        &bound.base,
        level_tolerance,
        members,
        first,
        bound.t0,
    )?;
    if let Ok(out) = &mut found {
        out.first_level = bound.first;
    }
    Ok(found)
}
