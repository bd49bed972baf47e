//! Bringing an open board page up to date by sending it only what changed.
//!
//! On a board of thousands of stories the whole fragment is megabytes of HTML, and a browser
//! takes seconds to put that many cards in place again. Each render is numbered, and the server
//! remembers, for the last few renders, which cards were in which column with which content.
//! A page says which render it shows; it gets back the cards that are new or changed (each with
//! the card it now follows in its column), the ones that are gone, the column counts and the
//! status line. Cards whose content and column did not change keep their place: the order in a
//! column is by priority and id, which are part of a card's content.
//!
//! A page shows only the first cards of a long column. A changed card is placed after the card
//! before it only when the page shows that card: one that belongs below the fold stays folded,
//! and what a page shows stays the head of each column.
//!
//! A filtered page is sent the changed cards its filter lists, each placed after the listed
//! card before it; a changed card it no longer lists is among the removed. A card that did not
//! change cannot have started or stopped matching: what a filter reads (title, slug, id,
//! labels, column) is all in the card or its column.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use super::filter::Filter;
use super::pages::board::{count_text, BoardRender};
use crate::board::Column;

/// How many renders a page may be behind and still get a patch rather than the whole board.
const REMEMBERED: usize = 8;

/// What a page showing one render holds: each card's column and digest.
struct Shown {
    render: u64,
    cards: HashMap<String, (Column, u64)>,
}

/// The last few renders, newest last.
#[derive(Default)]
pub(super) struct History(VecDeque<Shown>);

impl History {
    /// Remembers a new render under its number.
    pub(super) fn remember(&mut self, render: u64, board: &BoardRender) {
        let cards = board
            .columns
            .iter()
            .flat_map(|(column, cards)| {
                cards
                    .iter()
                    .map(move |c| (c.id.clone(), (*column, c.digest)))
            })
            .collect();
        self.0.push_back(Shown { render, cards });
        while self.0.len() > REMEMBERED {
            self.0.pop_front();
        }
    }

    /// What turns a page that shows render `since`, filtered by `filter`, into `board` (render
    /// `render`); `None` when `since` is too old (or unknown), and the page needs the whole
    /// board.
    pub(super) fn patch<'a>(
        &self,
        since: u64,
        render: u64,
        board: &'a BoardRender,
        filter: &Filter,
    ) -> Option<Patch<'a>> {
        let old = self.0.iter().find(|shown| shown.render == since)?;
        let mut changed = Vec::new();
        let mut removed = Vec::new();
        let mut present = std::collections::HashSet::new();
        let mut counts = Vec::new();
        for (column, cards) in &board.columns {
            let mut after: Option<&str> = None;
            let mut listed = 0;
            for card in cards {
                present.insert(card.id.as_str());
                let same = old.cards.get(&card.id) == Some(&(*column, card.digest));
                if !filter.matches(*column, &card.find) {
                    if !same {
                        removed.push(card.id.clone());
                    }
                    continue;
                }
                listed += 1;
                if !same {
                    changed.push(CardPatch {
                        id: &card.id,
                        column: column.name(),
                        after,
                        html: &card.html,
                    });
                }
                after = Some(&card.id);
            }
            counts.push(ColumnCount {
                column: column.name(),
                listed,
                text: count_text(listed, cards.len()),
            });
        }
        removed.extend(
            old.cards
                .keys()
                .filter(|id| !present.contains(id.as_str()))
                .cloned(),
        );
        Some(Patch {
            render,
            status: &board.status,
            broken: &board.broken,
            counts,
            removed,
            changed,
        })
    }
}

/// The patch a page applies, as JSON.
#[derive(Debug, Serialize)]
pub(super) struct Patch<'a> {
    /// The render the page shows once it applied this.
    pub render: u64,
    pub status: &'a str,
    pub broken: &'a str,
    pub counts: Vec<ColumnCount>,
    /// Cards no longer on the board.
    pub removed: Vec<String>,
    /// New and changed cards, in board order.
    pub changed: Vec<CardPatch<'a>>,
}

/// A column's count after the patch.
#[derive(Debug, PartialEq, Serialize)]
pub(super) struct ColumnCount {
    pub column: &'static str,
    /// The cards the page's filter lists there, shown or folded: what the page compares with
    /// the cards it shows, to say how many more it holds back.
    pub listed: usize,
    /// As the column's heading says it.
    pub text: String,
}

