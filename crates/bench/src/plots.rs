//! SVG plots (plotters, SVG backend, no fonts needed): FP vs bits/key with theory curves,
//! query ns/key vs filter size with the cache sizes marked, bulk-load thread scaling, and
//! histograms against a theoretical distribution (counting-filter counters, d-left
//! bucket loads).

use crate::measure::SizePoint;
use crate::subjects::Origin;
use crate::theory::math;
use crate::units::human_bytes;
use crate::{BenchError, Report};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Pixels kept right of every plot for its legend: legends sit beside the data, never on it.
const LEGEND_WIDTH: u32 = 300;

/// How a legend entry is marked.
enum Mark {
    /// A short line of the series' style.
    Line(ShapeStyle),
    /// A marker of [`marker_px`]'s shape and colour.
    Point(usize, RGBColor),
    /// A filled bar.
    Bar(RGBColor),
}

/// Draws the legend on the canvas, right of the chart's plotting area (in the margin that
/// [`LEGEND_WIDTH`] keeps free), one entry a row. Drawn on the whole canvas rather than
/// through plotters' series labels, which clip their box and marks to the plotting area.
fn draw_legend<DB: DrawingBackend, CT: plotters::coord::CoordTranslate>(
    root: &DrawingArea<DB, Shift>,
    chart: &ChartContext<'_, DB, CT>,
    entries: &[(String, Mark)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let x = xs.end + 16;
    for (i, (label, mark)) in entries.iter().enumerate() {
        let y = ys.start + 8 + 18 * i as i32;
        match mark {
            Mark::Line(style) => root.draw(&PathElement::new(vec![(x, y), (x + 20, y)], *style))?,
            Mark::Point(shape, colour) => root.draw(&marker_px(*shape, (x + 10, y), *colour))?,
            Mark::Bar(colour) => root.draw(&Rectangle::new(
                [(x + 2, y - 4), (x + 18, y + 4)],
                colour.filled(),
            ))?,
        }
        root.draw(&Text::new(
            label.clone(),
            (x + 28, y - 7),
            ("sans-serif", 13).into_font(),
        ))?;
    }
    Ok(())
}

fn plot_err(path: &Path, e: impl std::fmt::Display) -> BenchError {
    BenchError::Plot {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Colour of a layout (one per layout on every plot).
pub fn layout_colour(layout: &str) -> RGBColor {
    match layout {
        "standard" => RGBColor(31, 119, 180),
        "blocked-512" => RGBColor(214, 39, 40),
        "split-block-256" => RGBColor(44, 160, 44),
        "binary-fuse-8" => RGBColor(148, 103, 189),
        "binary-fuse-16" => RGBColor(98, 53, 139),
        "xor-8" => RGBColor(227, 119, 194),
        "xor-16" => RGBColor(177, 69, 144),
        "bloomier" => RGBColor(23, 190, 207),
        "counting" => RGBColor(255, 127, 14),
        "d-left" => RGBColor(140, 86, 75),
        _ => RGBColor(40, 40, 40),
    }
}

fn palette(i: usize) -> RGBColor {
    const P: [RGBColor; 10] = [
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(23, 190, 207),
        RGBColor(188, 189, 34),
        RGBColor(127, 127, 127),
    ];
    P[i % P.len()]
}

/// A marker of shape `shape` (0 filled circle, 1 triangle, 2 cross, 3 hollow circle).
fn marker<DB: DrawingBackend>(
    shape: usize,
    at: (f64, f64),
    colour: RGBColor,
) -> DynElement<'static, DB, (f64, f64)> {
    let style = ShapeStyle::from(colour).filled();
    match shape % 4 {
        0 => Circle::new(at, 4, style).into_dyn(),
        1 => TriangleMarker::new(at, 5, style).into_dyn(),
        2 => Cross::new(at, 4, ShapeStyle::from(colour).stroke_width(2)).into_dyn(),
        _ => Circle::new(at, 4, ShapeStyle::from(colour).stroke_width(2)).into_dyn(),
    }
}

/// FP vs bits/key: theory curves per layout, measured points with 95 % error bars.
///
/// # Errors
/// [`BenchError::Plot`] if drawing fails.
pub fn fp_vs_bits(report: &Report, path: &Path) -> Result<(), BenchError> {
    let pts = &report.fp_sweep;
    // The x range follows the budgets asked for (parquet's power-of-two sizes can land
    // far beyond them; such points are left out of the plot, not of the CSV).
    let x_max = pts
        .iter()
        .map(|p| p.target_bits_per_key)
        .fold(12.0f64, f64::max)
        .ceil()
        + 2.0;
    let pts: Vec<&crate::measure::FpPoint> =
        pts.iter().filter(|p| p.bits_per_key <= x_max).collect();
    let x_min = pts
        .iter()
        .map(|p| p.bits_per_key)
        .fold(x_max, f64::min)
        .floor()
        .clamp(1.0, 4.0)
        - 1.0;
    let y_min = pts
        .iter()
        .map(|p| {
            p.fp.measured
                .min(p.fp.theory)
                .min(p.fp.ci95.0.max(p.fp.measured / 3.0))
        })
        .filter(|v| *v > 0.0)
        .fold(1e-3f64, f64::min)
        / 3.0;
    let root: Area = SVGBackend::new(path, (960 + LEGEND_WIDTH, 640)).into_drawing_area();
    let draw = || -> Result<(), Box<dyn std::error::Error + '_>> {
        root.fill(&WHITE)?;
        let mut legend: Vec<(String, Mark)> = Vec::new();
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "False-positive rate vs bits per key (lines: theory; dots: measured, 95 % CI)",
                ("sans-serif", 18),
            )
            .margin(12)
            .margin_right(12 + LEGEND_WIDTH)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x_min.max(0.5)..x_max, (y_min..1.0f64).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("bits per key")
            .y_desc("false-positive rate")
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .draw()?;
        let grid: Vec<f64> = (0..=((x_max - x_min) * 8.0) as usize)
            .map(|i| x_min.max(1.0) + i as f64 / 8.0)
            .collect();
        type Curve = Box<dyn Fn(f64) -> f64>;
        let curves: [(&str, Curve); 3] = [
            ("standard", Box::new(|c| math::std_best_k(c, 64).1)),
            (
                "blocked-512",
                Box::new(|c| math::best_k(|k| math::blocked512_fp(c, k), 24).1),
            ),
            (
                "split-block-256",
                Box::new(|c| math::split_block_fp(c, 8, 32)),
            ),
        ];
        for (layout, f) in curves.iter() {
            let colour = layout_colour(layout);
            chart.draw_series(LineSeries::new(
                grid.iter()
                    .map(|&c| (c, f(c)))
                    .take_while(|&(_, v)| v >= y_min),
                colour.stroke_width(2),
            ))?;
            legend.push((
                format!("{layout} theory (best k)"),
                Mark::Line(colour.stroke_width(2)),
            ));
        }
        // Counting: 4 bits per counter, 128-counter lines, best k. d-left: the
        // achievable (bits/key, FP) pairs of the harness's shape at load 6, one per
        // remainder width r: 8 (r + 2) / 6 bits/key, FP 1 - exp(-24 / 2^r).
        let counting = layout_colour("counting");
        chart.draw_series(LineSeries::new(
            grid.iter()
                .map(|&c| {
                    let per_key = c / 4.0;
                    let fp = math::best_k(
                        |k| bloomforge_counting::math::blocked_fp(per_key, k),
                        bloomforge_counting::math::SIZING_MAX_K,
                    )
                    .1;
                    (c, fp)
                })
                .take_while(|&(_, v)| v >= y_min),
            counting.stroke_width(2),
        ))?;
        legend.push((
            "counting (4-bit, 128/line) theory".into(),
            Mark::Line(counting.stroke_width(2)),
        ));
        let dleft = layout_colour("d-left");
        let (d, w, cbits, load) = crate::subjects_core::DLEFT_SHAPE;
        chart.draw_series(LineSeries::new(
            (1..=30u32)
                .map(|r| {
                    let bits = f64::from(w * (r + cbits)) / load;
                    let fp = -(-f64::from(d) * load / f64::from(r).exp2()).exp_m1();
                    (bits, fp)
                })
                .filter(|&(b, v)| b <= x_max && v >= y_min),
            dleft.stroke_width(2),
        ))?;
        legend.push((
            "d-left (d=4, w=8, load 6) theory".into(),
            Mark::Line(dleft.stroke_width(2)),
        ));
        let fuse = layout_colour("binary-fuse-8");
        chart.draw_series(DashedLineSeries::new(
            [(x_min.max(1.0), 1.0 / 256.0), (x_max, 1.0 / 256.0)],
            6,
            4,
            fuse.stroke_width(1),
        ))?;
        legend.push((
            "binary-fuse-8 theory (2^-8)".into(),
            Mark::Line(fuse.into()),
        ));
        let mut filters: Vec<(&str, &str, Origin)> = Vec::new();
        for p in &pts {
            if !filters.iter().any(|f| f.0 == p.filter) {
                filters.push((&p.filter, p.layout, p.origin));
            }
        }
        for (i, (name, layout, origin)) in filters.iter().enumerate() {
            let colour = layout_colour(layout);
            let shape = if *origin == Origin::Ours {
                0
            } else {
                1 + i % 3
            };
            let mine: Vec<_> = pts.iter().filter(|p| p.filter == *name).collect();
            chart.draw_series(mine.iter().map(|p| {
                PathElement::new(
                    vec![
                        (p.bits_per_key, p.fp.ci95.0.max(y_min)),
                        (p.bits_per_key, p.fp.ci95.1.max(y_min)),
                    ],
                    colour.stroke_width(1),
                )
            }))?;
            chart.draw_series(
                mine.iter()
                    .map(|p| marker(shape, (p.bits_per_key, p.fp.measured.max(y_min)), colour)),
            )?;
            legend.push((format!("{name} (measured)"), Mark::Point(shape, colour)));
        }
        draw_legend(&root, &chart, &legend)?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| plot_err(path, e))
}

