//! Tests of the `oauth:` block: every key, the rules between keys (each a located error), and
//! that no secret shows in Debug output.

use std::path::Path;

use super::*;
use crate::config::{load_str, Config, ConfigError};

fn env(name: &str) -> Option<String> {
    match name {
        "SECRET" => Some("s3cr3t-value".to_string()),
        "IDTOKEN" => Some("eyJ.id-token.sig".to_string()),
        "PEM" => Some("-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----".to_string()),
        _ => None,
    }
}

/// A config with one streamable_http server whose `oauth:` block is `block` (indented by the
/// caller as the lines under `oauth:`).
fn load(block: &str) -> Result<Config, ConfigError> {
    let text = format!(
        "mcp:\n  servers:\n    - name: r\n      transport: streamable_http\n      url: https://h/mcp\n      oauth:\n{block}"
    );
    load_str(Path::new("/etc/aimon/cfg.yaml"), &text, &env)
}

fn oauth(block: &str) -> OAuthConfig {
    let config = load(block).unwrap_or_else(|e| panic!("loads: {e}"));
    config.mcp.servers[0].oauth.clone().expect("an oauth block")
}

#[test]
fn an_empty_block_is_the_interactive_default() {
    let o = oauth("        {}\n");
    assert_eq!(o, OAuthConfig::default());
    assert_eq!(o.grant, OAuthGrant::AuthorizationCode);
    assert!(!o.grant.is_unattended());
}

#[test]
fn every_key_is_read_and_secrets_never_show() {
    let o = oauth(
        "        client_id: pre-registered\n        client_secret: ${SECRET}\n        \
         scopes: [read, write]\n        client_metadata_url: https://example.com/aimon/client.json\n",
    );
    assert_eq!(o.client_id.as_deref(), Some("pre-registered"));
    assert_eq!(o.client_secret.as_deref(), Some("s3cr3t-value"));
    assert_eq!(o.scopes, vec!["read", "write"]);
    let shown = format!("{o:?}");
    assert!(!shown.contains("s3cr3t"), "{shown}");
    assert!(
        shown.contains("<redacted>") && shown.contains("pre-registered"),
        "{shown}"
    );

    let o = oauth(
        "        grant: client_credentials\n        client_id: bot\n        private_key: ${PEM}\n        signing_algorithm: ES256\n",
    );
    assert_eq!(o.grant, OAuthGrant::ClientCredentials);
    assert!(matches!(o.private_key, Some(PrivateKey::Pem(_))));
    assert_eq!(o.signing_algorithm, Some(SigningAlgorithm::ES256));
    assert!(!format!("{o:?}").contains("BEGIN"), "{o:?}");

    let o = oauth(
        "        grant: cross_app_access\n        client_id: c\n        client_secret: ${SECRET}\n        \
         idp: {issuer: https://idp.example, token_endpoint: https://idp.example/token, client_id: i, id_token: \"${IDTOKEN}\"}\n",
    );
    let idp = o.idp.as_ref().expect("idp");
    assert_eq!(idp.id_token, "eyJ.id-token.sig");
    let shown = format!("{o:?}");
    assert!(
        !shown.contains("id-token") && !shown.contains("s3cr3t"),
        "{shown}"
    );
}

#[test]
fn a_workload_identity_token_is_given_or_read_from_a_file_and_never_shows() {
    let o = oauth(
        "        grant: workload_identity\n        client_id: w\n        assertion: ${IDTOKEN}\n",
    );
    assert_eq!(o.grant, OAuthGrant::WorkloadIdentity);
    assert!(o.grant.is_unattended());
    assert_eq!(
        o.assertion,
        Some(Assertion::Token("eyJ.id-token.sig".into()))
    );
    assert!(!format!("{o:?}").contains("id-token"), "{o:?}");

    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("token"), "eyJ.file.sig").expect("write token");
    let text = "mcp:\n  servers:\n    - name: r\n      transport: streamable_http\n      url: https://h/mcp\n      \
                oauth: {grant: workload_identity, client_id: w, assertion_file: token}\n";
    let config = load_str(&dir.path().join("aimon.yaml"), text, &env).expect("loads");
    let o = config.mcp.servers[0].oauth.clone().expect("oauth");
    assert_eq!(o.assertion, Some(Assertion::File(dir.path().join("token"))));
    let missing = text.replace("assertion_file: token", "assertion_file: nope");
    let err = load_str(&dir.path().join("aimon.yaml"), &missing, &env).expect_err("missing file");
    assert!(err.to_string().contains("not a readable file"), "{err}");
}

#[test]
fn a_key_file_is_relative_to_the_config_folder_and_must_exist() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("key.pem"), "pem").expect("write key");
    let text = "mcp:\n  servers:\n    - name: r\n      transport: streamable_http\n      url: https://h/mcp\n      \
                oauth: {grant: client_credentials, client_id: bot, key_file: key.pem}\n";
    let config = load_str(&dir.path().join("aimon.yaml"), text, &env).expect("loads");
    let o = config.mcp.servers[0].oauth.clone().expect("oauth");
    assert_eq!(
        o.private_key,
        Some(PrivateKey::File(dir.path().join("key.pem")))
    );
    let missing = text.replace("key.pem", "nope.pem");
    let err = load_str(&dir.path().join("aimon.yaml"), &missing, &env).expect_err("missing key");
    assert!(err.to_string().contains(":6:"), "{err}");
    assert!(err.to_string().contains("not a readable file"), "{err}");
}

