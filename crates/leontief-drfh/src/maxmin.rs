//! The lexicographic weighted max-min operator (progressive filling): the
//! dispatcher.
//!
//! Every mechanism of the max-min family gives each user a share linear in
//! its task count, `s_n = sigma_n x_n`, and a weight `w_n`; the operator
//! maximises the smallest `s_n / w_n`, then the second smallest, and so on
//! (`docs/mechanisms.md`, "Max-min family"). [`lex_max_min`] tries the
//! paths in this order; the first that answers is the answer, and the
//! outcome says which ran ([`Path`]). Every threshold named here is in
//! [`crate::settings`].
//!
//! 1. **Classes** ([`crate::merge`]): entries with equal capacities that
//!    every placement list holds both or neither of are merged into one
//!    class, the operator runs on the classes, and the answer is split
//!    back per entry.
//! 2. **Capped** (under [`Columns::Auto`]): when every user fits at its
//!    task cap at once, that is the answer, placed without an LP
//!    ([`Path::Capped`]).
//! 3. **Patterns** ([`crate::patterns`]): with at most
//!    [`crate::settings::PATTERN_ROWS`] capacity rows, or without
//!    placement lists up to [`crate::settings::PATTERN_ROWS_MANY_USERS`]
//!    rows when there are [`crate::settings::PATTERN_USERS_PER_ROW`]
//!    users per row or more, or up to
//!    [`crate::settings::PATTERN_ROWS_FEW_LISTS`] rows when the placement
//!    lists are at most [`crate::settings::PATTERN_FEW_LISTS`] distinct
//!    lists (placement by attribute): a Dantzig-Wolfe master over the capacity
//!    rows alone ([`Path::Patterns`]). The rounds run if a master solve
//!    does not end optimal or a round's prices leave a user it blocks
//!    room the audit would see.
//! 4. **Pooled first**, from [`GENERATE_FROM`] runnable pairs: without
//!    placement lists the pooled progressive filling bounds every level
//!    (where some resource is held by some entries only, as a GPU, the
//!    operator on the entries pooled by kind: one pool would give the
//!    users of that resource the other entries' capacity); when some
//!    per-server allocation holds every user at its pooled level it is
//!    the answer, certified by the pooled prices. Many users on
//!    many entries are realised group by group ([`Path::Grouped`]),
//!    otherwise in one LP on a few candidate pairs per entry
//!    ([`Path::Pooled`]). With placement lists whose entries fall into at
//!    most [`POOLED_LIST_GROUPS`] groups that every list holds alike (node
//!    pools, placement by attribute), the operator on those groups pooled
//!    is the bound, realised group by group on their entries, else in one
//!    LP. With more than 4 resources, placement lists or task caps, and
//!    no more users than the one LP takes, that LP at once
//!    ([`crate::settings::one_lp_at_once`]).
//! 5. **The rounds** ([`crate::rounds`]) on the LP of every runnable pair
//!    ([`Path::Flat`]) up to [`FLAT_UP_TO`] pairs, on an LP grown by
//!    column generation above it, or from the pooled LP's pairs when the
//!    pooled levels were out of reach ([`Path::Generated`]); those run up
//!    to [`crate::settings::CLARABEL_MAX_USERS`] users on the block
//!    interior point method where it pays (kept when its prices prove the
//!    levels) or on Clarabel, on the caller's backend otherwise or when
//!    neither ends optimal.
//!
//! On a single pool the operator has a closed form,
//! [`progressive_filling`]. Why the paths are these, with the
//! measurements that decided each, is in
//! `docs/design/maxmin-operator.md`.

pub use crate::closed_form::progressive_filling;
pub use crate::lp::build::{build, runnable_entries, MaxMinLp};
pub use crate::outcome::{Freeze, MaxMinOutcome, Path, RoundCertificate};
pub use crate::settings::{
    Columns, MaxMinSettings, EXACT_PIVOTS_ROWS, EXACT_PIVOTS_WIDTH, FLAT_UP_TO, GENERATE_FROM,
    LIVE_FROM_USERS,
};

