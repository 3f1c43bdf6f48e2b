//! `aimon-console logout SERVER`: forgets a server's OAuth login: revokes its tokens at the
//! authorization server when it offers that (RFC 7009), then deletes its token file (the tokens,
//! the client registration and any pending step-up). The next start reports
//! `needs_login` again. Exit 0, 1 the file could not be deleted, 2 config error or no such
//! server.

use std::process::ExitCode;

use super::login::find_server;
use super::output::{self, safe_text};
use crate::config::Config;
use crate::runtime::{oauth_logout, Revocation};

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
    match oauth_logout(server).await {
        Ok(Some(revocation)) => {
            let how = match revocation {
                Revocation::Revoked => "the authorization server revoked them".to_string(),
                Revocation::NotOffered => {
                    "the authorization server offers no revocation".to_string()
                }
                Revocation::Failed(why) => {
                    format!("not revoked at the server: {}", safe_text(&why))
                }
            };
            output::print(&format!(
                "logged out of {} (its tokens are deleted here; {how})\n",
                server.name
            ));
            ExitCode::SUCCESS
        }
        Ok(None) => {
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
