//! PNG copies of the SVG figures, rendered with resvg and the system's fonts (the figures
//! ask for DejaVu Sans). Behind the `png` feature.

use crate::ReportError;

/// Renders SVG to PNG; loads the system fonts once.
pub struct PngRenderer {
    options: resvg::usvg::Options<'static>,
}

impl PngRenderer {
    pub fn new() -> PngRenderer {
        let mut options = resvg::usvg::Options::default();
        options.fontdb_mut().load_system_fonts();
        PngRenderer { options }
    }

    /// Whether any font was found (without one, text is not drawn).
    pub fn has_fonts(&self) -> bool {
        !self.options.fontdb.is_empty()
    }

    /// Render at `scale` × the SVG's size (2.0 for sharp images on high-DPI screens).
    pub fn render(&self, svg: &str, scale: f32) -> Result<Vec<u8>, ReportError> {
        let tree = resvg::usvg::Tree::from_str(svg, &self.options)
            .map_err(|e| ReportError::Png(e.to_string()))?;
        let size = tree
            .size()
            .to_int_size()
            .scale_by(scale)
            .ok_or_else(|| ReportError::Png("figure has no size".into()))?;
        let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
            .ok_or_else(|| ReportError::Png("cannot allocate the image".into()))?;
        resvg::render(
            &tree,
            resvg::tiny_skia::Transform::from_scale(scale, scale),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|e| ReportError::Png(e.to_string()))
    }
}

impl Default for PngRenderer {
    fn default() -> Self {
        PngRenderer::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure_renders_to_a_png_of_twice_its_size() {
        let report = crate::build(&crate::fixture::dataset(), &crate::ReportOptions::default());
        let svg = &report.figures[0].svg;
        let png = PngRenderer::new().render(svg, 2.0).unwrap_or_default();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
        // IHDR: width and height, big-endian, at bytes 16..24.
        let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
        let height = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
        let attr = |name: &str| -> u32 {
            svg.split(&format!(" {name}=\""))
                .nth(1)
                .and_then(|v| v.split('"').next())
                .and_then(|v| v.parse::<f64>().ok())
                .map_or(0, |v| (v * 2.0).round() as u32)
        };
        assert_eq!((width, height), (attr("width"), attr("height")));
        assert!(width > 0 && height > 0);
    }

    #[test]
    fn broken_svg_is_an_error_not_a_panic() {
        assert!(PngRenderer::new().render("<svg", 1.0).is_err());
    }
}
