//! One file per tool, and the one line per tool that registers it.

use super::registry::ToolHandler;

/// Declares each tool's module and lists its handler, in the order the model sees the tools.
macro_rules! register {
    ($($module:ident => $handler:ident),* $(,)?) => {
        $(mod $module;)*
        static ALL: &[&dyn ToolHandler] = &[$(&$module::$handler),*];
    };
}

register! {
    read_file => ReadFile,
    list_files => ListFiles,
    search => Search,
    write_file => WriteFile,
    edit_file => EditFile,
    run_command => RunCommand,
}

/// The tools in the order the model sees them.
pub(super) fn all() -> &'static [&'static dyn ToolHandler] {
    ALL
}

pub(super) fn find(name: &str) -> Option<&'static dyn ToolHandler> {
    all().iter().copied().find(|tool| tool.name() == name)
}
