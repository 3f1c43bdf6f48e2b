//! `aimon-console sessions [--json]`: the agent's transcripts under
//! `$XDG_STATE_HOME/aimon-console/sessions/`, oldest first, with the id `run --resume` and the console's `--resume` take.

use std::process::ExitCode;

use super::output::{self, safe_text};
use crate::agent::transcript::{self, fmt_time};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct SessionsArgs {
    /// Print a JSON array instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// A config path in `width` characters: `~` for the home folder, its start cut (`…`) so
/// that the file name and the folders nearest it stay.
fn config_cell(path: &str, width: usize) -> String {
    let home = dirs::home_dir().map(|h| h.display().to_string());
    let path = match home.as_deref().and_then(|h| path.strip_prefix(h)) {
        Some(rest) if rest.starts_with('/') => format!("~{rest}"),
        _ => path.to_string(),
    };
    let path = crate::text::sanitize_line(&path, 400);
    let chars: Vec<char> = path.chars().collect();
    if chars.len() <= width {
        return path;
    }
    let tail: String = chars[chars.len() - (width - 1)..].iter().collect();
    format!("…{tail}")
}

pub fn run(args: SessionsArgs) -> ExitCode {
    let dir = transcript::sessions_dir();
    let sessions = transcript::list(&dir);
    if args.json {
        let value = serde_json::to_value(&sessions).unwrap_or_default();
        output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ));
        return ExitCode::SUCCESS;
    }
    if sessions.is_empty() {
        output::print(&format!("no sessions in {}\n", dir.display()));
        return ExitCode::SUCCESS;
    }
    // Sessions of every config are here: each says its own.
    let mut text = format!(
        "{:<20}  {:<16}  {:<12}  {:<28}  {:>7}  FIRST PROMPT\n",
        "ID", "STARTED (UTC)", "PROFILE", "CONFIG", "PROMPTS"
    );
    for s in &sessions {
        text.push_str(&format!(
            "{:<20}  {:<16}  {:<12}  {:<28}  {:>7}  {}\n",
            s.id,
            fmt_time(s.started_ms),
            safe_text(&s.profile),
            config_cell(&s.config, 28),
            s.prompts,
            crate::text::sanitize_line(&s.first_prompt, 60)
        ));
    }
    text.push_str(&format!(
        "(in {}; continue one with `run --resume ID PROMPT`, or in the console with `--resume ID`)\n",
        dir.display()
    ));
    output::print(&text);
    ExitCode::SUCCESS
}
