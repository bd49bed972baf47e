//! Past one machine (docs/design.md §20): several clones work one board through the git remote they
//! share, with no server of their own.
//!
//! - **Claims.** Before a run works on a story it creates `refs/agentic-sdlc/claims/<id>` on
//!   the remote with a push that only succeeds if the ref does not exist; the claim records
//!   host, run and expiry ([`claims::Claim`]). A background task renews it every third of
//!   `remote.claimSeconds`. A lapsed claim is taken over with a push naming its old value.
//! - **The board.** Story files reach the remote's base branch by fetch, merge and push
//!   ([`sync`]); a push that lost a race is retried on the new tip.
//! - **Merges.** A story is merged as on one machine (docs/design.md §12), against the
//!   remote's tip, and the tested merge, the story's move to done and the release of its claim
//!   go in one atomic push, so the base never holds the merge without the record, and a run
//!   whose claim lapsed cannot merge.
//!
//! Git round trips per story: the claim, the fetch after it (the story as the remote has it
//! now), then the fetch and the push of the merge itself. Work that only changes the board
//! (refine, research, plan, review) reaches the remote with the merge, when the story is set
//! aside, or when the run ends.

mod claiming;
mod claims;
mod connection;
mod deliver;
mod network;
mod preflight;
mod publishing;
mod sync;
mod turns;

pub use claims::{remotes_with_claims, seen_claims, SeenClaim};
pub use connection::{Claimed, Remote};
pub(crate) use deliver::integrate_through;
pub use preflight::{remote_preflight, RemotePlan};
pub use turns::{Turn, Turns};
