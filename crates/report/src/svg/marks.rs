//! What tells the series apart: a colour per system, a marker shape per system, hollow
//! markers for IPv6.

use super::c;

/// One colour per system, from the Okabe–Ito palette (distinct for the common colour
/// vision deficiencies), ordered so the first systems also differ in grey when printed
/// (luminance 0, 162, 87, 119, 151, 106 of 255); each system also has its own marker
/// shape ([`Mark`]), and the IP version is the line style: IPv4 solid with filled
/// markers, IPv6 dashed with hollow ones.
pub(crate) const PALETTE: [&str; 6] = [
    "#000000", "#E69F00", "#0072B2", "#D55E00", "#CC79A7", "#009E73",
];

/// A marker: its shape says the system, a hollow fill says IPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    shape: usize,
    pub(crate) hollow: bool,
}

impl Mark {
    /// The marker of system `sys` (circle, square, triangle, diamond, inverted triangle,
    /// cross) for IPv6 (`v6`: hollow) or IPv4 (filled).
    pub(crate) fn of(sys: usize, v6: bool) -> Mark {
        Mark {
            shape: sys % 6,
            hollow: v6,
        }
    }
}

/// The colour of system `sys`.
pub(crate) fn colour_of(sys: usize) -> &'static str {
    PALETTE[sys % PALETTE.len()]
}

pub(crate) fn marker(x: f64, y: f64, colour: &str, mark: Mark) -> String {
    let fill = if mark.hollow { "#ffffff" } else { colour };
    let style = format!("fill=\"{fill}\" stroke=\"{colour}\" stroke-width=\"1.8\"");
    let poly = |pts: &[(f64, f64)]| {
        let d: Vec<String> = pts
            .iter()
            .enumerate()
            .map(|(i, (dx, dy))| {
                format!(
                    "{}{} {}",
                    if i == 0 { "M" } else { "L" },
                    c(x + dx),
                    c(y + dy)
                )
            })
            .collect();
        format!("<path class=\"marker\" d=\"{} Z\" {style}/>", d.join(" "))
    };
    match mark.shape {
        0 => format!(
            "<circle class=\"marker\" cx=\"{}\" cy=\"{}\" r=\"4.2\" {style}/>",
            c(x),
            c(y)
        ),
        1 => poly(&[(-4.0, -4.0), (4.0, -4.0), (4.0, 4.0), (-4.0, 4.0)]),
        2 => poly(&[(0.0, -5.0), (4.6, 3.5), (-4.6, 3.5)]),
        3 => poly(&[(0.0, -5.2), (5.2, 0.0), (0.0, 5.2), (-5.2, 0.0)]),
        4 => poly(&[(0.0, 5.0), (4.6, -3.5), (-4.6, -3.5)]),
        _ => poly(&[
            (-1.6, -5.0),
            (1.6, -5.0),
            (1.6, -1.6),
            (5.0, -1.6),
            (5.0, 1.6),
            (1.6, 1.6),
            (1.6, 5.0),
            (-1.6, 5.0),
            (-1.6, 1.6),
            (-5.0, 1.6),
            (-5.0, -1.6),
            (-1.6, -1.6),
        ]),
    }
}
