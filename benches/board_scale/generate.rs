//! A large, realistic board: stories with long review and rework histories, spread over the
//! columns the way a board looks after a year of work (most of it done).
//!
//! Deterministic: one seed gives the same board byte for byte, so figures from two machines or
//! two commits describe the same input.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

/// splitmix64: tiny, fast and good enough to vary text; no `rand` dependency needed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next_u64() % items.len() as u64) as usize]
    }
}

pub const COLUMNS: [&str; 5] = ["backlog", "ready", "in-progress", "done", "blocked"];

/// What was written, for the report.
pub struct Generated {
    /// Story files relative to the board root, in generation order.
    pub files: Vec<String>,
    pub bytes: u64,
    pub per_column: [usize; 5],
}

/// Writes `.agentic-sdlc.json`, the five columns and `count` stories under `root`.
pub fn board(root: &Path, count: usize, seed: u64) -> std::io::Result<Generated> {
    std::fs::write(root.join(".agentic-sdlc.json"), "{}\n")?;
    for column in COLUMNS {
        std::fs::create_dir_all(root.join(".agentic-sdlc").join(column))?;
    }
    let mut rng = Rng::new(seed);
    let mut out = Generated {
        files: Vec::with_capacity(count),
        bytes: 0,
        per_column: [0; 5],
    };
    let mut slugs = HashSet::new();
    let mut done_ids: Vec<String> = Vec::new();
    // 2025-01-06T09:00:00Z; stories are created one after another over about a year.
    let start_ms: i64 = 1_736_154_000_000;
    let spacing_ms = (365 * 24 * 3600 * 1000) / count.max(1) as i64;
    for index in 0..count {
        let created_ms = start_ms + index as i64 * spacing_ms + rng.range(0, 59_999) as i64;
        let column = pick_column(&mut rng, index, count);
        let story = Story::new(&mut rng, created_ms, column, &done_ids, &mut slugs);
        let text = story.render(&mut rng);
        let relative = format!(".agentic-sdlc/{}/{}.md", COLUMNS[column], story.slug);
        std::fs::write(root.join(&relative), &text)?;
        out.bytes += text.len() as u64;
        out.per_column[column] += 1;
        out.files.push(relative);
        if column == DONE {
            done_ids.push(story.id);
        }
    }
    Ok(out)
}

const BACKLOG: usize = 0;
const READY: usize = 1;
const IN_PROGRESS: usize = 2;
const DONE: usize = 3;
const BLOCKED: usize = 4;

/// Older stories are almost all done; the newest third is where the open work sits. About 72 %
/// end up in done/, the rest spread over the other four columns.
fn pick_column(rng: &mut Rng, index: usize, count: usize) -> usize {
    let roll = rng.range(0, 99);
    let weights: [u64; 5] = if index * 100 < count * 65 {
        [1, 1, 1, 95, 2]
    } else {
        [22, 20, 16, 30, 12]
    };
    let mut total = 0;
    for (column, weight) in weights.iter().enumerate() {
        total += weight;
        if roll < total {
            return column;
        }
    }
    DONE
}

