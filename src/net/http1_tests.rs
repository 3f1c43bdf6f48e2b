use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use http_body_util::{BodyExt, BodyStream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

/// A server answering each request (a head and the 2-byte body `{}`) with `{"a":1}`, counting
/// its connections. `keep`: connections stay open for more requests; else each is closed after
/// one answer (without saying so in a header, as a server's idle timeout does). `hold_first`:
/// the very first request gets a chunked answer whose body never ends (a long streamed answer).
async fn server(keep: bool, hold_first: bool) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    while !request.ends_with(b"\r\n\r\n{}") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    request.clear();
                    if first && hold_first {
                        let _ = socket
                            .write_all(
                                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n",
                            )
                            .await;
                        std::future::pending::<()>().await;
                    }
                    // The answer's head and body as two writes, so that a request never finds
                    // them in one read by chance.
                    let _ = socket
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\n")
                        .await;
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    let _ = socket.write_all(b"{\"a\":1}").await;
                    if !keep {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{address}/v1/chat/completions"), connections)
}

fn origin(url: &str) -> Origin {
    Origin::for_url(url, Duration::from_secs(5)).expect("a plain-HTTP origin")
}

async fn post(origin: &Origin) -> Result<http::Response<Incoming>, SendError> {
    origin
        .send(Method::POST, HeaderMap::new(), Bytes::from_static(b"{}"))
        .await
}

async fn body(response: http::Response<Incoming>) -> Vec<u8> {
    response
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec()
}

#[tokio::test]
async fn a_connection_the_server_closed_while_idle_is_made_again() {
    let (url, connections) = server(false, false).await;
    let origin = origin(&url);
    for _ in 0..3 {
        let response = post(&origin).await.unwrap();
        assert_eq!(response.status(), http::StatusCode::OK);
        assert_eq!(body(response).await, b"{\"a\":1}");
        // The server closes the connection; the client sees it before the next request.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(connections.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_request_does_not_wait_behind_another_answers_body() {
    let (url, connections) = server(true, true).await;
    let origin = origin(&url);
    // The first answer's head has come; its body goes on (never ends here).
    let streaming = post(&origin).await.unwrap();
    let second = tokio::time::timeout(Duration::from_secs(5), post(&origin))
        .await
        .expect("the second request waited behind the first answer's body")
        .unwrap();
    assert_eq!(body(second).await, b"{\"a\":1}");
    assert_eq!(connections.load(Ordering::SeqCst), 2);
    // The busy connection was kept: a third request after the second reuses the second's.
    let third = post(&origin).await.unwrap();
    assert_eq!(body(third).await, b"{\"a\":1}");
    assert_eq!(connections.load(Ordering::SeqCst), 2);
    drop(streaming);
}

#[tokio::test]
async fn requests_one_after_another_keep_one_connection() {
    let (url, connections) = server(true, false).await;
    let origin = origin(&url);
    for _ in 0..5 {
        let response = post(&origin).await.unwrap();
        assert_eq!(body(response).await, b"{\"a\":1}");
    }
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_connection_unused_past_the_idle_timeout_is_not_used_again() {
    let (url, connections) = server(true, false).await;
    let mut origin = origin(&url);
    origin.idle_timeout = Duration::from_millis(200);
    for pause in [0, 0, 400, 0] {
        tokio::time::sleep(Duration::from_millis(pause)).await;
        let response = post(&origin).await.unwrap();
        assert_eq!(body(response).await, b"{\"a\":1}");
    }
    // The server kept the first connection open; the client let it go after the pause.
    assert_eq!(connections.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn requests_at_once_keep_their_connections_for_the_next_ones() {
    let (url, connections) = server(true, false).await;
    let origin = origin(&url);
    for _ in 0..5 {
        let bodies = futures::future::join_all((0..4).map(|_| async {
            let response = post(&origin).await.unwrap();
            body(response).await
        }))
        .await;
        assert!(bodies.iter().all(|b| b == b"{\"a\":1}"), "{bodies:?}");
    }
    // Four at a time, five times: four connections, each used again (one per request
    // would be twenty).
    assert_eq!(connections.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_streamed_body_arrives_in_its_pieces() {
    let (url, _) = server(true, true).await;
    let origin = origin(&url);
    let response = post(&origin).await.unwrap();
    let mut frames = BodyStream::new(response.into_body());
    let first = frames.next().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(&first[..], b"{}");
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = free.local_addr().unwrap();
    drop(free);
    let origin = origin(&format!("http://{address}/v1"));
    let error = post(&origin).await.expect_err("nothing listens there");
    assert!(error.connect && !error.timeout, "{error:?}");
    let io = error.cause.downcast_ref::<std::io::Error>().expect("io");
    assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused);
}

#[test]
fn https_proxied_and_user_urls_are_left_to_reqwest() {
    let none = Matcher::builder().build();
    let timeout = Duration::from_secs(1);
    let way = |url: &str, proxies: &Matcher| Origin::with_proxies(url, timeout, Some(proxies));
    assert!(way("http://127.0.0.1:8/mcp", &none).is_some());
    assert!(way("https://example.invalid/v1", &none).is_none());
    assert!(way("http://u:p@127.0.0.1:8/mcp", &none).is_none());
    let proxied = Matcher::builder()
        .http("http://proxy.example:3128")
        .no("localhost")
        .build();
    assert!(way("http://models.example/v1", &proxied).is_none());
    assert!(way("http://localhost:8080/v1", &proxied).is_some());
    // Read without proxy settings (the model client's way to a local server).
    assert!(Origin::with_proxies("http://models.example/v1", timeout, None).is_some());
}
