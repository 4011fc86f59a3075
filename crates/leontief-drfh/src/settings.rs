//! The operator's settings and every threshold that picks its path, in
//! one place (the bottom stage: nothing here imports the operator).
//!
//! The measurements behind each default are in `docs/design/maxmin-operator.md`.

use crate::error::DrfhError;

/// Tolerances of the max-min operator.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxMinSettings {
    /// A user "can rise" when the growth LP lifts its level above theta* by
    /// more than this, relative to max(theta*, 1e-12). Default 1e-7.
    pub level_tolerance: f64,
    /// A level-row dual counts as positive when |dual| times the row's theta
    /// coefficient exceeds this (its share of theta's unit price).
    /// Default 1e-9.
    pub dual_tolerance: f64,
    /// Frozen users keep at least (1 - this) of their level. Default 1e-15:
    /// their bounds are, to a few units in the last place, the level their
    /// round found; a relaxation the LP can see lets later rounds end
    /// infeasible or `Unknown` (`docs/design/maxmin-operator.md`). A round that is infeasible by
    /// rounding is still retried with larger relaxations ([`RELAX_RETRIES`]).
    pub freeze_relaxation: f64,
    /// A user "can rise" only when, besides `level_tolerance`, its share
    /// gain w_n (level - theta*) exceeds this times the total share held,
    /// sum_n w_n level_n (frozen users at their round's level, active ones
    /// at theta*): the freeze relaxation frees at most `freeze_relaxation`
    /// of that, and a user of weight 1e-9 next to one of weight 1 would
    /// otherwise "rise" into the relaxed capacity of the heavy user.
    /// Default 1e-8.
    pub share_tolerance: f64,
    /// Which pairs the LP holds (the flat LP, or column generation).
    pub columns: Columns,
    /// Write each user's one-sentence explanation into the allocation
    /// (default true). The simulator's exact DRFH mode, which reads only
    /// the task counts of thousands of allocations, turns it off.
    pub explain: bool,
    /// Growth LPs first let each undecided user rise by at most this
    /// fraction of theta* (from [`CAPPED_GROWTH_USERS`] runnable users, on
    /// vertex backends; 0: never): at a vertex the sum of their levels goes
    /// to a few users, and one growth LP per freed handful costs many LPs a
    /// round with placement lists. The verdict "cannot rise" still comes
    /// from an uncapped LP. Default 1e-2 (`docs/design/maxmin-operator.md`).
    pub growth_cap: f64,
    /// Cap jumps in the flat rounds (default on): users whose task caps
    /// the level passes freeze at them all at once, not one round per cap
    /// level (`crate::rounds`).
    pub cap_jumps: bool,
    /// Told after each round of the general path how many users are
    /// frozen (default none). The paths that end in one LP or a closed
    /// form report nothing.
    pub progress: Option<crate::progress::Progress>,
    /// Stop the rounds of the general path after this many (default
    /// none), with status `iteration_limit` and the last round's point as
    /// the allocation: the users frozen so far at their exact max-min
    /// levels (the lowest levels of the answer), every other at least at
    /// the last of them (`Freeze::Rising`). The run's time limit ends
    /// the rounds the same way, with status `time_limit`.
    pub round_limit: Option<usize>,
    /// Make every round's LP exact to double-double precision (about 32
    /// digits) by the primal simplex continued from HiGHS's final basis
    /// ([`leontief_model::polish`]), also where HiGHS ends `Unknown`, so
    /// that no frozen bound is ever relaxed, on the flat LP's rounds:
    /// `Some(true)` always, `Some(false)` never, `None` (the default)
    /// where the instance has placement lists and the LP at most
    /// [`EXACT_PIVOTS_ROWS`] rows and fewer than [`EXACT_PIVOTS_WIDTH`]
    /// columns per row: the ill-conditioned rounds (`docs/design/maxmin-operator.md`).
    pub exact_pivots: Option<bool>,
    /// Leave the users no level dual blocks to the next round's level LP
    /// instead of growth LPs, in a round where the duals' prices prove at
    /// least one user blocked (default true; vertex solutions only). The
    /// next level LP is their test: if its level rises, every user it
    /// keeps active could rise; if it does not (within `level_tolerance`),
    /// the same round goes on, its duals freezing more users at that level.
    pub defer_growth: bool,
    /// Go on with the live part alone ([`crate::rounds::live`]) once at most
    /// [`LIVE_FRACTION`] of the users of the round's LP are live, from
    /// [`LIVE_FROM_USERS`] users (default true; placement lists, the flat
    /// LP). Off, every round solves the whole LP.
    pub live_parts: bool,
}

