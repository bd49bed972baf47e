//! What makes a small model deliver: calls written in text, the tests run by the tool with their
//! failures sent back, retries asked differently, best of n attempts, and phases skipped.

use serde_json::{json, Value as Json};

use super::{section, transcript_entries, write_call, Made, Project, OFF_ACCEPTANCE};
use crate::suite::fake_llm::Reply;

#[tokio::test]
async fn a_call_written_in_a_json_fence_changes_the_repository_under_auto() {
    let p = Project::new().await;
    let story = p.planned("Fenced call");
    p.fake
        .push(
            "implement",
            Reply::text(
                "I will write it.\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.txt\", \"content\": \"FENCED\"}}\n```",
            ),
        )
        .push("implement", Reply::text("Wrote a.txt."));

    p.step(&story, "implement").success();

    assert_eq!(p.env.read("a.txt"), "FENCED");
    let calls = transcript_entries(&p, &story, "tool_call");
    assert_eq!(calls.len(), 1);
    assert_eq!(
        (calls[0]["protocol"].as_str(), calls[0]["form"].as_str()),
        (Some("text"), Some("json_fence"))
    );
    // The tools still went natively: under auto the server may well use them.
    assert!(!p.fake.requests_for("implement")[0].tool_names().is_empty());
}

#[tokio::test]
async fn under_the_text_protocol_the_tools_are_described_and_a_bash_fence_runs() {
    let p = Project::new().await;
    // Tool calls as text, not whole files (`auto`'s choice under text).
    p.config(&[
        ("llm.toolProtocol", "text"),
        ("implement.editFormat", "tools"),
    ]);
    let story = p.planned("Shell action");
    p.fake
        .push(
            "implement",
            Reply::text("```bash\necho SHELL-MADE > made.txt\n```"),
        )
        .push("implement", Reply::text("Made made.txt with echo."));

    p.step(&story, "implement").success();

    assert_eq!(p.env.read("made.txt"), "SHELL-MADE\n");
    let asks = p.fake.requests_for("implement");
    assert!(asks.iter().all(|ask| ask.tool_names().is_empty()));
    let system = asks[0].system_message();
    assert!(system.contains("# How you act"), "{system}");
    assert!(system.contains("- edit_file: "), "{system}");
    assert!(!system.contains("Answer in Markdown"), "{system}");
    let calls = transcript_entries(&p, &story, "tool_call");
    assert_eq!(
        (calls[0]["protocol"].as_str(), calls[0]["form"].as_str()),
        (Some("text"), Some("bash_fence"))
    );
}

#[tokio::test]
async fn failing_tests_go_back_to_the_model_and_the_last_run_is_in_the_notes() {
    let p = Project::new().await;
    p.config(&[(
        "review.testCommand",
        "grep -q 42 answer.txt || { echo 'FAILED test_answer - expected 42'; exit 1; }",
    )]);
    p.config(&[OFF_ACCEPTANCE]);
    let story = p.planned("Answer");
    p.fake
        .push("implement", write_call("answer.txt", "41\n"))
        .push("implement", Reply::text("Wrote the answer."))
        .push("implement", write_call("answer.txt", "42\n"))
        .push("implement", Reply::text("Fixed the answer."));

    p.step(&story, "implement").success();

    let asks = p.fake.requests_for("implement");
    assert_eq!(asks.len(), 4);
    let feedback = asks[2].last_message();
    assert!(
        feedback.contains("The tests fail") && feedback.contains("FAILED test_answer"),
        "{feedback}"
    );
    let notes = section(&p.body(&story), "Implementation Notes");
    assert!(notes.starts_with("Fixed the answer."), "{notes}");
    assert!(
        notes.contains("### Tests\n`grep -q 42 answer.txt"),
        "{notes}"
    );
    assert!(notes.contains("passed on the last of 2 runs"), "{notes}");
    assert_eq!(transcript_entries(&p, &story, "test_command").len(), 2);
}

#[tokio::test]
async fn a_raises_block_that_raised_nothing_is_quoted_to_the_model() {
    let p = Project::new().await;
    // pytest's report as it was recorded (the inventory benchmark, 2026-12-05): it stops on the
    // block's `with` line, and never shows the call inside.
    p.env.write(
        "report.txt",
        "=================================== FAILURES ===================================\n__________________ test_zero ___________________\n\n    def test_zero():\n>       with pytest.raises(ValueError):\nE       Failed: DID NOT RAISE ValueError\n\ntests/test_parse.py:4: Failed\n1 failed in 0.04s\n",
    );
    p.env.write(
        "tests/test_parse.py",
        "import pytest\n\ndef test_zero():\n    with pytest.raises(ValueError):\n        parse_quantity(\"0\")\n",
    );
    p.config(&[(
        "review.testCommand",
        "grep -q 'raise' parse.py || { cat report.txt; exit 1; }",
    )]);
    p.config(&[OFF_ACCEPTANCE]);
    let story = p.planned("Parse");
    p.fake
        .push(
            "implement",
            write_call(
                "parse.py",
                "def parse_quantity(text):\n    return int(text)\n",
            ),
        )
        .push("implement", Reply::text("Wrote it."))
        .push(
            "implement",
            write_call(
                "parse.py",
                "def parse_quantity(text):\n    raise ValueError(text)\n",
            ),
        )
        .push("implement", Reply::text("Fixed it."));

    p.step(&story, "implement").success();

    let feedback = p.fake.requests_for("implement")[2].last_message();
    assert!(
        feedback.contains("E       Failed: DID NOT RAISE ValueError\nE       the block that raised nothing: `parse_quantity(\"0\")`\n"),
        "{feedback}"
    );
}

#[tokio::test]
async fn a_project_test_whose_call_the_story_says_raises_is_taken_out_with_a_note() {
    let p = Project::new().await;
    let kept = "def test_add_counts():\n    cart = Cart()\n    cart.add(\"apple\", 2)\n    assert cart.quantity(\"apple\") == 2\n";
    let zero = "def test_remove_removes_all_units_if_zero():\n    cart = Cart()\n    cart.add(\"date\", 0)\n    cart.remove(\"date\")\n    assert cart.quantity(\"date\") == 0\n";
    p.env.write(
        "tests/test_cart.py",
        &format!("from cart import Cart\n\n\n{kept}\n\n{zero}"),
    );
    // pytest's report in kind as it was recorded (the inventory benchmark's `add-positive`,
    // 2026-12-05): a right `add`, and the project's test of earlier work adding zero dates.
    p.env.write(
        "report.txt",
        "=================================== FAILURES ===================================\n____________________ test_remove_removes_all_units_if_zero _____________________\n\n    def test_remove_removes_all_units_if_zero():\n        cart = Cart()\n>       cart.add(\"date\", 0)\n\ntests/test_cart.py:13: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\nself = <cart.Cart object at 0x7f9ceadd7410>, sku = 'date'\nquantity = 0\n\n    def add(self, sku, quantity=1):\n        if quantity < 1:\n>           raise ValueError(\"Quantity must be positive\")\nE           ValueError: Quantity must be positive\n\ncart.py:6: ValueError\n=========================== short test summary info ============================\nFAILED tests/test_cart.py::test_remove_removes_all_units_if_zero - ValueError: Quantity must be positive\n1 failed, 1 passed in 0.03s\n",
    );
    p.config(&[(
        "review.testCommand",
        "grep -q 'add(\"date\", 0)' tests/test_cart.py && { cat report.txt; exit 1; }; echo '2 passed'",
    )]);
    p.config(&[OFF_ACCEPTANCE]);
    let story = p.story(
        "Refuse quantities",
        "`Cart.add` in cart.py must raise `ValueError` for a quantity below 1.",
        "- [ ] `cart.add(\"apple\", 0)` raises `ValueError`",
        "ready",
        &["research", "plan"],
    );
    let cart = "class Cart:\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku, quantity=1):\n        if quantity < 1:\n            raise ValueError(\"Quantity must be positive\")\n        self.items[sku] = self.items.get(sku, 0) + quantity\n";
    p.fake
        .push("implement", write_call("cart.py", cart))
        .push("implement", Reply::text("Added the check."));

    p.step(&story, "implement").success();

    let tests = p.env.read("tests/test_cart.py");
    assert!(
        tests.contains(kept) && !tests.contains("test_remove_removes_all_units_if_zero"),
        "{tests}"
    );
    let taken = transcript_entries(&p, &story, "contradicted_tests_taken_out");
    assert_eq!(
        taken[0]["tests"],
        json!(["test_remove_removes_all_units_if_zero"]),
        "{taken:?}"
    );
    let notes = section(&p.body(&story), "Implementation Notes");
    assert!(
        notes.contains("Taken out of the project's tests by the tool, as the story changes what they expected: `test_remove_removes_all_units_if_zero` (tests/test_cart.py), whose `cart.add(\"date\", 0)` the story says raises `ValueError` (`cart.add(\"apple\", 0)`)."),
        "{notes}"
    );
    assert!(notes.contains("passed on the last of 1 run"), "{notes}");
    assert_eq!(
        p.fake.requests_for("implement").len(),
        2,
        "no round went back"
    );
}

#[tokio::test]
async fn a_round_whose_reply_changed_no_file_hears_so_first() {
    let p = Project::new().await;
    p.config(&[(
        "review.testCommand",
        "grep -q 42 answer.txt || { echo 'FAILED test_answer - expected 42'; exit 1; }",
    )]);
    p.config(&[OFF_ACCEPTANCE]);
    p.env.write("answer.txt", "41\n");
    let story = p.planned("Answer");
    // In kind as the 1.5B model answered three rounds in a row (inventory, 2026-11-29): the
    // change named, no file written.
    p.fake
        .push("implement", write_call("answer.txt", "40\n"))
        .push("implement", Reply::text("Changed: `answer.txt`, now 42."))
        .push("implement", Reply::text("Changed: `answer.txt`, now 42."))
        .push("implement", write_call("answer.txt", "42\n"))
        .push("implement", Reply::text("Wrote 42."));

    p.step(&story, "implement").success();

    let asks = p.fake.requests_for("implement");
    let said = |ask: usize| asks[ask].last_message();
    // After a round that wrote a file: the failure alone; after one that wrote none: that first.
    assert!(!said(2).contains("changed no file"), "{}", said(2));
    assert!(
        said(3).starts_with("Your last reply changed no file"),
        "{}",
        said(3)
    );
}

