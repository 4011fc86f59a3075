//! `leontief solve`: one mechanism on one instance, printed as JSON.

use crate::args::MechParams;
use crate::failure::Failure;
use crate::input::{load, mechanism};
use std::path::PathBuf;

/// The command's arguments, parsed.
pub(crate) struct SolveCmd {
    pub instance: PathBuf,
    pub mechanism: String,
    pub params: MechParams,
    pub options: leontief::Options,
    pub pretty: bool,
    pub layout: leontief::Layout,
}

/// Solve, verify and print.
pub(crate) fn cmd(c: &SolveCmd) -> Result<(), Failure> {
    // Parameters first: a bad flag is reported before the instance is read.
    let m = mechanism(&c.mechanism, &c.params)?;
    if let Some(p) = &c.params.trajectory {
        crate::output::check_file("--trajectory", p)?;
    }
    let inst = load(&c.instance)?;
    let bar = rounds_bar(&c.mechanism);
    let report = bar.clone();
    let progress = leontief::Progress::new(move |p: &leontief::RoundProgress| {
        report.set_message(format!(
            "round {}, {} LPs, level {:.6e}",
            p.round, p.lps, p.level
        ));
        report.set_length(p.users as u64);
        report.set_position(p.frozen as u64);
    });
    let a = leontief::solve_reporting(&inst, &m, &c.options, Some(&progress));
    bar.finish_and_clear();
    println!("{}", leontief::to_json(a?, c.layout, c.pretty)?);
    Ok(())
}

/// The bar of a max-min solve's rounds on stderr (users frozen of those
/// that can run), only when a person is watching; it shows once a round
/// has ended and goes when the solve does.
fn rounds_bar(mechanism: &str) -> indicatif::ProgressBar {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(0);
    if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
        "{mechanism} [{{bar:40}}] {{pos}}/{{len}} users frozen, {{msg}} ({{elapsed}})"
    )) {
        b.set_style(style);
    }
    b
}
