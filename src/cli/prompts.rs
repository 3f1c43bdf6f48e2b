//! `aimon-console prompts [--json]`: every prompt of the ready servers with its arguments;
//! `aimon-console prompt NAME --args JSON [--server NAME] [--json]`: the messages `prompts/get`
//! returns. Exit 0 ok, 1 a server could not answer, 2 a config error, `--args` that is not an
//! object of strings, or a prompt no server can be told from.

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::asks::AskArgs;
use super::content;
use super::output::{self, safe_text, Style, Table};
use super::EXIT_CONFIG;
use crate::config::Config;
use crate::runtime::{AgentRuntime, PromptInfo};
use crate::text::sanitize_line;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct PromptsArgs {
    /// Print `{"prompts", "errors", "complete", "missing"}` as JSON (shape in docs/commands.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct PromptArgs {
    /// The prompt's name.
    pub name: String,
    /// Its arguments: a JSON object of strings.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// The server to ask (else the one that lists the prompt).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// Print the messages as JSON (shape in docs/commands.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub asks: AskArgs,
}

/// Every prompt server's prompts; failures are kept by server.
async fn listings(runtime: &AgentRuntime) -> Vec<(String, Result<Vec<PromptInfo>, String>)> {
    content::per_server(runtime.prompt_servers(), |server| async move {
        runtime.list_prompts(&server).await
    })
    .await
}

pub async fn run_list(config: Config, args: PromptsArgs) -> ExitCode {
    let runtime = match content::start_settled(&config, "prompts").await {
        Ok(r) => r,
        Err(code) => return code,
    };
    let listed = listings(&runtime).await;
    let gaps = content::gaps(&runtime, args.json, "prompts");
    runtime.close().await;
    content::print_listing("prompts", listed, gaps, args.json, |prompts| {
        let mut table = Table::new(
            vec!["SERVER", "PROMPT", "ARGUMENTS", "DESCRIPTION"],
            vec![false; 4],
        );
        for p in prompts {
            let arguments: Vec<String> = p
                .arguments
                .iter()
                .map(|a| {
                    let name = sanitize_line(&a.name, 40);
                    if a.required {
                        name
                    } else {
                        format!("[{name}]")
                    }
                })
                .collect();
            table.row(vec![
                p.server.clone(),
                sanitize_line(&p.name, 60),
                if arguments.is_empty() {
                    "-".into()
                } else {
                    arguments.join(" ")
                },
                sanitize_line(p.description.as_deref().unwrap_or(""), 100),
            ]);
        }
        table.render(Style::for_stdout(), &|_, _, cell| cell)
    })
}

/// `--args` as prompt arguments: a JSON object whose values are strings.
fn parse_args(text: &str) -> Result<BTreeMap<String, String>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("--args is not valid JSON: {e}"))?;
    let Value::Object(map) = value else {
        return Err("--args must be a JSON object".into());
    };
    map.into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k, s)),
            other => Err(format!(
                "--args: prompt arguments are strings, and {k} is {other}"
            )),
        })
        .collect()
}

/// The server that lists prompt `name`. `Err` says why none can be told (exit 2).
fn server_for(
    name: &str,
    listed: &[(String, Result<Vec<PromptInfo>, String>)],
) -> Result<String, String> {
    let found: Vec<&String> = listed
        .iter()
        .filter(|(_, l)| {
            l.as_ref()
                .is_ok_and(|prompts| prompts.iter().any(|p| p.name == name))
        })
        .map(|(s, _)| s)
        .collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(format!("no ready server lists a prompt named {name}")),
        many => Err(format!(
            "several servers list a prompt named {name}: {}; name one with --server",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

pub async fn run_get(mut config: Config, args: PromptArgs) -> ExitCode {
    let arguments = match parse_args(&args.args) {
        Ok(a) => a,
        Err(why) => {
            output::error_line(&format!("error: {why}"));
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let runtime = match content::start_for_one(
        &mut config,
        args.server.as_deref(),
        args.asks,
        "prompt",
    )
    .await
    {
        Ok(r) => r,
        Err(code) => return code,
    };
    let found = match &args.server {
        Some(server) => Ok(server.clone()),
        None => server_for(&args.name, &listings(&runtime).await),
    };
    let server = match content::found_or_exit(&runtime, found, "prompts").await {
        Ok(server) => server,
        Err(code) => return code,
    };
    let got = runtime
        .get_prompt(&server, &args.name, &arguments, CancellationToken::new())
        .await;
    runtime.close().await;
    let got = match got {
        Ok(got) => got,
        Err(e) => {
            output::error_line(&format!("error: {}", sanitize_line(&e.to_string(), 300)));
            return ExitCode::from(1);
        }
    };
    if args.json {
        let value = json!({
            "server": server,
            "prompt": args.name,
            "description": got.description,
            "messages": got.messages,
        });
        output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ));
    } else {
        if let Some(description) = &got.description {
            output::print(&format!("# {}\n", sanitize_line(description, 200)));
        }
        for m in &got.messages {
            output::print(&format!("{}: {}\n", m.role.as_str(), safe_text(&m.text)));
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_an_object_of_strings() {
        assert_eq!(
            parse_args(r#"{"a": "1"}"#).unwrap(),
            BTreeMap::from([("a".to_string(), "1".to_string())])
        );
        assert!(parse_args("[1]").unwrap_err().contains("object"));
        assert!(parse_args(r#"{"a": 1}"#).unwrap_err().contains("strings"));
        assert!(parse_args("{").unwrap_err().contains("not valid JSON"));
    }

    #[test]
    fn finds_the_server_of_a_prompt() {
        let prompt = |server: &str, name: &str| PromptInfo {
            server: server.into(),
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
        };
        let listed = vec![
            (
                "a".to_string(),
                Ok(vec![prompt("a", "p"), prompt("a", "q")]),
            ),
            ("b".to_string(), Ok(vec![prompt("b", "q")])),
            ("c".to_string(), Err("down".to_string())),
        ];
        assert_eq!(server_for("p", &listed), Ok("a".into()));
        assert!(server_for("q", &listed).unwrap_err().contains("a, b"));
        assert!(server_for("r", &listed).is_err());
    }
}
