//! `import` end to end, one test per format (Claude Desktop, Claude Code's `.mcp.json`, VS Code's
//! `mcp.json`, Codex's `config.toml`): a sample file whose servers are the demo server (over
//! stdio, and over Streamable HTTP where the format has it) is imported with `--write`, and
//! `check` then starts every server of the resulting config.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::*;
use serde_json::Value;

/// Runs the binary with `args` and extra environment variables.
fn run_env(args: &[&str], config: &Path, env: &[(&str, &str)]) -> Output {
    let log = run_log();
    Command::new(bin())
        .arg("--config")
        .arg(config)
        .arg("--log-file")
        .arg(log)
        .args(args)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run aimon-console")
}

/// Imports `file` into `config` with `--write`; returns what it printed on stdout and stderr.
fn import_write(file: &Path, config: &Path) -> (String, String) {
    let out = run_env(
        &["import", &file.display().to_string(), "--write"],
        config,
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// `check --json` with `env`: every server ready, exit 0; the report.
fn check_all_ready(config: &Path, env: &[(&str, &str)]) -> Value {
    let out = run_env(&["check", "--json"], config, env);
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}): {text}\n{}\n---config\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(config).unwrap_or_default()
        )
    });
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    for s in report["servers"].as_array().expect("servers") {
        assert_eq!(s["status"], "ready", "{s:#}");
    }
    report
}

