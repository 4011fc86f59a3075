//! Read an allocation made elsewhere: the allocation JSON of the contract
//! (dense `tasks` or sparse `tasks_sparse`) or a CSV `user,server,tasks`
//! with names. Every refusal names the field, line or entry.

use crate::error::{bad_input, Error};
use leontief_core::Instance;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// How an allocation file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocationFormat {
    /// The allocation JSON of the contract (what `leontief solve` prints).
    Json,
    /// CSV with a header naming the columns `user`, `server`, `tasks`.
    Csv,
}

impl AllocationFormat {
    /// CSV for a `.csv` file, JSON otherwise.
    pub fn from_path(path: &Path) -> AllocationFormat {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("csv") => AllocationFormat::Csv,
            _ => AllocationFormat::Json,
        }
    }
}

/// Tasks per user (instance order) and server entry, held sparsely.
pub use leontief_core::Tasks;

/// Read an allocation of `instance` from `text`.
///
/// ```
/// use leontief::audit::{read_allocation, AllocationFormat};
/// let instance = leontief::Instance::from_json_str(r#"{"resources": ["cpu"],
///     "servers": [{"name": "a", "capacity": [4]}, {"name": "b", "capacity": [4]}],
///     "users": [{"name": "x", "demand": [1]}, {"name": "y", "demand": [2]}]}"#).unwrap();
/// let t = read_allocation(&instance, "user,server,tasks\nx,a,4\ny,b,2\n", AllocationFormat::Csv).unwrap();
/// assert_eq!(t.to_dense(), vec![vec![4.0, 0.0], vec![0.0, 2.0]]);
/// let e = read_allocation(&instance, "user,server,tasks\nz,a,1\n", AllocationFormat::Csv).unwrap_err();
/// assert_eq!(e.to_string(), "allocation line 2: unknown user \"z\"");
/// ```
pub fn read_allocation(
    instance: &Instance,
    text: &str,
    format: AllocationFormat,
) -> Result<Tasks, Error> {
    match format {
        AllocationFormat::Json => from_json(instance, text),
        AllocationFormat::Csv => from_csv(instance, text),
    }
}

fn number(v: &Value, what: impl Fn() -> String) -> Result<f64, Error> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(bad_input(format!("{} is not a finite number", what()))),
    }
}

fn index(v: &Value, below: usize, what: impl Fn() -> String) -> Result<usize, Error> {
    match v.as_u64() {
        Some(x) if (x as usize) < below => Ok(x as usize),
        Some(x) => Err(bad_input(format!("{} is {x}, not below {below}", what()))),
        None => Err(bad_input(format!("{} is not an index", what()))),
    }
}

fn array<'a>(v: &'a Value, what: &str) -> Result<&'a Vec<Value>, Error> {
    v.as_array()
        .ok_or_else(|| bad_input(format!("{what} is not an array")))
}

