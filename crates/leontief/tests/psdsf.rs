//! PS-DSF through the library on a generated placement instance: the
//! default selection is ended by the exact forest finish and says so,
//! `select=sweeps` runs the best responses to their limit; both pass the
//! independent verification (Definition 4, sharing incentive, envy). (The
//! CLI test keeps the exit code of an unknown selection.)

use leontief::verification::Certificate;
use leontief::{generated, Instance, Mechanism, Options, Solution};

fn solve(inst: &Instance, spec: &str) -> Solution {
    let m: Mechanism = spec.parse().unwrap();
    let a = leontief::solve(inst, &m, &Options::default()).unwrap();
    assert_eq!(a.status, leontief::Status::Optimal);
    let v = a.verification.as_ref().unwrap();
    assert!(v.ok, "{v}");
    assert!(matches!(&v.certificate, Some(Certificate::Psdsf(c)) if c.holds));
    a
}

/// "...: N sweeps, ..." in the backend status.
fn sweeps(a: &Solution) -> usize {
    let s = a.backend_status.as_deref().unwrap();
    let words: Vec<&str> = s.split_whitespace().collect();
    let at = words.iter().position(|w| w.starts_with("sweeps")).unwrap();
    words[at - 1].parse().unwrap()
}

#[test]
fn both_selections_are_certified_and_say_how_they_ended() {
    let inst = generated("placement", 60, 30, 3, 1, 5).unwrap();
    let finish = solve(&inst, "psdsf");
    let status = finish.backend_status.as_deref().unwrap();
    assert!(status.contains("exact forest finish"), "{status}");
    let plain = solve(&inst, "psdsf:select=sweeps");
    let status = plain.backend_status.as_deref().unwrap();
    assert!(
        status.contains("converged") && !status.contains("forest"),
        "{status}"
    );
    assert!(sweeps(&finish) < sweeps(&plain));
    assert!("psdsf:select=fastest".parse::<Mechanism>().is_err());
}
