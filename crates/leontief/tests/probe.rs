//! The strategy-proofness probe: a gain where a mechanism is known to be
//! manipulable, none for DRFH (Theorem of 000) on generated instances.

use leontief::audit::{probe_sp, ProbeOptions, GAIN_THRESHOLD};
use leontief::{generated, Instance, Mechanism};

/// NFC (maximum total tasks) on one server [10, 10]: a needs [1, 1], b
/// needs [2, 1]. Truthfully a takes everything (10 tasks, b none). If b
/// claims less cpu than a per task, NFC prefers b's tasks; b really runs at
/// most 5 tasks (10 cpu / 2), and the probe finds a misreport near that.
#[test]
fn nfc_is_manipulable_on_a_constructed_instance() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"], "servers": [{"name": "s", "capacity": [10, 10]}],
            "users": [{"name": "a", "demand": [1, 1]}, {"name": "b", "demand": [2, 1]}]}"#,
    )
    .unwrap();
    let p = probe_sp(&inst, &Mechanism::Nfc, &ProbeOptions::default()).unwrap();
    assert!(p.manipulable);
    let b = &p.users[1];
    assert_eq!(b.truthful, 0.0);
    assert!(b.best > 4.0 && b.best <= 5.0 + 1e-9, "{b:?}");
    // The witness is real: b's report, solved again, gives b these tasks.
    let mut raw = inst.to_raw();
    let report = b.misreport.clone().unwrap();
    raw.users[1].demand = report.clone();
    let lied = Instance::new(raw).unwrap();
    let s = leontief::solve(&lied, &Mechanism::Nfc, &Default::default()).unwrap();
    let tasks = s.user_tasks[1] * (report[0] / 2.0).min(report[1] / 1.0);
    assert!(
        (tasks - b.best).abs() <= 1e-6 * b.best,
        "{tasks} vs {}",
        b.best
    );
}

/// DRFH and DRF: no profitable misreport on 64 generated instances.
#[test]
fn drfh_and_drf_gain_nothing() {
    let options = |seed| ProbeOptions {
        users: None,
        budget: 12,
        seed,
        inflate_only: false,
    };
    let mut probed = 0;
    for seed in 0..16u64 {
        for (users, servers, res) in [(5, 4, 2), (4, 3, 3), (6, 2, 2), (3, 5, 4)] {
            let inst = generated("heterogeneous", users, servers, res, seed, 0).unwrap();
            for m in [Mechanism::Drfh, Mechanism::Drf] {
                let p = probe_sp(&inst, &m, &options(seed)).unwrap();
                assert!(
                    !p.manipulable,
                    "{m} on {users}x{servers}x{res} seed {seed}: {:?}",
                    p.users.iter().find(|u| u.gain > GAIN_THRESHOLD)
                );
                assert!(p.users.iter().all(|u| u.solves == 12));
            }
            probed += 1;
        }
    }
    assert_eq!(probed, 64);
}
