//! The board page, and its fragment: the run's status line, what needs a person, and each
//! column's cards, rendered once per change of the board and cut to what a page asks for.

use std::collections::HashMap;
use std::fmt::Write;

use super::frame::{first_line, frame, Frame};
use super::{card, icons, tools};
use crate::board::{Column, StorySummary};
use crate::serve::filter::{BoardQuery, Filter, Findable, Shown};
use crate::serve::view::BoardView;

/// The board page: its search and buttons, the board as `query` filters it, and the forms to
/// add and move a story.
pub fn board_page(
    view: &BoardView,
    fragment: &str,
    (version, render): (u64, u64),
    query: &BoardQuery,
) -> String {
    let mut header = String::from("<h1>");
    esc!(&mut header, &view.project);
    header.push_str("</h1>");
    let mut bar = String::new();
    tools::board_tools(&mut bar, query);
    let mut dialogs = String::new();
    tools::add_dialog(&mut dialogs);
    tools::move_dialog(&mut dialogs);
    frame(
        Frame {
            title: &format!("{} · agentic-sdlc", view.project),
            fragment_url: "/fragment/board",
            header: &header,
            tools: &bar,
            dialogs: &dialogs,
            version,
            render: Some(render),
        },
        fragment,
    )
}

/// The changing part of the board page, in pieces: the status line, each column's cards and
/// the list of unreadable files. A page that already shows an earlier render is sent only the
/// pieces that differ ([`crate::serve::patch`]).
pub struct BoardRender {
    pub status: String,
    pub columns: Vec<(Column, Vec<CardHtml>)>,
    pub broken: String,
}

/// One card's markup, a digest of it to tell whether it changed, and what it is found by.
pub struct CardHtml {
    pub id: String,
    pub html: String,
    pub digest: u64,
    pub find: Findable,
}

/// The cards a column shows before it folds: a screenful or two. The rest are counted, and
/// unfolded [`MORE_CARDS`] at a time, so a board of ten thousand stories makes a page of a few
/// hundred kilobytes (docs/design.md, "Large boards").
pub const FIRST_CARDS: usize = 30;
/// The cards one "more" unfolds.
pub const MORE_CARDS: usize = 100;

impl BoardRender {
    /// The whole fragment, as a page first shows it: the cards `filter` lists, the first
    /// `shown` of each column, and what the rest come to.
    pub fn fragment(&self, filter: &Filter, shown: &Shown) -> String {
        let mut out = String::with_capacity(self.status.len() + self.broken.len() + 64 * 1024);
        // In a piece of its own, which a patch replaces whole (the strip included).
        out.push_str("<div id=\"status-piece\">");
        out.push_str(&self.status);
        out.push_str("</div>\n<div class=\"board\">\n");
        for ((column, cards), shown) in self.columns.iter().zip(shown) {
            let listed: Vec<&CardHtml> = cards
                .iter()
                .filter(|card| filter.matches(*column, &card.find))
                .collect();
            let hidden = if filter.shows_column(*column) {
                ""
            } else {
                " hidden"
            };
            let _ = writeln!(
                out,
                "<section class=\"column\" data-column=\"{0}\"{hidden}><h2>{0} <span class=\"count\">{1}</span></h2>",
                column.name(),
                count_text(listed.len(), cards.len()),
            );
            for card in listed.iter().take(*shown) {
                out.push_str(&card.html);
            }
            more_button(&mut out, *column, listed.len().saturating_sub(*shown));
            out.push_str("</section>\n");
        }
        out.push_str("</div>\n<div id=\"broken\">");
        out.push_str(&self.broken);
        out.push_str("</div>\n");
        out
    }

