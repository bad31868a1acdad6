//! `report.html`: the report as one self-contained page (the tables of `report.md`
//! rendered to HTML, every plot's SVG inline, the machine line at the top), which opens in
//! a browser from disk with no server and no other file.

use crate::BenchError;
use std::fmt::Write as _;
use std::path::Path;

/// The page's style: readable tables that scroll sideways on narrow screens, plots scaled
/// to the page width.
const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1200px;padding:0 1rem;color:#222;line-height:1.45}\
table{border-collapse:collapse;margin:1rem 0;font-size:.85rem;display:block;overflow-x:auto}\
th,td{border:1px solid #ccc;padding:.2rem .45rem}th{background:#f3f3f3}td{text-align:right}\
td:first-child{text-align:left;white-space:nowrap}\
code{background:#f5f5f5;padding:0 .2rem}\
figure.plot{margin:1.5rem 0}figure.plot svg{max-width:100%;height:auto}\
figcaption{font-weight:600;margin-bottom:.4rem}";

/// Renders the page from the report's markdown (`report.md`'s text) and the plots already
/// written into `dir` (`(file, title)` pairs, as [`crate::plots::write_all`] returns them).
///
/// # Errors
/// [`BenchError::Io`] if a plot file cannot be read.
pub fn page(markdown: &str, plots: &[(String, String)], dir: &Path) -> Result<String, BenchError> {
    let mut body = String::new();
    let parser = pulldown_cmark::Parser::new_ext(markdown, pulldown_cmark::Options::ENABLE_TABLES);
    pulldown_cmark::html::push_html(&mut body, parser);
    let mut html = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>bloomforge-bench report</title>\n<style>",
    );
    html.push_str(STYLE);
    html.push_str("</style>\n</head>\n<body>\n");
    html.push_str(&body);
    if !plots.is_empty() {
        html.push_str("<h2>Plots</h2>\n");
    }
    for (file, title) in plots {
        let path = dir.join(file);
        let svg = std::fs::read_to_string(&path).map_err(|e| BenchError::Io {
            path: path.display().to_string(),
            source: e,
        })?;
        let _ = write!(
            html,
            "<figure class=\"plot\" id=\"{}\">\n<figcaption>{}</figcaption>\n{}\n</figure>\n",
            escape(file.trim_end_matches(".svg")),
            escape(title),
            inline_svg(&svg)
        );
    }
    html.push_str("</body>\n</html>\n");
    Ok(html)
}

/// An SVG file's text without its XML prolog, ready to sit inside HTML.
fn inline_svg(svg: &str) -> &str {
    let svg = svg.trim_start();
    match (svg.starts_with("<?xml"), svg.find("?>")) {
        (true, Some(end)) => svg[end + 2..].trim_start(),
        _ => svg,
    }
}

/// Text for an HTML element or attribute.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_render_and_plots_inline() {
        let dir = tempdir();
        std::fs::write(
            dir.join("a.svg"),
            "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"></svg>",
        )
        .unwrap();
        let md = "## T\n\n| a | b |\n|---|---:|\n| x & y | 1 |\n";
        let html = page(md, &[("a.svg".into(), "A <plot>".into())], &dir).unwrap();
        assert!(html.contains("<table>"), "{html}");
        assert!(html.contains("<td>x &amp; y</td>"), "{html}");
        assert!(
            html.contains("<figcaption>A &lt;plot&gt;</figcaption>"),
            "{html}"
        );
        assert!(html.contains(
            "<figure class=\"plot\" id=\"a\">\n<figcaption>A &lt;plot&gt;</figcaption>\n<svg "
        ));
        assert!(!html.contains("<?xml"));
        let missing = page(md, &[("b.svg".into(), "B".into())], &dir);
        assert!(matches!(missing, Err(BenchError::Io { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempdir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("bloomforge-html-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
