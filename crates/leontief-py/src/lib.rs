//! `pyleontief._core`: the compiled half of the Python package. Every
//! function takes the instance as the JSON text of the contract (the
//! Python half builds it from a path, a dict or numpy arrays) and calls the
//! `leontief` facade with the GIL released. Bad input raises `ValueError`
//! with the library's message (naming the field or parameter); a run that
//! could not happen raises `LeontiefError`. No panic crosses into Python
//! (PyO3 turns one into `PanicException`, and the facade does not panic on
//! any input: see issue 14's fuzzers).

use leontief::{Error, Instance, Layout, Mechanism, Options, Params, VerifyMode};
use numpy::{PyArray1, PyArray2};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _core,
    LeontiefError,
    PyRuntimeError,
    "A solve that could not run (a solver back end failed); bad input raises ValueError instead."
);

fn to_py(e: Error) -> PyErr {
    if e.is_bad_input() {
        PyValueError::new_err(e.to_string())
    } else {
        LeontiefError::new_err(e.to_string())
    }
}

fn instance(json: &str) -> PyResult<Instance> {
    Instance::from_json_str(json).map_err(|e| PyValueError::new_err(e.to_string()))
}

fn mechanism(spec: &str) -> PyResult<Mechanism> {
    spec.parse::<Mechanism>()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

fn options(verify: &str, time_limit: Option<f64>) -> PyResult<Options> {
    let verify = match verify {
        "auto" => VerifyMode::Auto,
        "always" => VerifyMode::Always,
        "never" => VerifyMode::Never,
        other => {
            return Err(PyValueError::new_err(format!(
                "verify {other}: use auto, always or never"
            )))
        }
    };
    Ok(Options {
        verify,
        time_limit,
        ..Options::default()
    })
}

fn layout(name: &str) -> PyResult<Layout> {
    match name {
        "auto" => Ok(Layout::Auto),
        "dense" => Ok(Layout::Dense),
        "sparse" => Ok(Layout::Sparse),
        other => Err(PyValueError::new_err(format!(
            "layout {other}: use auto, dense or sparse"
        ))),
    }
}

/// The nonzero tasks as COO arrays (user, server entry, tasks).
type Coo<'py> = (
    Bound<'py, PyArray1<usize>>,
    Bound<'py, PyArray1<usize>>,
    Bound<'py, PyArray1<f64>>,
);

/// The solution's JSON (exactly `leontief solve`'s output), its user task
/// counts (N), its tasks as an N x K array when `dense_tasks` (default:
/// below `leontief::SPARSE_FROM` user-server pairs), and always
/// its nonzero tasks as COO arrays.
type Solved<'py> = (
    String,
    Bound<'py, PyArray1<f64>>,
    Option<Bound<'py, PyArray2<f64>>>,
    Coo<'py>,
);

/// solve(instance_json, mechanism, verify="auto", time_limit=None, layout="auto", dense_tasks=None, exact_pivots=None)
///
/// Solve and verify `mechanism` (a spec string: "drfh", "kdf:k=2",
/// "fds:alpha=2", "pnorm:p=inf,beta=2", "vds:alpha=2,jacobi=0.5") on the
/// instance. Returns (json, user_tasks, tasks or None, (user, server, tasks)).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (instance_json, mechanism_spec, verify="auto", time_limit=None, layout_name="auto", dense_tasks=None, exact_pivots=None))]
fn solve<'py>(
    py: Python<'py>,
    instance_json: &str,
    mechanism_spec: &str,
    verify: &str,
    time_limit: Option<f64>,
    layout_name: &str,
    dense_tasks: Option<bool>,
    exact_pivots: Option<bool>,
) -> PyResult<Solved<'py>> {
    let inst = instance(instance_json)?;
    let m = mechanism(mechanism_spec)?;
    let o = Options {
        exact_pivots,
        ..options(verify, time_limit)?
    };
    let l = layout(layout_name)?;
    let a = py
        .allow_threads(|| leontief::solve(&inst, &m, &o))
        .map_err(to_py)?;
    let user_tasks = PyArray1::from_vec(py, a.user_tasks.clone());
    // Dense below the pairs from which the JSON turns sparse, unless asked.
    let pairs = a.tasks.users() * a.tasks.servers();
    let tasks = if dense_tasks.unwrap_or(pairs < leontief::SPARSE_FROM) {
        Some(
            PyArray2::from_vec2(py, &a.tasks.to_dense())
                .map_err(|e| LeontiefError::new_err(e.to_string()))?,
        )
    } else {
        None
    };
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for (n, i, v) in a.tasks.nonzeros() {
        rows.push(n);
        cols.push(i);
        vals.push(v);
    }
    let coo = (
        PyArray1::from_vec(py, rows),
        PyArray1::from_vec(py, cols),
        PyArray1::from_vec(py, vals),
    );
    let json = py
        .allow_threads(|| leontief::to_json(a, l, false))
        .map_err(to_py)?;
    Ok((json, user_tasks, tasks, coo))
}

