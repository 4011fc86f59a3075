//! Every mechanism with its parameters, as one value.
//!
//! A [`Mechanism`] is built three ways: directly (`Mechanism::Kdf { k: 2 }`),
//! from a name and loose [`Params`] as the command line and Python give
//! them ([`Mechanism::from_params`], which refuses a parameter the
//! mechanism does not use), or from a compact spec string
//! (`"kdf:k=2"`, `"fds:alpha=2"`, `"vds:alpha=2,jacobi=0.5"`; see
//! [`FromStr`]). It serialises as `{"name": "kdf", "k": 2}`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Every mechanism name, in the order `leontief solve --help` lists them.
pub const NAMES: [&str; 24] = [
    "drf",
    "drfh",
    "kdf",
    "naive-drf",
    "hdrf",
    "hdrfh",
    "hdrf-naive",
    "nfc",
    "psdsf",
    "vds",
    "tsf",
    "first-fit",
    "best-fit",
    "slots",
    "kdf-online",
    "yarn-fair",
    "kai",
    "volcano-proportion",
    "kueue",
    "fds",
    "gfj",
    "pnorm",
    "bbf-eg",
    "bbf-ode",
];

/// A mechanism and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Mechanism {
    /// DRF on the pooled servers (closed-form progressive filling).
    Drf,
    /// DRFH: max-min of global dominant shares over heterogeneous servers.
    Drfh,
    /// k-DF: max-min of k-dominant weighted shares (k = 1 is DRF).
    Kdf {
        /// k >= 1.
        k: usize,
    },
    /// Per-server DRF, the naive baseline.
    NaiveDrf,
    /// H-DRF over the queue tree on the pooled servers.
    Hdrf,
    /// H-DRF over the queue tree on heterogeneous servers (global
    /// dominant shares, per-server feasibility, placement).
    Hdrfh,
    /// Naive hierarchical DRF (every queue's share from its subtree's
    /// total) on the pooled servers.
    HdrfNaive,
    /// No fairness constraints: maximum total tasks.
    Nfc,
    /// Task share fairness.
    Tsf,
    /// First-Fit DRFH on whole tasks.
    FirstFit,
    /// Best-Fit DRFH on whole tasks.
    BestFit {
        /// The normalising resource of H(i, l), by name (default: the
        /// first resource).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        normaliser: Option<String>,
    },
    /// The Slots scheduler.
    Slots {
        /// Slots per maximum server, >= 1.
        slots: u32,
    },
    /// Online k-DF (Algorithm 1 of 001) on whole tasks.
    KdfOnline {
        /// k >= 1.
        k: usize,
        /// What happens when a task does not fit.
        #[serde(default)]
        on_full: OnFull,
    },
    /// YARN Fair Scheduler's per-resource fair shares over the queue
    /// tree, and the whole tasks users run inside them.
    YarnFair,
    /// KAI Scheduler's per-resource division (deserved, then over-quota
    /// by weight) over the queue tree.
    Kai,
    /// Volcano's proportion plugin (flat queues, deserved by weight
    /// capped by request) with drf job order inside a queue.
    VolcanoProportion,
    /// Kueue's admission with fair sharing (dominant resource share
    /// order, whole workloads, hierarchical cohorts).
    Kueue,
    /// FDS f_{beta,lambda} on dominant shares.
    Fds {
        /// The member of the family.
        fairness: Fairness,
    },
    /// GFJ f_{beta,lambda} on task counts.
    Gfj {
        /// The member of the family.
        fairness: Fairness,
    },
    /// The p-norm family (19) of 002.
    Pnorm {
        /// p >= 1, or infinity (FDS); serialised as `"inf"` then.
        #[serde(with = "p_serde")]
        p: f64,
        /// The member of the family.
        fairness: Fairness,
    },
    /// Bottleneck-based fairness: the Eisenberg-Gale allocation.
    BbfEg {
        /// How the first answer is found.
        #[serde(default)]
        method: EgMethod,
    },
    /// Bottleneck-based fairness along the ODE trajectory.
    BbfOde {
        /// The independent variable.
        #[serde(default)]
        by: OdeVariable,
        /// Write every accepted step here (CSV).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trajectory: Option<PathBuf>,
    },
    /// PS-DSF (004).
    Psdsf {
        /// Which PS-DSF allocation (it is not unique).
        #[serde(default)]
        select: PsdsfSelect,
    },
    /// alphaPF-VDS (004), alpha >= 1.
    Vds {
        /// alpha >= 1 (alpha = 1: one exponential-cone program).
        alpha: f64,
        /// Gauss-Seidel or damped Jacobi best responses (alpha > 1).
        #[serde(default)]
        schedule: VdsSchedule,
    },
}

