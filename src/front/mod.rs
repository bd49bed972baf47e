//! What the two front ends, the command line and the MCP server, both give: the JSON views,
//! adding a story, and starting a run. Here, above both, so that neither imports the other
//! (docs/design.md, "Layers of the code").

mod envelope;
pub(crate) mod launch;
pub(crate) mod moving;
pub(crate) mod new_story;
pub(crate) mod status;
pub(crate) mod story;

pub use envelope::envelope;
