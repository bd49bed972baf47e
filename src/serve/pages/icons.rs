//! The page's icons, inline SVG: they draw the same on every machine, with no emoji font
//! (docs/design.md §23). Each is followed by a space, as the glyph it replaces was.

/// Waiting for a person.
pub const PAUSE: &str = "<svg class=\"icon\" viewBox=\"0 0 16 16\" width=\"14\" height=\"14\" aria-label=\"waiting\" role=\"img\"><rect x=\"3\" y=\"2\" width=\"3.5\" height=\"12\" rx=\"1\" fill=\"currentColor\"/><rect x=\"9.5\" y=\"2\" width=\"3.5\" height=\"12\" rx=\"1\" fill=\"currentColor\"/></svg> ";

/// Blocked.
pub const STOP: &str = "<svg class=\"icon\" viewBox=\"0 0 16 16\" width=\"14\" height=\"14\" aria-label=\"blocked\" role=\"img\"><circle cx=\"8\" cy=\"8\" r=\"7\" fill=\"currentColor\"/><rect x=\"3.5\" y=\"6.75\" width=\"9\" height=\"2.5\" rx=\"1\" fill=\"#fff\"/></svg> ";

/// Move to another column: two opposed arrows. Decorative, with no trailing space: the button
/// that holds it carries the label.
pub const MOVE: &str = "<svg class=\"icon\" viewBox=\"0 0 16 16\" width=\"14\" height=\"14\" aria-hidden=\"true\"><path d=\"M2 5h10M9 2l3 3-3 3M14 11H4M7 8l-3 3 3 3\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.6\" stroke-linecap=\"round\" stroke-linejoin=\"round\"/></svg>";

/// Running.
pub const PLAY: &str = "<svg class=\"icon\" viewBox=\"0 0 16 16\" width=\"14\" height=\"14\" aria-label=\"running\" role=\"img\"><path d=\"M4 2.5v11l9-5.5z\" fill=\"currentColor\"/></svg> ";

/// A git branch.
pub const BRANCH: &str = "<svg class=\"icon\" viewBox=\"0 0 16 16\" width=\"14\" height=\"14\" aria-label=\"branch\" role=\"img\"><g fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.5\"><circle cx=\"4.5\" cy=\"3.5\" r=\"1.75\"/><circle cx=\"4.5\" cy=\"12.5\" r=\"1.75\"/><circle cx=\"11.5\" cy=\"5.5\" r=\"1.75\"/><path d=\"M4.5 5.25v5.5M11.5 7.25c0 2.5-7 1.5-7 3.5\"/></g></svg> ";
