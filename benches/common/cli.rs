//! What every benchmark's command line shares. `cargo bench` passes `--bench`; without it (as
//! `cargo test --benches` runs a bench) the bench does a small smoke run. Options take a value
//! after them. A benchmark reports and does not fail: it exits 2 with its usage when an argument
//! is wrong, and 1 when it cannot measure.

// Each benchmark includes this file as a module of its own and uses part of it.
#![allow(dead_code)]

use std::str::FromStr;

/// A benchmark's arguments, read flag by flag.
pub struct BenchArgs {
    name: &'static str,
    /// No `--bench`: a smoke run, small and quick.
    pub smoke: bool,
    rest: std::vec::IntoIter<String>,
}

impl BenchArgs {
    fn from_env(name: &'static str) -> BenchArgs {
        let args: Vec<String> = std::env::args().skip(1).collect();
        BenchArgs {
            name,
            smoke: !args.iter().any(|arg| arg == "--bench"),
            rest: args.into_iter(),
        }
    }

    /// The next flag; cargo's own `--bench` is passed over, and an unknown flag is named on
    /// stderr by [`BenchArgs::unknown`].
    pub fn next_flag(&mut self) -> Option<String> {
        self.rest.by_ref().find(|arg| arg != "--bench")
    }

    /// The value after `flag`.
    pub fn value(&mut self, flag: &str) -> Result<String, String> {
        self.rest
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))
    }

    /// The number after `flag`.
    pub fn number<T: FromStr>(&mut self, flag: &str) -> Result<T, String> {
        self.rest
            .next()
            .and_then(|value| value.parse().ok())
            .ok_or_else(|| format!("{flag} needs a number"))
    }

    /// An argument the bench does not know: said, and otherwise ignored (cargo may pass its own).
    pub fn unknown(&self, flag: &str) {
        eprintln!("{}: ignoring unknown argument `{flag}`", self.name);
    }
}

/// A benchmark's `main`: its options read by `parse` (exit 2 with `usage` when they are
/// wrong), then `bench` run on them (exit 1, "cannot measure", when it fails).
pub fn main<O>(
    name: &'static str,
    usage: &str,
    parse: impl FnOnce(&mut BenchArgs) -> Result<O, String>,
    bench: impl FnOnce(O) -> Result<(), String>,
) {
    let mut args = BenchArgs::from_env(name);
    let options = match parse(&mut args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{name}: {message}\nusage: cargo bench --bench {name} -- {usage}");
            std::process::exit(2);
        }
    };
    if let Err(message) = bench(options) {
        eprintln!("{name}: cannot measure: {message}");
        std::process::exit(1);
    }
}
