//! The flags of `leontief solve`: the mechanism's parameters, the
//! verification, the LP algorithm and the output layout.

use crate::failure::Failure;
use std::path::PathBuf;

/// `--algorithm` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AlgorithmArg {
    /// Interior point from 10,000 columns, else HiGHS decides.
    Auto,
    /// HiGHS decides (dual simplex for most LPs).
    Choose,
    /// Simplex.
    Simplex,
    /// Interior point with crossover.
    Ipm,
}

impl From<AlgorithmArg> for leontief::Algorithm {
    fn from(a: AlgorithmArg) -> Self {
        match a {
            AlgorithmArg::Auto => leontief::Algorithm::Auto,
            AlgorithmArg::Choose => leontief::Algorithm::Choose,
            AlgorithmArg::Simplex => leontief::Algorithm::Simplex,
            AlgorithmArg::Ipm => leontief::Algorithm::InteriorPoint,
        }
    }
}

/// Mechanism parameters on the command line (each applies to some
/// mechanisms only; a parameter given to a mechanism that ignores it is an
/// error, not silently dropped).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MechParams {
    /// k for kdf and kdf-online (k >= 1; k = 1 is DRF).
    #[arg(long)]
    pub k: Option<usize>,
    /// kdf-online: what happens when a task does not fit: stop (Algorithm 1
    /// as printed) or skip (retire that user and go on).
    #[arg(long, value_enum)]
    pub on_full: Option<OnFullArg>,
    /// slots: slots per maximum server (S >= 1).
    #[arg(long)]
    pub slots: Option<u32>,
    /// best-fit: the normalising resource of H(i, l) (a resource name;
    /// default the first resource).
    #[arg(long)]
    pub normaliser: Option<String>,
    /// fds, gfj, pnorm: beta of f_{beta,lambda}.
    #[arg(long)]
    pub beta: Option<f64>,
    /// fds, gfj, pnorm: lambda (default (1-beta)/beta, the alpha-fair line).
    #[arg(long)]
    pub lambda: Option<f64>,
    /// fds, gfj, pnorm: the alpha-fair member, beta = alpha and
    /// lambda = (1-alpha)/alpha; alpha = 1 is proportional fairness.
    #[arg(long)]
    pub alpha: Option<f64>,
    /// pnorm: p >= 1, or inf (p = inf is FDS).
    #[arg(long)]
    pub p: Option<String>,
    /// bbf-ode: the independent variable, t (the paper's, df/dt = 1) or
    /// log-c (default; far less stiff).
    #[arg(long, value_enum)]
    pub by: Option<ByArg>,
    /// bbf-ode: write every accepted step (parameter, c, x, slacks) as CSV.
    #[arg(long)]
    pub trajectory: Option<PathBuf>,
    /// bbf-eg: conic (Clarabel), dual (projected Newton on the prices), or
    /// auto (conic up to 50,000 nonzero requests).
    #[arg(long, value_enum)]
    pub method: Option<EgMethodArg>,
    /// psdsf: which PS-DSF allocation (PS-DSF is not unique):
    /// best-response (default: Gauss-Seidel best responses from zero, ended
    /// by the exact forest finish on their structure), sweeps (the
    /// best responses alone to their limit; slow at scale) or max-tasks
    /// (exact MILP, small instances).
    #[arg(long)]
    pub select: Option<String>,
    /// vds: damped Jacobi best responses (all servers at once, the
    /// distributed form) with damping THETA in (0, 1] (default 0.5),
    /// instead of Gauss-Seidel.
    #[arg(long, num_args = 0..=1, default_missing_value = "0.5")]
    pub jacobi: Option<f64>,
}

/// `--by` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ByArg {
    /// The paper's t.
    T,
    /// log c.
    LogC,
}

/// `--on-full` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnFullArg {
    /// End the allocation at the first task that does not fit.
    Stop,
    /// Retire the user whose task does not fit and go on.
    Skip,
}

/// `--method` values (bbf-eg).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EgMethodArg {
    /// conic up to 50,000 nonzero requests, dual above.
    Auto,
    /// Exponential cones on Clarabel.
    Conic,
    /// Projected Newton on the m-dimensional dual.
    Dual,
}

/// `--verify` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VerifyArg {
    /// Certificates always; the flat LP checks where affordable.
    Auto,
    /// Always run every check.
    Always,
    /// Only check feasibility.
    Never,
}

impl From<VerifyArg> for leontief::VerifyMode {
    fn from(v: VerifyArg) -> Self {
        match v {
            VerifyArg::Auto => leontief::VerifyMode::Auto,
            VerifyArg::Always => leontief::VerifyMode::Always,
            VerifyArg::Never => leontief::VerifyMode::Never,
        }
    }
}

/// `--layout` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LayoutArg {
    /// Sparse from 1,000,000 user-server pairs, dense below.
    Auto,
    /// `tasks[n][i]`, every entry.
    Dense,
    /// `tasks_sparse`: the nonzero entries only (and `"layout": "sparse"`).
    Sparse,
}

impl From<LayoutArg> for leontief::Layout {
    fn from(l: LayoutArg) -> Self {
        match l {
            LayoutArg::Auto => leontief::Layout::Auto,
            LayoutArg::Dense => leontief::Layout::Dense,
            LayoutArg::Sparse => leontief::Layout::Sparse,
        }
    }
}

/// `--exact-pivots` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SwitchArg {
    /// Where the instance has placement lists.
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

impl From<SwitchArg> for Option<bool> {
    fn from(s: SwitchArg) -> Self {
        match s {
            SwitchArg::Auto => None,
            SwitchArg::On => Some(true),
            SwitchArg::Off => Some(false),
        }
    }
}

impl MechParams {
    /// The library's parameters (the text-valued flags parsed here).
    pub fn to_params(&self) -> Result<leontief::Params, Failure> {
        use leontief::{EgMethod, OdeVariable, OnFull};
        Ok(leontief::Params {
            k: self.k,
            on_full: self.on_full.map(|o| match o {
                OnFullArg::Stop => OnFull::Stop,
                OnFullArg::Skip => OnFull::Skip,
            }),
            slots: self.slots,
            normaliser: self.normaliser.clone(),
            beta: self.beta,
            lambda: self.lambda,
            alpha: self.alpha,
            p: self.p.as_deref().map(leontief::parse_p).transpose()?,
            by: self.by.map(|b| match b {
                ByArg::T => OdeVariable::T,
                ByArg::LogC => OdeVariable::LogC,
            }),
            trajectory: self.trajectory.clone(),
            method: self.method.map(|m| match m {
                EgMethodArg::Auto => EgMethod::Auto,
                EgMethodArg::Conic => EgMethod::Conic,
                EgMethodArg::Dual => EgMethod::Dual,
            }),
            select: self.select.as_deref().map(str::parse).transpose()?,
            jacobi: self.jacobi,
        })
    }
}
