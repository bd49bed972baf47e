//! When a model that still calls tools is done reading, and its next reply is its budget's
//! last (docs/design.md §21, "Every phase ends").

use serde_json::json;

use crate::agents::transcript::Transcript;

/// Turns in a row of nothing but calls answered "already done" after which the model is asked
/// for its answer.
const REPEATS_BEFORE_ANSWER: u32 = 2;

/// Writes a read-only agent tries after which its next reply is its last with tools: the
/// first is answered that it may not, and may be a slip.
const WRITES_BEFORE_ANSWER: usize = 2;

/// What the turns so far say of a model's reading.
#[derive(Default)]
pub(super) struct DoneReading {
    /// Turns in a row whose calls were all answered "already done".
    only_repeats: u32,
    /// Writes tried by an agent that is given no tool to write with.
    writes_refused: usize,
}

/// Why a model is done reading.
pub(super) enum Reason {
    /// It only asks again for what it has read.
    OnlyRepeats,
    /// A read-only agent tried again to write the change: it knows what it would change, and
    /// answers without tools. The 1.5B model's plan of `format_price` wrote the file in every
    /// other turn, 40 seconds each, until its 12 turns were spent (5.5 of a story's 10
    /// minutes, inventory, 2026-11-29).
    WritesRefused(usize),
}

impl DoneReading {
    /// Takes in one turn: whether its reply repeated one call until its cap (`stutters`),
    /// whether all its calls were answered "already done", and how many writes it tried that
    /// the agent may not make. Says why the model is done reading, when it is.
    pub(super) fn after_turn(
        &mut self,
        stutters: bool,
        only_already_done: bool,
        writes_refused: usize,
    ) -> Option<Reason> {
        self.only_repeats = if stutters {
            // A reply that repeats one call until its cap is done reading, as surely as two
            // replies of repeats are.
            REPEATS_BEFORE_ANSWER
        } else if only_already_done {
            self.only_repeats + 1
        } else {
            0
        };
        self.writes_refused += writes_refused;
        if self.only_repeats >= REPEATS_BEFORE_ANSWER {
            Some(Reason::OnlyRepeats)
        } else if self.writes_refused >= WRITES_BEFORE_ANSWER {
            Some(Reason::WritesRefused(self.writes_refused))
        } else {
            None
        }
    }
}

impl Reason {
    /// Records in `transcript` that the reply after `turn` is the last with tools, and why.
    pub(super) fn record(&self, transcript: &Transcript, turn: u32) {
        match self {
            Reason::OnlyRepeats => transcript.record(
                "only_repeats",
                json!({"turn": turn, "action": "the next reply is the last with tools"}),
            ),
            Reason::WritesRefused(writes) => transcript.record(
                "writes_refused",
                json!({"turn": turn, "writes": writes, "action": "tools withdrawn; asked for the answer"}),
            ),
        }
    }
}
