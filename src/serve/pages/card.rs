//! One story's card on the board: its title, keys, labels, flags, spend, branch and state, and
//! the button that moves it.

use std::fmt::Write;

use super::frame::{first_line, time};
use super::icons;
use crate::board::records::Usage;
use crate::board::{Column, StorySummary};
use crate::report::format_cost;
use crate::serve::view::BoardView;

pub(super) fn card(out: &mut String, view: &BoardView, story: &StorySummary, usage: &Usage) {
    let meta = &story.meta;
    let id = story.id();
    out.push_str("<article class=\"card\" id=\"card-");
    esc!(out, id);
    out.push_str("\" data-story=\"");
    esc!(out, id);
    // The title goes in the button's label: a screen reader says what it moves.
    out.push_str("\"><button type=\"button\" class=\"card-move\" data-move=\"");
    esc!(out, id);
    out.push_str("\" title=\"Move to another column\" aria-label=\"Move ");
    esc!(out, &meta.title);
    out.push_str("\">");
    out.push_str(icons::MOVE);
    out.push_str("</button><a class=\"title\" href=\"/story/");
    esc!(out, id);
    out.push_str("\">");
    esc!(out, &meta.title);
    out.push_str("</a>\n<div class=\"sub\"><span class=\"slug\">");
    esc!(out, &story.slug);
    let _ = write!(
        out,
        "</span> <span class=\"priority\" title=\"priority\">{}</span> <span class=\"type\">",
        meta.priority
    );
    esc!(out, meta.story_type.as_str());
    out.push_str("</span></div>\n");
    if !meta.labels.is_empty() {
        out.push_str("<div class=\"labels\">");
        for label in &meta.labels {
            out.push_str("<span class=\"label\">");
            esc!(out, label);
            out.push_str("</span>");
        }
        out.push_str("</div>\n");
    }
    flags(out, story);
    if usage.requests > 0 {
        let _ = write!(out, "<div class=\"spend\">{} tokens", usage.tokens());
        if usage.cost_usd.is_some() {
            out.push_str(" · ");
            esc!(out, &format_cost(usage.cost_usd));
        }
        out.push_str("</div>\n");
    }
    match (&meta.merged_commit, &meta.branch) {
        (Some(commit), _) => {
            out.push_str("<div class=\"branch\">merged ");
            esc!(out, &commit[..commit.len().min(7)]);
            out.push_str("</div>\n");
        }
        (None, Some(branch)) => {
            out.push_str("<div class=\"branch\">");
            out.push_str(icons::BRANCH);
            esc!(out, branch);
            out.push_str("</div>\n");
        }
        (None, None) => {}
    }
    if let Some(action) = view.running(id) {
        // The page's script counts the time since, and fills in the tokens and the last tool
        // call from the live work it is sent (`/events`, `work`).
        out.push_str("<div class=\"running work\" data-work=\"");
        esc!(out, id);
        out.push_str("\">");
        out.push_str(icons::PLAY);
        esc!(out, action.action_type.name());
        out.push_str(" running");
        if let Some(at) = &action.started_at {
            out.push_str(" <span class=\"elapsed\" data-since=\"");
            esc!(out, at);
            out.push_str("\">since ");
            time(out, at);
            out.push_str("</span>");
        }
        out.push_str("<span class=\"tokens\"></span><span class=\"tool\"></span></div>\n");
    }
    if let Some(reason) = view.waiting(id) {
        out.push_str("<div class=\"waiting\">");
        out.push_str(icons::PAUSE);
        esc!(out, reason);
        out.push_str("</div>\n");
    }
    if story.column == Column::Blocked {
        out.push_str("<div class=\"blocked\">");
        out.push_str(icons::STOP);
        esc!(
            out,
            first_line(
                meta.blocked_reason
                    .as_deref()
                    .unwrap_or("no reason recorded")
            )
        );
        out.push_str("</div>\n");
    }
    if let Some(error) = &meta.last_error {
        out.push_str("<div class=\"error\">! ");
        esc!(out, first_line(error));
        out.push_str("</div>\n");
    }
    out.push_str("</article>\n");
}

/// R, P, I and V, lit when research, plan, implementation and reviews are complete.
fn flags(out: &mut String, story: &StorySummary) {
    let meta = &story.meta;
    out.push_str("<div class=\"flags\">");
    for flag in meta.shown_flags(story.column) {
        let (letter, name) = (flag.letter, flag.name);
        let (class, state) = if flag.set {
            ("on", "complete")
        } else {
            ("off", "not complete")
        };
        let _ = write!(
            out,
            "<span class=\"flag {class}\" title=\"{name} {state}\">{letter}</span>"
        );
    }
    out.push_str("</div>\n");
}
