//! The loopback redirect listener of a login (RFC 8252 §7.3): `http://127.0.0.1:PORT/callback`
//! on an ephemeral port (or the port of the last registration, so a registered redirect URI
//! stays valid), answering the browser's redirect with a page that says to go back to the
//! terminal.
//!
//! A tiny HTTP/1 reader of our own: one GET line and its headers, bounded in size and time;
//! anything else (a favicon request, a stray connection) is answered 404 and waited past.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::LoginError;

/// The path the authorization server redirects to.
pub const CALLBACK_PATH: &str = "/callback";
/// Largest request head read from a connection.
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// A bound redirect listener.
pub struct Callback {
    listener: TcpListener,
    redirect_uri: String,
}

impl Callback {
    /// Binds 127.0.0.1 on `port` when it is free, else on an ephemeral port.
    pub async fn bind(port: Option<u16>) -> Result<Callback, LoginError> {
        let preferred = match port {
            Some(port) => TcpListener::bind(("127.0.0.1", port)).await.ok(),
            None => None,
        };
        let listener = match preferred {
            Some(listener) => listener,
            None => TcpListener::bind(("127.0.0.1", 0))
                .await
                .map_err(LoginError::Listener)?,
        };
        let port = listener.local_addr().map_err(LoginError::Listener)?.port();
        Ok(Callback {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the redirect: the full URL it was called with (holding `code` and `state`, or
    /// `error`). Other requests get 404 and are waited past.
    pub async fn wait(&self) -> Result<String, LoginError> {
        loop {
            let (stream, _) = self.listener.accept().await.map_err(LoginError::Listener)?;
            if let Some(url) = self.serve(stream).await {
                return Ok(url);
            }
        }
    }

    /// Reads one request; answers it; the redirect URL when it was the redirect.
    async fn serve(&self, mut stream: TcpStream) -> Option<String> {
        let target = tokio::time::timeout(READ_TIMEOUT, read_target(&mut stream))
            .await
            .ok()
            .flatten();
        let is_redirect = target.as_deref().is_some_and(|t| {
            let (path, query) = t.split_once('?').unwrap_or((t, ""));
            path == CALLBACK_PATH
                && query
                    .split('&')
                    .any(|kv| kv.starts_with("code=") || kv.starts_with("error="))
        });
        let (status, body) = if is_redirect {
            (
                "200 OK",
                "<!doctype html><title>aimon-console</title><p>aimon-console received the authorization. You can close this tab and go back to the terminal.</p>",
            )
        } else {
            ("404 Not Found", "not found")
        };
        let reply = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(reply.as_bytes()).await;
        let _ = stream.shutdown().await;
        match (is_redirect, target) {
            (true, Some(target)) => {
                let base = self.redirect_uri.trim_end_matches(CALLBACK_PATH);
                Some(format!("{base}{target}"))
            }
            _ => None,
        }
    }
}

/// The request target of a `GET <target> HTTP/1.x` request head.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0_u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|b| *b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?.trim_end();
    let mut parts = line.split(' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("GET"), Some(target), Some(version)) if version.starts_with("HTTP/1.") => {
            target.starts_with('/').then(|| target.to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port_uri: &str, target: &str) -> (String, String) {
        let authority = port_uri
            .trim_start_matches("http://")
            .trim_end_matches(CALLBACK_PATH);
        let mut s = TcpStream::connect(authority).await.expect("connect");
        s.write_all(format!("GET {target} HTTP/1.1\r\nhost: {authority}\r\n\r\n").as_bytes())
            .await
            .expect("write");
        let mut out = String::new();
        s.read_to_string(&mut out).await.expect("read");
        let status = out.lines().next().unwrap_or_default().to_string();
        (status, out)
    }

    #[tokio::test]
    async fn the_redirect_is_taken_and_everything_else_gets_404() {
        let callback = Callback::bind(None).await.expect("bind");
        let uri = callback.redirect_uri().to_string();
        assert!(uri.starts_with("http://127.0.0.1:"), "{uri}");
        let waiting = tokio::spawn(async move { callback.wait().await });
        let (status, _) = get(&uri, "/favicon.ico").await;
        assert!(status.contains("404"), "{status}");
        let (status, _) = get(&uri, "/callback?nothing=here").await;
        assert!(status.contains("404"), "{status}");
        let (status, page) = get(&uri, "/callback?code=abc&state=xyz").await;
        assert!(status.contains("200"), "{status}");
        assert!(page.contains("go back to the terminal"), "{page}");
        let got = waiting.await.expect("join").expect("url");
        assert_eq!(got, format!("{uri}?code=abc&state=xyz"));
    }

    #[tokio::test]
    async fn a_busy_preferred_port_falls_back_to_an_ephemeral_one() {
        let busy = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let port = busy.local_addr().expect("addr").port();
        let callback = Callback::bind(Some(port)).await.expect("bind");
        assert!(!callback.redirect_uri().contains(&format!(":{port}/")));
        drop(busy);
        let again = Callback::bind(Some(port)).await.expect("bind");
        assert_eq!(
            again.redirect_uri(),
            format!("http://127.0.0.1:{port}/callback")
        );
    }
}
