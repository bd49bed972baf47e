//! The board-side commands: init, add, status, details, config, move, unblock, validate.

mod add;
mod color;
mod config;
mod details;
mod hand_edits;
mod init;
mod move_unblock;
mod root;
mod status;
mod usage;
mod validate;
