//! The gateway beyond tools, with real programs at both ends: the official Python SDK's client
//! as the host (`tests/hosts/sdk_content.py`, through `serve --stdio`) and the Python SDK's
//! conformance fixture server (`tests/hosts/conformance_fixture.py`) behind it. Resources,
//! templates, prompts and completions pass through under `aimon://<server>/…` URIs and
//! `<server>__<name>` names; a tool's image arrives as an image; its progress and its log
//! messages reach the host that asked for them; the server's sampling and elicitation requests
//! during the host's call (asked inside the call's result, 2026-07-28) go to that host, and
//! without the gateway `call` answers them as it answers them sent on their own.

mod common;
mod peers;

use std::process::{Command, Stdio};

use common::*;
use serde_json::{json, Value};

fn fixture_config(gateway: &str) -> TempConfig {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/hosts/conformance_fixture.py"
    );
    write_config(&format!(
        "mcp:\n  servers:\n    - name: fixture\n      command: {}\n      args: [{fixture}]\n\
         policy:\n  rules:\n    - {{tool: \"mcp__fixture__*\", decision: allow}}\n\
         gateway:\n  unattended: rules\n{gateway}",
        peers::sdk().display()
    ))
}

#[test]
fn resources_prompts_completions_images_progress_logs_and_server_requests_reach_a_host() {
    let config = fixture_config("");
    let log = config.dir.path().join("serve.log");
    let out = Command::new(peers::sdk())
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/hosts/sdk_content.py"
        ))
        .arg(bin())
        .args(["--config", &config.path.display().to_string()])
        .args(["--log-file", &log.display().to_string(), "serve", "--stdio"])
        .env("XDG_STATE_HOME", config.dir.path().join("state"))
        .stdin(Stdio::null())
        .output()
        .expect("run the host");
    assert!(out.status.success(), "{out:?}");
    let seen: Value = serde_json::from_slice(&out.stdout).expect("the host's JSON");

    assert_eq!(
        seen["capabilities"],
        json!({"resources": true, "prompts": true, "completions": true, "logging": true})
    );
    assert_eq!(
        seen["resources"],
        json!([
            "aimon://fixture/test://static-text",
            "aimon://fixture/test://static-binary",
            "aimon://fixture/test://watched-resource"
        ])
    );
    assert_eq!(
        seen["templates"],
        json!(["aimon://fixture/test://template/{id}/data"])
    );
    assert_eq!(
        seen["text"],
        json!([{"uri": "aimon://fixture/test://static-text", "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}])
    );
    let from_template = &seen["from_template"][0];
    assert_eq!(
        from_template["uri"],
        "aimon://fixture/test://template/42/data"
    );
    assert!(
        from_template["text"]
            .as_str()
            .unwrap()
            .contains("Data for ID: 42"),
        "{seen:#}"
    );
    assert_eq!(
        seen["prompts"],
        json!([
            "fixture__test_simple_prompt",
            "fixture__test_prompt_with_arguments",
            "fixture__test_prompt_with_embedded_resource",
            "fixture__test_prompt_with_image"
        ])
    );
    assert_eq!(
        seen["prompt"],
        json!([{"role": "user", "content": {"type": "text",
                "text": "Prompt with arguments: arg1='one', arg2='two'"}}])
    );
    assert!(
        !seen["completion"].as_array().unwrap().is_empty(),
        "{seen:#}"
    );
    assert_eq!(
        seen["image"],
        json!([{"type": "image", "mimeType": "image/png"}])
    );
    assert_eq!(seen["progress"], json!([0.0, 50.0, 100.0]));
    let logs: Vec<&str> = seen["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert_eq!(l["logger"], "fixture/conformance-fixture", "{l}");
            l["data"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        logs,
        [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ]
    );
    // The fixture asked its questions inside the calls' results; the gateway's client handed
    // them to this host (it declared both), whose answers came back in the tools' results.
    assert_eq!(
        seen["asked"],
        json!([
            "sampling: hello from the fixture",
            "elicitation: who are you?"
        ])
    );
    assert_eq!(seen["sampled"], "LLM response: the host's model says hi");
    assert_eq!(
        seen["elicited"],
        "User response: action=accept, content={\"username\":\"host\",\"email\":\"host@example.com\"}"
    );
}

#[test]
fn a_naming_a_tool_name_cannot_hold_is_refused_at_its_place() {
    let config = fixture_config("  naming: \"{server}/{tool}\"\n");
    let out = run(&["check"], Some(&config.path));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:11:11: gateway.naming: \"{{server}}/{{tool}}\": '/' may not be in a tool name",
            config.path.display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_2026_server_asking_inside_a_calls_result_is_answered_headless_too() {
    // No gateway: `call` answers the fixture's elicitation (asked inside the call's
    // `input_required` result, SEP-2322) with the schema's defaults, as it answers
    // `elicitation/create` sent on its own.
    let config = fixture_config("");
    let out = run(
        &[
            "call",
            "mcp__fixture__test_elicitation_sep1034_defaults",
            "--elicitation",
            "defaults",
        ],
        Some(&config.path),
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        r#"Elicitation completed: action=accept, content={"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}"#
    );
}
