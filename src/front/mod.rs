//! What the front ends (the command line, the MCP server and the page) share: the JSON views,
//! adding, editing and moving a story, and starting a run. Here, below all three, so that none
//! imports another (docs/design.md, "Layers of the code").

pub(crate) mod editing;
mod envelope;
pub(crate) mod launch;
pub(crate) mod moving;
pub(crate) mod new_story;
pub(crate) mod status;
pub(crate) mod story;

pub use envelope::envelope;
