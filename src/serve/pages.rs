//! The pages, written as HTML by hand: a board page and a story page, each a frame around a
//! fragment that the page's script fetches again whenever the board changes. Everything that
//! comes from a story file, a journal or a transcript goes through [`escape_into`].

use std::fmt::Write;

use super::view::{BoardView, StoryView};
use crate::board::records::Usage;
use crate::board::{Column, StorySummary};
use crate::report::html::escape_into;
use crate::report::{format_cost, format_duration};

/// Appends escaped text; `esc!(out, a, b, …)` for several pieces.
macro_rules! esc {
    ($out:expr, $($text:expr),+ $(,)?) => {{
        $( escape_into($out, $text); )+
    }};
}

// After the macro, which the story page uses too.
mod icons;
mod markdown;
pub(super) mod story;

/// The frame of every page: head, header, the live fragment and the script that keeps it live.
/// `render` is the board render a board page shows, which its script asks to be brought up to.
fn frame(
    title: &str,
    fragment_url: &str,
    header: &str,
    (version, render): (u64, Option<u64>),
    body: &str,
) -> String {
    let mut page = String::with_capacity(body.len() + 1024);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    esc!(&mut page, title);
    page.push_str("</title>\n<link rel=\"stylesheet\" href=\"/assets/app.css\">\n<script src=\"/assets/app.js\" defer></script>\n</head>\n<body data-fragment=\"");
    esc!(&mut page, fragment_url);
    let _ = write!(page, "\" data-version=\"{version}\"");
    if let Some(render) = render {
        let _ = write!(page, " data-render=\"{render}\"");
    }
    page.push_str(">\n<header class=\"top\">");
    page.push_str(header);
    page.push_str("<span id=\"live\" class=\"live\" title=\"live updates\">live</span></header>\n<main id=\"view\">\n");
    page.push_str(body);
    page.push_str("</main>\n</body>\n</html>\n");
    page
}

pub fn board_page(view: &BoardView, fragment: &str, version: u64, render: u64) -> String {
    let mut header = String::from("<h1>");
    esc!(&mut header, &view.project);
    header.push_str("</h1>");
    frame(
        &format!("{} · agentic-sdlc", view.project),
        "/fragment/board",
        &header,
        (version, Some(render)),
        fragment,
    )
}

/// The changing part of the board page, in pieces: the status line, each column's cards and
/// the list of unreadable files. A page that already shows an earlier render is sent only the
/// pieces that differ ([`super::patch`]).
pub struct BoardRender {
    pub status: String,
    pub columns: Vec<(Column, Vec<CardHtml>)>,
    pub broken: String,
}

/// One card's markup, and a digest of it to tell whether it changed.
pub struct CardHtml {
    pub id: String,
    pub html: String,
    pub digest: u64,
}

impl BoardRender {
    /// The whole fragment, as the page first shows it.
    pub fn fragment(&self) -> String {
        let cards: usize = self
            .columns
            .iter()
            .flat_map(|(_, cards)| cards)
            .map(|c| c.html.len())
            .sum();
        let mut out = String::with_capacity(cards + self.status.len() + self.broken.len() + 1024);
        out.push_str(&self.status);
        out.push_str("<div class=\"board\">\n");
        for (column, cards) in &self.columns {
            let _ = writeln!(
                out,
                "<section class=\"column\" data-column=\"{0}\"><h2>{0} <span class=\"count\">{1}</span></h2>",
                column.name(),
                cards.len()
            );
            for card in cards {
                out.push_str(&card.html);
            }
            out.push_str("</section>\n");
        }
        out.push_str("</div>\n<div id=\"broken\">");
        out.push_str(&self.broken);
        out.push_str("</div>\n");
        out
    }
}

