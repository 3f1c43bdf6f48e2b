//! Where the operator API listens: a Unix socket only its owner may use. The socket is made
//! 0600 in a folder of 0700 (`$XDG_RUNTIME_DIR/aimon-console/daemon.sock`, else
//! `/tmp/aimon-console-<uid>/daemon.sock`); a connection from another user is refused even
//! where the permissions would let it in (root), by the peer's credentials.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

/// The socket a daemon listens on and consoles attach to when none is named.
pub fn default_path() -> PathBuf {
    let uid = effective_uid();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("aimon-console"),
        None => std::env::temp_dir().join(format!("aimon-console-{uid}")),
    };
    dir.join("daemon.sock")
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Listens on `path`: its folder made 0700 if missing (and refused when another user owns it
/// or others may enter it), a stale socket of a daemon that is gone removed, the socket 0600.
/// Another daemon still listening there is an error that says so.
pub async fn listen(path: &Path) -> Result<UnixListener, String> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    let shown = path.display();
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    }
    let meta = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if meta.uid() != effective_uid() || meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{} must belong to you and be closed to others (chmod 700), or others could reach the daemon",
            dir.display()
        ));
    }
    if path.exists() {
        if UnixStream::connect(path).await.is_ok() {
            return Err(format!("a daemon already listens on {shown}"));
        }
        std::fs::remove_file(path).map_err(|e| format!("cannot remove the stale {shown}: {e}"))?;
    }
    let listener =
        UnixListener::bind(path).map_err(|e| format!("cannot listen on {shown}: {e}"))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot make {shown} owner-only: {e}"))?;
    Ok(listener)
}

/// The file beside the socket that names the daemon listening there: `PID START`.
fn owner_file(path: &Path) -> PathBuf {
    path.with_extension("owner")
}

/// Takes the socket's place over from the daemon before, if it was killed (its socket
/// stale, which `listen` found): every process its servers left behind is ended, by their
/// mark, and this daemon is named in its stead. Returns the pid before and how many were
/// ended.
pub fn take_over(path: &Path) -> Result<Option<(i32, usize)>, String> {
    let file = owner_file(path);
    let before = std::fs::read_to_string(&file).ok().and_then(|text| {
        let mut words = text.split_whitespace();
        Some((
            words.next()?.parse::<i32>().ok()?,
            words.next()?.parse::<u64>().ok()?,
        ))
    });
    let ended = before.map(|(pid, start)| (pid, crate::runtime::end_leftovers_of(pid, start)));
    let me = format!(
        "{} {}\n",
        std::process::id(),
        crate::runtime::process_start().unwrap_or(0)
    );
    std::fs::write(&file, me).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(ended)
}

/// This daemon no longer listens there.
pub fn release(path: &Path) {
    let _ = std::fs::remove_file(owner_file(path));
    let _ = std::fs::remove_file(path);
}

/// The peer of a connection, when it is this user: its pid. Another user's is refused.
pub fn peer(stream: &UnixStream) -> io::Result<Option<i32>> {
    let cred = stream.peer_cred()?;
    if cred.uid() != effective_uid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("uid {} is not the daemon's owner", cred.uid()),
        ));
    }
    Ok(cred.pid())
}