#[tokio::test]
async fn tests_still_failing_after_the_last_round_fail_implement_before_any_review() {
    let p = Project::new().await;
    p.config(&[
        (
            "review.testCommand",
            "echo 'collected 3 items'; echo 'FAILED test_x.py::test_x - boom'; exit 1",
        ),
        ("implement.testRounds", "2"),
        OFF_ACCEPTANCE,
    ]);
    let story = p.planned("Red");
    p.fake
        .push("implement", write_call("x.txt", "x\n"))
        .push("implement", Reply::text("Done."))
        .push("implement", Reply::text("Done again."));

    let out = p.run(&["run", "--auto", "--story", &story.id]);

    out.code(1);
    let error = p.last_error(&story);
    assert!(
        error.contains("the tests still fail after 2 run(s)")
            && error.contains("FAILED test_x.py::test_x - boom"),
        "{error}"
    );
    assert_eq!(p.column(&story), "ready");
    assert_eq!(p.front(&story)["implementation_complete"], false);
    assert_eq!(p.fake.requests_for("implement").len(), 3);
    for reviewer in ["code-review", "security-review", "po-review"] {
        assert!(p.fake.requests_for(reviewer).is_empty(), "{reviewer} asked");
    }
}

#[tokio::test]
async fn a_retry_is_asked_differently_and_with_the_feedback_last() {
    let p = Project::new().await;
    let story = p.planned("Retry differently");
    p.fake
        .push("implement", Reply::text("I changed it."))
        .push("implement", write_call("r.txt", "r\n"))
        .push("implement", Reply::text("Now really changed r.txt."));

    p.step(&story, "implement").success();

    let asks = p.fake.requests_for("implement");
    let (first, retry) = (&asks[0].body, &asks[1].body);
    assert!(first.get("temperature").is_none() && first.get("seed").is_none());
    assert!(retry["temperature"].as_f64().is_some(), "{retry}");
    assert_eq!(retry["seed"], 1);
    let prompt = asks[1].user_message();
    let tail = prompt.rsplit("## Task").next().unwrap();
    assert!(
        tail.contains("Act on this feedback first: Your previous output was refused"),
        "{tail}"
    );
}

#[tokio::test]
async fn llm_temperature_sets_the_first_try_and_a_retry_climbs_from_it() {
    let p = Project::new().await;
    p.config(&[("llm.temperature", "0.1")]);
    let story = p.planned("Cool first");
    p.fake
        .push("implement", Reply::text("I changed it."))
        .push("implement", write_call("r.txt", "r\n"))
        .push("implement", Reply::text("Now really changed r.txt."));

    p.step(&story, "implement").success();

    let asks = p.fake.requests_for("implement");
    let temperature = |at: usize| asks[at].body["temperature"].as_f64().unwrap();
    assert!((temperature(0) - 0.1).abs() < 1e-6, "{}", asks[0].body);
    assert!(asks[0].body.get("seed").is_none());
    assert!((temperature(1) - 0.4).abs() < 1e-6, "{}", asks[1].body);
    assert_eq!(asks[1].body["seed"], 1);
}

#[tokio::test]
async fn best_of_two_keeps_the_attempt_whose_tests_pass_and_counts_both() {
    let p = Project::new().await;
    p.env.write("answer.txt", "unknown\n");
    p.git_init(false);
    p.config(&[
        (
            "review.testCommand",
            "grep -q good answer.txt || { echo 'FAILED: not good'; exit 1; }",
        ),
        ("implement.attempts", "2"),
        ("implement.testRounds", "1"),
        OFF_ACCEPTANCE,
    ]);
    let story = p.planned("Two tries");
    p.fake
        .push("implement", write_call("answer.txt", "bad\n"))
        .push("implement", Reply::text("Attempt one."))
        .push("implement", write_call("answer.txt", "good\n"))
        .push("implement", Reply::text("Attempt two."));

    p.step(&story, "implement").success();

    let branch = format!("agentic-sdlc/{}", story.slug);
    assert_eq!(p.git(&["show", &format!("{branch}:answer.txt")]), "good");
    let notes = section(&p.body(&story), "Implementation Notes");
    assert!(notes.starts_with("Attempt two."), "{notes}");
    let chosen = transcript_entries(&p, &story, "attempts");
    assert_eq!(chosen[0]["kept"], 2, "{chosen:?}");
    assert_eq!(chosen[0]["attempts"][0]["tests_passed"], false);
    // The attempts' worktrees are gone, and both attempts' requests are counted.
    assert_eq!(p.git(&["worktree", "list"]).lines().count(), 1);
    assert_eq!(p.front(&story)["usage"]["requests"], 4);
    // Each attempt was asked differently.
    let seeds: Vec<Json> = p
        .fake
        .requests_for("implement")
        .iter()
        .map(|ask| ask.body["seed"].clone())
        .collect();
    assert_eq!(seeds[0], Json::Null);
    assert_eq!(seeds[2], 1);
}

#[tokio::test]
async fn skipped_phases_count_as_complete_and_a_skipped_refine_moves_the_story_as_written() {
    let p = Project::new().await;
    p.config(&[
        ("phases.refine.enabled", "false"),
        ("phases.research.enabled", "false"),
        ("phases.plan.enabled", "false"),
    ]);
    let story = p.story("Small one", "AS-WRITTEN", "- [ ] Works", "backlog", &[]);

    p.step(&story, "refine").success();

    assert!(p.fake.requests_for("refine").is_empty());
    assert_eq!(p.column(&story), "ready");
    assert_eq!(section(&p.body(&story), "Summary"), "AS-WRITTEN");
    let plan = p.env.run_json(&["run", "--dry-run", "--story", &story.id]);
    assert_eq!(plan["actions"][0]["type"], "implement", "{plan}");
}

#[tokio::test]
async fn a_small_story_skips_research_and_plan_unless_a_person_set_them() {
    let p = Project::new().await;
    p.env.write(
        "shelf.py",
        "def title_case(title):\n    return title.title()\n",
    );
    p.python_git_project(&[]);
    let summary = "Add a function `initials(name)` to shelf.py.";
    let criteria = "- [ ] `initials('terry pratchett')` returns `'T.P.'`";
    let small = p.story("Initials", summary, criteria, "ready", &[]);

    p.step(&small, "research").success();
    p.step(&small, "plan").success();

    assert!(p.fake.requests_for("research").is_empty());
    assert!(p.fake.requests_for("plan").is_empty());
    let body = p.body(&small);
    assert_eq!(
        section(&body, "Research"),
        "Skipped: a small story: it names `initials` in shelf.py, and its acceptance tests check the change."
    );
    assert!(section(&body, "Implementation Plan").starts_with("Skipped: a small story"));
    let next = p.env.run_json(&["run", "--dry-run", "--story", &small.id]);
    assert_eq!(next["actions"][0]["type"], "acceptance", "{next}");

    // A story that does not say where its function goes is researched.
    let unplaced = p.story(
        "Initials anywhere",
        "Add a function `initials(name)`.",
        criteria,
        "ready",
        &[],
    );
    p.step(&unplaced, "research").success();
    assert_eq!(p.fake.requests_for("research").len(), 1);

    // A person who sets the phase gets it, small story or not.
    p.config(&[("phases.research.enabled", "true")]);
    let set = p.story("Initials again", summary, criteria, "ready", &[]);
    p.step(&set, "research").success();
    assert_eq!(p.fake.requests_for("research").len(), 2);
}

#[tokio::test]
async fn a_reply_is_checked_even_when_its_writes_to_files_the_story_does_not_name_are_refused() {
    let p = Project::new().await;
    p.config(&[("implement.editFormat", "whole"), OFF_ACCEPTANCE]);
    p.config(&[(
        "review.testCommand",
        "grep -q 'return int' inventory/parse.py || { echo 'FAILED test_parse'; exit 1; }",
    )]);
    let cart = "class Cart:\n    def add(self, sku):\n        pass\n";
    p.env.write("inventory/cart.py", cart);
    let story = p.story(
        "Read a quantity",
        "Add a new module inventory/parse.py with `parse_quantity(text)`.",
        "- [ ] `parse_quantity(\" 3 \")` returns `3`",
        "ready",
        &["research", "plan"],
    );
    // In kind as the 1.5B model wrote it (inventory `parse-quantity`, 2026-12-05): the story's
    // file, then the repository map's lines as the cart's file, in each of five replies.
    p.fake.push(
        "implement",
        Reply::text(
            "inventory/parse.py\n```python\ndef parse_quantity(text):\n    return int(text.strip())\n```\n\ninventory/cart.py\n```python\nclass Cart  # Items by SKU, each with a quantity.\n  def add(self, sku)\n```\n",
        ),
    );

    p.step(&story, "implement").success();

    assert_eq!(
        p.fake.requests_for("implement").len(),
        1,
        "no reply went back"
    );
    assert!(p
        .env
        .read("inventory/parse.py")
        .contains("return int(text.strip())"));
    assert_eq!(p.env.read("inventory/cart.py"), cart);
    let calls = transcript_entries(&p, &story, "tool_call");
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1]["is_error"], true, "{calls:?}");
    assert_eq!(transcript_entries(&p, &story, "test_command").len(), 1);
}

