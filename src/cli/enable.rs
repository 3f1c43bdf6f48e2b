//! `aimon-console enable SERVER` / `disable SERVER`: sets the server's `enabled` in the config
//! file through the comment-preserving writer (a new key goes right under its `name`). A
//! disabled server is listed but never started. Exit 0 written (or already so), 1 the file
//! could not be written, 2 config error or no such server.

use std::process::ExitCode;

use super::output;
use crate::config::{self, Config};

#[derive(clap::Args, Debug, Clone)]
pub struct ServerArg {
    /// The server, as named in the config.
    pub server: String,
}

pub fn run(config: Config, args: ServerArg, enabled: bool) -> ExitCode {
    let word = if enabled { "enabled" } else { "disabled" };
    if !config.mcp.servers.iter().any(|s| s.name == args.server) {
        return super::no_such_server(&config, &args.server);
    }
    match config::set_server_enabled(&config.path, config.source_digest, &args.server, enabled) {
        Ok(None) => {
            output::print(&format!(
                "{} is already {word}; nothing written.\n",
                args.server
            ));
            ExitCode::SUCCESS
        }
        Ok(Some(_)) => {
            output::print(&format!(
                "{} {word}: wrote enabled: {enabled} into {}. It takes effect at the next start (R in a running console).\n",
                args.server,
                config.path.display()
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            output::error_line(&format!("error: {e}"));
            ExitCode::from(1)
        }
    }
}