/// A member of the f_{beta,lambda} family (002).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Fairness {
    /// The alpha-fair member: beta = alpha, lambda = (1 - alpha)/alpha;
    /// alpha = 1 is proportional fairness.
    Alpha(f64),
    /// Any (beta, lambda).
    BetaLambda {
        /// beta.
        beta: f64,
        /// lambda.
        lambda: f64,
    },
}

impl Fairness {
    /// (beta, lambda).
    pub fn beta_lambda(&self) -> (f64, f64) {
        match *self {
            Fairness::Alpha(a) => (a, (1.0 - a) / a),
            Fairness::BetaLambda { beta, lambda } => (beta, lambda),
        }
    }
}

/// kdf-online: what happens when a task does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnFull {
    /// End the allocation at the first task that does not fit (Algorithm
    /// 1 as printed).
    #[default]
    Stop,
    /// Retire the user whose task does not fit and go on.
    Skip,
}

/// bbf-eg: how the first answer is found (both are then polished and
/// certified the same way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EgMethod {
    /// conic up to [`AUTO_CONIC_SIZE`](crate::AUTO_CONIC_SIZE) nonzero
    /// requests, dual above.
    #[default]
    Auto,
    /// Exponential cones on Clarabel.
    Conic,
    /// Projected Newton on the m-dimensional dual.
    Dual,
}

/// bbf-ode: the independent variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OdeVariable {
    /// The paper's t (df/dt = 1).
    T,
    /// log c (far less stiff).
    #[default]
    LogC,
}

/// psdsf: which PS-DSF allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PsdsfSelect {
    /// Gauss-Seidel best responses from zero, ended by the exact forest
    /// finish on their structure.
    #[default]
    BestResponse,
    /// The best responses alone, to their limit (slow at scale).
    Sweeps,
    /// The member with most tasks (exact MILP, small instances).
    MaxTasks,
}

/// vds: how the servers' best responses are scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VdsSchedule {
    /// One server at a time.
    #[default]
    GaussSeidel,
    /// All servers at once (the distributed form), damped by theta in
    /// (0, 1].
    Jacobi(f64),
}

/// A mechanism parameter that is missing, out of range or does not apply.
/// [`fmt::Display`] names parameters plainly (`k`); the command line
/// prints them as flags (`--k`) through [`ParamError::render`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ParamError {
    /// No such mechanism.
    #[error("unknown mechanism {0}")]
    UnknownMechanism(String),
    /// A parameter the mechanism needs.
    #[error("{}", self.render(false))]
    Missing {
        /// The mechanism.
        mechanism: &'static str,
        /// The parameter.
        parameter: &'static str,
        /// What to give.
        hint: &'static str,
    },
    /// fds, gfj, pnorm without beta or alpha.
    #[error("{}", self.render(false))]
    MissingFairness {
        /// The mechanism.
        mechanism: &'static str,
    },
    /// A value out of range.
    #[error("{}", self.render(false))]
    Invalid {
        /// The parameter.
        parameter: &'static str,
        /// The value given.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// A parameter the mechanism does not use.
    #[error("{}", self.render(false))]
    NotApplicable {
        /// The parameter.
        parameter: &'static str,
        /// The mechanism.
        mechanism: &'static str,
    },
    /// Both alpha and beta.
    #[error("{}", self.render(false))]
    AlphaAndBeta,
    /// lambda with alpha.
    #[error("{}", self.render(false))]
    LambdaWithAlpha,
    /// vds at alpha = 1 with a Jacobi schedule.
    #[error("{}", self.render(false))]
    JacobiAtAlphaOne,
    /// A (beta, lambda) point the family refuses (degenerate or
    /// scale-free), in the family's words.
    #[error("{0}")]
    Refused(String),
}