const VERBS: [&str; 12] = [
    "Add", "Fix", "Refactor", "Improve", "Support", "Migrate", "Document", "Speed up", "Remove",
    "Validate", "Harden", "Redesign",
];
const OBJECTS: [&str; 30] = [
    "dark mode toggle",
    "login rate limiting",
    "CSV export",
    "invoice PDF rendering",
    "search pagination",
    "password reset flow",
    "webhook retries",
    "audit log",
    "image upload",
    "session timeout",
    "notification settings",
    "checkout address form",
    "order history page",
    "API token rotation",
    "team invitations",
    "bulk user import",
    "feature flag cache",
    "email templates",
    "billing plan change",
    "report scheduler",
    "two-factor enrolment",
    "cart persistence",
    "product search index",
    "shipping rate lookup",
    "refund handling",
    "SSO metadata import",
    "dashboard widgets",
    "data retention job",
    "mobile navigation",
    "payment method update",
];
const QUALIFIERS: [&str; 10] = [
    "",
    " for admins",
    " on mobile",
    " in the billing service",
    " behind a feature flag",
    " for large accounts",
    " in the public API",
    " for EU customers",
    " in the worker queue",
    " on slow networks",
];
const LABELS: [&str; 12] = [
    "frontend",
    "backend",
    "api",
    "security",
    "billing",
    "ux",
    "performance",
    "infra",
    "mobile",
    "tech-debt",
    "compliance",
    "search",
];
const PEOPLE: [&str; 8] = [
    "dana", "lee", "sam", "priya", "jonas", "mei", "omar", "ines",
];
const FILES: [&str; 12] = [
    "src/billing/invoice.rs",
    "src/api/handlers/export.rs",
    "src/auth/session.rs",
    "web/components/Settings.tsx",
    "web/pages/checkout/address.tsx",
    "src/jobs/retention.rs",
    "src/search/index.rs",
    "src/notify/email.rs",
    "src/api/middleware/rate_limit.rs",
    "migrations/0042_add_audit_log.sql",
    "src/orders/history.rs",
    "web/hooks/useCart.ts",
];
const FINDINGS: [&str; 12] = [
    "the retry loop swallows the timeout error, so a failed upload is reported as a success",
    "the new endpoint does not check that the caller belongs to the team it reads",
    "acceptance criterion 3 is not covered by any test",
    "the migration locks the orders table for the whole backfill",
    "the error message leaks the internal user id to the client",
    "pagination skips the last page when the total is a multiple of the page size",
    "the cache key ignores the locale, so users see each other's translations",
    "the form loses its input when validation fails on the server",
    "the job holds every row in memory instead of streaming them",
    "a token is written to the debug log on every request",
    "the empty state shows a spinner forever when the list has no entries",
    "time zones are compared as local times, so the daily report runs twice in March",
];
const FIXES: [&str; 8] = [
    "return the error instead of logging it",
    "check team membership before reading the record",
    "add a test that drives the export with an empty account",
    "backfill in batches of 1000 rows outside the migration",
    "map internal errors to a generic message at the API edge",
    "compute the page count with a ceiling division",
    "include the locale in the cache key",
    "stream rows with a cursor",
];
const SENTENCES: [&str; 16] = [
    "Customers on the larger plans asked for this in the last quarterly review.",
    "The current behaviour surprises people because it differs between the web and mobile apps.",
    "Support tickets about this went up after the last release.",
    "The change touches the request path, so it needs a look at latency on the p99 dashboards.",
    "We keep the old behaviour behind a flag for one release so that we can roll back quickly.",
    "The existing module already has most of the plumbing; the missing piece is the validation.",
    "Other teams depend on the response shape, so the JSON stays backward compatible.",
    "The library we use for this supports streaming, which keeps memory flat on big accounts.",
    "A similar change in the orders service took two days and needed one follow-up fix.",
    "Error messages must say what the user can do next, not what went wrong inside.",
    "The design review agreed on server-side validation with the same rules in the client.",
    "Logging stays at debug level so that production logs do not grow.",
    "The product owner wants a metric for adoption in the first two weeks.",
    "Accessibility matters here: every control needs a label and keyboard support.",
    "The data model change is additive, so no downtime is needed for the migration.",
    "Tests run against a real database in CI; the unit tests fake only the clock.",
];

