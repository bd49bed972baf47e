//! What a person acts with on a page: the board's search and filter, the buttons that open a
//! form, the forms themselves (add, edit, move) in dialogs, the keys that open them, and the
//! line where an action's answer or refusal is shown. None of it is in the fragment, so a live
//! refresh never resets what a person is typing.

use std::fmt::Write;

use crate::board::meta::StoryMeta;
use crate::board::{Column, StoryId, StoryType};
use crate::serve::filter::BoardQuery;

/// Where an action's answer, or its refusal, is shown (the page's script fills it in).
const ANSWER: &str =
    "<div id=\"act-message\" class=\"act-message\" role=\"status\" aria-live=\"polite\" hidden></div>\n";

/// The board page's bar: search by text, label and column (a plain GET form, so it works
/// without the script too), the button that opens the add form, and the keys.
pub(super) fn board_tools(out: &mut String, query: &BoardQuery) {
    out.push_str("<div class=\"tools\" id=\"tools\">\n<form id=\"filter\" class=\"filter\" role=\"search\" method=\"get\" action=\"/\">\n<input type=\"search\" id=\"q\" name=\"q\" placeholder=\"Search title, slug or id\" title=\"Search (/)\" autocomplete=\"off\" value=\"");
    esc!(out, &query.q);
    out.push_str("\">\n<input type=\"search\" id=\"label\" name=\"label\" list=\"labels\" placeholder=\"Label\" title=\"Only stories with this label\" autocomplete=\"off\" value=\"");
    esc!(out, &query.label);
    out.push_str("\">\n<select id=\"column\" name=\"column\" title=\"Only this column\"><option value=\"\">Every column</option>");
    let wanted = Column::parse(&query.column);
    for column in Column::ALL {
        let selected = if wanted == Some(*column) {
            " selected"
        } else {
            ""
        };
        let _ = write!(
            out,
            "<option value=\"{0}\"{selected}>{0}</option>",
            column.name()
        );
    }
    out.push_str("</select>\n<noscript><button type=\"submit\">Search</button></noscript>\n</form>\n<button type=\"button\" id=\"new-story\" class=\"primary\" title=\"New story (n)\">+ New story</button>\n<p class=\"keys\"><kbd>/</kbd> search · <kbd>n</kbd> new story · <kbd>Esc</kbd> close</p>\n</div>\n");
    out.push_str(ANSWER);
}

/// The story page's bar: edit and move, and the keys.
pub(super) fn story_tools(out: &mut String) {
    out.push_str("<div class=\"tools\" id=\"tools\">\n<button type=\"button\" id=\"edit-story\" title=\"Edit title, priority and labels (e)\">Edit</button>\n<button type=\"button\" id=\"move-story\" title=\"Move to another column (m)\">Move…</button>\n<p class=\"keys\"><kbd>e</kbd> edit · <kbd>m</kbd> move · <kbd>Esc</kbd> close</p>\n</div>\n");
    out.push_str(ANSWER);
}

/// The form `add` is on the page: the same fields, the same rules (`front::new_story`).
pub(super) fn add_dialog(out: &mut String) {
    out.push_str("<dialog id=\"add-dialog\" aria-labelledby=\"add-heading\">\n<form id=\"add-form\" method=\"post\" action=\"/stories\" data-act>\n<h2 id=\"add-heading\">New story</h2>\n<label for=\"add-title\">Title</label>\n<input id=\"add-title\" name=\"title\" required autocomplete=\"off\">\n<div class=\"row\"><span><label for=\"add-type\">Type</label>\n<select id=\"add-type\" name=\"type\">");
    for name in StoryType::KNOWN {
        let _ = write!(out, "<option value=\"{name}\">{name}</option>");
    }
    out.push_str("</select></span>\n<span><label for=\"add-priority\">Priority</label>\n<input id=\"add-priority\" name=\"priority\" type=\"number\" step=\"1\" placeholder=\"after every story\"></span></div>\n<label for=\"add-labels\">Labels, separated by commas</label>\n<input id=\"add-labels\" name=\"labels\" list=\"labels\" autocomplete=\"off\">\n<label for=\"add-body\">What it is about (Markdown: plain text becomes the summary)</label>\n<textarea id=\"add-body\" name=\"body\" rows=\"6\"></textarea>\n<p class=\"dialog-error\" role=\"alert\" hidden></p>\n<div class=\"buttons\"><button type=\"submit\" class=\"primary\" id=\"add-submit\">Add to backlog</button> <button type=\"button\" data-close>Cancel</button></div>\n</form>\n</dialog>\n");
}

/// The form `move` is on the page: one button per column; the script names the story and
/// sets where the form goes.
pub(super) fn move_dialog(out: &mut String) {
    out.push_str("<dialog id=\"move-dialog\" aria-labelledby=\"move-heading\">\n<form id=\"move-form\" method=\"post\" action=\"\" data-act>\n<h2 id=\"move-heading\">Move <span id=\"move-title\"></span></h2>\n<p>From <b id=\"move-from\"></b> to:</p>\n<div class=\"buttons\">");
    for column in Column::ALL {
        let _ = write!(
            out,
            "<button type=\"submit\" name=\"column\" value=\"{0}\" id=\"move-to-{0}\">{0}</button> ",
            column.name()
        );
    }
    out.push_str("</div>\n<p class=\"dialog-error\" role=\"alert\" hidden></p>\n<div class=\"buttons\"><button type=\"button\" data-close>Cancel</button></div>\n</form>\n</dialog>\n");
}

/// The keys a person edits from the page, filled with the story's values when the page was
/// made (the script fills them again from the live fragment when the form opens).
pub(super) fn edit_dialog(out: &mut String, id: &StoryId, meta: &StoryMeta) {
    out.push_str("<dialog id=\"edit-dialog\" aria-labelledby=\"edit-heading\">\n<form id=\"edit-form\" method=\"post\" action=\"/story/");
    esc!(out, id);
    out.push_str("/edit\" data-act>\n<h2 id=\"edit-heading\">Edit</h2>\n<label for=\"edit-title\">Title</label>\n<input id=\"edit-title\" name=\"title\" required autocomplete=\"off\" value=\"");
    esc!(out, &meta.title);
    let _ = write!(
        out,
        "\">\n<label for=\"edit-priority\">Priority (lower runs first)</label>\n<input id=\"edit-priority\" name=\"priority\" type=\"number\" step=\"1\" required value=\"{}\">\n<label for=\"edit-labels\">Labels, separated by commas</label>\n<input id=\"edit-labels\" name=\"labels\" autocomplete=\"off\" value=\"",
        meta.priority
    );
    esc!(out, &meta.labels.join(", "));
    out.push_str("\">\n<p class=\"dialog-error\" role=\"alert\" hidden></p>\n<div class=\"buttons\"><button type=\"submit\" class=\"primary\" id=\"edit-submit\">Save</button> <button type=\"button\" data-close>Cancel</button></div>\n</form>\n</dialog>\n");
}
