//! The story page: the story's fields and sections, the gate form a person decides with, its
//! dependencies, its timeline and its transcripts.

use std::fmt::Write;

use super::frame::{css_word, first_line, frame, time, Frame};
use super::{icons, markdown, tools};
use crate::board::StoryId;
use crate::report::{format_cost, format_duration};
use crate::serve::view::{PendingGate, StoryView};

pub fn story_page(view: &StoryView, fragment: &str, version: u64, notice: Option<&str>) -> String {
    let id = view.story.id();
    let mut header = String::from("<a class=\"back\" href=\"/\">← ");
    esc!(&mut header, &view.project);
    header.push_str("</a>");
    let mut body = String::new();
    if let Some(notice) = notice {
        body.push_str("<p class=\"notice\" id=\"notice\">");
        esc!(&mut body, notice);
        body.push_str("</p>\n");
    }
    body.push_str("<div id=\"story\">\n");
    body.push_str(fragment);
    body.push_str("</div>\n");
    let mut bar = String::new();
    tools::story_tools(&mut bar);
    let mut dialogs = String::new();
    tools::edit_dialog(&mut dialogs, id, &view.story.meta);
    tools::move_dialog(&mut dialogs);
    frame(
        Frame {
            title: &format!("{} · {}", view.story.meta.title, view.project),
            fragment_url: &format!("/fragment/story/{id}"),
            header: &header,
            tools: &bar,
            dialogs: &dialogs,
            version,
            render: None,
        },
        &body,
    )
}

/// Everything about one story: its keys, a waiting gate, its sections, its timeline and its
/// transcripts.
pub fn story_fragment(view: &StoryView) -> String {
    let story = &view.story;
    let meta = &story.meta;
    let mut out = String::with_capacity(8 * 1024);
    // What the edit and move forms open with: the story as the page shows it now.
    out.push_str("<h1 id=\"story-head\" data-story=\"");
    esc!(&mut out, story.id());
    out.push_str("\" data-title=\"");
    esc!(&mut out, &meta.title);
    let _ = write!(
        out,
        "\" data-priority=\"{}\" data-column=\"{}\" data-labels=\"",
        meta.priority,
        story.column.name()
    );
    esc!(&mut out, &meta.labels.join(", "));
    out.push_str("\">");
    esc!(&mut out, &meta.title);
    let _ = write!(
        out,
        " <span class=\"column-badge {0}\">{0}</span></h1>\n<dl class=\"meta\">",
        story.column.name()
    );
    let row = |out: &mut String, label: &str, value: &str| {
        out.push_str("<dt>");
        esc!(out, label);
        out.push_str("</dt><dd>");
        esc!(out, value);
        out.push_str("</dd>");
    };
    row(&mut out, "id", &meta.id);
    row(&mut out, "slug", &story.slug);
    row(&mut out, "type", meta.story_type.as_str());
    row(&mut out, "priority", &meta.priority.to_string());
    if !meta.labels.is_empty() {
        row(&mut out, "labels", &meta.labels.join(", "));
    }
    for key in ["assignee", "estimated_effort", "created", "updated"] {
        if let Ok(Some(value)) = story.get::<String>(key) {
            row(&mut out, key, &value);
        }
    }
    for (label, value) in [
        ("branch", meta.branch.as_deref()),
        ("base", meta.base_branch.as_deref()),
        ("merged", meta.merged_commit.as_deref()),
        ("pull request", meta.pr_url.as_deref()),
    ] {
        if let Some(value) = value {
            row(&mut out, label, value);
        }
    }
    row(
        &mut out,
        "reworks",
        &match meta.max_refinement_attempts {
            Some(limit) => format!("{} (limit {limit})", meta.refinement_count),
            None => meta.refinement_count.to_string(),
        },
    );
    let usage = &view.usage;
    if usage.requests > 0 {
        let mut spend = format!(
            "{} request(s), {} prompt + {} completion tokens",
            usage.requests, usage.prompt_tokens, usage.completion_tokens
        );
        if usage.cost_usd.is_some() {
            spend.push_str(&format!(", {}", format_cost(usage.cost_usd)));
        }
        row(&mut out, "spend", &spend);
    }
    out.push_str("</dl>\n");
    out.push_str("<div class=\"phases\">");
    let phases = crate::board::Phase::flagged()
        .map(|phase| (meta.phase_complete(phase, story.column), phase.name()));
    for (done, name) in phases.chain([(meta.reviews_complete, "reviews")]) {
        let _ = write!(
            out,
            "<span class=\"flag {}\">{name}</span>",
            if done { "on" } else { "off" }
        );
    }
    out.push_str("</div>\n");
    if let Some(error) = &meta.last_error {
        out.push_str("<p class=\"error\"><b>Last error:</b> ");
        esc!(&mut out, error);
        out.push_str("</p>\n");
    }
    if let Some(reason) = &meta.blocked_reason {
        out.push_str("<p class=\"blocked\"><b>Blocked:</b> ");
        esc!(&mut out, reason);
        let _ = write!(out, " · <code>agentic-sdlc unblock ");
        esc!(&mut out, &story.slug);
        // The strip's button, here too: a person who opened the story to read why it is
        // blocked unblocks it where they read it.
        out.push_str("</code> <form method=\"post\" class=\"inline\" data-act action=\"/story/");
        esc!(&mut out, story.id());
        out.push_str(
            "/unblock\"><button type=\"submit\" class=\"unblock\">Unblock</button></form></p>\n",
        );
    }
    if let Some(reason) = &view.waiting {
        out.push_str("<p class=\"waiting\">");
        out.push_str(icons::PAUSE);
        esc!(&mut out, reason);
        out.push_str("</p>\n");
    }
    if let Some(gate) = &view.pending {
        gate_form(&mut out, story.id(), gate);
    }
    dependencies(&mut out, view);
    // Text written above the sections by hand is part of the story, though no section holds it.
    let opening = crate::board::sections::opening(story.body()).text;
    if !opening.is_empty() {
        out.push_str("<section class=\"section opening\"><div class=\"markdown\">");
        out.push_str(&markdown::render(opening));
        out.push_str("</div></section>\n");
    }
    for (name, content) in story.non_empty_sections() {
        out.push_str("<section class=\"section\"><h2>");
        esc!(&mut out, &name);
        out.push_str("</h2><div class=\"markdown\">");
        out.push_str(&markdown::render(&content));
        out.push_str("</div></section>\n");
    }
    timeline(&mut out, view);
    transcripts(&mut out, view);
    out
}

