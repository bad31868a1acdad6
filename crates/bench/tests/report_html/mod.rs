//! Checks a harness run's `report.html`: self-contained (no file or network reference),
//! one inline figure per SVG plot of the run, and, where a Chromium is installed, rendered
//! headless with every plot laid out visibly and no script error. `.ci/run` installs
//! Debian's `chromium`, so CI always renders; without a browser the parse alone runs and
//! one line says so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Appended before `</body>` of a copy of the page: counts the plots the browser laid out
/// with a real size and records script errors, as attributes that `--dump-dom` prints.
const PROBE: &str = r#"<script>
(function () {
  var root = document.documentElement;
  window.addEventListener('error', function (e) {
    root.setAttribute('data-errors', (root.getAttribute('data-errors') || '') + '|' + e.message);
  });
  var error = console.error;
  console.error = function () {
    root.setAttribute('data-errors', (root.getAttribute('data-errors') || '') + '|console');
    error.apply(console, arguments);
  };
  var figures = document.querySelectorAll('figure.plot');
  var visible = 0;
  for (var i = 0; i < figures.length; i++) {
    var svg = figures[i].querySelector('svg');
    if (!svg) continue;
    var r = svg.getBoundingClientRect();
    var style = getComputedStyle(svg);
    var marks = svg.querySelectorAll('text, path, polyline, circle, rect, line').length;
    if (r.width > 100 && r.height > 100 && style.visibility !== 'hidden' &&
        style.display !== 'none' && marks > 20) visible++;
  }
  root.setAttribute('data-plots-visible', visible + '/' + figures.length);
})();
</script>
"#;

/// Checks `dir/report.html` against the SVG plots in `dir`.
pub fn check(dir: &Path) {
    let html = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    let mut plots: Vec<String> = std::fs::read_dir(dir)
        .expect("report dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    plots.sort();
    assert!(!plots.is_empty(), "no plot in {}", dir.display());

    // Parsed: a whole page, every plot inline, nothing fetched from elsewhere.
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(html.contains("Machine: "), "the machine line is missing");
    assert!(html.contains("<table>"), "no table rendered");
    for p in &plots {
        let id = p.trim_end_matches(".svg");
        let at = html
            .find(&format!("<figure class=\"plot\" id=\"{id}\">"))
            .unwrap_or_else(|| panic!("report.html has no figure for {p}"));
        let figure = &html[at..at + html[at..].find("</figure>").expect("figure closed")];
        assert!(
            figure.contains("<svg") && figure.contains("</svg>"),
            "{p} not inline"
        );
    }
    assert_eq!(html.matches("<figure class=\"plot\"").count(), plots.len());
    for reference in ["src=", "<link", "href=\"http", "url(http", "@import"] {
        assert!(
            !html.contains(reference),
            "report.html refers outside itself: {reference}"
        );
    }

    // Rendered.
    let Some(browser) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI=true but no chromium on PATH (.ci/run installs Debian's chromium)"
        );
        println!("report.html: no chromium on PATH, checked by parsing only");
        return;
    };
    let work = std::env::temp_dir().join(format!("bloomforge-html-check-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let page = work.join("report.html");
    let body_end = html.rfind("</body>").expect("</body>");
    std::fs::write(
        &page,
        format!("{}{PROBE}{}", &html[..body_end], &html[body_end..]),
    )
    .unwrap();
    let mut child = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--virtual-time-budget=5000",
            "--window-size=1280,900",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .arg(format!("file://{}", page.display()))
        // Files, not pipes: the DOM is larger than a pipe's buffer, and nothing reads
        // the pipes while the loop below waits.
        .stdout(std::fs::File::create(work.join("dom.html")).unwrap())
        .stderr(std::fs::File::create(work.join("log.txt")).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", browser.display()));
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium did not finish rendering report.html in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let dom = std::fs::read_to_string(work.join("dom.html")).unwrap();
    let log = std::fs::read_to_string(work.join("log.txt")).unwrap_or_default();
    let want = format!("data-plots-visible=\"{n}/{n}\"", n = plots.len());
    assert!(
        dom.contains(&want),
        "not every plot visible (want {want}); DOM head: {:.300}\n{log}",
        dom
    );
    assert!(
        !dom.contains("data-errors=\""),
        "script errors on the page: {:.300}",
        dom
    );
    for line in log.lines().filter(|l| l.contains("CONSOLE")) {
        assert!(
            !line.contains("Uncaught"),
            "script error in the console: {line}"
        );
    }
    println!("report.html rendered in {}: {want}", browser.display());
    let _ = std::fs::remove_dir_all(&work);
}

/// The first Chromium on `PATH`.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}
