//! `aimon-console login SERVER [--no-browser]`: the OAuth login of one Streamable HTTP server.
//! Prints the authorization URL, opens it with `xdg-open` when there is one, and waits for the
//! browser's redirect on a loopback listener (127.0.0.1, an ephemeral port); on a remote shell
//! the operator pastes the URL the browser was sent to instead. Unattended grants
//! (`client_credentials`, `cross_app_access`) get their token at once.
//!
//! Exit 0 logged in, 1 the login failed, 2 config error or no such server.

use std::process::{ExitCode, Stdio};
use std::time::Duration;

use tokio::io::AsyncBufReadExt;

use super::output::{self, safe_text};
use crate::config::{Config, ServerConfig};
use crate::runtime::{begin_login, Login, PendingLogin};

/// How long a login waits for the browser.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(600);

#[derive(clap::Args, Debug, Clone)]
pub struct LoginArgs {
    /// The server to log in to (a `streamable_http` server of the config).
    pub server: String,
    /// Print the URL only; do not run `xdg-open`.
    #[arg(long)]
    pub no_browser: bool,
}

/// The server named `name`, or the exit code for "no such server" (its message printed).
pub fn find_server<'a>(config: &'a Config, name: &str) -> Result<&'a ServerConfig, ExitCode> {
    config
        .mcp
        .servers
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = config.mcp.servers.iter().map(|s| s.name.as_str()).collect();
            output::error_line(&format!(
                "error: no server named {name:?} in {} (servers: {})",
                config.path.display(),
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
            ExitCode::from(super::EXIT_CONFIG)
        })
}

pub async fn run(config: Config, args: LoginArgs) -> ExitCode {
    let server = match find_server(&config, &args.server) {
        Ok(server) => server,
        Err(code) => return code,
    };
    let failed = |e: &dyn std::fmt::Display| {
        output::error_line(&format!(
            "login {}: {}",
            server.name,
            safe_text(&e.to_string())
        ));
        ExitCode::from(1)
    };
    let pending = match begin_login(server).await {
        Ok(Login::Done(summary)) => {
            output::print(&format!("{}\n", safe_text(&summary.to_string())));
            return ExitCode::SUCCESS;
        }
        Ok(Login::Interactive(pending)) => pending,
        Err(e) => return failed(&e),
    };
    let url = safe_text(pending.authorization_url());
    output::print(&format!(
        "To log in to {}, open this URL in a browser:\n\n  {url}\n\n",
        server.name
    ));
    if !args.no_browser && open_in_browser(pending.authorization_url()) {
        output::print("(opened with xdg-open)\n");
    }
    output::print(&format!(
        "Waiting for the browser to come back to {} … (on another machine, paste the URL the browser was sent to, then Enter)\n",
        pending.redirect_uri()
    ));
    let redirected = tokio::select! {
        url = pending.wait_for_redirect() => url,
        url = pasted_redirect() => Ok(url),
        () = tokio::time::sleep(LOGIN_TIMEOUT) => {
            output::error_line(&format!(
                "login {}: no redirect within {}; run the command again",
                server.name,
                crate::text::fmt_duration(LOGIN_TIMEOUT)
            ));
            return ExitCode::from(1);
        }
        interrupted = tokio::signal::ctrl_c() => {
            let _ = interrupted;
            output::error_line(&format!("login {}: interrupted", server.name));
            return ExitCode::from(130);
        }
    };
    let finished = match redirected {
        Ok(url) => finish(*pending, &url).await,
        Err(e) => return failed(&e),
    };
    match finished {
        Ok(summary) => {
            output::print(&format!("{}\n", safe_text(&summary)));
            ExitCode::SUCCESS
        }
        Err(e) => failed(&e),
    }
}

async fn finish(pending: PendingLogin, url: &str) -> Result<String, crate::runtime::LoginError> {
    pending.finish(url).await.map(|s| s.to_string())
}

/// Runs `xdg-open URL` when there is one; whether it started.
fn open_in_browser(url: &str) -> bool {
    match tokio::process::Command::new("xdg-open")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(mut child) => {
            // Reaped when it exits (it hands the URL to the browser and leaves).
            tokio::spawn(async move { child.wait().await });
            true
        }
        Err(_) => false,
    }
}

/// The first line typed on stdin that looks like a redirected URL (never, if stdin ends).
async fn pasted_redirect() -> String {
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = line.trim();
        if line.starts_with("http") && (line.contains("code=") || line.contains("error=")) {
            return line.to_string();
        }
        if !line.is_empty() {
            output::error_line(
                "that is not the redirected URL (it holds code=… or error=…); try again",
            );
        }
    }
    std::future::pending().await
}
