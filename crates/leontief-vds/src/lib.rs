//! Server-based mechanisms with placement constraints (004), as restated in
//! `docs/mechanisms.md`, "Server-based mechanisms".
//!
//! * gamma_{n,i} = min_{r: D_{n,r} > 0} c_{i,r} / D_{n,r} for n eligible on
//!   i (0 otherwise): the tasks n could run monopolising server entry i (a
//!   class of `count` servers is one entry of `count` times the capacity).
//! * virtual dominant share s_{n,i} = x_n / gamma_{n,i};
//! * **PS-DSF** (Definition 4) by Gauss-Seidel best responses: server i
//!   water-fills x_{n,i}(t) = max(0, t w_n gamma_{n,i} - o_n), o_n the
//!   user's tasks elsewhere, up to its saturation breakpoints (each
//!   breakpoint saturates a resource and freezes the users needing it), and
//!   the servers take turns (over-relaxed, x + 1.8 (BR(x) - x), where
//!   servers have at most 100 eligible users on average:
//!   [`OVER_RELAXATION`]); every few sweeps an exact finish solves the
//!   PS-DSF conditions on the structure the sweeps reached (one water
//!   level per server, holders on a forest: linear, peeled leaf by leaf,
//!   corrected by pivots; `forest.rs`; where the levels hold but the
//!   forest's split runs negative, the split over all tied pairs comes from
//!   one warm-started LP, `split.rs`) and ends the run when its answer
//!   passes the exact Definition-4 [`certificate`]; otherwise, from
//!   [`RESTART_FROM`] sweeps on, the sweeps restart from the finish's
//!   levels (the nearest split at them, an elastic LP), and go on until
//!   nothing moves. PS-DSF is not unique in general: this is the
//!   best-response point from zero, or the member the finish reaches on
//!   its structure (the selection rule is in every output; [`psdsf_with`]
//!   without the finish gives the sweeps' own limit).
//!
//! (TSF and DRFH with placement live on the max-min operator of
//! `leontief-drfh`; alphaPF-VDS at alpha = 1 is the proportional-fairness
//! cone program of `leontief-fds`.)
#![deny(missing_docs)]

use leontief_core::Instance;

mod checks;
mod forest;
mod psdsf;
mod select;
mod split;
mod vds;
mod vds_finish;

pub use checks::{separable, Separable};
pub use leontief_audit::placement::{
    bottleneck, sharing_incentive, PsdsfCheck as Certificate, PsdsfUserCheck as UserCertificate,
};

/// The audit's exact Definition-4 check of PS-DSF
/// ([`leontief_audit::placement::psdsf`]) for an allocation held densely
/// (`tasks[n][i]`), as this crate's solvers hold it.
pub fn certificate(
    instance: &leontief_core::Instance,
    tasks: &[Vec<f64>],
    tolerance: f64,
) -> Certificate {
    let tasks = leontief_core::Tasks::from_dense(tasks, instance.num_entries());
    leontief_audit::placement::psdsf(instance, &tasks, tolerance)
}
pub use psdsf::{psdsf, psdsf_with, PsdsfOutcome, PsdsfSettings, OVER_RELAXATION, RESTART_FROM};
pub use select::{comparisons, max_tasks, MaxTasksOutcome, MAX_TASKS_LIMIT};
pub use vds::{
    certify_point, vds, vds_certificate, vds_from, VdsCertificate, VdsOutcome, VdsSettings,
    FINISH_EVERY, FINISH_MAX_PRICES,
};

/// Who may run where: for each server entry, the users with
/// gamma_{n,i} > 0 and their gamma (sparse: placement lists and servers
/// lacking a resource leave most pairs out).
#[derive(Debug, Clone)]
pub struct Eligibility {
    /// (user, gamma_{n,i}) for every server entry.
    pub on_server: Vec<Vec<(usize, f64)>>,
}

impl Eligibility {
    /// The eligible pairs of `instance`.
    pub fn new(instance: &Instance) -> Self {
        let mut on_server = vec![Vec::new(); instance.num_entries()];
        for n in instance.user_ids() {
            for i in instance.server_ids() {
                let g = instance.gamma(n, i);
                if g > 0.0 && g.is_finite() {
                    on_server[i.0].push((n.0, g));
                }
            }
        }
        Eligibility { on_server }
    }

    /// Where each server entry's pairs start when the pairs are laid out
    /// server by server in the order of `on_server` (one entry more: the
    /// number of pairs).
    pub fn pair_starts(&self) -> Vec<usize> {
        let mut start = Vec::with_capacity(self.on_server.len() + 1);
        start.push(0);
        for list in &self.on_server {
            start.push(start[start.len() - 1] + list.len());
        }
        start
    }
}

/// gamma_{n,i} for every user and server entry.
pub fn gamma(instance: &Instance) -> Vec<Vec<f64>> {
    instance
        .user_ids()
        .map(|n| {
            instance
                .server_ids()
                .map(|i| instance.gamma(n, i))
                .collect()
        })
        .collect()
}

