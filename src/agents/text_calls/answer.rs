//! An answer without the calls written into it.
//!
//! Asked for its final answer with its tools withdrawn, a 1.5B model wrote its research as
//! steps and then "The final answer is:" and twelve read_file and search calls in a JSON fence.
//! None of them ran, and all of them went into the story's `## Research`, where the acceptance
//! agent read them and answered with the same calls instead of a test file, twice (docs/design.md
//! §21, "Every phase ends"). A call that was not run is no part of an answer.

use super::{
    closes_fence, fence_language, fence_open, fence_opened_at_end, holds_json, lenient_value,
    push_calls, read_block, tagged_calls, CallForm, Expect, Extraction,
};

/// `text` without its `<tool_call>` blocks, its fences that hold only calls, and its lines that
/// are a bare call; a heading or a line ending in `:` left last by a removal goes with it (the
/// call's lead-in). Everything else, other fences included, is kept as written.
pub fn without_calls(text: &str, expect: Expect<'_>) -> String {
    let mut tagged = Extraction::default();
    let outside_tags = tagged_calls(text, expect, &mut tagged);
    let mut removed = outside_tags.len() != text.len();
    let mut kept = String::with_capacity(outside_tags.len());
    let mut lines = outside_tags.split_inclusive('\n');
    while let Some(line) = lines.next() {
        let (lead_in, marker, info) = match fence_open(line) {
            Some((marker, info)) => ("", marker, info),
            None => match fence_opened_at_end(line) {
                Some(opened) => opened,
                None => {
                    if is_bare_call(line, expect) {
                        removed = true;
                    } else {
                        kept.push_str(line);
                    }
                    continue;
                }
            },
        };
        let mut fence = line.to_string();
        let mut body = String::new();
        for inner in lines.by_ref() {
            fence.push_str(inner);
            if closes_fence(inner, marker) {
                break;
            }
            body.push_str(inner);
        }
        let no_code = body.trim().is_empty() || only_calls(&body, expect);
        if holds_json(&fence_language(info)) && no_code {
            removed = true;
            if !is_label(lead_in) {
                kept.push_str(lead_in.trim_end());
                kept.push('\n');
            }
        } else {
            kept.push_str(&fence);
        }
    }
    let mut kept: Vec<&str> = kept.trim_end().lines().collect();
    while removed
        && kept.last().is_some_and(|line| {
            let line = line.trim();
            line.starts_with('#') || line.ends_with(':')
        })
    {
        kept.pop();
    }
    kept.join("\n").trim().to_string()
}

/// Whether a lead-in is a label and nothing else ("- **Action**:", "Result:"), with nothing
/// to say once its fence is gone.
fn is_label(lead_in: &str) -> bool {
    let bare = lead_in.trim().trim_start_matches(['-', '*', ' ']);
    let bare = bare.trim_end_matches(['*', ' ']);
    bare.is_empty() || (bare.ends_with(':') && bare.split_whitespace().count() <= 2)
}

/// Whether a fence's body reads as calls and nothing else.
fn only_calls(body: &str, expect: Expect<'_>) -> bool {
    let mut found = Extraction::default();
    read_block(body.trim(), CallForm::JsonFence, expect, &mut found);
    !found.calls.is_empty() && found.unreadable.is_none()
}

/// Whether a line is one JSON call and nothing else.
fn is_bare_call(line: &str, expect: Expect<'_>) -> bool {
    let line = line.trim();
    if !line.starts_with('{') {
        return false;
    }
    let Ok((value, used)) = lenient_value(line) else {
        return false;
    };
    let mut found = Extraction::default();
    push_calls(&value, CallForm::BareJson, expect, &mut found);
    used == line.len() && !found.calls.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    const READING: Expect<'static> = Expect {
        tools: &["read_file", "search", "list_files"],
        any_name: false,
        bash: false,
        edits: false,
        default_file: None,
    };

    #[test]
    fn a_recorded_research_answer_loses_its_calls_and_their_lead_in() {
        // The reply of the drive that found it (Qwen2.5-Coder-1.5B, research, tools withdrawn).
        let answer = "To add the `is_low_stock` function:\n\n\
            1. **Define it in `stock.py`**:\n   - Raise `StockError` if necessary.\n\n\
            The final answer is:\n```json\n\
            {\"name\": \"read_file\", \"arguments\": {\"path\": \"stock.py\"}}\n\
            {\"name\": \"search\", \"arguments\": {\"pattern\": \"StockError\", \"path\": \"stock.py\"}}\n\
            ```";
        assert_eq!(
            without_calls(answer, READING),
            "To add the `is_low_stock` function:\n\n\
             1. **Define it in `stock.py`**:\n   - Raise `StockError` if necessary."
        );
    }

    #[test]
    fn tags_bare_calls_and_a_final_heading_go_and_code_stays() {
        let answer = "Found the parser.\n```python\ndef parse(x):\n    return {\"name\": x}\n```\n\
            <tool_call>{\"name\": \"list_files\", \"arguments\": {}}</tool_call>\n\
            {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.py\"}}\n\
            ```json\n{\"retries\": 3}\n```\n### Final Answer\n\
            ```\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.py\"}}\n```\n";
        assert_eq!(
            without_calls(answer, READING),
            "Found the parser.\n```python\ndef parse(x):\n    return {\"name\": x}\n```\n\n\
             ```json\n{\"retries\": 3}\n```"
        );
    }

    #[test]
    fn an_answer_without_calls_is_kept_as_written_lead_ins_included() {
        let answer = "# Research\n\nThe files to change:\n- `a.py`";
        assert_eq!(without_calls(answer, READING), answer);
        let ends_on_a_colon = "Open questions:";
        assert_eq!(without_calls(ends_on_a_colon, READING), ends_on_a_colon);
    }

    #[test]
    fn a_plans_steps_lose_the_calls_fenced_at_their_ends_and_their_empty_fences() {
        // Recorded (Qwen2.5-Coder-1.5B, the inventory benchmark, 2026-11-29, `receipt-line`
        // plan, shortened): the implement agent read these steps and answered in JSON calls.
        let plan = "### Step 1: Read the File\n- **Action**: ```json\n  ```\n\
            - **Result**: The code in `inventory/money.py`.\n\n\
            ### Step 2: Add the `receipt_line` Function\n- **Action**: ```json\n  \
            {\"name\": \"write_file\", \"arguments\": {\"path\": \"inventory/money.py\", \"content\": \"x\"}}\n  ```\n\
            - **Result**: `receipt_line` is defined.\n\
            Then run it: ```python\n  print(1)\n  ```";
        let any = Expect {
            any_name: true,
            ..READING
        };
        assert_eq!(
            without_calls(plan, any),
            "### Step 1: Read the File\n- **Result**: The code in `inventory/money.py`.\n\n\
             ### Step 2: Add the `receipt_line` Function\n- **Result**: `receipt_line` is defined.\n\
             Then run it: ```python\n  print(1)\n  ```"
        );
    }

    #[test]
    fn an_answer_of_calls_alone_is_empty() {
        let answer = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```";
        assert_eq!(without_calls(answer, READING), "");
    }
}
