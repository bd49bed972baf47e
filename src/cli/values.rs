//! The fixed value sets of the command line, offered by `--help` and the shell completions and
//! checked by clap: each list comes from its enum, never from a list written here.

use clap::builder::PossibleValue;
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
