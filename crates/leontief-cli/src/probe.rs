//! `leontief audit --probe-sp MECH`: can a user gain by misreporting its
//! demand? One instance, or (`leontief repro sp-table`) every mechanism
//! on generated instances.

use crate::args::{AuditArgs, SpTableArgs};
use crate::audit::aligned;
use crate::failure::Failure;
use anyhow::Context;
use leontief::audit::{parse_against, probe_sp, ProbeOptions};
use leontief_audit::verdicts::g;

/// Probe `spec` on `instance`: per user, the best misreport found.
pub(crate) fn cmd(
    instance: &leontief::Instance,
    spec: &str,
    args: &AuditArgs,
) -> Result<(), Failure> {
    let mechanism: leontief::Mechanism = spec.parse()?;
    let options = ProbeOptions {
        users: args
            .users
            .as_ref()
            .map(|u| u.split(',').map(|s| s.trim().to_string()).collect()),
        budget: args.budget as usize,
        seed: args.seed,
        inflate_only: args.inflate_only,
    };
    let p = probe_sp(instance, &mechanism, &options)?;
    if args.table {
        let mut rows = vec![vec![
            "user".to_string(),
            "truthful".into(),
            "best".into(),
            "gain %".into(),
            "misreport".into(),
        ]];
        for u in &p.users {
            rows.push(vec![
                u.user.clone(),
                g(u.truthful),
                g(u.best),
                if u.gain.is_finite() {
                    g(100.0 * u.gain)
                } else {
                    "from 0".into()
                },
                match (&u.misreport, &u.how) {
                    (Some(v), Some(how)) => format!(
                        "[{}] ({how})",
                        v.iter().map(|x| g(*x)).collect::<Vec<_>>().join(", ")
                    ),
                    _ => "-".into(),
                },
            ]);
        }
        print!("{}", aligned(&rows, 1));
    } else {
        println!(
            "{}",
            serde_json::to_string_pretty(&p).context("serialising")?
        );
    }
    Ok(())
}

/// One mechanism's probes over the generated instances.
#[derive(Default)]
struct Tally {
    instances: usize,
    manipulable: usize,
    gainers: usize,
    users: usize,
    best: (f64, String),
}

impl Tally {
    fn cell(&self) -> String {
        if self.manipulable == 0 {
            return format!("0 of {} (no user gains)", self.instances);
        }
        let largest = if self.best.0.is_finite() {
            format!("{}%", g(100.0 * self.best.0))
        } else {
            "from 0 tasks".into()
        };
        format!(
            "{} of {}; {} of {} users; up to {largest} ({})",
            self.manipulable, self.instances, self.gainers, self.users, self.best.1
        )
    }
}

/// `leontief repro sp-table`: the probe of every mechanism on generated
/// instances of three shapes, any misreport and inflation only, as a
/// markdown table.
pub(crate) fn sp_table(args: &SpTableArgs) -> Result<(), Failure> {
    let mechanisms = parse_against(&args.mechanisms)?;
    let shapes = [
        ("heterogeneous", 6, 4, 2),
        ("heterogeneous", 5, 3, 3),
        ("heterogeneous", 4, 1, 2),
    ];
    println!("| mechanism | instances where a user gains, any misreport | inflating only |");
    println!("|---|---|---|");
    for m in &mechanisms {
        let mut tallies = [Tally::default(), Tally::default()];
        for (inflate_only, t) in [false, true].into_iter().zip(tallies.iter_mut()) {
            for (kind, nu, k, r) in shapes {
                for seed in 0..args.instances {
                    let inst = leontief::generated(kind, nu, k, r, seed, 0)?;
                    let options = ProbeOptions {
                        users: None,
                        budget: args.budget as usize,
                        seed,
                        inflate_only,
                    };
                    let p = match probe_sp(&inst, m, &options) {
                        Ok(p) => p,
                        Err(e) if e.is_bad_input() => continue,
                        Err(e) => return Err(e.into()),
                    };
                    t.instances += 1;
                    t.manipulable += usize::from(p.manipulable);
                    t.users += p.users.len();
                    for u in &p.users {
                        t.gainers += usize::from(u.gain > 0.0);
                        if u.gain > t.best.0 {
                            let how = u.how.as_deref().unwrap_or("");
                            t.best = (
                                u.gain,
                                format!("{nu}x{k}x{r} seed {seed}, {}: {how}", u.user),
                            );
                        }
                    }
                }
            }
        }
        println!("| {m} | {} | {} |", tallies[0].cell(), tallies[1].cell());
    }
    Ok(())
}
