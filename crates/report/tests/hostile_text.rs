//! Every writer of the report against the hostile corpus (`wire::text::HOSTILE_CORPUS`
//! and `hostile_long`): a report built from the fixture whose first system's label, one
//! host's metadata value and one failure reason are each corpus entry in turn, and each
//! format checked for what would let that text act: LaTeX (no line end inside a `%`
//! comment, no unescaped command), Markdown (a row stays one line with its cells, no
//! raw `<`), CSV (parses back with the same number of fields, formulas neutralised),
//! SVG (parses as XML, no `inf`/`NaN`), HTML (no markup from the data), terminal (no
//! control characters).

use dualperf_report::{build, fixture, latex, Dataset, Report, ReportOptions, RunOutcome};
use wire::text::{hostile_long, terminal_safe, HOSTILE_CORPUS};

fn corpus() -> Vec<String> {
    HOSTILE_CORPUS
        .iter()
        .map(|s| s.to_string())
        .chain([hostile_long(5_000)])
        .collect()
}

/// The fixture with `text` as the first system's label, its client's OS name and the
/// reason of its failed run.
fn hostile_dataset(text: &str) -> Dataset {
    let mut data = fixture::systems(&[text, "Plain"]);
    let c = &mut data.campaigns[0];
    c.hosts
        .entry("client".to_string())
        .or_default()
        .insert("os.pretty_name".to_string(), text.to_string());
    for r in &mut c.runs {
        if let RunOutcome::Failed(reason) = &mut r.outcome {
            *reason = text.to_string();
        }
    }
    data
}

fn report(text: &str) -> Report {
    build(&hostile_dataset(text), &ReportOptions::default())
}

fn has_control(s: &str, allowed: &[char]) -> Option<char> {
    s.chars().find(|c| c.is_control() && !allowed.contains(c))
}

#[test]
fn latex_comments_hold_no_line_end_and_commands_are_escaped() {
    for text in corpus() {
        let r = report(&text);
        let context = r.analysis.systems.join(" vs ");
        let mut files: Vec<String> = r.tables.iter().map(|t| latex::table(t, &context)).collect();
        files.push(r.latex());
        files.push(latex::document(&r.tables, &context));
        for tex in &files {
            // pdflatex ends a line (and so a comment) at \r as at \n: no \r at all, and no
            // other control character.
            assert_eq!(has_control(tex, &['\n']), None, "{text:?}:\n{tex}");
            // Outside the comments, no command of the label's own.
            let body: String = tex
                .lines()
                .filter(|l| !l.starts_with('%'))
                .collect::<Vec<_>>()
                .join("\n");
            for bad in [
                "\\input{/etc",
                "\\immediate",
                "\\write18",
                "\\end{document}",
            ] {
                let own =
                    usize::from(bad == "\\end{document}" && body.contains("\\begin{document}"));
                assert_eq!(
                    body.matches(bad).count(),
                    own,
                    "{text:?} reached LaTeX as {bad}:\n{tex}"
                );
            }
        }
        // The label is in the captions, every character of it escaped.
        if text.chars().count() < 100 && text.contains('\\') {
            let first = &files[0];
            assert!(first.contains("\\textbackslash{}"), "{text:?}");
        }
    }
}

/// A `<` that could open HTML or an autolink in Markdown: followed by a letter, `/`,
/// `!` or `?` (CommonMark); "< 0.001" opens nothing.
fn opens_markup(md: &str) -> bool {
    md.split('<')
        .skip(1)
        .any(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic() || "/!?".contains(c)))
}

#[test]
fn markdown_rows_stay_one_line_with_their_cells_and_no_raw_markup() {
    /// Cells of a Markdown table row: `|` not escaped by a backslash.
    fn cells(line: &str) -> usize {
        let b = line.as_bytes();
        (0..b.len())
            .filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\'))
            .count()
            .saturating_sub(1)
    }
    for text in corpus() {
        let r = report(&text);
        for t in &r.tables {
            let md = t.to_markdown();
            let lines: Vec<&str> = md.lines().collect();
            // Title, blank, header, rule, one line per row, then the note.
            let want = 4 + t.rows.len() + if t.note.is_some() { 2 } else { 0 };
            assert_eq!(lines.len(), want, "{text:?} in {}:\n{md}", t.id);
            assert_eq!(cells(lines[2]), t.columns.len(), "{text:?}: {}", lines[2]);
            for (line, row) in lines[4..].iter().zip(&t.rows) {
                assert_eq!(cells(line), row.len(), "{text:?}: {line}");
            }
            assert!(!opens_markup(&md), "{text:?} in {}:\n{md}", t.id);
        }
        for md in [r.markdown(), r.findings_markdown()] {
            assert!(!opens_markup(&md), "{text:?}:\n{md}");
            assert_eq!(has_control(&md, &['\n']), None, "{text:?}");
        }
    }
}

#[test]
fn csv_parses_back_with_its_fields_and_formulas_neutralised() {
    for text in corpus() {
        let r = report(&text);
        for t in &r.tables {
            let csv_text = t.to_csv();
            let mut rd = csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(csv_text.as_bytes());
            let records: Vec<csv::StringRecord> = rd
                .records()
                .collect::<Result<_, _>>()
                .unwrap_or_else(|e| panic!("{text:?} in {}: {e}\n{csv_text}", t.id));
            assert_eq!(records.len(), t.rows.len() + 1, "{text:?} in {}", t.id);
            for (rec, row) in records.iter().skip(1).zip(&t.rows) {
                assert_eq!(rec.len(), t.columns.len(), "{text:?}: {rec:?}");
                for (field, cell) in rec.iter().zip(row) {
                    if let dualperf_report::Cell::Text(_) = cell {
                        let number = field.parse::<f64>().is_ok_and(f64::is_finite);
                        assert!(
                            number
                                || !field.starts_with(|c: char| {
                                    "=+-@＝＋－＠﹦﹢﹣﹫".contains(c) || c.is_whitespace()
                                }),
                            "{text:?}: live formula {field:?}"
                        );
                    }
                    assert_eq!(has_control(field, &['\n', '\t']), None, "{field:?}");
                }
            }
        }
    }
}

