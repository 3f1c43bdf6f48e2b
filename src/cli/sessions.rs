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
    let mut text = format!(
        "{:<20}  {:<16}  {:<12}  {:>7}  FIRST PROMPT\n",
        "ID", "STARTED (UTC)", "PROFILE", "PROMPTS"
    );
    for s in &sessions {
        text.push_str(&format!(
            "{:<20}  {:<16}  {:<12}  {:>7}  {}\n",
            s.id,
            fmt_time(s.started_ms),
            safe_text(&s.profile),
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