/// Runnable users from which the rounds go on with the live part alone
/// ([`MaxMinSettings::live_parts`]); below, an LP of the whole costs
/// about what a new one for the part would.
pub const LIVE_FROM_USERS: usize = 32;

/// The rounds go on with the live part alone once it holds at most this
/// fraction of the users of the round's LP: each part costs a new LP, its
/// first round repeating the last (`docs/design/maxmin-operator.md`).
pub const LIVE_FRACTION: f64 = 0.95;

impl Default for MaxMinSettings {
    fn default() -> Self {
        MaxMinSettings {
            level_tolerance: 1e-7,
            dual_tolerance: 1e-9,
            freeze_relaxation: 1e-15,
            share_tolerance: 1e-8,
            columns: Columns::Auto,
            explain: true,
            growth_cap: 1e-2,
            progress: None,
            round_limit: None,
            exact_pivots: None,
            defer_growth: true,
            live_parts: true,
            cap_jumps: true,
        }
    }
}

impl MaxMinSettings {
    /// Check every field, naming the first bad one.
    pub fn validate(&self) -> Result<(), DrfhError> {
        for (name, v) in [
            ("level_tolerance", self.level_tolerance),
            ("dual_tolerance", self.dual_tolerance),
            ("freeze_relaxation", self.freeze_relaxation),
            ("share_tolerance", self.share_tolerance),
        ] {
            if v.is_nan() || v <= 0.0 || v >= 1e-2 {
                return Err(DrfhError::InvalidParameter {
                    name: format!("MaxMinSettings.{name}"),
                    reason: format!("must be in (0, 0.01) (got {v})"),
                });
            }
        }
        if !(self.growth_cap >= 0.0 && self.growth_cap.is_finite()) {
            return Err(DrfhError::InvalidParameter {
                name: "MaxMinSettings.growth_cap".into(),
                reason: format!("must be finite and at least 0 (got {})", self.growth_cap),
            });
        }
        Ok(())
    }
}

/// Which user-entry pairs the operator's LP holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Columns {
    /// The pattern master ([`crate::paths::patterns`]) with at most
    /// [`PATTERN_ROWS`] capacity rows; otherwise the flat
    /// LP below [`GENERATE_FROM`] runnable pairs. From there the
    /// pooled-first path ([`crate::paths::pooled`]) when there are no placement
    /// lists, then the flat LP up to [`FLAT_UP_TO`] pairs and column
    /// generation above.
    #[default]
    Auto,
    /// Every runnable pair (the flat LP).
    All,
    /// The pooled-first path, then column generation ([`crate::lp::pricing`]),
    /// whatever the size (where the backend can add columns).
    Generated,
    /// The pattern master over few entries ([`crate::paths::patterns`]), whatever
    /// the size (where the backend can add columns); the flat LP if it
    /// fails.
    Patterns,
    /// As [`Columns::Generated`], with the pooled levels first realised
    /// group by group ([`crate::paths::groups`]), in groups of this many entries,
    /// whatever the size (where the entries form two groups or more and
    /// hold every resource, without placement lists). `Auto` takes that
    /// path with many users on many entries.
    Grouped(usize),
}

/// Runnable user-entry pairs from which [`Columns::Auto`] tries the
/// pooled-first path ([`crate::paths::pooled`]) before the flat LP.
pub const GENERATE_FROM: usize = 20_000;

/// With placement lists, the groups of entries that every list holds
/// alike (node pools, placement by attribute) up to which the
/// pooled-first path runs on them: the operator first solves the users
/// on that many pooled entries, whose levels bound the answer's.
pub const POOLED_LIST_GROUPS: usize = 64;