/// validate(instance_json): None, or ValueError naming every problem.
#[pyfunction]
fn validate(instance_json: &str) -> PyResult<()> {
    instance(instance_json).map(|_| ())
}

/// normalise(instance_json): the instance as the library reads it (counts,
/// defaults filled in), as JSON.
#[pyfunction]
fn normalise(instance_json: &str) -> PyResult<String> {
    let inst = instance(instance_json)?;
    serde_json::to_string(&inst.to_raw()).map_err(|e| LeontiefError::new_err(e.to_string()))
}

/// generate(kind, users, servers=100, resources=2, seed=1, eligible=10):
/// a seeded instance as JSON (kind: google-cell, heterogeneous, placement).
#[pyfunction]
#[pyo3(signature = (kind, users, servers=100, resources=2, seed=1, eligible=10))]
fn generate(
    kind: &str,
    users: usize,
    servers: usize,
    resources: usize,
    seed: u64,
    eligible: usize,
) -> PyResult<String> {
    let inst =
        leontief::generated(kind, users, servers, resources, seed, eligible).map_err(to_py)?;
    serde_json::to_string(&inst.to_raw()).map_err(|e| LeontiefError::new_err(e.to_string()))
}

/// enumerate_bbf(instance_json, shard=(0, 1), dimension=True): every BBF
/// allocation as the JSON of `leontief enumerate-bbf`.
#[pyfunction]
#[pyo3(signature = (instance_json, shard=(0, 1), dimension=true))]
fn enumerate_bbf(
    py: Python<'_>,
    instance_json: &str,
    shard: (u64, u64),
    dimension: bool,
) -> PyResult<String> {
    let inst = instance(instance_json)?;
    let opts = leontief::EnumerateOptions { shard, dimension };
    let e = py
        .allow_threads(|| leontief::enumerate_bbf(&inst, &opts, &|| {}))
        .map_err(to_py)?;
    serde_json::to_string(&e).map_err(|e| LeontiefError::new_err(e.to_string()))
}

/// sweep(instance_json, mechanism, parameter, values, base="", verify="auto"):
/// one mechanism over values of one parameter (beta, alpha, k, slots),
/// warm-started where the library can. Returns JSON: the references and,
/// per value, the solution's JSON or the refusal.
#[pyfunction]
#[pyo3(signature = (instance_json, mechanism_name, parameter, values, base="", verify="auto"))]
fn sweep(
    py: Python<'_>,
    instance_json: &str,
    mechanism_name: &str,
    parameter: &str,
    values: Vec<f64>,
    base: &str,
    verify: &str,
) -> PyResult<String> {
    let inst = instance(instance_json)?;
    let swept = match parameter {
        "beta" => leontief::Swept::Beta,
        "alpha" => leontief::Swept::Alpha,
        "k" => leontief::Swept::K,
        "slots" => leontief::Swept::Slots,
        other => match other.strip_prefix("queue_weight:") {
            Some(q) => leontief::Swept::QueueWeight(q.to_string()),
            None => {
                return Err(PyValueError::new_err(format!(
                    "parameter {other}: sweep beta, alpha, k, slots or queue_weight:QUEUE"
                )))
            }
        },
    };
    let mut params = Params::default();
    for pair in base.split(',').filter(|t| !t.trim().is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| PyValueError::new_err(format!("{pair}: expected key=value")))?;
        params
            .set(k, v)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
    }
    let spec = leontief::SweepSpec {
        mechanism: mechanism_name.to_string(),
        base: params,
        swept,
        values,
    };
    let o = options(verify, None)?;
    let s = py
        .allow_threads(|| leontief::sweep(&inst, &spec, &o, &|| {}))
        .map_err(to_py)?;
    let points: Vec<serde_json::Value> = s
        .points
        .into_iter()
        .map(|p| match p.solution {
            Ok(a) => serde_json::json!({"value": p.value, "solution": a}),
            Err(e) => serde_json::json!({"value": p.value, "refused": e.to_string()}),
        })
        .collect();
    let out = serde_json::json!({
        "fairness_reference": s.references.fairness,
        "efficiency_reference": s.references.efficiency,
        "points": points,
    });
    serde_json::to_string(&out).map_err(|e| LeontiefError::new_err(e.to_string()))
}

