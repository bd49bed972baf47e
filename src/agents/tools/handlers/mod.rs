//! One file per tool, and the one line per tool that registers it.

use super::registry::ToolHandler;

/// Declares each tool's module and lists its handler, in the order the model sees the tools.
macro_rules! register {
    ($($module:ident => $handler:ident),* $(,)?) => {
        $(mod $module;)*
        pub(super) static ALL: &[&dyn ToolHandler] = &[$(&$module::$handler),*];
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