/// Runnable user-entry pairs above which [`Columns::Auto`] grows the LP by
/// column generation instead of building the flat LP when the pooled
/// levels are not realised (the flat LP there takes minutes and
/// gigabytes).
pub const FLAT_UP_TO: usize = 2_000_000;

/// Pairs each user brings to the first LP, and at most per pricing pass.
pub const SEED_PER_USER: usize = 4;
/// Pairs each user gets at most per pricing pass.
pub const ADD_PER_USER: usize = 4;

/// Reduced cost (in units of the level LP's objective) above which a pair
/// left out prices in; HiGHS's own dual feasibility tolerance is 1e-7, so
/// the restricted optimum is at least as tight as the flat one.
pub const PRICING_TOLERANCE: f64 = 1e-9;

/// Runnable users from which growth LPs are capped first
/// ([`MaxMinSettings::growth_cap`]). On small instances the caps bring
/// HiGHS's unscaled infeasibilities (`reduced_accuracy`) into LPs that
/// end `optimal` without them (found by the k-DF property test), and the
/// rounds cost little anyway.
pub const CAPPED_GROWTH_USERS: usize = 100;

/// Runnable users from which a growth LP HiGHS leaves without a solution
/// gets the block interior point method's opinion instead of Clarabel's
/// (Clarabel's sparse LDL fills in a dense block over the users; `docs/design/maxmin-operator.md`).
pub const BLOCK_OPINION_USERS: usize = 500;

/// Relaxations of the frozen users' bounds tried, in turn, when a later
/// round's LP comes back infeasible, the smallest first: a relaxation
/// frees the frozen users' capacity to the users still rising, amplified
/// where a small user shares servers with large ones. A growth LP that
/// ends without a solution (HiGHS: `Unknown`) is first solved again by
/// simplex without presolve, then as it stands by Clarabel (the block
/// interior point method from [`BLOCK_OPINION_USERS`] users), whose
/// answer decides its verdicts when it has one, and otherwise retried
/// the same way (`docs/design/maxmin-operator.md`).
pub const RELAX_RETRIES: [f64; 8] = [1e-13, 1e-12, 1e-11, 1e-10, 1e-9, 1e-8, 1e-7, 1e-6];

/// Up to this many LP rows the rounds of an instance with placement lists
/// are made exact ([`MaxMinSettings::exact_pivots`]). Each basis's kernel
/// is factorised sparse; the bound is on time (a pivot costs milliseconds
/// at 10^4 rows).
pub const EXACT_PIVOTS_ROWS: usize = 50_000;

/// ... and fewer than this many columns per row: the sparse lists whose
/// rounds chain users. Wider LPs come from denser lists, which HiGHS
/// decides alone (the pivots, each pricing every column, cost more than
/// they save there).
pub const EXACT_PIVOTS_WIDTH: usize = 4;

/// Capacity rows (entries x resources) up to which [`Columns::Auto`] runs
/// the pattern master, whatever the number of users (`docs/design/maxmin-operator.md`).
pub const PATTERN_ROWS: usize = 64;

/// Without placement lists, the pattern master also runs up to this many
/// capacity rows when the users number at least [`PATTERN_USERS_PER_ROW`]
/// per row: there the flat and pooled LPs carry a link and a level row per
/// user and the master does not (`docs/design/maxmin-operator.md`).
pub const PATTERN_ROWS_MANY_USERS: usize = 512;

/// The pattern master also runs up to this many capacity rows when the
/// users' placement lists are at most [`PATTERN_FEW_LISTS`] distinct
/// lists (none at all included): placement by attribute (node pools, GPU
/// models, labels), where users sharing a list price alike. Random
/// per-user lists are excluded: there the master is slower than the flat
/// LP (`docs/design/maxmin-operator.md`).
pub const PATTERN_ROWS_FEW_LISTS: usize = 96;

/// Distinct placement lists up to which [`PATTERN_ROWS_FEW_LISTS`]
/// applies.
pub const PATTERN_FEW_LISTS: usize = 32;

