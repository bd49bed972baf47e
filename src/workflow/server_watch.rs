//! A run that loses its model server stops (docs/design.md §22). An action that fails because
//! the server could not be reached makes the server suspect; before the run starts anything
//! else it asks the server once (`GET /models`, as the checks before the run do). No answer at
//! all, and the run starts nothing more: it ends with one line that names the server and how
//! many stories it did not start, and leaves those stories as they were.

use crate::agents::llm::{list_models, LlmSettings, ProbeError};

/// What the run knows of its model server.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub enum ServerWatch {
    /// Answering, as far as the run knows.
    #[default]
    Fine,
    /// An action could not reach it: ask before starting another.
    Suspect,
    /// It did not answer when asked: the run starts nothing more.
    Lost { endpoint: String, why: String },
}

impl ServerWatch {
    /// An action failed for want of a connection to the server.
    pub fn action_could_not_reach(&mut self) {
        if *self == ServerWatch::Fine {
            *self = ServerWatch::Suspect;
        }
    }

    pub fn is_lost(&self) -> bool {
        matches!(self, ServerWatch::Lost { .. })
    }

    /// When suspect, asks the server whether it is there. A server that answers anything, even
    /// an error status, is there: that action's failure was its own.
    pub async fn check(&mut self, endpoint: Option<&LlmSettings>) {
        if *self != ServerWatch::Suspect {
            return;
        }
        let Some(settings) = endpoint else {
            *self = ServerWatch::Fine;
            return;
        };
        *self = match list_models(settings).await {
            Err(ProbeError::Unreachable(why)) => ServerWatch::Lost {
                endpoint: settings.base_url.clone(),
                why,
            },
            _ => ServerWatch::Fine,
        };
    }

    /// The run's last line when the server was lost.
    pub fn stop_message(&self, not_started: usize) -> Option<String> {
        let ServerWatch::Lost { endpoint, why } = self else {
            return None;
        };
        let (stories, were) = if not_started == 1 {
            ("story", "it was")
        } else {
            ("stories", "they were")
        };
        Some(format!(
            "Stopped: the LLM server at {endpoint} stopped answering ({why}); {not_started} {stories} not started, left as {were}. Start the server, then run again"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_line_names_the_server_and_the_stories_not_started() {
        let lost = ServerWatch::Lost {
            endpoint: "http://127.0.0.1:9/v1".into(),
            why: "connection refused".into(),
        };
        assert_eq!(
            lost.stop_message(5).unwrap(),
            "Stopped: the LLM server at http://127.0.0.1:9/v1 stopped answering (connection refused); 5 stories not started, left as they were. Start the server, then run again"
        );
        assert!(lost
            .stop_message(1)
            .unwrap()
            .contains("1 story not started"));
        assert_eq!(ServerWatch::Fine.stop_message(3), None);
    }

    #[tokio::test]
    async fn a_server_that_answers_nothing_is_lost_and_one_that_answers_is_fine() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let config = crate::config::Config::from_value(
            crate::config::merged_value(&serde_json::json!({
                "llm": {"baseUrl": format!("http://127.0.0.1:{port}/v1")}
            })),
            std::path::Path::new("cfg.json"),
        )
        .unwrap();
        let settings = LlmSettings::from_config_with_env(&config, |_| None).unwrap();
        let mut watch = ServerWatch::Fine;
        watch.check(Some(&settings)).await;
        assert_eq!(watch, ServerWatch::Fine, "only a suspect server is asked");
        watch.action_could_not_reach();
        watch.check(Some(&settings)).await;
        assert!(watch.is_lost(), "{watch:?}");
    }
}
