//! Drawing a figure with plotters.

use super::{Figure, Style};
use plotters::coord::Shift;
use plotters::prelude::*;

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

pub(crate) fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    f: &Figure,
) -> Result<(), String>
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
