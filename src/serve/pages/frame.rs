//! What every page shares: the frame around its fragment, and the small pieces of HTML the
//! pages write alike (a time, a first line, a class word, a problem page).

use std::fmt::Write;

/// What a page puts around its fragment.
pub(super) struct Frame<'a> {
    pub title: &'a str,
    /// Where the page's script fetches the fragment again.
    pub fragment_url: &'a str,
    pub header: &'a str,
    /// Between the header and the fragment, and never replaced by a refresh: the search, the
    /// buttons that open a form, what an action answered.
    pub tools: &'a str,
    /// After the fragment: the forms a person fills in, in dialogs a refresh leaves alone.
    pub dialogs: &'a str,
    /// The board's version the page shows.
    pub version: u64,
    /// The board render a board page shows, which its script asks to be brought up from.
    pub render: Option<u64>,
}

/// The frame of every page: head, header, tools, the live fragment, the dialogs and the scripts
/// that keep it live and act on it.
pub(super) fn frame(frame: Frame, body: &str) -> String {
    let mut page = String::with_capacity(body.len() + frame.dialogs.len() + 2048);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    esc!(&mut page, frame.title);
    page.push_str("</title>\n<link rel=\"stylesheet\" href=\"/assets/app.css\">\n<script src=\"/assets/app.js\" defer></script>\n<script src=\"/assets/acts.js\" defer></script>\n</head>\n<body data-fragment=\"");
    esc!(&mut page, frame.fragment_url);
    let _ = write!(page, "\" data-version=\"{}\"", frame.version);
    if let Some(render) = frame.render {
        let _ = write!(page, " data-render=\"{render}\"");
    }
    page.push_str(">\n<header class=\"top\">");
    page.push_str(frame.header);
    page.push_str("<span id=\"live\" class=\"live\" title=\"live updates\">live</span></header>\n");
    page.push_str(frame.tools);
    page.push_str("<main id=\"view\">\n");
    page.push_str(body);
    page.push_str("</main>\n");
    page.push_str(frame.dialogs);
    page.push_str("</body>\n</html>\n");
    page
}

/// A timestamp the page's script shows in the reader's time zone; the server's text says UTC.
pub(super) fn time(out: &mut String, rfc3339: &str) {
    out.push_str("<time datetime=\"");
    esc!(out, rfc3339);
    out.push_str("\">");
    match crate::report::parse_time(rfc3339) {
        Some(at) => out.push_str(&at.format("%Y-%m-%d %H:%M:%S UTC").to_string()),
        None => esc!(out, rfc3339),
    }
    out.push_str("</time>");
}

pub(super) fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// A word safe to put in a class attribute.
pub(super) fn css_word(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

/// A page that says what went wrong, with a way back.
pub fn problem_page(status: u16, title: &str, message: &str) -> String {
    let mut body = String::new();
    let _ = write!(body, "<section class=\"problem\"><h1>{status} ");
    esc!(&mut body, title);
    body.push_str("</h1><pre>");
    esc!(&mut body, message);
    body.push_str("</pre><p><a href=\"/\">Back to the board</a></p></section>\n");
    let mut page = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
    );
    esc!(&mut page, title);
    page.push_str(
        "</title>\n<link rel=\"stylesheet\" href=\"/assets/app.css\">\n</head>\n<body>\n<main>\n",
    );
    page.push_str(&body);
    page.push_str("</main>\n</body>\n</html>\n");
    page
}
