//! `aimon-console daemon [--socket PATH]`: the runtime without a console, for consoles to
//! attach to (docs/daemon.md). Says `listening on PATH` on stdout once the socket is ready;
//! Ctrl-C, SIGTERM or SIGHUP stop it: running calls cancelled, waiting approvals denied, the
//! consoles told, every server closed, the socket removed.

use std::path::PathBuf;
use std::process::ExitCode;

use super::output;
use crate::config::Config;
use crate::daemon::{self, socket};

#[derive(clap::Args, Debug, Clone)]
pub struct DaemonArgs {
    /// The socket to listen on (default: $XDG_RUNTIME_DIR/aimon-console/daemon.sock).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

pub async fn run(config: Config, args: DaemonArgs) -> ExitCode {
    let path = args.socket.unwrap_or_else(socket::default_path);
    let listener = match socket::listen(&path).await {
        Ok(listener) => listener,
        Err(why) => {
            output::error_line(&format!("daemon: {why}"));
            return ExitCode::from(1);
        }
    };
    match socket::take_over(&path) {
        Ok(Some((before, ended))) if ended > 0 => output::error_line(&format!(
            "daemon: ended {ended} process(es) the servers of the daemon before (pid {before}) left behind"
        )),
        Ok(_) => {}
        Err(why) => {
            output::error_line(&format!("daemon: {why}"));
            return ExitCode::from(1);
        }
    }
    println!("listening on {}", path.display());
    match daemon::run(config, listener, &path, super::stop_asked()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            socket::release(&path);
            output::error_line(&format!("daemon: {why}"));
            ExitCode::from(1)
        }
    }
}
