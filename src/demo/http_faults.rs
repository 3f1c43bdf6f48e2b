//! HTTP faults of `demo-server --http` below HTTP itself: a server that reads a request and
//! never answers, one that hangs up (or resets the connection) in the middle of its answer,
//! one that answers with something that is not HTTP. They exist for the fault matrix (tests/faults.rs).
//!
//! A plain accept loop over raw sockets, not hyper: hyper always answers well-formed HTTP, and
//! these faults are exactly what it would never do.

use std::io;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the listener does to every connection instead of serving MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketFault {
    /// Read requests and never answer; the connection stays open until the client closes it.
    Hang,
    /// Answer the first request with a 200 whose headers promise a JSON body, write part of
    /// it, then close the connection.
    HangUpMidAnswer,
    /// The same answer cut short, then the connection reset (RST: a zero linger), as a server
    /// that crashes mid-answer or a proxy that cuts it leaves it.
    ResetMidAnswer,
    /// Answer the first request with a line that is not HTTP, then close the connection.
    NotHttp,
}

/// The head of the `HangUpMidAnswer` answer: its `content-length` is more than is ever sent.
const PROMISING_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 4096\r\n\r\n";
/// The part of the body that `HangUpMidAnswer` does send.
const PARTIAL_BODY: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVers"#;
/// What `NotHttp` answers.
const NOT_HTTP: &str = "this is not an HTTP server\r\n";

/// Apply `fault` to every connection on `listener` until the process ends.
pub async fn serve_socket_fault(listener: TcpListener, fault: SocketFault) -> io::Result<()> {
    loop {
        let (stream, peer) = listener.accept().await?;
        tokio::spawn(async move {
            if let Err(error) = misbehave(stream, fault).await {
                tracing::debug!(%peer, %error, "demo server: faulty connection ended with an error");
            }
        });
    }
}

async fn misbehave(mut stream: TcpStream, fault: SocketFault) -> io::Result<()> {
    let mut buf = vec![0_u8; 8192];
    let answer = match fault {
        SocketFault::Hang => {
            while stream.read(&mut buf).await? != 0 {}
            return Ok(());
        }
        SocketFault::HangUpMidAnswer | SocketFault::ResetMidAnswer => {
            format!("{PROMISING_HEAD}{PARTIAL_BODY}")
        }
        SocketFault::NotHttp => NOT_HTTP.to_string(),
    };
    // The whole request is read first: closing a socket with unread input sends a reset, and
    // the client would see "connection reset" instead of the fault meant.
    if !read_request(&mut stream, &mut buf).await? {
        return Ok(());
    }
    stream.write_all(answer.as_bytes()).await?;
    if fault == SocketFault::ResetMidAnswer {
        // Let the client read what was sent first: a reset discards what it has not read.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        // Dropped with a zero linger, the socket ends with a reset.
        return stream.set_zero_linger();
    }
    stream.shutdown().await
}

/// Reads one HTTP/1.1 request (head and a `content-length` body); `false` if the connection
/// ended first.
async fn read_request(stream: &mut TcpStream, buf: &mut [u8]) -> io::Result<bool> {
    let mut seen = Vec::new();
    loop {
        if let Some(end) = head_end(&seen) {
            let wanted = end + content_length(&seen[..end]);
            if seen.len() >= wanted {
                return Ok(true);
            }
        }
        let n = stream.read(buf).await?;
        if n == 0 {
            return Ok(false);
        }
        seen.extend_from_slice(&buf[..n]);
    }
}

/// Where the head ends (just past the blank line), if it has.
fn head_end(bytes: &[u8]) -> Option<usize> {
    bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|at| at + 4)
}

/// The `content-length` of a request head; 0 without one.
fn content_length(head: &[u8]) -> usize {
    String::from_utf8_lossy(head)
        .lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_head_gives_its_end_and_body_length() {
        let request = b"POST /mcp HTTP/1.1\r\nContent-Length: 12\r\nhost: x\r\n\r\n{\"a\":1}";
        let end = head_end(request).expect("a complete head");
        assert_eq!(&request[end..], b"{\"a\":1}");
        assert_eq!(content_length(&request[..end]), 12);
        assert_eq!(content_length(b"GET / HTTP/1.1\r\n\r\n"), 0);
        assert_eq!(head_end(b"POST /mcp HTTP/1.1\r\nhost: x\r\n"), None);
    }
}