/// Users per capacity row from which [`PATTERN_ROWS_MANY_USERS`] applies
/// (below it, with 4 or more resources, the flat LP is faster).
pub const PATTERN_USERS_PER_ROW: usize = 10;

/// Entries per group when the pooled levels are realised group by group
/// ([`crate::maxmin::Path::Grouped`]); more where that would leave a group
/// fewer than about [`USERS_PER_GROUP`] users, and four groups at least.
pub const GROUP_ENTRIES: usize = 100;

/// Users a group should have at least (see `crate::paths::groups`).
pub const USERS_PER_GROUP: usize = 150;

/// Servers each group is in the groups' first step (`crate::paths::groups`):
/// its entries sorted by the direction of their capacity and cut into this
/// many runs, so the step knows more of a group than its total. At 1,000 x
/// 10,000 with 4 resources, weights and caps on half the users (seed 2):
/// 1 (one server per group) 33.7 s, 2 12.1 s, 4 10.7 s, 8 9.1 s, 16
/// 10.5 s; hdrfh with 100 queues and a GPU on a fifth (seed 2): 1 15.1 s,
/// 4 14.1 s, 8 22.9 s; every other cell of the grid within noise.
pub const SUB_POOLS: usize = 4;

/// [`SUB_POOLS`] past [`DENSE_BLOCK_USERS`] users: there the step's LP
/// (10,000 users on 100 groups at 10,000 x 10,000) is Clarabel's whose
/// factor holds a dense block over the step's capacity rows (groups x
/// sub-pools x resources, 2,400 with 6 resources at 4), about 0.46 s a
/// step on one core and half of the run with weights and caps. At 2 the
/// block has 1,200 rows. 10,000 x 10,000, 6 resources, seed 1, DRFH /
/// k-DF, the same hour, 4 -> 2: weights and caps 28.81 / 27.24 ->
/// 21.78 / 17.42 s, lognormal demands 14.17 / 19.26 -> 11.10 / 13.65 s,
/// few huge tasks 25.42 / 22.75 -> 16.98 / 17.00 s, the Google classes
/// 16.23 / 16.02 -> 11.42 / 10.46 s, bimodal 13.29 / 14.34 -> 8.70 /
/// 9.02 s, a GPU on a fifth 15.94 / 16.31 -> 11.67 / 12.62 s; with 3
/// and 4 resources see `docs/design/maxmin-operator.md` ("The groups'
/// first step over 10,000 users"). Where the groups fall short on 2
/// (a GPU on a fifth of the servers left more round-off idle capacity
/// than the users' levels may absorb), they run again on [`SUB_POOLS`].
pub const SUB_POOLS_DENSE: usize = 2;

/// Users past which the groups' first step (`crate::paths::groups`) runs
/// Clarabel with its choice of LDL factorisation (faer's supernodal one
/// where the factor holds a dense block) rather than QDLDL. Measured end
/// to end (`docs/design/maxmin-operator.md`, "The groups' first step
/// over 10,000 users"): 10,000 x 10,000 with 6 resources 152.8 -> 90.7 s
/// (few huge tasks) and 165.4 -> 102.7 s (weights and caps). At 2,000
/// users (2,000 x 5,000, 3 resources) it was not faster: 2.7 against
/// 3.2-3.3 s in one pair of runs.
pub const DENSE_BLOCK_USERS: usize = 5_000;

/// Threads in rayon's pool below which that dense-block factorisation
/// (faer's) runs on one thread. On 2 cores its parallel factorisation
/// was the slower (`docs/design/maxmin-operator.md`, "The dense block on
/// two cores"): the groups' first step at 10,000 x 10,000 with 6
/// resources, k-DF (k = 2), 17.6 -> 14.6 s (the lognormal shape) and
/// 29.2 -> 24.4 s (weights and caps); for DRFH, whose reference total
/// holds the other core meanwhile, unchanged (11.0 against 10.7 s).
pub const PARALLEL_LDL_THREADS: usize = 3;

