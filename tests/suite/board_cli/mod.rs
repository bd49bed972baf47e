//! The board-side commands: init, add, status, details, config, move, unblock, validate.

mod add;
mod init;
mod root;
mod usage;
