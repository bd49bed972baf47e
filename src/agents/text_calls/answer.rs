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
    let all: Vec<&str> = outside_tags.split_inclusive('\n').collect();
    let mut lines = all.iter().copied().enumerate();
    while let Some((at, line)) = lines.next() {
        let (lead_in, marker, info) = match fence_open(line) {
            Some((marker, info)) => ("", marker, info),
            None => match fence_opened_at_end(line) {
                Some(opened) => opened,
                None => {
                    if let Some(count) = bare_call_lines(&all[at..], expect) {
                        removed = true;
                        lines.by_ref().take(count - 1).for_each(drop);
                    } else if removed && is_cut_off_call(&all[at..]) {
                        break;
                    } else {
                        kept.push_str(line);
                    }
                    continue;
                }
            },
        };
        let mut fence = line.to_string();
        let mut body = String::new();
        for (_, inner) in lines.by_ref() {
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

/// The most lines one bare call is looked for over.
const BARE_CALL_LINES: usize = 40;

/// How many of `lines`, from the first, are one JSON call and nothing else, on one line or
/// over several (`{` / `"name": "search",` / … / `}`, as the 1.5B model wrote twenty calls for
/// a plan, inventory `add-positive`, 2026-12-05); `None` when they do not begin with one.
fn bare_call_lines(lines: &[&str], expect: Expect<'_>) -> Option<usize> {
    if !lines.first()?.trim_start().starts_with('{') {
        return None;
    }
    let mut text = String::new();
    for (at, line) in lines.iter().take(BARE_CALL_LINES).enumerate() {
        text.push_str(line);
        let candidate = text.trim();
        if !candidate.ends_with('}') {
            continue;
        }
        let Ok((value, used)) = lenient_value(candidate) else {
            continue;
        };
        let mut found = Extraction::default();
        push_calls(&value, CallForm::BareJson, expect, &mut found);
        return (used == candidate.len() && !found.calls.is_empty()).then_some(at + 1);
    }
    None
}

/// Whether `lines`, the rest of a reply after calls, are a call cut off: JSON begun and never
/// closed, the reply's cap reached inside it.
fn is_cut_off_call(lines: &[&str]) -> bool {
    lines
        .first()
        .is_some_and(|line| line.trim_start().starts_with('{'))
        && lines.iter().all(|line| {
            let line = line.trim();
            line.is_empty() || line.starts_with(['{', '}', '"', '[', ']'])
        })
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
    fn calls_written_over_several_lines_go_and_one_cut_off_at_the_end_too() {
        // Recorded (Qwen2.5-Coder-1.5B, inventory `add-positive` plan, 2026-12-05, shortened):
        // twenty calls and no step, cut off at the reply cap inside the last.
        let plan = "{\n    \"name\": \"read_file\",\n    \"arguments\": {\"path\": \"inventory/pricing.py\"}\n}\n{\n    \"name\": \"search\",\n    \"arguments\": {\"pattern\": \"def add\", \"path\": \"tests/test_cart.py\"}\n}\n{\n    \"name\": \"search\",\n    \"arguments\": {\"pattern\": \"remove_nonexi";
        assert_eq!(without_calls(plan, READING), "");
        let with_steps = "1. Make `add` raise `ValueError`.\n{\n  \"name\": \"read_file\",\n  \"arguments\": {\"path\": \"a.py\"}\n}\n2. Test it.\n";
        assert_eq!(
            without_calls(with_steps, READING),
            "1. Make `add` raise `ValueError`.\n2. Test it."
        );
        // JSON that is no call stays, and so does an unclosed brace with no call before it.
        let data = "The config:\n{\n  \"retries\": 3\n}\n";
        assert_eq!(without_calls(data, READING), data.trim());
        let unclosed = "Steps:\n{\n  \"name\": \"read_file\",";
        assert_eq!(without_calls(unclosed, READING), unclosed);
    }

    #[test]
    fn an_answer_of_calls_alone_is_empty() {
        let answer = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```";
        assert_eq!(without_calls(answer, READING), "");
    }
}
