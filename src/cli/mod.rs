//! Subcommands, one file each, and what they share: loading the config (exit 2 on error) and
//! the JSON shapes of reports and tools (docs/commands.md "JSON shapes").

pub mod approve;
pub mod asks;
pub mod attach;
pub mod call;
pub mod check;
pub mod conformance;
pub mod console;
mod content;
pub mod daemon;
pub mod demo_faults;
pub mod demo_model;
pub mod demo_server;
pub mod enable;
pub mod events;
pub mod export;
pub mod import;
pub mod login;
pub mod logout;
pub mod output;
pub mod prompts;
pub mod resources;
pub mod run;
pub mod serve;
pub mod sessions;
pub mod skills;
pub mod tools;
pub mod trust;
pub mod usage;
pub mod watch;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::config::{self, Config};

/// Exit code for a config error.
pub const EXIT_CONFIG: u8 = 2;

/// Options every command that reads the config shares.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ConfigArgs {
    /// Config file (else $AIMON_CONFIG, else ./aimon.yaml, else the XDG config dir).
    #[arg(long, short = 'c', global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Finds and loads the config; on failure prints every error found, one `file:line:col:
/// message` line each (at most [`config::MAX_ERRORS`]), and gives exit 2.
pub fn load_config(explicit: Option<&Path>) -> Result<Config, ExitCode> {
    let loaded = config::resolve_path(explicit).and_then(|path| config::load(&path));
    loaded.map_err(|err| {
        output::error_line(&err.report());
        ExitCode::from(EXIT_CONFIG)
    })
}

/// Says that the config has no server `name` (listing those it has) and gives exit 2.
pub fn no_such_server(config: &Config, name: &str) -> ExitCode {
    let names: Vec<&str> = config.mcp.servers.iter().map(|s| s.name.as_str()).collect();
    let listed = if names.is_empty() {
        "it has none".to_string()
    } else {
        format!("it has {}", names.join(", "))
    };
    output::error_line(&format!(
        "error: no server named {} in {} ({listed})",
        crate::text::sanitize_line(name, 80),
        config.path.display()
    ));
    ExitCode::from(EXIT_CONFIG)
}

/// Resolves when this command is asked to stop: Ctrl-C (SIGINT), SIGTERM (`kill`, `timeout`,
/// a CI job cancelled) or SIGHUP (its terminal went away). A signal ignored when the command
/// started (`nohup`, a script's background job) stays ignored; one that cannot be listened
/// for is left to its default.
pub(crate) async fn stop_asked() {
    use tokio::signal::unix::{signal, SignalKind};
    let listen = |kind: SignalKind| async move {
        if ignored(kind.as_raw_value()) {
            std::future::pending::<()>().await;
        }
        match signal(kind) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for a stop signal");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = listen(SignalKind::interrupt()) => {}
        () = listen(SignalKind::terminate()) => {}
        () = listen(SignalKind::hangup()) => {}
    }
}

/// Whether signal `number` is set to be ignored (as `nohup` sets SIGHUP).
fn ignored(number: libc::c_int) -> bool {
    // SAFETY: with no new action, sigaction only writes the current one into `current`.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        libc::sigaction(number, std::ptr::null(), &mut current) == 0
            && current.sa_sigaction == libc::SIG_IGN
    }
}
