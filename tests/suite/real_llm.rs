//! One story through every phase against a real OpenAI-compatible server (docs/design.md §15).
//!
//! Runs only when `AGENTIC_SDLC_REAL_LLM_URL` names the server's base URL (for example
//! `http://127.0.0.1:8080/v1` for llama.cpp's `llama-server`, `http://127.0.0.1:11434/v1` for
//! Ollama); without it the test is ignored, so CI stays offline. Optional:
//! `AGENTIC_SDLC_REAL_LLM_MODEL` (default `local`), `AGENTIC_SDLC_REAL_LLM_MAX_TOKENS` (default
//! 1024) and `AGENTIC_SDLC_REAL_LLM_TIMEOUT` (seconds, default 300). A key, when the server
//! needs one, is read from `AGENTIC_SDLC_REAL_LLM_KEY`.
//!
//! A small model is allowed to fail a phase; what it must never do is get broken output into
//! the story or hang. So the test asserts the contract (each step ends, a failure leaves
//! last_error and no flag, sections stay single, a review decides or is FAILED) and prints
//! what it measured: phases completed, verdicts parsed, wall time per phase.
//!
//! ```text
//! AGENTIC_SDLC_REAL_LLM_URL=http://127.0.0.1:8080/v1 \
//!   cargo test --locked --test all -- --ignored --nocapture real_llm
//! ```

use std::time::{Duration, Instant};

use agentic_sdlc::board::sections::STANDARD_SECTIONS;

use super::agents_e2e::heading_count;
use super::common::{outcome, TestEnv};

const URL: &str = "AGENTIC_SDLC_REAL_LLM_URL";

fn setting(name: &str, default: &str) -> String {
    std::env::var(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| default.to_string())
}

#[test]
#[ignore = "talks to a real model server: set AGENTIC_SDLC_REAL_LLM_URL and run with --ignored"]
fn a_story_goes_through_every_phase_against_a_real_server() {
    let Some(url) = std::env::var(URL).ok().filter(|u| !u.trim().is_empty()) else {
        eprintln!("{URL} is not set; nothing to talk to, so nothing was tested");
        return;
    };
    let env = TestEnv::init();
    let model = setting("AGENTIC_SDLC_REAL_LLM_MODEL", "local");
    let max_tokens = setting("AGENTIC_SDLC_REAL_LLM_MAX_TOKENS", "1024");
    let timeout = setting("AGENTIC_SDLC_REAL_LLM_TIMEOUT", "300");
    for (key, value) in [
        ("llm.baseUrl", url.as_str()),
        ("llm.model", model.as_str()),
        ("llm.maxTokens", max_tokens.as_str()),
        ("llm.timeoutSeconds", timeout.as_str()),
        ("llm.apiKeyEnv", "AGENTIC_SDLC_REAL_LLM_KEY"),
        ("llm.maxTurns", "12"),
    ] {
        env.run(&["config", key, value]).success();
    }
    env.write("greet.py", "def greet(name):\n    return 'Hello ' + name\n");
    env.write(
        "test_greet.py",
        "from greet import greet\n\ndef test_greet():\n    assert greet('Ada') == 'Hello Ada'\n",
    );
    let body = env.write(
        "../real-llm-story.md",
        "## Summary\nGreet people by name with an exclamation mark.\n\n## Acceptance Criteria\n- [ ] greet('Ada') returns 'Hello Ada!'\n",
    );
    let (id, slug, _) = env.add(
        "Add an exclamation mark to the greeting",
        &["--body-file", body.to_str().unwrap()],
    );
    std::fs::remove_file(body).unwrap();

    let mut measured: Vec<(String, Duration, i32)> = Vec::new();
    for step in ["refine", "research", "plan", "implement", "review"] {
        let started = Instant::now();
        let mut cmd = env.cmd(&["run", "--story", &id, "--step", step]);
        if let Ok(key) = std::env::var("AGENTIC_SDLC_REAL_LLM_KEY") {
            cmd.env("AGENTIC_SDLC_REAL_LLM_KEY", key);
        }
        let out = outcome(&mut cmd);
        let code = out.code;
        measured.push((step.to_string(), started.elapsed(), code));
        eprintln!(
            "--- {step}: exit {code} in {:.1?}\n{}",
            started.elapsed(),
            out.stderr
        );

        let path = env.story_path(&slug);
        let front = env.frontmatter(&path);
        let story_body = env.body(&path);
        assert!(matches!(code, 0 | 1), "{step}: exit {code}\n{}", out.stderr);
        if code == 1 {
            assert!(
                front.get("last_error").is_some(),
                "{step} failed without last_error"
            );
        }
        for section in STANDARD_SECTIONS {
            let count = heading_count(&story_body, section);
            assert_eq!(
                count, 1,
                "{step}: ## {section} appears {count} times:\n{story_body}"
            );
        }
        if code == 1 && step != "review" {
            // A phase that failed wrote nothing; the later phases have nothing to build on.
            break;
        }
    }

    let details = env.run_json(&["details", &id])["story"].clone();
    let reviews = details["review_history"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let parsed = reviews.iter().filter(|r| r["decision"] != "FAILED").count();
    eprintln!("=== real model {model} at {url} (llm.maxTokens {max_tokens})");
    for (step, took, code) in &measured {
        let result = if *code == 0 { "completed" } else { "failed" };
        eprintln!("{step:>10}: {result} in {:.1}s", took.as_secs_f64());
    }
    eprintln!(
        "reviews with a verdict: {parsed} of {}; usage: {}",
        reviews.len(),
        details["usage"]
    );
}
