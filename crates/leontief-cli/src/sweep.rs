//! `leontief sweep`: one mechanism over a range of one numeric parameter,
//! one CSV row per value, for tradeoff curves (Figs. 13-16 of 002) and
//! utilisation-versus-parameter plots.
//!
//! Percent fairness is the allocation's smallest normalised dominant share
//! over that of exact DRFH on the same instance (DRF on one server), times
//! 100; percent efficiency is its total tasks over the NFC optimum, times
//! 100 (Sec. V of 002).

use crate::verify::VerifyMode;
use crate::{
    bad_input, finish, parse_mechanism, resolve_normaliser, solve_one, Failure, Mech, MechParams,
    OnFullArg,
};
use leontief_core::Instance;
use leontief_drfh::{maxmin::MaxMinSettings, Mechanism};
use leontief_highs::Highs;
use std::io::Write;
use std::path::Path;

/// The references of Sec. V of 002 on one instance: exact DRFH's smallest
/// normalised dominant share (DRF on one server) and the NFC total.
pub struct References {
    /// DRFH's smallest normalised dominant share.
    pub fairness: f64,
    /// The NFC optimum.
    pub efficiency: f64,
}

impl References {
    /// Solve DRFH and NFC once.
    pub fn compute(highs: &Highs, instance: &Instance) -> Result<References, Failure> {
        let settings = MaxMinSettings::default();
        let drfh =
            leontief_drfh::solve(highs, instance, &Mechanism::Drfh, &settings).map_err(|e| {
                Failure {
                    code: 1,
                    message: format!("reference DRFH: {e}"),
                }
            })?;
        let nfc =
            leontief_drfh::solve(highs, instance, &Mechanism::Nfc, &settings).map_err(|e| {
                Failure {
                    code: 1,
                    message: format!("reference NFC: {e}"),
                }
            })?;
        Ok(References {
            fairness: drfh.metrics.min_normalised_share(),
            efficiency: nfc.metrics.total_tasks,
        })
    }

    /// 100 x (smallest normalised share) / DRFH's.
    pub fn percent_fairness(&self, min_share: f64) -> f64 {
        100.0 * min_share / self.fairness
    }

    /// 100 x (total tasks) / the NFC optimum.
    pub fn percent_efficiency(&self, total: f64) -> f64 {
        100.0 * total / self.efficiency
    }
}

/// The values of a parameter: `a..b:n` (n >= 2 evenly spaced values from a
/// to b inclusive), a comma list, or one value.
pub fn parse_values(flag: &str, spec: &str) -> Result<Vec<f64>, Failure> {
    let bad = |why: &str| {
        bad_input(format!(
            "{flag} {spec}: {why} (use a..b:n, a comma list, or one value)"
        ))
    };
    let num = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| bad(&format!("'{t}' is not a number")))
    };
    if let Some((range, n)) = spec.split_once(':') {
        let (a, b) = range
            .split_once("..")
            .ok_or_else(|| bad("a range needs a..b"))?;
        let (a, b) = (num(a)?, num(b)?);
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| bad("n must be a whole number"))?;
        if n < 2 {
            return Err(bad("n must be at least 2"));
        }
        return Ok((0..n)
            .map(|j| a + (b - a) * j as f64 / (n - 1) as f64)
            .collect());
    }
    spec.split(',').map(num).collect()
}

/// What `sweep` takes besides the instance.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepArgs {
    /// Mechanism name.
    #[arg(long)]
    pub mechanism: String,
    /// beta values (fds, gfj, pnorm).
    #[arg(long)]
    pub beta: Option<String>,
    /// alpha values (fds, gfj, pnorm: the alpha-fair line).
    #[arg(long)]
    pub alpha: Option<String>,
    /// k values (kdf, kdf-online).
    #[arg(long)]
    pub k: Option<String>,
    /// slots values (slots).
    #[arg(long)]
    pub slots: Option<String>,
    /// With --beta: lambda = (1-beta)/beta (`alpha-fair`, default) or a
    /// fixed value (`fixed:L`).
    #[arg(long)]
    pub lambda_rule: Option<String>,
    /// pnorm: p.
    #[arg(long)]
    pub p: Option<String>,
    /// kdf-online: stop or skip.
    #[arg(long, value_enum)]
    pub on_full: Option<OnFullArg>,
    /// best-fit: the normalising resource.
    #[arg(long)]
    pub normaliser: Option<String>,
    /// Output CSV.
    #[arg(long)]
    pub csv: std::path::PathBuf,
}

