//! A model out of the box (docs/design.md, "A model out of the box"): the models the tool knows
//! by name, a cache of their files, pulling them with progress and a checksum, and serving one
//! on a loopback port for the runs that use it.

mod cache;
mod catalog;
mod download;
mod error;
mod lock;
mod pull;
mod python;
mod server;

pub use cache::{Cache, Model};
pub use catalog::{human_size, known, DEFAULT_MODEL, KNOWN};
pub use download::Progress;
pub use pull::{pull, Source};
pub use server::{sweep, Managed, Place, SERVED_NAME};
