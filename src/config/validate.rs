//! Checking a merged config before anything uses it (docs/design.md §4): every bad value is an
//! error naming its key, with the limits it must stay within.

use std::path::Path;

use super::settings::*;
use crate::board::Phase;
use crate::error::{Error, Result};

/// The most independent implement attempts: each holds a worktree and a conversation.
const MAX_ATTEMPTS: u32 = 16;
/// The smallest `tools.maxReadBytes`: less would not show a screenful of code.
const MIN_READ_BYTES: u64 = 1024;
/// The largest `tools.maxReadBytes`: a reply larger than 16 MiB is refused anyway.
const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;

impl Config {
    pub(super) fn validate(&self, path: &Path) -> Result<()> {
        let fail = |key: &str, why: &str| Err(Error::config(path, format!("key `{key}`: {why}")));
        let folder = self.sdlc_folder.trim();
        if folder.is_empty()
            || Path::new(folder).is_absolute()
            || folder.split(['/', '\\']).any(|c| c == "..")
        {
            return fail("sdlcFolder", "must be a relative folder inside the project");
        }
        if self.concurrency == 0 {
            return fail("concurrency", "must be at least 1");
        }
        if self.refinement.max_iterations == 0 {
            return fail("refinement.maxIterations", "must be at least 1");
        }
        if self.review.test_timeout_seconds == 0 {
            return fail("review.testTimeoutSeconds", "must be at least 1");
        }
        if self.llm.model.trim().is_empty() {
            return fail("llm.model", "must not be empty");
        }
        if self.llm.api_key_env.trim().is_empty() {
            return fail("llm.apiKeyEnv", "must name an environment variable");
        }
        if self.llm.timeout_seconds == 0 {
            return fail("llm.timeoutSeconds", "must be at least 1");
        }
        if self.llm.max_turns == 0 {
            return fail("llm.maxTurns", "must be at least 1");
        }
        if !(MIN_READ_BYTES..=MAX_READ_BYTES).contains(&self.tools.max_read_bytes) {
            return fail(
                "tools.maxReadBytes",
                &format!("must be between {MIN_READ_BYTES} and {MAX_READ_BYTES}"),
            );
        }
        if self.tools.timeout_seconds == 0 {
            return fail("tools.timeoutSeconds", "must be at least 1");
        }
        if let Some(root) = self.tools.writable_roots.iter().find(|r| !r.is_absolute()) {
            return fail(
                "tools.writableRoots",
                &format!("`{}` must be an absolute path", root.display()),
            );
        }
        if let Some(name) = self
            .tools
            .keep_env
            .iter()
            .find(|n| n.is_empty() || n.contains('='))
        {
            return fail(
                "tools.keepEnv",
                &format!("`{name}` is not an environment variable name"),
            );
        }
        if let Some(temperature) = self.llm.temperature {
            if !(0.0..=2.0).contains(&temperature) {
                return fail("llm.temperature", "must be between 0 and 2");
            }
        }
        if self.llm.max_tokens == 0 {
            return fail("llm.maxTokens", "must be at least 1");
        }
        for &phase in Phase::ALL {
            if self.phases.phase(phase).and_then(|p| p.max_turns) == Some(0) {
                return fail(&format!("phases.{phase}.maxTurns"), "must be at least 1");
            }
            if self.phases.max_tokens(phase) == Some(0) {
                return fail(&format!("phases.{phase}.maxTokens"), "must be at least 1");
            }
        }
        if self.phases.enabled_setting(Phase::Implement) == Some(false) {
            return fail(
                "phases.implement.enabled",
                "implement cannot be skipped: without it a story has no work to review",
            );
        }
        if self.implement.attempts == Some(0) {
            return fail("implement.attempts", "must be at least 1");
        }
        if self
            .implement
            .attempts
            .is_some_and(|attempts| attempts > MAX_ATTEMPTS)
        {
            return fail(
                "implement.attempts",
                &format!("must be at most {MAX_ATTEMPTS}"),
            );
        }
        if let Some(url) = &self.llm.base_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return fail("llm.baseUrl", "must start with http:// or https://");
            }
        }
        if let Some(base) = &self.git.base_branch {
            if base.trim().is_empty()
                || base.starts_with('-')
                || base.chars().any(|c| c.is_whitespace() || c.is_control())
            {
                return fail(
                    "git.baseBranch",
                    "must be a branch name (or null for the branch checked out)",
                );
            }
        }
        if self.remote.claim_seconds < 3 {
            return fail(
                "remote.claimSeconds",
                "must be at least 3 (a claim is renewed every third of it)",
            );
        }
        if self.remote.poll_seconds == 0 {
            return fail("remote.pollSeconds", "must be at least 1");
        }
        if self.remote.timeout_seconds == 0 {
            return fail("remote.timeoutSeconds", "must be at least 1");
        }
        self.validate_budget_and_pricing(path)?;
        self.validate_notify(path)?;
        for &phase in Phase::ALL {
            if let Some(gate) = self.phases.gate(phase) {
                if gate.reviewer == Reviewer::Command
                    && gate.command.as_deref().is_none_or(|c| c.trim().is_empty())
                {
                    return fail(
                        &format!("phases.{phase}.review.command"),
                        "a command reviewer needs a command",
                    );
                }
                if gate.timeout_seconds == 0 {
                    return fail(
                        &format!("phases.{phase}.review.timeoutSeconds"),
                        "must be at least 1",
                    );
                }
            }
        }
        Ok(())
    }

    /// A limit of zero or less would stop everything before it starts, and a negative price
    /// would make spending earn money: both are mistakes worth naming (docs/design.md §14).
    fn validate_budget_and_pricing(&self, path: &Path) -> Result<()> {
        let fail = |key: String, why: &str| Err(Error::config(path, format!("key `{key}`: {why}")));
        let budget = &self.budget;
        for (key, tokens) in [
            ("budget.storyTokens", budget.story_tokens),
            ("budget.runTokens", budget.run_tokens),
        ] {
            if tokens == Some(0) {
                return fail(
                    key.to_string(),
                    "a budget must be above 0 (null means no limit)",
                );
            }
        }
        for (key, usd) in [
            ("budget.storyUsd", budget.story_usd),
            ("budget.runUsd", budget.run_usd),
        ] {
            if usd.is_some_and(|usd| !(usd.is_finite() && usd > 0.0)) {
                return fail(
                    key.to_string(),
                    "a budget must be above 0 (null means no limit)",
                );
            }
        }
        for (model, price) in &self.pricing {
            for (field, value) in [
                ("inputPerMTok", price.input_per_m_tok),
                ("outputPerMTok", price.output_per_m_tok),
            ] {
                if !(value.is_finite() && value >= 0.0) {
                    return fail(
                        format!("pricing.{model}.{field}"),
                        "a price must be a number of USD per million tokens, 0 or more",
                    );
                }
            }
        }
        Ok(())
    }

    fn validate_notify(&self, path: &Path) -> Result<()> {
        let fail = |key: &str, why: &str| Err(Error::config(path, format!("key `{key}`: {why}")));
        let notify = &self.notify;
        if notify
            .command
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return fail(
                "notify.command",
                "must be a shell command (or null for none)",
            );
        }
        if let Some(url) = &notify.webhook {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return fail(
                    "notify.webhook",
                    "must be a URL starting with http:// or https:// (or null for none)",
                );
            }
        }
        if notify.timeout_seconds == 0 {
            return fail("notify.timeoutSeconds", "must be at least 1");
        }
        Ok(())
    }
}
