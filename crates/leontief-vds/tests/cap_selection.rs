//! alphaPF-VDS with task caps: the selection among the equilibria a cap
//! leaves open (docs/mechanisms.md, "Server-based mechanisms"). Each
//! server's best response holds a capped user to the room the others
//! leave, so without a selection Gauss-Seidel stopped at whichever split
//! of the cap the server order reached, certified either way, and users
//! and servers permuted gave other answers (one dominating the other).

use leontief_core::strategies::{config, instance, Shape};
use leontief_core::{Instance, RawInstance};
use leontief_vds::{vds, VdsOutcome, VdsSettings};
use proptest::prelude::*;

/// Users reversed, servers rotated by one, resources rotated by one; and
/// per user of the result, the original user's index.
fn permuted(inst: &Instance) -> (Instance, Vec<usize>) {
    let mut raw: RawInstance = inst.to_raw();
    let m = raw.resources.len();
    raw.users.reverse();
    raw.servers.rotate_left(1);
    raw.resources.rotate_left(1 % m);
    for s in &mut raw.servers {
        s.capacity.rotate_left(1 % m);
    }
    for u in &mut raw.users {
        u.demand.rotate_left(1 % m);
    }
    let order = (0..raw.users.len()).rev().collect();
    (Instance::new(raw).expect("a permutation is valid"), order)
}

fn solve(inst: &Instance, alpha: f64) -> VdsOutcome {
    vds(
        inst,
        &VdsSettings {
            alpha,
            ..VdsSettings::default()
        },
    )
}

fn totals(o: &VdsOutcome) -> Vec<f64> {
    o.tasks.iter().map(|r| r.iter().sum()).collect()
}

/// Both orders converge, certified (the cap split within the square root
/// of the tolerance, as the KKT residual), to the same totals within
/// 1e-5.
fn assert_same_in_any_order(inst: &Instance, alpha: f64) {
    let (other, order) = permuted(inst);
    let (a, b) = (solve(inst, alpha), solve(&other, alpha));
    for (o, which) in [(&a, "as given"), (&b, "permuted")] {
        assert!(
            o.converged && o.certificate.holds && o.certificate.cap_split <= 3.2e-5,
            "{which}: {:?}",
            o.certificate
        );
    }
    let (x, y) = (totals(&a), totals(&b));
    for (j, &n) in order.iter().enumerate() {
        assert!(
            (x[n] - y[j]).abs() <= 1e-5 * x[n].max(y[j]).max(1.0),
            "user {n}: {} as given, {} permuted\n{x:?}\n{y:?}",
            x[n],
            y[j]
        );
    }
}

/// Found by the permutation test (alpha = 2): u0 capped at 4.08 lands on
/// the servers u3 needs in one order and 30% of a user's tasks move.
#[test]
fn a_capped_user_takes_the_same_servers_in_any_order() {
    let inst = Instance::from_json_str(
        r#"{"resources":["r0","r1"],"servers":[{"name":"s0","capacity":[7.701471395410814,6.653713799082869],"count":3},{"name":"s1","capacity":[9.44859017262276,7.498675105747939],"count":2}],"users":[{"name":"u0","demand":[1.1204059841433944,1.7561959586586233],"tasks":4.077644948256432},{"name":"u1","demand":[0.40626611937635704,0.0],"tasks":19.38363079540573},{"name":"u2","demand":[0.9108870559831685,0.0],"weight":1.6883148371712007,"servers":["s1"]},{"name":"u3","demand":[0.0,1.3390787962535904],"weight":0.555943148711685}]}"#,
    )
    .unwrap();
    assert_same_in_any_order(&inst, 2.0);
    assert_same_in_any_order(&inst, 3.0);
}

/// Two users, one capped: 6% apart between the two orders before.
#[test]
fn one_capped_user_of_two_is_placed_the_same_in_any_order() {
    let inst = Instance::from_json_str(
        r#"{"resources":["r0","r1","r2"],"servers":[{"name":"s0","capacity":[4.751209009558789,7.843176339441568,7.9556192470780855]},{"name":"s1","capacity":[5.166093117664731,3.271387321171449,1.1137052251521382],"count":3},{"name":"s2","capacity":[5.293302374911373,3.6470208678487386,9.918365993720357],"count":2}],"users":[{"name":"u0","demand":[0.0,1.316949127104314,1.2120261148119258],"weight":2.1740062977597923},{"name":"u1","demand":[1.8246681730070176,1.1673440745845338,0.3918802668565076],"weight":3.0996905739490055,"tasks":8.671656214140242}]}"#,
    )
    .unwrap();
    assert_same_in_any_order(&inst, 2.0);
}