#[tokio::test]
async fn a_file_written_in_the_reply_with_only_the_new_function_keeps_the_rest_of_the_file() {
    let p = Project::new().await;
    p.config(&[("implement.editFormat", "whole")]);
    p.env.write(
        "calc.py",
        "import math\n\n\ndef add(a, b):\n    return a + b\n",
    );
    let story = p.planned("Subtract in calc.py");
    p.fake.push(
        "implement",
        Reply::text(
            "calc.py\n```python\nimport operator\n\n\ndef sub(a, b):\n    return a - b\n```\nAdded sub.",
        ),
    );

    p.step(&story, "implement").success();

    assert_eq!(
        p.env.read("calc.py"),
        "import math\nimport operator\n\n\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    );
    let calls = transcript_entries(&p, &story, "tool_call");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["form"], "file_fence");
    let result = calls[0]["result"].as_str().unwrap();
    assert!(
        result.contains("kept add, which your file left out"),
        "{result}"
    );

    // Called as a tool, the same write keeps the file's others too: it adds a definition, so
    // it is the new one. A call that only leaves definitions out is refused.
    let p = Project::new().await;
    p.env.write("calc.py", "def add(a, b):\n    return a + b\n");
    let story = p.planned("Subtract by tool");
    p.fake
        .push(
            "implement",
            Reply::tool("read_file", json!({"path": "calc.py"})),
        )
        .push(
            "implement",
            Reply::tool(
                "write_file",
                json!({"path": "calc.py", "content": "def sub(a, b):\n    return a - b\n"}),
            ),
        )
        .push(
            "implement",
            Reply::tool(
                "write_file",
                json!({"path": "calc.py", "content": "# emptied\n"}),
            ),
        )
        .push("implement", Reply::text("Done."));

    p.step(&story, "implement");

    assert_eq!(
        p.env.read("calc.py"),
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    );
    let calls = transcript_entries(&p, &story, "tool_call");
    let results: Vec<&str> = calls
        .iter()
        .filter(|call| call["name"] == "write_file")
        .map(|call| call["result"].as_str().unwrap())
        .collect();
    assert_eq!(results.len(), 2, "{calls:?}");
    assert!(
        results[0].contains("kept add, which your file left out"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("drop 2 of its 2 definitions: add, sub"),
        "{}",
        results[1]
    );
}

#[tokio::test]
async fn a_failing_test_of_what_the_story_adds_comes_back_with_the_acceptance_criteria() {
    let p = Project::new().await;
    p.config(&[(
        "review.testCommand",
        "grep -q 'count(\"a a\") == 2' test_count.py || { echo 'FAILED test_count.py::test_word_count - assert 2 == 1'; exit 1; }",
    )]);
    p.config(&[OFF_ACCEPTANCE]);
    p.env.write(
        "count.py",
        "def word_count(text):\n    return len(text.split())\n",
    );
    let story = p.story(
        "Count words",
        "Add `word_count(text)` to count.py.",
        "- [ ] `word_count(\"a a\")` returns `2`",
        "ready",
        &["research", "plan"],
    );
    p.fake
        .push(
            "implement",
            write_call("test_count.py", "assert word_count(\"a a\") == 1\n"),
        )
        .push("implement", Reply::text("Added a test."))
        .push(
            "implement",
            write_call("test_count.py", "assert word_count(\"a a\") == 2\n"),
        )
        .push("implement", Reply::text("Corrected the test."));

    p.step(&story, "implement").success();

    let asks = p.fake.requests_for("implement");
    assert_eq!(asks.len(), 4);
    let feedback = asks[2].last_message();
    assert!(
        feedback.contains("`test_word_count` tests what this story adds")
            && feedback.contains("- [ ] `word_count(\"a a\")` returns `2`")
            && feedback.contains("correct a test that expects something else"),
        "{feedback}"
    );
}

/// A planned story that asks for `sub(a, b)` in calc.py, with one example.
fn subtract_story(p: &Project) -> Made {
    p.story(
        "Subtract",
        "Add `sub(a, b)` to calc.py.",
        "- [ ] `sub(3, 1)` returns `2`",
        "ready",
        &["research", "plan"],
    )
}

#[tokio::test]
async fn a_named_function_written_into_another_file_than_the_story_names_goes_back() {
    let p = Project::new().await;
    p.config(&[("review.testCommand", "exit 0"), OFF_ACCEPTANCE]);
    p.env.write("calc.py", "def add(a, b):\n    return a + b\n");
    let story = subtract_story(&p);
    p.fake
        .push(
            "implement",
            write_call("other.py", "def sub(a, b):\n    return a - b\n"),
        )
        .push("implement", Reply::text("Added sub."))
        .push(
            "implement",
            write_call(
                "calc.py",
                "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
            ),
        )
        .push("implement", Reply::text("Moved sub to calc.py."));

    p.step(&story, "implement").success();

    let asks = p.fake.requests_for("implement");
    assert_eq!(asks.len(), 4);
    let feedback = asks[2].last_message();
    assert!(
        feedback
            .contains("The story asks for `sub` in calc.py, and that file does not define it yet."),
        "{feedback}"
    );
    assert!(p.env.read("calc.py").contains("def sub"));
}

#[tokio::test]
async fn a_research_that_keeps_reading_ends_at_its_turn_budget_with_what_it_found() {
    let p = Project::new().await;
    p.config(&[("phases.research.maxTurns", "3")]);
    let story = p.story("Wanders", "A summary.", "- [ ] It works", "ready", &[]);
    // The same read over and over, as a small model does; then, asked for its answer, it gives
    // it.
    for _ in 0..3 {
        p.fake.push(
            "research",
            Reply::tool("read_file", json!({"path": "README.md"})),
        );
    }
    p.fake
        .push("research", Reply::text("Findings: the README says enough."));
    p.env.write("README.md", "A project.\n");

    p.step(&story, "research").success();

    let requests = p.fake.requests_for("research");
    assert_eq!(requests.len(), 4, "three turns, then the answer");
    assert!(
        requests[3].tool_names().is_empty(),
        "the tools are withdrawn"
    );
    assert!(requests[3]
        .last_message()
        .starts_with("You have used all 3 turns"));
    // The second and third reads were answered from above, not run again.
    let third: Vec<Json> = requests[3].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect();
    assert!(third[0]["content"].as_str().unwrap().contains("A project."));
    assert!(third[1]["content"]
        .as_str()
        .unwrap()
        .starts_with("Already done"));
    assert_eq!(
        section(&p.body(&story), "Research"),
        "Findings: the README says enough."
    );
    assert_eq!(p.front(&story)["research_complete"], true);
}

#[tokio::test]
async fn a_model_that_answers_the_probe_in_text_gets_the_text_protocol_and_whole_files() {
    let p = Project::new().await;
    p.fake
        .answer_probe_with(Reply::text("I am ready, but I do not call tools."));
    let story = p.planned("Probed");
    p.fake.push(
        "implement",
        Reply::text("src/probed.rs\n```rust\npub fn probed() {}\n```\nAdded probed()."),
    );

    let out = p.step(&story, "implement");

    out.success();
    assert!(
        out.stderr.contains("tool calls as text (it answered a one-tool request without a native call), files written whole"),
        "{}",
        out.stderr
    );
    assert_eq!(p.fake.probes(), 1);
    let ask = &p.fake.requests_for("implement")[0];
    assert!(ask.tool_names().is_empty(), "no tools sent under text");
    assert!(
        ask.system_message().contains("write it out whole"),
        "{}",
        ask.system_message()
    );
    assert_eq!(p.env.read("src/probed.rs"), "pub fn probed() {}\n");
    let remembered = p.env.read(".agentic-sdlc/runs/tool-protocols.json");
    assert!(remembered.contains("\"text\""), "{remembered}");

    // The next run remembers it, and says so, without asking again.
    let other = p.planned("Probed again");
    p.fake.push(
        "implement",
        Reply::text("src/again.rs\n```rust\npub fn again() {}\n```\nAdded again()."),
    );
    let out = p.step(&other, "implement");
    out.success();
    assert!(
        out.stderr.contains("found by an earlier run's probe"),
        "{}",
        out.stderr
    );
    assert_eq!(p.fake.probes(), 1);
}

#[tokio::test]
async fn a_protocol_named_in_the_config_is_not_probed() {
    let p = Project::new().await;
    p.config(&[("llm.toolProtocol", "native")]);
    let story = p.planned("Not probed");
    p.step(&story, "implement").success();
    assert_eq!(p.fake.probes(), 0);
}

#[tokio::test]
async fn a_failing_test_of_a_function_the_story_does_not_name_goes_back_and_never_blocks() {
    let p = Project::new().await;
    p.env.write("tests/test_base.sh", "true\n");
    p.git_init(false);
    p.config(&[
        (
            "review.testCommand",
            "for t in tests/test_*.sh; do sh \"$t\" || { echo \"FAILED $t::$(basename \"$t\" .sh) - failed\"; exit 1; }; done",
        ),
        OFF_ACCEPTANCE,
    ]);
    let story = p.story(
        "Median",
        "Add `median(values)` to stats.sh.",
        "- [ ] `median` gives the middle value",
        "ready",
        &["research", "plan"],
    );
    p.fake
        .push(
            "implement",
            write_call("stats.sh", "function median() { echo 2; }\n"),
        )
        // A test of `mean`, which the story does not name, that fails.
        .push(
            "implement",
            write_call("tests/test_mean_empty.sh", "exit 1\n"),
        )
        .push("implement", Reply::text("Added median and a test."))
        .push("implement", Reply::text("The mean test is right."))
        .push("implement", Reply::text("Still right."));

    p.step(&story, "implement").success();

    let asks = p.fake.requests_for("implement");
    let feedback = asks[3].last_message();
    assert!(
        feedback.contains("`test_mean_empty` in tests/test_mean_empty.sh, which the story does not ask for: remove or fix this test"),
        "{feedback}"
    );
    assert_eq!(p.front(&story)["implementation_complete"], true);
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    assert!(p
        .git(&["show", &format!("{branch}:stats.sh")])
        .contains("median"));
    assert!(!p
        .git_output(&["show", &format!("{branch}:tests/test_mean_empty.sh")])
        .status
        .success());
    let removed = transcript_entries(&p, &story, "unasked_tests_removed");
    assert_eq!(
        removed[0]["files"][0], "tests/test_mean_empty.sh",
        "{removed:?}"
    );
}

#[tokio::test]
async fn a_method_missing_after_two_rounds_is_asked_for_alone_and_merged_into_its_class() {
    let p = Project::new().await;
    let story = cart_without_remove(&p, &[]);
    let without = "class Cart:\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku):\n        self.items[sku] = 1\n";
    p.fake
        .push("implement", write_call("cart.py", without))
        .push("implement", Reply::text("Added it."))
        .push("implement", write_call("cart.py", &format!("{without}\n# no remove yet\n")))
        .push("implement", Reply::text("Added it again."))
        .push(
            "definition",
            Reply::text("```python\ndef remove(self, sku):\n    if sku in self.items:\n        del self.items[sku]\n```"),
        );

    p.step(&story, "implement").success();

    let asked = p.fake.requests_for("definition");
    assert_eq!(asked.len(), 1, "asked once, after the second round");
    let task = asked[0].last_message();
    assert!(
        task.contains("Write the method `remove(sku)` of the class `Cart` in cart.py"),
        "{task}"
    );
    assert!(task.contains("# Repository map"), "{task}");
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    assert_eq!(
        p.git(&["show", &format!("{branch}:cart.py")]),
        "class Cart:\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku):\n        self.items[sku] = 1\n\n    def remove(self, sku):\n        if sku in self.items:\n            del self.items[sku]\n\n# no remove yet"
    );
    assert_eq!(p.front(&story)["implementation_complete"], true);
    let narrowed = transcript_entries(&p, &story, "narrowed_task");
    assert_eq!(narrowed[0]["merged"], true, "{narrowed:?}");
}

#[tokio::test]
async fn a_function_of_a_new_module_written_elsewhere_is_asked_for_in_that_module() {
    let p = Project::new().await;
    p.env.write("inventory/cart.py", "class Cart:\n    pass\n");
    p.python_git_project(&[OFF_ACCEPTANCE]);
    let story = p.story(
        "Read a quantity",
        "Add a new module inventory/parse.py with a function `parse_quantity(text)` that returns the whole positive number in the text.",
        "- [ ] `parse_quantity(\" 3 \")` returns `3`",
        "ready",
        &["research", "plan"],
    );
    // In kind as the 1.5B model answered (inventory `parse-quantity`, 2026-12-05): the function
    // in the cart's file, twice, and never the new module.
    let in_cart = "class Cart:\n    pass\n\n\ndef parse_quantity(text):\n    return 0\n";
    p.fake
        .push("implement", write_call("inventory/cart.py", in_cart))
        .push("implement", Reply::text("Added it."))
        .push(
            "implement",
            write_call("inventory/cart.py", &format!("{in_cart}# again\n")),
        )
        .push("implement", Reply::text("Added it again."))
        .push(
            "definition",
            Reply::text("```python\ndef parse_quantity(text):\n    return int(text)\n```"),
        );

    p.step(&story, "implement").success();

    assert_eq!(p.fake.requests_for("definition").len(), 1);
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    assert_eq!(
        p.git(&["show", &format!("{branch}:inventory/parse.py")]),
        "def parse_quantity(text):\n    return int(text)"
    );
}

#[tokio::test]
async fn notes_cut_off_before_any_code_get_the_missing_function_asked_for_alone() {
    let p = Project::new().await;
    p.env.write("transit/__init__.py", "");
    p.python_git_project(&[OFF_ACCEPTANCE]);
    let story = p.story(
        "Ticket fare calculator",
        "Create a new module `transit/fares.py` with a function `fare(zones)` that returns the price in cents.",
        "- [ ] `fare(1)` returns `250`",
        "ready",
        &["research", "plan"],
    );
    // In kind as the 1.5B model answered (transit `fares-module`, 2026-12-06): notes under
    // file headings, no code, until the reply cap; told so, the same again.
    let notes = "### File: `transit/fares.py`\n\n**Changes**:\n- Added the `fare` function.\n";
    p.fake
        .push("implement", Reply::truncated(notes))
        .push("implement", Reply::truncated(notes))
        .push(
            "definition",
            Reply::text("```python\ndef fare(zones):\n    return 150 + 100 * zones\n```"),
        );

    p.step(&story, "implement").success();

    let implement = p.fake.requests_for("implement");
    assert_eq!(implement.len(), 2, "told once that nothing changed");
    assert!(
        implement[1].last_message().contains("it changed no file"),
        "{}",
        implement[1].last_message()
    );
    let asked = p.fake.requests_for("definition");
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].last_message().contains("fare"),
        "{}",
        asked[0].last_message()
    );
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    assert_eq!(
        p.git(&["show", &format!("{branch}:transit/fares.py")]),
        "def fare(zones):\n    return 150 + 100 * zones"
    );
    let at_end = transcript_entries(&p, &story, "narrowed_at_end");
    assert_eq!(at_end[0]["name"], "fare", "{at_end:?}");
}

