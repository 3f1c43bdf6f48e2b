//! Subcommands, one file each, and what they share: loading the config (exit 2 on error) and
//! the JSON shapes of reports and tools (README "JSON shapes").

pub mod asks;
pub mod call;
pub mod check;
pub mod conformance;
pub mod demo_faults;
pub mod demo_server;
pub mod events;
pub mod output;
pub mod prompts;
pub mod resources;
pub mod tools;
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

/// Finds and loads the config; on failure prints `file:line:col: message` and gives exit 2.
pub fn load_config(explicit: Option<&Path>) -> Result<Config, ExitCode> {
    let loaded = config::resolve_path(explicit).and_then(|path| config::load(&path));
    loaded.map_err(|err| {
        output::error_line(&err.to_string());
        ExitCode::from(EXIT_CONFIG)
    })
}
