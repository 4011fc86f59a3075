//! `leontief audit --exact`: the max-min certificate an allocation JSON
//! carries, re-checked in exact rational arithmetic
//! ([`leontief_audit::exact`]).

use super::AuditReport;
use crate::error::{bad_input, Error};
use crate::{Instance, Mechanism};
use leontief_audit::exact::{exact_certificate, ExactCheck};
use leontief_audit::verdicts::g;
use leontief_core::shares::{kdf_sigma, tsf_sigma};
use leontief_core::{PrintedRound, RoundPrices};
use serde_json::Value;

/// Re-check exactly the certificate of `allocation` (the JSON `leontief
/// solve` prints for drfh, kdf or tsf on several servers). The shares are
/// those of `shares` when given, else of the allocation's `mechanism`
/// (kdf needs `shares`: its k is not in the output). Refuses an
/// allocation without a certificate.
pub fn exact(
    instance: &Instance,
    allocation: &str,
    tasks: &leontief_core::Tasks,
    shares: Option<&Mechanism>,
) -> Result<ExactCheck, Error> {
    let v: Value = serde_json::from_str(allocation)
        .map_err(|e| bad_input(format!("--exact needs the allocation JSON: {e}")))?;
    let rounds = v.pointer("/certificate/rounds").ok_or_else(|| {
        bad_input(
            "the allocation carries no max-min certificate (certificate.rounds): --exact checks the certificates drfh, kdf and tsf print on several servers",
        )
    })?;
    // Either layout (sparse: `entries` lists the rows of `prices`).
    let printed: Vec<PrintedRound> = serde_json::from_value(rounds.clone())
        .map_err(|e| bad_input(format!("allocation.certificate.rounds: {e}")))?;
    let (k, m) = (instance.num_entries(), instance.num_resources());
    let rounds: Vec<RoundPrices> = printed
        .into_iter()
        .enumerate()
        .map(|(j, r)| {
            r.into_dense(k, m)
                .map_err(|e| bad_input(format!("allocation.certificate.rounds[{j}].{e}")))
        })
        .collect::<Result<_, _>>()?;
    let frozen: Vec<usize> = v
        .get("frozen_round")
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| bad_input(format!("allocation.frozen_round: {e}")))?
        .ok_or_else(|| bad_input("the allocation has a certificate but no frozen_round"))?;
    let user_tasks: Vec<f64> = match v.get("user_tasks") {
        Some(u) => serde_json::from_value(u.clone())
            .map_err(|e| bad_input(format!("allocation.user_tasks: {e}")))?,
        None => tasks.user_totals(),
    };
    let mechanism = shares_of(&v, shares)?;
    let (dominant, sigma) = match &mechanism {
        Mechanism::Drfh => (true, vec![0.0; instance.num_users()]),
        Mechanism::Tsf => (false, tsf_sigma(instance)),
        Mechanism::Kdf { k } => (false, kdf_sigma(instance, *k)),
        other => {
            return Err(bad_input(format!(
                "--exact {other}: only drfh, kdf and tsf print a max-min certificate"
            )))
        }
    };
    let placement = !v.get("pooled").and_then(Value::as_bool).unwrap_or(false);
    Ok(exact_certificate(
        instance,
        dominant,
        &sigma,
        tasks,
        &user_tasks,
        &frozen,
        &rounds,
        placement,
        1e-7,
        1e-6,
    ))
}

/// The shares the certificate is checked with: `shares`, else those of the
/// allocation's `mechanism`.
fn shares_of(v: &Value, shares: Option<&Mechanism>) -> Result<Mechanism, Error> {
    let name = v.get("mechanism").and_then(Value::as_str).unwrap_or("");
    Ok(match shares {
        Some(m) => m.clone(),
        None => match name {
            "drfh" => Mechanism::Drfh,
            "tsf" => Mechanism::Tsf,
            other => {
                return Err(bad_input(format!(
                    "--exact: the shares of mechanism \"{other}\" are not known from the output; name them (--exact drfh, --exact kdf:k=2, --exact tsf)"
                )))
            }
        },
    })
}

/// [`exact`] into `report`: where it proves the certificate, the
/// summary's Pareto verdict says so (a lexicographic max-min is Pareto
/// optimal), and with drfh's shares its DRFH max-min verdict too. The
/// LP checks' own findings stay in `pareto` and `drfh_max_min`; where
/// they claimed a rise the exact proof excludes, the room they leave each
/// user for rounding (1e-15 of its tasks on placement lists) or their
/// tolerances bought it (placement lists at 1,000 x 10,000, 4 resources:
/// 2e-16 of room is worth an 87% rise to one user in double-double
/// arithmetic).
pub fn exact_into(
    report: &mut AuditReport,
    instance: &Instance,
    allocation: &str,
    tasks: &leontief_core::Tasks,
    shares: Option<&Mechanism>,
) -> Result<(), Error> {
    let check = exact(instance, allocation, tasks, shares)?;
    // An infeasible allocation keeps its "no: infeasible" verdicts.
    if check.ok && report.judgement.feasibility.ok {
        let v: Value = serde_json::from_str(allocation)
            .map_err(|e| bad_input(format!("--exact needs the allocation JSON: {e}")))?;
        let drfh = shares_of(&v, shares)? == Mechanism::Drfh;
        let proof = format!(
            "proved in exact arithmetic by the allocation's max-min certificate (no user can rise by more than {} of its tasks)",
            g(check.proven_rise_bound)
        );
        for verdict in &mut report.judgement.summary {
            let implied = match verdict.property {
                "Pareto optimality" => true,
                "DRFH max-min" => drfh,
                _ => false,
            };
            if !implied {
                continue;
            }
            verdict.detail = match verdict.holds {
                Some(true) => format!("{}; {proof}", verdict.detail),
                _ => format!(
                    "{proof}; the LP check's finding is within what its room for rounding and its tolerances reach on this instance ({})",
                    verdict.detail
                ),
            };
            verdict.holds = Some(true);
        }
    }
    report.exact = Some(check);
    Ok(())
}

/// Without `--exact`: where the instance has placement lists, the
/// allocation carries a max-min certificate and an LP check found
/// Pareto optimality or DRFH max-min failing, a note says that the
/// certificate decides (on placement lists the checks' room for rounding
/// can buy a rise of percents: [`exact_into`]).
pub fn suggest_exact(report: &mut AuditReport, instance: &Instance, allocation: &str) {
    let failing = report.judgement.summary.iter().any(|v| {
        matches!(v.property, "Pareto optimality" | "DRFH max-min") && v.holds == Some(false)
    });
    let certified = serde_json::from_str::<Value>(allocation)
        .ok()
        .is_some_and(|v| v.pointer("/certificate/rounds").is_some());
    if failing && certified && instance.has_placement() {
        report.notes.push(
            "the allocation carries a max-min certificate: on placement lists the LP checks' room for rounding can buy a rise of percents (a slope of 1e10 or more from a bound to a level); --exact proves or refutes the certificate in exact arithmetic and decides Pareto optimality and DRFH max-min".into(),
        );
    }
}
