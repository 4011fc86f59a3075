//! The alphaPF-VDS certificate refuses what is not an equilibrium, also
//! where the utility's scale hides it.

use leontief_core::Instance;
use leontief_vds::{vds, VdsSettings};

/// At alpha = 30 the sweeps once stopped with r0, needed by u3
/// alone, 2% idle at a price far below r1's, and the certificate accepted
/// it (its gap weighs that price against the server's whole spending, and
/// at that price u3's best response is its total). With complementarity
/// kept in the KKT residual (a resource with room prices nothing) the
/// answer is certified only with r0 full: u3 at 3 x 1.914 / 1.769 tasks.
#[test]
fn an_idle_priced_resource_is_never_certified() {
    let inst = Instance::from_json_str(
        r#"{"resources":["r1","r0"],"servers":[{"name":"s0","capacity":[1.7740011173483068,1.914042645474008],"count":3}],"users":[{"name":"u3","demand":[0.0,1.7689030371609566],"tasks":16.621902895448898},{"name":"u2","demand":[0.7763396477002812,0.0],"weight":1.1070112809113986},{"name":"u1","demand":[0.7489638694194093,0.0]},{"name":"u0","demand":[0.8874916378795046,0.0]}]}"#,
    )
    .unwrap();
    let o = vds(
        &inst,
        &VdsSettings {
            alpha: 30.0,
            ..VdsSettings::default()
        },
    );
    let full = 3.0 * 1.914042645474008 / 1.7689030371609566;
    let u3: f64 = o.tasks[0].iter().sum();
    assert!(
        !o.certificate.holds || (u3 - full).abs() <= 1e-6 * full,
        "certified with u3 at {u3} of {full}: {:?}",
        o.certificate
    );
}
