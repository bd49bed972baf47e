//! What part of the board a page asks for: a search and filter by text, label and column, and
//! how far down each column it has unfolded. The server filters, so that a story folded away
//! below a column's first cards is found as surely as one on screen, and a live refresh of a
//! filtered page stays filtered (docs/design.md, "The board as a place to work").

use serde::Deserialize;

use crate::board::Column;
use crate::error::Result;
use crate::front::moving::column_named;

/// The cards a page shows of each column, in board order.
pub(crate) type Shown = [usize; Column::ALL.len()];

/// The query of the board page and of its fragments, as the page's address carries it.
#[derive(Debug, Default, Deserialize)]
pub(super) struct BoardQuery {
    /// The render the asking page shows; it is sent what changed since.
    pub since: Option<u64>,
    /// Words that must all be in a story's title, slug or id, in any case.
    #[serde(default)]
    pub q: String,
    /// A label the story must carry, in any case.
    #[serde(default)]
    pub label: String,
    /// The one column to show; empty for all.
    #[serde(default)]
    pub column: String,
    /// How many cards the page shows of each column, in board order, comma-separated: what it
    /// unfolded, kept when it is sent the whole board again.
    #[serde(default)]
    pub show: String,
}

impl BoardQuery {
    pub(super) fn filter(&self) -> Result<Filter> {
        let column = match self.column.trim() {
            "" => None,
            name => Some(column_named(name)?),
        };
        Ok(Filter {
            words: self.q.split_whitespace().map(str::to_lowercase).collect(),
            label: Some(self.label.trim().to_lowercase()).filter(|l| !l.is_empty()),
            column,
        })
    }

    /// The cards to show of each column: what the page asked for, and at least `first` (a
    /// number that is not one is `first`).
    pub(super) fn shown(&self, first: usize) -> Shown {
        let mut shown = [first; Column::ALL.len()];
        for (slot, asked) in shown.iter_mut().zip(self.show.split(',')) {
            if let Ok(asked) = asked.trim().parse::<usize>() {
                *slot = asked.max(first);
            }
        }
        shown
    }

    /// Whether the page asks for the board as it is first shown (and as it is kept).
    pub(super) fn is_first_view(&self, filter: &Filter, first: usize) -> bool {
        filter.is_empty() && self.shown(first) == [first; Column::ALL.len()]
    }
}

/// Which stories a page lists.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Filter {
    /// Lower case; every one must be found.
    words: Vec<String>,
    /// Lower case.
    label: Option<String>,
    column: Option<Column>,
}

/// What a card is found by: the text searched and its labels, both lower case.
#[derive(Debug, Clone, Default)]
pub(crate) struct Findable {
    pub text: String,
    pub labels: Vec<String>,
}

impl Findable {
    pub(crate) fn new(title: &str, slug: &str, id: &str, labels: &[String]) -> Findable {
        Findable {
            text: format!("{title}\n{slug}\n{id}").to_lowercase(),
            labels: labels.iter().map(|l| l.to_lowercase()).collect(),
        }
    }
}

impl Filter {
    /// Lists everything.
    pub(super) fn is_empty(&self) -> bool {
        self.words.is_empty() && self.label.is_none() && self.column.is_none()
    }

    /// Whether `column` is shown at all.
    pub(super) fn shows_column(&self, column: Column) -> bool {
        self.column.is_none_or(|wanted| wanted == column)
    }

    /// Whether a card in `column` is listed.
    pub(super) fn matches(&self, column: Column, card: &Findable) -> bool {
        self.shows_column(column)
            && self.label.as_ref().is_none_or(|l| card.labels.contains(l))
            && self.words.iter().all(|w| card.text.contains(w.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(q: &str, label: &str, column: &str) -> Filter {
        BoardQuery {
            q: q.into(),
            label: label.into(),
            column: column.into(),
            ..BoardQuery::default()
        }
        .filter()
        .unwrap()
    }

    #[test]
    fn every_word_label_and_column_must_match() {
        let card = Findable::new(
            "Export the Report as CSV",
            "export-report",
            "story-abc",
            &["UI".to_string(), "export".to_string()],
        );
        for (q, label, column, listed) in [
            ("", "", "", true),
            ("csv", "", "", true),
            ("REPORT csv", "", "", true),
            ("report pdf", "", "", false),
            ("story-abc", "", "", true),
            ("", "ui", "", true),
            ("", "Export", "", true),
            ("", "backend", "", false),
            ("csv", "ui", "backlog", true),
            ("csv", "ui", "ready", false),
            ("", "", "in_progress", false),
        ] {
            assert_eq!(
                query(q, label, column).matches(Column::Backlog, &card),
                listed,
                "q={q:?} label={label:?} column={column:?}"
            );
        }
        assert!(query("", "", "").is_empty());
        assert!(!query(" x ", "", "").is_empty());
        assert!(query("", "", "done").shows_column(Column::Done));
        assert!(!query("", "", "done").shows_column(Column::Ready));
    }

    #[test]
    fn unfolding_is_read_leniently_and_never_shows_less_than_the_first_cards() {
        let asked = BoardQuery {
            show: "120,x,10,,300".into(),
            ..BoardQuery::default()
        };
        assert_eq!(asked.shown(30), [120, 30, 30, 30, 300]);
        assert_eq!(BoardQuery::default().shown(30), [30; 5]);
        assert!(BoardQuery::default().is_first_view(&Filter::default(), 30));
        assert!(!asked.is_first_view(&Filter::default(), 30));
    }

    #[test]
    fn an_unknown_column_is_refused() {
        let err = BoardQuery {
            column: "archive".into(),
            ..BoardQuery::default()
        }
        .filter()
        .unwrap_err();
        assert!(
            err.to_string().contains("unknown column `archive`"),
            "{err}"
        );
    }
}
