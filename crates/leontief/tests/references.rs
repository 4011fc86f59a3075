//! Sec. V of 002 for every output, through the library on the typed `gap`
//! block: percent fairness against exact DRFH and percent efficiency
//! against NFC, and a heuristic's distance to its exact mechanism beside
//! them; `VerifyMode::Never` skips the two reference solves.

use leontief::details::Gap;
use leontief::{Instance, Mechanism, Options, VerifyMode};

fn case(name: &str) -> Instance {
    Instance::from_path(
        std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
        )
        .join("../../datasets/paper-examples")
        .join(format!("{name}.json")),
    )
    .unwrap()
}

fn gap(inst: &Instance, spec: &str, verify: VerifyMode) -> Option<Gap> {
    let m: Mechanism = spec.parse().unwrap();
    let options = Options {
        verify,
        ..Options::default()
    };
    let a = leontief::solve(inst, &m, &options).unwrap();
    assert!(a.status.has_solution(), "{spec}");
    a.gap
}

#[test]
fn gfj_at_the_crossing_is_drf_so_fully_fair() {
    let g = gap(
        &case("joewong-sec5-drf"),
        "gfj:alpha=2.709511291351455",
        VerifyMode::Auto,
    )
    .unwrap();
    let r = g.references.unwrap();
    assert!(
        (r.percent_fairness - 100.0).abs() < 1e-6,
        "{}",
        r.percent_fairness
    );
    assert!(r.percent_efficiency > 0.0 && r.percent_efficiency <= 100.0 + 1e-9);
    assert_eq!(r.leftover_capacity.len(), 2);
}

#[test]
fn every_mechanism_reports_percent_fairness_and_efficiency() {
    let inst = case("drfh-fig1");
    let refs = |spec: &str| {
        gap(&inst, spec, VerifyMode::Auto)
            .and_then(|g| g.references)
            .unwrap()
    };
    assert!((refs("drfh").percent_fairness - 100.0).abs() < 1e-6);
    assert!((refs("nfc").percent_efficiency - 100.0).abs() < 1e-6);
    let ff = gap(&inst, "first-fit", VerifyMode::Auto).unwrap();
    assert!(ff.references.unwrap().percent_fairness < 100.0);
    let h = ff
        .heuristic
        .expect("first-fit keeps its distance to exact DRFH");
    assert_eq!(h.exact_mechanism, "drfh");
    for spec in ["psdsf", "tsf", "bbf-eg", "naive-drf"] {
        let r = refs(spec);
        assert!(
            r.percent_fairness > 0.0
                && r.percent_efficiency > 0.0
                && r.percent_efficiency <= 100.0 + 1e-9,
            "{spec}: {r:?}"
        );
    }
    assert!(gap(&inst, "drfh", VerifyMode::Never).is_none());
}
