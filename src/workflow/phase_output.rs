//! A phase's output in its story (docs/design.md §3): where an accepted output is written, and
//! where a re-run finds the output it revises.

use crate::board::{sections, Column, Phase, Story};

/// Writes a phase's accepted output into its section(s) and sets its flag or column.
pub fn write_into(story: &mut Story, phase: Phase, output: &str) {
    match phase {
        Phase::Refine => {
            let summary = sections::get(output, "Summary");
            let criteria = sections::get(output, "Acceptance Criteria");
            if summary.is_none() && criteria.is_none() {
                story.set_section("Summary", &sections::nest(output, "Summary"));
            } else {
                if let Some(summary) = summary {
                    story.set_section("Summary", &sections::nest(summary, "Summary"));
                }
                if let Some(criteria) = criteria {
                    story.set_section(
                        "Acceptance Criteria",
                        &sections::nest(criteria, "Acceptance Criteria"),
                    );
                }
            }
            if story.column == Column::Backlog {
                story.set_column(Column::Ready);
            }
        }
        Phase::Acceptance => {
            let paths = crate::workflow::fixed_tests::listed_paths(output);
            story.set_section(phase.section(), &sections::nest(output, phase.section()));
            story.set("acceptance_tests", &paths);
            story.set_phase_flag(phase, true);
        }
        Phase::Research | Phase::Plan | Phase::Implement => {
            story.set_section(phase.section(), &sections::nest(output, phase.section()));
            story.set_phase_flag(phase, true);
            // Only a finished implementation moves the story: a failed one stays in its column.
            if phase == Phase::Implement && story.column != Column::InProgress {
                story.set_column(Column::InProgress);
            }
        }
    }
}

/// The phase's current section(s), shown to its re-run as the previous output.
pub fn previous_output(story: &Story, phase: Phase) -> Option<String> {
    let text = match phase {
        Phase::Refine => {
            let summary = story.section("Summary").unwrap_or("");
            let criteria = story.section("Acceptance Criteria").unwrap_or("");
            format!("## Summary\n{summary}\n\n## Acceptance Criteria\n{criteria}")
        }
        other => story.section(other.section()).unwrap_or("").to_string(),
    };
    let empty = match phase {
        Phase::Refine => {
            story.section("Summary").unwrap_or("").is_empty()
                && story
                    .section("Acceptance Criteria")
                    .unwrap_or("")
                    .is_empty()
        }
        _ => text.trim().is_empty(),
    };
    (!empty).then_some(text)
}
