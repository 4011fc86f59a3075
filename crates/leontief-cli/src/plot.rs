//! `leontief plot RESULT... --kind K -o out.svg|out.png`: the figures of
//! the papers from leontief's own output, with plotters.
//!
//! | kind | input | figure |
//! |---|---|---|
//! | utilisation | `simulate` JSON (one or more) | Fig. 5 of 000: CPU and memory utilisation over time |
//! | shares | `simulate` JSON | Fig. 4 of 000: each user's global dominant share over time |
//! | jct-cdf | `simulate` JSON (one or more) | Fig. 6a of 000: CDF of job completion times |
//! | completion | two `simulate` JSON, or one run with `--dedicated` | Fig. 7 (first run against the second) and Fig. 8 (dedicated against shared) of 000; bubble radius logarithmic in the tasks submitted |
//! | tradeoff | `sweep` CSV | Figs. 13-14 of 002: percent fairness and efficiency against the parameter |
//! | contours | `repro fds-contours` CSV | Figs. 15-16 of 002: efficiency against fairness over a (beta, lambda) grid, one colour per capacity |
//!
//! Text is set in DejaVu Sans, bundled (assets/, Bitstream Vera licence),
//! so PNGs need no system fonts.
use crate::{bad_input, Failure};
use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `leontief plot` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct PlotArgs {
    /// Result files: `simulate` JSON, or a `sweep` CSV for --kind tradeoff.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// What to draw.
    #[arg(long, value_enum)]
    pub kind: Kind,
    /// Output file, .svg or .png.
    #[arg(long, short)]
    pub output: PathBuf,
    /// Title (default: from the inputs).
    #[arg(long)]
    pub title: Option<String>,
}

/// Plot kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Utilisation per resource over time.
    Utilisation,
    /// Global dominant share per user over time.
    Shares,
    /// CDF of job completion times.
    JctCdf,
    /// Task completion ratio per user: run against run, or dedicated
    /// against shared.
    Completion,
    /// Percent fairness and efficiency against the swept parameter.
    Tradeoff,
    /// Efficiency against fairness, one point set per capacity.
    Contours,
}

enum Style {
    Line,
    /// Circles of these radii (pixels).
    Bubbles(Vec<i32>),
}

struct Series {
    label: String,
    points: Vec<(f64, f64)>,
    style: Style,
}

struct Figure {
    title: String,
    x_label: String,
    y_label: String,
    series: Vec<Series>,
    /// Draw y = x (completion plots).
    diagonal: bool,
    /// Start the y axis at zero.
    y_from_zero: bool,
}

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

fn figure(args: &PlotArgs) -> Result<Figure, Failure> {
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

/// A CSV written by leontief (no quoted commas): its header and rows.
struct Table {
    path: PathBuf,
    what: &'static str,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn read(p: &Path, what: &'static str) -> Result<Table, Failure> {
        let text =
            std::fs::read_to_string(p).map_err(|e| bad_input(format!("{}: {e}", p.display())))?;
        let mut lines = text.lines();
        let split = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
        let header = split(lines.next().unwrap_or(""));
        Ok(Table {
            path: p.to_path_buf(),
            what,
            header,
            rows: lines.map(split).collect(),
        })
    }

    fn col(&self, name: &str) -> Result<usize, Failure> {
        self.header.iter().position(|h| h == name).ok_or_else(|| {
            bad_input(format!(
                "{}: not a `{}` CSV (no column {name})",
                self.path.display(),
                self.what
            ))
        })
    }
}

fn bounds(f: &Figure) -> ((f64, f64), (f64, f64)) {
    let pts = f
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|p| p.0.is_finite() && p.1.is_finite());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for p in pts {
        x0 = x0.min(p.0);
        x1 = x1.max(p.0);
        y0 = y0.min(p.1);
        y1 = y1.max(p.1);
    }
    if !x0.is_finite() {
        return ((0.0, 1.0), (0.0, 1.0));
    }
    if f.diagonal {
        let lo = x0.min(y0).min(0.0);
        let hi = x1.max(y1).max(1.0) * 1.02;
        return ((lo, hi), (lo, hi));
    }
    let pad = |a: f64, b: f64| {
        let w = (b - a).abs().max(1e-9);
        (a - 0.02 * w, b + 0.05 * w)
    };
    let y = pad(if f.y_from_zero { y0.min(0.0) } else { y0 }, y1);
    (pad(x0, x1), y)
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, f: &Figure) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    root.fill(&WHITE).map_err(e)?;
    let ((x0, x1), (y0, y1)) = bounds(f);
    let mut chart = ChartBuilder::on(&root)
        .caption(&f.title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(50)
        .y_label_area_size(65)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(&f.x_label)
        .y_desc(&f.y_label)
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .draw()
        .map_err(e)?;
    if f.diagonal {
        chart
            .draw_series(LineSeries::new(vec![(x0, x0), (x1, x1)], BLACK.mix(0.4)))
            .map_err(e)?;
    }
    for (k, s) in f.series.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        match &s.style {
            Style::Line => {
                chart
                    .draw_series(LineSeries::new(
                        s.points.iter().copied(),
                        color.stroke_width(2),
                    ))
                    .map_err(e)?
                    .label(&s.label)
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                    });
            }
            Style::Bubbles(r) => {
                chart
                    .draw_series(
                        s.points
                            .iter()
                            .zip(r)
                            .map(|(p, r)| Circle::new(*p, *r, color.mix(0.5).filled())),
                    )
                    .map_err(e)?
                    .label(&s.label)
                    .legend(move |(x, y)| Circle::new((x + 10, y), 5, color.mix(0.5).filled()));
            }
        }
    }
    if f.series.len() <= 16 {
        chart
            .configure_series_labels()
            .label_font(("sans-serif", 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(e)?;
    }
    root.present().map_err(e)?;
    Ok(())
}

/// The command.
pub fn cmd(args: &PlotArgs) -> Result<(), Failure> {
    let ext = args
        .output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("svg" | "png")) {
        return Err(bad_input(format!(
            "-o {}: the output must end in .svg or .png",
            args.output.display()
        )));
    }
    if args.kind == Kind::Completion && args.results.len() > 2 {
        return Err(bad_input("completion: give one or two results"));
    }
    let f = figure(args)?;
    // A bad output path is bad input (exit 2), like `sweep --csv`: try it
    // before drawing, so the message names the path and the reason.
    std::fs::File::create(&args.output)
        .map_err(|e| bad_input(format!("-o {}: {e}", args.output.display())))?;
    plotters::style::register_font(
        "sans-serif",
        FontStyle::Normal,
        include_bytes!("../assets/DejaVuSans.ttf"),
    )
    .map_err(|_| Failure {
        code: 1,
        message: "the bundled font could not be loaded".into(),
    })?;
    let size = (960, 600);
    let out = if ext.as_deref() == Some("svg") {
        draw(SVGBackend::new(&args.output, size).into_drawing_area(), &f)
    } else {
        draw(
            BitMapBackend::new(&args.output, size).into_drawing_area(),
            &f,
        )
    };
    out.map_err(|m| Failure {
        code: 1,
        message: format!("drawing {}: {m}", args.output.display()),
    })?;
    eprintln!("wrote {}", args.output.display());
    Ok(())
}
