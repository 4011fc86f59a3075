//! The `leontief` command line: parses flags into the library's types,
//! calls [`leontief`], and prints.
//!
//! Exit codes: 0 when the command ran (whatever the solver status: the
//! status is in the JSON), 2 for bad input (invalid instance, unknown
//! mechanism, bad parameter; nothing is solved), 1 when a solve could not
//! run (backend failure).

pub mod args;
mod audit;
pub mod bbf;
pub mod cases;
mod compare;
mod demo;
mod failure;
mod fig4;
mod generate;
mod import;
mod input;
mod kdf_table;
mod output;
pub mod plot;
mod probe;
pub mod repro;
mod sched_table;
pub mod simulate;
mod solve;
pub mod sweep;
mod validate;

pub use args::{AlgorithmArg, ByArg, MechParams, OnFullArg};
use args::{Cli, Command, Import, Repro};
use clap::Parser;
pub use failure::Failure;
pub use input::mechanism;
use leontief_core::Instance;
use std::process::ExitCode;

/// `leontief solve` without printing: the mechanism named as on the
/// command line with its flags, solved and verified by
/// [`leontief::solve`]; errors as the command line reports them.
pub fn solve(
    instance: &Instance,
    name: &str,
    params: &MechParams,
    verify: leontief::VerifyMode,
) -> Result<leontief::Solution, Failure> {
    let m = mechanism(name, params)?;
    let options = leontief::Options {
        verify,
        ..Default::default()
    };
    Ok(leontief::solve(instance, &m, &options)?)
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Solve {
            instance,
            mechanism,
            params,
            verify,
            time_limit,
            algorithm,
            exact_pivots,
            pretty,
            layout,
        } => solve::cmd(&solve::SolveCmd {
            instance,
            mechanism,
            params,
            options: leontief::Options {
                verify: verify.into(),
                time_limit,
                algorithm: algorithm.into(),
                exact_pivots: exact_pivots.into(),
            },
            pretty,
            layout: layout.into(),
        }),
        Command::Audit { args } => audit::cmd(&args),
        Command::Import { what } => match what {
            Import::Kubernetes(args) => import::kubernetes(&args),
            Import::GoogleTrace(args) => import::google_trace(&args),
            Import::AlibabaGpu(args) => import::alibaba_gpu(&args),
            Import::Kueue(args) => import::kueue(&args),
            Import::Yarn(args) => import::yarn(&args),
        },
        Command::Validate { instance } => validate::cmd(&instance),
        Command::Simulate { args } => simulate::cmd(&args),
        Command::Plot { args } => plot::cmd(&args),
        Command::Demo { datasets, users } => demo::run(&datasets, users),
        Command::EnumerateBbf { args } => bbf::enumerate_cmd(&args),
        Command::MergeBbf {
            files,
            instance,
            pretty,
        } => bbf::merge_cmd(&files, instance.as_ref(), pretty),
        Command::Repro { what } => match what {
            Repro::BbfTable1(args) => bbf::table1(&args),
            Repro::SpTable(args) => probe::sp_table(&args),
            Repro::KdfTable1(args) => kdf_table::kdf_table1(&args),
            Repro::FdsProp2(args) => repro::fds_prop2(&args),
            Repro::SimFig4(args) => fig4::cmd(&args),
            Repro::FdsContours(args) => repro::fds_contours(&args),
            Repro::SchedulersTable(args) => sched_table::cmd(&args),
        },
        Command::Sweep { instance, args } => sweep::cmd(&instance, &args),
        Command::Generate {
            kind,
            users,
            servers,
            resources,
            seed,
            eligible,
            shape,
        } => generate::cmd(&generate::GenerateCmd {
            kind,
            users,
            servers,
            resources,
            seed,
            eligible,
            shape,
        }),
    }
}

/// Parse the command line, run, and map failures to exit codes.
pub fn main_entry() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}
