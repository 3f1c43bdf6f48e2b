//! `aimon-console conformance URL` (hidden from `--help`): the client under test of the official
//! MCP conformance suite (`.ci/run`).
//!
//! It runs the console's own path: a runtime from `AgentRuntimeFactory` (the same handshake,
//! `server/discover` then `initialize`; the same OAuth client), tools called through
//! `AgentRuntime::call` and its approval gate. What differs is only the operator's part, done
//! here as an operator would: approvals are granted (as `call --yes` does), a server that
//! reports `needs_login` is logged in to — the "browser" follows the authorization URL with
//! plain HTTP GETs, which the suite's authorization servers answer with the redirect at once —
//! and started again; a call refused for scope is logged in to again (a step-up, within the
//! OAuth client's retry limit) and made again. The scenario's context
//! (`MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_CONTEXT`) becomes the server's `oauth:`
//! config; elicitation requests are accepted with the schema's defaults (by the driver, as
//! headless `--elicitation defaults` does). Tokens go to a folder of this run, deleted at the end.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::output;
use crate::approval::ApprovalDecision;
use crate::config::{
    Assertion, Config, IdpConfig, OAuthConfig, OAuthGrant, PolicyConfig, PrivateKey, RestartPolicy,
    ServerConfig, SigningAlgorithm, TransportKind,
};
use crate::runtime::{
    begin_login, step_up_pending, AgentRuntime, AgentRuntimeFactory, CallStatus, FailureClass,
    Login, McpEvent, RuntimeEvent, RuntimeOptions, ServerReport, ServerStatus,
};

/// The server's name inside this run.
const SERVER: &str = "conformance";
/// Every request's deadline (the suite gives a scenario 30 s).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// The suite's client ID metadata document URL (`auth/basic-cimd`): where this client's
/// metadata is taken to be published.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";
/// Logins one run may do (the OAuth client's own step-up limit stops a refusing server first).
const MAX_LOGINS: usize = 5;

#[derive(clap::Args, Debug, Clone)]
pub struct ConformanceArgs {
    /// The scenario's server URL (the suite appends it).
    pub url: String,
}

pub async fn run(args: ConformanceArgs) -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null);
    tracing::info!(%scenario, "conformance run");
    // This run's tokens stay out of the operator's store. Set before anything reads it (the
    // runtime is single-threaded and nothing has started yet).
    let state = std::env::temp_dir().join(format!(
        "aimon-conformance-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::env::set_var("XDG_STATE_HOME", &state);
    let server = server_config(&args.url, &scenario, &context);
    let code = drive(&server, &scenario, &context).await;
    let _ = std::fs::remove_dir_all(&state);
    code
}

/// The server entry an operator would write for this scenario.
fn server_config(url: &str, scenario: &str, context: &Value) -> ServerConfig {
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_string);
    let mut server = ServerConfig::remote(SERVER, TransportKind::StreamableHttp, url);
    server.request_timeout = REQUEST_TIMEOUT;
    // One run, then exit: nothing to supervise.
    server.restart = RestartPolicy::Never;
    let mut oauth = OAuthConfig {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        client_metadata_url: Some(CLIENT_METADATA_URL.to_string()),
        ..OAuthConfig::default()
    };
    if scenario.contains("client-credentials") {
        oauth.grant = OAuthGrant::ClientCredentials;
        oauth.private_key = text("private_key_pem").map(PrivateKey::Pem);
        oauth.signing_algorithm = match text("signing_algorithm").as_deref() {
            Some("ES384") => Some(SigningAlgorithm::ES384),
            Some("RS256") => Some(SigningAlgorithm::RS256),
            Some(_) | None => None,
        };
    }
    // Workload identity: the platform's token for this workload (the suite's valid one).
    if let Some(token) = text("valid_jwt") {
        oauth.grant = OAuthGrant::WorkloadIdentity;
        oauth.assertion = Some(Assertion::Token(token));
    }
    if let (Some(issuer), Some(token_endpoint), Some(client_id), Some(id_token)) = (
        text("idp_issuer"),
        text("idp_token_endpoint"),
        text("idp_client_id"),
        text("idp_id_token"),
    ) {
        oauth.grant = OAuthGrant::CrossAppAccess;
        oauth.idp = Some(IdpConfig {
            issuer,
            token_endpoint,
            client_id,
            client_secret: None,
            id_token,
        });
    }
    server.oauth = Some(oauth);
    server
}

