//! `report --html`: one self-contained page (no scripts, fonts or images from anywhere) with the
//! report's tables and a timeline drawn in inline SVG: one lane per story, one bar per action,
//! coloured by outcome. The markup is well-formed XML, so any parser can check it.

use std::fmt::Write;

use super::{format_cost, format_duration, parse_time, RunReport, StoryReport};

const LANE_HEIGHT: u32 = 28;
const LABEL_WIDTH: u32 = 220;
const CHART_WIDTH: u32 = 760;

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

fn colour(outcome: &str) -> &'static str {
    match outcome {
        "completed" => "#2e9d57",
        "failed" => "#d64545",
        "stopped" => "#e39b2d",
        "blocked" => "#8a4fd1",
        "waiting" => "#3d7fd6",
        _ => "#9aa3ad",
    }
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
            "<text x=\"4\" y=\"{}\" class=\"lane\">{}</text>",
            y + 18,
            escape(&story.slug)
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
            let w = (length / span * CHART_WIDTH as f64).max(2.0);
            let _ = writeln!(
                page,
                "<rect x=\"{x:.1}\" y=\"{}\" width=\"{w:.1}\" height=\"{}\" rx=\"3\" fill=\"{}\" class=\"{}\"><title>{}</title></rect>",
                y + 5,
                LANE_HEIGHT - 10,
                colour(&action.outcome),
                escape(&action.outcome),
                escape(&format!(
                    "{} {}: {} in {}{}",
                    story.slug,
                    action.action_type,
                    action.outcome,
                    format_duration(action.duration_ms),
                    action.detail.as_deref().map_or(String::new(), |d| format!(" ({d})"))
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
    page.push_str("<p class=\"legend\"><span class=\"completed\">completed</span> <span class=\"failed\">failed</span> <span class=\"stopped\">stopped</span> <span class=\"blocked\">blocked</span> <span class=\"waiting\">waiting</span> <span class=\"interrupted\">interrupted</span></p>\n");
}

fn result_of(story: &StoryReport) -> String {
    match (&story.merged_commit, &story.blocked_reason) {
        (_, Some(reason)) if story.outcome == "blocked" => reason.clone(),
        (Some(commit), _) => format!("merged {}", commit.chars().take(7).collect::<String>()),
        _ => String::new(),
    }
}

fn stories_table(page: &mut String, report: &RunReport) {
    page.push_str("<h2>Stories</h2>\n<table>\n<thead><tr><th>Story</th><th>Outcome</th><th>Actions</th><th>Reworks</th><th>Tokens</th><th>Cost</th><th>Result</th><th>Next</th></tr></thead>\n<tbody>\n");
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
            "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{next}</td></tr>",
            escape(&story.outcome),
            escape(&story.slug),
            escape(&story.outcome),
            story.actions.len(),
            story.reworks,
            story.tokens,
            escape(&format_cost(story.cost_usd)),
            escape(&result_of(story)),
        );
    }
    page.push_str("</tbody>\n</table>\n");
}

fn details(page: &mut String, report: &RunReport) {
    page.push_str("<h2>Actions</h2>\n<table>\n<thead><tr><th>Story</th><th>Action</th><th>Outcome</th><th>Duration</th><th>Tokens</th><th>Cost</th><th>Detail</th></tr></thead>\n<tbody>\n");
    for story in &report.stories {
        for action in &story.actions {
            let _ = writeln!(
                page,
                "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&action.outcome),
                escape(&story.slug),
                escape(&action.action_type),
                escape(&action.outcome),
                escape(&format_duration(action.duration_ms)),
                action.tokens,
                escape(&format_cost(action.cost_usd)),
                escape(action.detail.as_deref().unwrap_or("")),
            );
        }
    }
    page.push_str("</tbody>\n</table>\n");
    let gates: Vec<_> = report
        .stories
        .iter()
        .flat_map(|s| s.gates.iter().map(move |g| (s, g)))
        .collect();
    if gates.is_empty() {
        return;
    }
    page.push_str("<h2>Gate decisions</h2>\n<table>\n<thead><tr><th>Story</th><th>Phase</th><th>Attempt</th><th>Decision</th><th>Feedback</th></tr></thead>\n<tbody>\n");
    for (story, gate) in gates {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&story.slug),
            escape(&gate.phase),
            gate.attempt,
            escape(&gate.decision),
            escape(gate.feedback.as_deref().unwrap_or("")),
        );
    }
    page.push_str("</tbody>\n</table>\n");
}

const STYLE: &str = "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em;color:#1d232a}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\
dl.summary{display:grid;grid-template-columns:max-content auto;gap:.2em 1em}dt{font-weight:600}dd{margin:0}\
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #dde2e7;padding:.3em .5em;text-align:left;vertical-align:top}\
th{background:#f3f5f7}tr.blocked td:nth-child(2),tr.failed td:nth-child(3){color:#b02a2a;font-weight:600}\
code{background:#f3f5f7;padding:0 .25em;border-radius:3px}\
svg.timeline{background:#fafbfc;border:1px solid #dde2e7;border-radius:4px}svg text{font-size:12px;fill:#1d232a}svg text.axis{fill:#6b7580}\
.legend span{display:inline-block;padding:0 .6em;border-radius:3px;color:#fff;margin-right:.4em}\
.legend .completed{background:#2e9d57}.legend .failed{background:#d64545}.legend .stopped{background:#e39b2d}.legend .blocked{background:#8a4fd1}.legend .waiting{background:#3d7fd6}.legend .interrupted{background:#9aa3ad}\
.warning{color:#b02a2a}.note{color:#6b7580}";
