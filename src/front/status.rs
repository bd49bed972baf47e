//! `status --json` (docs/design.md §5), and the claims that `status` shows: the view that the
//! command line and the MCP server both give.

use std::path::Path;

use serde::ser::SerializeMap;
use serde::Serialize;

use crate::board::{Board, Column, Phase, StorySummary};
use crate::vcs;
use crate::workflow::assessor::{Action, Assessment, Waiting};
use crate::workflow::remote::{remotes_with_claims, seen_claims, SeenClaim};

/// A claim on a story as a clone last saw it on one of its remotes (docs/design.md §20).
pub(crate) struct KnownClaim {
    remote: String,
    pub(crate) seen: SeenClaim,
}

/// Every claim this clone knows of, on every remote it ran with; nothing outside a repository.
pub(crate) fn known_claims(root: &Path) -> Vec<KnownClaim> {
    if !vcs::is_repo(root) {
        return Vec::new();
    }
    remotes_with_claims(root)
        .into_iter()
        .flat_map(|remote| {
            seen_claims(root, &remote)
                .unwrap_or_default()
                .into_iter()
                .map(move |seen| KnownClaim {
                    remote: remote.clone(),
                    seen,
                })
        })
        .collect()
}

/// How long ago or from now, in the largest unit that fits: `42s`, `12m`, `3h`.
fn span(seconds: i64) -> String {
    let seconds = seconds.abs();
    match seconds {
        0..=119 => format!("{seconds}s"),
        120..=7199 => format!("{}m", seconds / 60),
        _ => format!("{}h", seconds / 3600),
    }
}

/// `claimed by runner-3 on origin 4m ago, expires in 11m` (or `lapsed 2m ago`).
pub(crate) fn claim_note(known: &KnownClaim) -> String {
    let Some(claim) = &known.seen.claim else {
        return format!(
            "claim on {} that this tool cannot read (counts as lapsed)",
            known.remote
        );
    };
    let now = chrono::Utc::now();
    let age = (now - claim.claimed_at).num_seconds();
    let left = (claim.expires_at - now).num_seconds();
    let expiry = if left > 0 {
        format!("expires in {}", span(left))
    } else {
        format!("lapsed {} ago", span(left))
    };
    format!(
        "claimed by {} on {} {} ago, {expiry}",
        claim.host,
        known.remote,
        span(age)
    )
}

/// One claim in `status --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ClaimJson<'a> {
    story_id: &'a str,
    remote: &'a str,
    host: Option<&'a str>,
    run_id: Option<&'a str>,
    pid: Option<u32>,
    claimed_at: Option<String>,
    expires_at: Option<String>,
    age_seconds: Option<i64>,
    expires_in_seconds: Option<i64>,
    expired: bool,
}

impl<'a> ClaimJson<'a> {
    fn new(known: &'a KnownClaim) -> Self {
        let now = chrono::Utc::now();
        let claim = known.seen.claim.as_ref();
        let stamp = |at: &chrono::DateTime<chrono::Utc>| {
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        };
        Self {
            story_id: &known.seen.story_id,
            remote: &known.remote,
            host: claim.map(|c| c.host.as_str()),
            run_id: claim.map(|c| c.run_id.as_str()),
            pid: claim.map(|c| c.pid),
            claimed_at: claim.map(|c| stamp(&c.claimed_at)),
            expires_at: claim.map(|c| stamp(&c.expires_at)),
            age_seconds: claim.map(|c| (now - c.claimed_at).num_seconds()),
            expires_in_seconds: claim.map(|c| (c.expires_at - now).num_seconds()),
            expired: !known.seen.is_live(now),
        }
    }
}

/// One story in `status --json` (docs/design.md §5), borrowed from the board.
#[derive(Serialize)]
struct StoryJson<'a> {
    id: &'a str,
    slug: &'a str,
    title: &'a str,
    priority: i64,
    status: &'static str,
    #[serde(rename = "type")]
    story_type: &'a str,
    path: &'a Path,
    research_complete: bool,
    plan_complete: bool,
    implementation_complete: bool,
    reviews_complete: bool,
    refinement_count: u32,
    last_error: Option<&'a str>,
    blocked_reason: Option<&'a str>,
    depends_on: &'a [crate::board::StoryId],
    branch: Option<&'a str>,
    base_branch: Option<&'a str>,
    merged_commit: Option<&'a str>,
}

impl<'a> StoryJson<'a> {
    fn new(story: &'a StorySummary) -> Self {
        let meta = &story.meta;
        Self {
            id: &meta.id,
            slug: &story.slug,
            title: &meta.title,
            priority: meta.priority,
            status: story.column.name(),
            story_type: meta.story_type.as_str(),
            path: &story.path,
            research_complete: meta.completed.contains(Phase::Research),
            plan_complete: meta.completed.contains(Phase::Plan),
            implementation_complete: meta.completed.contains(Phase::Implement),
            reviews_complete: meta.reviews_complete,
            refinement_count: meta.refinement_count,
            last_error: meta.last_error.as_deref(),
            blocked_reason: meta.blocked_reason.as_deref(),
            depends_on: &meta.depends_on,
            branch: meta.branch.as_deref(),
            base_branch: meta.base_branch.as_deref(),
            merged_commit: meta.merged_commit.as_deref(),
        }
    }
}

#[derive(Serialize)]
struct ErrorJson<'a> {
    path: &'a Path,
    line: usize,
    message: &'a str,
}

/// The columns in board order, each with its stories by priority.
struct ColumnsJson<'a>(Vec<(Column, Vec<&'a StorySummary>)>);

impl Serialize for ColumnsJson<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (column, stories) in &self.0 {
            let stories: Vec<StoryJson> = stories.iter().map(|s| StoryJson::new(s)).collect();
            map.serialize_entry(column.name(), &stories)?;
        }
        map.end()
    }
}

/// `status --json`. Serialised straight from the board: as a `serde_json::Value` tree, a board
/// of 10,000 stories took more memory than the stories themselves.
#[derive(Serialize)]
pub(crate) struct StatusJson<'a> {
    #[serde(rename = "schemaVersion")]
    schema_version: u32,
    kind: &'static str,
    columns: ColumnsJson<'a>,
    recommended: &'a [Action],
    waiting: &'a [Waiting],
    errors: Vec<ErrorJson<'a>>,
    claims: Vec<ClaimJson<'a>>,
}

pub(crate) fn status_json<'a>(
    board: &'a Board,
    assessment: &'a Assessment,
    columns: &[Column],
    claims: &'a [KnownClaim],
) -> StatusJson<'a> {
    let by_column = columns
        .iter()
        .map(|column| {
            let mut stories: Vec<&StorySummary> = board.in_column(*column).collect();
            stories.sort_by(|a, b| (a.meta.priority, a.id()).cmp(&(b.meta.priority, b.id())));
            (*column, stories)
        })
        .collect();
    StatusJson {
        schema_version: super::envelope::SCHEMA_VERSION,
        kind: "status",
        columns: ColumnsJson(by_column),
        recommended: &assessment.actions,
        waiting: &assessment.waiting,
        errors: board
            .broken
            .iter()
            .map(|e| ErrorJson {
                path: &e.path,
                line: e.line,
                message: &e.message,
            })
            .collect(),
        claims: claims.iter().map(ClaimJson::new).collect(),
    }
}