async fn drive(server: &ServerConfig, scenario: &str, context: &Value) -> ExitCode {
    let config = Config::from_servers(vec![server.clone()], PolicyConfig::default());
    let (events, mut stream) = AgentRuntimeFactory::events();
    // The operator's approvals: granted, as `call --yes` does; elicitations: accepted with the
    // schema's defaults, as `--elicitation defaults` does.
    let driver = tokio::spawn(async move {
        while let Some(event) = stream.recv().await {
            match event {
                RuntimeEvent::ApprovalRequested(request) => {
                    request.respond(ApprovalDecision::AllowOnce)
                }
                RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)) => {
                    request.accept_defaults()
                }
                RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)) => {
                    super::asks::reject_sampling(&request, "conformance")
                }
                _ => {}
            }
        }
    });
    let options = RuntimeOptions {
        local_tools: false,
        ..RuntimeOptions::default()
    };
    let runtime = match AgentRuntimeFactory::create(&config, options, events).await {
        Ok(runtime) => runtime,
        Err(e) => {
            output::error_line(&format!("conformance: {e}"));
            return ExitCode::from(1);
        }
    };
    let report = runtime.wait_for_server(SERVER).await;
    let code = match ready(&runtime, server, report).await {
        Ok(()) if scenario.starts_with("sep-2640-") => skills(&runtime, scenario).await,
        Ok(()) => {
            call_all(
                &runtime,
                server,
                &planned_calls(&runtime, scenario, context),
            )
            .await
        }
        Err(why) => {
            output::error_line(&format!("conformance: the server did not start ({why})"));
            ExitCode::from(1)
        }
    };
    runtime.close().await;
    let _ = driver.await;
    code
}

/// Logs in while the server reports `needs_login`, starting it again after each login.
async fn ready(
    runtime: &AgentRuntime,
    server: &ServerConfig,
    mut report: Option<ServerReport>,
) -> Result<(), String> {
    for _ in 0..MAX_LOGINS {
        let Some(current) = &report else {
            return Err("no report".into());
        };
        match (&current.status, &current.failure) {
            (ServerStatus::Ready, _) => return Ok(()),
            (_, Some(failure)) if failure.class == FailureClass::NeedsLogin => {
                login(server).await?;
                report = Some(runtime.restart_server(server).await);
            }
            (_, Some(failure)) => {
                return Err(format!("{}: {}", failure.class.as_str(), failure.message))
            }
            (status, None) => return Err(format!("{status:?}")),
        }
    }
    Err("still asking for a login".into())
}

/// One login, with a "browser" that follows the authorization URL.
async fn login(server: &ServerConfig) -> Result<(), String> {
    let pending = match begin_login(server).await.map_err(|e| e.to_string())? {
        Login::Done(_) => return Ok(()),
        Login::Interactive(pending) => pending,
    };
    let url = pending.authorization_url().to_string();
    let browser = tokio::spawn(async move { follow(&url).await });
    let redirected = tokio::select! {
        redirected = pending.wait_for_redirect() => redirected.map_err(|e| e.to_string())?,
        followed = browser => {
            let why = match followed {
                Ok(Ok(())) => "the authorization server answered without redirecting back".to_string(),
                Ok(Err(e)) => e,
                Err(e) => e.to_string(),
            };
            return Err(why);
        }
    };
    pending
        .finish(&redirected)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// GETs `url` and follows its redirects, as a browser whose user is already signed in.
async fn follow(url: &str) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    client
        .get(url)
        .send()
        .await
        .map(|_| ())
        .map_err(|e| format!("following the authorization URL: {e}"))
}

/// Scenarios whose server lists tools and answers no call (`tools/call` is -32601 there): the
/// listing is all they check.
const LIST_ONLY: &[&str] = &["json-schema-ref-no-deref"];

