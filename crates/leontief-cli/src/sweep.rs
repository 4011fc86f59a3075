//! `leontief sweep`: [`leontief::sweep`] written as a CSV, one row per
//! value (user tasks, percent fairness vs DRFH, percent efficiency vs NFC,
//! leftover capacity and utilisation per resource).

use crate::args::MechParams;
use crate::args::SweepArgs;
use crate::failure::{bad_input, Failure};
use leontief::{SweepSpec, Swept};
use leontief_core::Instance;
use std::io::Write;
use std::path::Path;

/// The most values one sweep solves.
pub const MAX_SWEEP_VALUES: usize = 1_000;

/// The values of a parameter: `a..b:n` (n >= 2 evenly spaced values from a
/// to b inclusive, n at most [`MAX_SWEEP_VALUES`]), a comma list, or one
/// value; every value finite.
pub fn parse_values(flag: &str, spec: &str) -> Result<Vec<f64>, Failure> {
    let bad = |why: &str| {
        bad_input(format!(
            "{flag} {spec}: {why} (use a..b:n, a comma list, or one value)"
        ))
    };
    let num = |t: &str| match t.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(bad(&format!("'{t}' is not a finite number"))),
        Err(_) => Err(bad(&format!("'{t}' is not a number"))),
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
        if n > MAX_SWEEP_VALUES {
            return Err(bad(&format!("n must be at most {MAX_SWEEP_VALUES}")));
        }
        return Ok((0..n)
            .map(|j| a + (b - a) * j as f64 / (n - 1) as f64)
            .collect());
    }
    let values: Vec<f64> = spec.split(',').map(num).collect::<Result<_, _>>()?;
    if values.len() > MAX_SWEEP_VALUES {
        return Err(bad(&format!(
            "{} values, above the {MAX_SWEEP_VALUES} one sweep solves",
            values.len()
        )));
    }
    Ok(values)
}

/// Run the sweep and write the CSV; returns the number of rows.
pub fn run(instance_path: &Path, args: &SweepArgs) -> Result<usize, Failure> {
    let given: Vec<(&str, &String)> = [
        ("--beta", &args.beta),
        ("--alpha", &args.alpha),
        ("--k", &args.k),
        ("--slots", &args.slots),
        ("--queue-weight", &args.queue_weight),
    ]
    .into_iter()
    .filter_map(|(f, v)| v.as_ref().map(|v| (f, v)))
    .collect();
    let (flag, spec) =
        match given.as_slice() {
            [one] => *one,
            [] => return Err(bad_input(
                "sweep needs one swept parameter: --beta, --alpha, --k, --slots or --queue-weight",
            )),
            _ => return Err(bad_input("sweep takes exactly one swept parameter")),
        };
    let (queue, spec) = if flag == "--queue-weight" {
        let (q, v) = spec
            .split_once('=')
            .ok_or_else(|| bad_input(format!("--queue-weight {spec}: use NAME=VALUES")))?;
        (Some(q.to_string()), v)
    } else {
        (None, spec.as_str())
    };
    let values = parse_values(flag, spec)?;
    let lambda_fixed = match args.lambda_rule.as_deref() {
        None | Some("alpha-fair") => None,
        Some(rule) => match rule.strip_prefix("fixed:").map(str::parse::<f64>) {
            Some(Ok(l)) if l.is_finite() => Some(l),
            Some(Ok(l)) => {
                return Err(bad_input(format!(
                    "--lambda-rule {rule}: lambda must be a finite number, not {l}"
                )))
            }
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
    let swept = match flag {
        "--beta" => Swept::Beta,
        "--alpha" => Swept::Alpha,
        "--k" => Swept::K,
        "--slots" => Swept::Slots,
        _ => Swept::QueueWeight(queue.unwrap_or_default()),
    };
    let base = MechParams {
        on_full: args.on_full,
        normaliser: args.normaliser.clone(),
        p: args.p.clone(),
        ..MechParams::default()
    };
    let mut base = base.to_params()?;
    base.lambda = lambda_fixed;
    let original = Instance::from_path(instance_path)
        .map_err(|e| bad_input(format!("{}: {e}", instance_path.display())))?;
    let mut file = std::fs::File::create(&args.csv)
        .map_err(|e| bad_input(format!("--csv {}: {e}", args.csv.display())))?;
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
    let spec = SweepSpec {
        mechanism: args.mechanism.clone(),
        base,
        swept: swept.clone(),
        values,
    };
    let sweep = leontief::sweep(&original, &spec, &leontief::Options::default(), &|| {
        bar.inc(1)
    })?;
    bar.finish_and_clear();
    let res = original.resources();
    let mut header = vec![
        "parameter".to_string(),
        "value".into(),
        "status".into(),
        "verified".into(),
        "percent_fairness".into(),
        "percent_efficiency".into(),
        "total_tasks".into(),
    ];
    header.extend(original.users().iter().map(|u| format!("tasks_{}", u.name)));
    header.extend(res.iter().map(|r| format!("leftover_{r}")));
    header.extend(res.iter().map(|r| format!("utilisation_{r}")));
    header.extend(
        original
            .queues()
            .iter()
            .map(|q| format!("dominant_share_{}", q.name)),
    );
    let io = |e: std::io::Error| Failure {
        code: 1,
        message: format!("writing {}: {e}", args.csv.display()),
    };
    writeln!(file, "{}", header.join(",")).map_err(io)?;
    let refs = sweep.references;
    for point in &sweep.points {
        let queue_shares: Vec<f64> = match &point.solution {
            Ok(a) => original
                .queue_usage(&a.user_tasks)
                .iter()
                .map(|u| original.dominant_share_of(u))
                .collect(),
            Err(_) => vec![f64::NAN; original.queues().len()],
        };
        let (status, verified, x, leftover, util, min_share, total) = match &point.solution {
            Ok(a) => (
                a.status.as_str().to_string(),
                a.verification.as_ref().is_some_and(|v| v.ok),
                a.user_tasks.clone(),
                a.metrics.unused_capacity.clone(),
                a.metrics.utilisation.clone(),
                a.metrics.min_normalised_share(),
                a.metrics.total_tasks,
            ),
            // A refused point (e.g. degenerate parameters) stays in the table, empty.
            Err(_) => (
                "refused".into(),
                false,
                vec![f64::NAN; original.num_users()],
                vec![f64::NAN; res.len()],
                vec![f64::NAN; res.len()],
                f64::NAN,
                f64::NAN,
            ),
        };
        let mut row = vec![
            swept.name().to_string(),
            format!("{}", point.value),
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
                .chain(&queue_shares)
                .map(|v| format!("{v}")),
        );
        writeln!(file, "{}", row.join(",")).map_err(io)?;
    }
    Ok(sweep.points.len())
}

/// `leontief sweep`.
pub(crate) fn cmd(instance: &Path, args: &SweepArgs) -> Result<(), Failure> {
    let rows = run(instance, args)?;
    eprintln!("wrote {rows} rows to {}", args.csv.display());
    Ok(())
}
