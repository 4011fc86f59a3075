//! Which users of a round cannot rise: the verdicts of the level LP's
//! duals and prices (stage 3), and the growth LPs for the users they
//! leave undecided (stage 4).

use crate::lp::duality::{certificate_prices, dual_blocked};
use crate::lp::retry::{set_upper, solve_retrying, Frozen};
use crate::outcome::RoundCertificate;
use crate::rounds::state::{Round, RoundState, Stop};
use crate::settings::CAPPED_GROWTH_USERS;
use leontief_core::Status;
use leontief_model::{BackendError, LoadedLp, LpBackend};

const INF: f64 = f64::INFINITY;

/// The users of a round the level LP decides.
pub(crate) struct Verdicts {
    /// Proved blocked (by the round's prices, or a vertex's duals that
    /// the prices confirm).
    pub(crate) blocked: Vec<usize>,
    /// Left to the growth LPs.
    pub(crate) undecided: Vec<usize>,
    /// Blocked by a vertex's duals that the prices do not prove.
    pub(crate) suspects: Vec<usize>,
}

impl<B: LpBackend> RoundState<'_, B> {
    /// Stage 3: the users the level LP decides. Duals decide only where
    /// they are exact (a vertex solution) and the round's own prices
    /// prove them ([`dual_blocked`]); the rest go to the growth LPs,
    /// unless the round defers them to the next level LP
    /// ([`crate::settings::MaxMinSettings::defer_growth`]) or an interior
    /// point shows them all rising.
    pub(crate) fn verdicts(&mut self, round: &Round) -> Verdicts {
        let nu = self.active.len();
        let (sol, t_star) = (&round.sol, round.t_star);
        let mut blocked: Vec<usize> = Vec::new();
        let mut undecided: Vec<usize> = Vec::new();
        let trust_duals = self.backend.vertex_duals();
        let mut suspects: Vec<usize> = Vec::new();
        for n in (0..nu).filter(|&n| self.active[n]) {
            if trust_duals && sol.row_dual[self.mm.level[n].0].abs() > self.settings.dual_tolerance
            {
                blocked.push(n);
            } else {
                undecided.push(n);
            }
        }
        let lower: Vec<f64> = (0..nu)
            .map(|k| match (self.runnable[k], self.active[k]) {
                (false, _) => 0.0,
                (true, true) => t_star,
                (true, false) => self.out.levels[k],
            })
            .collect();
        // The users the round's own prices must prove blocked: with
        // vertex duals, those a positive level dual blocks (exact in exact
        // arithmetic, but an ill-conditioned round that leaves the LP
        // barely feasible can mislead it); without, every active user, so
        // that those it proves need no growth LP.
        let candidates = if trust_duals {
            std::mem::take(&mut blocked)
        } else {
            std::mem::take(&mut undecided)
        };
        if !candidates.is_empty() {
            let (proved, prices) = dual_blocked(
                &self.mm,
                self.instance,
                self.placement,
                &sol.row_dual,
                &lower,
                &candidates,
                round.tol,
                self.closing.as_ref(),
            );
            let mut is_proved = vec![false; nu];
            for &n in &proved {
                is_proved[n] = true;
            }
            let rest = candidates.into_iter().filter(|&n| !is_proved[n]);
            if trust_duals {
                suspects.extend(rest);
                undecided.extend(&suspects);
                undecided.sort_unstable();
            } else {
                undecided.extend(rest);
            }
            if !proved.is_empty() {
                self.out.certificates.push(RoundCertificate {
                    round: self.out.rounds,
                    prices,
                    users: proved.clone(),
                });
                blocked.extend(proved);
            }
        }
        self.deferred = None;
        if self.settings.defer_growth && trust_duals && !blocked.is_empty() && !undecided.is_empty()
        {
            // The next level LP decides them (see the setting).
            undecided.clear();
            suspects.clear();
            self.deferred = Some(t_star);
        }
        if !trust_duals && !undecided.is_empty() {
            // An interior point method ends near the centre of the optimal
            // face, where every user that can rise is above theta*: its
            // point is the same witness a growth LP gives. (Kept active
            // wrongly, a user would freeze at theta* in the next round.)
            if !blocked.is_empty() && undecided.iter().all(|&n| self.rises(round, &sol.x, n)) {
                undecided.clear();
            }
        }
        Verdicts {
            blocked,
            undecided,
            suspects,
        }
    }

    /// Whether user `n` at point `x` rises above the round's level.
    fn rises(&self, round: &Round, x: &[f64], n: usize) -> bool {
        // Columns are in level units: y'_n is user n's level.
        let gain = x[self.ycols[n].0] - round.t_star;
        gain > round.tol && self.weight(n) * gain > round.share_tol
    }

    /// Stage 4: growth LPs (theta fixed at the round's level, the sum of
    /// the undecided users' levels maximised) until none of them rises;
    /// those that cannot rise join the blocked. Returns every user that
    /// freezes this round, or how the rounds stop (a limit, or a growth
    /// LP without a solution).
    pub(crate) fn growth(
        &mut self,
        round: &Round,
        verdicts: Verdicts,
    ) -> Result<Result<Vec<usize>, Stop>, BackendError> {
        let Verdicts {
            mut blocked,
            mut undecided,
            mut suspects,
        } = verdicts;
        let t_star = round.t_star;
        let (theta, settings) = (self.mm.theta, self.settings);
        if !undecided.is_empty() {
            let fixed = t_star * (1.0 - self.relaxation);
            self.lp.set_col_bounds(theta, fixed, fixed)?;
            self.lp.set_cost(theta, 0.0)?;
            for &n in &undecided {
                self.lp.set_cost(self.ycols[n], 1.0)?;
            }
            // Capped first ([`MaxMinSettings::growth_cap`]): a vertex
            // gives the growth to a few users; with each capped, one LP
            // raises most users that can rise. The verdict "cannot rise"
            // comes from an uncapped LP only.
            let mut capped = self.backend.vertex_duals()
                && settings.growth_cap > 0.0
                && self.runnable_users >= CAPPED_GROWTH_USERS;
            let cap_at = t_star * (1.0 + settings.growth_cap);
            if capped {
                for &n in &undecided {
                    set_upper(&mut self.lp, self.ycols[n], self.upper_now[n].min(cap_at))?;
                }
            }
            loop {
                if self.out_of_time() {
                    return Ok(Err(Stop::Early(Some(round.sol.clone()))));
                }
                self.out.growth_lps += 1;
                // As for the level LP, theta relaxed with the frozen users.
                let frozen = Frozen {
                    active: &self.active,
                    runnable: &self.runnable,
                    ycols: &self.ycols,
                    y_upper: &self.y_upper,
                };
                let second_opinion = self.backend.vertex_duals() && !self.generate;
                let Some(g) = solve_retrying(
                    &mut self.lp,
                    &mut self.mm,
                    self.generate,
                    self.instance,
                    self.placement,
                    &mut self.out,
                    &frozen,
                    true,
                    Some((theta, t_star)),
                    second_opinion,
                    self.backend.time_limit(),
                    self.deadline,
                    self.exact_pivots,
                )?
                else {
                    return Ok(Err(Stop::Early(Some(round.sol.clone()))));
                };
                let (free, stuck): (Vec<usize>, Vec<usize>) =
                    undecided.iter().partition(|&&n| self.rises(round, &g.x, n));
                for &n in &free {
                    self.lp.set_cost(self.ycols[n], 0.0)?;
                }
                if capped {
                    let lifted = if free.is_empty() { &stuck } else { &free };
                    for &n in lifted {
                        set_upper(&mut self.lp, self.ycols[n], self.upper_now[n])?;
                    }
                }
                undecided = stuck;
                if free.is_empty() && capped && !undecided.is_empty() {
                    // None rose under the caps: ask again without them.
                    capped = false;
                    continue;
                }
                if free.is_empty() && !undecided.is_empty() {
                    self.out.certificates.push(RoundCertificate {
                        round: self.out.rounds,
                        prices: certificate_prices(&self.mm, &g.row_dual),
                        users: undecided.clone(),
                    });
                }
                if free.is_empty() || undecided.is_empty() {
                    break;
                }
            }
            for &n in &undecided {
                self.lp.set_cost(self.ycols[n], 0.0)?;
            }
            blocked.extend(undecided);
            self.lp.set_col_bounds(theta, 0.0, INF)?;
            self.lp.set_cost(theta, 1.0)?;
        }
        if blocked.is_empty() && !suspects.is_empty() {
            // The growth LPs raised every user, the level LP's vertex said
            // some cannot rise, and no price proves either: the round is
            // ill-conditioned beyond double precision. Go by the vertex
            // (blocked in exact arithmetic) and say so; the independent
            // verification decides whether the answer holds. (Every
            // suspect is still active: one a growth LP had found stuck
            // would be in `blocked`.)
            self.out.status = self.out.status.worst(Status::ReducedAccuracy);
            self.out.raw_status = format!(
                "max-min round {}: users frozen by the level LP's duals, which neither their prices nor the growth LPs confirm",
                self.out.rounds
            );
            blocked.append(&mut suspects);
        }
        Ok(Ok(blocked))
    }
}
