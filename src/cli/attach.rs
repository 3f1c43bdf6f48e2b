//! `aimon-console attach [SOCKET]`: the console over a daemon (docs/daemon.md) instead of a
//! runtime of its own. The daemon's servers, calls, approvals and agent sessions show as the
//! console's own; `q` detaches and leaves them running. The config file gives the console's
//! own settings (its agent profiles' names, the theme); the servers are the daemon's.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use super::output;
use crate::config::Config;
use crate::daemon::client::Link;
use crate::tui::ConsoleOptions;

#[derive(clap::Args, Debug, Clone)]
pub struct AttachArgs {
    /// The daemon's socket (default: $XDG_RUNTIME_DIR/aimon-console/daemon.sock).
    #[arg(value_name = "SOCKET")]
    pub socket: Option<PathBuf>,
    /// The agent profile of this console's session in the daemon (default: the daemon's).
    #[arg(long = "model", value_name = "NAME")]
    pub model: Option<String>,
    /// Go on with the daemon's session ID in this console's Conversation.
    #[arg(long = "resume", value_name = "ID")]
    pub resume: Option<String>,
}

pub async fn run(config: Config, args: AttachArgs) -> ExitCode {
    if !std::io::stdout().is_terminal() {
        output::error_line("attach: the console needs a terminal");
        return ExitCode::from(1);
    }
    let socket = args.socket.unwrap_or_else(Link::default_socket);
    let (link, notices) = match Link::connect(&socket, "console").await {
        Ok(connected) => connected,
        Err(why) => {
            output::error_line(&format!("attach: {why}"));
            return ExitCode::from(1);
        }
    };
    let options = ConsoleOptions {
        model: args.model,
        resume: args.resume,
        attach: Some((link, notices)),
        ..ConsoleOptions::default()
    };
    crate::tui::run(config, options).await
}
