//! What the max-min operator's integration tests share: one run of the
//! operator on HiGHS, each user's tasks, the rounds' prices, the audit's
//! one-pass certificate check, and relative closeness.
//!
//! Each test file takes what it uses (`mod support;`), so not every item
//! is used by every file.
#![allow(dead_code)]

use leontief_audit::{max_min_certificate, CertificateCheck};
use leontief_core::{Instance, RoundPrices};
use leontief_drfh::maxmin::{lex_max_min, Columns, MaxMinOutcome, MaxMinSettings};
use leontief_highs::Highs;

/// The operator with placement on HiGHS, `columns` its path setting and
/// every other setting the default.
pub fn run(inst: &Instance, sigma: &[f64], columns: Columns) -> MaxMinOutcome {
    let settings = MaxMinSettings {
        columns,
        ..Default::default()
    };
    lex_max_min(&Highs::default(), inst, sigma, true, &settings).expect("runs")
}

/// Each user's tasks over every entry.
pub fn user_tasks(o: &MaxMinOutcome) -> Vec<f64> {
    o.tasks.user_totals()
}

/// The prices of each round of `o`, with `m` resources.
pub fn round_prices(m: usize, o: &MaxMinOutcome) -> Vec<RoundPrices> {
    o.certificates.iter().map(|c| c.to_prices(m)).collect()
}

/// The audit's check of `o`'s certificate for the user totals `x`,
/// levels to 1e-7 and the proof to `tolerance`.
pub fn certify_to(
    inst: &Instance,
    sigma: &[f64],
    o: &MaxMinOutcome,
    x: &[f64],
    tolerance: f64,
) -> CertificateCheck {
    let rounds = round_prices(inst.num_resources(), o);
    max_min_certificate(
        inst,
        sigma,
        x,
        &o.frozen_round,
        &rounds,
        true,
        1e-7,
        tolerance,
    )
}

/// [`certify_to`] with the proof to 1e-6.
pub fn certify(inst: &Instance, sigma: &[f64], o: &MaxMinOutcome, x: &[f64]) -> CertificateCheck {
    certify_to(inst, sigma, o, x, 1e-6)
}

/// Whether [`certify`] accepts.
pub fn certifies(inst: &Instance, sigma: &[f64], o: &MaxMinOutcome, x: &[f64]) -> bool {
    certify(inst, sigma, o, x).ok
}

/// `a` and `b` within `rel` of the larger (1e-12 at least).
pub fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-12)
}

/// The first user whose levels in `a` and `b` are not [`close`] within
/// `rel`, with both levels; `None` when every user's agree.
pub fn levels_apart(a: &[f64], b: &[f64], rel: f64) -> Option<(usize, f64, f64)> {
    assert_eq!(a.len(), b.len(), "levels of different numbers of users");
    a.iter()
        .zip(b)
        .position(|(x, y)| !close(*x, *y, rel))
        .map(|n| (n, a[n], b[n]))
}
