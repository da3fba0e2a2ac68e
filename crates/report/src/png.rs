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
