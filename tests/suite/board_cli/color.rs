//! Colour: on with `--color always`, off with `NO_COLOR`, `--color never`, `--json` or a pipe.

use super::status::mixed_board;
use crate::suite::common::{outcome, Outcome, TestEnv};

const ESC: char = '\u{1b}';

fn has_ansi(out: &Outcome) -> bool {
    out.stdout.contains(ESC) || out.stderr.contains(ESC)
}

#[test]
fn colour_follows_the_flag_and_no_color() {
    let env = TestEnv::init();
    mixed_board(&env);
    // (args, NO_COLOR set, colour expected); stdout is a pipe here, so `auto` means off.
    let cases: [(&[&str], bool, bool); 7] = [
        (&["status"], true, false),
        (&["status"], false, false),
        (&["status", "--color", "never"], false, false),
        (&["status", "--color", "auto"], false, false),
        (&["status", "--color", "always"], false, true),
        (&["details", "login-page", "--color", "always"], true, true),
        (&["status", "--json", "--color", "always"], false, false),
    ];
    for (args, no_color, coloured) in cases {
        let mut cmd = env.cmd(args);
        if !no_color {
            cmd.env_remove("NO_COLOR");
        }
        let out = outcome(&mut cmd);
        out.success();
        assert_eq!(
            has_ansi(&out),
            coloured,
            "`{}` (NO_COLOR {no_color})\n{}",
            args.join(" "),
            out.stdout
        );
    }
}

#[test]
fn errors_are_coloured_only_when_asked() {
    let env = TestEnv::init();
    let plain = env.run(&["details", "nothing"]);
    plain.code(1);
    assert!(!has_ansi(&plain), "{}", plain.stderr);
    let coloured = env.run(&["details", "nothing", "--color", "always"]);
    coloured.code(1);
    assert!(has_ansi(&coloured), "{}", coloured.stderr);
}

#[test]
fn theme_none_turns_colour_off_even_when_forced() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    env.run(&["config", "theme", "none"]).success();
    let out = env.run(&["status", "--color", "always"]);
    out.success().stdout_has("dark-mode");
    assert!(!has_ansi(&out), "{}", out.stdout);
}
