//! The acceptance phase's agent run (docs/design.md §21): the model writes the tests under the
//! acceptance check, and the tests it kept are listed above what it said.

use super::PhaseRun;
use crate::agents::conversation::WorkCheck;
use crate::agents::{AgentError, AgentOutput, PhaseRequest, Revision};
use crate::board::{Phase, Story};
use crate::workflow::acceptance::{AcceptanceCheck, Verdict};
use crate::workflow::fixed_tests::listing;
use crate::workflow::output_check::TreeFingerprint;

impl PhaseRun<'_> {
    /// Asks for the tests once, checked; the verdict is kept for the output check.
    pub(super) async fn write_acceptance_tests(
        &mut self,
        story: &Story,
        revision: Option<&Revision>,
        variant: u32,
    ) -> Result<AgentOutput, AgentError> {
        let (dir, ignore) = (self.work_dir.clone(), self.ignore.clone());
        let before = tokio::task::spawn_blocking(move || TreeFingerprint::take(&dir, &ignore))
            .await
            .unwrap_or_else(|_| TreeFingerprint::take(&self.work_dir, &self.ignore));
        let check = AcceptanceCheck::new(
            self.wf,
            story,
            &self.work_dir,
            &self.ignore,
            before,
            self.transcript,
        );
        let suggested = check.suggested().to_string();
        let request = PhaseRequest {
            phase: Phase::Acceptance,
            story,
            revision,
            work_dir: &self.work_dir,
            transcript: self.transcript,
            check: Some(&check as &dyn WorkCheck),
            acceptance_path: Some(&suggested),
            variant,
        };
        let mut output = self.wf.agents.run_phase(request).await?;
        let verdict = check.verdict().await;
        if let Verdict::Written(paths) = &verdict {
            output.text = listing(paths, &output.text);
        }
        self.acceptance = Some(verdict);
        Ok(output)
    }

    /// Why the acceptance tests just written cannot be kept; `None` for other phases.
    pub(super) fn acceptance_refusal(&self, phase: Phase) -> Option<String> {
        match (&self.acceptance, phase) {
            (Some(Verdict::Refused(why)), Phase::Acceptance) => Some(why.clone()),
            _ => None,
        }
    }
}