impl ParamError {
    /// The message, with parameters as flags (`--k`) when `flags`.
    pub fn render(&self, flags: bool) -> String {
        let f = |p: &str| {
            if flags {
                format!("--{}", p.replace('_', "-"))
            } else {
                p.to_string()
            }
        };
        let mech = |m: &str| {
            if flags {
                format!("--mechanism {m}")
            } else {
                m.to_string()
            }
        };
        match self {
            ParamError::UnknownMechanism(n) => format!("unknown mechanism {n}"),
            ParamError::Missing {
                mechanism,
                parameter,
                hint,
            } => format!("{} needs {} {hint}", mech(mechanism), f(parameter)),
            ParamError::MissingFairness { mechanism } => format!(
                "{} needs {} B [{} L] or {} A",
                mech(mechanism),
                f("beta"),
                f("lambda"),
                f("alpha")
            ),
            ParamError::Invalid {
                parameter,
                value,
                reason,
            } => format!("{} {value}: {reason}", f(parameter)),
            ParamError::NotApplicable {
                parameter,
                mechanism,
            } => format!("{} does not apply to {mechanism}", f(parameter)),
            ParamError::AlphaAndBeta => format!(
                "give {} or {} [{}], not both",
                f("alpha"),
                f("beta"),
                f("lambda")
            ),
            ParamError::LambdaWithAlpha => format!(
                "{} does not apply with {} (the line fixes lambda = (1-alpha)/alpha)",
                f("lambda"),
                f("alpha")
            ),
            ParamError::JacobiAtAlphaOne => format!(
                "{} does not apply to vds at {} 1: it is one exponential-cone program (the equilibrium is the joint optimum), with no best responses to damp",
                f("jacobi"),
                f("alpha")
            ),
            ParamError::Refused(m) => m.clone(),
        }
    }

    fn invalid(parameter: &'static str, value: impl fmt::Display, reason: &str) -> ParamError {
        ParamError::Invalid {
            parameter,
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }
}

/// Loose parameters by name, as the command line and Python give them;
/// [`Mechanism::from_params`] checks them against the mechanism.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    /// kdf, kdf-online: k.
    pub k: Option<usize>,
    /// kdf-online.
    pub on_full: Option<OnFull>,
    /// slots.
    pub slots: Option<u32>,
    /// best-fit: a resource name.
    pub normaliser: Option<String>,
    /// fds, gfj, pnorm.
    pub beta: Option<f64>,
    /// fds, gfj, pnorm (default (1-beta)/beta).
    pub lambda: Option<f64>,
    /// fds, gfj, pnorm (the alpha-fair line), vds.
    pub alpha: Option<f64>,
    /// pnorm: p >= 1 or infinity.
    pub p: Option<f64>,
    /// bbf-ode.
    pub by: Option<OdeVariable>,
    /// bbf-ode.
    pub trajectory: Option<PathBuf>,
    /// bbf-eg.
    pub method: Option<EgMethod>,
    /// psdsf.
    pub select: Option<PsdsfSelect>,
    /// vds: the Jacobi damping.
    pub jacobi: Option<f64>,
}

