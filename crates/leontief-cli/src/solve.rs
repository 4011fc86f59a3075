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
    let inst = load(&c.instance)?;
    let a = leontief::solve(&inst, &m, &c.options)?;
    println!("{}", leontief::to_json(a, c.layout, c.pretty)?);
    Ok(())
}
