//! `integrate: merge`: done stories land on main, tested together, and a dependent builds on
//! its dependency's code.

use serde_json::json;

use super::{conversation, marker, Repo};
use crate::suite::fake_llm::Reply;

#[tokio::test]
async fn a_dependency_lands_on_main_and_its_code_is_visible_to_the_dependent() {
    let repo = Repo::new().await;
    let alpha = repo.story("Alpha module", &[]);
    let bravo = repo.story("Bravo uses alpha", &[&alpha]);
    repo.implement_writes(&alpha, &[("src/alpha.rs", "pub fn alpha() -> u8 { 1 }\n")]);
    // Bravo's agent reads what alpha wrote before writing its own file.
    repo.fake.push_for(
        "implement",
        &marker(&bravo),
        Reply::tool("read_file", json!({"path": "src/alpha.rs"})),
    );
    repo.implement_writes(&bravo, &[("src/bravo.rs", "pub fn bravo() -> u8 { 2 }\n")]);

    let out = repo.run(&["run", "--auto"]);
    out.success();

    let after_read = &repo.requests_about("implement", &bravo)[1];
    let seen = conversation(after_read);
    assert!(seen.contains("pub fn alpha() -> u8 { 1 }"), "{seen}");
    assert!(!seen.contains("does not exist"), "{seen}");

    for story in [&alpha, &bravo] {
        assert_eq!(repo.column(story), "done", "{}", out.stderr);
        let details = repo.details(story);
        assert_eq!(details["branch"], story.branch().as_str());
        assert_eq!(details["base_branch"], "main");
        let merged = details["merged_commit"].as_str().expect("merged_commit");
        assert!(
            repo.commits("main").contains(&merged.to_string()),
            "{merged} is on main"
        );
    }
    assert_eq!(
        repo.show("main", "src/alpha.rs").as_deref(),
        Some("pub fn alpha() -> u8 { 1 }")
    );
    assert_eq!(
        repo.show("main", "src/bravo.rs").as_deref(),
        Some("pub fn bravo() -> u8 { 2 }")
    );
    // Main's own line of history reads as one merge per story, alpha's first.
    let merges = repo.git(&["log", "--first-parent", "--format=%s", "main"]);
    let merges: Vec<&str> = merges.lines().collect();
    assert_eq!(
        merges[..2],
        [
            format!("Merge {} into main", bravo.branch()),
            format!("Merge {} into main", alpha.branch())
        ]
    );
    // The user's checkout is back on main, at the new tip, with nothing left over.
    assert_eq!(repo.head_branch(), "main");
    assert!(repo.dirty().is_empty(), "{}", repo.dirty());
    assert!(repo.env.root().join("src/bravo.rs").exists());

    let status = repo.env.run(&["status"]);
    let alpha_merge = repo.details(&alpha)["merged_commit"]
        .as_str()
        .unwrap()
        .to_string();
    status
        .success()
        .stdout_has(&format!("(merged {})", &alpha_merge[..7]));
    let json = repo.env.status_json();
    let done = json["columns"]["done"].as_array().unwrap();
    assert!(done
        .iter()
        .any(|s| s["merged_commit"] == alpha_merge.as_str()
            && s["base_branch"] == "main"
            && s["branch"] == alpha.branch().as_str()));
}

#[tokio::test]
async fn a_dependent_waits_until_its_dependency_is_merged() {
    let repo = Repo::new().await;
    let alpha = repo.story("Alpha first", &[]);
    let bravo = repo.story("Bravo second", &[&alpha]);
    repo.implement_writes(&alpha, &[("alpha.txt", "alpha\n")]);
    // Alpha all the way to reviewed, not yet merged.
    repo.run(&["run", "--auto", "--story", &alpha.id, "--max-actions", "5"])
        .success();
    assert_eq!(repo.details(&alpha)["reviews_complete"], true);
    // Done by hand, but its branch is not merged: bravo is refined, then waits.
    repo.env.run(&["move", &alpha.slug, "done"]).success();
    repo.run(&["run", "--auto", "--story", &bravo.id]).success();
    assert_eq!(repo.details(&bravo)["research_complete"], false);
    let status = repo.env.run(&["status"]);
    status
        .success()
        .stdout_has(&format!(
            "{} (done, but its branch is not merged yet)",
            alpha.slug
        ))
        .stdout_has("(branch only)");
}

#[tokio::test]
async fn a_story_branch_is_cut_from_the_configured_base_and_merged_back_into_it() {
    let repo = Repo::new().await;
    repo.git(&["branch", "develop"]);
    repo.git(&["checkout", "--quiet", "-b", "feature-x"]);
    repo.configure(json!({"git": {"baseBranch": "develop"}}));
    let story = repo.story("Develop work", &[]);
    repo.implement_writes(&story, &[("dev.txt", "on develop\n")]);

    repo.run(&["run", "--auto"]).success();

    assert_eq!(repo.details(&story)["base_branch"], "develop");
    assert_eq!(
        repo.show("develop", "dev.txt").as_deref(),
        Some("on develop")
    );
    assert_eq!(repo.show("main", "dev.txt"), None);
    assert_eq!(repo.head_branch(), "feature-x", "the user's branch is kept");
}
