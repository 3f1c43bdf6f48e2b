//! The MCP Inspector's CLI (`mcpdo`, @modelcontextprotocol/inspector 2.12.0, on Node 22) as a
//! host of the gateway, through `serve --stdio` and `serve --http`: it lists the tools with the
//! traits this console resolved, a read-only call runs, and with no console to approve it a
//! mutating call gets the refusal.

mod common;
mod peers;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};

/// One Inspector CLI of its own: its catalog, secrets and daemon under `home` (stopped when
/// dropped).
struct Inspector {
    home: PathBuf,
}

impl Inspector {
    fn new(home: &Path) -> Inspector {
        Inspector {
            home: home.to_path_buf(),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let (node, cli) = peers::inspector();
        let mut cmd = Command::new(node);
        cmd.arg(cli)
            .args(["--format", "json"])
            .args(args)
            .env("HOME", &self.home)
            .env("MCP_CATALOG_PATH", self.home.join("mcp.json"))
            .env("MCP_INSPECTOR_SECRET_STORE", "memory")
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `args`; the JSON it printed first (a failed call prints its result, then an error).
    fn json(&self, args: &[&str]) -> Value {
        let out = self.command(args).output().expect("run mcpdo");
        let mut values = serde_json::Deserializer::from_slice(&out.stdout).into_iter::<Value>();
        match values.next() {
            Some(Ok(value)) => value,
            _ => panic!("mcpdo {args:?} printed no JSON: {out:?}"),
        }
    }

    /// The offered tools' hints, by name.
    fn tools(&self, connection: &str) -> Value {
        let listed = self.json(&["tools/list", "--connection", connection]);
        let mut hints = serde_json::Map::new();
        for tool in listed["tools"].as_array().expect("tools") {
            hints.insert(
                tool["name"].as_str().unwrap().to_string(),
                tool["annotations"].clone(),
            );
        }
        Value::Object(hints)
    }

    fn call(&self, connection: &str, tool: &str, args: &Value) -> Value {
        let args = args.to_string();
        self.json(&["tools/call", "--connection", connection, tool, &args])
    }
}

impl Drop for Inspector {
    fn drop(&mut self) {
        let _ = self.command(&["daemon", "stop"]).output();
    }
}

/// What every host of the two transports sees of the `notes` demo server (annotations trusted).
fn sees_notes(inspector: &Inspector, connection: &str) {
    let tools = inspector.tools(connection);
    assert_eq!(
        tools["notes__echo"],
        json!({"readOnlyHint": true, "destructiveHint": false}),
        "{tools:#}"
    );
    assert_eq!(
        tools["notes__delete_note"],
        json!({"readOnlyHint": false, "destructiveHint": true}),
        "{tools:#}"
    );
    assert_eq!(
        inspector.call(
            connection,
            "notes__echo",
            &json!({"text": "from the inspector"})
        ),
        json!({"content": [{"type": "text", "text": "from the inspector"}], "isError": false})
    );
    let refused = inspector.call(
        connection,
        "notes__write_note",
        &json!({"title": "t", "body": "b"}),
    );
    assert_eq!(refused["isError"], true, "{refused:#}");
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("refused: notes__write_note is mutating, and nobody is at a console"),
        "{text}"
    );
}

#[test]
fn the_inspectors_cli_is_a_host_over_stdio_and_http() {
    let m = marker("gateway-inspector");
    let config = write_config(&format!(
        "mcp:\n  servers:\n{}",
        demo_server("notes", &[], "annotation_trust: trust", &m)
    ));
    let state = config.dir.path().join("state");
    let inspector = Inspector::new(&config.dir.path().join("home"));
    let log = config.dir.path().join("serve.log");
    let (config_path, log_path) = (config.path.display().to_string(), log.display().to_string());

    // Over stdio: the Inspector starts `serve --stdio` as its server.
    let connected = inspector.json(&[
        "connect",
        "--connection",
        "stdio",
        "--",
        bin(),
        "--config",
        &config_path,
        "--log-file",
        &log_path,
        "serve",
        "--stdio",
    ]);
    assert_eq!(connected["name"], "stdio", "{connected:#}");
    sees_notes(&inspector, "stdio");

    // Over HTTP: `serve --http` on a free port, the token in a header.
    let port = free_port();
    let mut serve = Command::new(bin())
        .args(["--config", &config_path, "--log-file", &log_path])
        .args(["serve", "--http", &format!("127.0.0.1:{port}")])
        .env("XDG_STATE_HOME", &state)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve --http");
    let stderr = serve.stderr.take().unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let first = lines.next().expect("serve says where").unwrap();
    assert!(first.starts_with("serving hosts at"), "{first}");
    let token = Command::new(bin())
        .arg("gateway-token")
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    let token = String::from_utf8(token.stdout).unwrap();
    let header = format!("Authorization: Bearer {}", token.trim());
    let url = format!("http://127.0.0.1:{port}/mcp");
    let connected = inspector.json(&[
        "connect",
        "--connection",
        "http",
        "--header",
        &header,
        "--",
        &url,
    ]);
    assert_eq!(connected["name"], "http", "{connected:#}");
    sees_notes(&inspector, "http");

    drop(inspector);
    let _ = serve.kill();
    let _ = serve.wait();
    assert!(wait_gone(&m, std::time::Duration::from_secs(5)).is_empty());
}