/// Labels only whole numbers (`3`, not `3.0`).
fn integer_label(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-6 && *v >= 0.0 {
        format!("{}", v.round() as i64)
    } else {
        String::new()
    }
}

/// A legend marker in backend pixels.
fn marker_px<DB: DrawingBackend>(
    shape: usize,
    at: (i32, i32),
    colour: RGBColor,
) -> DynElement<'static, DB, (i32, i32)> {
    let style = ShapeStyle::from(colour).filled();
    match shape % 4 {
        0 => Circle::new(at, 4, style).into_dyn(),
        1 => TriangleMarker::new(at, 5, style).into_dyn(),
        2 => Cross::new(at, 4, ShapeStyle::from(colour).stroke_width(2)).into_dyn(),
        _ => Circle::new(at, 4, ShapeStyle::from(colour).stroke_width(2)).into_dyn(),
    }
}

/// The values 1, 2 and 5 times a power of ten in `[lo, hi]`, ascending, each once.
pub fn nice_log_points(lo: f64, hi: f64) -> Vec<f64> {
    let mut points = Vec::new();
    if !(lo > 0.0 && hi > lo && hi.is_finite()) {
        return points;
    }
    let mut decade = 10f64.powi(lo.log10().floor() as i32);
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let v = m * decade;
            if v >= lo && v <= hi {
                points.push(v);
            }
        }
        decade *= 10.0;
    }
    points
}