impl Params {
    /// The parameters given, by name.
    fn given(&self) -> [(&'static str, bool); 13] {
        [
            ("k", self.k.is_some()),
            ("on_full", self.on_full.is_some()),
            ("slots", self.slots.is_some()),
            ("normaliser", self.normaliser.is_some()),
            ("beta", self.beta.is_some()),
            ("lambda", self.lambda.is_some()),
            ("alpha", self.alpha.is_some()),
            ("p", self.p.is_some()),
            ("by", self.by.is_some()),
            ("trajectory", self.trajectory.is_some()),
            ("method", self.method.is_some()),
            ("select", self.select.is_some()),
            ("jacobi", self.jacobi.is_some()),
        ]
    }

    /// Set one parameter from text (`key=value` of a spec string).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        fn num<T: FromStr>(parameter: &'static str, v: &str) -> Result<T, ParamError> {
            v.trim()
                .parse()
                .map_err(|_| ParamError::invalid(parameter, v, "not a number"))
        }
        match key.trim().replace('-', "_").as_str() {
            "k" => self.k = Some(num("k", value)?),
            "on_full" => self.on_full = Some(value.parse()?),
            "slots" => self.slots = Some(num("slots", value)?),
            "normaliser" => self.normaliser = Some(value.to_string()),
            "beta" => self.beta = Some(num("beta", value)?),
            "lambda" => self.lambda = Some(num("lambda", value)?),
            "alpha" => self.alpha = Some(num("alpha", value)?),
            "p" => self.p = Some(parse_p(value)?),
            "by" => self.by = Some(value.parse()?),
            "trajectory" => self.trajectory = Some(PathBuf::from(value)),
            "method" => self.method = Some(value.parse()?),
            "select" => self.select = Some(value.parse()?),
            "jacobi" => self.jacobi = Some(num("jacobi", value)?),
            other => {
                return Err(ParamError::Invalid {
                    parameter: "parameter",
                    value: other.to_string(),
                    reason: "no such parameter".into(),
                })
            }
        }
        Ok(())
    }
}

/// p: a number >= 1, or `inf`.
pub fn parse_p(v: &str) -> Result<f64, ParamError> {
    match v.trim() {
        "inf" => Ok(f64::INFINITY),
        t => match t.parse::<f64>() {
            Ok(x) if x >= 1.0 && x.is_finite() => Ok(x),
            _ => Err(ParamError::invalid("p", v, "must be a number >= 1, or inf")),
        },
    }
}

macro_rules! text_enum {
    ($t:ty, $param:literal, $hint:literal, $($name:literal => $v:expr),+) => {
        impl FromStr for $t {
            type Err = ParamError;
            fn from_str(s: &str) -> Result<Self, ParamError> {
                match s.trim() {
                    $($name => Ok($v),)+
                    other => Err(ParamError::invalid($param, other, $hint)),
                }
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                $(if *self == $v { return f.write_str($name); })+
                Ok(())
            }
        }
    };
}

text_enum!(OnFull, "on_full", "use stop or skip", "stop" => OnFull::Stop, "skip" => OnFull::Skip);
text_enum!(EgMethod, "method", "use auto, conic or dual", "auto" => EgMethod::Auto, "conic" => EgMethod::Conic, "dual" => EgMethod::Dual);
text_enum!(OdeVariable, "by", "use t or log-c", "t" => OdeVariable::T, "log-c" => OdeVariable::LogC);
text_enum!(PsdsfSelect, "select",
    "use best-response (the Gauss-Seidel point from zero, ended by the exact finish), sweeps (the best responses alone, to their limit) or max-tasks (the member with most tasks, an exact MILP)",
    "best-response" => PsdsfSelect::BestResponse, "sweeps" => PsdsfSelect::Sweeps, "max-tasks" => PsdsfSelect::MaxTasks);

