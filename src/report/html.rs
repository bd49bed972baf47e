//! `report --html`: one self-contained page (no scripts, fonts or images from anywhere) with the
//! report's tables and a timeline drawn in inline SVG: one lane per story, one bar per action,
//! coloured by outcome. The markup is well-formed XML, so any parser can check it.

use std::fmt::Write;

use super::run_report::{format_cost, format_duration, parse_time, ActionOutcome, RunReport};

const LANE_HEIGHT: u32 = 28;
const LABEL_WIDTH: u32 = 220;
const CHART_WIDTH: u32 = 760;
/// The narrowest bar of an action that went wrong: a block or a rejection can take a
/// millisecond, and must still be seen.
const NOTABLE_MIN_WIDTH: f64 = 14.0;
/// Characters of a lane's label (slug and title) that fit beside the chart.
const LABEL_CHARS: usize = 34;

/// Escapes text for element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text);
    out
}

/// Appends `text` to `out`, escaped as [`escape`] does, for pages built in one buffer.
pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r') => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

/// The outcomes a timeline draws, with their colours, in legend order.
const OUTCOMES: [(ActionOutcome, &str); 8] = [
    (ActionOutcome::Completed, "#2e9d57"),
    (ActionOutcome::Rejected, "#c2410c"),
    (ActionOutcome::Failed, "#d64545"),
    (ActionOutcome::Stopped, "#e39b2d"),
    (ActionOutcome::Blocked, "#8a4fd1"),
    (ActionOutcome::Waiting, "#3d7fd6"),
    (ActionOutcome::Running, "#14b8a6"),
    (ActionOutcome::Interrupted, "#9aa3ad"),
];

fn colour(outcome: ActionOutcome) -> &'static str {
    OUTCOMES
        .iter()
        .find(|(known, _)| *known == outcome)
        .map_or("#9aa3ad", |(_, colour)| colour)
}