/// A tick label: as few digits as the value needs (`0.5`, `2`, `10`, `200`).
pub fn format_tick(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// Query ns/key vs filter size, one line per filter (negative single-key queries; batch
/// queries dashed), the random-read floor in black, cache sizes as vertical lines.
///
/// # Errors
/// [`BenchError::Plot`] if drawing fails.
pub fn ns_vs_size(report: &Report, path: &Path) -> Result<(), BenchError> {
    let pts: &[SizePoint] = &report.size_sweep;
    // x = log2(bytes) on a linear axis, labelled in KiB / MiB / GiB.
    let lg = |b: u64| (b.max(1) as f64).log2();
    let x_min = pts
        .iter()
        .map(|p| lg(p.bytes))
        .fold(f64::INFINITY, f64::min);
    let x_max = pts.iter().map(|p| lg(p.bytes)).fold(0.0f64, f64::max);
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
        (x_min - 0.5, x_max + 0.5)
    } else {
        (14.5, 21.5)
    };
    let values = pts
        .iter()
        .flat_map(|p| [Some(p.neg_ns), Some(p.pos_ns), p.neg_batch_ns])
        .flatten()
        .filter(|v| *v > 0.0);
    let y_max = values.clone().fold(1.0f64, f64::max) * 1.5;
    let y_min = values.fold(y_max, f64::min).min(1.0) / 1.5;
    let root: Area = SVGBackend::new(path, (960 + LEGEND_WIDTH, 640)).into_drawing_area();
    let draw = || -> Result<(), Box<dyn std::error::Error + '_>> {
        root.fill(&WHITE)?;
        let mut legend: Vec<(String, Mark)> = Vec::new();
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "Query ns/key vs filter size at 10 bits/key (solid: single key, dashed: batch)",
                ("sans-serif", 18),
            )
            .margin(12)
            .margin_right(12 + LEGEND_WIDTH)
            .x_label_area_size(40)
            .y_label_area_size(60)
            // Our own key points (1, 2, 5 x 10^k): plotters' log-scale points repeat a
            // decade's end as the next one's start, which printed "10.0" twice and drew
            // a doubled grid line.
            .build_cartesian_2d(
                x_min..x_max,
                (y_min..y_max)
                    .log_scale()
                    .with_key_points(nice_log_points(y_min, y_max)),
            )?;
        chart
            .configure_mesh()
            .x_desc("filter size")
            .y_desc("ns per key (negative queries)")
            .y_label_formatter(&|v| format_tick(*v))
            .x_labels(((x_max - x_min) as usize + 1).min(24))
            .x_label_formatter(&|v| {
                if (v - v.round()).abs() < 1e-6 {
                    human_bytes(2f64.powf(v.round()) as u64)
                } else {
                    String::new()
                }
            })
            .draw()?;
        for (name, bytes) in &report.meta.caches {
            let x = lg(*bytes);
            if x > x_min && x < x_max {
                chart.draw_series(LineSeries::new([(x, y_min), (x, y_max)], BLACK.mix(0.25)))?;
                chart.draw_series(std::iter::once(Text::new(
                    format!("{name} {}", human_bytes(*bytes)),
                    (x + 0.05, y_min * 1.15),
                    ("sans-serif", 13),
                )))?;
            }
        }
        let mut filters: Vec<&str> = Vec::new();
        for p in pts {
            if !filters.contains(&p.filter.as_str()) {
                filters.push(&p.filter);
            }
        }
        for (i, name) in filters.iter().enumerate() {
            let colour = if *name == "floor" { BLACK } else { palette(i) };
            let mine: Vec<&SizePoint> = pts.iter().filter(|p| p.filter == *name).collect();
            let label = if *name == "floor" {
                "floor: random 64 B reads".to_string()
            } else {
                (*name).to_string()
            };
            chart.draw_series(LineSeries::new(
                mine.iter().map(|p| (lg(p.bytes), p.neg_ns)),
                colour.stroke_width(2),
            ))?;
            legend.push((label, Mark::Line(colour.stroke_width(2))));
            chart.draw_series(
                mine.iter()
                    .map(|p| Circle::new((lg(p.bytes), p.neg_ns), 3, colour.filled())),
            )?;
            let batch: Vec<(f64, f64)> = mine
                .iter()
                .filter_map(|p| p.neg_batch_ns.map(|v| (lg(p.bytes), v)))
                .collect();
            if !batch.is_empty() {
                chart.draw_series(DashedLineSeries::new(batch, 6, 4, colour.stroke_width(2)))?;
            }
        }
        draw_legend(&root, &chart, &legend)?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| plot_err(path, e))
}

