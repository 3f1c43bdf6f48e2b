//! `aimon-console serve --stdio | --http ADDR`: the gateway. Other MCP hosts (Claude Code,
//! Codex, an SDK client) start this command as their one server (or connect to its endpoint)
//! and get the tools of every configured server, named `<server>__<tool>`, with the traits this
//! console resolved as their annotations. Every call passes the same approval gate; with no
//! console to ask, mutating calls are refused with a result that says why. Over stdio nothing
//! but MCP is written to stdout; errors go to stderr and the log.

use std::process::ExitCode;
use std::sync::Arc;

use tokio::net::TcpListener;

use super::asks::AskArgs;
use super::check::start_runtime_answering;
use super::output;
use crate::approval::AnsweredBy;
use crate::config::Config;
use crate::runtime::{gateway_token, Attended, RuntimeOptions};

#[derive(clap::Args, Debug, Clone)]
#[group(required = true, multiple = false)]
pub struct ServeArgs {
    /// Serve one host over stdin and stdout (the host starts this command as a stdio server).
    #[arg(long)]
    pub stdio: bool,
    /// Serve hosts over Streamable HTTP at http://ADDR/mcp (ADDR: HOST:PORT, or a bare PORT on
    /// 127.0.0.1); each request brings the bearer token `gateway-token` prints.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
}

pub async fn run(config: Config, args: ServeArgs) -> ExitCode {
    // Over HTTP the socket and the token come first: a port in use or no token is said at once.
    let http = match &args.http {
        None => None,
        Some(addr) => match listen(addr).await {
            Ok(ready) => Some(ready),
            Err(why) => {
                output::error_line(&format!("serve: {why}"));
                return ExitCode::from(1);
            }
        },
    };
    // A host's call that would ask is refused: nobody is at a console to answer it.
    let unattended = Some(AnsweredBy::Unattended);
    // A server's sampling or elicitation request during a host's call goes to that host.
    let options = RuntimeOptions {
        serves_hosts: true,
        ..crate::telemetry::options(&config)
    };
    let runtime =
        match start_runtime_answering(&config, AskArgs::default(), "serve", unattended, options)
            .await
        {
            Ok(r) => Arc::new(r),
            Err(code) => return code,
        };
    // Every server that can join has joined before the host lists the tools.
    let summary = runtime.wait_started().await;
    for server in summary.servers.iter().filter(|s| s.failure.is_some()) {
        output::error_line(&format!(
            "serve: server {} failed to start; its tools are not offered (aimon-console check says why)",
            server.name
        ));
    }
    let served = match http {
        None => runtime.serve_stdio(&config.gateway).await,
        Some((listener, token)) => {
            // Ctrl-C (or SIGTERM) closes the runtime, which ends the serving.
            let closing = runtime.clone();
            tokio::spawn(async move {
                super::stop_asked().await;
                closing.close().await;
            });
            runtime
                .serve_http(listener, token, &config.gateway, Attended::Never)
                .await
                .map_err(|e| e.to_string())
        }
    };
    runtime.close().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            output::error_line(&format!("serve: {why}"));
            ExitCode::from(1)
        }
    }
}

/// The listener for `--http ADDR` and the token hosts must bring; says where it listens.
pub async fn listen(addr: &str) -> Result<(TcpListener, String), String> {
    let addr = crate::net::bind_address(addr);
    let listener = TcpListener::bind(&addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let token = gateway_token().map_err(|e| format!("no gateway token: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    output::error_line(&format!(
        "serving hosts at http://{local}/mcp (bearer token: aimon-console gateway-token)"
    ));
    Ok((listener, token))
}

/// `aimon-console gateway-token`: prints the token hosts bring to `serve --http` (made on first
/// use), for a host's config. It is a secret: kept owner-only, never logged.
pub fn print_token() -> ExitCode {
    match gateway_token() {
        Ok(token) => {
            output::print(&format!("{token}\n"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            output::error_line(&format!("error: no gateway token: {e}"));
            ExitCode::from(1)
        }
    }
}
