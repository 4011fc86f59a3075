//! The figures: series read from simulate JSON and sweep / contour CSVs.

use super::table::Table;
use super::{Figure, Series, Style};
use crate::args::{Kind, PlotArgs};
use crate::failure::{bad_input, Failure};
use serde_json::Value;
use std::path::Path;

fn read_json(p: &Path) -> Result<Value, Failure> {
    let text =
        std::fs::read_to_string(p).map_err(|e| bad_input(format!("{}: {e}", p.display())))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| bad_input(format!("{}: not JSON: {e}", p.display())))?;
    if v.get("sample_times").is_none() {
        return Err(bad_input(format!(
            "{}: not a `leontief simulate` result (no sample_times)",
            p.display()
        )));
    }
    Ok(v)
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect())
        .unwrap_or_default()
}

fn run_name(v: &Value) -> String {
    let s = &v["scheduler"];
    let name = s["name"].as_str().unwrap_or("?").to_string();
    match s.get("slots") {
        Some(k) => format!("{name} ({k} slots)"),
        None => name,
    }
}

pub(crate) fn figure(args: &PlotArgs) -> Result<Figure, Failure> {
    let title = |default: String| args.title.clone().unwrap_or(default);
    Ok(match args.kind {
        Kind::Utilisation => {
            let mut series = Vec::new();
            for p in &args.results {
                let v = read_json(p)?;
                let t = nums(&v["sample_times"]);
                let res: Vec<String> = v["resources"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|x| x.as_str().unwrap_or("?").to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                let u: Vec<Vec<f64>> = v["utilisation"]
                    .as_array()
                    .map(|a| a.iter().map(nums).collect())
                    .unwrap_or_default();
                for (r, name) in res.iter().enumerate() {
                    series.push(Series {
                        label: format!("{}: {name}", run_name(&v)),
                        points: t
                            .iter()
                            .zip(&u)
                            .map(|(t, row)| (*t, 100.0 * row[r]))
                            .collect(),
                        style: Style::Line,
                    });
                }
            }
            Figure {
                title: title("Resource utilisation".into()),
                x_label: "time (s)".into(),
                y_label: "utilisation (%)".into(),
                series,
                diagonal: false,
                y_from_zero: true,
            }
        }
        Kind::Shares => {
            let v = read_json(&args.results[0])?;
            let t = nums(&v["sample_times"]);
            let s: Vec<Vec<f64>> = v["shares"]
                .as_array()
                .map(|a| a.iter().map(nums).collect())
                .unwrap_or_default();
            let users = v["users"].as_array().cloned().unwrap_or_default();
            let series = users
                .iter()
                .enumerate()
                .map(|(n, u)| Series {
                    label: u["name"].as_str().unwrap_or("?").to_string(),
                    points: t
                        .iter()
                        .zip(&s)
                        .map(|(t, row)| (*t, 100.0 * row[n]))
                        .collect(),
                    style: Style::Line,
                })
                .collect();
            Figure {
                title: title(format!("Global dominant shares, {}", run_name(&v))),
                x_label: "time (s)".into(),
                y_label: "global dominant share (%)".into(),
                series,
                diagonal: false,
                y_from_zero: true,
            }
        }
        Kind::JctCdf => {
            let mut series = Vec::new();
            for p in &args.results {
                let v = read_json(p)?;
                let mut c: Vec<f64> = v["jobs"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|j| j["completion_time"].as_f64())
                            .collect()
                    })
                    .unwrap_or_default();
                c.sort_by(f64::total_cmp);
                let k = c.len().max(1) as f64;
                series.push(Series {
                    label: format!("{} ({} jobs completed)", run_name(&v), c.len()),
                    points: c
                        .iter()
                        .enumerate()
                        .map(|(i, x)| (*x, (i + 1) as f64 / k))
                        .collect(),
                    style: Style::Line,
                });
            }
            Figure {
                title: title("Job completion times".into()),
                x_label: "job completion time (s)".into(),
                y_label: "fraction of completed jobs".into(),
                series,
                diagonal: false,
                y_from_zero: true,
            }
        }
        Kind::Completion => {
            let first = read_json(&args.results[0])?;
            let users = first["users"].as_array().cloned().unwrap_or_default();
            let radius = |u: &Value| {
                let k = u["submitted"].as_f64().unwrap_or(0.0);
                (2.0 + 2.5 * (1.0 + k).log10()).round() as i32
            };
            let (x_label, y_label, pairs): (String, String, Vec<(f64, f64, i32)>) = match args
                .results
                .get(1)
            {
                Some(p) => {
                    let second = read_json(p)?;
                    let other = second["users"].as_array().cloned().unwrap_or_default();
                    if other.len() != users.len() {
                        return Err(bad_input("completion: the two runs have different users"));
                    }
                    (
                        format!("task completion ratio, {}", run_name(&first)),
                        format!("task completion ratio, {}", run_name(&second)),
                        users
                            .iter()
                            .zip(&other)
                            .filter(|(u, _)| u["submitted"].as_u64().unwrap_or(0) > 0)
                            .map(|(a, b)| {
                                (
                                    a["completion_ratio"].as_f64().unwrap_or(f64::NAN),
                                    b["completion_ratio"].as_f64().unwrap_or(f64::NAN),
                                    radius(a),
                                )
                            })
                            .collect(),
                    )
                }
                None => {
                    if users
                        .iter()
                        .all(|u| u["dedicated_completion_ratio"].is_null())
                    {
                        return Err(bad_input(
                                "completion: give two results, or one run with --dedicated (dedicated against shared)",
                            ));
                    }
                    (
                        "task completion ratio, dedicated cloud".into(),
                        "task completion ratio, shared cloud".into(),
                        users
                            .iter()
                            .filter_map(|u| {
                                Some((
                                    u["dedicated_completion_ratio"].as_f64()?,
                                    u["completion_ratio"].as_f64()?,
                                    radius(u),
                                ))
                            })
                            .collect(),
                    )
                }
            };
            Figure {
                title: title("Task completion ratio per user".into()),
                x_label,
                y_label,
                series: vec![Series {
                    label: "users (radius: log tasks submitted)".into(),
                    points: pairs.iter().map(|p| (p.0, p.1)).collect(),
                    style: Style::Bubbles(pairs.iter().map(|p| p.2).collect()),
                }],
                diagonal: true,
                y_from_zero: true,
            }
        }
        Kind::Contours => {
            let t = Table::read(&args.results[0], "leontief repro fds-contours")?;
            let (c0, cf, ce, cs) = (
                t.col("capacity")?,
                t.col("percent_fairness")?,
                t.col("percent_efficiency")?,
                t.col("status")?,
            );
            let mut series: Vec<Series> = Vec::new();
            for f in &t.rows {
                if f.get(cs)
                    .is_some_and(|s| !matches!(s.as_str(), "optimal" | "reduced_accuracy"))
                {
                    continue;
                }
                let (Some(fair), Some(eff)) = (
                    f.get(cf).and_then(|x| x.parse::<f64>().ok()),
                    f.get(ce).and_then(|x| x.parse::<f64>().ok()),
                ) else {
                    continue;
                };
                let label = format!("capacity {}", f[c0]);
                match series.iter_mut().find(|s| s.label == label) {
                    Some(s) => {
                        s.points.push((fair, eff));
                        if let Style::Bubbles(r) = &mut s.style {
                            r.push(3);
                        }
                    }
                    None => series.push(Series {
                        label,
                        points: vec![(fair, eff)],
                        style: Style::Bubbles(vec![3]),
                    }),
                }
            }
            Figure {
                title: title("Fairness-efficiency tradeoffs per capacity".into()),
                x_label: "percent fairness (vs DRF)".into(),
                y_label: "percent efficiency (vs NFC)".into(),
                series,
                diagonal: false,
                y_from_zero: false,
            }
        }
        Kind::Tradeoff => {
            let t = Table::read(&args.results[0], "leontief sweep")?;
            let (cp, cv, cf, ce) = (
                t.col("parameter")?,
                t.col("value")?,
                t.col("percent_fairness")?,
                t.col("percent_efficiency")?,
            );
            let rows = &t.rows;
            let param = rows.first().map(|r| r[cp].to_string()).unwrap_or_default();
            let get = |r: &Vec<String>, c: usize| r.get(c).and_then(|x| x.parse::<f64>().ok());
            let series = [
                ("percent fairness (vs DRF)", cf),
                ("percent efficiency (vs NFC)", ce),
            ]
            .into_iter()
            .map(|(label, c)| Series {
                label: label.into(),
                points: rows
                    .iter()
                    .filter_map(|r| Some((get(r, cv)?, get(r, c)?)))
                    .collect(),
                style: Style::Line,
            })
            .collect();
            Figure {
                title: title(format!("Fairness and efficiency against {param}")),
                x_label: param,
                y_label: "percent".into(),
                series,
                diagonal: false,
                y_from_zero: true,
            }
        }
    })
}