/// The decision a person gives a waiting gate, under the rules of `decide`: what it judges
/// (the output, and for implement the change, file by file), by what (the criteria), which try
/// it is and what was said before.
fn gate_form(out: &mut String, story_id: &StoryId, gate: &PendingGate) {
    let phase = gate.phase;
    let _ = writeln!(
        out,
        "<section class=\"gate\" id=\"gate\"><h2>The {phase} review waits for your decision</h2>\n<p class=\"attempt\" id=\"gate-attempt\">Attempt {}</p>",
        gate.attempt
    );
    if let Some(criteria) = &gate.criteria {
        out.push_str("<div class=\"criteria\" id=\"gate-criteria\"><b>Judge it by:</b> ");
        esc!(out, criteria);
        out.push_str("</div>\n");
    }
    if let Some(feedback) = &gate.earlier_feedback {
        out.push_str("<div class=\"feedback\" id=\"gate-feedback\"><b>Said before:</b> ");
        esc!(out, feedback);
        out.push_str("</div>\n");
    }
    match &gate.output {
        Some(output) => {
            let _ = write!(
                out,
                "<p>What the {phase} phase produced:</p><div class=\"output markdown\">"
            );
            out.push_str(&markdown::render(output));
            out.push_str("</div>\n");
        }
        None => out.push_str(
            "<p>The output waiting for review is gone; retrying the phase makes a new one.</p>\n",
        ),
    }
    if !gate.diff.is_empty() {
        let (added, removed) = gate
            .diff
            .iter()
            .fold((0, 0), |(a, r), file| (a + file.added, r + file.removed));
        let _ = writeln!(
            out,
            "<div class=\"diff\" id=\"gate-diff\"><p>The change: {} file(s), +{added} −{removed}</p><ul class=\"files\">",
            gate.diff.len()
        );
        for file in &gate.diff {
            out.push_str("<li><code>");
            esc!(out, &file.path);
            let _ = write!(
                out,
                "</code> <span class=\"added\">+{}</span> <span class=\"removed\">−{}</span></li>",
                file.added, file.removed
            );
        }
        out.push_str("</ul>\n");
        // Each with an id: a live refresh of the page keeps the ones a person opened open.
        for (index, file) in gate.diff.iter().enumerate() {
            let _ = write!(
                out,
                "<details class=\"file-diff\" id=\"gate-file-{index}\"><summary>"
            );
            esc!(out, &file.path);
            out.push_str("</summary><pre>");
            esc!(out, &file.patch);
            out.push_str("</pre></details>\n");
        }
        out.push_str("</div>\n");
    }
    out.push_str("<form method=\"post\" action=\"/story/");
    esc!(out, story_id);
    out.push_str("/decide\">\n<label for=\"feedback\">Feedback for a retry, or the reason for a rejection (needed for both)</label>\n<textarea id=\"feedback\" name=\"feedback\" rows=\"3\"></textarea>\n<div class=\"buttons\">\n<button type=\"submit\" name=\"decision\" value=\"APPROVE\" id=\"approve\" class=\"approve\">Approve</button>\n");
    let _ = writeln!(
        out,
        "<button type=\"submit\" name=\"decision\" value=\"RETRY\" id=\"retry\">Retry {phase}</button>"
    );
    if let Some(predecessor) = phase.predecessor() {
        let _ = writeln!(
            out,
            "<button type=\"submit\" name=\"decision\" value=\"RETRY_PREDECESSOR {predecessor}\" id=\"retry-predecessor\">Retry {predecessor}, then {phase}</button>"
        );
    }
    out.push_str("<button type=\"submit\" name=\"decision\" value=\"REJECT\" id=\"reject\" class=\"reject\">Reject</button>\n</div>\n</form></section>\n");
}

