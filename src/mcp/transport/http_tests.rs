//! Tests of the HTTP failure classification: statuses, error chains by type, OAuth's
//! verdicts, and when a server counts as gone.

use super::*;

#[test]
fn leading_status_reads_rmcp_wording() {
    assert_eq!(leading_status("HTTP 404 Not Found: nope"), Some(404));
    assert_eq!(leading_status("HTTP 401: x"), Some(401));
    assert_eq!(leading_status("HTTP 4044"), None);
    assert_eq!(leading_status("something else"), None);
}

#[test]
fn authority_hides_user_info_and_path() {
    assert_eq!(
        authority("https://user:pw@example.com/mcp?key=1"),
        "example.com:443"
    );
    assert_eq!(authority("http://127.0.0.1:9/mcp"), "127.0.0.1:9");
    assert_eq!(authority("not a url"), "the server");
}

#[test]
fn statuses_401_and_403_ask_for_credentials() {
    let f = status_failure(401, "h:1");
    assert_eq!(f.class, FailureClass::HttpStatus);
    assert_eq!(f.http_status, Some(401));
    assert!(f.message.contains("credentials"), "{}", f.message);
    assert!(!status_failure(500, "h:1").message.contains("credentials"));
}

#[test]
fn oauth_verdicts_are_needs_login_but_a_final_scope_refusal_is_a_403() {
    use rmcp::transport::auth::AuthError;
    let class = |e: AuthError| {
        let err: StreamableHttpError<reqwest::Error> = StreamableHttpError::Auth(e);
        classify(&err, "h:1").map(|f| (f.class, f.http_status))
    };
    assert_eq!(
        class(AuthError::AuthorizationRequired),
        Some((FailureClass::NeedsLogin, Some(401)))
    );
    assert_eq!(
        class(AuthError::InsufficientScope {
            required_scope: "notes".into(),
            upgrade_url: None
        }),
        Some((FailureClass::NeedsLogin, Some(403)))
    );
    assert_eq!(
        class(AuthError::InvalidScope("still refused".into())),
        Some((FailureClass::HttpStatus, Some(403)))
    );
    assert_eq!(
        class(AuthError::TokenRefreshFailed("down".into())),
        Some((FailureClass::NeedsLogin, None))
    );
}

#[test]
fn chains_are_classified_by_type() {
    let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
    let f = classify(&refused, "h:1").map(|f| f.class);
    assert_eq!(f, Some(FailureClass::ConnectRefused));
    let dns = crate::net::DnsFailure {
        host: "nope.invalid".into(),
        reason: "not known".into(),
    };
    assert_eq!(
        classify(&dns, "h:1").map(|f| f.class),
        Some(FailureClass::DnsError)
    );
    let tls = std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        rustls::Error::General("bad cert".into()),
    );
    assert_eq!(
        classify(&tls, "h:1").map(|f| f.class),
        Some(FailureClass::TlsError)
    );
    let other = std::io::Error::other("odd");
    assert_eq!(classify(&other, "h:1"), None);
}

/// A POST to `url` with a plain reqwest client: the error, if it failed.
async fn post(url: &str) -> Option<reqwest::Error> {
    install_tls_provider();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(500))
        .build()
        .ok()?;
    match client.post(url).body("{}").send().await {
        Ok(response) => response.error_for_status().err(),
        Err(e) => Some(e),
    }
}

#[tokio::test]
async fn a_server_is_gone_when_unreachable_or_hanging_up_not_when_slow_or_erring() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    // Per connection: 1 hangs up without answering, 2 answers 500, 3 never answers.
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((mut socket, _)) = listener.accept().await {
            n += 1;
            let mut buf = [0_u8; 1024];
            let _ = socket.read(&mut buf).await;
            match n {
                1 => drop(socket),
                2 => {
                    let reply = "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n";
                    let _ = socket.write_all(reply.as_bytes()).await;
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
                _ => tokio::time::sleep(Duration::from_secs(5)).await,
            }
        }
    });
    let url = format!("http://{addr}/mcp");
    let hung_up = post(&url).await.expect("a hang-up fails");
    assert!(server_gone(&hung_up), "{hung_up:?}");
    let erring = post(&url).await.expect("a 500 fails");
    assert!(!server_gone(&erring), "{erring:?}");
    let slow = post(&url).await.expect("a timeout fails");
    assert!(!server_gone(&slow), "{slow:?}");
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let refused = post(&format!("http://{free}/mcp")).await.expect("refused");
    assert!(server_gone(&refused), "{refused:?}");
}

#[test]
fn bodies_rmcp_could_not_read_are_said_as_such() {
    type E = StreamableHttpError<reqwest::Error>;
    let too_large = E::ResponseBodyTooLarge {
        max_size: 16 * 1024 * 1024,
    };
    assert_eq!(
        unreadable_answer(&too_large).as_deref(),
        Some("the answer is over the 16 MiB body limit")
    );
    // rmcp's words for a JSON body that is not a message.
    let bad = E::UnexpectedServerResponse(
        "could not parse JSON response as ServerJsonRpcMessage: unrecognized JSON-RPC message: {\"a\":1}".into(),
    );
    assert_eq!(
        unreadable_answer(&bad).as_deref(),
        Some("the answer is not a JSON-RPC message: unrecognized JSON-RPC message: {\"a\":1}")
    );
    let status = E::UnexpectedServerResponse("HTTP 500 Internal Server Error: x".into());
    assert_eq!(unreadable_answer(&status), None);
    assert_eq!(unreadable_answer(&std::io::Error::other("odd")), None);
}