impl Mechanism {
    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            Mechanism::Drf => "drf",
            Mechanism::Drfh => "drfh",
            Mechanism::Kdf { .. } => "kdf",
            Mechanism::NaiveDrf => "naive-drf",
            Mechanism::Hdrf => "hdrf",
            Mechanism::Hdrfh => "hdrfh",
            Mechanism::HdrfNaive => "hdrf-naive",
            Mechanism::Nfc => "nfc",
            Mechanism::Tsf => "tsf",
            Mechanism::FirstFit => "first-fit",
            Mechanism::BestFit { .. } => "best-fit",
            Mechanism::Slots { .. } => "slots",
            Mechanism::KdfOnline { .. } => "kdf-online",
            Mechanism::YarnFair => "yarn-fair",
            Mechanism::Kai => "kai",
            Mechanism::VolcanoProportion => "volcano-proportion",
            Mechanism::Kueue => "kueue",
            Mechanism::Fds { .. } => "fds",
            Mechanism::Gfj { .. } => "gfj",
            Mechanism::Pnorm { .. } => "pnorm",
            Mechanism::BbfEg { .. } => "bbf-eg",
            Mechanism::BbfOde { .. } => "bbf-ode",
            Mechanism::Psdsf { .. } => "psdsf",
            Mechanism::Vds { .. } => "vds",
        }
    }

    /// The mechanism `name` with the parameters `p`. A parameter the
    /// mechanism does not use is refused, not dropped.
    pub fn from_params(name: &str, p: &Params) -> Result<Mechanism, ParamError> {
        let need_k = |mechanism: &'static str| match p.k {
            None => Err(ParamError::Missing {
                mechanism,
                parameter: "k",
                hint: "K (K >= 1; K = 1 is DRF)",
            }),
            Some(0) => Err(ParamError::invalid("k", 0, "must be >= 1 (k = 1 is DRF)")),
            Some(k) => Ok(k),
        };
        let fairness = |mechanism: &'static str| match (p.alpha, p.beta) {
            (Some(_), Some(_)) => Err(ParamError::AlphaAndBeta),
            (Some(_), None) if p.lambda.is_some() => Err(ParamError::LambdaWithAlpha),
            (Some(a), None) => Ok(Fairness::Alpha(a)),
            (None, Some(beta)) => Ok(Fairness::BetaLambda {
                beta,
                lambda: p.lambda.unwrap_or((1.0 - beta) / beta),
            }),
            (None, None) => Err(ParamError::MissingFairness { mechanism }),
        };
        let m = match name {
            "drf" => Mechanism::Drf,
            "drfh" => Mechanism::Drfh,
            "kdf" => Mechanism::Kdf { k: need_k("kdf")? },
            "naive-drf" => Mechanism::NaiveDrf,
            "hdrf" => Mechanism::Hdrf,
            "hdrfh" => Mechanism::Hdrfh,
            "hdrf-naive" => Mechanism::HdrfNaive,
            "nfc" => Mechanism::Nfc,
            "tsf" => Mechanism::Tsf,
            "first-fit" => Mechanism::FirstFit,
            "best-fit" => Mechanism::BestFit {
                normaliser: p.normaliser.clone(),
            },
            "slots" => Mechanism::Slots {
                slots: p.slots.ok_or(ParamError::Missing {
                    mechanism: "slots",
                    parameter: "slots",
                    hint: "S (slots per maximum server, S >= 1)",
                })?,
            },
            "kdf-online" => Mechanism::KdfOnline {
                k: need_k("kdf-online")?,
                on_full: p.on_full.unwrap_or_default(),
            },
            "yarn-fair" => Mechanism::YarnFair,
            "kai" => Mechanism::Kai,
            "volcano-proportion" => Mechanism::VolcanoProportion,
            "kueue" => Mechanism::Kueue,
            "fds" => Mechanism::Fds {
                fairness: fairness("fds")?,
            },
            "gfj" => Mechanism::Gfj {
                fairness: fairness("gfj")?,
            },
            "pnorm" => Mechanism::Pnorm {
                p: p.p.ok_or(ParamError::Missing {
                    mechanism: "pnorm",
                    parameter: "p",
                    hint: "P (P >= 1, or inf)",
                })?,
                fairness: fairness("pnorm")?,
            },
            "bbf-eg" => Mechanism::BbfEg {
                method: p.method.unwrap_or_default(),
            },
            "bbf-ode" => Mechanism::BbfOde {
                by: p.by.unwrap_or_default(),
                trajectory: p.trajectory.clone(),
            },
            "psdsf" => Mechanism::Psdsf {
                select: p.select.unwrap_or_default(),
            },
            "vds" => Mechanism::Vds {
                alpha: p.alpha.ok_or(ParamError::Missing {
                    mechanism: "vds",
                    parameter: "alpha",
                    hint: "A (A >= 1)",
                })?,
                schedule: p
                    .jacobi
                    .map_or(VdsSchedule::GaussSeidel, VdsSchedule::Jacobi),
            },
            _ => return Err(ParamError::UnknownMechanism(name.to_string())),
        };
        m.validate()?;
        let uses = m.parameters();
        for (parameter, given) in p.given() {
            if given && !uses.contains(&parameter) {
                return Err(ParamError::NotApplicable {
                    parameter,
                    mechanism: m.name(),
                });
            }
        }
        Ok(m)
    }

    /// The parameters this mechanism takes, by name.
    pub fn parameters(&self) -> &'static [&'static str] {
        match self {
            Mechanism::Kdf { .. } => &["k"],
            Mechanism::KdfOnline { .. } => &["k", "on_full"],
            Mechanism::Slots { .. } => &["slots"],
            Mechanism::BestFit { .. } => &["normaliser"],
            Mechanism::Fds { .. } | Mechanism::Gfj { .. } => &["beta", "lambda", "alpha"],
            Mechanism::Pnorm { .. } => &["p", "beta", "lambda", "alpha"],
            Mechanism::BbfEg { .. } => &["method"],
            Mechanism::BbfOde { .. } => &["by", "trajectory"],
            Mechanism::Psdsf { .. } => &["select"],
            Mechanism::Vds { .. } => &["alpha", "jacobi"],
            _ => &[],
        }
    }

    /// Check the values' ranges (a value built directly is checked here
    /// too, by [`solve`](crate::solve)).
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            Mechanism::Kdf { k: 0 } | Mechanism::KdfOnline { k: 0, .. } => {
                Err(ParamError::invalid("k", 0, "must be >= 1 (k = 1 is DRF)"))
            }
            Mechanism::Slots { slots: 0 } => Err(ParamError::invalid("slots", 0, "must be >= 1")),
            Mechanism::Fds { fairness } | Mechanism::Gfj { fairness } => check_fairness(fairness),
            Mechanism::Pnorm { p, fairness } => {
                if p.is_nan() || *p < 1.0 {
                    return Err(ParamError::invalid("p", p, "must be a number >= 1, or inf"));
                }
                check_fairness(fairness)
            }
            Mechanism::Vds { alpha, schedule } => {
                if *alpha == 1.0 && matches!(schedule, VdsSchedule::Jacobi(_)) {
                    return Err(ParamError::JacobiAtAlphaOne);
                }
                if !(alpha.is_finite() && *alpha >= 1.0) {
                    return Err(ParamError::invalid(
                        "alpha",
                        alpha,
                        "alphaPF-VDS needs a finite alpha >= 1",
                    ));
                }
                match schedule {
                    VdsSchedule::Jacobi(t) if !(*t > 0.0 && *t <= 1.0) => Err(ParamError::invalid(
                        "jacobi",
                        t,
                        "the damping must be in (0, 1]",
                    )),
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// The loose parameters this value was built from (the inverse of
    /// [`Mechanism::from_params`]).
    pub fn params(&self) -> Params {
        let mut p = Params::default();
        let fair = |p: &mut Params, f: &Fairness| match *f {
            Fairness::Alpha(a) => p.alpha = Some(a),
            Fairness::BetaLambda { beta, lambda } => {
                p.beta = Some(beta);
                p.lambda = Some(lambda);
            }
        };
        match self {
            Mechanism::Kdf { k } => p.k = Some(*k),
            Mechanism::KdfOnline { k, on_full } => {
                p.k = Some(*k);
                p.on_full = Some(*on_full);
            }
            Mechanism::Slots { slots } => p.slots = Some(*slots),
            Mechanism::BestFit { normaliser } => p.normaliser = normaliser.clone(),
            Mechanism::Fds { fairness } | Mechanism::Gfj { fairness } => fair(&mut p, fairness),
            Mechanism::Pnorm { p: pp, fairness } => {
                p.p = Some(*pp);
                fair(&mut p, fairness);
            }
            Mechanism::BbfEg { method } => p.method = Some(*method),
            Mechanism::BbfOde { by, trajectory } => {
                p.by = Some(*by);
                p.trajectory = trajectory.clone();
            }
            Mechanism::Psdsf { select } => p.select = Some(*select),
            Mechanism::Vds { alpha, schedule } => {
                p.alpha = Some(*alpha);
                if let VdsSchedule::Jacobi(t) = schedule {
                    p.jacobi = Some(*t);
                }
            }
            _ => {}
        }
        p
    }
}

fn check_fairness(f: &Fairness) -> Result<(), ParamError> {
    match *f {
        Fairness::Alpha(a) if !(a.is_finite() && a > 0.0) => {
            Err(ParamError::invalid("alpha", a, "must be finite and > 0"))
        }
        Fairness::Alpha(_) => Ok(()),
        Fairness::BetaLambda { beta, lambda } => leontief_fds::classify(beta, lambda)
            .map(|_| ())
            .map_err(|e| ParamError::Refused(e.to_string())),
    }
}

/// `name` or `name:key=value,key=value` (keys as [`Params`] fields, `-`
/// or `_`): `"drfh"`, `"kdf:k=2"`, `"fds:beta=2,lambda=-0.5"`,
/// `"pnorm:p=inf,alpha=1"`, `"vds:alpha=2,jacobi=0.5"`.
impl FromStr for Mechanism {
    type Err = ParamError;

    fn from_str(s: &str) -> Result<Mechanism, ParamError> {
        let (name, rest) = s.split_once(':').unwrap_or((s, ""));
        let mut p = Params::default();
        for pair in rest.split(',').filter(|t| !t.trim().is_empty()) {
            let (k, v) = pair.split_once('=').ok_or_else(|| ParamError::Invalid {
                parameter: "parameter",
                value: pair.to_string(),
                reason: "expected key=value".into(),
            })?;
            p.set(k, v)?;
        }
        Mechanism::from_params(name.trim(), &p)
    }
}

/// The spec string [`FromStr`] reads back.
impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.params();
        let mut parts: Vec<String> = Vec::new();
        let mut put = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                parts.push(format!("{k}={v}"));
            }
        };
        put("k", p.k.map(|v| v.to_string()));
        put("on_full", p.on_full.map(|v| v.to_string()));
        put("slots", p.slots.map(|v| v.to_string()));
        put("normaliser", p.normaliser.clone());
        put("beta", p.beta.map(|v| v.to_string()));
        put("lambda", p.lambda.map(|v| v.to_string()));
        put("alpha", p.alpha.map(|v| v.to_string()));
        put(
            "p",
            p.p.map(|v| {
                if v.is_infinite() {
                    "inf".into()
                } else {
                    v.to_string()
                }
            }),
        );
        put("by", p.by.map(|v| v.to_string()));
        put(
            "trajectory",
            p.trajectory.as_ref().map(|t| t.display().to_string()),
        );
        put("method", p.method.map(|v| v.to_string()));
        put("select", p.select.map(|v| v.to_string()));
        put("jacobi", p.jacobi.map(|v| v.to_string()));
        f.write_str(self.name())?;
        if !parts.is_empty() {
            write!(f, ":{}", parts.join(","))?;
        }
        Ok(())
    }
}

mod p_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(p: &f64, s: S) -> Result<S::Ok, S::Error> {
        if p.is_infinite() {
            s.serialize_str("inf")
        } else {
            s.serialize_f64(*p)
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum P {
        Number(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match P::deserialize(d)? {
            P::Number(x) => Ok(x),
            P::Text(t) if t == "inf" => Ok(f64::INFINITY),
            P::Text(t) => Err(serde::de::Error::custom(format!(
                "p {t}: must be a number >= 1, or \"inf\""
            ))),
        }
    }
}

#[cfg(test)]
mod tests;
