//! The page's icons, inline SVG: they draw the same on every machine, with no emoji font
//! (docs/design.md §23). Each is followed by a space, as the glyph it replaces was.

/// Waiting for a person.
pub const PAUSE: &str = "<svg class=\"icon\" viewBox=\"0 0 16 16\" width=\"14\" height=\"14\" aria-label=\"waiting\" role=\"img\"><rect x=\"3\" y=\"2\" width=\"3.5\" height=\"12\" rx=\"1\" fill=\"currentColor\"/><rect x=\"9.5\" y=\"2\" width=\"3.5\" height=\"12\" rx=\"1\" fill=\"currentColor\"/></svg> ";

/// Blocked.
pub const STOP: &str = "<svg class=\"icon\" viewBox=\"0 0 16 16\" width=\"14\" height=\"14\" aria-label=\"blocked\" role=\"img\"><circle cx=\"8\" cy=\"8\" r=\"7\" fill=\"currentColor\"/><rect x=\"3.5\" y=\"6.75\" width=\"9\" height=\"2.5\" rx=\"1\" fill=\"#fff\"/></svg> ";