/// The board's columns with their cards, the latest run and what comes next.
pub fn board_render(view: &BoardView) -> BoardRender {
    let mut status = String::new();
    run_line(&mut status, view);
    // Part of the status piece, which every patch replaces: the strip follows the board live.
    needs_you(&mut status, view);
    let columns = Column::ALL
        .iter()
        .copied()
        .map(|column| {
            let cards = view
                .column(column)
                .into_iter()
                .map(|(story, usage)| {
                    let mut html = String::with_capacity(640);
                    card(&mut html, view, story, usage);
                    CardHtml {
                        id: story.id().to_string(),
                        digest: xxhash_rust::xxh3::xxh3_64(html.as_bytes()),
                        html,
                    }
                })
                .collect();
            (column, cards)
        })
        .collect();
    let mut broken = String::new();
    if !view.board.broken.is_empty() {
        let _ = write!(
            broken,
            "<section class=\"broken\"><h2>Unreadable story files ({})</h2><ul>",
            view.board.broken.len()
        );
        for err in &view.board.broken {
            broken.push_str("<li><code>");
            esc!(&mut broken, &err.to_string());
            broken.push_str("</code></li>");
        }
        broken.push_str(
            "</ul><p>Run <code>agentic-sdlc validate</code> for details.</p></section>\n",
        );
    }
    BoardRender {
        status,
        columns,
        broken,
    }
}

/// The most stories the strip lists; the rest are counted.
const NEEDS_YOU_SHOWN: usize = 50;

