//! Delivering a story into its base branch (SPEC §12).
