//! The examples in docs/examples are valid YAML of the shape their runners expect, and run
//! what docs/design.md §20 says they run.

use serde::Deserialize;
use serde_norway::Value;

fn documents(file: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/examples")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_norway::Deserializer::from_str(&text)
        .map(|document| {
            Value::deserialize(document).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        })
        .filter(|document| !document.is_null())
        .collect()
}

fn text(value: &Value) -> String {
    serde_norway::to_string(value).unwrap()
}

#[test]
fn the_github_actions_workflow_is_a_matrix_of_runners() {
    let workflow = documents("github-actions.yml");
    assert_eq!(workflow.len(), 1);
    let workflow = &workflow[0];
    assert!(
        workflow["on"]["schedule"].is_sequence(),
        "{}",
        text(workflow)
    );
    assert_eq!(workflow["permissions"]["contents"].as_str(), Some("write"));
    let job = &workflow["jobs"]["work"];
    let runners = job["strategy"]["matrix"]["runner"]
        .as_sequence()
        .expect("a matrix");
    assert!(runners.len() > 1, "{}", text(job));
    let steps = job["steps"].as_sequence().expect("steps");
    let checkout = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/checkout@"))
        })
        .expect("a checkout step");
    assert_eq!(
        checkout["with"]["fetch-depth"].as_u64(),
        Some(0),
        "merges need history"
    );
    let runs: String = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    assert!(
        runs.contains("agentic-sdlc run --auto --remote origin"),
        "{runs}"
    );
    assert!(job["env"]["OPENAI_API_KEY"]
        .as_str()
        .is_some_and(|v| v.contains("secrets.")));
}

#[test]
fn the_kubernetes_manifest_is_an_indexed_job_of_runners() {
    let documents = documents("kubernetes-job.yaml");
    let kinds: Vec<&str> = documents
        .iter()
        .filter_map(|d| d["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["ConfigMap", "Job"]);
    let job = &documents[1];
    assert_eq!(job["apiVersion"].as_str(), Some("batch/v1"));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    assert!(spec["completions"].as_u64() > Some(1));
    assert_eq!(spec["parallelism"], spec["completions"]);
    let container = &spec["template"]["spec"]["containers"][0];
    let script = text(&container["args"]);
    assert!(
        script.contains("agentic-sdlc run --auto --remote origin"),
        "{script}"
    );
    let key = &container["env"][0];
    assert_eq!(key["name"].as_str(), Some("OPENAI_API_KEY"));
    assert!(
        key["valueFrom"]["secretKeyRef"].is_mapping(),
        "the key comes from a Secret"
    );
    assert_eq!(
        spec["template"]["spec"]["restartPolicy"].as_str(),
        Some("Never")
    );
}