#[test]
fn rules_between_keys_are_located_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "        client_secret: ${SECRET}\n",
            "/etc/aimon/cfg.yaml:7:24: server \"r\": oauth.client_secret needs oauth.client_id (the client it belongs to)",
        ),
        (
            "        grant: client_credentials\n",
            "/etc/aimon/cfg.yaml:7:16: server \"r\": `grant: client_credentials` needs oauth.client_id",
        ),
        (
            "        grant: client_credentials\n        client_id: bot\n",
            "/etc/aimon/cfg.yaml:7:16: server \"r\": `grant: client_credentials` needs exactly one of oauth.client_secret, oauth.key_file or oauth.private_key",
        ),
        (
            "        client_id: c\n        private_key: ${PEM}\n",
            "/etc/aimon/cfg.yaml:8:22: server \"r\": a private key is for `grant: client_credentials` (private_key_jwt), not authorization_code",
        ),
        (
            "        grant: cross_app_access\n        client_id: c\n",
            "/etc/aimon/cfg.yaml:7:16: server \"r\": `grant: cross_app_access` needs oauth.client_id (at the server's authorization server) and oauth.idp",
        ),
        (
            "        grant: workload_identity\n        assertion: ${IDTOKEN}\n",
            "/etc/aimon/cfg.yaml:7:16: server \"r\": `grant: workload_identity` needs oauth.client_id",
        ),
        (
            "        grant: workload_identity\n        client_id: w\n",
            "/etc/aimon/cfg.yaml:7:16: server \"r\": `grant: workload_identity` needs oauth.assertion or oauth.assertion_file (the workload's identity token)",
        ),
        (
            "        client_id: c\n        assertion: ${IDTOKEN}\n",
            "/etc/aimon/cfg.yaml:8:20: server \"r\": oauth.assertion is for `grant: workload_identity`, not authorization_code",
        ),
        (
            "        assertion: ${IDTOKEN}\n        assertion_file: /token\n",
            "/etc/aimon/cfg.yaml:7:20: server \"r\": give oauth.assertion or oauth.assertion_file, not both",
        ),
        (
            "        client_metadata_url: http://example.com/c.json\n",
            "/etc/aimon/cfg.yaml:7:30: server \"r\": oauth.client_metadata_url \"http://example.com/c.json\" must be an https URL with a path",
        ),
        (
            "        scopes: [\"a b\"]\n",
            "/etc/aimon/cfg.yaml:7:18: scope \"a b\" must be one non-empty word (no spaces or quotes)",
        ),
        (
            "        signing_algorithm: ES256\n",
            "/etc/aimon/cfg.yaml:7:28: server \"r\": oauth.signing_algorithm needs oauth.key_file or oauth.private_key",
        ),
    ];
    for (block, expected) in cases {
        let err = load(block).expect_err(block);
        assert_eq!(err.to_string(), *expected, "{block}");
        assert!(!err.to_string().contains("s3cr3t"), "{err}");
    }
    // Schema errors (unknown keys, bad grant) come from the decoder, located too.
    let err = load("        grant: password\n").expect_err("bad grant");
    assert!(
        err.to_string().starts_with("/etc/aimon/cfg.yaml:7:"),
        "{err}"
    );
    let err = load("        clientid: x\n").expect_err("unknown key");
    assert!(
        err.to_string()
            .ends_with("oauth: unknown key `clientid` (did you mean `client_id`?)"),
        "{err}"
    );
}

#[test]
fn oauth_is_for_streamable_http_without_a_static_token() {
    let sse = "mcp:\n  servers:\n    - name: r\n      transport: sse\n      url: https://h/sse\n      oauth: {}\n";
    let err = load_str(Path::new("/c.yaml"), sse, &env).expect_err("sse");
    assert_eq!(
        err.to_string(),
        "/c.yaml:6:7: server \"r\" uses transport sse but sets `oauth`, which only streamable_http servers use"
    );
    let both = "mcp:\n  servers:\n    - name: r\n      transport: streamable_http\n      url: https://h/mcp\n      bearer_token: t\n      oauth: {}\n";
    let err = load_str(Path::new("/c.yaml"), both, &env).expect_err("both");
    assert!(err.to_string().starts_with("/c.yaml:7:7: "), "{err}");
    let stdio = "mcp:\n  servers:\n    - name: r\n      command: x\n      oauth: {}\n";
    let err = load_str(Path::new("/c.yaml"), stdio, &env).expect_err("stdio");
    assert!(
        err.to_string()
            .contains("which only streamable_http and sse servers use"),
        "{err}"
    );
}
