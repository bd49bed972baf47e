//! The board's words: its phases, columns and story types, and the names of its own files.
//! Every room of the board stands on them; they stand on nothing of the board.

/// The folder inside the board that holds the run journals. The board's own file names live
/// in the board, so that the board's watcher needs nothing from the workflow above it.
pub const RUNS_DIR: &str = "runs";

/// The file inside the board that a run holds while it works on the board.
pub const LOCK_FILE: &str = ".lock";

/// Today's date as the story keys `created` and `updated` hold it.
pub fn today() -> String {
    chrono::Local::now().format("%Y-%m-%d").to_string()
}

/// A phase that produces output into the story: the one list of phases (docs/design.md §21).
/// Every phase can carry a review gate and has settings under `phases.<phase>`. Refine's
/// completion is the move out of backlog; the others have a completion flag ([`Phase::flag`]).
/// A phase is added here, and the compiler names every place that must learn of it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase", ascii_case_insensitive)]
pub enum Phase {
    Refine,
    Research,
    Plan,
    Acceptance,
    Implement,
}

impl Phase {
    /// In pipeline order.
    pub const ALL: &[Phase] = <Phase as strum::VariantArray>::VARIANTS;

    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn parse(name: &str) -> Option<Phase> {
        name.trim().parse().ok()
    }

    /// The phase right before this one (refine → research → plan → acceptance → implement).
    pub fn predecessor(self) -> Option<Phase> {
        (self as usize).checked_sub(1).map(|i| Phase::ALL[i])
    }

    /// The story section the phase writes (refine writes Acceptance Criteria as well).
    pub fn section(self) -> &'static str {
        match self {
            Phase::Refine => "Summary",
            Phase::Research => "Research",
            Phase::Plan => "Implementation Plan",
            Phase::Acceptance => "Acceptance Tests",
            Phase::Implement => "Implementation Notes",
        }
    }

    /// The frontmatter flag that says the phase is complete; refine has none (its completion
    /// is the move out of backlog).
    pub fn flag(self) -> Option<&'static str> {
        match self {
            Phase::Refine => None,
            Phase::Research => Some("research_complete"),
            Phase::Plan => Some("plan_complete"),
            Phase::Acceptance => Some("acceptance_complete"),
            Phase::Implement => Some("implementation_complete"),
        }
    }

    /// Whether the phase's agent only reads the tree: its output is the story section alone.
    pub fn reads_only(self) -> bool {
        !matches!(self, Phase::Acceptance | Phase::Implement)
    }

    /// The letter `status` and the board page show for the phase's flag (`[RPIV]`, the V being
    /// the reviews'); the acceptance phase has none, as its tests show under implement.
    pub fn letter(self) -> Option<char> {
        match self {
            Phase::Refine | Phase::Acceptance => None,
            Phase::Research => Some('R'),
            Phase::Plan => Some('P'),
            Phase::Implement => Some('I'),
        }
    }

    /// What a person reads while the phase runs (`⟳ Planning "dark-mode"`).
    pub fn doing(self) -> &'static str {
        match self {
            Phase::Refine => "Refining",
            Phase::Research => "Researching",
            Phase::Plan => "Planning",
            Phase::Acceptance => "Writing acceptance tests for",
            Phase::Implement => "Implementing",
        }
    }

    /// What a person reads when the phase's output is in the story.
    pub fn done(self) -> &'static str {
        match self {
            Phase::Refine => "refined; moved to ready",
            Phase::Research => "research written",
            Phase::Plan => "implementation plan written",
            Phase::Acceptance => "acceptance tests written",
            Phase::Implement => "implemented",
        }
    }

    /// Whether the phase runs the project's tests, and so is off without `review.testCommand`
    /// (docs/design.md §21).
    pub fn runs_tests(self) -> bool {
        self == Phase::Acceptance
    }

    /// The later phase after whose completion this one is never run: a story implemented before
    /// its acceptance phase existed (or with it off) is not sent back for it (§21).
    pub fn too_late_after(self) -> Option<Phase> {
        match self {
            Phase::Acceptance => Some(Phase::Implement),
            _ => None,
        }
    }

    /// Whether a new story's frontmatter shows the phase's flag as false. The acceptance flag
    /// is left out: a missing flag reads as false, and the file stays as docs/reference.md shows.
    pub fn flag_on_new_story(self) -> bool {
        self.flag().is_some() && self != Phase::Acceptance
    }

    /// The phases a later one may send back to: every phase but the last.
    pub fn predecessors() -> impl Iterator<Item = Phase> {
        Phase::ALL.iter().filter_map(|p| p.predecessor())
    }

    /// The phases after refine, whose flags a story carries, in pipeline order.
    pub fn flagged() -> impl Iterator<Item = Phase> {
        Phase::ALL.iter().copied().filter(|p| p.flag().is_some())
    }
}

