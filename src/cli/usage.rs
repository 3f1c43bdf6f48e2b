//! `aimon-console usage [--session ID] [--model NAME] [--json]`: what a model request of the
//! agent would carry, in estimated tokens (about four bytes each): the system prompt, every
//! server's tool definitions (the servers started, as `tools` does), and with `--session` that
//! session's history (as `--resume` would send it) and its latest results; against the profile's
//! `context_window` when it gives one.

use std::process::ExitCode;

use serde_json::json;

use super::asks::AskArgs;
use super::check::start_runtime;
use super::output;
use crate::agent::context::breakdown;
use crate::agent::profile::profile_choice;
use crate::agent::transcript;
use crate::config::Config;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct UsageArgs {
    /// The session whose history to count (see `aimon-console sessions`).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// The model profile (default: the session's, else agent.default).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Print one JSON object (shape in docs/commands.md).
    #[arg(long)]
    pub json: bool,
}

pub async fn run(config: Config, args: UsageArgs) -> ExitCode {
    let Some(agent) = &config.agent else {
        output::error_line(&format!(
            "{}: no agent: section: usage counts what the agent's requests carry (see docs/agent.md)",
            config.path.display()
        ));
        return ExitCode::from(super::EXIT_CONFIG);
    };
    let dir = transcript::sessions_dir();
    let choice = match profile_choice(agent, &dir, args.model.as_deref(), args.session.as_deref()) {
        Ok(choice) => choice,
        Err(message) => {
            output::error_line(&format!("error: {message}"));
            return ExitCode::from(super::EXIT_CONFIG);
        }
    };
    let profile = choice.profile;
    let items = match &args.session {
        None => Vec::new(),
        Some(id) => match transcript::locate(&dir, id).and_then(|p| transcript::read(&p)) {
            Ok(records) => transcript::items(&records),
            Err(e) => {
                output::error_line(&format!("error: {e}"));
                return ExitCode::from(super::EXIT_CONFIG);
            }
        },
    };
    let runtime = match start_runtime(&config, AskArgs::default(), "usage").await {
        Ok(r) => r,
        Err(code) => return code,
    };
    runtime.wait_started().await;
    let tools = runtime.tools();
    runtime.close().await;
    let parts = breakdown(&profile.system_prompt, &tools, &items);
    if args.json {
        let value = json!({
            "profile": profile.name,
            "model": profile.model,
            "session": args.session,
            "estimated": true,
            "window": profile.context_window,
            "system_prompt": parts.system_prompt,
            "tools": {"total": parts.tools, "by_server": parts.tools_by_server},
            "history": parts.history,
            "latest_results": parts.latest_results,
            "total": parts.total,
        });
        output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ));
        return ExitCode::SUCCESS;
    }
    let mut text = format!(
        "A request of profile {} (model {}), in estimated tokens (~4 bytes each):\n",
        output::safe_text(&profile.name),
        output::safe_text(&profile.model)
    );
    text.push_str(&format!("  system prompt     ~{}\n", parts.system_prompt));
    text.push_str(&format!("  tool definitions  ~{}\n", parts.tools));
    for (server, tokens) in &parts.tools_by_server {
        text.push_str(&format!("    {:<16}~{tokens}\n", output::safe_text(server)));
    }
    if args.session.is_some() {
        text.push_str(&format!(
            "  history           ~{} (of it the latest results ~{})\n",
            parts.history, parts.latest_results
        ));
    }
    text.push_str(&format!("  total             ~{}", parts.total));
    match profile.context_window {
        Some(window) => text.push_str(&format!(
            " of a {window}-token window ({}%)\n",
            parts.total * 100 / u64::from(window.max(1))
        )),
        None => text.push_str(" (the profile gives no context_window)\n"),
    }
    output::print(&text);
    ExitCode::SUCCESS
}
