use super::*;
use crate::{certificate, psdsf_with, PsdsfSettings};
use leontief_core::generate;

/// The finish on a dense allocation.
fn finish(inst: &Instance, elig: &Eligibility, tasks: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let xp: Vec<f64> = elig
        .on_server
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |&(n, _)| tasks[n][i]))
        .collect();
    let total: Vec<f64> = tasks.iter().map(|t| t.iter().sum()).collect();
    forest_finish(inst, elig, &xp, &total, usize::MAX, None)
}

fn plain(instance: &Instance) -> Vec<Vec<f64>> {
    let o = psdsf_with(
        instance,
        &PsdsfSettings {
            exact_finish: false,
            over_relax: false,
            ..PsdsfSettings::default()
        },
    );
    assert!(o.converged);
    o.tasks
}

#[test]
fn the_finish_on_converged_sweeps_is_certified() {
    // On the final structure the finish must answer, and pass
    // Definition 4; it may pick another member than the sweeps where
    // consistent cycles leave the split free (PS-DSF is not unique).
    for seed in 1..6 {
        let inst = generate::placement(30, 20, 3, 4, seed);
        let elig = Eligibility::new(&inst);
        let gs = plain(&inst);
        assert!(certificate(&inst, &gs, 1e-9).holds);
        let t = finish(&inst, &elig, &gs).expect("a finish on the final structure");
        let c = certificate(&inst, &t, 1e-9);
        assert!(c.holds, "seed {seed}: {c:?}");
    }
}

#[test]
fn the_finish_fires_early_and_is_certified() {
    let inst = generate::placement(200, 100, 3, 10, 7);
    let o = psdsf_with(&inst, &PsdsfSettings::default());
    assert!(o.converged && o.exact_finish, "{} sweeps", o.sweeps);
    let plain = psdsf_with(
        &inst,
        &PsdsfSettings {
            exact_finish: false,
            over_relax: false,
            ..PsdsfSettings::default()
        },
    );
    assert!(o.sweeps < plain.sweeps, "{} vs {}", o.sweeps, plain.sweeps);
    let c = certificate(&inst, &o.tasks, 1e-9);
    assert!(c.holds, "{c:?}");
}

#[test]
fn a_wrong_structure_is_refused() {
    // After one sweep the structure is not the final one: the finish
    // must refuse rather than hand back an allocation failing Def. 4.
    let inst = generate::placement(60, 30, 3, 5, 3);
    let elig = Eligibility::new(&inst);
    let one = psdsf_with(
        &inst,
        &PsdsfSettings {
            max_sweeps: 1,
            exact_finish: false,
            over_relax: false,
            deadline: None,
            restart: false,
        },
    );
    if let Some(t) = finish(&inst, &elig, &one.tasks) {
        assert!(certificate(&inst, &t, 1e-9).holds);
    }
}

#[test]
fn a_server_whose_users_do_not_all_need_its_binding_resource_is_left_to_the_sweeps() {
    // One server: RAM saturates first (t = 1/2) and freezes u1 and u3;
    // u2 needs no RAM and rises on to t = 9/10 (CPU). Two levels on one
    // server: the one-level finish must refuse.
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "ram"],
            "servers": [{"name": "s", "capacity": [10, 2]}],
            "users": [{"name": "u1", "demand": [1, 1]}, {"name": "u2", "demand": [1, 0]},
                      {"name": "u3", "demand": [0, 1]}]}"#,
    )
    .unwrap();
    let elig = Eligibility::new(&inst);
    let gs = plain(&inst);
    assert!(finish(&inst, &elig, &gs).is_none());
    let x: Vec<f64> = gs.iter().map(|r| r.iter().sum()).collect();
    for (a, b) in x.iter().zip([1.0, 9.0, 1.0]) {
        assert!((a - b).abs() < 1e-12, "{x:?}");
    }
    assert!(certificate(&inst, &gs, 1e-9).holds);
}
