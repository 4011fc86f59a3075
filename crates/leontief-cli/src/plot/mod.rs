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

mod draw;
mod figure;
mod table;

use draw::draw;
use figure::figure;

use crate::args::{Kind, PlotArgs};
use crate::failure::{bad_input, Failure};
use plotters::prelude::*;

pub(crate) enum Style {
    Line,
    /// Circles of these radii (pixels).
    Bubbles(Vec<i32>),
}

pub(crate) struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub style: Style,
}

pub(crate) struct Figure {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// Draw y = x (completion plots).
    pub diagonal: bool,
    /// Start the y axis at zero.
    pub y_from_zero: bool,
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
        include_bytes!("../../assets/DejaVuSans.ttf"),
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