/// Implement on a project whose only file is `cart` (cart.py): its tests print `failure` and
/// fail until cart.py holds `fixed_by`. The model says twice it is done without writing a file,
/// then answers the narrowed task with `definition`. Returns the one task asked, and cart.py
/// as the story's branch has it.
async fn narrowed_once(
    cart: &str,
    fixed_by: &str,
    failure: &str,
    [title, summary, criteria]: [&str; 3],
    definition: &str,
) -> (String, String) {
    let p = Project::new().await;
    p.env.write("cart.py", cart);
    p.git_init(false);
    let command = format!("grep -q '{fixed_by}' cart.py || {{ echo \"{failure}\"; exit 1; }}");
    p.config(&[("review.testCommand", command.as_str()), OFF_ACCEPTANCE]);
    let story = p.story(title, summary, criteria, "ready", &["research", "plan"]);
    p.fake
        .push("implement", Reply::text("Added it."))
        .push("implement", Reply::text("Added it again."))
        .push("definition", Reply::text(definition));

    p.step(&story, "implement").success();

    let asked = p.fake.requests_for("definition");
    assert_eq!(asked.len(), 1, "asked once, after the second round");
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    let merged = p.git(&["show", &format!("{branch}:cart.py")]);
    (asked[0].last_message(), merged)
}

#[tokio::test]
async fn a_method_the_tests_find_missing_is_asked_for_alone_though_the_story_only_calls_it() {
    // As refine wrote inventory `cart-remove` (2026-11-28): the method named bare, and called
    // only on objects.
    let (task, cart) = narrowed_once(
        "class Cart:\n    def __init__(self):\n        self.items = {}\n",
        "del self.items",
        "E   AttributeError: 'Cart' object has no attribute 'remove'",
        [
            "Remove an item",
            "Add a method `remove` to the `Cart` class in `cart.py`.",
            "- [ ] After `cart.remove(\"apple\")`, `cart.quantity(\"apple\")` returns `0`.\n- [ ] `Cart().remove(\"kiwi\")` raises `KeyError`.",
        ],
        "```python\ndef remove(self, sku):\n    del self.items[sku]\n```",
    )
    .await;

    assert!(
        task.contains("Write the method `remove(…)` of the class `Cart` in cart.py"),
        "{task}"
    );
    assert_eq!(
        cart,
        "class Cart:\n    def __init__(self):\n        self.items = {}\n\n    def remove(self, sku):\n        del self.items[sku]"
    );
}

#[tokio::test]
async fn a_class_the_tests_cannot_import_is_asked_for_alone_as_a_class() {
    // An exception the story raises, never written as a call: no named function is missing,
    // and only the tests' import says what is.
    let (task, cart) = narrowed_once(
        "class Cart:\n    pass\n",
        "class OutOfStock",
        "E   ImportError: cannot import name 'OutOfStock' from 'cart' (/x/cart.py)",
        [
            "Say an item is out of stock",
            "Add an exception `OutOfStock` to `cart.py`.",
            "- [ ] Taking an item the cart lacks raises `OutOfStock`.",
        ],
        "```python\nclass OutOfStock(KeyError):\n    pass\n```",
    )
    .await;

    assert!(
        task.contains("Write the class `OutOfStock` in cart.py"),
        "{task}"
    );
    assert_eq!(
        cart,
        "class Cart:\n    pass\n\n\nclass OutOfStock(KeyError):\n    pass"
    );
}

