//! `export --for HOST`, the inverse of `import`: each host's snippet read back by `import` (the
//! parser of that host's format) gives the gateway's own command line; the Claude Desktop
//! snippet's command, run by a real host (the Python SDK client), serves the config's tools;
//! the HTTP snippets name the token by an environment reference, never the token.

mod common;
mod peers;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};

fn export(config: &Path, state: &Path, args: &[&str]) -> String {
    let out = Command::new(bin())
        .arg("--config")
        .arg(config)
        .arg("--log-file")
        .arg(state.join("export.log"))
        .arg("export")
        .args(args)
        .env("XDG_STATE_HOME", state)
        .stdin(Stdio::null())
        .output()
        .expect("run export");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn each_hosts_snippet_reads_back_as_the_gateways_command_and_runs() {
    let m = marker("export");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = dir.path().join("aimon.yaml");
    std::fs::write(
        &config,
        format!(
            "mcp:\n  servers:\n    - name: notes\n      command: {}\n      args: [demo-server]\n      env: {{AIMON_TEST_MARKER: {m}}}\n      annotation_trust: trust\n",
            bin()
        ),
    )
    .unwrap();
    let expected_args = format!("args: [--config, {}, serve, --stdio]", config.display());
    for (host, file, format) in [
        (
            "claude-desktop",
            "claude_desktop_config.json",
            "claude-desktop",
        ),
        ("cursor", "mcp.json", "claude-desktop"),
        ("claude-code", ".mcp.json", "claude-code"),
        ("vscode", "mcp.json", "vscode"),
        ("codex", "config.toml", "codex"),
    ] {
        let snippet = export(&config, &state, &["--for", host]);
        let path = dir.path().join(host).join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &snippet).unwrap();
        let out = run(
            &["import", path.to_str().unwrap(), "--format", format],
            Some(&config),
        );
        let imported = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{host}: {out:?}");
        assert!(imported.contains("- name: aimon"), "{host}: {imported}");
        assert!(
            imported.contains(&format!("command: {}", bin())),
            "{host}: {imported}"
        );
        assert!(
            imported.contains(&expected_args),
            "{host}: {imported}\n{snippet}"
        );
    }

    // The Claude Desktop snippet's command, as a host runs it.
    let desktop: Value =
        serde_json::from_str(&export(&config, &state, &["--for", "claude-desktop"])).unwrap();
    let server = &desktop["mcpServers"]["aimon"];
    let mut target = vec![server["command"].as_str().unwrap().to_string()];
    target.extend(
        server["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    let calls = json!([["notes__echo", {"text": "exported"}]]);
    let out = Command::new(peers::sdk())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/hosts/sdk_host.py"
        ))
        .arg(calls.to_string())
        .args(&target)
        .env("XDG_STATE_HOME", &state)
        .stdin(Stdio::null())
        .output()
        .expect("run the SDK host");
    assert!(out.status.success(), "{out:?}");
    let seen: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        seen["calls"][0],
        json!({"is_error": false, "text": "exported"})
    );
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}

#[test]
fn an_http_snippet_names_the_token_and_never_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = write_config("mcp:\n  servers: []\n");
    // A token exists: it must not leak into any snippet.
    let token = {
        let out = Command::new(bin())
            .arg("gateway-token")
            .env("XDG_STATE_HOME", &state)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let url = "http://127.0.0.1:7777/mcp";
    for (host, reference) in [
        ("claude-code", "Bearer ${AIMON_GATEWAY_TOKEN}"),
        ("vscode", "Bearer ${env:AIMON_GATEWAY_TOKEN}"),
        ("cursor", "Bearer ${env:AIMON_GATEWAY_TOKEN}"),
        ("codex", "bearer_token_env_var = \"AIMON_GATEWAY_TOKEN\""),
    ] {
        let snippet = export(&config.path, &state, &["--for", host, "--http", url]);
        assert!(snippet.contains(url), "{host}: {snippet}");
        assert!(snippet.contains(reference), "{host}: {snippet}");
        assert!(
            !snippet.contains(&token),
            "{host}: the token itself: {snippet}"
        );
    }
    // Claude Desktop's file starts its servers: it says so instead of writing a URL.
    let out = Command::new(bin())
        .arg("--config")
        .arg(&config.path)
        .args(["export", "--for", "claude-desktop", "--http", url])
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("leave out --http"));
}
