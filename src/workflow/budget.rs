//! Cost and budgets (SPEC §14): the price of a usage record, and the run-wide meter that admits
//! or refuses each model call against `budget.*`.
//!
//! The meter is shared by every agent of a run. A call is admitted before it is sent and
//! counted when it is answered, so parallel stories together overshoot a limit by at most the
//! calls already in flight when it was reached.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::agents::meter::CallMeter;
use crate::board::records::{round_usd, Usage};
use crate::config::{BudgetConfig, Config, Price};

/// The price of `model`, when `pricing` lists it.
pub fn price_of(config: &Config, model: &str) -> Option<Price> {
    config.pricing.get(model).copied()
}

/// What tokens cost at a price, in USD.
pub fn cost(price: Price, prompt_tokens: u64, completion_tokens: u64) -> f64 {
    round_usd(
        (prompt_tokens as f64 * price.input_per_m_tok
            + completion_tokens as f64 * price.output_per_m_tok)
            / 1_000_000.0,
    )
}

/// `usage` with its `cost_usd` filled in from the run's model price; unchanged without one.
pub fn priced(price: Option<Price>, mut usage: Usage) -> Usage {
    if let Some(price) = price {
        if usage.cost_usd.is_none() {
            usage.cost_usd = Some(cost(price, usage.prompt_tokens, usage.completion_tokens));
        }
    }
    usage
}

/// Why a call was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The story reached its own budget: it moves to blocked/ with this reason.
    Story(String),
    /// The run reached its budget: the action stops, the story stays as it is.
    Run(String),
}

/// The run-wide meter of spending.
pub struct Spending {
    limits: BudgetConfig,
    price: Option<Price>,
    model: String,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    run: Usage,
    stories: HashMap<String, StoryTally>,
    /// The budget that stopped the run, once one did.
    run_stop: Option<String>,
}

#[derive(Default)]
struct StoryTally {
    /// Everything the story spent, in earlier runs too.
    total: Usage,
    /// What the action in flight spent so far.
    action: Usage,
    refusal: Option<Refusal>,
}

