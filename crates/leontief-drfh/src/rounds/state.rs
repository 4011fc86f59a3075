//! The state of the rounds on one LP, and the stages of a round that
//! change it: the level LP, cap jumps, freezing, the live parts.

use crate::lp::build::{build, MaxMinLp};
use crate::lp::closing::Closing;
use crate::lp::retry::{set_upper, solve_retrying, Frozen};
use crate::outcome::{Freeze, MaxMinOutcome, Path};
use crate::rounds::live::{self, LivePart};
use crate::settings::{
    MaxMinSettings, EXACT_PIVOTS_ROWS, EXACT_PIVOTS_WIDTH, LIVE_FRACTION, LIVE_FROM_USERS,
};
use leontief_core::{Instance, ServerId, Status};
use leontief_model::{BackendError, Col, LoadedLp, LpBackend, ProblemBuilder, Sense, Solution};
use std::time::Instant;

const INF: f64 = f64::INFINITY;

/// Why the rounds end.
pub(crate) enum Stop {
    /// Every user froze.
    Finished,
    /// A limit ended the rounds, or an LP left no solution (the status
    /// is in the outcome): the allocation is this point, the last level
    /// LP solved, where a limit stopped them ([`crate::lp::finish::stopped`]).
    Early(Option<Solution>),
    /// No user froze in a round (impossible in exact arithmetic).
    NoneFroze,
    /// The live users go on apart, one part each ([`crate::rounds::live`]).
    Parts(Vec<LivePart>),
}

/// One round's level LP solved: its point and level, and the tolerances
/// that decide at that level whether a user rises.
pub(crate) struct Round {
    /// The level LP's solution.
    pub(crate) sol: Solution,
    /// Its level theta* (in the LP's units).
    pub(crate) t_star: f64,
    /// A user rises when its level gains more than this ...
    pub(crate) tol: f64,
    /// ... and its weighted share gains more than this.
    pub(crate) share_tol: f64,
}

/// The rounds on one LP: the loaded LP and who is still rising.
pub(crate) struct RoundState<'a, B: LpBackend> {
    pub(crate) backend: &'a B,
    pub(crate) instance: &'a Instance,
    pub(crate) sigma: &'a [f64],
    pub(crate) placement: bool,
    pub(crate) settings: &'a MaxMinSettings,
    /// Grow the LP by column generation.
    pub(crate) generate: bool,
    pub(crate) lp: B::Loaded,
    pub(crate) mm: MaxMinLp,
    pub(crate) out: MaxMinOutcome,
    /// Users still rising.
    pub(crate) active: Vec<bool>,
    /// Users that can run (a copy of the LP's, borrowed while it is not).
    pub(crate) runnable: Vec<bool>,
    pub(crate) ycols: Vec<Col>,
    pub(crate) y_upper: Vec<f64>,
    /// The upper bound of each active user's level column.
    pub(crate) upper_now: Vec<f64>,
    /// The last round's level LP solution.
    pub(crate) last: Option<Solution>,
    /// The level of the last round when it left its undecided users to
    /// the next level LP ([`MaxMinSettings::defer_growth`]).
    pub(crate) deferred: Option<f64>,
    /// Each user's task cap as a level, where it binds (below the level
    /// of the user alone), for cap jumps; infinite elsewhere.
    cap_level: Vec<f64>,
    jumps: bool,
    /// A cap jump happened (the rounds are numbered by level at the end).
    pub(crate) jumped: bool,
    /// Make every LP exact ([`MaxMinSettings::exact_pivots`]).
    pub(crate) exact_pivots: bool,
    /// Entries closed to the rising users ([`crate::lp::closing`]).
    pub(crate) closing: Option<Closing>,
    pub(crate) runnable_users: usize,
    /// How far below its level a frozen user's bound sits.
    pub(crate) relaxation: f64,
    /// The run's time limit, from `t_build`.
    pub(crate) deadline: Option<Instant>,
}

/// The rounds' LP: to build, over every runnable pair or the pairs of a
/// seed, or built already by the caller (with the seconds its build took).
pub(crate) enum RoundsLp<'s> {
    Build(Option<&'s [Vec<ServerId>]>),
    Built(Box<MaxMinLp>, f64),
}

