//! `Options::time_limit` reaches every LP of the max-min operator's large
//! paths, not only HiGHS's: the block interior point method and Clarabel
//! of the pooled path (100 x 1,000 with 4 resources) and of the group path
//! (300 x 400: four groups of 100 servers). Out of time the answer says
//! `time_limit`; it is never an optimum computed past the limit.

use leontief::{generate, Mechanism, Options, Status, VerifyMode};

fn solve(inst: &leontief::Instance, limit: Option<f64>) -> leontief::Allocation {
    let m: Mechanism = "drfh".parse().unwrap();
    let options = Options {
        verify: VerifyMode::Never,
        time_limit: limit,
        ..Options::default()
    };
    leontief::solve(inst, &m, &options).unwrap()
}

#[test]
fn the_pooled_and_group_paths_stop_at_the_time_limit() {
    for inst in [
        generate::heterogeneous(100, 1000, 4, 2),
        generate::heterogeneous(300, 400, 2, 1),
    ] {
        let what = format!("{} x {}", inst.num_users(), inst.num_entries());
        let a = solve(&inst, Some(1e-9));
        assert_eq!(
            a.status,
            Status::TimeLimit,
            "{what}: {:?}",
            a.backend_status
        );
    }
}

/// The limit is per LP: a generous one changes nothing.
#[test]
fn a_generous_limit_is_not_reached() {
    let inst = generate::heterogeneous(300, 400, 2, 1);
    let a = solve(&inst, Some(600.0));
    assert_eq!(a.status, Status::Optimal, "{:?}", a.backend_status);
}

/// A time limit no back end takes is refused before anything is solved,
/// as the option it came from, for every family of mechanism (HiGHS's
/// and Clarabel's settings are checked alike).
#[test]
fn a_bad_time_limit_is_refused_naming_the_option() {
    let inst = generate::heterogeneous(5, 4, 2, 1);
    for name in [
        "drfh",
        "nfc",
        "gfj:alpha=2",
        "bbf-eg",
        "psdsf",
        "vds:alpha=2",
    ] {
        let m: Mechanism = name.parse().unwrap();
        for bad in [-1.0, 0.0, f64::NAN] {
            let options = Options {
                time_limit: Some(bad),
                ..Options::default()
            };
            let e = leontief::solve(&inst, &m, &options).unwrap_err();
            assert!(e.is_bad_input(), "{name} at {bad}: {e}");
            match &e {
                leontief::Error::Parameter(p) => {
                    assert!(p.to_string().contains("time_limit"), "{name} at {bad}: {p}")
                }
                other => panic!("{name} at {bad}: {other:?}"),
            }
        }
    }
}