struct Story {
    id: String,
    slug: String,
    title: String,
    column: usize,
    created_ms: i64,
    depends_on: Vec<String>,
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

fn slugify(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_end_matches('-').to_string()
}

fn date(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .expect("a valid instant")
        .format("%Y-%m-%d")
        .to_string()
}

fn timestamp(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .expect("a valid instant")
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// A single-quoted YAML scalar: safe for any text on one line.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

const HOUR: i64 = 3_600_000;

impl Story {
    fn new(
        rng: &mut Rng,
        created_ms: i64,
        column: usize,
        done_ids: &[String],
        slugs: &mut HashSet<String>,
    ) -> Story {
        let title = format!(
            "{} {}{}",
            rng.pick(&VERBS),
            rng.pick(&OBJECTS),
            rng.pick(&QUALIFIERS)
        );
        // Same clash rule as the tool: `<slug>.md`, then `<slug>-2.md`, …
        let base = slugify(&title);
        let mut slug = base.clone();
        let mut n = 2;
        while !slugs.insert(slug.clone()) {
            slug = format!("{base}-{n}");
            n += 1;
        }
        let mut depends_on = Vec::new();
        if !done_ids.is_empty() && rng.chance(35) {
            // Recent done work, as a real dependency usually is.
            let window = done_ids.len().min(500);
            for _ in 0..rng.range(1, 3) {
                let dep = &done_ids[done_ids.len() - 1 - rng.range(0, window as u64 - 1) as usize];
                if !depends_on.contains(dep) {
                    depends_on.push(dep.clone());
                }
            }
        }
        Story {
            id: format!(
                "story-{}-{:0>4}",
                base36(created_ms as u64),
                base36(rng.range(0, 36u64.pow(4) - 1))
            ),
            slug,
            title,
            column,
            created_ms,
            depends_on,
        }
    }

    fn render(&self, rng: &mut Rng) -> String {
        let column = self.column;
        let history = History::new(rng, self.created_ms, column);
        let (research, plan, implementation, reviews) = match column {
            BACKLOG => (false, false, false, false),
            READY => {
                let research = rng.chance(50);
                (research, research && rng.chance(50), false, false)
            }
            IN_PROGRESS => (true, true, rng.chance(50), false),
            DONE => (true, true, true, true),
            _ => (true, rng.chance(70), rng.chance(40), false),
        };
        let mut f = String::with_capacity(4096);
        f.push_str("---\n");
        let _ = writeln!(f, "id: {}", self.id);
        let _ = writeln!(f, "title: {}", self.title);
        let _ = writeln!(f, "priority: {}", rng.range(1, 100));
        let _ = writeln!(f, "status: {}", COLUMNS[column]);
        let kind = match rng.range(0, 99) {
            0..=54 => "feature",
            55..=79 => "bug",
            80..=94 => "chore",
            _ => "spike",
        };
        let _ = writeln!(f, "type: {kind}");
        let _ = writeln!(f, "created: '{}'", date(self.created_ms));
        let _ = writeln!(f, "updated: '{}'", date(history.last_ms));
        let label_count = rng.range(0, 3);
        if label_count == 0 {
            f.push_str("labels: []\n");
        } else {
            f.push_str("labels:\n");
            let mut labels: Vec<&str> = Vec::new();
            for _ in 0..label_count {
                let label = rng.pick(&LABELS);
                if !labels.contains(&label) {
                    labels.push(label);
                    let _ = writeln!(f, "- {label}");
                }
            }
        }
        if rng.chance(60) {
            let _ = writeln!(f, "assignee: {}", rng.pick(&PEOPLE));
        }
        if rng.chance(70) {
            let _ = writeln!(
                f,
                "estimated_effort: {}",
                rng.pick(&["small", "medium", "large"])
            );
        }
        let _ = writeln!(f, "research_complete: {research}");
        let _ = writeln!(f, "plan_complete: {plan}");
        let _ = writeln!(f, "implementation_complete: {implementation}");
        let _ = writeln!(f, "reviews_complete: {reviews}");
        if self.depends_on.is_empty() {
            f.push_str("depends_on: []\n");
        } else {
            f.push_str("depends_on:\n");
            for dep in &self.depends_on {
                let _ = writeln!(f, "- {dep}");
            }
        }
        if column != BACKLOG {
            let _ = writeln!(f, "branch: agentic-sdlc/{}", self.slug);
        }
        if column == DONE && rng.chance(80) {
            let _ = writeln!(
                f,
                "pr_url: https://github.com/acme/storefront/pull/{}",
                rng.range(100, 9999)
            );
        }
        if column == BLOCKED {
            let reason = if history.iterations.len() >= 3 {
                "Circuit breaker: reached max refinement attempts (3/3); manual intervention required".to_string()
            } else {
                format!("Phase plan rejected by review: {}", rng.pick(&FINDINGS))
            };
            let _ = writeln!(f, "last_error: {}", quoted(&reason));
            let _ = writeln!(f, "blocked_reason: {}", quoted(&reason));
        }
        let _ = writeln!(f, "refinement_count: {}", history.iterations.len());
        if rng.chance(5) {
            f.push_str("max_refinement_attempts: 5\n");
        }
        history.render(&mut f);
        render_phase_reviews(rng, &mut f, column);
        let requests = rng.range(20, 120);
        let _ = writeln!(
            f,
            "usage:\n  prompt_tokens: {}\n  completion_tokens: {}\n  requests: {requests}",
            requests * rng.range(2_000, 6_000),
            requests * rng.range(200, 900),
        );
        f.push_str("---\n");
        self.render_body(rng, &mut f, &history);
        f
    }

    fn render_body(&self, rng: &mut Rng, f: &mut String, history: &History) {
        let _ = writeln!(f, "# {}\n", self.title);
        let prose = |rng: &mut Rng, f: &mut String, sentences: u64| {
            for _ in 0..sentences {
                f.push_str(rng.pick(&SENTENCES));
                f.push(' ');
            }
            f.pop();
            f.push('\n');
        };
        f.push_str("## Summary\n");
        let _ = write!(f, "As a user I want to {}. ", self.title.to_lowercase());
        prose(rng, f, 1);
        f.push_str("\n## Acceptance Criteria\n");
        for n in 0..rng.range(2, 3) {
            let _ = writeln!(
                f,
                "- [{}] Given {}, when it happens, then {}",
                if self.column == DONE { 'x' } else { ' ' },
                rng.pick(&OBJECTS),
                FIXES[(n as usize + 1) % FIXES.len()]
            );
        }
        f.push_str("\n## Research\n");
        prose(rng, f, 1);
        let _ = writeln!(f, "Relevant code: `{}`.", rng.pick(&FILES));
        f.push_str("\n## Implementation Plan\n");
        for n in 1..=rng.range(2, 3) {
            let _ = writeln!(f, "{n}. In `{}`, {}.", rng.pick(&FILES), rng.pick(&FIXES));
        }
        f.push_str("\n## Implementation Notes\n");
        prose(rng, f, 1);
        f.push_str("\n## Review Notes\n");
        for (n, iteration) in history.iterations.iter().enumerate() {
            let _ = writeln!(
                f,
                "### Refinement Iteration {}\n- {}\n",
                n + 1,
                iteration.feedback
            );
        }
    }
}

struct Review {
    ms: i64,
    decision: &'static str,
    findings: Vec<(&'static str, &'static str, &'static str)>,
    target_phase: Option<&'static str>,
}

struct Iteration {
    started_ms: i64,
    completed: Option<(i64, &'static str)>,
    feedback: String,
}

/// The review and rework timeline of one story: reviews every few hours, a rework after each of
/// the first rejections, the latest review matching the story's column.
struct History {
    reviews: Vec<Review>,
    iterations: Vec<Iteration>,
    last_ms: i64,
}

impl History {
    fn new(rng: &mut Rng, created_ms: i64, column: usize) -> History {
        let review_count = rng.range(3, 8) as usize;
        let mut rework_count = rng.range(1, 3) as usize;
        if column == BLOCKED && rng.chance(50) {
            rework_count = 3;
        }
        // Each rework sits between two reviews, so the latest review is never one of them.
        let rework_count = rework_count.min(review_count - 1);
        let mut ms = created_ms + rng.range(24, 72) as i64 * HOUR;
        let mut reviews = Vec::with_capacity(review_count);
        for index in 0..review_count {
            let last = index + 1 == review_count;
            let decision = if index < rework_count {
                "REJECTED"
            } else if last {
                match column {
                    DONE => "APPROVED",
                    BLOCKED => "REJECTED",
                    _ => match rng.range(0, 9) {
                        0..=3 => "REJECTED",
                        4..=8 => "APPROVED",
                        _ => "FAILED",
                    },
                }
            } else {
                match rng.range(0, 9) {
                    0..=3 => "REJECTED",
                    4..=7 => "APPROVED",
                    _ => "FAILED",
                }
            };
            let findings = match decision {
                "REJECTED" => (0..if rng.chance(30) { 2 } else { 1 })
                    .map(|n| {
                        (
                            if n == 0 { "blocker" } else { "critical" },
                            rng.pick(&FINDINGS),
                            rng.pick(&FILES),
                        )
                    })
                    .collect(),
                "APPROVED" if rng.chance(50) => vec![("minor", rng.pick(&FINDINGS), "")],
                _ => Vec::new(),
            };
            let target_phase = (decision == "REJECTED" && rng.chance(30))
                .then(|| rng.pick(&["research", "plan", "implement"]));
            reviews.push(Review {
                ms,
                decision,
                findings,
                target_phase,
            });
            ms += rng.range(2, 30) as i64 * HOUR;
        }
        let mut iterations: Vec<Iteration> = (0..rework_count)
            .map(|index| {
                let next = &reviews[index + 1];
                Iteration {
                    started_ms: reviews[index].ms + rng.range(5, 50) as i64 * 60_000,
                    completed: Some((
                        next.ms,
                        if next.decision == "APPROVED" {
                            "success"
                        } else {
                            "failed"
                        },
                    )),
                    feedback: feedback_summary(&reviews[index]),
                }
            })
            .collect();
        let latest = reviews.last().expect("at least three reviews");
        let mut last_ms = latest.ms;
        // Open stories whose latest review was rejected: some already have their rework under
        // way (the assessor moves on), the rest wait for one (the assessor picks `rework`).
        if latest.decision == "REJECTED"
            && matches!(column, READY | IN_PROGRESS)
            && iterations.len() < 3
            && rng.chance(50)
        {
            last_ms = latest.ms + rng.range(5, 50) as i64 * 60_000;
            iterations.push(Iteration {
                started_ms: last_ms,
                completed: None,
                feedback: feedback_summary(latest),
            });
        }
        History {
            reviews,
            iterations,
            last_ms,
        }
    }

    fn render(&self, f: &mut String) {
        f.push_str("refinement_iterations:\n");
        for (n, iteration) in self.iterations.iter().enumerate() {
            let _ = writeln!(
                f,
                "- iteration: {}\n  agentType: {}\n  startedAt: '{}'",
                n + 1,
                if n % 2 == 0 { "implement" } else { "plan" },
                timestamp(iteration.started_ms)
            );
            if let Some((ms, _)) = iteration.completed {
                let _ = writeln!(f, "  completedAt: '{}'", timestamp(ms));
            }
            let _ = writeln!(f, "  reviewFeedback: {}", quoted(&iteration.feedback));
            let result = iteration.completed.map_or("in_progress", |(_, r)| r);
            let _ = writeln!(f, "  result: {result}");
        }
        f.push_str("review_history:\n");
        for (index, review) in self.reviews.iter().enumerate() {
            let _ = writeln!(
                f,
                "- timestamp: '{}'\n  decision: {}",
                timestamp(review.ms),
                review.decision
            );
            let blockers: Vec<_> = review
                .findings
                .iter()
                .filter(|(s, _, _)| *s == "blocker")
                .collect();
            let critical = review.findings.iter().any(|(s, _, _)| *s == "critical");
            let severity = match review.decision {
                "REJECTED" if !blockers.is_empty() => Some("CRITICAL"),
                "REJECTED" => Some("HIGH"),
                "APPROVED" if !review.findings.is_empty() => Some("LOW"),
                _ => None,
            };
            if let Some(severity) = severity {
                let _ = writeln!(f, "  severity: {severity}");
            }
            f.push_str("  feedback: |-\n");
            match review.decision {
                "FAILED" => f.push_str(
                    "    The security-review perspective gave no verdict after a second request.\n    No approval or rejection was recorded.\n",
                ),
                _ if review.findings.is_empty() => f.push_str(
                    "    Code review: passed.\n    Security review: passed.\n    PO review: passed; the acceptance criteria are covered.\n",
                ),
                _ => {
                    for (severity, finding, file) in &review.findings {
                        let _ = writeln!(f, "    [{severity}] {file}: {finding}.");
                    }
                }
            }
            if blockers.is_empty() {
                f.push_str("  blockers: []\n");
            } else {
                f.push_str("  blockers:\n");
                for (_, finding, file) in blockers {
                    let _ = writeln!(f, "  - {}", quoted(&format!("{file}: {finding}")));
                }
            }
            let passed = review.decision == "APPROVED";
            let _ = writeln!(
                f,
                "  codeReviewPassed: {}\n  securityReviewPassed: {}\n  poReviewPassed: {}",
                passed || !critical,
                review.decision != "FAILED",
                passed
            );
            if let Some(phase) = review.target_phase {
                let _ = writeln!(f, "  targetPhase: {phase}");
            }
            // Only the latest record keeps its issues, which keeps a story near 4 KB.
            if review.decision == "REJECTED" && index + 1 == self.reviews.len() {
                f.push_str("  issues:\n");
                for (n, (severity, finding, file)) in review.findings.iter().enumerate() {
                    let _ = writeln!(
                        f,
                        "  - severity: {severity}\n    category: {}\n    description: {}\n    file: {file}",
                        if n == 0 { "correctness" } else { "testing" },
                        quoted(finding),
                    );
                    if n == 0 && review.ms % 2 == 0 {
                        let _ = writeln!(
                            f,
                            "    line: {}\n    suggestedFix: {}",
                            40 + review.ms % 300,
                            quoted(FIXES[(review.ms % 8) as usize])
                        );
                    }
                }
            }
        }
    }
}

fn feedback_summary(review: &Review) -> String {
    let blockers = review
        .findings
        .iter()
        .filter(|(s, _, _)| *s == "blocker")
        .count();
    let critical = review.findings.len() - blockers;
    format!("Review failed: {blockers} blocker(s), {critical} critical")
}

fn render_phase_reviews(rng: &mut Rng, f: &mut String, column: usize) {
    let phases: &[&str] = match column {
        BACKLOG => &[],
        READY => &["refine"],
        IN_PROGRESS | BLOCKED => &["refine", "research", "plan"],
        _ => &["refine", "research", "plan", "implement"],
    };
    if phases.is_empty() {
        // An empty map is left out, as the tool does for optional keys.
        return;
    }
    f.push_str("phase_reviews:\n");
    for phase in phases {
        let attempts = rng.range(1, 3);
        let _ = writeln!(
            f,
            "  {phase}:\n    attempts: {attempts}\n    decision: APPROVE"
        );
        if attempts == 3 && rng.chance(50) {
            f.push_str("    exhausted: true\n");
        }
        if *phase == "plan" && rng.chance(10) {
            f.push_str("    predecessor_retries: 1\n");
        }
    }
}
