//! The board-side commands: init, add, status, details, config, move, unblock, validate.

mod add;
mod color;
mod details;
mod init;
mod root;
mod status;
mod usage;