#[tokio::test]
async fn a_missing_function_is_asked_for_alone_before_the_conversation() {
    let p = Project::new().await;
    p.env.write(
        "shelf.py",
        "def title_case(title):\n    return title.title()\n",
    );
    p.env.write(
        "tests/test_rating.py",
        "from shelf import average_rating\n\n\ndef test_average_rating_example_1():\n    assert average_rating([4, 5]) == 4.5\n",
    );
    p.python_git_project(&[]);
    let story = p.story(
        "Ratings",
        "Add a function `average_rating(ratings)` to shelf.py.",
        "- [ ] `average_rating([4, 5])` returns `4.5`",
        "ready",
        &["research", "plan"],
    );
    p.env.edit(
        p.path_of(&story),
        "plan_complete: true",
        "plan_complete: true\nacceptance_complete: true\nacceptance_tests:\n- tests/test_rating.py",
    );
    // The opening's answers are wrong: the conversation goes on from the file as the opening
    // left it, and its whole file is right.
    for body in ["max(ratings)", "sum(ratings)"] {
        p.fake.push(
            "definition",
            Reply::text(format!(
                "```python\ndef average_rating(ratings):\n    return {body}\n```"
            )),
        );
    }
    p.fake
        .push(
            "implement",
            write_call(
                "shelf.py",
                "def title_case(title):\n    return title.title()\n\n\ndef average_rating(ratings):\n    return sum(ratings) / len(ratings)\n",
            ),
        )
        .push("implement", Reply::text("Added `average_rating`."));

    p.run(&["run", "--story", &story.id]).success();

    // Two samples, then four in each further round of the opening: the fake's default reply
    // to the eight more is no code, and writes nothing.
    assert_eq!(p.fake.requests_for("definition").len(), 10);
    let first = p.fake.requests_for("implement")[0].last_message();
    assert!(
        first.contains("return sum(ratings)"),
        "the conversation starts from the opening's better answer: {first}"
    );
    assert!(
        first.contains("A first version of `average_rating` is written, and the tests fail on it:")
            && first.contains("test_average_rating_example_1"),
        "and hears at once what the tests say of it: {first}"
    );
    let opening = transcript_entries(&p, &story, "first_alone");
    assert_eq!(
        opening[0]["names"],
        json!(["average_rating"]),
        "{opening:?}"
    );
    assert_eq!(opening[0]["passed"], json!(false), "{opening:?}");
    assert_eq!(p.front(&story)["implementation_complete"], true);
    assert!(
        p.body(&story).contains("Added `average_rating`."),
        "{}",
        p.body(&story)
    );
}

#[tokio::test]
async fn a_later_round_of_narrowed_samples_goes_on_from_the_seeds_of_the_first() {
    let p = Project::new().await;
    p.env.write(
        "textkit.py",
        "def shout(text):\n    return text.upper() + '!'\n",
    );
    p.env.write(
        "tests/test_slug.py",
        "from textkit import slugify\n\n\ndef test_slugify_example_1():\n    assert slugify('Hello, World!') == 'hello-world'\n",
    );
    p.python_git_project(&[("llm.temperature", "0.2")]);
    let story = p.story(
        "Slugs",
        "Add a function `slugify(text)` to textkit.py.",
        "- [ ] `slugify('Hello, World!')` returns `'hello-world'`",
        "ready",
        &["research", "plan"],
    );
    p.env.edit(
        p.path_of(&story),
        "plan_complete: true",
        "plan_complete: true\nacceptance_complete: true\nacceptance_tests:\n- tests/test_slug.py",
    );
    let wrong = |body: &str| {
        Reply::text(format!(
            "```python\nimport re\n\n\ndef slugify(text):\n    return {body}\n```"
        ))
    };
    // Recorded answers (textkit `slugify`, 2026-12-06), each wrong; the second round's first
    // replays the first round's first. The sixth is right, and no conversation runs.
    for body in [
        "'-'.join(word for word in text.lower().split() if word.isalnum())",
        "text.upper()",
        "'-'.join(word for word in text.lower().split() if word.isalnum())",
        "''.join(c.lower() if c.isalnum() else '-' for c in text).strip('-')",
        "text.lower()",
    ] {
        p.fake.push("definition", wrong(body));
    }
    p.fake.push(
        "definition",
        wrong("re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')"),
    );

    p.run(&["run", "--story", &story.id]).success();

    let asked = p.fake.requests_for("definition");
    assert_eq!(
        asked.len(),
        6,
        "the opening's two samples, then its second round's four"
    );
    assert!(p.fake.requests_for("implement").is_empty());
    let seeds: Vec<Json> = asked.iter().map(|ask| ask.body["seed"].clone()).collect();
    // Each round's first sample as the phase asks; the round's further ones are no replay of
    // the opening's (textkit `slugify`, 2026-12-06: answer for answer).
    assert_eq!(
        seeds,
        [
            json!(null),
            json!(1),
            json!(null),
            json!(3),
            json!(4),
            json!(5)
        ],
        "{seeds:?}"
    );
    let narrowed = transcript_entries(&p, &story, "narrowed_task");
    let merged: Vec<(Json, Json)> = narrowed
        .iter()
        .map(|entry| (entry["sample"].clone(), entry["merged"].clone()))
        .collect();
    assert_eq!(
        merged[2],
        (json!(0), json!(false)),
        "an answer of the opening is not written again: {merged:?}"
    );
    assert_eq!(merged[5], (json!(5), json!(true)), "{merged:?}");
    assert_eq!(p.front(&story)["implementation_complete"], true);
}

#[tokio::test]
async fn the_failing_function_a_failing_caller_calls_is_asked_for_first() {
    let p = Project::new().await;
    p.env.write("transit/__init__.py", "");
    p.env.write(
        "transit/times.py",
        "def to_minutes(text):\n    hours, minutes = text.split(':')\n    return int(hours) * 60 + int(minutes)\n\n\ndef from_minutes(total):\n    hours, minutes = divmod(total, 60)\n    return f'{hours:02d}:{minutes:02d}'\n\n\ndef add_minutes(text, delta):\n    return from_minutes(to_minutes(text) + delta)\n",
    );
    p.env.write(
        "tests/test_wrap.py",
        "from transit.times import add_minutes\nfrom transit.times import from_minutes\n\n\ndef test_story_examples():\n    assert add_minutes('23:50', 20) == '00:10'\n\n\ndef test_from_minutes_example_1():\n    assert from_minutes(1450) == '00:10'\n",
    );
    p.python_git_project(&[]);
    // The transit suite's bug (2026-12-06): the tool asked for `add_minutes` five times.
    let story = p.story(
        "Times past midnight wrap around",
        "`add_minutes(\"23:50\", 20)` in `transit/times.py` returns \"24:10\" because `from_minutes` never wraps the hour.",
        "- [ ] `from_minutes(1450)` returns `\"00:10\"`\n- [ ] `add_minutes(\"23:50\", 20)` returns `\"00:10\"`",
        "ready",
        &["research", "plan"],
    );
    p.env.edit(
        p.path_of(&story),
        "plan_complete: true",
        "plan_complete: true\nacceptance_complete: true\nacceptance_tests:\n- tests/test_wrap.py",
    );
    p.fake
        .push("implement", Reply::text("Fixed it."))
        .push("implement", Reply::text("Fixed it again."))
        .push(
            "definition",
            Reply::text("```python\ndef from_minutes(total):\n    hours, minutes = divmod(total % 1440, 60)\n    return f'{hours:02d}:{minutes:02d}'\n```"),
        );

    p.step(&story, "implement").success();

    let asked = p.fake.requests_for("definition");
    assert_eq!(asked.len(), 1, "one definition, the right one");
    let task = asked[0].last_message();
    assert!(
        task.contains("Write the function `from_minutes(…)` in transit/times.py again"),
        "{task}"
    );
    assert_eq!(p.front(&story)["implementation_complete"], true);
}

#[tokio::test]
async fn a_method_answered_without_self_is_merged_with_it() {
    let p = Project::new().await;
    p.env.write("transit/__init__.py", "");
    p.env.write(
        "transit/timetable.py",
        "class Timetable:\n    def __init__(self, route):\n        self.route = route\n        self._departures = {}\n\n    def add_departure(self, stop, time):\n        self._departures.setdefault(stop, []).append(time)\n        self._departures[stop].sort()\n",
    );
    p.env.write(
        "tests/test_next.py",
        "from transit.timetable import Timetable\n\n\ndef test_next_departure():\n    timetable = Timetable('A')\n    timetable.add_departure('Central', '08:00')\n    timetable.add_departure('Central', '08:30')\n    assert timetable.next_departure('Central', '08:10') == '08:30'\n    assert timetable.next_departure('Central', '08:31') is None\n",
    );
    p.python_git_project(&[]);
    let story = p.story(
        "Next departure from a stop",
        "Add a method `Timetable.next_departure(stop, after)` to `transit/timetable.py` that returns the earliest departure at or after `after`.",
        "- [ ] `next_departure(\"Central\", \"08:31\")` returns `None` when none is left",
        "ready",
        &["research", "plan"],
    );
    p.env.edit(
        p.path_of(&story),
        "plan_complete: true",
        "plan_complete: true\nacceptance_complete: true\nacceptance_tests:\n- tests/test_next.py",
    );
    // Recorded (Qwen2.5-Coder-1.5B, transit, 2026-12-06): `self` used, not taken.
    p.fake
        .push("implement", Reply::text("Added it."))
        .push("implement", Reply::text("Added it again."))
        .push(
            "definition",
            Reply::text("```python\ndef next_departure(stop: str, after: str) -> str:\n    times = self._departures.get(stop, [])\n    for time in times:\n        if time >= after:\n            return time\n    return None\n```"),
        );

    p.step(&story, "implement").success();

    assert_eq!(p.fake.requests_for("definition").len(), 1);
    assert_eq!(p.front(&story)["implementation_complete"], true);
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    assert!(p
        .git(&["show", &format!("{branch}:transit/timetable.py")])
        .contains("    def next_departure(self, stop: str, after: str) -> str:\n"));
}

