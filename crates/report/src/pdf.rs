//! PDF copies of the SVG figures for papers: vector graphics with the text kept as text,
//! in the system's fonts (the figures ask for DejaVu Sans), embedded as subsets so the
//! PDF looks the same everywhere and its words can be searched and copied. Made with
//! svg2pdf (from the Typst project). Behind the `pdf` feature.

use crate::ReportError;
use svg2pdf::usvg;

/// Converts SVG figures to PDF; loads the system fonts once.
pub struct PdfRenderer {
    options: usvg::Options<'static>,
}

impl PdfRenderer {
    pub fn new() -> PdfRenderer {
        let mut options = usvg::Options::default();
        options.fontdb_mut().load_system_fonts();
        PdfRenderer { options }
    }

    /// Whether any font was found (without one, a PDF would lose its text).
    pub fn has_fonts(&self) -> bool {
        !self.options.fontdb.is_empty()
    }

    /// One page the size of the figure (1 SVG unit = 1 pt), text embedded as fonts.
    pub fn render(&self, svg: &str) -> Result<Vec<u8>, ReportError> {
        if !self.has_fonts() {
            return Err(ReportError::Pdf(
                "no system fonts found, so the figures' text would be lost (install DejaVu \
                 Sans, e.g. Debian's fonts-dejavu-core)"
                    .into(),
            ));
        }
        let tree = usvg::Tree::from_str(svg, &self.options)
            .map_err(|e| ReportError::Pdf(e.to_string()))?;
        let options = svg2pdf::ConversionOptions {
            embed_text: true,
            ..Default::default()
        };
        svg2pdf::to_pdf(&tree, options, svg2pdf::PageOptions::default())
            .map_err(|e| ReportError::Pdf(e.to_string()))
    }
}

impl Default for PdfRenderer {
    fn default() -> Self {
        PdfRenderer::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_converts_to_a_one_page_pdf_with_an_embedded_font() {
        let renderer = PdfRenderer::new();
        if !renderer.has_fonts() {
            eprintln!("skipped: no system fonts");
            return;
        }
        let report = crate::build(&crate::fixture::dataset(), &crate::ReportOptions::default());
        let pdf = renderer.render(&report.figures[0].svg).unwrap_or_default();
        assert!(pdf.starts_with(b"%PDF-"), "not a PDF");
        let text = String::from_utf8_lossy(&pdf);
        assert_eq!(text.matches("/Type /Page\n").count(), 1, "one page");
        // A font program is embedded (FontFile2: TrueType), not only named.
        assert!(text.contains("/FontFile2"), "no embedded font program");
    }

    #[test]
    fn broken_svg_is_an_error_not_a_panic() {
        assert!(PdfRenderer::new().render("<svg").is_err());
    }
}
