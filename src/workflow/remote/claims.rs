//! A claim on a story: who holds it and until when, as the message of the commit that the
//! claim ref points at (`refs/agentic-sdlc/claims/<story-id>` on the remote).
//!
//! The record is plain `key: value` lines under a title, readable with `git log -1` on the ref
//! and parsed back here:
//!
//! ```text
//! agentic-sdlc claim on story-mwrovghh-7lzs
//!
//! story: story-mwrovghh-7lzs
//! host: runner-3
//! run: 20261122T230501123Z
//! pid: 4242
//! claimed-at: 2026-11-22T23:05:02Z
//! expires-at: 2026-11-22T23:20:02Z
//! ```

use std::path::Path;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use crate::board::StoryId;
use crate::vcs as git;

/// Who holds a story, since when and until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Claim {
    pub story_id: StoryId,
    pub host: String,
    pub run_id: String,
    pub pid: u32,
    /// When the story was first claimed by this run; renewals keep it.
    pub claimed_at: DateTime<Utc>,
    /// When the claim lapses unless renewed; after it, another clone may take the story over.
    pub expires_at: DateTime<Utc>,
}

fn stamp(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl Claim {
    /// The commit message that records the claim.
    pub fn to_message(&self) -> String {
        format!(
            "agentic-sdlc claim on {story}\n\nstory: {story}\nhost: {host}\nrun: {run}\npid: {pid}\nclaimed-at: {claimed}\nexpires-at: {expires}\n",
            story = self.story_id,
            host = self.host,
            run = self.run_id,
            pid = self.pid,
            claimed = stamp(&self.claimed_at),
            expires = stamp(&self.expires_at),
        )
    }

    /// Reads a claim's record; `None` when a field is missing or malformed (the ref was not
    /// written by this tool, or by hand).
    pub fn parse(message: &str) -> Option<Claim> {
        let field = |name: &str| {
            message.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == name).then(|| value.trim().to_string())
            })
        };
        let time = |name: &str| {
            DateTime::parse_from_rfc3339(&field(name)?)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        };
        Some(Claim {
            story_id: StoryId::from(field("story")?),
            host: field("host")?,
            run_id: field("run")?,
            pid: field("pid")?.parse().ok()?,
            claimed_at: time("claimed-at")?,
            expires_at: time("expires-at")?,
        })
    }

    pub fn is_expired(&self, now: DateTime<Utc>) -> bool {
        now >= self.expires_at
    }
}

/// A claim as a clone last saw it on the remote: the commit its ref points at, and the record
/// (`None` when the ref holds something this tool cannot read; it counts as lapsed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenClaim {
    pub story_id: StoryId,
    pub oid: String,
    pub claim: Option<Claim>,
}

impl SeenClaim {
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        self.claim.as_ref().is_some_and(|c| !c.is_expired(now))
    }
}

/// The claims of `remote` as this clone's last fetch saw them (plus its own, kept current
/// between fetches). Nothing when the clone never ran with `--remote`.
pub fn seen_claims(root: &Path, remote: &str) -> Result<Vec<SeenClaim>, git::GitError> {
    Ok(git::mirrored_claims(root, remote)?
        .into_iter()
        .map(|(story_id, oid, message)| SeenClaim {
            claim: Claim::parse(&message).filter(|c| c.story_id == story_id),
            story_id: StoryId::from(story_id),
            oid,
        })
        .collect())
}

/// Every remote this clone has seen claims of.
pub fn remotes_with_claims(root: &Path) -> Vec<String> {
    git::remotes_with_claims(root).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim() -> Claim {
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        Claim {
            story_id: "story-abc-1234".into(),
            host: "runner-3".into(),
            run_id: "20261122T230501123Z".into(),
            pid: 4242,
            claimed_at: at("2026-11-22T23:05:02Z"),
            expires_at: at("2026-11-22T23:20:02Z"),
        }
    }

    #[test]
    fn a_claim_reads_back_as_written() {
        let claim = claim();
        let message = claim.to_message();
        assert!(message.starts_with("agentic-sdlc claim on story-abc-1234\n\n"));
        assert!(message.contains("expires-at: 2026-11-22T23:20:02Z\n"));
        assert_eq!(Claim::parse(&message), Some(claim.clone()));
        assert!(!claim.is_expired(claim.claimed_at));
        assert!(claim.is_expired(claim.expires_at));
    }

    #[test]
    fn a_record_that_is_not_a_claim_is_none() {
        let cases = [
            "",
            "hello",
            "story: s\nhost: h\nrun: r\npid: 1\nclaimed-at: 2026-11-22T23:05:02Z\n",
            "story: s\nhost: h\nrun: r\npid: x\nclaimed-at: 2026-11-22T23:05:02Z\nexpires-at: 2026-11-22T23:05:02Z\n",
            "story: s\nhost: h\nrun: r\npid: 1\nclaimed-at: yesterday\nexpires-at: 2026-11-22T23:05:02Z\n",
        ];
        for case in cases {
            assert_eq!(Claim::parse(case), None, "{case:?}");
        }
        let unreadable = SeenClaim {
            story_id: "s".into(),
            oid: "0".into(),
            claim: None,
        };
        assert!(
            !unreadable.is_live(Utc::now()),
            "an unreadable claim counts as lapsed"
        );
    }
}
