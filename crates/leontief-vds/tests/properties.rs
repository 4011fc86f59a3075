//! PS-DSF on generated instances with placement, caps and unequal weights:
//! the best responses converge, the answer is feasible and passes the
//! Definition-4 certificate, and it is sharing-incentive compatible and
//! envy-free under placement (checked here from the allocation alone).

use leontief_core::strategies::{config, instance, Shape};
use leontief_core::Instance;
use leontief_vds::{certificate, gamma, psdsf};
use proptest::prelude::*;

fn shape() -> Shape {
    Shape {
        max_users: 5,
        max_servers: 3,
        max_resources: 3,
        weights: true,
        caps: false,
        placement: true,
        ..Shape::default()
    }
}

/// Sharing incentive under placement: x_n >= (w_n / sum w) sum_{i in E_n}
/// gamma_{n,i}. Returns the worst relative shortfall.
fn sharing_incentive(inst: &Instance, x: &[f64]) -> f64 {
    let g = gamma(inst);
    let wsum: f64 = inst.users().iter().map(|u| u.weight).sum();
    inst.user_ids()
        .map(|n| {
            let fair = inst.user(n).weight / wsum * g[n.0].iter().sum::<f64>();
            if fair > 0.0 {
                (fair - x[n.0]) / fair
            } else {
                0.0
            }
        })
        .fold(0.0, f64::max)
}

/// Weighted envy under placement: the tasks n could run with m's bundles
/// on the servers n may use, scaled by w_n / w_m, against x_n.
fn envy(inst: &Instance, tasks: &[Vec<f64>]) -> f64 {
    let users = inst.users();
    let x: Vec<f64> = tasks.iter().map(|r| r.iter().sum()).collect();
    let mut worst = 0.0f64;
    for n in inst.user_ids() {
        for m in inst.user_ids().filter(|&m| m != n) {
            let with: f64 = inst
                .server_ids()
                .filter(|&i| inst.can_run_on(n, i))
                .map(|i| {
                    users[n.0]
                        .demand
                        .iter()
                        .zip(&users[m.0].demand)
                        .filter(|(&dn, _)| dn > 0.0)
                        .map(|(&dn, &dm)| tasks[m.0][i.0] * dm / dn)
                        .fold(f64::INFINITY, f64::min)
                })
                .sum();
            let with = with * users[n.0].weight / users[m.0].weight;
            if with > 0.0 {
                worst = worst.max((with - x[n.0]) / with.max(x[n.0]).max(1e-300));
            }
        }
    }
    worst
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn psdsf_passes_definition_4_sharing_incentive_and_envy_freeness(inst in instance(shape())) {
        let o = psdsf(&inst, 100_000);
        prop_assert!(o.converged, "no convergence in {} sweeps", o.sweeps);
        let c = certificate(&inst, &o.tasks, 1e-9);
        prop_assert!(c.holds, "{c:?}");
        let x: Vec<f64> = o.tasks.iter().map(|r| r.iter().sum()).collect();
        let si = sharing_incentive(&inst, &x);
        prop_assert!(si <= 1e-9, "sharing incentive short by {si}: {x:?}");
        let e = envy(&inst, &o.tasks);
        prop_assert!(e <= 1e-9, "envy {e}: {:?}", o.tasks);
        // Placement is honoured.
        for n in inst.user_ids() {
            for i in inst.server_ids() {
                if !inst.can_run_on(n, i) {
                    prop_assert_eq!(o.tasks[n.0][i.0], 0.0);
                }
            }
        }
    }
}