use crate::lp::build::row_blocks;
use crate::lp::pricing::{for_each_runnable, seed};
use crate::lp::proof::proved;
use crate::paths::pooled::{Pooled, Spent};
use crate::paths::{capped, groups, merge, pack, patterns, pooled};
use crate::rounds::{rounds, RoundsLp};
use crate::settings::{
    CLARABEL_MAX_USERS, PATTERN_FEW_LISTS, PATTERN_ROWS, PATTERN_ROWS_FEW_LISTS,
    PATTERN_ROWS_MANY_USERS, PATTERN_USERS_PER_ROW, POOLED_LIST_GROUPS, SEED_PER_USER,
};
use crate::solvers::block_ipm::{self, BlockIpm};
use leontief_core::{Instance, ServerId, Status};
use leontief_model::{BackendError, LpBackend};
use std::time::Instant;

/// Run the operator with shares `s_n = sigma[n] x_n` on `instance`.
///
/// `sigma[n]` must be positive and finite for every user that can run
/// somewhere; users with no runnable entry are fixed at 0.
pub fn lex_max_min<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    settings: &MaxMinSettings,
) -> Result<MaxMinOutcome, BackendError> {
    if let Some(out) = try_classes(backend, instance, sigma, placement, settings)? {
        return Ok(out);
    }
    if settings.columns == Columns::Auto {
        if let Some(out) = capped::try_capped(instance, sigma, placement, settings.level_tolerance)
        {
            return Ok(out);
        }
    }
    if takes_patterns(instance, placement, settings) && backend.can_add_cols() {
        if let Some(out) = patterns::try_patterns(backend, instance, sigma, placement, settings)? {
            return Ok(out);
        }
    }
    let t_build = Instant::now();
    let pairs = runnable_pairs(instance, sigma, placement);
    let (try_pooled, generate) = match settings.columns {
        Columns::All | Columns::Patterns => (false, false),
        Columns::Generated | Columns::Grouped(_) => (true, backend.can_add_cols()),
        Columns::Auto => (
            pairs >= GENERATE_FROM,
            backend.can_add_cols() && pairs > FLAT_UP_TO,
        ),
    };
    // The LPs of attempts whose answer is not kept, counted in the one
    // that is.
    let mut spent = Spent::default();
    let mut pooled_pairs = None;
    if try_pooled && backend.can_add_cols() {
        let found = if placement && instance.has_placement() {
            pooled_on_lists(backend, instance, sigma, settings)?
        } else {
            Some(pooled_first(backend, instance, sigma, placement, settings)?)
        };
        match found {
            Some(Pooled::Realised(out)) => return Ok(*out),
            Some(Pooled::Short(pairs, s)) => {
                pooled_pairs = Some(pairs);
                spent = s;
            }
            Some(Pooled::Failed(s)) => spent = s,
            None => {}
        }
    }
    // The pooled LP's pairs hold its optimum: column generation from them
    // instead of the flat LP.
    let from_pooled = pooled_pairs.is_some();
    let generate = generate || from_pooled;
    let seed = generate.then(|| {
        pooled_pairs.unwrap_or_else(|| {
            let usable: Vec<bool> = sigma.iter().map(|s| s.is_finite() && *s > 0.0).collect();
            seed(instance, &usable, placement, SEED_PER_USER, &|_, _| true)
        })
    });
    if let Some(seed) = seed.as_ref().filter(|_| from_pooled) {
        if let Some(out) = try_seeded_rounds(
            backend, instance, sigma, placement, settings, seed, t_build, &mut spent,
        )? {
            return Ok(out);
        }
    }
    let mut out = rounds(
        backend,
        instance,
        sigma,
        placement,
        settings,
        RoundsLp::Build(seed.as_deref()),
        generate,
        t_build,
    )?;
    spent.charge(&mut out);
    Ok(out)
}

