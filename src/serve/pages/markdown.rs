//! Markdown as the page shows it: rendered (pulldown-cmark), then sanitised (ammonia), since a
//! story's sections and a model's output are text nobody vouched for: no script, no handler, no
//! `javascript:` link, no style survives (docs/design.md §23).

use std::sync::OnceLock;

use pulldown_cmark::{html, Options, Parser};

/// The sanitiser: ammonia's safe defaults, plus the disabled checkboxes of task lists
/// (`- [ ] a criterion`), which acceptance criteria are written as.
fn sanitiser() -> &'static ammonia::Builder<'static> {
    static SANITISER: OnceLock<ammonia::Builder<'static>> = OnceLock::new();
    SANITISER.get_or_init(|| {
        let mut builder = ammonia::Builder::default();
        builder
            .add_tags(["input"])
            .add_tag_attributes("input", ["type", "checked", "disabled"]);
        builder
    })
}

/// `markdown` as safe HTML.
pub fn render(markdown: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut rendered = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut rendered, Parser::new_ext(markdown, options));
    sanitiser().clean(&rendered).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_rendered() {
        let html = render(
            "## Plan\n\n1. Change `src/lib.rs`\n2. **Test** it\n\n- [ ] toggles\n- [x] persists",
        );
        for expected in [
            "<h2>Plan</h2>",
            "<code>src/lib.rs</code>",
            "<strong>Test</strong>",
            "<ol>",
            "type=\"checkbox\"",
        ] {
            assert!(html.contains(expected), "{expected}: {html}");
        }
    }

    #[test]
    fn nothing_that_runs_survives() {
        let hostile = "<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n[click](javascript:alert(3))\n\n<a href=\"https://ok.example\" onclick=\"alert(4)\">ok</a>\n\n<style>body{display:none}</style><iframe src=\"https://x\"></iframe>";
        let html = render(hostile);
        for forbidden in [
            "<script",
            "onerror",
            "javascript:",
            "onclick",
            "<style",
            "<iframe",
        ] {
            assert!(!html.contains(forbidden), "{forbidden} survived: {html}");
        }
        assert!(
            html.contains("https://ok.example"),
            "a plain link stays: {html}"
        );
    }
}