/// simulate(config_path, scheduler=None, slots=None, horizon=None, dedicated=False):
/// the trace-driven simulation of a config (see `leontief simulate --help`)
/// as the JSON `leontief simulate` writes.
#[pyfunction]
#[pyo3(signature = (config_path, scheduler=None, slots=None, horizon=None, dedicated=false))]
fn simulate(
    py: Python<'_>,
    config_path: std::path::PathBuf,
    scheduler: Option<String>,
    slots: Option<u32>,
    horizon: Option<f64>,
    dedicated: bool,
) -> PyResult<String> {
    let overrides = leontief::simulate::Overrides {
        scheduler,
        slots,
        horizon,
        dedicated,
    };
    let s = leontief::simulate::load_config(&config_path, &overrides).map_err(to_py)?;
    let r = py
        .allow_threads(|| {
            leontief::simulate::simulate(&s, &s.settings, s.dedicated, &|_| {}, &|| {})
        })
        .map_err(to_py)?;
    serde_json::to_string(&r).map_err(|e| LeontiefError::new_err(e.to_string()))
}

/// The compiled module.
/// audit(instance_json, allocation_text, csv, against="auto", verify="auto", time_limit=None, exact=None):
/// every property of an allocation made elsewhere (allocation JSON, or CSV
/// user,server,tasks when `csv`), with witnesses, and the distance to the
/// mechanisms of `against`, as the JSON `leontief audit` prints.
#[pyfunction]
#[pyo3(signature = (instance_json, allocation_text, csv=false, against="auto", verify="auto", time_limit=None, exact=None))]
#[allow(clippy::too_many_arguments)]
fn audit(
    py: Python<'_>,
    instance_json: &str,
    allocation_text: &str,
    csv: bool,
    against: &str,
    verify: &str,
    time_limit: Option<f64>,
    exact: Option<&str>,
) -> PyResult<String> {
    use leontief::audit::{AllocationFormat, AuditOptions};
    let inst = instance(instance_json)?;
    let format = if csv {
        AllocationFormat::Csv
    } else {
        AllocationFormat::Json
    };
    let tasks = leontief::audit::read_allocation(&inst, allocation_text, format).map_err(to_py)?;
    let (against, note) = match against {
        "auto" => leontief::audit::default_against(&inst),
        list => (
            leontief::audit::parse_against(list)
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
            None,
        ),
    };
    let opts = AuditOptions {
        against,
        mode: options(verify, time_limit)?.verify,
        time_limit,
    };
    let shares = match exact {
        None | Some("") => None,
        Some(s) => Some(mechanism(s)?),
    };
    let report = py
        .allow_threads(|| -> Result<_, Error> {
            let mut r = leontief::audit::audit(&inst, &tasks, &opts)?;
            r.notes.extend(note);
            if exact.is_some() {
                leontief::audit::exact_into(
                    &mut r,
                    &inst,
                    allocation_text,
                    &tasks,
                    shares.as_ref(),
                )?;
            } else {
                leontief::audit::suggest_exact(&mut r, &inst, allocation_text);
            }
            Ok(r)
        })
        .map_err(to_py)?;
    serde_json::to_string(&report).map_err(|e| LeontiefError::new_err(e.to_string()))
}

/// compare_algorithms(instance_json, against, verify="auto", time_limit=None):
/// the mechanisms' own answers on the instance per queue, the first exact
/// hierarchical one (hdrf, hdrfh; default hdrf) the reference (JSON).
#[pyfunction]
#[pyo3(signature = (instance_json, against, verify="auto", time_limit=None))]
fn compare_algorithms(
    py: Python<'_>,
    instance_json: &str,
    against: &str,
    verify: &str,
    time_limit: Option<f64>,
) -> PyResult<String> {
    let inst = instance(instance_json)?;
    let mechanisms = leontief::audit::parse_against(against)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mode = options(verify, time_limit)?.verify;
    let report = py
        .allow_threads(|| leontief::audit::compare_algorithms(&inst, &mechanisms, mode, time_limit))
        .map_err(to_py)?;
    serde_json::to_string(&report).map_err(|e| LeontiefError::new_err(e.to_string()))
}