impl<'a, B: LpBackend> RoundState<'a, B> {
    /// Build (or take) and load the LP (every runnable pair, or the pairs
    /// of a seed grown by pricing when `generate`); `Err` is the outcome
    /// when the LP cannot hold the instance.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        backend: &'a B,
        instance: &'a Instance,
        sigma: &'a [f64],
        placement: bool,
        settings: &'a MaxMinSettings,
        start: RoundsLp,
        generate: bool,
        t_build: Instant,
    ) -> Result<Result<Self, MaxMinOutcome>, BackendError> {
        let nu = instance.num_users();
        // `t_build` starts the run's time limit; this call's own build is
        // timed from here (a live part's starts long after the run's).
        let t_own = Instant::now();
        let (mut mm, built_seconds) = match start {
            RoundsLp::Build(seed) => (build(instance, sigma, placement, seed), 0.0),
            RoundsLp::Built(mm, seconds) => (*mm, seconds),
        };
        let problem = std::mem::replace(
            &mut mm.problem,
            ProblemBuilder::new(Sense::Maximise).build(),
        );
        let mut lp = backend.load(problem)?;
        let build_seconds = built_seconds + t_own.elapsed().as_secs_f64();
        let mut out = MaxMinOutcome {
            build_seconds,
            path: if generate {
                Path::Generated
            } else {
                Path::Flat
            },
            columns: mm.pairs.iter().map(Vec::len).sum(),
            ..MaxMinOutcome::start(nu, mm.total_pairs)
        };
        if let Some(why) = mm.too_wide.take() {
            out.status = Status::NumericalFailure;
            out.raw_status = why;
            return Ok(Err(out));
        }
        let runnable = mm.runnable.clone();
        let y_upper = mm.y_upper.clone();
        // Cap jumps: the users whose task cap binds (below their level
        // alone) rise past it in the level LP, and those whose cap the
        // level passes freeze there, all at once ([`Self::jump_caps`]).
        let cap_level: Vec<f64> = (0..nu)
            .map(|n| {
                if runnable[n] && y_upper[n] < mm.y_alone[n] {
                    y_upper[n]
                } else {
                    INF
                }
            })
            .collect();
        let jumps = settings.cap_jumps && cap_level.iter().filter(|c| c.is_finite()).count() >= 2;
        let mut upper_now = y_upper.clone();
        if jumps {
            for n in (0..nu).filter(|&n| cap_level[n].is_finite()) {
                upper_now[n] = mm.y_alone[n];
                set_upper(&mut lp, mm.ycols[n], upper_now[n])?;
            }
        }
        let exact_pivots = settings.exact_pivots.unwrap_or(
            placement
                && instance.has_placement()
                && backend.vertex_duals()
                && lp.problem().num_rows() <= EXACT_PIVOTS_ROWS
                && lp.problem().num_cols() < EXACT_PIVOTS_WIDTH * lp.problem().num_rows(),
        );
        // Entries closed to the rising users once the rounds below them
        // are complete (placement lists, the flat LP).
        let closing = if placement && !generate {
            Closing::new(
                instance,
                &mm,
                lp.problem().num_cols(),
                settings.level_tolerance,
            )
        } else {
            None
        };
        // The exact ties of `freeze_relaxation` are for vertex solutions;
        // an interior point method keeps at least 1e-10 of room.
        let relaxation = if backend.vertex_duals() {
            settings.freeze_relaxation
        } else {
            settings.freeze_relaxation.max(1e-10)
        };
        // The run's time limit bounds the whole sequence of rounds, not
        // only each LP (a limit too large for a `Duration` is no limit).
        let deadline = backend
            .time_limit()
            .and_then(|limit| std::time::Duration::try_from_secs_f64(limit).ok())
            .and_then(|d| t_build.checked_add(d));
        Ok(Ok(RoundState {
            backend,
            instance,
            sigma,
            placement,
            settings,
            generate,
            active: runnable.clone(),
            runnable_users: runnable.iter().filter(|&&r| r).count(),
            ycols: mm.ycols.clone(),
            runnable,
            y_upper,
            upper_now,
            lp,
            mm,
            out,
            last: None,
            deferred: None,
            cap_level,
            jumps,
            jumped: false,
            exact_pivots,
            closing,
            relaxation,
            deadline,
        }))
    }

    /// Users still rising.
    pub(crate) fn rising(&self) -> usize {
        self.active.iter().filter(|&&a| a).count()
    }

    /// Weight of user `n`.
    pub(crate) fn weight(&self, n: usize) -> f64 {
        self.instance.users()[n].weight
    }

    /// True (with the status and its reason in the outcome) when the
    /// run's time limit has passed.
    pub(crate) fn out_of_time(&mut self) -> bool {
        let Some(limit) = self.backend.time_limit() else {
            return false;
        };
        if self.deadline.is_none_or(|d| Instant::now() <= d) {
            return false;
        }
        let left = self.rising();
        self.out.status = Status::TimeLimit;
        self.out.raw_status = format!(
            "max-min: the time limit of {limit} s ran out in round {} ({} of {} users frozen, {} LPs)",
            self.out.rounds,
            self.runnable_users - left,
            self.runnable_users,
            self.out.lps
        );
        true
    }

    /// Stage 0: the round limit or the run's time limit reached.
    pub(crate) fn limit(&mut self) -> Option<Stop> {
        if let Some(limit) = self.settings.round_limit.filter(|&r| self.out.rounds >= r) {
            let left = self.rising();
            self.out.status = Status::IterationLimit;
            self.out.raw_status = format!(
                "max-min: the round limit of {limit} was reached ({} of {} users frozen, {} LPs)",
                self.runnable_users - left,
                self.runnable_users,
                self.out.lps
            );
        }
        (self.out.status == Status::IterationLimit || self.out_of_time())
            .then(|| Stop::Early(self.last.take()))
    }

    /// Stage 1: the next round's level LP. A later round can find the
    /// bounds of the users frozen before infeasible by the LP's own
    /// tolerance; [`solve_retrying`] relaxes them before giving up.
    pub(crate) fn level(&mut self) -> Result<Result<Round, Stop>, BackendError> {
        self.out.rounds += 1;
        let retry = self.out.rounds > 1;
        let frozen = Frozen {
            active: &self.active,
            runnable: &self.runnable,
            ycols: &self.ycols,
            y_upper: &self.y_upper,
        };
        let Some(sol) = solve_retrying(
            &mut self.lp,
            &mut self.mm,
            self.generate,
            self.instance,
            self.placement,
            &mut self.out,
            &frozen,
            retry,
            None,
            false,
            self.backend.time_limit(),
            self.deadline,
            self.exact_pivots,
        )?
        else {
            return Ok(Err(Stop::Early(self.last.take())));
        };
        if self.out.rounds == 1 && self.exact_pivots {
            // The first LP from scratch, the rest by primal simplex from
            // the last optimum: freezing users at their levels and closing
            // columns at 0 keep it feasible, and only the level has room
            // to rise. The exact pivots hand their basis back.
            self.lp.prefer_warm_primal()?;
        }
        let t_star = sol.x[self.mm.theta.0];
        Ok(Ok(self.round_at(sol, t_star)))
    }

    /// The round of level LP solution `sol` at level `t_star`.
    fn round_at(&self, sol: Solution, t_star: f64) -> Round {
        let tol = self.settings.level_tolerance * t_star.max(1e-12);
        let held: f64 = (0..self.active.len())
            .filter(|&n| self.runnable[n])
            .map(|n| {
                self.weight(n)
                    * if self.active[n] {
                        t_star
                    } else {
                        self.out.levels[n]
                    }
            })
            .sum();
        Round {
            sol,
            t_star,
            tol,
            share_tol: self.settings.share_tolerance * held,
        }
    }

    /// Stage 2: cap jumps. The users whose task cap the level passed
    /// freeze at it, all at once, and the same round is solved again
    /// without them (`None`); freeing capacity, the level never falls.
    /// Progressive filling reaches the same point: every active user
    /// holding min(theta*, its cap) is feasible, so none stops below it.
    /// Without them a cluster whose users end at their caps one by one
    /// spends a round per cap level. The rounds are numbered by level at
    /// the end, as the flat rounds would number them. Otherwise the
    /// round goes on (`Some`): a level that did not rise after a deferred
    /// round is that round going on.
    pub(crate) fn jump_caps(&mut self, round: Round) -> Result<Option<Round>, BackendError> {
        let t_star = round.t_star;
        if self.jumps {
            let reached: Vec<usize> = (0..self.active.len())
                .filter(|&n| {
                    self.active[n]
                        && self.cap_level[n] <= t_star * (1.0 + self.settings.level_tolerance)
                })
                .collect();
            if !reached.is_empty() {
                let mut sol = round.sol;
                for &n in &reached {
                    let cap = self.cap_level[n];
                    // The point, should no LP follow: the user's tasks
                    // scaled down to its cap (which only frees capacity).
                    let y = sol.x[self.ycols[n].0];
                    if y > cap {
                        let f = cap / y;
                        for &(_, c) in &self.mm.pairs[n] {
                            if let Some(v) = sol.x.get_mut(c.0) {
                                *v *= f;
                            }
                        }
                        sol.x[self.ycols[n].0] = cap;
                    }
                    self.active[n] = false;
                    self.out.frozen_round[n] = self.out.rounds;
                    self.out.levels[n] = cap;
                    self.out.freeze[n] = Freeze::Capped;
                    if let Some(c) = self.closing.as_mut() {
                        c.frozen(n, cap, cap);
                    }
                    self.lp.set_row_bounds(self.mm.level[n], -INF, INF)?;
                    self.lp.set_col_bounds(
                        self.ycols[n],
                        cap * (1.0 - self.relaxation),
                        self.y_upper[n],
                    )?;
                }
                self.jumped = true;
                self.out.rounds -= 1;
                self.last = Some(sol);
                return Ok(None);
            }
        }
        if self
            .deferred
            .is_some_and(|p| t_star <= p * (1.0 + self.settings.level_tolerance))
        {
            self.out.rounds -= 1;
        }
        self.out.first_level.get_or_insert(t_star / self.mm.scale);
        Ok(Some(round))
    }

    /// Stage 5: freeze the `blocked` users at the round's level (or their
    /// caps), close the complete rounds' entries to the users still
    /// rising, keep the round's point and report progress.
    pub(crate) fn freeze(&mut self, blocked: Vec<usize>, round: Round) -> Result<(), BackendError> {
        let t_star = round.t_star;
        for n in blocked {
            self.active[n] = false;
            self.out.frozen_round[n] = self.out.rounds;
            self.out.levels[n] = t_star;
            let cap = self.instance.users()[n].tasks.unwrap_or(INF);
            let at = self.mm.coef[n] * t_star;
            self.out.freeze[n] = if at >= cap * (1.0 - self.settings.level_tolerance) {
                Freeze::Capped
            } else {
                Freeze::Blocked
            };
            if let Some(c) = self.closing.as_mut() {
                // Its task cap in level units (not `y_upper`, the level
                // of the user alone on its entries: a user there leaves
                // no room on them to anyone who needs what it needs).
                c.frozen(n, t_star, cap / self.mm.coef[n]);
            }
            self.lp.set_row_bounds(self.mm.level[n], -INF, INF)?;
            self.lp.set_col_bounds(
                self.ycols[n],
                (t_star * (1.0 - self.relaxation)).min(self.y_upper[n]),
                self.y_upper[n],
            )?;
        }
        if let Some(c) = self.closing.as_mut() {
            // Every user active at this round's start reached t*: the
            // rounds below it are complete. Closed only to the users
            // still active, whose levels are still to be found (closed to
            // one whose level an open LP found, they can leave its bound
            // infeasible by the frozen bounds' rounding, amplified
            // through chains of shared servers).
            c.close(&mut self.lp, &self.active, t_star)?;
            self.out.closed_pairs = c.count;
        }
        self.last = Some(round.sol);
        if let Some(p) = &self.settings.progress {
            p.report(&crate::progress::RoundProgress {
                round: self.out.rounds,
                frozen: self.runnable_users - self.rising(),
                users: self.runnable_users,
                lps: self.out.lps,
                level: t_star / self.mm.scale,
            });
        }
        Ok(())
    }

    /// Stage 6: the live part, split into its connected components, once
    /// at most [`LIVE_FRACTION`] of the LP's users are live and the parts
    /// are apart ([`crate::rounds::live`]).
    pub(crate) fn live_parts(&self) -> Option<Vec<LivePart>> {
        let out = &self.out;
        let live = self.live();
        self.closing
            .as_ref()
            .filter(|_| {
                self.settings.live_parts
                    && self.settings.round_limit.is_none()
                    && self.runnable_users >= LIVE_FROM_USERS
                    && live as f64 <= LIVE_FRACTION * self.runnable_users as f64
                    && self.active.iter().any(|&a| a)
            })
            .and_then(|c| {
                live::parts(
                    self.instance,
                    &self.mm,
                    c,
                    &self.active,
                    &out.frozen_round,
                    out.rounds,
                )
            })
    }

    /// Users live after the last round: still rising, or frozen in it.
    pub(crate) fn live(&self) -> usize {
        (0..self.active.len())
            .filter(|&n| {
                self.runnable[n] && (self.active[n] || self.out.frozen_round[n] == self.out.rounds)
            })
            .count()
    }
}
