//! The worked cases of `datasets/paper-examples/` (NAME.json with
//! NAME.expected.json): reading them and comparing an output against them.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// One case.
#[derive(Debug, Clone)]
pub struct Case {
    /// NAME.
    pub name: String,
    /// NAME.json.
    pub instance: PathBuf,
    /// The parsed NAME.expected.json.
    pub expected: Value,
}

impl Case {
    /// The mechanism the case runs.
    pub fn mechanism(&self) -> &str {
        self.expected["mechanism"].as_str().unwrap_or("")
    }

    /// `params` as CLI flags (`on_full` becomes `--on-full`).
    pub fn flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = self.expected["params"].as_object() {
            for (k, v) in p {
                out.push(format!("--{}", k.replace('_', "-")));
                out.push(match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
            }
        }
        out
    }

    /// The `params` as mechanism parameters.
    pub fn params(&self) -> crate::args::MechParams {
        let p = &self.expected["params"];
        crate::args::MechParams {
            k: p["k"].as_u64().map(|k| k as usize),
            on_full: match p["on_full"].as_str() {
                Some("stop") => Some(crate::args::OnFullArg::Stop),
                Some("skip") => Some(crate::args::OnFullArg::Skip),
                _ => None,
            },
            slots: p["slots"].as_u64().map(|s| s as u32),
            normaliser: p["normaliser"].as_str().map(str::to_string),
            beta: p["beta"].as_f64(),
            lambda: p["lambda"].as_f64(),
            alpha: p["alpha"].as_f64(),
            p: match &p["p"] {
                serde_json::Value::Null => None,
                serde_json::Value::String(s) => Some(s.clone()),
                v => Some(v.to_string()),
            },
            by: match p["by"].as_str() {
                Some("t") => Some(crate::args::ByArg::T),
                Some("log-c") => Some(crate::args::ByArg::LogC),
                _ => None,
            },
            trajectory: None,
            method: None,
            select: p["select"].as_str().map(str::to_string),
            jacobi: p["jacobi"].as_f64(),
        }
    }
}

/// Every case in `dir`, sorted by name.
pub fn load_cases(dir: &Path) -> std::io::Result<Vec<Case>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
            continue;
        };
        let Some(name) = file.strip_suffix(".expected.json") else {
            continue;
        };
        let text = std::fs::read_to_string(&path)?;
        let expected: Value = serde_json::from_str(&text).map_err(|e| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{file}: {e}"))
        })?;
        out.push(Case {
            name: name.to_string(),
            instance: dir.join(format!("{name}.json")),
            expected,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Compare a `leontief solve` output with the case's expectation, using
/// the case's tolerance relative to max(1, |expected|). Returns the largest
/// scaled error, or a message on a mismatch.
pub fn compare(case: &Case, output: &Value) -> Result<f64, String> {
    let tol = case.expected["tolerance"].as_f64().unwrap_or(0.0);
    let expect = &case.expected["expect"];
    let mut worst = 0.0f64;
    let mut check = |what: String, got: Option<f64>, want: f64| -> Result<(), String> {
        let got = got.ok_or_else(|| format!("{what}: missing in output"))?;
        let err = (got - want).abs() / want.abs().max(1.0);
        worst = worst.max(err);
        if err > tol {
            Err(format!(
                "{what}: got {got}, expected {want} (scaled error {err:.3e} > tolerance {tol:.1e})"
            ))
        } else {
            Ok(())
        }
    };
    let mut checked = false;
    if let Some(want) = expect["user_tasks"].as_array() {
        let got = output["user_tasks"]
            .as_array()
            .ok_or("output has no user_tasks")?;
        if got.len() != want.len() {
            return Err(format!(
                "user_tasks has {} entries, expected {}",
                got.len(),
                want.len()
            ));
        }
        for (n, (g, w)) in got.iter().zip(want).enumerate() {
            check(
                format!("user_tasks[{n}]"),
                g.as_f64(),
                w.as_f64().ok_or("bad expected value")?,
            )?;
        }
        checked = true;
    }
    if let Some(want) = expect["objective"].as_f64() {
        check("objective".into(), output["objective"].as_f64(), want)?;
        checked = true;
    }
    if let Some(want) = expect["bbf_solutions"].as_array() {
        // enumerate-bbf output: the set of bottleneck sets must be equal.
        let key = |v: &Value| -> Option<Vec<String>> {
            let mut k: Vec<String> = v
                .as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_string))
                .collect::<Option<_>>()?;
            k.sort();
            Some(k)
        };
        let mut want: Vec<Vec<String>> = want
            .iter()
            .map(key)
            .collect::<Option<_>>()
            .ok_or("bad expected bbf_solutions")?;
        let mut got: Vec<Vec<String>> = output["solutions"]
            .as_array()
            .ok_or("output has no solutions")?
            .iter()
            .map(|s| key(&s["bottlenecks"]))
            .collect::<Option<_>>()
            .ok_or("a solution has no bottlenecks list")?;
        want.sort();
        got.sort();
        if got != want {
            return Err(format!(
                "bottleneck sets differ: got {got:?}, expected {want:?}"
            ));
        }
        checked = true;
    }
    if !checked {
        return Err(
            "the case expects nothing this comparison knows (user_tasks, objective)".into(),
        );
    }
    if output.get("solutions").is_some() {
        if output["complete"] != Value::Bool(true) {
            return Err(format!(
                "the enumeration is incomplete: {}",
                output["unsettled"]
            ));
        }
    } else if output["status"].as_str() != Some("optimal") {
        return Err(format!("status is {}, not optimal", output["status"]));
    }
    Ok(worst)
}
