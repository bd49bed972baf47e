//! `integrate: pr`: branches are pushed to a local bare remote and pull requests opened with a
//! fake `gh` on PATH; a dependent's branch holds its dependency's work and its PR is stacked.

use std::path::Path;

use serde_json::json;

use super::{git_in, Repo};
use crate::suite::common::{path_with, write_program};

/// A `gh` that records each call's arguments (one per line, calls separated by `--`) and prints
/// a pull request URL numbered by call.
fn fake_gh(bin: &Path, record: &Path) {
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo 'gh version 2.0.0'; exit 0; fi\ncat > /dev/null\nfor arg in \"$@\"; do echo \"$arg\" >> {record}; done\necho -- >> {record}\nn=$(grep -c -- '^--$' {record})\necho \"https://github.com/o/r/pull/$n\"\n",
        record = record.display()
    );
    write_program(bin, "gh", &script);
}

#[tokio::test]
async fn pr_mode_pushes_each_branch_and_stacks_the_dependents_pull_request() {
    let repo = Repo::new().await;
    let remote = tempfile::tempdir().unwrap();
    git_in(remote.path(), &["init", "--quiet", "--bare"]);
    repo.git(&["remote", "add", "origin", remote.path().to_str().unwrap()]);
    repo.configure(json!({"git": {"integrate": "pr"}}));
    let alpha = repo.story("Alpha api", &[]);
    let bravo = repo.story("Bravo client", &[&alpha]);
    repo.implement_writes(&alpha, &[("alpha.txt", "alpha\n")]);
    repo.implement_writes(&bravo, &[("bravo.txt", "bravo\n")]);
    let bin = tempfile::tempdir().unwrap();
    let record = bin.path().join("gh-calls");
    fake_gh(bin.path(), &record);
    let path = path_with(bin.path());

    let out = repo
        .env
        .cmd_with_llm(&repo.fake, &["run", "--auto"])
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let calls = std::fs::read_to_string(&record).unwrap();
    let calls: Vec<Vec<&str>> = calls
        .split("--\n")
        .filter(|c| !c.is_empty())
        .map(|c| c.lines().collect())
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    let base_of = |call: &Vec<&str>| {
        let at = call.iter().position(|a| *a == "--base").expect("--base");
        call[at + 1].to_string()
    };
    assert!(calls[0].contains(&alpha.branch().as_str()));
    assert_eq!(base_of(&calls[0]), "main");
    assert!(calls[1].contains(&bravo.branch().as_str()));
    assert_eq!(
        base_of(&calls[1]),
        alpha.branch(),
        "stacked on its dependency"
    );

    for (story, number) in [(&alpha, 1), (&bravo, 2)] {
        assert_eq!(repo.column(story), "done");
        let details = repo.details(story);
        assert_eq!(
            details["pr_url"],
            format!("https://github.com/o/r/pull/{number}").as_str()
        );
        assert!(details.get("merged_commit").is_none(), "{details}");
        let pushed = git_in(remote.path(), &["rev-parse", &story.branch()]);
        assert!(pushed.0, "{} is on the remote", story.branch());
    }
    // Bravo's branch builds on alpha's work; main is untouched.
    assert_eq!(
        repo.show(&bravo.branch(), "alpha.txt").as_deref(),
        Some("alpha")
    );
    assert_eq!(repo.show("main", "alpha.txt"), None);
    assert_eq!(repo.head_branch(), "main");
}

#[tokio::test]
async fn none_mode_leaves_the_work_on_its_branch_and_says_so() {
    let repo = Repo::new().await;
    repo.configure(json!({"git": {"integrate": "none"}}));
    let story = repo.story("Branch only", &[]);
    repo.implement_writes(&story, &[("only.txt", "only\n")]);
    repo.run(&["run", "--auto"]).success();
    assert_eq!(repo.column(&story), "done");
    assert_eq!(
        repo.show(&story.branch(), "only.txt").as_deref(),
        Some("only")
    );
    assert_eq!(repo.show("main", "only.txt"), None);
    repo.env
        .run(&["status"])
        .success()
        .stdout_has("(branch only)");
}