impl Spending {
    pub fn new(config: &Config) -> Spending {
        let model = config.model();
        Spending {
            limits: config.budget.clone(),
            price: price_of(config, &model),
            model,
            state: Mutex::new(State::default()),
        }
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn price(&self) -> Option<Price> {
        self.price
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves numbers that are still worth reading.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An action of the story starts; `spent` is the story's `usage` so far.
    pub fn begin_action(&self, story_id: &str, spent: Usage) {
        let spent = priced(self.price, spent);
        let mut state = self.state();
        let tally = state.stories.entry(story_id.to_string()).or_default();
        tally.total = spent;
        tally.action = Usage::default();
        tally.refusal = None;
    }

    /// Why the story's last call was refused, if one was; asking clears it.
    pub fn take_refusal(&self, story_id: &str) -> Option<Refusal> {
        self.state()
            .stories
            .get_mut(story_id)
            .and_then(|t| t.refusal.take())
    }

    /// What the story's action in flight spent so far, priced.
    pub fn action_usage(&self, story_id: &str) -> Usage {
        self.state()
            .stories
            .get(story_id)
            .map(|t| t.action)
            .unwrap_or_default()
    }

    /// What the whole run spent so far, priced.
    pub fn run_usage(&self) -> Usage {
        self.state().run
    }

    /// The budget that stopped the run, once one did.
    pub fn run_stop(&self) -> Option<String> {
        let mut state = self.state();
        if state.run_stop.is_none() {
            state.run_stop = self.run_limit_reached(&state.run);
        }
        state.run_stop.clone()
    }

    fn run_limit_reached(&self, run: &Usage) -> Option<String> {
        limit_reached(
            run,
            self.limits.run_tokens,
            self.limits.run_usd,
            "budget.runTokens",
            "budget.runUsd",
        )
        .map(|(key, text)| format!("the run budget {key} is spent ({text})"))
    }

    fn story_limit_reached(&self, story: &Usage) -> Option<String> {
        limit_reached(
            story,
            self.limits.story_tokens,
            self.limits.story_usd,
            "budget.storyTokens",
            "budget.storyUsd",
        )
        .map(|(_, text)| format!("Budget: {text}"))
    }
}

/// "<used> of <limit> tokens" (or USD) for the first limit `usage` reached, with its key.
fn limit_reached(
    usage: &Usage,
    tokens: Option<u64>,
    usd: Option<f64>,
    tokens_key: &'static str,
    usd_key: &'static str,
) -> Option<(&'static str, String)> {
    if let Some(limit) = tokens.filter(|limit| usage.tokens() >= *limit) {
        return Some((tokens_key, format!("{} of {limit} tokens", usage.tokens())));
    }
    let spent = usage.cost_usd.unwrap_or(0.0);
    usd.filter(|limit| spent >= *limit)
        .map(|limit| (usd_key, format!("{} of {} USD", format_usd(spent), limit)))
}

/// Dollars as a person reads them: cents for large sums, more digits for small ones.
pub fn format_usd(usd: f64) -> String {
    let text = if usd >= 1.0 {
        format!("{usd:.2}")
    } else {
        format!("{usd:.6}")
    };
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    if trimmed.is_empty() {
        "0".into()
    } else {
        trimmed.to_string()
    }
}

impl CallMeter for Spending {
    fn admit(&self, story_id: &str) -> Result<(), String> {
        let mut state = self.state();
        if state.run_stop.is_none() {
            state.run_stop = self.run_limit_reached(&state.run);
        }
        if let Some(reason) = state.run_stop.clone() {
            let refused = format!("Stopped before an LLM call: {reason}");
            if let Some(tally) = state.stories.get_mut(story_id) {
                tally.refusal = Some(Refusal::Run(refused.clone()));
            }
            return Err(refused);
        }
        let tally = state.stories.entry(story_id.to_string()).or_default();
        if let Some(reason) = self.story_limit_reached(&tally.total) {
            tally.refusal = Some(Refusal::Story(reason.clone()));
            return Err(reason);
        }
        Ok(())
    }

    fn answered(&self, story_id: &str, usage: &Usage) {
        let usage = priced(self.price, *usage);
        let mut state = self.state();
        state.run.add(&usage);
        let tally = state.stories.entry(story_id.to_string()).or_default();
        tally.total.add(&usage);
        tally.action.add(&usage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(budget: serde_json::Value) -> Config {
        let user = serde_json::json!({
            "llm": {"model": "m"},
            "pricing": {"m": {"inputPerMTok": 150.0, "outputPerMTok": 600.0}},
            "budget": budget,
        });
        Config::from_value(
            crate::config::merged_value(&user),
            std::path::Path::new("cfg.json"),
        )
        .unwrap()
    }

    fn call(prompt: u64, completion: u64) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            requests: 1,
            cost_usd: None,
        }
    }

    #[test]
    fn cost_is_tokens_times_price_per_million() {
        let price = Price {
            input_per_m_tok: 0.15,
            output_per_m_tok: 0.6,
        };
        assert_eq!(cost(price, 1_000_000, 0), 0.15);
        assert_eq!(cost(price, 100, 20), 0.000027);
        assert_eq!(priced(None, call(1, 1)).cost_usd, None);
        assert_eq!(
            priced(Some(price), call(2_000_000, 1_000_000)).cost_usd,
            Some(0.9)
        );
    }

    #[test]
    fn a_story_is_refused_once_it_reached_its_budget() {
        let spending = Spending::new(&config(serde_json::json!({"storyTokens": 250})));
        spending.begin_action("s", call(100, 20));
        assert_eq!(spending.admit("s"), Ok(()));
        spending.answered("s", &call(100, 20));
        assert_eq!(spending.admit("s"), Ok(()));
        spending.answered("s", &call(100, 20));
        assert_eq!(
            spending.admit("s"),
            Err("Budget: 360 of 250 tokens".to_string())
        );
        assert_eq!(
            spending.take_refusal("s"),
            Some(Refusal::Story("Budget: 360 of 250 tokens".into()))
        );
        assert_eq!(spending.action_usage("s").tokens(), 240);
        assert_eq!(spending.action_usage("s").cost_usd, Some(0.054));
        // Other stories are not affected by one story's budget.
        spending.begin_action("t", Usage::default());
        assert_eq!(spending.admit("t"), Ok(()));
    }

    #[test]
    fn the_run_budget_refuses_every_story_and_names_itself() {
        let spending = Spending::new(&config(serde_json::json!({"runUsd": 0.05})));
        for story in ["a", "b"] {
            spending.begin_action(story, Usage::default());
            assert_eq!(spending.admit(story), Ok(()));
            spending.answered(story, &call(100, 20));
        }
        assert_eq!(
            spending.run_stop(),
            Some("the run budget budget.runUsd is spent (0.054 of 0.05 USD)".into())
        );
        assert!(spending.admit("a").is_err());
        assert!(matches!(spending.take_refusal("a"), Some(Refusal::Run(_))));
    }

    #[test]
    fn dollars_read_well() {
        assert_eq!(format_usd(0.054), "0.054");
        assert_eq!(format_usd(12.5), "12.5");
        assert_eq!(format_usd(0.0), "0");
        assert_eq!(format_usd(0.000027), "0.000027");
    }
}