/// Bulk-load speedup vs threads for every filter with a concurrent insert.
///
/// # Errors
/// [`BenchError::Plot`] if drawing fails.
pub fn thread_scaling(report: &Report, path: &Path) -> Result<(), BenchError> {
    let n_max = report
        .rows
        .iter()
        .filter(|r| !r.bulk.is_empty() && r.workload == "random-u64")
        .map(|r| r.n)
        .max()
        .unwrap_or(0);
    let rows: Vec<_> = report
        .rows
        .iter()
        .filter(|r| {
            !r.bulk.is_empty()
                && r.workload == "random-u64"
                && r.n == n_max
                && r.target.contains("bits/key")
        })
        .collect();
    let t_max = report
        .config
        .plan
        .thread_counts
        .last()
        .copied()
        .unwrap_or(1)
        .max(2) as f64;
    let root: Area = SVGBackend::new(path, (800 + LEGEND_WIDTH, 560)).into_drawing_area();
    let draw = || -> Result<(), Box<dyn std::error::Error + '_>> {
        root.fill(&WHITE)?;
        let mut legend: Vec<(String, Mark)> = Vec::new();
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("Bulk-load speedup vs threads (n = {n_max}, pinned rayon pools)"),
                ("sans-serif", 18),
            )
            .margin(12)
            .margin_right(12 + LEGEND_WIDTH)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(0.5..t_max + 0.5, 0.0..t_max + 0.5)?;
        chart
            .configure_mesh()
            .x_desc("threads")
            .x_labels(t_max as usize + 1)
            .x_label_formatter(&integer_label)
            .y_desc("speedup over 1 thread")
            .draw()?;
        chart.draw_series(LineSeries::new(
            [(1.0, 1.0), (t_max, t_max)],
            BLACK.mix(0.3),
        ))?;
        legend.push(("ideal".into(), Mark::Line(BLACK.mix(0.3).into())));
        for (i, r) in rows.iter().enumerate() {
            let colour = palette(i);
            let base = r.bulk[0].timing.ns_per_key;
            let series: Vec<(f64, f64)> = r
                .bulk
                .iter()
                .map(|b| (b.threads as f64, base / b.timing.ns_per_key))
                .collect();
            chart.draw_series(LineSeries::new(series.clone(), colour.stroke_width(2)))?;
            legend.push((
                format!("{} ({:.1} ns/key at 1 thread)", r.filter, base),
                Mark::Line(colour.stroke_width(2)),
            ));
            chart.draw_series(series.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
        }
        draw_legend(&root, &chart, &legend)?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| plot_err(path, e))
}