/// Whether a run's time limit has passed.
pub(crate) fn past(deadline: Option<std::time::Instant>) -> bool {
    deadline.is_some_and(|d| std::time::Instant::now() >= d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig1(d4: [f64; 3]) -> Instance {
        Instance::from_json_str(&format!(
            r#"{{"resources": ["cpu", "ram", "disk"],
                "servers": [{{"name": "s1", "capacity": [12, 4, 75]}}, {{"name": "s2", "capacity": [8, 16, 0]}}],
                "users": [{{"name": "u1", "demand": [1, 1, 5]}}, {{"name": "u2", "demand": [1, 0.3333333333333333, 5]}},
                          {{"name": "u3", "demand": [0.25, 1, 0]}}, {{"name": "u4", "demand": [{}, {}, {}]}}]}}"#,
            d4[0], d4[1], d4[2]
        ))
        .unwrap()
    }

    #[test]
    fn fig1_and_its_variant() {
        for (d4, want) in [
            ([0.5, 1.0, 0.0], [2.0, 6.0, 8.0, 8.0]),
            ([1.0, 0.5, 0.0], [2.0, 6.0, 32.0 / 3.0, 16.0 / 3.0]),
        ] {
            let inst = fig1(d4);
            let o = psdsf(&inst, 10_000);
            assert!(o.converged);
            let x: Vec<f64> = o.tasks.iter().map(|r| r.iter().sum()).collect();
            for (a, b) in x.iter().zip(want) {
                assert!((a - b).abs() < 1e-9, "{x:?} vs {want:?}");
            }
            let c = certificate(&inst, &o.tasks, 1e-9);
            assert!(c.holds, "{c:?}");
        }
    }

    #[test]
    fn the_certificate_rejects_a_perturbed_allocation() {
        let inst = fig1([0.5, 1.0, 0.0]);
        let mut t = psdsf(&inst, 10_000).tasks;
        // Move a little of u3 from s2 to nothing: s2's RAM is no longer
        // saturated, so u3 (and u4) could rise there.
        t[2][1] *= 0.99;
        let c = certificate(&inst, &t, 1e-9);
        assert!(!c.holds);
    }

    #[test]
    fn vds_on_fig1_variant_matches_mechanisms_md() {
        let s2 = 2f64.sqrt();
        for (alpha, want) in [
            (1.0, [2.0, 6.0, 96.0 / 7.0, 32.0 / 7.0]),
            (2.0, [2.0, 6.0, 32.0 * s2 - 32.0, 16.0 - 8.0 * s2]),
            (3.0, [2.0, 6.0, 12.3676227060579, 4.908094323485525]),
            (10.0, [2.0, 6.0, 11.1651, 5.2087]),
        ] {
            for jacobi in [None, Some(0.5)] {
                let inst = fig1([1.0, 0.5, 0.0]);
                let o = vds(
                    &inst,
                    &VdsSettings {
                        alpha,
                        jacobi,
                        ..VdsSettings::default()
                    },
                );
                let x: Vec<f64> = o.tasks.iter().map(|r| r.iter().sum()).collect();
                assert!(
                    o.converged,
                    "alpha {alpha} {jacobi:?}: {:?} {x:?}",
                    o.certificate
                );
                for (a, b) in x.iter().zip(want) {
                    assert!(
                        (a - b).abs() < 1e-4 * b,
                        "alpha {alpha} {jacobi:?}: {x:?} vs {want:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn vds_on_fig1_is_the_bottleneck_max_min_for_every_alpha() {
        for alpha in [1.0, 2.0, 3.0, 10.0, 30.0] {
            let inst = fig1([0.5, 1.0, 0.0]);
            let o = vds(
                &inst,
                &VdsSettings {
                    alpha,
                    ..VdsSettings::default()
                },
            );
            assert!(o.converged, "{alpha}: {:?}", o.certificate);
            let x: Vec<f64> = o.tasks.iter().map(|r| r.iter().sum()).collect();
            for (a, b) in x.iter().zip([2.0, 6.0, 8.0, 8.0]) {
                assert!((a - b).abs() < 1e-6, "{alpha}: {x:?}");
            }
        }
    }

    #[test]
    fn the_vds_certificate_rejects_a_perturbed_equilibrium() {
        let inst = fig1([1.0, 0.5, 0.0]);
        let o = vds(
            &inst,
            &VdsSettings {
                alpha: 3.0,
                ..VdsSettings::default()
            },
        );
        assert!(o.certificate.holds);
        let mut t = o.tasks.clone();
        // Move some of u3's tasks on s2 to u4 (RAM-neutral: u3 needs 1, u4 0.5).
        t[2][1] -= 0.1;
        t[3][1] += 0.2;
        let c = vds_certificate(&inst, 3.0, &t, &o.prices, &o.log_scale, 1e-9);
        assert!(!c.holds, "{c:?}");
    }
}