/// A lane's label: the slug and as much of the title as fits.
fn lane_label(label: &str) -> String {
    if label.chars().count() <= LABEL_CHARS {
        return label.to_string();
    }
    let cut: String = label.chars().take(LABEL_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

pub fn render(report: &RunReport) -> String {
    let mut page = String::new();
    let title = format!("agentic-sdlc run {}", report.run_id);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    summary(&mut page, report);
    timeline(&mut page, report);
    stories_table(&mut page, report);
    details(&mut page, report);
    page.push_str("</body>\n</html>\n");
    page
}

fn summary(page: &mut String, report: &RunReport) {
    let totals = &report.totals;
    let exit = report.exit_code.map_or(
        "none: the run was interrupted before it finished".to_string(),
        |c| c.to_string(),
    );
    let _ = write!(
        page,
        "<dl class=\"summary\">\n<dt>Started</dt><dd>{}</dd>\n<dt>Took</dt><dd>{}</dd>\n<dt>Exit code</dt><dd>{}</dd>\n<dt>Result</dt><dd>{}</dd>\n<dt>Model</dt><dd>{}</dd>\n<dt>Totals</dt><dd>{}</dd>\n</dl>\n",
        escape(report.started_at.as_deref().unwrap_or("unknown")),
        escape(&format_duration(totals.duration_ms)),
        escape(&exit),
        escape(report.message.as_deref().unwrap_or("")),
        escape(report.model.as_deref().unwrap_or("unknown")),
        escape(&totals.summary()),
    );
    if !report.unpriced_models.is_empty() {
        let _ = writeln!(
            page,
            "<p class=\"note\">No price for {}: set <code>pricing</code> to see costs.</p>",
            escape(&report.unpriced_models.join(", "))
        );
    }
    for warning in &report.warnings {
        let _ = writeln!(page, "<p class=\"warning\">{}</p>", escape(warning));
    }
}

fn timeline(page: &mut String, report: &RunReport) {
    let Some(start) = report.started_at.as_deref().and_then(parse_time) else {
        return;
    };
    let span = report.totals.duration_ms.unwrap_or(0).max(1) as f64;
    let lanes = report.stories.len().max(1) as u32;
    let height = lanes * LANE_HEIGHT + 24;
    let width = LABEL_WIDTH + CHART_WIDTH + 10;
    let _ = write!(
        page,
        "<h2>Timeline</h2>\n<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"Actions per story over time\">\n"
    );
    for (lane, story) in report.stories.iter().enumerate() {
        let y = lane as u32 * LANE_HEIGHT;
        let _ = writeln!(
            page,
            "<text x=\"4\" y=\"{}\" class=\"lane\" data-slug=\"{}\">{}<title>{}</title></text>",
            y + 18,
            escape(&story.slug),
            escape(&lane_label(&story.label())),
            escape(&story.label())
        );
        for action in &story.actions {
            let Some(begun) = action.started_at.as_deref().and_then(parse_time) else {
                continue;
            };
            let offset = (begun - start).num_milliseconds().max(0) as f64;
            let length = action
                .duration_ms
                .map_or(span - offset, |d| d as f64)
                .max(0.0);
            let x = LABEL_WIDTH as f64 + offset / span * CHART_WIDTH as f64;
            let notable = action.outcome != ActionOutcome::Completed;
            let min_width = if notable { NOTABLE_MIN_WIDTH } else { 2.0 };
            // A short bar at the end of the chart grows to the left, so it stays inside it.
            let w = (length / span * CHART_WIDTH as f64).max(min_width);
            let x = x.min((LABEL_WIDTH + CHART_WIDTH) as f64 - w);
            let _ = writeln!(
                page,
                "<rect x=\"{x:.1}\" y=\"{}\" width=\"{w:.1}\" height=\"{}\" rx=\"3\" fill=\"{}\" class=\"{}\"><title>{}</title></rect>",
                y + 5,
                LANE_HEIGHT - 10,
                colour(action.outcome),
                action.outcome.name(),
                escape(&format!(
                    "{} {}: {} in {}{}{}",
                    story.slug,
                    action.action_type,
                    action.outcome,
                    format_duration(action.duration_ms),
                    action.detail.as_deref().map_or(String::new(), |d| format!(" ({d})")),
                    action.feedback.as_deref().map_or(String::new(), |f| format!(": {f}"))
                )),
            );
        }
    }
    let axis = lanes * LANE_HEIGHT + 16;
    let _ = write!(
        page,
        "<text x=\"{LABEL_WIDTH}\" y=\"{axis}\" class=\"axis\">0s</text>\n<text x=\"{}\" y=\"{axis}\" class=\"axis\" text-anchor=\"end\">{}</text>\n</svg>\n",
        LABEL_WIDTH + CHART_WIDTH,
        escape(&format_duration(report.totals.duration_ms))
    );
    page.push_str("<p class=\"legend\">");
    for (outcome, _) in OUTCOMES {
        let _ = write!(page, "<span class=\"{outcome}\">{outcome}</span> ");
    }
    page.push_str("</p>\n");
}

fn stories_table(page: &mut String, report: &RunReport) {
    page.push_str("<h2>Stories</h2>\n<table class=\"stories\">\n<thead><tr><th>Story</th><th>Title</th><th>Outcome</th><th>Actions</th><th>Reworks</th><th>Tokens</th><th>Cost</th><th>Result</th><th>Next</th></tr></thead>\n<tbody>\n");
    for story in &report.stories {
        let next = match (&story.next_command, &story.next_note) {
            (Some(command), Some(note)) => {
                format!("<code>{}</code> ({})", escape(command), escape(note))
            }
            (Some(command), None) => format!("<code>{}</code>", escape(command)),
            _ => String::new(),
        };
        let _ = writeln!(
            page,
            "<tr><td class=\"slug\">{}</td><td class=\"title\">{}</td><td class=\"outcome {}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"result\">{}</td><td class=\"next\">{next}</td></tr>",
            escape(&story.slug),
            escape(story.title.as_deref().unwrap_or("")),
            story.outcome.name(),
            story.outcome.name(),
            story.actions.len(),
            story.reworks,
            story.tokens,
            escape(&format_cost(story.cost_usd)),
            escape(&story.result()),
        );
    }
    page.push_str("</tbody>\n</table>\n");
}

fn details(page: &mut String, report: &RunReport) {
    page.push_str("<h2>Actions</h2>\n<table class=\"actions\">\n<thead><tr><th>Story</th><th>Action</th><th>Outcome</th><th>Duration</th><th>Tokens</th><th>Cost</th><th>Detail</th></tr></thead>\n<tbody>\n");
    for story in &report.stories {
        for action in &story.actions {
            let detail = match (&action.detail, &action.feedback) {
                (Some(detail), Some(feedback)) => format!("{detail}: {feedback}"),
                (Some(detail), None) => detail.clone(),
                (None, Some(feedback)) => feedback.clone(),
                (None, None) => String::new(),
            };
            let _ = writeln!(
                page,
                "<tr><td class=\"slug\">{}</td><td>{}</td><td class=\"outcome {}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"detail\">{}</td></tr>",
                escape(&story.slug),
                action.action_type.name(),
                action.outcome.name(),
                action.outcome.name(),
                escape(&format_duration(action.duration_ms)),
                action.tokens,
                escape(&format_cost(action.cost_usd)),
                escape(&detail),
            );
        }
    }
    page.push_str("</tbody>\n</table>\n");
    reviews(page, report);
    gates(page, report);
}

fn reviews(page: &mut String, report: &RunReport) {
    let rows: Vec<String> = report
        .stories
        .iter()
        .flat_map(|story| {
            story.reviews.iter().map(move |review| {
                format!(
                    "<tr><td class=\"slug\">{}</td><td class=\"decision {}\">{}</td><td>{}</td><td class=\"feedback\">{}</td></tr>",
                    escape(&story.slug),
                    escape(&review.decision.to_ascii_lowercase()),
                    escape(&review.decision),
                    review.blockers,
                    escape(review.feedback.as_deref().unwrap_or("")),
                )
            })
        })
        .collect();
    section_table(
        page,
        ("Reviews", "reviews"),
        &["Story", "Decision", "Blockers", "Feedback"],
        &rows,
    );
}

fn gates(page: &mut String, report: &RunReport) {
    let rows: Vec<String> = report
        .stories
        .iter()
        .flat_map(|story| {
            story.gates.iter().map(move |gate| {
                format!(
                    "<tr><td class=\"slug\">{}</td><td>{}</td><td>{}</td><td class=\"decision {}\">{}</td><td class=\"feedback\">{}</td></tr>",
                    escape(&story.slug),
                    escape(&gate.phase),
                    gate.attempt,
                    escape(&gate.decision.to_ascii_lowercase()),
                    escape(&gate.decision),
                    escape(gate.feedback.as_deref().unwrap_or("")),
                )
            })
        })
        .collect();
    section_table(
        page,
        ("Gate decisions", "gates"),
        &["Story", "Phase", "Attempt", "Decision", "Feedback"],
        &rows,
    );
}

/// A heading and a table of rendered rows, left out when there are none.
fn section_table(
    page: &mut String,
    (heading, class): (&str, &str),
    header: &[&str],
    rows: &[String],
) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        page,
        "<h2>{heading}</h2>\n<table class=\"{class}\">\n<thead><tr>"
    );
    for name in header {
        let _ = write!(page, "<th>{name}</th>");
    }
    page.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        page.push_str(row);
        page.push('\n');
    }
    page.push_str("</tbody>\n</table>\n");
}