#[tokio::test]
async fn an_exception_the_tests_use_through_its_module_is_written_with_the_function_raising_it() {
    let p = Project::new().await;
    p.env.write("transit/__init__.py", "");
    p.env.write(
        "transit/times.py",
        "def to_minutes(text):\n    hours, minutes = text.strip().split(':')\n    return int(hours) * 60 + int(minutes)\n",
    );
    // As the 1.5B model wrote them (transit, 2026-12-06): the module imported, not the names
    // (a `try` for its `pytest.raises`: the tests' runner has no pytest).
    p.env.write(
        "tests/test_reject.py",
        "import transit.times\n\ndef test_invalid_time_error_is_subclass_of_value_error():\n    assert issubclass(transit.times.InvalidTimeError, ValueError)\n\ndef test_out_of_range_values_raise_invalid_time_error():\n    try:\n        transit.times.to_minutes(\"24:00\")\n    except transit.times.InvalidTimeError:\n        return\n    raise AssertionError(\"no InvalidTimeError\")\n\ndef test_valid_times_keep_working():\n    assert transit.times.to_minutes(\"07:05\") == 425\n",
    );
    p.python_git_project(&[]);
    let story = p.story(
        "Reject malformed times",
        "Define an `InvalidTimeError` exception (subclass of `ValueError`) in `transit/times.py` and raise it from `to_minutes` whenever the text is not a valid \"HH:MM\" time.",
        "- [ ] `to_minutes(\"24:00\")` raises `InvalidTimeError`",
        "ready",
        &["research", "plan"],
    );
    p.env.edit(
        p.path_of(&story),
        "plan_complete: true",
        "plan_complete: true\nacceptance_complete: true\nacceptance_tests:\n- tests/test_reject.py",
    );
    // Recorded (Qwen2.5-Coder-1.5B, transit, 2026-12-06): the class beside the function, and
    // Python 2's `exceptions` module.
    let answer = "```python\nfrom exceptions import ValueError\n\nclass InvalidTimeError(ValueError):\n    pass\n\ndef to_minutes(text: str) -> int:\n    try:\n        hours, minutes = map(int, text.split(':'))\n        if hours < 0 or hours > 23 or minutes < 0 or minutes > 59:\n            raise InvalidTimeError(\"Text is not a valid 'HH:MM' time\")\n        return hours * 60 + minutes\n    except ValueError:\n        raise InvalidTimeError(\"Text is not a number\")\n```";
    p.fake
        .push("implement", Reply::text("Fixed it."))
        .push("implement", Reply::text("Fixed it again."));
    for _ in 0..3 {
        p.fake.push("definition", Reply::text(answer));
    }

    p.step(&story, "implement").success();

    assert_eq!(p.front(&story)["implementation_complete"], true);
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    let times = p.git(&["show", &format!("{branch}:transit/times.py")]);
    assert!(!times.contains("exceptions"), "{times}");
    assert_eq!(
        times.matches("class InvalidTimeError(ValueError):").count(),
        1,
        "{times}"
    );
    assert!(
        times.contains("raise InvalidTimeError(\"Text is not a number\")"),
        "{times}"
    );
}

#[tokio::test]
async fn a_narrowed_definition_that_fails_is_sampled_again_hotter_until_the_tests_pass() {
    let p = Project::new().await;
    let story = cart_without_remove(&p, &[("llm.temperature", "0.2")]);
    let wrong = "```python\ndef remove(self, sku):\n    self.items.pop(sku, None)\n```";
    p.fake
        .push("implement", Reply::text("Added it."))
        .push("implement", Reply::text("Added it again."))
        // Recorded behaviour of a 1.5B model asked twice the same way: the same wrong answer.
        .push("definition", Reply::text(wrong))
        .push("definition", Reply::text(wrong))
        // Recorded (textkit, 2026-11-28): the map's signature line, with no colon.
        .push(
            "definition",
            Reply::text("```python\ndef remove(self, sku)\n    del self.items[sku]\n```"),
        )
        .push(
            "definition",
            Reply::text("```python\ndef remove(self, sku):\n    if sku in self.items:\n        del self.items[sku]\n```"),
        );

    p.step(&story, "implement").success();

    let asked = p.fake.requests_for("definition");
    assert_eq!(asked.len(), 4, "samples until the tests pass");
    let temperature = |at: usize| asked[at].body["temperature"].as_f64().unwrap();
    assert!((temperature(0) - 0.2).abs() < 1e-6, "{}", asked[0].body);
    assert!(temperature(1) > temperature(0), "{}", asked[1].body);
    assert!(temperature(2) > temperature(1), "{}", asked[2].body);
    assert!(temperature(3) > temperature(2), "{}", asked[3].body);
    assert_ne!(asked[1].body["seed"], asked[2].body["seed"]);
    // The second sample hears that the first failed, and is not shown its code to copy: its
    // class comes without it.
    let second = asked[1].last_message();
    assert!(
        second.contains("It is written, but it fails those tests"),
        "{second}"
    );
    assert!(second.contains("Write it anew"), "{second}");
    assert!(second.contains("The class `Cart` as it is now"), "{second}");
    assert!(!second.contains("pop(sku, None)"), "{second}");
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    assert!(p
        .git(&["show", &format!("{branch}:cart.py")])
        .contains("del self.items[sku]"));
    assert_eq!(p.front(&story)["implementation_complete"], true);
    let narrowed = transcript_entries(&p, &story, "narrowed_task");
    let merged: Vec<bool> = narrowed
        .iter()
        .map(|entry| entry["merged"].as_bool().unwrap())
        .collect();
    assert_eq!(
        merged,
        [true, false, false, true],
        "the repeat is not written again, nor what would not parse"
    );
    assert_eq!(narrowed[2]["unparseable"], true, "{narrowed:#?}");
}

#[tokio::test]
async fn the_best_narrowed_sample_stays_when_the_later_ones_do_worse() {
    let p = Project::new().await;
    let story = cart_without_remove(&p, &[]);
    // Each missing behaviour is a failing test of its own, as pytest names them.
    let check = "f=0\n\
        grep -q 'def remove(self, sku)' cart.py || { echo 'FAILED test_cart.py::test_signature'; f=1; }\n\
        grep -q 'del self.items' cart.py || { echo 'FAILED test_cart.py::test_removes'; f=1; }\n\
        grep -q KeyError cart.py || { echo 'FAILED test_cart.py::test_missing_raises'; f=1; }\n\
        exit $f\n";
    p.env.write("check.sh", check);
    p.config(&[("review.testCommand", "sh check.sh")]);
    let best = "```python\ndef remove(self, sku):\n    del self.items[sku]\n```";
    p.fake
        .push("implement", Reply::text("Added it."))
        .push("implement", Reply::text("Added it again."))
        .push("definition", Reply::text(best))
        // As the 1.5B model's later samples of `is_low_stock` did (2026-11-29): a `self`
        // too many, failing more than the first.
        .push(
            "definition",
            Reply::text("```python\ndef remove(self, cart, sku):\n    pass\n```"),
        )
        .push(
            "definition",
            Reply::text("```python\ndef remove(self, cart, sku):\n    return None\n```"),
        )
        .push(
            "definition",
            Reply::text("```python\ndef remove(self, cart, sku):\n    return 0\n```"),
        );

    p.step(&story, "implement").code(1);

    assert_eq!(p.fake.requests_for("definition").len(), 4);
    let kept = transcript_entries(&p, &story, "narrowed_best_kept");
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0]["name"], "remove");
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    let cart = p.git(&["show", &format!("{branch}:cart.py")]);
    assert!(cart.contains("del self.items[sku]"), "{cart}");
    assert!(!cart.contains("cart, sku"), "{cart}");
    let error = p.front(&story)["last_error"].as_str().unwrap().to_string();
    assert!(error.contains("test_missing_raises"), "{error}");
}

#[tokio::test]
async fn stray_rewrites_of_a_file_and_of_a_function_go_back_when_the_tests_then_do_better() {
    let p = Project::new().await;
    let price = "def format_price(cents):\n    return \"$%d.%02d\" % divmod(cents, 100)\n";
    p.env.write("money.py", price);
    p.env.write("cart.py", "class Cart:\n    pass\n");
    p.git_init(false);
    // A pytest-like summary: one FAILED line a broken file, none once all is right.
    let check = "f=0; grep -q 'class Cart' cart.py || { echo 'FAILED tests/test_cart.py::test_cart - NameError'; f=1; }; grep -q '%02d' money.py || { echo 'FAILED tests/test_money.py::test_format_price - NameError'; f=1; }; grep -q 'def receipt_line' money.py || f=1; exit $f";
    p.config(&[("review.testCommand", check), OFF_ACCEPTANCE]);
    let story = p.story(
        "A receipt line",
        "Add a function `receipt_line(name, cents)` to `money.py` that calls `format_price`.",
        "- [ ] `receipt_line(\"Apple\", 250)` returns `\"Apple: $2.50\"`",
        "ready",
        &["research", "plan"],
    );
    // Recorded behaviour (inventory, 2026-11-28): the function asked for, the delivered one
    // beside it given another body, and a file the story never names rewritten.
    let rewritten = "def format_price(cents):\n    return f\"{name}: {cents}\"\n\n\ndef receipt_line(name, cents):\n    return f\"{name}: {format_price(cents)}\"\n";
    p.fake
        .push("implement", write_call("money.py", rewritten))
        .push("implement", write_call("cart.py", "cart = {}\n"))
        .push("implement", Reply::text("Added `receipt_line`."));

    p.step(&story, "implement").success();

    assert_eq!(p.fake.requests_for("implement").len(), 3, "no second round");
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    let show = |path: &str| p.git(&["show", &format!("{branch}:{path}")]);
    assert_eq!(show("cart.py"), "class Cart:\n    pass");
    assert_eq!(
        show("money.py"),
        "def format_price(cents):\n    return \"$%d.%02d\" % divmod(cents, 100)\n\n\ndef receipt_line(name, cents):\n    return f\"{name}: {format_price(cents)}\""
    );
    let files = transcript_entries(&p, &story, "stray_changes_put_back");
    assert_eq!(files[0]["files"], json!(["cart.py"]), "{files:?}");
    let functions = transcript_entries(&p, &story, "stray_definitions_put_back");
    assert_eq!(
        functions[0]["definitions"],
        json!(["money.py::format_price"]),
        "{functions:?}"
    );
}