fn names(report: &Value) -> Vec<String> {
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn claude_desktop_config_into_an_existing_config() {
    let m = marker("import-claude");
    let cfg = write_config(&format!(
        "# my servers\nmcp:\n  servers:\n{}policy:\n  approval: ask_all   # keep\n",
        demo_server("files", &[], "", &m)
    ));
    let before = std::fs::read_to_string(&cfg.path).unwrap();
    let file = cfg.dir.path().join("claude_desktop_config.json");
    std::fs::write(
        &file,
        format!(
            r#"{{
  "mcpServers": {{
    "Demo Notes": {{"command": "{bin}", "args": ["demo-server", "--stderr", "notes"], "env": {{"AIMON_TEST_MARKER": "{m}"}}}},
    "files": {{"command": "{bin}", "args": ["demo-server", "--stderr", "${{not a var}}"], "env": {{"AIMON_TEST_MARKER": "{m}"}}, "alwaysAllow": ["echo"]}}
  }},
  "globalShortcut": ""
}}"#,
            bin = bin()
        ),
    )
    .unwrap();
    let (printed, said) = import_write(&file, &cfg.path);
    assert!(
        printed.contains("    # renamed \"Demo Notes\" to demo-notes"),
        "{printed}"
    );
    assert!(printed.contains("    - name: files-2\n"), "{printed}");
    assert!(printed.contains("$${not a var}"), "{printed}");
    assert!(
        said.contains("2 servers from") && said.contains("(Claude Desktop): demo-notes, files-2"),
        "{said}"
    );
    // What was there is there, byte for byte, and the import follows the last server.
    let after = std::fs::read_to_string(&cfg.path).unwrap();
    let (head, tail) = before.split_at(before.find("policy:").unwrap());
    assert_eq!(after, format!("{head}{printed}{tail}"));
    let report = check_all_ready(&cfg.path, &[]);
    assert_eq!(names(&report), ["files", "demo-notes", "files-2"]);
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn claude_code_mcp_json_with_stdio_and_http() {
    let m = marker("import-mcpjson");
    let (_http, url) = demo_http_at("127.0.0.1:0", &[], None);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(".mcp.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"mcpServers": {{
  "local": {{"type": "stdio", "command": "{bin}", "args": ["demo-server"], "env": {{"AIMON_TEST_MARKER": "${{MARK:-none}}"}}}},
  "remote": {{"type": "http", "url": "{url}", "headers": {{"X-Team": "${{TEAM}}"}}}}
}}}}"#,
            bin = bin()
        ),
    )
    .unwrap();
    // No config yet: --config names the file to create.
    let config = dir.path().join("aimon.yaml");
    let (printed, said) = import_write(&file, &config);
    assert!(said.contains("`provider: anthropic`"), "{said}");
    assert!(printed.starts_with("mcp:\n  servers:\n"), "{printed}");
    assert!(printed.contains("AIMON_TEST_MARKER: ${MARK}"), "{printed}");
    assert!(printed.contains("there are no defaults here"), "{printed}");
    assert!(printed.contains("transport: streamable_http"), "{printed}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), printed);
    let report = check_all_ready(&config, &[("MARK", &m), ("TEAM", "ops")]);
    assert_eq!(names(&report), ["local", "remote"]);
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn vscode_mcp_json_with_inputs_and_workspace_folder() {
    let m = marker("import-vscode");
    let (_http, url) = demo_http_at("127.0.0.1:0", &[], None);
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".vscode")).unwrap();
    std::fs::create_dir(workspace.path().join("sub")).unwrap();
    let file = workspace.path().join(".vscode/mcp.json");
    std::fs::write(
        &file,
        format!(
            r#"{{
  // The marker is asked for, as a secret would be.
  "inputs": [
    {{"type": "promptString", "id": "test-marker", "description": "Test marker", "password": true}},
  ],
  "servers": {{
    "Notes": {{
      "type": "stdio",
      "command": "{bin}",
      "args": ["demo-server"],
      "cwd": "${{workspaceFolder}}/sub",
      "env": {{"AIMON_TEST_MARKER": "${{input:test-marker}}"}},
    }},
    "web": {{"type": "http", "url": "{url}"}}, /* trailing comma above and here */
  }},
}}"#,
            bin = bin()
        ),
    )
    .unwrap();
    let cfg = write_config("mcp:\n  servers: []   # none yet\n");
    let (printed, _) = import_write(&file, &cfg.path);
    assert!(
        printed.contains("AIMON_TEST_MARKER: ${TEST_MARKER}"),
        "{printed}"
    );
    assert!(
        printed.contains("VS Code asks for it (\"Test marker\")"),
        "{printed}"
    );
    assert!(
        printed.contains(&format!("cwd: {}/sub", workspace.path().display())),
        "{printed}"
    );
    let after = std::fs::read_to_string(&cfg.path).unwrap();
    assert!(
        after.starts_with("mcp:\n  servers:   # none yet\n"),
        "{after}"
    );
    let report = check_all_ready(&cfg.path, &[("TEST_MARKER", &m)]);
    assert_eq!(names(&report), ["notes", "web"]);
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn codex_config_toml_with_a_bearer_token_from_the_environment() {
    let m = marker("import-codex");
    let (_http, url) = demo_http_at("127.0.0.1:0", &["--require-bearer", "s3cret"], None);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("config.toml");
    std::fs::write(
        &file,
        format!(
            r#"model = "o3"

[mcp_servers.demo]
command = "{bin}"
args = ["demo-server"]
env = {{ AIMON_TEST_MARKER = "{m}" }}
startup_timeout_sec = 20
tool_timeout_sec = 45

[mcp_servers.Remote_Demo]
url = "{url}"
bearer_token_env_var = "DEMO_TOKEN"
"#,
            bin = bin()
        ),
    )
    .unwrap();
    let cfg = write_config("");
    let (printed, said) = import_write(&file, &cfg.path);
    assert!(printed.contains("request_timeout: 45s"), "{printed}");
    assert!(printed.contains("bearer_token: ${DEMO_TOKEN}"), "{printed}");
    assert!(
        said.contains("(Codex config.toml): demo, remote-demo"),
        "{said}"
    );
    assert!(said.contains("`provider: openai-responses`"), "{said}");
    let report = check_all_ready(&cfg.path, &[("DEMO_TOKEN", "s3cret")]);
    assert_eq!(names(&report), ["demo", "remote-demo"]);
    // Without the token the HTTP server refuses: the token really went where it should.
    let out = run_env(&["check", "--json"], &cfg.path, &[("DEMO_TOKEN", "wrong")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}

#[test]
fn without_write_nothing_changes_and_bad_files_exit_2() {
    let cfg = write_config("# untouched\nmcp:\n  servers: []\n");
    let file = cfg.dir.path().join(".mcp.json");
    std::fs::write(&file, r#"{"mcpServers": {"a": {"command": "x"}}}"#).unwrap();
    let out = run_env(&["import", &file.display().to_string()], &cfg.path, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("- name: a"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not written: add --write"));
    assert_eq!(
        std::fs::read_to_string(&cfg.path).unwrap(),
        "# untouched\nmcp:\n  servers: []\n"
    );
    std::fs::write(&file, "{ not json").unwrap();
    let out = run_env(&["import", &file.display().to_string()], &cfg.path, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
}

#[test]
fn a_flow_style_server_list_gets_flow_items() {
    let cfg = write_config("mcp:\n  servers: [{name: z, command: y}]  # flow\n");
    let file = cfg.dir.path().join(".mcp.json");
    std::fs::write(&file, r#"{"mcpServers": {"A": {"command": "x"}}}"#).unwrap();
    let (printed, said) = import_write(&file, &cfg.path);
    assert!(
        printed.starts_with("mcp:\n  servers:\n    # imported from"),
        "{printed}"
    );
    assert!(said.contains("written in flow style"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&cfg.path).unwrap(),
        "mcp:\n  servers: [{name: z, command: y}, {name: a, command: x}]  # flow\n"
    );
}

#[test]
fn importing_the_same_file_twice_adds_nothing_the_second_time() {
    let cfg = write_config("mcp:\n  servers: []\n");
    let file = cfg.dir.path().join(".mcp.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {"a": {"command": "x", "args": ["1"]}, "b": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}"#,
    )
    .unwrap();
    import_write(&file, &cfg.path);
    let once = std::fs::read_to_string(&cfg.path).unwrap();
    assert!(
        once.contains("name: a") && once.contains("name: b"),
        "{once}"
    );
    // Again: both are there already, nothing is written, and that is not a failure.
    let (printed, said) = import_write(&file, &cfg.path);
    assert_eq!(printed, "");
    assert!(said.contains("already in the config: \"a\" as a"), "{said}");
    assert!(said.contains("already in the config: \"b\" as b"), "{said}");
    assert!(said.contains("nothing to add"), "{said}");
    assert_eq!(std::fs::read_to_string(&cfg.path).unwrap(), once);
    // One server changed in the file (other args): only that one is added, under a new name.
    std::fs::write(
        &file,
        r#"{"mcpServers": {"a": {"command": "x", "args": ["2"]}, "b": {"type": "http", "url": "http://127.0.0.1:9/mcp"}}}"#,
    )
    .unwrap();
    let (_, said) = import_write(&file, &cfg.path);
    assert!(said.contains("1 server from"), "{said}");
    let thrice = std::fs::read_to_string(&cfg.path).unwrap();
    assert!(thrice.contains("name: a-2"), "{thrice}");
    assert!(!thrice.contains("name: b-2"), "{thrice}");
}

/// A Claude Desktop config holding secret values (an API key in `env`, a bearer token in a
/// header): nothing of them is printed or written; the new config is its owner's only; it says
/// which variables to set, fails to load naming one while they are not set, and starts every
/// server once they are.
#[test]
fn secret_values_are_never_printed_or_written_and_the_config_starts_once_they_are_set() {
    use std::os::unix::fs::PermissionsExt;
    let m = marker("import-secrets");
    let (_http, url) = demo_http_at("127.0.0.1:0", &[], None);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claude_desktop_config.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"mcpServers": {{
  "notes": {{"command": "{bin}", "args": ["demo-server"], "env": {{"NOTES_API_KEY": "sk-secret-123", "AIMON_TEST_MARKER": "{m}"}}}},
  "remote": {{"type": "http", "url": "{url}", "headers": {{"Authorization": "Bearer sk-header-456", "X-Team": "ops"}}}}
}}}}"#,
            bin = bin()
        ),
    )
    .unwrap();
    let config = dir.path().join("aimon.yaml");
    // The preview, then the write: neither prints a secret.
    let preview = run_env(&["import", &file.display().to_string()], &config, &[]);
    let (printed, said) = import_write(&file, &config);
    let written = std::fs::read_to_string(&config).unwrap();
    for text in [
        String::from_utf8_lossy(&preview.stdout).to_string(),
        String::from_utf8_lossy(&preview.stderr).to_string(),
        printed.clone(),
        said,
        written.clone(),
    ] {
        assert!(
            !text.contains("sk-secret-123") && !text.contains("sk-header-456"),
            "{text}"
        );
    }
    assert!(
        printed.contains("NOTES_API_KEY: ${NOTES_API_KEY}"),
        "{printed}"
    );
    assert!(
        printed.contains("Authorization: ${REMOTE_AUTHORIZATION}"),
        "{printed}"
    );
    assert!(printed.contains("X-Team: ops"), "{printed}");
    assert!(
        printed.contains("set NOTES_API_KEY (env NOTES_API_KEY) in the environment"),
        "{printed}"
    );
    let mode = std::fs::metadata(&config).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the config made by import");
    // Unset, the config does not load, and says which variable it wants.
    let out = run_env(&["check", "--json"], &config, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("NOTES_API_KEY"), "{stderr}");
    // Set, every server starts.
    let report = check_all_ready(
        &config,
        &[
            ("NOTES_API_KEY", "sk-secret-123"),
            ("REMOTE_AUTHORIZATION", "Bearer sk-header-456"),
        ],
    );
    assert_eq!(names(&report), ["notes", "remote"]);
    assert!(wait_gone(&m, Duration::from_secs(2)).is_empty());
}
