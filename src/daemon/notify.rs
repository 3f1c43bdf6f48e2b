//! systemd's readiness protocol (`sd_notify`), for `Type=notify` units: `READY=1` once the
//! socket listens and the runtime is built, `STOPPING=1` when a stop begins. A datagram to
//! `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace); nothing when it is unset.

use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixDatagram};

/// Tells systemd `state` (`READY=1`, `STOPPING=1`); a failure is logged, never fatal.
pub fn notify(state: &str) {
    let Some(target) = std::env::var_os("NOTIFY_SOCKET").filter(|s| !s.is_empty()) else {
        return;
    };
    let target = target.to_string_lossy().into_owned();
    let sent = (|| -> std::io::Result<()> {
        let socket = UnixDatagram::unbound()?;
        let addr = match target.strip_prefix('@') {
            Some(name) => SocketAddr::from_abstract_name(name.as_bytes())?,
            None => SocketAddr::from_pathname(&target)?,
        };
        let message = format!("{state}\nMAINPID={}", std::process::id());
        socket.send_to_addr(message.as_bytes(), &addr)?;
        Ok(())
    })();
    if let Err(e) = sent {
        tracing::warn!(error = %e, state, "cannot tell systemd");
    }
}