fn from_json(instance: &Instance, text: &str) -> Result<Tasks, Error> {
    let (nu, k) = (instance.num_users(), instance.num_entries());
    let v: Value = serde_json::from_str(text)
        .map_err(|e| bad_input(format!("allocation is not JSON: {e}")))?;
    if !v.is_object() {
        return Err(bad_input("allocation is not a JSON object"));
    }
    // Per user, its entries in the order read (repeated pairs add up).
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); nu];
    if let Some(s) = v.get("tasks_sparse") {
        for (field, want) in [("users", nu), ("servers", k)] {
            match s.get(field).and_then(Value::as_u64) {
                Some(x) if x as usize == want => {}
                _ => {
                    return Err(bad_input(format!(
                        "allocation.tasks_sparse.{field} is {}, the instance has {want}",
                        s.get(field).unwrap_or(&Value::Null)
                    )))
                }
            }
        }
        let user = array(&s["user"], "allocation.tasks_sparse.user")?;
        let server = array(&s["server"], "allocation.tasks_sparse.server")?;
        let t = array(&s["tasks"], "allocation.tasks_sparse.tasks")?;
        if user.len() != t.len() || server.len() != t.len() {
            return Err(bad_input(format!(
                "allocation.tasks_sparse has {} users, {} servers and {} tasks: the three must be as long",
                user.len(),
                server.len(),
                t.len()
            )));
        }
        for j in 0..t.len() {
            let n = index(&user[j], nu, || {
                format!("allocation.tasks_sparse.user[{j}]")
            })?;
            let i = index(&server[j], k, || {
                format!("allocation.tasks_sparse.server[{j}]")
            })?;
            let x = number(&t[j], || format!("allocation.tasks_sparse.tasks[{j}]"))?;
            rows[n].push((i, x));
        }
    } else if let Some(dense) = v.get("tasks") {
        let dense = array(dense, "allocation.tasks")?;
        if dense.len() != nu {
            return Err(bad_input(format!(
                "allocation.tasks has {} rows, the instance has {nu} users",
                dense.len()
            )));
        }
        for (n, row) in dense.iter().enumerate() {
            let row = array(row, &format!("allocation.tasks[{n}]"))?;
            if row.len() != k {
                return Err(bad_input(format!(
                    "allocation.tasks[{n}] has {} entries, the instance has {k} servers",
                    row.len()
                )));
            }
            for (i, x) in row.iter().enumerate() {
                let x = number(x, || format!("allocation.tasks[{n}][{i}]"))?;
                rows[n].push((i, x));
            }
        }
    } else {
        let status = v.get("status").and_then(Value::as_str).unwrap_or("none");
        return Err(bad_input(format!(
            "allocation has neither tasks nor tasks_sparse (status {status})"
        )));
    }
    let tasks = Tasks::from_rows(k, rows);
    if let Some(ut) = v.get("user_tasks") {
        let ut = array(ut, "allocation.user_tasks")?;
        if ut.len() != nu {
            return Err(bad_input(format!(
                "allocation.user_tasks has {} entries, the instance has {nu} users",
                ut.len()
            )));
        }
        for (n, x) in ut.iter().enumerate() {
            let x = number(x, || format!("allocation.user_tasks[{n}]"))?;
            let sum = tasks.user_total(n);
            let size: f64 = tasks
                .row(n)
                .iter()
                .map(|(_, t)| t.abs())
                .sum::<f64>()
                .max(x.abs());
            if (sum - x).abs() > 1e-9 * size {
                return Err(bad_input(format!(
                    "allocation.user_tasks[{n}] is {x} but its tasks sum to {sum}"
                )));
            }
        }
    }
    Ok(tasks)
}

fn from_csv(instance: &Instance, text: &str) -> Result<Tasks, Error> {
    let users: HashMap<&str, usize> = instance
        .users()
        .iter()
        .enumerate()
        .map(|(n, u)| (u.name.as_str(), n))
        .collect();
    let servers: HashMap<&str, usize> = instance
        .servers()
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    // Names are exact (" a" is not "a"); only the header and the task
    // counts are trimmed.
    let mut r = csv::ReaderBuilder::new()
        .trim(csv::Trim::Headers)
        .from_reader(text.as_bytes());
    let header = r
        .headers()
        .map_err(|e| bad_input(format!("allocation CSV header: {e}")))?
        .clone();
    let col = |name: &str| {
        header.iter().position(|h| h == name).ok_or_else(|| {
            bad_input(format!(
                "allocation CSV header has no column \"{name}\" (expected user,server,tasks)"
            ))
        })
    };
    let (cu, cs, ct) = (col("user")?, col("server")?, col("tasks")?);
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); instance.num_users()];
    for (j, rec) in r.records().enumerate() {
        let line = j + 2;
        let rec = rec.map_err(|e| bad_input(format!("allocation line {line}: {e}")))?;
        let field = |c: usize| rec.get(c).unwrap_or("");
        let n = *users.get(field(cu)).ok_or_else(|| {
            bad_input(format!(
                "allocation line {line}: unknown user \"{}\"",
                field(cu)
            ))
        })?;
        let i = *servers.get(field(cs)).ok_or_else(|| {
            bad_input(format!(
                "allocation line {line}: unknown server \"{}\"",
                field(cs)
            ))
        })?;
        let t: f64 = field(ct)
            .trim()
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite())
            .ok_or_else(|| {
                bad_input(format!(
                    "allocation line {line}: tasks \"{}\" is not a finite number",
                    field(ct)
                ))
            })?;
        // Rows of one pair add up (one row per pod or per task group).
        rows[n].push((i, t));
    }
    Ok(Tasks::from_rows(instance.num_entries(), rows))
}
