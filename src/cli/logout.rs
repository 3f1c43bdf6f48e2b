//! `aimon-console logout SERVER`: forgets a server's OAuth login (deletes its token file, with
//! the tokens, the client registration and any pending step-up). The next start reports
//! `needs_login` again. Exit 0, 1 the file could not be deleted, 2 config error or no such
//! server.

use std::process::ExitCode;

use super::login::find_server;
use super::output::{self, safe_text};
use crate::config::Config;
use crate::runtime::oauth_logout;

#[derive(clap::Args, Debug, Clone)]
pub struct LogoutArgs {
    /// The server to forget the login of.
    pub server: String,
}

pub async fn run(config: Config, args: LogoutArgs) -> ExitCode {
    let server = match find_server(&config, &args.server) {
        Ok(server) => server,
        Err(code) => return code,
    };
    match oauth_logout(server) {
        Ok(true) => {
            output::print(&format!(
                "logged out of {} (its tokens are deleted)\n",
                server.name
            ));
            ExitCode::SUCCESS
        }
        Ok(false) => {
            output::print(&format!("no stored login for {}\n", server.name));
            ExitCode::SUCCESS
        }
        Err(e) => {
            output::error_line(&format!(
                "logout {}: {}",
                server.name,
                safe_text(&e.to_string())
            ));
            ExitCode::from(1)
        }
    }
}
