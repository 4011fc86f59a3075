//! The `leontief` command line: parses flags into the library's types,
//! calls [`leontief`], and prints.
//!
//! Exit codes: 0 when the command ran (whatever the solver status: the
//! status is in the JSON), 2 for bad input (invalid instance, unknown
//! mechanism, bad parameter; nothing is solved), 1 when a solve could not
//! run (backend failure).

pub mod args;
pub mod bbf;
pub mod cases;
mod demo;
mod generate;
pub mod plot;
pub mod repro;
pub mod simulate;
mod solve;
pub mod sweep;
mod validate;

pub use args::{AlgorithmArg, ByArg, MechParams, OnFullArg};
use args::{Cli, Command, Repro};
use clap::Parser;
use leontief_core::{Instance, InstanceError};
use std::path::PathBuf;
use std::process::ExitCode;

/// A failure with its exit code.
#[derive(Debug)]
pub struct Failure {
    /// Exit code: 2 bad input, 1 could not run.
    pub code: u8,
    /// What to print.
    pub message: String,
}

pub(crate) fn bad_input(message: impl Into<String>) -> Failure {
    Failure {
        code: 2,
        message: message.into(),
    }
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure {
            code: 1,
            message: format!("{e:#}"),
        }
    }
}

impl From<leontief::ParamError> for Failure {
    fn from(e: leontief::ParamError) -> Self {
        let mut message = e.render(true);
        if matches!(e, leontief::ParamError::UnknownMechanism(_)) {
            message = format!("{message}\n{}", args::MECHANISMS);
        }
        bad_input(message)
    }
}

impl From<leontief::Error> for Failure {
    fn from(e: leontief::Error) -> Self {
        match e {
            leontief::Error::Parameter(p) => p.into(),
            leontief::Error::Input(m) => bad_input(m),
            leontief::Error::Run(message) => Failure { code: 1, message },
        }
    }
}

pub(crate) fn load(path: &PathBuf) -> Result<Instance, Failure> {
    Instance::from_path(path).map_err(|e| match e {
        InstanceError::Io { .. } => bad_input(e.to_string()),
        _ => bad_input(format!("{}: {e}", path.display())),
    })
}

/// The mechanism named as on the command line, with its flags.
pub fn mechanism(name: &str, params: &MechParams) -> Result<leontief::Mechanism, Failure> {
    Ok(leontief::Mechanism::from_params(
        name,
        &params.to_params()?,
    )?)
}

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
            },
            pretty,
            layout: layout.into(),
        }),
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
            Repro::FdsProp2(args) => repro::fds_prop2(&args),
            Repro::SimFig4(args) => simulate::fig4_cmd(&args),
            Repro::FdsContours(args) => repro::fds_contours(&args),
        },
        Command::Sweep { instance, args } => sweep::cmd(&instance, &args),
        Command::Generate {
            kind,
            users,
            servers,
            resources,
            seed,
            eligible,
        } => generate::cmd(&generate::GenerateCmd {
            kind,
            users,
            servers,
            resources,
            seed,
            eligible,
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

/// HiGHS with default settings, for the commands that call the mechanism
/// crates directly (simulate, the reproductions).
pub(crate) fn backend() -> Result<leontief_highs::Highs, Failure> {
    leontief_highs::Highs::new(leontief_highs::HighsSettings::default())
        .map_err(|e| bad_input(e.to_string()))
}
