//! Colour themes. Roles, not colours, are named in the code, so a theme swaps them in one place.

use colored::{ColoredString, Colorize};

use crate::config::Theme;

#[derive(Debug, Clone, Copy)]
pub struct Palette {
    theme: Theme,
    enabled: bool,
}

impl Palette {
    pub fn new(theme: Theme, enabled: bool) -> Self {
        Self {
            enabled: enabled && theme != Theme::None,
            theme,
        }
    }

    fn paint(
        &self,
        text: &str,
        dark: fn(&str) -> ColoredString,
        light: fn(&str) -> ColoredString,
    ) -> String {
        if !self.enabled {
            return text.to_string();
        }
        match self.theme {
            Theme::Light => light(text).to_string(),
            _ => dark(text).to_string(),
        }
    }

    pub fn heading(&self, text: &str) -> String {
        self.paint(text, |t| t.bold().bright_white(), |t| t.bold().black())
    }
    pub fn id(&self, text: &str) -> String {
        self.paint(text, |t| t.cyan(), |t| t.blue())
    }
    pub fn dim(&self, text: &str) -> String {
        self.paint(text, |t| t.bright_black(), |t| t.bright_black())
    }
    pub fn ok(&self, text: &str) -> String {
        self.paint(text, |t| t.green(), |t| t.green())
    }
    pub fn warn(&self, text: &str) -> String {
        self.paint(text, |t| t.yellow(), |t| t.yellow().dimmed())
    }
    pub fn error(&self, text: &str) -> String {
        self.paint(text, |t| t.red().bold(), |t| t.red())
    }
    pub fn hint(&self, text: &str) -> String {
        self.paint(text, |t| t.cyan().bold(), |t| t.blue().bold())
    }
    pub fn accent(&self, text: &str) -> String {
        self.paint(text, |t| t.magenta(), |t| t.purple())
    }
}
