//! The fixed value sets of the command line, offered by `--help` and the shell completions and
//! checked by clap: each list comes from its enum, never from a list written here.

use std::ffi::OsStr;
use std::marker::PhantomData;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use clap::ValueEnum;

use crate::board::{Column, Phase};
use crate::protocol::ActionType;

/// `run --step`: an action type, as snake_case or with dashes.
impl ValueEnum for ActionType {
    fn value_variants<'a>() -> &'a [Self] {
        ActionType::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let value = PossibleValue::new(self.name());
        Some(match self {
            ActionType::CreatePr => value.alias("create-pr"),
            ActionType::MoveToDone => value.alias("move-to-done"),
            _ => value,
        })
    }
}

/// `move <story> <column>`: a column by its folder's name.
impl ValueEnum for Column {
    fn value_variants<'a>() -> &'a [Self] {
        Column::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let value = PossibleValue::new(self.name());
        Some(match self {
            Column::InProgress => value.aliases(["in_progress", "inprogress"]),
            _ => value,
        })
    }
}

/// Parses one of the values of `E`, in any case, and says in our words what was wrong: `refusal`
/// gets the value as typed and the names it could have been. Shells complete the same values
/// `--help` lists.
#[derive(Clone)]
pub struct Choice<E> {
    refusal: fn(&str, &str) -> String,
    values: PhantomData<E>,
}

impl<E> Choice<E> {
    pub fn new(refusal: fn(&str, &str) -> String) -> Self {
        Choice {
            refusal,
            values: PhantomData,
        }
    }
}

impl<E: ValueEnum + Clone + Send + Sync + 'static> TypedValueParser for Choice<E> {
    type Value = E;

    fn parse_ref(
        &self,
        command: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<E, clap::Error> {
        let typed = value.to_string_lossy();
        E::from_str(typed.trim(), true).map_err(|_| {
            let names: Vec<String> = E::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value())
                .map(|v| v.get_name().to_string())
                .collect();
            clap::Error::raw(
                ErrorKind::InvalidValue,
                format!("{}\n", (self.refusal)(&typed, &names.join(", "))),
            )
            .with_cmd(command)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            E::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value()),
        ))
    }
}

/// `logs --phase`: the phases, and the two other agents that keep transcripts.
pub fn transcript_labels() -> Vec<&'static str> {
    Phase::ALL
        .iter()
        .map(|phase| phase.name())
        .chain(["review", "integrate"])
        .collect()
}

/// The stories of the board in the working folder, by slug with their title, for the shell
/// to complete `details <TAB>` and the other commands that name a story. Nothing when there
/// is no board here: a completion never fails.
pub fn story_candidates() -> Vec<clap_complete::CompletionCandidate> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let Ok(project) = crate::config::Project::discover(&cwd) else {
        return Vec::new();
    };
    let Ok(board) = crate::board::Board::load(&project.board_dir()) else {
        return Vec::new();
    };
    board
        .stories
        .iter()
        .map(|story| {
            clap_complete::CompletionCandidate::new(story.slug.as_str())
                .help(Some(story.meta.title.clone().into()))
        })
        .collect()
}

/// Every config key `config <key>` reads and sets, dotted as it takes them.
pub fn config_key_candidates() -> Vec<clap_complete::CompletionCandidate> {
    let mut keys = Vec::new();
    collect_keys(
        "",
        &crate::config::merged_value(&serde_json::json!({})),
        &mut keys,
    );
    keys.into_iter()
        .map(clap_complete::CompletionCandidate::new)
        .collect()
}

fn collect_keys(prefix: &str, value: &serde_json::Value, keys: &mut Vec<String>) {
    let serde_json::Value::Object(map) = value else {
        return;
    };
    for (key, inner) in map {
        let dotted = match prefix {
            "" => key.clone(),
            _ => format!("{prefix}.{key}"),
        };
        if inner.as_object().is_some_and(|o| !o.is_empty()) {
            collect_keys(&dotted, inner, keys);
        } else {
            keys.push(dotted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_and_column_is_offered_by_its_name() {
        for action in ActionType::ALL {
            assert_eq!(
                ActionType::from_str(action.name(), true).unwrap(),
                *action,
                "{action}"
            );
        }
        assert_eq!(
            ActionType::from_str("Create-PR", true).unwrap(),
            ActionType::CreatePr
        );
        for column in Column::ALL {
            assert_eq!(Column::from_str(column.name(), true).unwrap(), *column);
        }
        assert_eq!(
            Column::from_str("IN_PROGRESS", true).unwrap(),
            Column::InProgress
        );
        assert!(Column::from_str("doing", true).is_err());
    }
}