/// Path 1: the operator on the classes of exchangeable entries, packed
/// back onto the entries; `None` when no two entries merge.
fn try_classes<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    settings: &MaxMinSettings,
) -> Result<Option<MaxMinOutcome>, BackendError> {
    let Some(merged) = merge::merge_identical(instance, placement) else {
        return Ok(None);
    };
    let mut out = lex_max_min(backend, &merged.instance, sigma, placement, settings)?;
    out.tasks = pack::pack_tasks(&out.tasks, &merged);
    merge::split_certificates(&mut out, &merged, instance.num_resources());
    Ok(Some(out))
}

/// Whether path 3 (the pattern master) is tried.
fn takes_patterns(instance: &Instance, placement: bool, settings: &MaxMinSettings) -> bool {
    let rows = instance.num_entries() * instance.num_resources();
    match settings.columns {
        Columns::Patterns => true,
        Columns::Auto => {
            rows <= PATTERN_ROWS
                || (rows <= PATTERN_ROWS_FEW_LISTS && few_lists(instance, placement))
                || (rows <= PATTERN_ROWS_MANY_USERS
                    && !(placement && instance.has_placement())
                    && instance.num_users() >= PATTERN_USERS_PER_ROW * rows)
        }
        _ => false,
    }
}

/// Whether the placement lists that apply are at most
/// [`PATTERN_FEW_LISTS`] distinct lists (users without one share the
/// list of every entry).
fn few_lists(instance: &Instance, placement: bool) -> bool {
    if !(placement && instance.has_placement()) {
        return true;
    }
    let mut lists = std::collections::HashSet::new();
    for u in instance.users() {
        lists.insert(u.servers.as_deref());
        if lists.len() > PATTERN_FEW_LISTS {
            return false;
        }
    }
    true
}

/// The runnable user-entry pairs, counted (no per-pair storage) up to
/// just past [`FLAT_UP_TO`], which is all that decides the path.
fn runnable_pairs(instance: &Instance, sigma: &[f64], placement: bool) -> usize {
    let mut pairs = 0usize;
    for n in instance.user_ids() {
        if sigma[n.0].is_finite() && sigma[n.0] > 0.0 {
            for_each_runnable(instance, n, placement, |_| pairs += 1);
        }
        if pairs > FLAT_UP_TO {
            break;
        }
    }
    pairs
}

/// Path 4: the pooled levels realised group by group where that applies,
/// else in one LP (at once with task caps where
/// [`crate::settings::one_lp_at_once`] says).
fn pooled_first<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    settings: &MaxMinSettings,
) -> Result<Pooled, BackendError> {
    let (found, kinds) = by_kinds(backend, instance, sigma, settings)?;
    let bound = match found {
        Some((bound, _)) => bound,
        None => pooled::bound(instance, sigma, placement),
    };
    // With task caps and many resources, the one LP at once (unless the
    // caller asked for groups).
    let runnable = bound.runnable.iter().filter(|&&r| r).count();
    let capped =
        (0..instance.num_users()).any(|n| bound.runnable[n] && instance.users()[n].tasks.is_some());
    let at_once = capped
        && matches!(settings.columns, Columns::Auto)
        && crate::settings::one_lp_at_once(instance.num_resources(), runnable);
    let spent = if at_once {
        kinds
    } else {
        match groups::try_groups(
            backend,
            instance,
            sigma,
            placement,
            &bound,
            settings.level_tolerance,
            settings.columns,
        )? {
            Ok(mut out) => {
                kinds.charge(&mut out);
                return Ok(Pooled::Realised(Box::new(out)));
            }
            Err(spent) => spent.and(kinds),
        }
    };
    pooled::try_pooled(
        backend,
        instance,
        sigma,
        placement,
        settings.level_tolerance,
        bound,
        spent,
    )
}

/// The bound from pooled entries and the answer on them (`None` when
/// that answer is not optimal), with the LPs it solved.
type OnPools = (Option<(pooled::Bound, MaxMinOutcome)>, Spent);

