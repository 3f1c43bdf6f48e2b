//! `aimon-console attach [DAEMON…]`: the console over one daemon or several (docs/daemon.md)
//! instead of a runtime of its own. The daemon's servers, calls, approvals and agent sessions show as the
//! console's own; `q` detaches and leaves them running. The config file gives the console's
//! own settings (its agent profiles' names, the theme); the servers are the daemon's, so a
//! console attaches from a machine with no config file too (the settings' defaults then).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::output;
use crate::config::{Config, ConfigErrorKind};
use crate::daemon::client::{Link, Target};
use crate::tui::ConsoleOptions;

#[derive(clap::Args, Debug, Clone)]
pub struct AttachArgs {
    /// The daemons: each its socket (default: $XDG_RUNTIME_DIR/aimon-console/daemon.sock), or
    /// tls://HOST:PORT for one that listens on TCP (its token in AIMON_DAEMON_TOKEN, or
    /// --token-file); several at once show side by side, each server named after its daemon.
    #[arg(value_name = "DAEMON")]
    pub daemons: Vec<String>,
    /// Over TLS: the certificate (PEM) the daemon's is checked against (default: the system's roots).
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Over TLS: a file holding the daemon's token (default: AIMON_DAEMON_TOKEN).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// The agent profile of this console's session in the daemon (default: agent.default of
    /// this console's config; the daemon must know it).
    #[arg(long = "model", value_name = "NAME")]
    pub model: Option<String>,
    /// Go on with the daemon's session ID in this console's Conversation.
    #[arg(long = "resume", value_name = "ID")]
    pub resume: Option<String>,
}

/// This console's config: found as every command finds it, or, when none is there and none
/// was named, no file at all (the defaults, as of an empty file at `./aimon.yaml`).
pub fn load_config(explicit: Option<&Path>) -> Result<Config, ExitCode> {
    match crate::config::resolve_path(explicit) {
        Err(e) if explicit.is_none() && e.kind() == ConfigErrorKind::NotFound => {
            let path = std::env::current_dir()
                .unwrap_or_default()
                .join(crate::config::LOCAL_CONFIG_NAME);
            crate::config::load_str(&path, "", &|_| None).map_err(|e| {
                output::error_line(&e.report());
                ExitCode::from(super::EXIT_CONFIG)
            })
        }
        _ => super::load_config(explicit),
    }
}

pub async fn run(config: Config, args: AttachArgs) -> ExitCode {
    if !std::io::stdout().is_terminal() {
        output::error_line("attach: the console needs a terminal");
        return ExitCode::from(1);
    }
    let targets = match targets(&args) {
        Ok(targets) => targets,
        Err(why) => {
            output::error_line(&format!("attach: {why}"));
            return ExitCode::from(super::EXIT_CONFIG);
        }
    };
    let mut attach = Vec::new();
    for target in &targets {
        match Link::connect(target, "console").await {
            Ok(connected) => attach.push(connected),
            Err(why) => {
                output::error_line(&format!("attach: {why}"));
                return ExitCode::from(1);
            }
        }
    }
    let options = ConsoleOptions {
        model: args.model,
        resume: args.resume,
        attach,
        ..ConsoleOptions::default()
    };
    crate::tui::run(config, options).await
}

/// Where the daemons are, with what TLS needs: the token from its file or the environment.
fn targets(args: &AttachArgs) -> Result<Vec<Target>, String> {
    if args.daemons.is_empty() {
        return Ok(vec![Target::Unix(Link::default_socket())]);
    }
    let token = match &args.token_file {
        Some(file) => Some(
            std::fs::read_to_string(file)
                .map_err(|e| format!("--token-file {}: {e}", file.display()))?
                .trim()
                .to_string(),
        ),
        None => std::env::var("AIMON_DAEMON_TOKEN").ok(),
    };
    args.daemons
        .iter()
        .map(|daemon| Target::parse(daemon, args.ca.clone(), token.clone()))
        .collect()
}