/// A histogram of `observed` fractions (bars) against theoretical distributions (lines
/// with dots), e.g. counter values vs Poisson or bucket loads vs the fluid limit.
///
/// # Errors
/// [`BenchError::Plot`] if drawing fails.
pub fn histogram_vs_theory(
    path: &Path,
    title: &str,
    x_desc: &str,
    observed: &[f64],
    theory: &[(&str, &[f64])],
) -> Result<(), BenchError> {
    let len = theory
        .iter()
        .map(|(_, t)| t.len())
        .chain(std::iter::once(observed.len()))
        .max()
        .unwrap_or(1);
    let floor = 1e-9;
    let y_max = observed
        .iter()
        .chain(theory.iter().flat_map(|(_, t)| t.iter()))
        .fold(0.1f64, |a, &b| a.max(b))
        * 2.0;
    let root: Area = SVGBackend::new(path, (800 + LEGEND_WIDTH, 560)).into_drawing_area();
    let draw = || -> Result<(), Box<dyn std::error::Error + '_>> {
        root.fill(&WHITE)?;
        let mut legend: Vec<(String, Mark)> = Vec::new();
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .margin_right(12 + LEGEND_WIDTH)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5..len as f64 - 0.5, (floor..y_max).log_scale())?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .x_labels(len + 1)
            .x_label_formatter(&integer_label)
            .y_desc("fraction")
            .y_label_formatter(&|v| format!("{v:.0e}"))
            .draw()?;
        let bar = RGBColor(160, 160, 160);
        chart.draw_series(observed.iter().enumerate().filter(|(_, &v)| v > 0.0).map(
            |(i, &v)| {
                let x = i as f64;
                Rectangle::new([(x - 0.35, floor), (x + 0.35, v)], bar.filled())
            },
        ))?;
        legend.push(("measured".into(), Mark::Bar(bar)));
        for (j, (name, t)) in theory.iter().enumerate() {
            let colour = palette(j);
            let pts: Vec<(f64, f64)> = t
                .iter()
                .enumerate()
                .filter(|(_, &v)| v > floor)
                .map(|(i, &v)| (i as f64, v))
                .collect();
            // Later curves thinner, so coinciding theories stay visible.
            let width = 4u32.saturating_sub(2 * j as u32).max(1);
            chart.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(width)))?;
            legend.push((name.to_string(), Mark::Line(colour.stroke_width(width))));
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
        }
        draw_legend(&root, &chart, &legend)?;
        root.present()?;
        Ok(())
    };
    draw().map_err(|e| plot_err(path, e))
}