/// The bound of path 4 where some resource is held by some entries only
/// (a GPU on a fifth of the servers): the operator on the entries pooled
/// by kind ([`merge::pool_by_kinds`]). One pool would hand a user
/// demanding a GPU the capacity of the servers without one; with shares
/// that weigh the GPU little (k-DF's product of the two largest) its
/// level is then out of reach and the rounds run on the whole cluster.
/// `None` with one kind, with placement lists (path 4 pools those by list
/// and kind), or when the pooled operator does not end optimal; with the
/// LPs it solved either way.
fn by_kinds<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    settings: &MaxMinSettings,
) -> Result<OnPools, BackendError> {
    let t0 = Instant::now();
    if instance.has_placement() {
        return Ok((None, Spent::default()));
    }
    let Some(pools) = merge::pool_by_kinds(instance, POOLED_LIST_GROUPS) else {
        return Ok((None, Spent::default()));
    };
    on_pools(backend, instance, sigma, settings, &pools, t0)
}

/// The operator on `pools` (a relaxation of `instance`) and the bound it
/// gives ([`pooled::bound_on_pools`]) with that answer; `None` when it
/// does not end optimal. With the LPs it solved.
fn on_pools<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    settings: &MaxMinSettings,
    pools: &merge::ListPools,
    t0: Instant,
) -> Result<OnPools, BackendError> {
    let on_pools = lex_max_min(backend, &pools.instance, sigma, true, settings)?;
    let spent = Spent::of(&on_pools);
    if on_pools.status != Status::Optimal {
        return Ok((None, spent));
    }
    let bound = pooled::bound_on_pools(instance, sigma, &pools.group_of, &on_pools, t0);
    Ok((Some((bound, on_pools)), spent))
}

/// Path 4 with placement lists, where the entries each list holds alike
/// form at most [`POOLED_LIST_GROUPS`] groups (node pools, placement by
/// attribute): the operator on the groups pooled bounds every level
/// ([`pooled::bound_on_pools`]), realised group by group on the entries
/// ([`groups::realise_on_lists`]): each group's users hold their shares
/// of it; when a group falls short, the one LP at the bound's levels
/// ([`pooled::try_pooled`]). With many resources and users the one LP
/// fits, that LP at once ([`crate::settings::one_lp_at_once`]). `None`
/// where the groups do not apply.
fn pooled_on_lists<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    settings: &MaxMinSettings,
) -> Result<Option<Pooled>, BackendError> {
    let t0 = Instant::now();
    let Some(pools) = merge::pool_by_lists(instance, POOLED_LIST_GROUPS) else {
        return Ok(None);
    };
    let (found, spent) = on_pools(backend, instance, sigma, settings, &pools, t0)?;
    let Some((bound, first)) = found else {
        return Ok(Some(Pooled::Failed(spent)));
    };
    let runnable = bound.runnable.iter().filter(|&&r| r).count();
    let spent = if crate::settings::one_lp_at_once(instance.num_resources(), runnable) {
        spent
    } else {
        let mut members = vec![Vec::new(); pools.instance.num_entries()];
        for (i, &g) in pools.group_of.iter().enumerate() {
            members[g].push(ServerId(i));
        }
        match groups::realise_on_lists(
            backend,
            instance,
            sigma,
            &bound,
            &members,
            &first,
            settings.level_tolerance,
        )? {
            Ok(mut out) => {
                spent.charge(&mut out);
                return Ok(Some(Pooled::Realised(Box::new(out))));
            }
            Err(more) => spent.and(more),
        }
    };
    Ok(Some(pooled::try_pooled(
        backend,
        instance,
        sigma,
        true,
        settings.level_tolerance,
        bound,
        spent,
    )?))
}

