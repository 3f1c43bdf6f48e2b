//! `aimon-console daemon [--socket PATH]`: the runtime without a console, for consoles to
//! attach to (docs/daemon.md). Says `listening on PATH` on stdout once the socket is ready;
//! Ctrl-C, SIGTERM or SIGHUP stop it: running calls cancelled, waiting approvals denied, the
//! consoles told, every server closed, the socket removed.

use std::path::PathBuf;
use std::process::ExitCode;

use super::output;
use crate::config::Config;
use crate::daemon::{self, socket, tcp};

#[derive(clap::Args, Debug, Clone)]
pub struct DaemonArgs {
    /// The socket to listen on (default: $XDG_RUNTIME_DIR/aimon-console/daemon.sock).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Print the token consoles bring over TCP (`daemon.listen`), made on first use, and exit.
    #[arg(long)]
    pub print_token: bool,
}

pub async fn run(config: Config, args: DaemonArgs) -> ExitCode {
    if args.print_token {
        return match crate::runtime::daemon_token() {
            Ok(token) => {
                println!("{token}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                output::error_line(&format!("daemon: no token: {e}"));
                ExitCode::from(1)
            }
        };
    }
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
    let tcp = match tcp::listen(&config.daemon).await {
        Ok(tcp) => tcp,
        Err(why) => {
            socket::release(&path);
            output::error_line(&format!("daemon: {why}"));
            return ExitCode::from(1);
        }
    };
    let gateway = match &config.gateway.listen {
        None => None,
        Some(addr) => match super::serve::listen(addr).await {
            Ok(ready) => Some(ready),
            Err(why) => {
                socket::release(&path);
                output::error_line(&format!("daemon: gateway.listen: {why}"));
                return ExitCode::from(1);
            }
        },
    };
    // Said once, for whoever started it; nobody may be reading (a closed pipe is no error).
    let mut said = format!("listening on {}\n", path.display());
    if let Some(tcp) = &tcp {
        said.push_str(&format!("listening on tls://{}\n", tcp.addr));
    }
    let _ = std::io::Write::write_all(&mut std::io::stdout(), said.as_bytes());
    match daemon::run(config, (listener, tcp, gateway), &path, super::stop_asked()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            socket::release(&path);
            output::error_line(&format!("daemon: {why}"));
            ExitCode::from(1)
        }
    }
}