#[test]
fn svg_figures_parse_as_xml_and_html_has_no_markup_from_the_data() {
    for text in corpus() {
        let r = report(&text);
        assert!(!r.figures.is_empty());
        for f in &r.figures {
            let doc = roxmltree::Document::parse(&f.svg)
                .unwrap_or_else(|e| panic!("{text:?}: {} is not XML: {e}", f.id));
            for n in doc.descendants() {
                assert!(n.tag_name().name() != "script", "{text:?}");
                for a in n.attributes() {
                    let numeric = [
                        "d",
                        "x",
                        "y",
                        "x1",
                        "x2",
                        "y1",
                        "y2",
                        "cx",
                        "cy",
                        "r",
                        "width",
                        "height",
                        "transform",
                        "viewBox",
                    ];
                    if numeric.contains(&a.name()) {
                        assert!(
                            !a.value().contains("inf") && !a.value().contains("NaN"),
                            "{text:?}: {}={}",
                            a.name(),
                            a.value()
                        );
                    }
                }
            }
        }
        let html = &r.html;
        for bad in ["<script", "<img", "<!--", "<![CDATA["] {
            assert!(!html.contains(bad), "{text:?} reached the page as {bad}");
        }
        assert_eq!(has_control(html, &['\n']), None, "{text:?}");
        // The page's own structure is intact: every section closed.
        assert_eq!(
            html.matches("<section").count(),
            html.matches("</section>").count()
        );
    }
}

#[test]
fn terminal_text_has_no_control_characters() {
    for text in corpus() {
        let r = report(&text);
        // What `report --format text` prints: each table cell one line; the whole
        // through the terminal's escaping.
        for t in &r.tables {
            let out = t.to_text();
            let note_lines = t
                .note
                .as_deref()
                .map_or(0, |n| terminal_safe(n).lines().count());
            assert_eq!(
                out.lines().count(),
                3 + t.rows.len() + note_lines,
                "{text:?} split a row of {}:\n{out}",
                t.id
            );
        }
        let all = r.text();
        let printed = terminal_safe(&all);
        assert_eq!(has_control(&printed, &['\n', '\t']), None, "{text:?}");
    }
}

#[test]
fn a_megabyte_label_makes_figures_of_normal_size() {
    let long = hostile_long(1_000_000);
    let started = std::time::Instant::now();
    let r = report(&long);
    let files = r.files(false).unwrap();
    let total: usize = files.iter().map(|f| f.bytes.len()).sum();
    let largest = files.iter().max_by_key(|f| f.bytes.len()).unwrap();
    println!(
        "report of a 1 MB label: {} files, {total} bytes (largest {} {} bytes), {:.1} s",
        files.len(),
        largest.name,
        largest.bytes.len(),
        started.elapsed().as_secs_f64()
    );
    let plain = build(
        &fixture::systems(&["A", "Plain"]),
        &ReportOptions::default(),
    );
    let plain_total: usize = plain
        .files(false)
        .unwrap()
        .iter()
        .map(|f| f.bytes.len())
        .sum();
    // The label is cut where the report shows it: every table repeats it.
    // (3.1 GB before, 2800 times the short label's report.)
    assert!(
        total <= 4 * plain_total,
        "{total} bytes, {plain_total} with a short label"
    );
    assert_eq!(r.figures.len(), plain.figures.len());
    let height = |svg: &str| -> f64 {
        roxmltree::Document::parse(svg)
            .ok()
            .and_then(|d| d.root_element().attribute("height")?.parse().ok())
            .unwrap_or(f64::INFINITY)
    };
    for (f, p) in r.figures.iter().zip(&plain.figures) {
        // Each legend entry of the long label takes at most two lines: at most twice
        // the height and size of the same figure with a one-letter label.
        let (h, h_plain) = (height(&f.svg), height(&p.svg));
        println!(
            "{}: {h} px tall ({h_plain} with a short label), {} bytes ({})",
            f.id,
            f.svg.len(),
            p.svg.len()
        );
        assert!(
            h <= 2.0 * h_plain,
            "{}: {h} px tall, {h_plain} with a short label",
            f.id
        );
        assert!(
            f.svg.len() <= 2 * p.svg.len() + 20_000,
            "{}: {} bytes, {} with a short label",
            f.id,
            f.svg.len(),
            p.svg.len()
        );
    }
    #[cfg(feature = "png")]
    {
        let renderer = dualperf_report::png::PngRenderer::new();
        for f in r.figures.iter().take(3) {
            let png = renderer.render(&f.svg, 2.0).unwrap();
            // IHDR: width and height, big-endian, at bytes 16..24.
            let dim =
                |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
            println!("{}: PNG {}×{}, {} bytes", f.id, dim(16), dim(20), png.len());
            assert!(f64::from(dim(20)) <= 2.0 * height(&f.svg) + 2.0, "{}", f.id);
            assert!(
                dim(16) <= 1000 && png.len() < 1_000_000,
                "{}: {} bytes",
                f.id,
                png.len()
            );
        }
    }
}