/// A capped user whose only free server is too small for its cap: it
/// fills that server, and the rest goes where it is best (the price of
/// that server is its own, so it does not set the selection; counting it
/// drove the user below its cap, `iteration_limit`).
#[test]
fn a_free_server_too_small_for_the_cap_is_filled_first() {
    let inst = Instance::from_json_str(
        r#"{"resources":["r0","r1","r2"],"servers":[{"name":"s0","capacity":[5.361998093927939,2.6491050343931786,9.200372657377669],"count":2},{"name":"s1","capacity":[1.766623626008698,2.9031070677639037,5.818675614584923],"count":2},{"name":"s2","capacity":[2.8827611502297685,3.128959124048006,3.9947103617908795],"count":3}],"users":[{"name":"u0","demand":[0.0,1.9005062186165054,0.6676560265426382],"tasks":15.99033214858898,"servers":["s1"]},{"name":"u1","demand":[0.8781132436256911,0.0,0.696768418244381],"weight":0.5368929903834057,"servers":["s0","s2"]},{"name":"u2","demand":[1.8473486629433984,0.0,0.0],"weight":1.4550451902933101,"tasks":2.879745842739042,"servers":["s0","s1"]}]}"#,
    )
    .unwrap();
    let o = solve(&inst, 10.0);
    assert!(o.converged && o.certificate.holds, "{:?}", o.certificate);
    // u2 is at its cap, with s1 (its own, two copies of 0.956 tasks each)
    // full.
    let t = totals(&o);
    assert!((t[2] - 2.879745842739042).abs() <= 1e-9 * t[2], "{t:?}");
    assert!((o.tasks[2][1] - 2.0 * 1.766623626008698 / 1.8473486629433984).abs() <= 1e-9);
    assert_same_in_any_order(&inst, 10.0);
}

/// Found by the permutation test at 3,000 cases: u1, capped and needing
/// only r2, can run on s0 (where u2 runs) and s1 (where u0 runs). On s1
/// r1 and r2 both bind when u0 has all of r1, and r2's price can be 0
/// there; read as free, the certificate accepted u1 a third of a task on
/// s0 (u2 4.7030 tasks), where at any price r2 can carry on s1 (at most
/// what u0 pays for it) s1 is the better server (u2 4.8499).
#[test]
fn a_full_resource_priced_at_zero_is_not_a_free_server() {
    let inst = Instance::from_json_str(
        r#"{"resources": ["r0", "r1", "r2"], "servers": [{"name": "s0", "capacity": [1.0, 5.693487958569821, 1.146135150509534], "count": 2}, {"name": "s1", "capacity": [1.0, 4.712055295771516, 3.4439375440509803]}], "users": [{"name": "u0", "demand": [0.0, 1.5228378010333494, 0.8750795791057228], "servers": ["s1"]}, {"name": "u1", "demand": [0.0, 0.0, 0.20918330808548044], "tasks": 3.851301649428165}, {"name": "u2", "demand": [0.0, 1.5438874453223883, 0.4726420975345996], "servers": ["s0"]}]}"#,
    )
    .unwrap();
    for alpha in [2.0, 3.0, 10.0] {
        let o = solve(&inst, alpha);
        assert!(o.converged && o.certificate.holds, "{:?}", o.certificate);
        // u1 wholly on s1; u2 has all of s0's r2.
        let t = totals(&o);
        let all = 2.0 * 1.146135150509534 / 0.4726420975345996;
        assert!((t[2] - all).abs() <= 1e-6 * all, "alpha {alpha}: {t:?}");
        assert_same_in_any_order(&inst, alpha);
    }
}

fn capped_shape() -> Shape {
    Shape {
        max_users: 5,
        max_servers: 3,
        caps: true,
        ..Shape::default()
    }
}

proptest! {
    #![proptest_config(config(64))]

    /// On generated instances with caps, an answer the certificate accepts
    /// has its capped users where the selection puts them (the cap split
    /// is part of `holds`), and the permuted instance's accepted answer
    /// has the same totals.
    #[test]
    fn capped_answers_are_the_same_in_any_order(inst in instance(capped_shape())) {
        let (other, order) = permuted(&inst);
        let (a, b) = (solve(&inst, 2.0), solve(&other, 2.0));
        prop_assume!(a.converged && b.converged);
        prop_assert!(a.certificate.cap_split <= 3.2e-5 && b.certificate.cap_split <= 3.2e-5);
        let (x, y) = (totals(&a), totals(&b));
        for (j, &n) in order.iter().enumerate() {
            prop_assert!(
                (x[n] - y[j]).abs() <= 1e-4 * x[n].max(y[j]) + 1e-9,
                "user {}: {} vs {}", n, x[n], y[j]
            );
        }
    }
}