/// Path 5 from the pooled LP's pairs on an interior point method, up to
/// [`CLARABEL_MAX_USERS`] users: the block method where it pays
/// ([`crate::solvers::block_ipm::pays`]), kept only when its prices
/// prove the allocation ([`proved`]); Clarabel where it does not pay, or
/// (without placement lists) where its rounds are not proved or one of
/// its solves does not converge (`BlockIpm::alone`). `None`
/// (its LPs added to `spent`) when none of these ends optimal, or with
/// placement lists where the block method does not pay; the caller's
/// backend then runs the rounds. Without lists Clarabel alone took 17.0 s for the two
/// LPs of the rounds of weights and caps on half the users, 6 resources,
/// 300 x 3,000, seed 3, where the block method took 3.0 s (37.9 -> 14.5
/// s end to end). With lists Clarabel's rounds left a
/// certificate 1.01e-6 loose on a property case, where HiGHS's rounds
/// prove the same levels to 2e-11. On the one LP's 297,226 pairs of
/// placement by attribute, 6 resources, 1,000 x 5,000, seed 1, HiGHS's
/// interior point had not ended round 1 after 400 s (its simplex
/// neither), Clarabel's took 26.7 s, and the block method 3.6 s for
/// round 1 and 11.3 s for its growth LP (ending at 1e-11; at 1e-12 the
/// one LP's own prices prove that cell, and the rounds do not run).
#[allow(clippy::too_many_arguments)]
fn try_seeded_rounds<B: LpBackend>(
    backend: &B,
    instance: &Instance,
    sigma: &[f64],
    placement: bool,
    settings: &MaxMinSettings,
    seed: &[Vec<ServerId>],
    t_build: Instant,
    spent: &mut Spent,
) -> Result<Option<MaxMinOutcome>, BackendError> {
    let users = sigma.iter().filter(|s| s.is_finite() && **s > 0.0).count();
    if users > CLARABEL_MAX_USERS {
        return Ok(None);
    }
    let lists = placement && instance.has_placement();
    let m = instance.num_resources();
    let on_blocks = block_ipm::pays(users, instance.num_entries(), m);
    if lists && !on_blocks {
        return Ok(None);
    }
    // The rounds' LP, taken by the block method by its entries' capacity
    // rows; where it does not pay, no blocks: every solve is Clarabel's.
    let (blocks, start) = if on_blocks {
        let t = Instant::now();
        let mm = build(instance, sigma, placement, Some(seed));
        let blocks = row_blocks(&mm, m, mm.problem.num_rows());
        let seconds = t.elapsed().as_secs_f64();
        (Some(blocks), RoundsLp::Built(Box::new(mm), seconds))
    } else {
        (None, RoundsLp::Build(Some(seed)))
    };
    // Without lists, Clarabel's rounds come next if the block method's
    // are not kept, so a block solve that does not converge ends the
    // try (`BlockIpm::alone`) rather than going to Clarabel on the LP as
    // it stands: k-DF, a GPU on a fifth of the servers, 6 resources, 300
    // x 3,000, seed 2, whose growth LP ended the block method's 200 steps
    // (3.1 s), took Clarabel 10.6 s there to end `AlmostSolved`, where
    // Clarabel's own rounds from the seed took 4.7 s to end optimal.
    let then_clarabel = on_blocks && !lists;
    // One try of the rounds: kept when optimal (and, with `prove`, proved
    // by its prices), else its LPs are added to `spent`.
    let attempt = |blocks: Option<Vec<u32>>, start: RoundsLp, prove: bool, spent: &mut Spent| {
        let mut solver = BlockIpm::new(blocks, backend.time_limit());
        if then_clarabel {
            solver = solver.alone();
        }
        let mut out = rounds(
            &solver, instance, sigma, placement, settings, start, true, t_build,
        )?;
        if out.status == Status::Optimal && (!prove || proved(&out, instance, sigma, placement)) {
            spent.charge(&mut out);
            return Ok(Some(out));
        }
        *spent = spent.and(Spent::of(&out));
        Ok::<_, BackendError>(None)
    };
    if let Some(out) = attempt(blocks, start, on_blocks, spent)? {
        return Ok(Some(out));
    }
    // Without lists, Clarabel next, before the caller's backend: the
    // k-DF cell above took 155 s on HiGHS's rounds (five pricing passes
    // of 25-30 s).
    if then_clarabel {
        return attempt(None, RoundsLp::Build(Some(seed)), false, spent);
    }
    Ok(None)
}