/// Why a story waits for a person, and what the strip offers to do about it.
enum Need<'a> {
    Gate(&'a str),
    Blocked(&'a str),
    Failed(&'a str),
}

/// Above the columns: every story that waits for a person (a gate to decide, a block, a failed
/// action), each with its reason and its button, and their count in words (docs/design.md
/// §23). Nothing when nobody is needed.
fn needs_you(out: &mut String, view: &BoardView) {
    let needs: Vec<(&StorySummary, Need)> = view
        .board
        .stories
        .iter()
        .filter_map(|story| {
            let gate = story
                .progress
                .as_ref()
                .ok()
                .and_then(|p| p.pending_gate.as_deref());
            let need = match (gate, story.column, &story.meta.last_error) {
                (Some(phase), _, _) => Need::Gate(phase),
                (None, Column::Blocked, _) => {
                    Need::Blocked(story.meta.blocked_reason.as_deref().unwrap_or("blocked"))
                }
                (None, _, Some(error)) if view.running(story.id()).is_none() => Need::Failed(error),
                _ => return None,
            };
            Some((story, need))
        })
        .collect();
    if needs.is_empty() {
        return;
    }
    let count = |wanted: fn(&Need) -> bool| needs.iter().filter(|(_, n)| wanted(n)).count();
    let words: Vec<String> = [
        (count(|n| matches!(n, Need::Blocked(_))), "blocked"),
        (count(|n| matches!(n, Need::Gate(_))), "wait for you"),
        (count(|n| matches!(n, Need::Failed(_))), "failed"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    let _ = write!(
        out,
        "<section class=\"needs-you\" id=\"needs-you\"><h2>Needs you <span class=\"count\">{}</span></h2><p class=\"needs-summary\">{}</p><ul>",
        needs.len(),
        words.join(", ")
    );
    for (story, need) in needs.iter().take(NEEDS_YOU_SHOWN) {
        let id = story.id();
        out.push_str("<li class=\"need\" data-story=\"");
        esc!(out, id);
        out.push_str("\"><a href=\"/story/");
        esc!(out, id);
        out.push_str("\">");
        esc!(out, &story.slug);
        out.push_str("</a> ");
        match need {
            Need::Gate(phase) => {
                out.push_str(icons::PAUSE);
                esc!(out, "the ", phase, " review waits for a decision ");
                out.push_str("<a class=\"button\" href=\"/story/");
                esc!(out, id);
                out.push_str("#gate\">Decide</a>");
            }
            Need::Blocked(reason) => {
                out.push_str(icons::STOP);
                esc!(out, first_line(reason));
                out.push_str(" <form method=\"post\" class=\"inline\" action=\"/story/");
                esc!(out, id);
                out.push_str(
                    "/unblock\"><button type=\"submit\" class=\"unblock\">Unblock</button></form>",
                );
            }
            Need::Failed(error) => {
                esc!(out, "failed: ", first_line(error), " ");
                out.push_str("<a class=\"button\" href=\"/story/");
                esc!(out, id);
                out.push_str("\">See why</a>");
            }
        }
        out.push_str("</li>");
    }
    if needs.len() > NEEDS_YOU_SHOWN {
        let _ = write!(out, "<li>and {} more</li>", needs.len() - NEEDS_YOU_SHOWN);
    }
    out.push_str("</ul></section>\n");
}

fn run_line(out: &mut String, view: &BoardView) {
    out.push_str("<p class=\"status\" id=\"status\">");
    match &view.run {
        Some(run) if run.running => {
            let working = run
                .stories
                .iter()
                .flat_map(|s| &s.actions)
                .filter(|a| a.outcome == crate::report::ActionOutcome::Running)
                .count();
            out.push_str("<span class=\"running\">▶ Run ");
            esc!(out, &run.run_id);
            let _ = write!(
                out,
                " at work: {} action(s) so far, {working} running</span>",
                run.totals.actions
            );
        }
        Some(run) => {
            out.push_str("Last run ");
            esc!(out, &run.run_id);
            match (run.exit_code, &run.message) {
                (Some(code), Some(message)) => {
                    let _ = write!(out, ": exit {code}, ");
                    esc!(out, message);
                }
                _ => out.push_str(": ended without finishing its journal"),
            }
        }
        None => out.push_str("No run yet"),
    }
    out.push_str(" · ");
    // What a run would take up next: the stories a run is at work on are already taken.
    let next = view
        .assessment
        .actions
        .iter()
        .find(|a| view.running(&a.story_id).is_none());
    match next {
        Some(action) => {
            out.push_str("Next: ");
            esc!(
                out,
                action.action_type.name(),
                " ",
                &action.slug,
                " (",
                &action.reason,
                ")"
            );
        }
        None if !view.assessment.actions.is_empty() => {
            out.push_str("Next: nothing else; the run is at work on every runnable story")
        }
        None if !view.assessment.waiting.is_empty() => {
            out.push_str("Next: nothing runnable; every open story is waiting")
        }
        None => out.push_str("Next: nothing to do"),
    }
    out.push_str("</p>\n");
}

fn card(out: &mut String, view: &BoardView, story: &StorySummary, usage: &Usage) {
    let meta = &story.meta;
    let id = story.id();
    out.push_str("<article class=\"card\" id=\"card-");
    esc!(out, id);
    out.push_str("\" data-story=\"");
    esc!(out, id);
    out.push_str("\"><a class=\"title\" href=\"/story/");
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
            out.push_str("<div class=\"branch\">⎇ ");
            esc!(out, branch);
            out.push_str("</div>\n");
        }
        (None, None) => {}
    }
    if let Some(action) = view.running(id) {
        out.push_str("<div class=\"running\">▶ ");
        esc!(out, action.action_type.name());
        out.push_str(" running");
        if let Some(at) = &action.started_at {
            out.push_str(" since ");
            time(out, at);
        }
        out.push_str("</div>\n");
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

/// A timestamp the page's script shows in the reader's time zone; the server's text says UTC.
fn time(out: &mut String, rfc3339: &str) {
    out.push_str("<time datetime=\"");
    esc!(out, rfc3339);
    out.push_str("\">");
    match crate::report::parse_time(rfc3339) {
        Some(at) => out.push_str(&at.format("%Y-%m-%d %H:%M:%S UTC").to_string()),
        None => esc!(out, rfc3339),
    }
    out.push_str("</time>");
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// A word safe to put in a class attribute.
fn css_word(text: &str) -> String {
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