/// Draws every plot the report has data for; returns `(file, title)` pairs.
///
/// # Errors
/// [`BenchError::Plot`] if drawing fails.
pub fn write_all(report: &Report, dir: &Path) -> Result<Vec<(String, String)>, BenchError> {
    let mut out = Vec::new();
    if !report.fp_sweep.is_empty() {
        fp_vs_bits(report, &dir.join("fp_vs_bits.svg"))?;
        out.push((
            "fp_vs_bits.svg".into(),
            "False-positive rate vs bits per key".into(),
        ));
    }
    if !report.size_sweep.is_empty() {
        ns_vs_size(report, &dir.join("ns_vs_size.svg"))?;
        out.push((
            "ns_vs_size.svg".into(),
            "Query ns/key vs filter size".into(),
        ));
    }
    if report.rows.iter().any(|r| !r.bulk.is_empty()) {
        thread_scaling(report, &dir.join("thread_scaling.svg"))?;
        out.push((
            "thread_scaling.svg".into(),
            "Bulk-load thread scaling".into(),
        ));
    }
    if let Some(c) = &report.counting {
        let total = c.histogram.iter().sum::<u64>().max(1) as f64;
        let observed: Vec<f64> = c.histogram.iter().map(|&h| h as f64 / total).collect();
        histogram_vs_theory(
            &dir.join("counting_counters.svg"),
            &format!(
                "Counting filter: counter values, n = {}, k = {} (last bin: saturated)",
                c.n, c.k
            ),
            "counter value",
            &observed,
            &[
                ("Binomial(n, q)", &c.binomial),
                ("Poisson(n q)", &c.poisson),
            ],
        )?;
        out.push((
            "counting_counters.svg".into(),
            "Counting filter: counter distribution vs theory".into(),
        ));
    }
    if let Some(d) = &report.dleft {
        let total = d.histogram.iter().sum::<u64>().max(1) as f64;
        let observed: Vec<f64> = d.histogram.iter().map(|&h| h as f64 / total).collect();
        histogram_vs_theory(
            &dir.join("dleft_bucket_load.svg"),
            &format!(
                "d-left: bucket loads, d = {}, w = {}, {:.3} cells per bucket",
                d.subtables, d.cells_per_bucket, d.cell_load
            ),
            "occupied cells in bucket",
            &observed,
            &[("fluid limit", &d.fluid)],
        )?;
        out.push((
            "dleft_bucket_load.svg".into(),
            "d-left: bucket-load histogram vs fluid limit".into(),
        ));
    }
    Ok(out)
}