#[tokio::test]
async fn a_board_git_tracks_is_never_a_stray_change_put_back() {
    let p = Project::new().await;
    p.env.write(
        "money.py",
        "def format_price(cents):\n    return str(cents)\n",
    );
    p.git_init(false);
    let check = "grep -q 'def receipt_line' money.py";
    p.config(&[("review.testCommand", check), OFF_ACCEPTANCE]);
    let story = p.story(
        "A receipt line",
        "Add a function `receipt_line(name, cents)` to `money.py`.",
        "- [ ] `receipt_line(\"Apple\", 250)` returns `\"Apple: 250\"`",
        "ready",
        &["research", "plan"],
    );
    // A board shared through git is committed: its story file leaves `ready` on the story's
    // branch as implement begins, and the stray check once put it back there (a drive,
    // 2026-12-06), leaving two files of one story that stopped both.
    p.git(&["add", "-A"]);
    p.git(&["commit", "-q", "-m", "Board"]);
    let code = "def format_price(cents):\n    return str(cents)\n\n\ndef receipt_line(name, cents):\n    return f\"{name}: {format_price(cents)}\"\n";
    p.fake
        .push("implement", write_call("money.py", code))
        .push("implement", Reply::text("Added `receipt_line`."));

    p.step(&story, "implement").success();

    let path = p.env.story_path(&story.slug);
    assert!(path.parent().unwrap().ends_with("in-progress"), "{path:?}");
    assert_eq!(p.front(&story)["implementation_complete"], true);
    assert!(transcript_entries(&p, &story, "stray_changes_put_back").is_empty());
}

#[tokio::test]
async fn a_standard_name_the_code_uses_without_importing_is_imported_before_another_round() {
    let p = Project::new().await;
    p.env
        .write("ledger.py", "def total(entries):\n    return 0\n");
    p.env.write(
        "tests/test_ledger.py",
        "from decimal import Decimal\nfrom ledger import total\n\n\ndef test_total():\n    assert total(['0.10', '0.20']) == Decimal('0.30')\n",
    );
    p.python_git_project(&[OFF_ACCEPTANCE]);
    let story = p.exact_totals_story();
    // Right but for its import line: a `NameError` in ledger.py, not a round of the model.
    let code =
        "def total(entries):\n    return sum((Decimal(entry) for entry in entries), Decimal(0))\n";
    p.fake
        .push("implement", write_call("ledger.py", code))
        .push("implement", Reply::text("Made `total` exact."));

    p.step(&story, "implement").success();

    assert_eq!(p.fake.requests_for("implement").len(), 2, "no second round");
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    assert_eq!(
        p.git(&["show", &format!("{branch}:ledger.py")]),
        format!("from decimal import Decimal\n{}", code.trim_end())
    );
    let added = transcript_entries(&p, &story, "standard_import_added");
    assert_eq!(
        added[0]["import"], "from decimal import Decimal",
        "{added:?}"
    );
    assert_eq!(added[0]["paths"], json!(["ledger.py"]));
}

#[tokio::test]
async fn a_delivered_function_the_story_uses_and_the_model_dropped_goes_back() {
    let p = Project::new().await;
    let format_cents =
        "def format_cents(cents):\n    return f\"${cents // 100}.{cents % 100:02d}\"\n";
    p.env.write("money.py", format_cents);
    p.env.write(
        "tests/test_money.py",
        "from money import format_cents\n\n\ndef test_format_cents():\n    assert format_cents(150) == '$1.50'\n",
    );
    p.python_git_project(&[OFF_ACCEPTANCE]);
    let story = p.story(
        "A statement",
        "Add `statement(balances)` to money.py: `name: amount` with the amount shown by `format_cents(cents)`.",
        "- [ ] `statement({'ann': 150}) == 'ann: $1.50'`",
        "ready",
        &["research", "plan"],
    );
    // The file written whole with the new function only: the one it calls is gone.
    let statement = "def statement(balances):\n    return '\\n'.join(f'{name}: {format_cents(cents)}' for name, cents in balances.items())\n";
    p.fake
        .push("implement", write_call("money.py", statement))
        .push(
            "implement",
            write_call(
                "tests/test_statement.py",
                "from money import statement\n\n\ndef test_statement():\n    assert statement({'ann': 150}) == 'ann: $1.50'\n",
            ),
        )
        .push("implement", Reply::text("Added `statement`."));

    p.step(&story, "implement").success();

    assert_eq!(p.fake.requests_for("implement").len(), 3, "no second round");
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    let money = p.git(&["show", &format!("{branch}:money.py")]);
    assert!(
        money.contains(format_cents.trim_end()) && money.contains("def statement(balances):"),
        "{money}"
    );
    let put_back = transcript_entries(&p, &story, "stray_definitions_put_back");
    assert_eq!(
        put_back[0]["definitions"],
        json!(["money.py::format_cents"])
    );
}

#[tokio::test]
async fn a_method_the_story_does_not_name_goes_back_alone_when_the_change_beside_it_is_needed() {
    let p = Project::new().await;
    p.env.write(
        "cart.py",
        "class Cart:\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku, quantity=1):\n        self.items[sku] = self.items.get(sku, 0) + quantity\n\n    def quantity(self, sku):\n        return self.items.get(sku, 0)\n",
    );
    p.env.write(
        "tests/test_cart.py",
        "from cart import Cart\n\n\ndef test_add_counts():\n    cart = Cart()\n    cart.add('apple', 2)\n    assert cart.quantity('apple') == 2\n",
    );
    p.python_git_project(&[OFF_ACCEPTANCE]);
    let story = p.story(
        "Empty the cart",
        "Add `Cart.clear()` to cart.py: it empties the cart and counts how often it was emptied.",
        "- [ ] after `cart.clear()`, `cart.cleared == 1`",
        "ready",
        &["research", "plan"],
    );
    // Recorded (driving the tool with Qwen2.5-Coder-1.5B, 2026-12-05): a right `clear`, and
    // the delivered `quantity` given `return 0`. Here `__init__` changes too, as `clear` needs:
    // put back together with `quantity`, the story's own test fails instead.
    let rewritten = "class Cart:\n    def __init__(self):\n        self.items = {}\n        self.cleared = 0\n\n    def add(self, sku, quantity=1):\n        self.items[sku] = self.items.get(sku, 0) + quantity\n\n    def quantity(self, sku):\n        return 0\n\n    def clear(self):\n        self.items = {}\n        self.cleared += 1\n";
    p.fake
        .push("implement", write_call("cart.py", rewritten))
        .push(
            "implement",
            write_call(
                "tests/test_clear.py",
                "from cart import Cart\n\n\ndef test_clear():\n    cart = Cart()\n    cart.clear()\n    assert cart.cleared == 1\n",
            ),
        )
        .push("implement", Reply::text("Added `clear`."));

    p.step(&story, "implement").success();

    assert_eq!(p.fake.requests_for("implement").len(), 3, "no second round");
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    let cart = p.git(&["show", &format!("{branch}:cart.py")]);
    assert!(
        cart.contains("return self.items.get(sku, 0)") && cart.contains("self.cleared = 0"),
        "{cart}"
    );
    let kept = transcript_entries(&p, &story, "stray_definitions_kept");
    assert_eq!(
        kept[0]["definitions"],
        json!(["cart.py::Cart.__init__", "cart.py::Cart.quantity"]),
        "{kept:?}"
    );
    let put_back = transcript_entries(&p, &story, "stray_definitions_put_back");
    assert_eq!(
        put_back[0]["definitions"],
        json!(["cart.py::Cart.quantity"]),
        "{put_back:?}"
    );
}

/// calendar_utils.py as the project has it, and with the story's `is_leap_year` added.
const DAYS: &str = "def days_in_month(month):\n    return 28 if month == 2 else 31\n";
const WITH_LEAP: &str = "def days_in_month(month):\n    return 28 if month == 2 else 31\n\n\ndef is_leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)";
/// Recorded (driving this story with Qwen2.5-Coder-1.5B, 2026-11-29), the function added: the
/// file written whole under an import of itself, a circular import in every round.
const SELF_IMPORTING: &str = "from calendar_utils import days_in_month\n\n\ndef days_in_month(month):\n    return 28 if month == 2 else 31\n\n\ndef is_leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n";

/// A Python project with calendar_utils.py and a planned story that asks it for `is_leap_year`.
fn leap_year_story(p: &Project, settings: &[(&str, &str)]) -> Made {
    p.env.write("calendar_utils.py", DAYS);
    p.python_git_project(settings);
    p.story(
        "Tell leap years",
        "Add `is_leap_year(year)` to calendar_utils.py.",
        "- [ ] `is_leap_year(2000) is True`",
        "ready",
        &["research", "plan"],
    )
}

/// Implements `story` with the model writing [`SELF_IMPORTING`], and checks that the branch
/// holds it without the import, which the tool says it dropped.
fn implemented_without_the_self_import(p: &Project, story: &Made) {
    p.fake
        .push("implement", write_call("calendar_utils.py", SELF_IMPORTING))
        .push("implement", Reply::text("Added `is_leap_year`."));

    p.step(story, "implement").success();

    assert_eq!(p.fake.requests_for("implement").len(), 2, "no second round");
    let branch = p.front(story)["branch"].as_str().unwrap().to_string();
    assert_eq!(
        p.git(&["show", &format!("{branch}:calendar_utils.py")]),
        WITH_LEAP
    );
    let dropped = transcript_entries(p, story, "self_import_dropped");
    assert_eq!(dropped[0]["path"], "calendar_utils.py", "{dropped:?}");
}

#[tokio::test]
async fn a_module_the_model_makes_import_itself_loses_that_import() {
    let p = Project::new().await;
    let story = leap_year_story(&p, &[OFF_ACCEPTANCE]);
    implemented_without_the_self_import(&p, &story);
}

