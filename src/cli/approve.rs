//! The y/N question `call` and `run` ask on the terminal for a call that needs approval, and
//! its answer (`--yes`, or a refusal when there is no terminal to ask on). Reading the
//! terminal is the one thing there that blocks: here it gives way to a cancel (Ctrl-C).

use std::io::{IsTerminal, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::approval::{AnsweredBy, ApprovalDecision, ApprovalRequest, CallOrigin};
use crate::cli::output::safe_text;

/// How often the read of the answer looks whether the run was cancelled.
const CANCEL_POLL: Duration = Duration::from_millis(50);
/// The longest answer read (a paste into the prompt is cut there).
const ANSWER_MAX: usize = 4_096;

/// Answers one approval request: `--yes`, else y/N on the terminal, else refuse (the model
/// is told that nobody could be asked). A cancel of the run (Ctrl-C) while the question is
/// asked ends the wait at once: the request is dropped unanswered (the call is being
/// cancelled anyway) and the reading thread stops.
pub async fn answer(request: ApprovalRequest, yes: bool, cancel: &CancellationToken) {
    if yes {
        request.respond_by(ApprovalDecision::AllowOnce, AnsweredBy::YesFlag);
        return;
    }
    // Nobody to ask: refused; the tool's result line (and the model) say why.
    if !std::io::stdin().is_terminal() {
        request.respond_by(ApprovalDecision::Deny, AnsweredBy::NoTerminal);
        return;
    }
    // An agent's call says so, and what the model wrote before it (its reason).
    let (asks, reason) = match &request.origin {
        CallOrigin::Agent { reason } if !reason.trim().is_empty() => (
            "\nthe agent asks: ".to_string(),
            format!(
                "the agent says: {}\n",
                crate::text::sanitize_line(reason, 300)
            ),
        ),
        CallOrigin::Agent { .. } => ("\nthe agent asks: ".to_string(), String::new()),
        CallOrigin::Host { name, version } => (
            format!(
                "\nthe host {} asks: ",
                safe_text(format!("{name} {version}").trim())
            ),
            String::new(),
        ),
        CallOrigin::Operator => (String::new(), String::new()),
    };
    // The gate's sentence: what the tool is, why, and what asks.
    let prompt = format!(
        "{asks}{}.\n{}{reason}arguments: {}\nallow this call? [y/N] ",
        safe_text(&request.why),
        request.change.as_ref().map(change_text).unwrap_or_default(),
        safe_text(&request.arguments.to_string()),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let reader_stop = stop.clone();
    let read = tokio::task::spawn_blocking(move || {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(prompt.as_bytes());
        let _ = err.flush();
        drop(err);
        read_line(&reader_stop)
    });
    let line = tokio::select! {
        read = read => read.ok().flatten(),
        () = cancel.cancelled() => {
            stop.store(true, Ordering::Relaxed);
            // The shell's prompt (or the `cancelled` line) starts on a line of its own.
            crate::cli::output::error_line("");
            return;
        }
    };
    let decision = match line.as_deref().map(str::trim) {
        Some("y" | "Y" | "yes") => ApprovalDecision::AllowOnce,
        Some(_) | None => ApprovalDecision::Deny,
    };
    request.respond(decision);
}

/// One line from the terminal on stdin, read without blocking past `stop`: the read waits in
/// `poll` for at most [`CANCEL_POLL`] at a time, so a cancel ends it within that (a plain
/// `read_line` would hold the process until Enter). `None` when stopped, at end of input, or
/// on a read error. The terminal's modes are left as they are (a line at a time, echoed).
fn read_line(stop: &AtomicBool) -> Option<String> {
    let stdin = std::io::stdin();
    let fd = stdin.as_raw_fd();
    let mut line = Vec::new();
    let mut buf = [0u8; 256];
    let timeout = libc::c_int::try_from(CANCEL_POLL.as_millis()).unwrap_or(50);
    while !stop.load(Ordering::Relaxed) {
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, borrowed for the duration of the call.
        let ready = unsafe { libc::poll(&mut poll, 1, timeout) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
        if ready == 0 {
            continue;
        }
        // SAFETY: `buf` is valid for writes of its length for the duration of the call.
        let got = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        let got = match usize::try_from(got) {
            Ok(0) => return (!line.is_empty()).then(|| String::from_utf8_lossy(&line).into()),
            Ok(n) => n,
            Err(_) => {
                if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return None;
            }
        };
        line.extend_from_slice(&buf[..got]);
        if line.contains(&b'\n') || line.len() >= ANSWER_MAX {
            return Some(String::from_utf8_lossy(&line).into_owned());
        }
    }
    None
}

/// What changed since the tool was approved, as diff lines (`- old`, `+ new`).
fn change_text(change: &crate::approval::PinChange) -> String {
    use crate::tool::pin::DiffLine;
    let mut out = format!("changed since {} approved it:\n", safe_text(&change.by));
    for line in &change.diff {
        let (mark, text) = match line {
            DiffLine::Field(field) => ("", format!("{field}:")),
            DiffLine::Removed(text) => ("  - ", safe_text(text)),
            DiffLine::Added(text) => ("  + ", safe_text(text)),
            DiffLine::Same(text) => ("    ", safe_text(text)),
        };
        out.push_str(&format!("{mark}{text}\n"));
    }
    out
}
