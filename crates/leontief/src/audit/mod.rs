//! Audit an allocation made elsewhere: every property with its witness
//! ([`leontief_audit::judge`]) and the distance to exact mechanisms on the
//! same instance.
//!
//! ```
//! use leontief::audit::{audit, AuditOptions, Tasks};
//! let instance = leontief::Instance::from_json_str(r#"{
//!     "resources": ["cpu", "mem"],
//!     "servers": [{"name": "s1", "capacity": [2, 12]}, {"name": "s2", "capacity": [12, 2]}],
//!     "users": [{"name": "u1", "demand": [0.2, 1]}, {"name": "u2", "demand": [1, 0.2]}]
//! }"#).unwrap();
//! // u1 got 10 tasks, u2 only 4.
//! let tasks = Tasks::from(vec![vec![10.0, 0.0], vec![0.0, 4.0]]);
//! let report = audit(&instance, &tasks, &AuditOptions::default()).unwrap();
//! let drfh = &report.against[0];
//! assert_eq!(drfh.mechanism, "drfh");
//! assert!((drfh.fairness_percent.unwrap() - 40.0).abs() < 1e-6);
//! assert_eq!(drfh.lost_most[0].user, "u2");
//! ```

mod algorithms;
mod compare;
mod exact;
mod probe;
mod read;

pub use algorithms::{
    compare_algorithms, Algorithm, AlgorithmsReport, Property, QueueLine, QueueLoss,
};
pub use compare::{compare, Comparison, Ratio};
pub use exact::{exact, exact_into, suggest_exact};
pub use leontief_audit::exact::ExactCheck;
pub use leontief_audit::judge::{Judgement, Verdict};
pub use probe::{probe_sp, Probe, ProbeOptions, UserProbe, GAIN_THRESHOLD, MAX_BUDGET};
pub use read::{read_allocation, AllocationFormat, Tasks};

use crate::error::Error;
use crate::{Mechanism, Options, ParamError, VerifyMode};
use leontief_core::Instance;
use serde::Serialize;

/// The default references for `instance`: DRFH and NFC at every size
/// (NFC's column generation takes 2.6 s at 10^7 pairs, where its flat LP
/// did not finish: until then NFC was left out above 10^6 pairs). The
/// second value is a note on what was left out: none now.
pub fn default_against(instance: &Instance) -> (Vec<Mechanism>, Option<String>) {
    let _ = instance;
    (vec![Mechanism::Drfh, Mechanism::Nfc], None)
}

/// What an audit runs.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditOptions {
    /// The mechanisms to compare with (default drfh and nfc; see
    /// [`default_against`] for the size-aware choice the CLI and Python
    /// make).
    pub against: Vec<Mechanism>,
    /// The LP-based properties: by size (`Auto`), always, or never.
    pub mode: VerifyMode,
    /// Time limit of each mechanism's solve, seconds.
    pub time_limit: Option<f64>,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            against: vec![Mechanism::Drfh, Mechanism::Nfc],
            mode: VerifyMode::Auto,
            time_limit: None,
        }
    }
}

/// The audit of one allocation.
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    /// Every property with its witness.
    #[serde(flatten)]
    pub judgement: Judgement,
    /// The distance to each mechanism of [`AuditOptions::against`].
    pub against: Vec<Comparison>,
    /// The allocation's max-min certificate re-checked in exact
    /// arithmetic, when asked ([`exact`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactCheck>,
    /// What the audit left out, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Audit `tasks` (per user and server entry, instance order) on
/// `instance`.
pub fn audit(
    instance: &Instance,
    tasks: &Tasks,
    options: &AuditOptions,
) -> Result<AuditReport, Error> {
    let run = Options {
        verify: options.mode,
        time_limit: options.time_limit,
        ..Options::default()
    };
    let highs = run.backend()?;
    let solved: Vec<crate::Solution> = options
        .against
        .iter()
        .map(|m| crate::solve(instance, m, &run))
        .collect::<Result<_, Error>>()?;
    // Above the flat LPs' size, DRFH max-min is decided against a
    // certified DRFH answer: the one of --against, or one solved here.
    let size = instance.num_users() * instance.num_entries();
    let flat = match options.mode {
        VerifyMode::Always => true,
        VerifyMode::Never => false,
        VerifyMode::Auto => size <= leontief_audit::judge::LP_CHECKS_UP_TO,
    };
    let own;
    let drfh = match options.against.iter().position(|m| *m == Mechanism::Drfh) {
        _ if flat || options.mode == VerifyMode::Never => None,
        Some(i) => Some(&solved[i]),
        None => {
            own = crate::solve(instance, &Mechanism::Drfh, &run)?;
            Some(&own)
        }
    };
    let judgement = leontief_audit::judge::judge(&highs, instance, tasks, options.mode, drfh)
        .map_err(|e| Error::Run(e.to_string()))?;
    let x = tasks.user_totals();
    let against = options
        .against
        .iter()
        .zip(&solved)
        .map(|(m, s)| compare(instance, &x, judgement.feasibility.ok, m, s))
        .collect();
    Ok(AuditReport {
        judgement,
        against,
        exact: None,
        notes: Vec::new(),
    })
}

/// A list of mechanisms, comma-separated (`none` or empty: no
/// mechanism): spec strings (`kdf:k=2`,
/// `pnorm:p=inf,beta=2`: a `key=value` without a name continues the
/// mechanism before it), and `kdf:2`, `vds:3`, `pnorm:4` for the one main
/// parameter.
///
/// ```
/// let l = leontief::audit::parse_against("drfh,kdf:2,pnorm:p=inf,beta=2,bbf-eg").unwrap();
/// let s: Vec<String> = l.iter().map(|m| m.to_string()).collect();
/// assert_eq!(s[0], "drfh");
/// assert_eq!(s[1], "kdf:k=2");
/// assert_eq!(s[2], "pnorm:beta=2,lambda=-0.5,p=inf");
/// assert_eq!(s[3], "bbf-eg:method=auto");
/// assert!(leontief::audit::parse_against("none").unwrap().is_empty());
/// ```
pub fn parse_against(list: &str) -> Result<Vec<Mechanism>, ParamError> {
    if list.trim() == "none" {
        return Ok(Vec::new());
    }
    let mut specs: Vec<String> = Vec::new();
    for token in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match (token.contains(':'), token.contains('='), specs.last_mut()) {
            (false, true, Some(last)) => {
                last.push(',');
                last.push_str(token);
            }
            _ => specs.push(shorthand(token)),
        }
    }
    specs.iter().map(|s| s.parse()).collect()
}

/// `kdf:2` -> `kdf:k=2` (and `vds:alpha`, `pnorm:p`).
fn shorthand(token: &str) -> String {
    match token.split_once(':') {
        Some((name, v)) if !v.contains('=') => {
            let key = match name.trim() {
                "kdf" | "kdf-online" => "k",
                "vds" => "alpha",
                "pnorm" => "p",
                _ => return token.to_string(),
            };
            format!("{name}:{key}={v}")
        }
        _ => token.to_string(),
    }
}
