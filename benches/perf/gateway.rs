//! `gateway`: a host's calls through the gateway against the same host's calls straight to the
//! server, in the same run. The host is the Python SDK client (`benches/peer_client.py`), the
//! server the demo server; through the gateway it is `aimon-console serve --stdio` on a config
//! of that one server (host → gateway → demo server: one more hop, and the gate). Rounds
//! alternate so that the machine's noise falls on both alike.

use std::path::Path;

use serde_json::json;

use crate::peer;
use crate::report::{call_rows, CallStats, Row};
use crate::ServerCmd;

pub fn rows(binary: &str, dir: &Path, calls: usize) -> Vec<Row> {
    let config = dir.join("gateway.yaml");
    let written = std::fs::write(
        &config,
        format!(
            "mcp:\n  servers:\n    - name: notes\n      command: {binary}\n      args: [demo-server]\n      annotation_trust: trust\n"
        ),
    );
    if let Err(e) = written {
        panic!("cannot write {}: {e}", config.display());
    }
    let direct = ServerCmd {
        command: binary.into(),
        args: vec!["demo-server".into()],
    };
    let through = ServerCmd {
        command: binary.into(),
        args: vec![
            "--config".into(),
            config.display().to_string(),
            "--log-file".into(),
            dir.join("gateway.log").display().to_string(),
            "serve".into(),
            "--stdio".into(),
        ],
    };
    let arguments = json!({"text": "hello"});
    let warmup = (calls / 10).max(20);
    let (mut straight, mut gateway) = (CallStats::default(), CallStats::default());
    for _ in 0..3 {
        straight.merge(peer::python_client(
            &direct, calls, warmup, "echo", &arguments,
        ));
        gateway.merge(peer::python_client(
            &through,
            calls,
            warmup,
            "notes__echo",
            &arguments,
        ));
    }
    let mut rows = call_rows(
        "gateway",
        "Python SDK host, sequential",
        &gateway,
        "the same host straight to the demo server",
        &straight,
    );
    rows[0] = rows[0].clone().at_least(0.8);
    rows
}