/// Runnable users up to which Clarabel solves the operator's large LPs
/// (the pooled LP with up to 4 resources, the rounds from its pairs);
/// past it Clarabel's factorisation costs more than HiGHS's iterations
/// (`docs/design/maxmin-operator.md`).
pub const CLARABEL_MAX_USERS: usize = 1_500;

/// Runnable users up to which Clarabel solves the pooled LP with more
/// than 4 resources, where HiGHS's interior point costs minutes: with 6
/// resources and placement by attribute (`generate shaped --shape
/// placement=attribute:4`, 2,000 x 5,000, seed 2; 2,000 users, 400,000
/// columns) Clarabel solved it in 31 and 25 s (two pricing passes), HiGHS
/// had not ended after 540 s.
pub const CLARABEL_MAX_USERS_MANY_RESOURCES: usize = 2_500;

/// Resources above which the pooled bound goes to the one LP at once
/// where its groups tend to fall short (placement lists, task caps),
/// while the one LP's runnable users are at most
/// [`CLARABEL_MAX_USERS_MANY_RESOURCES`]: see [`one_lp_at_once`].
pub const ONE_LP_RESOURCES: usize = 4;

/// Whether the pooled bound, with `m` resources and `runnable` users,
/// goes to the one LP at its levels at once, rather than first realised
/// group by group, where the groups tend to fall short: with placement
/// lists (the list groups) and with task caps (the groups of entries).
/// Falling short, the groups cost more than the one LP itself, and the
/// worst seed sets the time. Past [`CLARABEL_MAX_USERS_MANY_RESOURCES`]
/// users the one LP would go to HiGHS's interior point, which costs
/// minutes. Measured end to end (default verification, a 2-core Intel
/// Xeon; `docs/design/maxmin-operator.md`, "Placement by attribute and
/// caps with 6 resources: the one LP first"), seeds 1 / 2 / 3:
///
/// | shape, 6 resources | groups first | the one LP first |
/// |---|---|---|
/// | placement=attribute:4, 1,000 x 10,000 | 47.9 / 17.4 / 25.0 s | 21.7 / 21.8 / 19.9 s |
/// | placement=attribute:4, 2,000 x 5,000 | 9.7 / 44.2 / 10.2 s | 17.7 / 24.8 / 13.7 s |
/// | weights,caps=0.5, 1,000 x 10,000 | 23.1 / 26.9 / 24.1 s | 18.5 / 16.7 / 16.4 s |
/// | weights,caps=0.5, 2,000 x 5,000 | 10.7 / 19.1 / 18.2 s | 14.3 / 16.7 / 19.0 s |
/// | caps=0.5, 1,000 x 10,000, seed 1 | 43.9 s | 17.9 s |
///
/// Without caps or lists the groups stay (the one LP first: the
/// generator's own shape 9.6 -> 12.7 s, weights alone 17.1 -> 22.4 s,
/// GPUs on a fifth 7.7 -> 16.2 s at 1,000 x 10,000).
pub fn one_lp_at_once(m: usize, runnable: usize) -> bool {
    m > ONE_LP_RESOURCES && runnable <= CLARABEL_MAX_USERS_MANY_RESOURCES
}

/// Runnable users up to which Clarabel solves the pooled LP with `m`
/// resources ([`CLARABEL_MAX_USERS`], [`CLARABEL_MAX_USERS_MANY_RESOURCES`]).
pub fn clarabel_max_users(m: usize) -> usize {
    if m > 4 {
        CLARABEL_MAX_USERS_MANY_RESOURCES
    } else {
        CLARABEL_MAX_USERS
    }
}

/// The most room a round's prices may leave a user they prove blocked
/// (relative to its tasks) in the weak-duality bound that
/// `leontief-audit` checks at 1e-6, in the paths that check their own
/// proof (the pattern master, where a gap within its round-off also
/// passes, and the groups): past it the groups give up and the caller
/// runs the next path; the pattern master leaves that user active for a
/// later round, and gives up only when no user of a round is proved
/// ([`crate::maxmin::MaxMinOutcome::deferred_users`] counts those left). At
/// 10,000 x 150 the pattern master leaves 1.6e-7 to 2.9e-7.
pub const BLOCKED_ROOM: f64 = 5e-7;