const STYLE: &str = "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em;color:#1d232a}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\
dl.summary{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:600}dd{margin:0}\
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #dde2e7;padding:.3em .5em;text-align:left;vertical-align:top}\
th{background:#f3f5f7}td.outcome.failed,td.outcome.blocked,td.outcome.rejected,td.decision.rejected,td.decision.reject{color:#b02a2a;font-weight:600}\
td.outcome.done,td.outcome.completed,td.decision.approved,td.decision.approve{color:#1f7a43}td.title{color:#4a5560}\
code{background:#f3f5f7;padding:0 .25em;border-radius:3px}\
svg.timeline{background:#fafbfc;border:1px solid #dde2e7;border-radius:4px}svg text{font-size:12px;fill:#1d232a}svg text.axis{fill:#6b7580}\
.legend span{display:inline-block;padding:0 .6em;border-radius:3px;color:#fff;margin-right:.4em}\
.legend .completed{background:#2e9d57}.legend .rejected{background:#c2410c}.legend .failed{background:#d64545}.legend .stopped{background:#e39b2d}.legend .blocked{background:#8a4fd1}.legend .waiting{background:#3d7fd6}.legend .running{background:#14b8a6}.legend .interrupted{background:#9aa3ad}\
.warning{color:#b02a2a}.note{color:#6b7580}";
