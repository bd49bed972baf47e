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