#[tokio::test]
async fn a_self_import_a_failed_run_committed_on_the_branch_is_dropped_in_the_next() {
    let p = Project::new().await;
    let story = leap_year_story(&p, &[]);
    let tests = "from calendar_utils import is_leap_year\n\n\ndef test_2000():\n    assert is_leap_year(2000) is True\n";
    p.fake
        .push("acceptance", write_call("tests/test_leap.py", tests))
        .push("acceptance", Reply::text("done"));
    p.run(&["run", "--story", &story.id]).success();
    // What a failed implement leaves: its partial work committed on the story's branch; the
    // model then writes the same file again (as it did, driving this story).
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    p.git(&["checkout", "-q", &branch]);
    p.env.write("calendar_utils.py", SELF_IMPORTING);
    p.git(&["commit", "-q", "-am", "partial implementation"]);
    p.git(&["checkout", "-q", "main"]);

    implemented_without_the_self_import(&p, &story);
}

#[tokio::test]
async fn a_stray_rewrite_goes_back_with_the_project_test_the_model_rewrote_to_match_it() {
    let p = Project::new().await;
    let cart = "class Cart:\n    def add(self, sku, quantity=1):\n        if quantity <= 0:\n            raise ValueError(quantity)\n";
    let cart_test = "def test_add_zero_quantity():  # expects_raise\n    pass\n";
    p.env.write("cart.py", cart);
    p.env.write("tests/test_cart.py", cart_test);
    p.env.write(
        "pricing.py",
        "def apply_discount(amount, percent):\n    return amount\n",
    );
    p.git_init(false);
    // The project's test holds while cart.py and it agree on raising.
    let check = "f=0; grep -q 'raise ValueError' cart.py; c=$?; grep -q 'expects_raise' tests/test_cart.py; t=$?; if [ $c -ne $t ]; then echo 'FAILED tests/test_cart.py::test_add_zero_quantity - Failed: DID NOT RAISE'; f=1; fi; grep -q 'def total_with_discount' pricing.py || f=1; exit $f";
    p.config(&[("review.testCommand", check), OFF_ACCEPTANCE]);
    let story = p.story(
        "Total with a discount",
        "Add a function `total_with_discount(prices, percent)` to `pricing.py`.",
        "- [ ] `total_with_discount([1000, 500], 10)` returns `1350`",
        "ready",
        &["research", "plan"],
    );
    // Recorded behaviour (inventory `total-with-discount`, 2026-11-28): cart.py, which the
    // story never names, rewritten without the check, and the project's test rewritten to
    // expect what the rewrite does; together they pass.
    p.fake
        .push(
            "implement",
            write_call(
                "pricing.py",
                "def apply_discount(amount, percent):\n    return amount\n\n\ndef total_with_discount(prices, percent):\n    return apply_discount(sum(prices), percent)\n",
            ),
        )
        .push(
            "implement",
            write_call("cart.py", "class Cart:\n    def add(self, sku, quantity=1):\n        pass\n"),
        )
        .push(
            "implement",
            write_call("tests/test_cart.py", "def test_add_zero_quantity():\n    pass\n"),
        )
        .push("implement", Reply::text("Added `total_with_discount`."));

    p.step(&story, "implement").success();

    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    let show = |path: &str| p.git(&["show", &format!("{branch}:{path}")]) + "\n";
    assert_eq!(show("cart.py"), cart);
    assert_eq!(show("tests/test_cart.py"), cart_test);
    assert!(show("pricing.py").contains("def total_with_discount"));
    let put_back = transcript_entries(&p, &story, "stray_changes_put_back");
    assert_eq!(put_back[0]["files"], json!(["cart.py"]), "{put_back:?}");
    let unasked = transcript_entries(&p, &story, "unasked_tests_removed");
    assert_eq!(
        unasked[0]["tests"],
        json!(["test_add_zero_quantity"]),
        "{unasked:?}"
    );
}

#[tokio::test]
async fn an_implement_sent_back_by_review_that_changes_nothing_is_no_progress() {
    let p = Project::new().await;
    let story = cart_without_remove(&p, &[]);
    let right = "class Cart:\n    def __init__(self):\n        self.items = {}\n\n    def remove(self, sku):\n        del self.items[sku]\n";
    p.fake
        .push("implement", write_call("cart.py", right))
        .push("implement", Reply::text("Added `remove` to cart.py."))
        // Recorded (inventory, 2026-11-28): a blocker against code whose tests passed.
        .push(
            "code-review",
            Reply::verdict(
                false,
                json!([{"severity": "blocker", "category": "functionality",
                        "description": "remove does not take the item out"}]),
            ),
        )
        // Sent back, the model writes the same file again.
        .push("implement", write_call("cart.py", right))
        .push("implement", Reply::text("Checked `remove` again."));

    p.run(&["run", "--auto"]).code(3);

    let front = p.front(&story);
    assert_eq!(front["refinement_count"], 1, "{front:?}");
    assert_eq!(
        front["blocked_reason"],
        "No progress: the implement re-run after the review changed no file, so the code the review rejected stands: \"remove does not take the item out\""
    );
    assert_eq!(
        p.fake.requests_for("implement").len(),
        4,
        "no retry after it"
    );
}

/// A cart.py whose Cart has no `remove`, a test command that passes once one deletes an item,
/// and a planned story that asks for it; `settings` are set too.
fn cart_without_remove(p: &Project, settings: &[(&str, &str)]) -> Made {
    p.env.write(
        "cart.py",
        "class Cart:\n    def __init__(self):\n        self.items = {}\n",
    );
    p.git_init(false);
    p.config(&[
        ("review.testCommand", "grep -q 'del self.items' cart.py"),
        OFF_ACCEPTANCE,
    ]);
    p.config(settings);
    p.story(
        "Remove items",
        "Add a method `remove(sku)` to the Cart class in cart.py.",
        "- [ ] `remove(sku)` takes the item out",
        "ready",
        &["research", "plan"],
    )
}

#[tokio::test]
async fn a_test_file_of_the_models_own_that_does_not_load_is_put_back_and_the_model_told() {
    let p = Project::new().await;
    p.env.write(
        "money.py",
        "def format_price(cents):\n    return f'${cents / 100:.2f}'\n",
    );
    p.env.write(
        "tests/test_money.py",
        "from money import format_price\n\n\ndef test_format_price():\n    assert format_price(5) == '$0.05'\n",
    );
    // The story's example as a project test, so that the wrong code's round goes back.
    p.env.write(
        "tests/test_story.py",
        "from money import receipt_line\n\n\ndef test_example():\n    assert receipt_line('Apple', 250) == 'Apple: $2.50'\n",
    );
    p.python_git_project(&[OFF_ACCEPTANCE]);
    let story = p.story(
        "Receipt line",
        "Add a function `receipt_line(name, cents)` to money.py.",
        "- [ ] `receipt_line('Apple', 250)` returns `'Apple: $2.50'`",
        "ready",
        &["research", "plan"],
    );
    // As the 1.5B model wrote one (inventory `parse-quantity`, 2026-11-29): a function imported
    // as a module, which fails the file's import, so that none of its tests runs (pytest runs
    // no test at all then).
    let broken = "import money.receipt_line\n\n\ndef test_receipt_line():\n    assert money.receipt_line('Apple', 250) == 'Apple: $2.50'\n";
    let code = "def format_price(cents):\n    return f'${cents / 100:.2f}'\n\n\ndef receipt_line(name, cents):\n    return f'{name}: {format_price(cents)}'\n";
    let wrong = code.replace("{name}: ", "{name} ");
    p.fake
        .push("implement", write_call("money.py", &wrong))
        .push("implement", write_call("tests/test_money.py", broken))
        .push("implement", Reply::text("Added receipt_line and its test."))
        .push("implement", write_call("money.py", code))
        .push("implement", Reply::text("Fixed the colon."));

    p.step(&story, "implement").success();

    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    assert!(
        !p.git(&["show", &format!("{branch}:tests/test_money.py")])
            .contains("import money.receipt_line"),
        "the file that did not load is back as the base had it"
    );
    let put_back = transcript_entries(&p, &story, "unloaded_tests_put_back");
    assert_eq!(
        put_back[0]["files"],
        json!(["tests/test_money.py"]),
        "{put_back:?}"
    );
    // The round after it starts with the file, its error and that it was put back.
    let feedback = p.fake.requests_for("implement")[3].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user" || m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    assert!(
        feedback
            .contains("Your test file did not load, so no test could run: `tests/test_money.py`:"),
        "{feedback}"
    );
    assert!(
        feedback.contains("No module named 'money.receipt_line'"),
        "{feedback}"
    );
}

#[tokio::test]
async fn a_file_of_the_projects_tests_written_in_the_reply_keeps_its_tests_and_gains_new_ones() {
    let p = Project::new().await;
    p.config(&[("implement.editFormat", "whole")]);
    p.env.write("calc.py", "def add(a, b):\n    return a + b\n");
    let project_tests = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n";
    p.env.write("tests/test_calc.py", project_tests);
    let story = subtract_story(&p);
    // In kind as the 1.5B model wrote it (inventory `receipt-line`, 2026-12-05): the project's
    // test file out again, its test rewritten wrongly, beside the change.
    p.fake.push(
        "implement",
        Reply::text(
            "calc.py\n```python\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n```\n\ntests/test_calc.py\n```python\nfrom calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 4\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n```\nAdded sub.",
        ),
    );

    p.step(&story, "implement").success();

    let tests = p.env.read("tests/test_calc.py");
    assert!(tests.contains("assert add(1, 2) == 3"), "{tests}");
    assert!(!tests.contains("== 4"), "{tests}");
    assert!(
        tests.contains("def test_sub():\n    assert sub(3, 1) == 2"),
        "{tests}"
    );
    let calls = transcript_entries(&p, &story, "tool_call");
    let result = calls[1]["result"].as_str().unwrap();
    assert!(
        result
            .contains("your test_add left out: the project's tests of other work stay as they are"),
        "{result}"
    );
}
