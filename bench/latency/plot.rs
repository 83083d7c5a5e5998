//! PNG plots of the results (plotters): latency CDFs on a log scale.

use plotters::prelude::*;

/// Plots cumulative distributions `(name, [(value, fraction)])` of one quantity into
/// `target/bench-results/<file>.png`, as the tail-at-a-glance form: 1 − F on a log scale.
pub fn cdf(file: &str, title: &str, unit: &str, series: &[(String, Vec<(f64, f64)>)]) {
    let path = super::results_dir().join(format!("{file}.png"));
    if let Err(e) = draw(&path, title, unit, series) {
        eprintln!("cannot plot {}: {e}", path.display());
    } else {
        eprintln!("wrote {}", path.display());
    }
}

fn draw(
    path: &std::path::Path,
    title: &str,
    unit: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), Box<dyn std::error::Error>> {
    let max_x = series
        .iter()
        .flat_map(|(_, s)| s.iter().map(|p| p.0))
        .fold(1.0f64, f64::max);
    let root = BitMapBackend::new(path, (1000, 600)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d(
            (0.1f64..max_x * 1.2).log_scale(),
            (1e-6f64..1.0).log_scale(),
        )?;
    chart
        .configure_mesh()
        .x_desc(format!("latency ({unit})"))
        .y_desc("fraction above (1 - CDF)")
        .draw()?;
    for (i, (name, points)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = points
            .iter()
            .map(|(x, f)| (x.max(0.1), (1.0 - f).max(1e-6)))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