/// A set of phases, small enough to copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PhaseSet(u8);

impl PhaseSet {
    pub fn with(self, phase: Phase) -> PhaseSet {
        PhaseSet(self.0 | 1 << phase as u8)
    }

    pub fn contains(self, phase: Phase) -> bool {
        self.0 & (1 << phase as u8) != 0
    }
}

/// A board column; the folder a story file sits in.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "kebab-case", ascii_case_insensitive)]
pub enum Column {
    Backlog,
    Ready,
    InProgress,
    Done,
    Blocked,
}

impl Column {
    /// The column a story file sits in, by its folder.
    pub fn of_file(path: &std::path::Path) -> Option<Column> {
        path.parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .and_then(Column::parse)
    }

    /// In board order.
    pub const ALL: &[Column] = <Column as strum::VariantArray>::VARIANTS;

    /// The folder's name.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// A column as a person types it: any case, `in-progress`, `in_progress` or `inprogress`.
    pub fn parse(name: &str) -> Option<Column> {
        let wanted = name.trim().replace('_', "-");
        match wanted.parse() {
            Ok(column) => Some(column),
            Err(_) if wanted.eq_ignore_ascii_case("inprogress") => Some(Column::InProgress),
            Err(_) => None,
        }
    }
}

/// A story's `type`. A value the tool does not know (a hand edit, a typo) is kept as written,
/// so the file is rewritten byte for byte and `validate` can name it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StoryType {
    #[default]
    Feature,
    Bug,
    Chore,
    Spike,
    Other(String),
}

impl StoryType {
    /// The types docs/design.md §3 defines, as the story file spells them.
    pub const KNOWN: [&'static str; 4] = ["feature", "bug", "chore", "spike"];

    pub fn as_str(&self) -> &str {
        match self {
            StoryType::Feature => "feature",
            StoryType::Bug => "bug",
            StoryType::Chore => "chore",
            StoryType::Spike => "spike",
            StoryType::Other(text) => text,
        }
    }

    pub fn is_known(&self) -> bool {
        !matches!(self, StoryType::Other(_))
    }
}

impl From<&str> for StoryType {
    /// Exact spelling only: `Feature` is not `feature`, just as `validate` has always said.
    fn from(text: &str) -> Self {
        match text {
            "feature" => StoryType::Feature,
            "bug" => StoryType::Bug,
            "chore" => StoryType::Chore,
            "spike" => StoryType::Spike,
            other => StoryType::Other(other.to_string()),
        }
    }
}

impl From<String> for StoryType {
    fn from(text: String) -> Self {
        match StoryType::from(text.as_str()) {
            StoryType::Other(_) => StoryType::Other(text),
            known => known,
        }
    }
}

impl From<StoryType> for String {
    fn from(story_type: StoryType) -> Self {
        match story_type {
            StoryType::Other(text) => text,
            known => known.as_str().to_string(),
        }
    }
}

impl std::fmt::Display for StoryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod story_type_tests {
    use super::StoryType;

    #[test]
    fn known_types_parse_and_unknown_ones_keep_their_text() {
        for (text, expected, known) in [
            ("feature", StoryType::Feature, true),
            ("bug", StoryType::Bug, true),
            ("chore", StoryType::Chore, true),
            ("spike", StoryType::Spike, true),
            ("Feature", StoryType::Other("Feature".into()), false),
            ("epic", StoryType::Other("epic".into()), false),
            ("", StoryType::Other(String::new()), false),
        ] {
            let parsed = StoryType::from(text);
            assert_eq!(parsed, expected, "{text:?}");
            assert_eq!(parsed.is_known(), known, "{text:?}");
            assert_eq!(parsed.to_string(), text);
            assert_eq!(String::from(parsed.clone()), text);
            assert_eq!(StoryType::from(text.to_string()), parsed);
        }
    }

    #[test]
    fn serialises_as_the_plain_text() {
        let yaml = serde_norway::to_string(&StoryType::Other("epic".into())).unwrap();
        assert_eq!(yaml.trim(), "epic");
        assert_eq!(
            serde_json::to_string(&StoryType::Chore).unwrap(),
            r#""chore""#
        );
        let read: StoryType = serde_json::from_str(r#""spike""#).unwrap();
        assert_eq!(read, StoryType::Spike);
    }
}