/// import_google_trace(task_events_path, machine_events_path, at, group_by="user", merge="refuse", uncapped=False):
/// a Google cluster-data 2011 snapshot at `at` seconds as (instance JSON,
/// tasks N x K, summary JSON).
#[pyfunction]
#[pyo3(signature = (task_events_path, machine_events_path, at, group_by="user", merge="refuse", uncapped=false))]
fn import_google_trace<'py>(
    py: Python<'py>,
    task_events_path: &str,
    machine_events_path: &str,
    at: f64,
    group_by: &str,
    merge: &str,
    uncapped: bool,
) -> PyResult<(String, Bound<'py, PyArray2<f64>>, String)> {
    let opts = leontief::import::TraceOptions {
        at,
        group_by: group_by.parse().map_err(to_py)?,
        merge: merge.parse().map_err(to_py)?,
        uncapped,
    };
    let open = |p: &str| {
        std::fs::File::open(p)
            .map(std::io::BufReader::new)
            .map_err(|e| PyValueError::new_err(format!("{p}: {e}")))
    };
    let (t, m) = (open(task_events_path)?, open(machine_events_path)?);
    let imp = py
        .allow_threads(|| {
            leontief::import::google_trace(t, task_events_path, m, machine_events_path, &opts)
        })
        .map_err(to_py)?;
    imported(py, imp)
}

/// An import as (instance JSON, tasks, summary JSON), the instance checked.
fn imported(
    py: Python<'_>,
    imp: leontief::import::Imported,
) -> PyResult<(String, Bound<'_, PyArray2<f64>>, String)> {
    Instance::new(imp.instance.clone())
        .map_err(|e| PyValueError::new_err(format!("the snapshot is not a valid instance: {e}")))?;
    let err = |e: serde_json::Error| LeontiefError::new_err(e.to_string());
    let tasks =
        PyArray2::from_vec2(py, &imp.tasks).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((
        serde_json::to_string(&imp.instance).map_err(err)?,
        tasks,
        serde_json::to_string(&imp.summary).map_err(err)?,
    ))
}

/// probe_sp(instance_json, mechanism, users=None, budget=40, seed=1, inflate_only=False):
/// the strategy-proofness probe of `leontief audit --probe-sp`, as JSON.
#[pyfunction]
#[pyo3(signature = (instance_json, mechanism_spec, users=None, budget=40, seed=1, inflate_only=false))]
fn probe_sp(
    py: Python<'_>,
    instance_json: &str,
    mechanism_spec: &str,
    users: Option<Vec<String>>,
    budget: usize,
    seed: u64,
    inflate_only: bool,
) -> PyResult<String> {
    let inst = instance(instance_json)?;
    let m = mechanism(mechanism_spec)?;
    let opts = leontief::audit::ProbeOptions {
        users,
        budget,
        seed,
        inflate_only,
    };
    let p = py
        .allow_threads(|| leontief::audit::probe_sp(&inst, &m, &opts))
        .map_err(to_py)?;
    serde_json::to_string(&p).map_err(|e| LeontiefError::new_err(e.to_string()))
}

/// import_kubernetes(nodes_json, pods_json, group_by="owner", merge="refuse", resources=None, uncapped=False):
/// a Kubernetes snapshot as (instance JSON, tasks N x K, summary JSON).
#[pyfunction]
#[pyo3(signature = (nodes_json, pods_json, group_by="owner", merge="refuse", resources=None, uncapped=false))]
fn import_kubernetes<'py>(
    py: Python<'py>,
    nodes_json: &str,
    pods_json: &str,
    group_by: &str,
    merge: &str,
    resources: Option<Vec<String>>,
    uncapped: bool,
) -> PyResult<(String, Bound<'py, PyArray2<f64>>, String)> {
    let opts = leontief::import::KubernetesOptions {
        group_by: group_by.parse().map_err(to_py)?,
        merge: merge.parse().map_err(to_py)?,
        resources,
        uncapped,
    };
    let imp = leontief::import::kubernetes(nodes_json, pods_json, &opts).map_err(to_py)?;
    imported(py, imp)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("LeontiefError", m.py().get_type::<LeontiefError>())?;
    m.add("MECHANISMS", leontief::NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(normalise, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(enumerate_bbf, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(audit, m)?)?;
    m.add_function(wrap_pyfunction!(compare_algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(import_kubernetes, m)?)?;
    m.add_function(wrap_pyfunction!(probe_sp, m)?)?;
    m.add_function(wrap_pyfunction!(import_google_trace, m)?)?;
    Ok(())
}