#[derive(Debug, Serialize)]
pub(super) struct CardPatch<'a> {
    pub id: &'a str,
    pub column: &'static str,
    /// The card it follows in its column; `None` when it comes first.
    pub after: Option<&'a str>,
    pub html: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::filter::{BoardQuery, Findable};
    use crate::serve::pages::board::CardHtml;

    fn card(id: &str, content: &str) -> CardHtml {
        CardHtml {
            id: id.into(),
            html: format!("<article id=\"card-{id}\">{content}</article>"),
            digest: xxhash_rust::xxh3::xxh3_64(content.as_bytes()),
            find: Findable::new(content, id, id, &[]),
        }
    }

    fn board(backlog: Vec<CardHtml>, done: Vec<CardHtml>) -> BoardRender {
        BoardRender {
            status: "<p>status</p>".into(),
            columns: vec![(Column::Backlog, backlog), (Column::Done, done)],
            broken: String::new(),
        }
    }

    #[test]
    fn only_new_changed_moved_and_removed_cards_are_sent() {
        let mut history = History::default();
        let first = board(
            vec![card("a", "A"), card("b", "B"), card("c", "C")],
            vec![card("d", "D")],
        );
        history.remember(1, &first);
        // b moves to done, c changes, d is deleted, e is new.
        let second = board(
            vec![card("a", "A"), card("c", "C2"), card("e", "E")],
            vec![card("b", "B")],
        );
        let patch = history
            .patch(1, 2, &second, &Filter::default())
            .expect("render 1 is remembered");
        let changed: Vec<(&str, &str, Option<&str>)> = patch
            .changed
            .iter()
            .map(|c| (c.id, c.column, c.after))
            .collect();
        assert_eq!(
            changed,
            [
                ("c", "backlog", Some("a")),
                ("e", "backlog", Some("c")),
                ("b", "done", None)
            ]
        );
        assert_eq!(patch.removed, ["d"]);
        let counts: Vec<(&str, usize, &str)> = patch
            .counts
            .iter()
            .map(|c| (c.column, c.listed, c.text.as_str()))
            .collect();
        assert_eq!(counts, [("backlog", 3, "3"), ("done", 1, "1")]);
        assert_eq!(patch.render, 2);

        history.remember(2, &second);
        let nothing = history.patch(2, 3, &second, &Filter::default()).unwrap();
        assert!(nothing.changed.is_empty() && nothing.removed.is_empty());
    }

    #[test]
    fn a_filtered_page_gets_what_it_lists_and_loses_what_it_no_longer_lists() {
        let mut history = History::default();
        history.remember(
            1,
            &board(
                vec![card("a", "keep a"), card("b", "other"), card("c", "keep c")],
                vec![card("d", "other d")],
            ),
        );
        // b now matches, c no longer does, d did not change and is not listed.
        let now = board(
            vec![card("a", "keep a"), card("b", "keep b"), card("c", "drop")],
            vec![card("d", "other d")],
        );
        let filter = BoardQuery {
            q: "KEEP".into(),
            ..BoardQuery::default()
        }
        .filter()
        .unwrap();
        let patch = history.patch(1, 2, &now, &filter).unwrap();
        let changed: Vec<(&str, Option<&str>)> =
            patch.changed.iter().map(|c| (c.id, c.after)).collect();
        assert_eq!(changed, [("b", Some("a"))]);
        assert_eq!(patch.removed, ["c"]);
        let counts: Vec<(&str, usize, &str)> = patch
            .counts
            .iter()
            .map(|c| (c.column, c.listed, c.text.as_str()))
            .collect();
        assert_eq!(counts, [("backlog", 2, "2 of 3"), ("done", 0, "0 of 1")]);
    }

    #[test]
    fn a_page_too_far_behind_gets_the_whole_board() {
        let mut history = History::default();
        let shown = board(vec![card("a", "A")], vec![]);
        for render in 1..=(REMEMBERED as u64 + 1) {
            history.remember(render, &shown);
        }
        assert!(
            history.patch(1, 20, &shown, &Filter::default()).is_none(),
            "forgotten"
        );
        assert!(history.patch(2, 20, &shown, &Filter::default()).is_some());
        assert!(
            history.patch(99, 100, &shown, &Filter::default()).is_none(),
            "never rendered"
        );
    }
}
