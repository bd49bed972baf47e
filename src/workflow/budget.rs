//! Cost and budgets (docs/design.md §14): the price of a usage record, and the run-wide meter that
//! admits or refuses each model call against `budget.*`.
//!
//! The meter is shared by every agent of a run. A call is admitted before it is sent and
//! counted when it is answered, so parallel stories together overshoot a limit by at most the
//! calls already in flight when it was reached.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::agents::meter::CallMeter;
use crate::board::records::{round_usd, Usage};
use crate::board::StoryId;
use crate::config::{BudgetConfig, Config, Price, Provider};

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

pub use crate::agents::meter::Refusal;

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
    stories: HashMap<StoryId, StoryTally>,
    /// The budget that stopped the run, once one did.
    run_stop: Option<String>,
}

#[derive(Default)]
struct StoryTally {
    /// Everything the story spent, in earlier runs too.
    total: Usage,
    /// What the action in flight spent so far.
    action: Usage,
    /// Replies' usage the meter already wrote into the story file as they arrived (unpriced),
    /// not yet matched by the action's own account of what it spent.
    written: Usage,
}

impl Spending {
    pub fn new(config: &Config) -> Spending {
        // A model the tool serves itself is named by its local name and costs no money per
        // token, unless `pricing` says otherwise (the machine's power, say).
        let served = config.llm.provider == Provider::Local && config.llm.base_url.is_none();
        let model = match served {
            true => config.llm.local_model.clone(),
            false => config.model(),
        };
        let free = Price {
            input_per_m_tok: 0.0,
            output_per_m_tok: 0.0,
        };
        Spending {
            limits: config.budget.clone(),
            price: price_of(config, &model).or(served.then_some(free)),
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
    pub fn begin_action(&self, story_id: &StoryId, spent: Usage) {
        let spent = priced(self.price, spent);
        let mut state = self.state();
        let tally = state.stories.entry(story_id.clone()).or_default();
        tally.total = spent;
        tally.action = Usage::default();
    }

    /// A reply's usage (unpriced) is in the story file now: the meter wrote it as it arrived
    /// (docs/design.md §22, "Spend is recorded as it happens").
    pub fn written(&self, story_id: &StoryId, usage: &Usage) {
        let mut state = self.state();
        let tally = state.stories.entry(story_id.clone()).or_default();
        tally.written.add(usage);
    }

    /// What of `usage` (unpriced: an agent's account of calls whose replies went through the
    /// meter, or did not) the story file does not hold yet, priced. What the meter wrote is
    /// taken off its ledger, so nothing is counted twice and nothing is lost.
    pub fn not_yet_written(&self, story_id: &StoryId, usage: Usage) -> Usage {
        let mut state = self.state();
        let rest = match state.stories.get_mut(story_id) {
            Some(tally) => {
                let covered = tally.written.common_part(&usage);
                tally.written = tally.written.minus(&covered);
                usage.minus(&covered)
            }
            None => usage,
        };
        priced(self.price, rest)
    }

    /// What the story's action in flight spent so far, priced.
    pub fn action_usage(&self, story_id: &StoryId) -> Usage {
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
            let run = state.run;
            state.run_stop = self.run_limit_reached(&run, 0);
        }
        state.run_stop.clone()
    }

    /// The run budget a request with a prompt of about `prompt` tokens would reach, named.
    fn run_limit_reached(&self, run: &Usage, prompt: u64) -> Option<String> {
        let limits = [
            (
                self.limits.run_tokens.map(Limit::Tokens),
                "budget.runTokens",
            ),
            (self.limits.run_usd.map(Limit::Usd), "budget.runUsd"),
        ];
        let (key, reached) = self.first_reached(run, prompt, limits)?;
        Some(match reached {
            Reached::Spent(text) => format!("the run budget {key} is spent ({text})"),
            Reached::ByThePrompt(text) => {
                format!("the run budget {key} would be passed by the next request ({text})")
            }
        })
    }

    /// The story budget a request with a prompt of about `prompt` tokens would reach, with
    /// the reason the story is blocked for.
    fn story_limit_reached(&self, story: &Usage, prompt: u64) -> Option<(&'static str, String)> {
        let limits = [
            (
                self.limits.story_tokens.map(Limit::Tokens),
                "budget.storyTokens",
            ),
            (self.limits.story_usd.map(Limit::Usd), "budget.storyUsd"),
        ];
        let (key, reached) = self.first_reached(story, prompt, limits)?;
        let text = match reached {
            Reached::Spent(text) | Reached::ByThePrompt(text) => text,
        };
        Some((key, format!("Budget: {text}")))
    }

    /// The first of `limits` that `spent` reaches, or that a prompt of `prompt` tokens on top
    /// of it would leave no room under for a reply.
    fn first_reached(
        &self,
        spent: &Usage,
        prompt: u64,
        limits: [(Option<Limit>, &'static str); 2],
    ) -> Option<(&'static str, Reached)> {
        limits.into_iter().find_map(|(limit, key)| {
            let limit = limit?;
            let used = match limit {
                Limit::Tokens(tokens) => format!("{} of {tokens} tokens", spent.tokens()),
                Limit::Usd(usd) => format!(
                    "{} of {} USD",
                    format_usd(spent.cost_usd.unwrap_or(0.0)),
                    usd
                ),
            };
            if self.room(spent, 0, limit) == Some(0) {
                return Some((key, Reached::Spent(used)));
            }
            if self.room(spent, prompt, limit) != Some(0) {
                return None;
            }
            let needed = match (limit, self.price) {
                (Limit::Usd(_), Some(price)) => {
                    format!("about {} USD", format_usd(cost(price, prompt, 0)))
                }
                _ => format!("about {prompt} tokens"),
            };
            Some((
                key,
                Reached::ByThePrompt(format!(
                    "{used}; the next request's prompt alone is {needed}"
                )),
            ))
        })
    }

    /// Tokens a reply may still take under `limit` after `spent` and a prompt of `prompt`
    /// tokens; `None` when the limit cannot be counted (a USD budget without a price).
    fn room(&self, spent: &Usage, prompt: u64, limit: Limit) -> Option<u64> {
        match limit {
            Limit::Tokens(tokens) => Some(tokens.saturating_sub(spent.tokens() + prompt)),
            Limit::Usd(usd) => {
                let price = self.price?;
                let left = usd - spent.cost_usd.unwrap_or(0.0) - cost(price, prompt, 0);
                if left <= 0.0 {
                    return Some(0);
                }
                if price.output_per_m_tok <= 0.0 {
                    return None;
                }
                Some((left / price.output_per_m_tok * 1_000_000.0).floor() as u64)
            }
        }
    }

    /// The most tokens a reply may take under every limit that applies to the story and the
    /// run; `None` when no limit counts.
    fn reply_room(&self, run: &Usage, story: &Usage, prompt: u64) -> Option<u64> {
        let run_limits = [
            self.limits.run_tokens.map(Limit::Tokens),
            self.limits.run_usd.map(Limit::Usd),
        ];
        let story_limits = [
            self.limits.story_tokens.map(Limit::Tokens),
            self.limits.story_usd.map(Limit::Usd),
        ];
        let run_room = run_limits
            .into_iter()
            .flatten()
            .filter_map(|limit| self.room(run, prompt, limit));
        let story_room = story_limits
            .into_iter()
            .flatten()
            .filter_map(|limit| self.room(story, prompt, limit));
        run_room.chain(story_room).min()
    }
}

/// A budget: tokens, or US dollars.
#[derive(Debug, Clone, Copy)]
enum Limit {
    Tokens(u64),
    Usd(f64),
}

/// How a budget was reached: by what was spent, or by a prompt too large for what is left.
enum Reached {
    Spent(String),
    ByThePrompt(String),
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
    fn admit(&self, story_id: &StoryId, prompt_tokens: u64) -> Result<Option<u64>, Refusal> {
        let mut state = self.state();
        let run = state.run;
        if state.run_stop.is_none() {
            state.run_stop = self.run_limit_reached(&run, prompt_tokens);
        }
        if let Some(reason) = state.run_stop.clone() {
            return Err(Refusal::Run(format!(
                "Stopped before an LLM call: {reason}"
            )));
        }
        let tally = state.stories.entry(story_id.clone()).or_default();
        if let Some((key, reason)) = self.story_limit_reached(&tally.total, prompt_tokens) {
            return Err(Refusal::Story { reason, key });
        }
        let story = tally.total;
        Ok(self.reply_room(&run, &story, prompt_tokens))
    }

    fn answered(&self, story_id: &StoryId, usage: &Usage) {
        let usage = priced(self.price, *usage);
        let mut state = self.state();
        state.run.add(&usage);
        let tally = state.stories.entry(story_id.clone()).or_default();
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
            estimated: false,
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
        spending.begin_action(&StoryId::from("s"), call(100, 20));
        assert_eq!(
            spending.admit(&StoryId::from("s"), 10),
            Ok(Some(120)),
            "250 - 120 spent - 10"
        );
        spending.answered(&StoryId::from("s"), &call(100, 20));
        assert_eq!(spending.admit(&StoryId::from("s"), 5), Ok(Some(5)));
        spending.answered(&StoryId::from("s"), &call(100, 20));
        assert_eq!(
            spending.admit(&StoryId::from("s"), 0),
            Err(Refusal::Story {
                reason: "Budget: 360 of 250 tokens".into(),
                key: "budget.storyTokens"
            })
        );
        assert_eq!(spending.action_usage(&StoryId::from("s")).tokens(), 240);
        assert_eq!(
            spending.action_usage(&StoryId::from("s")).cost_usd,
            Some(0.054)
        );
        // Other stories are not affected by one story's budget.
        spending.begin_action(&StoryId::from("t"), Usage::default());
        assert_eq!(spending.admit(&StoryId::from("t"), 0), Ok(Some(250)));
    }

    #[test]
    fn a_prompt_that_alone_passes_the_budget_is_refused_before_it_is_sent() {
        let spending = Spending::new(&config(serde_json::json!({"storyTokens": 5000})));
        spending.begin_action(&StoryId::from("s"), call(1000, 200));
        assert_eq!(spending.admit(&StoryId::from("s"), 3000), Ok(Some(800)));
        assert_eq!(
            spending.admit(&StoryId::from("s"), 3800),
            Err(Refusal::Story {
                reason: "Budget: 1200 of 5000 tokens; the next request's prompt alone is about \
                         3800 tokens"
                    .into(),
                key: "budget.storyTokens"
            })
        );
        // Without a budget nothing limits the reply.
        let free = Spending::new(&config(serde_json::json!({})));
        free.begin_action(&StoryId::from("s"), call(1_000_000, 0));
        assert_eq!(free.admit(&StoryId::from("s"), 1_000_000), Ok(None));
    }

    #[test]
    fn the_run_budget_refuses_every_story_and_names_itself() {
        let spending = Spending::new(&config(serde_json::json!({"runUsd": 0.05})));
        // 0.05 USD at 600 USD per million output tokens leaves 83 tokens for a reply.
        spending.begin_action(&StoryId::from("a"), Usage::default());
        assert_eq!(spending.admit(&StoryId::from("a"), 0), Ok(Some(83)));
        // A prompt of 100 tokens costs 0.015 USD first.
        assert_eq!(spending.admit(&StoryId::from("a"), 100), Ok(Some(58)));
        spending.answered(&StoryId::from("a"), &call(100, 20));
        spending.begin_action(&StoryId::from("b"), Usage::default());
        assert_eq!(spending.admit(&StoryId::from("b"), 0), Ok(Some(38)));
        spending.answered(&StoryId::from("b"), &call(100, 20));
        assert_eq!(
            spending.run_stop(),
            Some("the run budget budget.runUsd is spent (0.054 of 0.05 USD)".into())
        );
        assert!(matches!(
            spending.admit(&StoryId::from("a"), 0),
            Err(Refusal::Run(_))
        ));
    }

    #[test]
    fn a_prompt_too_large_for_the_run_budget_stops_the_run() {
        let spending = Spending::new(&config(serde_json::json!({"runTokens": 1000})));
        spending.begin_action(&StoryId::from("a"), Usage::default());
        spending.answered(&StoryId::from("a"), &call(500, 100));
        assert!(spending.run_stop().is_none());
        let Err(Refusal::Run(refused)) = spending.admit(&StoryId::from("a"), 400) else {
            panic!("the run budget did not refuse");
        };
        assert!(
            refused.contains("budget.runTokens would be passed by the next request"),
            "{refused}"
        );
        assert!(spending.run_stop().is_some(), "no new action starts");
    }

    #[test]
    fn dollars_read_well() {
        assert_eq!(format_usd(0.054), "0.054");
        assert_eq!(format_usd(12.5), "12.5");
        assert_eq!(format_usd(0.0), "0");
        assert_eq!(format_usd(0.000027), "0.000027");
    }

    #[test]
    fn a_model_the_tool_serves_is_named_by_its_local_name_and_costs_nothing() {
        let of = |llm: serde_json::Value| {
            let config = Config::from_value(
                crate::config::merged_value(&serde_json::json!({ "llm": llm })),
                std::path::Path::new("cfg.json"),
            )
            .unwrap();
            let spending = Spending::new(&config);
            (spending.model().to_string(), spending.price())
        };
        let (model, price) =
            of(serde_json::json!({"provider": "local", "localModel": "smollm2-135m"}));
        assert_eq!(model, "smollm2-135m");
        assert_eq!(
            price.map(|p| p.input_per_m_tok + p.output_per_m_tok),
            Some(0.0)
        );
        // A server named in llm.baseUrl is used as named, with the model the config names.
        let (model, price) = of(serde_json::json!({
            "provider": "local", "baseUrl": "http://127.0.0.1:9/v1", "model": "gpt-x"
        }));
        assert_eq!((model.as_str(), price), ("gpt-x", None));
    }
}