/// Run the sweep and write the CSV; returns the number of rows.
pub fn run(highs: &Highs, instance_path: &Path, args: &SweepArgs) -> Result<usize, Failure> {
    let given: Vec<(&str, &String)> = [
        ("--beta", &args.beta),
        ("--alpha", &args.alpha),
        ("--k", &args.k),
        ("--slots", &args.slots),
    ]
    .into_iter()
    .filter_map(|(f, v)| v.as_ref().map(|v| (f, v)))
    .collect();
    let (flag, spec) = match given.as_slice() {
        [one] => *one,
        [] => {
            return Err(bad_input(
                "sweep needs one swept parameter: --beta, --alpha, --k or --slots",
            ))
        }
        _ => return Err(bad_input("sweep takes exactly one swept parameter")),
    };
    let values = parse_values(flag, spec)?;
    let lambda_fixed = match args.lambda_rule.as_deref() {
        None | Some("alpha-fair") => None,
        Some(rule) => match rule.strip_prefix("fixed:").map(str::parse::<f64>) {
            Some(Ok(l)) => Some(l),
            _ => {
                return Err(bad_input(format!(
                    "--lambda-rule {rule}: use alpha-fair or fixed:L"
                )))
            }
        },
    };
    if lambda_fixed.is_some() && flag != "--beta" {
        return Err(bad_input("--lambda-rule applies to --beta sweeps only"));
    }
    let original = Instance::from_path(instance_path)
        .map_err(|e| bad_input(format!("{}: {e}", instance_path.display())))?;
    // Every point in the solver's units (see `solve_one`), printed in the user's.
    let (instance, scaling) = original.normalised();
    let refs = References::compute(highs, &instance)?;
    let mut file = std::fs::File::create(&args.csv)
        .map_err(|e| bad_input(format!("--csv {}: {e}", args.csv.display())))?;
    let res = instance.resources();
    let mut header = vec![
        "parameter".to_string(),
        "value".into(),
        "status".into(),
        "verified".into(),
        "percent_fairness".into(),
        "percent_efficiency".into(),
        "total_tasks".into(),
    ];
    header.extend(instance.users().iter().map(|u| format!("tasks_{}", u.name)));
    header.extend(res.iter().map(|r| format!("leftover_{r}")));
    header.extend(res.iter().map(|r| format!("utilisation_{r}")));
    let io = |e: std::io::Error| Failure {
        code: 1,
        message: format!("writing {}: {e}", args.csv.display()),
    };
    writeln!(file, "{}", header.join(",")).map_err(io)?;
    // A progress bar on stderr, only when a person is watching.
    let bar = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        let b = indicatif::ProgressBar::new(values.len() as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({eta} left)")
        {
            b.set_style(style);
        }
        b.set_message(format!("sweep {} {flag}", args.mechanism));
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    // The alpha-fair line on one server entry: the pool is built once and
    // each point starts from the previous point's prices; a point that does
    // not reach `optimal` that way is solved afresh (with its fallbacks).
    let mut line: Option<leontief_fds::LineSolver> = None;
    let mut line_family: Option<leontief_fds::Family> = None;
    // Regions A and B the same way: one pool, each point from the previous
    // point's rho and prices.
    let mut region: Option<leontief_fds::RegionSolver> = None;
    let mut region_family: Option<leontief_fds::Family> = None;
    for &v in &values {
        bar.inc(1);
        let mut p = MechParams {
            k: None,
            on_full: args.on_full,
            slots: None,
            normaliser: args.normaliser.clone(),
            beta: None,
            lambda: None,
            alpha: None,
            p: args.p.clone(),
            by: None,
            trajectory: None,
            method: None,
            select: None,
            jacobi: None,
        };
        match flag {
            "--beta" => {
                p.beta = Some(v);
                p.lambda = lambda_fixed;
            }
            "--alpha" => p.alpha = Some(v),
            "--k" => p.k = Some(v.round().max(0.0) as usize),
            _ => p.slots = Some(v.round().max(0.0) as u32),
        }
        // A point whose (beta, lambda) is refused (degenerate, scale-free)
        // is a row marked refused, like a point the solver refuses; any
        // other bad parameter stops the sweep.
        let refused_point = flag == "--beta"
            && leontief_fds::classify(v, p.lambda.unwrap_or((1.0 - v) / v)).is_err();
        let solved = match parse_mechanism(&args.mechanism, &p) {
            Ok(m) => {
                let m = resolve_normaliser(m, &p, &instance)?;
                let warm = match &m {
                    Mech::Conic {
                        family: f @ (leontief_fds::Family::Fds | leontief_fds::Family::Gfj),
                        beta,
                        lambda,
                        ..
                    } if (lambda - (1.0 - beta) / beta).abs() <= 1e-12 * lambda.abs().max(1.0) => {
                        if line_family != Some(*f) {
                            line = leontief_fds::LineSolver::new(&instance, *f);
                            line_family = Some(*f);
                        }
                        line.as_mut()
                            .and_then(|l| l.solve(&instance, *beta))
                            .filter(|a| a.status == leontief_core::Status::Optimal)
                    }
                    Mech::Conic {
                        family: f,
                        beta,
                        lambda,
                        ..
                    } if matches!(
                        leontief_fds::classify(*beta, *lambda),
                        Ok(leontief_fds::Classified::Region(
                            leontief_fds::Region::A | leontief_fds::Region::B
                        ))
                    ) =>
                    {
                        if region_family != Some(*f) {
                            region = leontief_fds::RegionSolver::new(&instance, *f);
                            region_family = Some(*f);
                        }
                        region
                            .as_mut()
                            .and_then(|r| r.solve(&instance, *beta, *lambda))
                    }
                    _ => None,
                };
                match warm {
                    Some(a) => finish(highs, &instance, &m, a, VerifyMode::Auto),
                    None => solve_one(highs, &instance, &m, VerifyMode::Auto),
                }
                .map(|mut a| {
                    crate::restore_units(&original, &scaling, &mut a);
                    a
                })
            }
            Err(f) if refused_point => Err(f),
            Err(f) => return Err(f),
        };
        let (status, verified, x, leftover, util, min_share, total) = match solved {
            Ok(a) => (
                a.status.as_str().to_string(),
                a.verification
                    .as_ref()
                    .and_then(|v| v["ok"].as_bool())
                    .unwrap_or(false),
                a.user_tasks.clone(),
                a.metrics.unused_capacity.clone(),
                a.metrics.utilisation.clone(),
                a.metrics.min_normalised_share(),
                a.metrics.total_tasks,
            ),
            // A refused point (e.g. degenerate parameters) stays in the table, empty.
            Err(f) if f.code == 2 => (
                "refused".into(),
                false,
                vec![f64::NAN; instance.num_users()],
                vec![f64::NAN; res.len()],
                vec![f64::NAN; res.len()],
                f64::NAN,
                f64::NAN,
            ),
            Err(f) => return Err(f),
        };
        let mut row = vec![
            flag.trim_start_matches("--").to_string(),
            format!("{v}"),
            status,
            verified.to_string(),
        ];
        row.push(format!("{}", refs.percent_fairness(min_share)));
        row.push(format!("{}", refs.percent_efficiency(total)));
        row.push(format!("{total}"));
        row.extend(
            x.iter()
                .chain(&leftover)
                .chain(&util)
                .map(|v| format!("{v}")),
        );
        writeln!(file, "{}", row.join(",")).map_err(io)?;
    }
    bar.finish_and_clear();
    Ok(values.len())
}