    /// The next cards of `column` that `filter` lists after the card `after` (the last one a
    /// page shows), at most `limit`: their markup, and how many are left after them. `None`
    /// when that card is no longer listed there, and the page needs the board again.
    pub fn more(
        &self,
        column: Column,
        after: &str,
        filter: &Filter,
        limit: usize,
    ) -> Option<(String, usize)> {
        let (_, cards) = self.columns.iter().find(|(c, _)| *c == column)?;
        let listed: Vec<&CardHtml> = cards
            .iter()
            .filter(|card| filter.matches(column, &card.find))
            .collect();
        let from = listed.iter().position(|card| card.id == after)? + 1;
        let next = &listed[from..(from + limit).min(listed.len())];
        let html = next.iter().map(|card| card.html.as_str()).collect();
        Some((html, listed.len() - from - next.len()))
    }
}

/// The button that unfolds a column, saying how many cards it holds back; none when it holds
/// back nothing.
fn more_button(out: &mut String, column: Column, left: usize) {
    if left > 0 {
        let _ = write!(
            out,
            "<button type=\"button\" class=\"more\" data-column=\"{}\" title=\"Show the next {MORE_CARDS}\">{left} more</button>",
            column.name()
        );
    }
}

/// A column's count: how many it holds, or how many of them a filter lists.
pub fn count_text(listed: usize, total: usize) -> String {
    if listed == total {
        total.to_string()
    } else {
        format!("{listed} of {total}")
    }
}

/// The board's columns with their cards, the latest run and what comes next.
pub fn board_render(view: &BoardView) -> BoardRender {
    let mut status = String::new();
    run_line(&mut status, view);
    // Part of the status piece, which every patch replaces: the strip follows the board live.
    needs_you(&mut status, view);
    labels(&mut status, view);
    let columns = Column::ALL
        .iter()
        .copied()
        .map(|column| {
            let cards = view
                .column(column)
                .into_iter()
                .map(|(story, usage)| {
                    let mut html = String::with_capacity(640);
                    card::card(&mut html, view, story, usage);
                    let meta = &story.meta;
                    CardHtml {
                        id: story.id().to_string(),
                        digest: xxhash_rust::xxh3::xxh3_64(html.as_bytes()),
                        html,
                        find: Findable::new(&meta.title, &story.slug, story.id(), &meta.labels),
                    }
                })
                .collect();
            (column, cards)
        })
        .collect();
    let mut broken = String::new();
    let unreadable = &view.board.broken;
    if !unreadable.is_empty() {
        let _ = write!(
            broken,
            "<section class=\"broken\"><h2>Unreadable story files ({})</h2><ul>",
            unreadable.len()
        );
        // A board of thousands of broken files must not make a page of megabytes.
        for err in unreadable.iter().take(BROKEN_SHOWN) {
            broken.push_str("<li><code>");
            esc!(&mut broken, &err.to_string());
            broken.push_str("</code></li>");
        }
        if unreadable.len() > BROKEN_SHOWN {
            let _ = write!(
                broken,
                "<li>and {} more</li>",
                unreadable.len() - BROKEN_SHOWN
            );
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

/// The most unreadable files the page names; `validate` names them all.
const BROKEN_SHOWN: usize = 50;
/// The most labels the search offers to complete.
const LABELS_OFFERED: usize = 200;

/// The labels on the board, most used first, for the label filter to offer.
fn labels(out: &mut String, view: &BoardView) {
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for story in &view.board.stories {
        for label in &story.meta.labels {
            *uses.entry(label.as_str()).or_default() += 1;
        }
    }
    let mut labels: Vec<(&str, usize)> = uses.into_iter().collect();
    labels.sort_by(|(a, m), (b, n)| n.cmp(m).then(a.cmp(b)));
    out.push_str("<datalist id=\"labels\">");
    for (label, _) in labels.into_iter().take(LABELS_OFFERED) {
        out.push_str("<option value=\"");
        esc!(out, label);
        out.push_str("\"></option>");
    }
    out.push_str("</datalist>\n");
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
                out.push_str(" <form method=\"post\" class=\"inline\" data-act action=\"/story/");
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
            out.push_str("<span class=\"running\">");
            out.push_str(icons::PLAY);
            out.push_str("Run ");
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