/// The calls an operator makes in this scenario, as (the server's tool name, arguments): none for
/// [`LIST_ONLY`], the ones the suite names in its context (`toolCalls`, an argument given as
/// `null` left out, as an operator leaves an optional field empty), else every tool the server listed, in its order,
/// with the arguments the call editor starts from (each `default`, an empty value for the other
/// required properties) or the scenario's own: `{"a":2,"b":3}` for `tools_call`, and for
/// `json-schema-2020-12-preservation` the focal tool's input schema as this client holds it,
/// handed back to the echo tool.
fn planned_calls(runtime: &AgentRuntime, scenario: &str, context: &Value) -> Vec<(String, Value)> {
    if LIST_ONLY.contains(&scenario) {
        return Vec::new();
    }
    if let Some(Value::Array(calls)) = context.get("toolCalls") {
        return calls
            .iter()
            .filter_map(|call| {
                let name = call.get("name")?.as_str()?.to_string();
                let mut arguments = call.get("arguments").cloned().unwrap_or(json!({}));
                if let Value::Object(given) = &mut arguments {
                    given.retain(|_, value| !value.is_null());
                }
                Some((name, arguments))
            })
            .collect();
    }
    let tools: Vec<_> = runtime
        .tools()
        .into_iter()
        .filter(|t| t.origin.as_ref().is_some_and(|o| o.server == SERVER))
        .collect();
    let schema_of = |name: &str| {
        tools
            .iter()
            .find(|t| t.origin.as_ref().is_some_and(|o| o.tool == name))
            .map(|t| t.input_schema.to_value())
    };
    if scenario == "json-schema-2020-12-preservation" {
        if let Some(schema) = schema_of("json_schema_2020_12_tool") {
            return vec![("json_schema_echo".into(), json!({ "schema": schema }))];
        }
    }
    runtime
        .server_tool_names(SERVER)
        .into_iter()
        .map(|name| {
            let arguments = match scenario {
                "tools_call" => json!({"a": 2, "b": 3}),
                _ => schema_of(&name)
                    .map(|schema| crate::tool::schema::defaults_skeleton(&schema))
                    .unwrap_or(json!({})),
            };
            (name, arguments)
        })
        .collect()
}

/// The skills scenarios: the skills listed (nothing read), and for the `verify` ones the first
/// skill loaded, as an operator would use it: its `SKILL.md` read and verified, refused when it
/// does not match its listing (the refusal is this run's expected end, said on stderr).
async fn skills(runtime: &AgentRuntime, scenario: &str) -> ExitCode {
    let listed = match runtime.list_skills(SERVER).await {
        Ok(listed) => listed,
        Err(e) => {
            output::error_line(&format!("conformance: {e}"));
            return ExitCode::from(1);
        }
    };
    let first = listed.first().filter(|_| scenario.contains("-verify-"));
    let Some(skill) = first else {
        return ExitCode::SUCCESS;
    };
    match runtime
        .load_skill(SERVER, &skill.uri, CancellationToken::new())
        .await
    {
        Ok(loaded) => {
            output::print(&format!("{}\n", output::safe_text(&loaded.text)));
            ExitCode::SUCCESS
        }
        Err(e) => {
            output::error_line(&format!("conformance: {e}"));
            ExitCode::from(1)
        }
    }
}

/// Makes each planned call through the runtime (and its gate), in order, each whatever the one
/// before it gave: fails when any did.
async fn call_all(
    runtime: &AgentRuntime,
    server: &ServerConfig,
    calls: &[(String, Value)],
) -> ExitCode {
    let mut code = ExitCode::SUCCESS;
    for (name, arguments) in calls {
        if call_one(runtime, server, name, arguments).await.is_err() {
            code = ExitCode::from(1);
        }
    }
    code
}

/// Calls the server's tool `name` (its own name) through the runtime. A call refused for scope
/// gets a step-up login and is made again.
async fn call_one(
    runtime: &AgentRuntime,
    server: &ServerConfig,
    name: &str,
    arguments: &Value,
) -> Result<(), ()> {
    let Some(tool) = runtime.tools().into_iter().find(|t| {
        t.origin
            .as_ref()
            .is_some_and(|o| o.server == SERVER && o.tool == name)
    }) else {
        output::error_line(&format!("conformance: tool {name} was not registered"));
        return Err(());
    };
    let mut logins = 0;
    loop {
        let outcome = runtime
            .call(&tool.name, arguments.clone(), CancellationToken::new())
            .await;
        if outcome.status == CallStatus::Ok {
            output::print(&format!("{}\n", output::safe_text(&outcome.result.text)));
            return Ok(());
        }
        if logins < MAX_LOGINS && step_up_pending(server).is_some() {
            logins += 1;
            if let Err(why) = login(server).await {
                output::error_line(&format!("conformance: step-up login failed: {why}"));
                return Err(());
            }
            let report = runtime.restart_server(server).await;
            if report.status != ServerStatus::Ready {
                output::error_line("conformance: the server did not start again after the step-up");
                return Err(());
            }
            continue;
        }
        output::error_line(&format!(
            "conformance: {} {}: {}",
            tool.name,
            outcome.status.as_str(),
            output::safe_text(&outcome.result.text)
        ));
        return Err(());
    }
}
