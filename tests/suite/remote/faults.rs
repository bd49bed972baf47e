//! A network that fails: pushes and fetches that get no answer are tried again, and a push
//! that landed without its answer is known as landed, so no claim is left half known. And
//! what coordination costs: git round trips per story.

use std::path::PathBuf;

use serde_json::json;

use super::{through_ssh, Fleet};
use crate::suite::common::write_program;

/// A stand-in for ssh that runs the git command on this machine, logs every connection, and
/// drops the connections whose numbers are listed in `drop` (one per line) before they reach
/// the repository.
const FAKE_SSH: &str = r#"#!/bin/sh
dir=$(dirname "$0")
host=$1
shift
echo "$*" >> "$dir/connections.log"
n=$(wc -l < "$dir/connections.log")
for drop in $(cat "$dir/drop" 2>/dev/null); do
  if [ "$n" -eq "$drop" ]; then
    echo "ssh: connect to host $host port 22: Connection reset by peer" >&2
    exit 255
  fi
done
exec sh -c "$*"
"#;

impl Fleet {
    /// Points clone `index`'s `origin` at the bare repository through [`FAKE_SSH`]; returns
    /// the folder holding its log.
    fn through_fake_ssh(&self, index: usize) -> PathBuf {
        let folder = self.scratch().join("ssh");
        std::fs::create_dir_all(&folder).unwrap();
        let script = folder.join("ssh.sh");
        std::fs::write(&script, FAKE_SSH).unwrap();
        through_ssh(&self.clones[index].root(), &script, &self.bare());
        folder
    }
}

fn connections(folder: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(folder.join("connections.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn a_dropped_connection_is_tried_again_and_each_story_costs_two_round_trips_beyond_its_merge()
{
    let fleet = Fleet::new(1, json!({})).await;
    let stories = fleet.stories(&[("First one", &[]), ("Second one", &[]), ("Third one", &[])]);
    let ssh = fleet.through_fake_ssh(0);

    let out = fleet.run(0, &["run", "--auto", "--remote", "origin"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    for story in &stories {
        assert!(fleet
            .on_main(&format!(".agentic-sdlc/done/{}.md", story.slug))
            .is_some());
        assert_eq!(fleet.calls_about("implement", story), 1);
    }
    // Checking the remote (2), the first look at the board (1), then per story: the claim,
    // the look at the story after it, and the merge's own fetch and push.
    let log = connections(&ssh);
    let per_story = 4;
    assert_eq!(log.len(), 3 + per_story * stories.len(), "{log:#?}");

    // Again on a new board, with the fourth connection (the first claim) dropped.
    let fleet = Fleet::new(1, json!({})).await;
    let stories = fleet.stories(&[("Only one", &[])]);
    let ssh = fleet.through_fake_ssh(0);
    std::fs::write(ssh.join("drop"), "4\n").unwrap();
    let out = fleet.run(0, &["run", "--auto", "--remote", "origin"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("Connection reset by peer"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("got no answer, looking at what landed"),
        "{}",
        out.stderr
    );
    assert!(fleet
        .on_main(&format!(".agentic-sdlc/done/{}.md", stories[0].slug))
        .is_some());
    assert!(fleet.claims().is_empty(), "{:?}", fleet.claims());
    assert_eq!(
        connections(&ssh).len(),
        3 + 1 + 4 + 1,
        "the dropped push, its look, its retry"
    );
}

#[tokio::test]
async fn a_claim_that_landed_without_an_answer_is_known_as_this_runs_own() {
    let fleet = Fleet::new(1, json!({"remote": {"timeoutSeconds": 2}})).await;
    let stories = fleet.stories(&[("Answer lost", &[])]);
    // The remote applies the first claim, then hangs before it says so, until the client
    // gives up: the push landed, and its answer never came.
    let mark = fleet.scratch().join("hung-once");
    write_program(
        &fleet.bare().join("hooks"),
        "post-receive",
        &format!(
            "#!/bin/sh\nwhile read old new ref; do\n  case \"$ref\" in refs/agentic-sdlc/claims/*)\n    if [ ! -e '{mark}' ]; then : > '{mark}'; sleep 30; fi;;\n  esac\ndone\n",
            mark = mark.display()
        ),
    );

    let out = fleet.run(0, &["run", "--auto", "--remote", "origin"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(mark.exists(), "the hook hung once");
    assert!(
        out.stderr.contains("gave no answer within 2s"),
        "{}",
        out.stderr
    );
    // The run took the landed claim as its own: it worked the story, merged it and released
    // the claim; nothing half written is left on the remote.
    let story = &stories[0];
    assert!(fleet
        .on_main(&format!(".agentic-sdlc/done/{}.md", story.slug))
        .is_some());
    assert_eq!(fleet.calls_about("implement", story), 1);
    assert!(fleet.claims().is_empty(), "{:?}", fleet.claims());
    fleet.origin(&["fsck", "--no-progress", "--strict"]);
}
