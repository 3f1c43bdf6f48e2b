//! `sandbox:` of a stdio server, and `policy.bash_sandbox` of the local `bash` tool: what the
//! process may read and write, and whether it may open TCP connections. Read and checked here;
//! applied (with Linux Landlock, in the child before it runs its program) by `src/sandbox.rs`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::context::Context;
use super::spans::{child_path, index_path};
use super::values::relative_to;

/// What a sandboxed process may do. Paths are absolute (a relative one is taken from the config
/// file's folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    /// The folders and files it may read, besides the system's (`/usr`, `/lib*`, `/bin`,
    /// `/etc`, `/dev`, `/proc`, `/sys`, `/opt`, its command's folder); `None`: everything.
    pub read: Option<Vec<PathBuf>>,
    /// The folders (and all below them) it may write to; nothing else but `/dev/null`.
    pub write: Vec<PathBuf>,
    /// Whether it may open TCP connections and listen on ports.
    pub network: bool,
    /// Refuse to start it when the sandbox cannot be applied (no Landlock, or too old a
    /// kernel), rather than run it without.
    pub required: bool,
}

impl Default for SandboxConfig {
    /// The local `bash` tool's default: it writes only under the working directory.
    fn default() -> SandboxConfig {
        SandboxConfig {
            read: None,
            write: std::env::current_dir().into_iter().collect(),
            network: true,
            required: false,
        }
    }
}

/// `sandbox:` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `read`, `write`, `network` and `required`"
)]
pub(super) struct RawSandbox {
    #[serde(default)]
    read: Option<Vec<String>>,
    #[serde(default)]
    write: Option<Vec<String>>,
    #[serde(default)]
    network: Option<bool>,
    #[serde(default)]
    required: Option<bool>,
}

/// The sandbox at `node`, its paths expanded (`${VAR}`, a leading `~/`) and made absolute from
/// `base`; `None` with the errors recorded.
pub(super) fn sandbox(
    cx: &Context<'_>,
    node: &str,
    raw: RawSandbox,
    base: &Path,
) -> Option<SandboxConfig> {
    let mut ok = true;
    let mut paths = |key: &str, list: Vec<String>| -> Vec<PathBuf> {
        let list_node = child_path(node, key);
        list.iter()
            .enumerate()
            .filter_map(|(i, path)| {
                let path = cx.keep(cx.expand(&index_path(&list_node, i), path));
                ok &= path.is_some();
                path.map(|p| relative_to(base, &home(&p)))
            })
            .collect()
    };
    let read = raw.read.map(|list| paths("read", list));
    let write = paths("write", raw.write.unwrap_or_default());
    ok.then_some(SandboxConfig {
        read,
        write,
        network: raw.network.unwrap_or(true),
        required: raw.required.unwrap_or(false),
    })
}

/// `~/x` as under the home folder.
fn home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}
