//! A run and a person at the same board: a hand edit made while the tool writes is kept, and
//! readers see every story exactly once while stories move.

use std::path::Path;
use std::time::{Duration, Instant};

use super::super::agents_e2e::Project;
use super::super::common::{finish, TestEnv};
use super::super::fake_llm::Reply;
use super::{save_like_an_editor, status_ids};

/// Widens the moment between the tool's read and its rename (debug builds only), so that the
/// test's edit lands inside it every time.
const PAUSE: (&str, &str) = ("AGENTIC_SDLC_TEST_PAUSE_BEFORE_COMMIT_MS", "1500");

/// Waits until the tool has written its temporary file in `folder`: it has read the story and
/// is about to commit.
fn wait_for_pending_write(folder: &Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        let pending = std::fs::read_dir(folder)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(".tmp-"));
        if pending {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("the tool never started a write in {}", folder.display());
}

fn hand_edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from:?} not in:\n{text}");
    save_like_an_editor(path, &text.replacen(from, to, 1));
}

#[test]
fn a_hand_edit_made_while_move_writes_is_kept() {
    let env = TestEnv::init();
    let (id, slug, path) = env.add("Edited meanwhile", &[]);
    let path = env.path(path);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
    let child = cmd
        .current_dir(env.root())
        .args(["move", &id, "ready"])
        .env(PAUSE.0, PAUSE.1)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_pending_write(&env.board().join("ready"));
    hand_edit(&path, "## Summary\n", "## Summary\nHAND-EDIT\n");
    finish(child).success();

    let moved = env.story_path(&slug);
    assert_eq!(moved.parent().unwrap().file_name().unwrap(), "ready");
    let text = env.read(&moved);
    assert!(text.contains("HAND-EDIT"), "{text}");
    assert!(text.contains("status: ready"), "{text}");
}

#[tokio::test]
async fn a_hand_edit_made_while_a_phase_commits_is_kept() {
    let p = Project::new().await;
    let story = p.ready("Research meanwhile");
    let path = p.path_of(&story);
    p.fake.push("research", Reply::text("RESEARCH-OUTPUT"));
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"))
        .current_dir(p.env.root())
        .args(["run", "--story", &story.id, "--step", "research"])
        .env("OPENAI_BASE_URL", p.fake.base_url())
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env(PAUSE.0, PAUSE.1)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_pending_write(path.parent().unwrap());
    hand_edit(&path, "\ntype: ", "\nowner: HAND-EDIT\ntype: ");
    finish(child).success();

    let text = p.env.read(&path);
    assert!(text.contains("owner: HAND-EDIT"), "{text}");
    assert!(text.contains("research_complete: true"), "{text}");
    assert!(text.contains("RESEARCH-OUTPUT"), "{text}");
}

#[test]
fn status_and_details_see_every_story_exactly_once_while_stories_move() {
    let env = TestEnv::init();
    let ids: Vec<String> = (0..4)
        .map(|n| env.add(&format!("Mover {n}"), &[]).0)
        .collect();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut expected = ids.clone();
    expected.sort();
    std::thread::scope(|scope| {
        for id in &ids {
            let (env, stop) = (&env, &stop);
            scope.spawn(move || {
                // Back and forth across the order in which columns are listed.
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let column = ["done", "ready"][n % 2];
                    env.run(&["move", id, column]).success();
                    n += 1;
                }
            });
        }
        let mut seen_wrong = Vec::new();
        for round in 0..200 {
            let mut seen = status_ids(&env);
            seen.sort();
            if seen != expected {
                seen_wrong.push(seen);
            }
            // `details` reads the whole board too: a moving story is found, once.
            let id = &ids[round % ids.len()];
            let details = env.run(&["details", id, "--json"]);
            if details.code != 0 {
                seen_wrong.push(vec![format!("details {id}: {}", details.stderr)]);
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(
            seen_wrong.is_empty(),
            "{} of 400 reads were wrong, e.g. {:?}",
            seen_wrong.len(),
            seen_wrong.first()
        );
    });
}