fn dependencies(out: &mut String, view: &StoryView) {
    if view.depends_on.is_empty() {
        return;
    }
    out.push_str("<section class=\"deps\"><h2>Depends on</h2><ul>");
    for (id, known) in &view.depends_on {
        out.push_str("<li><a href=\"/story/");
        esc!(out, id);
        out.push_str("\">");
        match known {
            Some((slug, column)) => {
                esc!(out, slug);
                let _ = write!(
                    out,
                    "</a> <span class=\"column-badge {0}\">{0}</span>",
                    column.name()
                );
            }
            None => {
                esc!(out, id);
                out.push_str("</a> (not on the board)");
            }
        }
        out.push_str("</li>");
    }
    out.push_str("</ul></section>\n");
}

/// What each run did to the story: its actions in order, then its gate decisions.
fn timeline(out: &mut String, view: &StoryView) {
    out.push_str("<section class=\"timeline\"><h2>Timeline</h2>\n");
    if view.runs.is_empty() {
        out.push_str("<p>No run has worked on this story yet.</p></section>\n");
        return;
    }
    out.push_str("<table><thead><tr><th>When</th><th>What</th><th>Outcome</th><th>Took</th><th>Tokens</th><th>Cost</th><th>Detail</th></tr></thead>\n");
    for (run, part) in &view.runs {
        out.push_str("<tbody><tr class=\"run\"><th colspan=\"7\">Run ");
        esc!(out, &run.run_id);
        if run.running {
            out.push_str(" (at work)");
        }
        out.push_str("</th></tr>\n");
        for action in &part.actions {
            let _ = write!(
                out,
                "<tr class=\"{}\"><td>",
                css_word(action.outcome.name())
            );
            if let Some(at) = &action.started_at {
                time(out, at);
            }
            out.push_str("</td><td>");
            esc!(out, action.action_type.name());
            out.push_str("</td><td>");
            esc!(out, action.outcome.name());
            out.push_str("</td><td>");
            esc!(out, &format_duration(action.duration_ms));
            let _ = write!(out, "</td><td>{}</td><td>", action.tokens);
            esc!(out, &format_cost(action.cost_usd));
            out.push_str("</td><td>");
            esc!(out, action.detail.as_deref().map(first_line).unwrap_or(""));
            out.push_str("</td></tr>\n");
        }
        for gate in &part.gates {
            out.push_str("<tr class=\"gate\"><td></td><td>");
            esc!(out, &gate.phase);
            let _ = write!(out, " gate, attempt {}</td><td>", gate.attempt);
            esc!(out, &gate.decision);
            out.push_str("</td><td></td><td></td><td></td><td>");
            esc!(out, gate.feedback.as_deref().unwrap_or(""));
            out.push_str("</td></tr>\n");
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table></section>\n");
}

/// The transcripts, the newest open; each `<pre>` names its file and where its lines end, so
/// that the page's live tail adds what is written after (docs/design.md, "Live work").
fn transcripts(out: &mut String, view: &StoryView) {
    out.push_str("<section class=\"transcripts\" id=\"transcripts\"><h2>Transcripts</h2>\n");
    if view.transcripts.is_empty() {
        out.push_str("<p class=\"no-transcripts\">No transcripts yet: they are written while a run works on the story.</p></section>\n");
        return;
    }
    if view.older_transcripts > 0 {
        let _ = write!(
            out,
            "<p>{} older transcript(s) left out: <code>agentic-sdlc logs ",
            view.older_transcripts
        );
        esc!(out, &view.story.slug);
        out.push_str("</code> shows them all.</p>\n");
    }
    let last = view.transcripts.len() - 1;
    for (index, shown) in view.transcripts.iter().enumerate() {
        let (heading, rest) = shown
            .lines
            .split_first()
            .map_or(("", &[][..]), |(h, r)| (h.as_str(), r));
        let open = if index == last { " open" } else { "" };
        let _ = write!(out, "<details id=\"transcript-{index}\"{open}><summary>");
        esc!(out, heading);
        out.push_str("</summary><pre data-file=\"");
        esc!(out, &shown.file);
        let _ = write!(out, "\" data-end=\"{}\">", shown.end);
        for line in rest {
            esc!(out, line, "\n");
        }
        out.push_str("</pre></details>\n");
    }
    out.push_str("</section>\n");
}
