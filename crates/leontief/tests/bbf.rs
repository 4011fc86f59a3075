//! bbf-eg through the library, on its typed block (`details::BbfDetails`):
//! several servers are pooled and the answer says so; the irrational
//! Fisher-market prices of mechanisms.md, by both methods.

use leontief::details::BbfDetails;
use leontief::{Instance, Mechanism, Options};

fn eg(
    inst: &Instance,
    method: &str,
) -> (leontief::Solution, std::collections::BTreeMap<String, f64>) {
    let m: Mechanism = format!("bbf-eg:method={method}").parse().unwrap();
    let a = leontief::solve(inst, &m, &Options::default()).unwrap();
    let Some(BbfDetails::Eg(d)) = &a.bbf else {
        panic!("bbf-eg without its Eisenberg-Gale block");
    };
    let prices = d.prices.clone();
    (a, prices)
}

#[test]
fn several_servers_are_pooled_and_the_output_says_so() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["cpu", "mem"],
            "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2], "count": 2}],
            "users": [{"name": "a", "demand": [0.2, 1], "weight": 2}, {"name": "b", "demand": [1, 0.2], "tasks": 5, "servers": ["s1"]}]}"#,
    )
    .unwrap();
    let (a, prices) = eg(&inst, "auto");
    assert!(a.pooled);
    let notes = a.notes.join(" ");
    assert!(
        notes.contains("pooled") && notes.contains("placement lists"),
        "{notes}"
    );
    assert!(a.verification.as_ref().unwrap().ok);
    // Prices name the resources and explain every user.
    assert!(prices["cpu"].is_finite() && prices["mem"].is_finite());
    assert_eq!(a.explanation.len(), 2);
}

#[test]
fn the_irrational_prices_of_mechanisms_md() {
    // Requests (1,3), (2,1), (3,2), unit capacities, equal entitlements:
    // prices ((-3 + sqrt 39)/2, (9 - sqrt 39)/2) for budgets 1, so / 3 here.
    let inst = Instance::from_path(
        std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
        )
        .join("../../datasets/bbf/irrational-prices.json"),
    )
    .unwrap();
    let s = 39f64.sqrt();
    for method in ["conic", "dual"] {
        let (a, p) = eg(&inst, method);
        assert!(
            (p["r1"] - (-3.0 + s) / 6.0).abs() < 1e-12,
            "{method}: {p:?}"
        );
        assert!((p["r2"] - (9.0 - s) / 6.0).abs() < 1e-12, "{method}: {p:?}");
        // Every user spends exactly its budget 1/3 (Fisher market).
        for e in &a.explanation {
            assert!(e.contains("spends 0.333333"), "{e}");
        }
        assert!(a.verification.as_ref().unwrap().ok);
    }
}
