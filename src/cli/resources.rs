//! `aimon-console resources [--json]`: every resource and resource template of the ready
//! servers (all pages); `aimon-console read URI [--server NAME] [--json]`: one resource's
//! contents (text as is, sanitized on a terminal; blobs base64 in JSON). Exit 0 ok, 1 a server
//! could not answer, 2 a config error or a URI no server can be told from.

use std::process::ExitCode;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::asks::AskArgs;
use super::content;
use super::output::{self, safe_text, Style, Table};
use crate::config::Config;
use crate::runtime::{resource_content_json, AgentRuntime, ResourceContent, ResourceListing};
use crate::text::sanitize_line;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ResourcesArgs {
    /// Print `{"resources", "templates", "errors", "complete", "missing"}` as JSON (shape in
    /// docs/commands.md).
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ReadArgs {
    /// The resource's URI.
    pub uri: String,
    /// The server to read it from (else the one that lists it, or whose template matches it).
    #[arg(long, value_name = "NAME")]
    pub server: Option<String>,
    /// Print the contents as JSON (shape in docs/commands.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub asks: AskArgs,
}

/// Lists every resource server's resources; failures are kept by server.
async fn listings(runtime: &AgentRuntime) -> Vec<(String, Result<ResourceListing, String>)> {
    content::per_server(runtime.resource_servers(), |server| async move {
        runtime.list_resources(&server).await
    })
    .await
}

pub async fn run_list(config: Config, args: ResourcesArgs) -> ExitCode {
    let runtime = match content::start_settled(&config, "resources").await {
        Ok(r) => r,
        Err(code) => return code,
    };
    let listed = listings(&runtime).await;
    let (missing, failed) = content::gaps(&runtime, args.json, "resources");
    runtime.close().await;

    let mut resources = Vec::new();
    let mut templates = Vec::new();
    let mut errors = Vec::new();
    for (server, listing) in listed {
        match listing {
            Ok(l) => {
                resources.extend(l.resources);
                templates.extend(l.templates);
            }
            Err(error) => errors.push((server, error)),
        }
    }
    if args.json {
        let items = json!({"resources": resources, "templates": templates});
        content::print_json(items, &errors, (missing, failed));
    } else {
        let style = Style::for_stdout();
        let mut table = Table::new(
            vec!["SERVER", "URI", "NAME", "MIME", "SIZE"],
            vec![false, false, false, false, true],
        );
        for r in &resources {
            table.row(vec![
                r.server.clone(),
                sanitize_line(&r.uri, 100),
                sanitize_line(r.title.as_deref().unwrap_or(&r.name), 60),
                sanitize_line(r.mime_type.as_deref().unwrap_or("-"), 40),
                r.size.map_or_else(|| "-".to_string(), |s| s.to_string()),
            ]);
        }
        output::print(&table.render(style, &|_, _, cell| cell));
        if !templates.is_empty() {
            let mut table = Table::new(
                vec!["SERVER", "TEMPLATE", "NAME", "MIME"],
                vec![false, false, false, false],
            );
            for t in &templates {
                table.row(vec![
                    t.server.clone(),
                    sanitize_line(&t.uri_template, 100),
                    sanitize_line(t.title.as_deref().unwrap_or(&t.name), 60),
                    sanitize_line(t.mime_type.as_deref().unwrap_or("-"), 40),
                ]);
            }
            output::print("\n");
            output::print(&table.render(style, &|_, _, cell| cell));
        }
    }
    content::listing_end(&errors, failed)
}

/// The server that serves `uri`: the one listing it, else the one whose template matches it,
/// else the only resource server. `Err` says why none can be told (exit 2).
fn server_for(
    uri: &str,
    listed: &[(String, Result<ResourceListing, String>)],
) -> Result<String, String> {
    let pick = |found: Vec<&String>, how: &str| -> Option<Result<String, String>> {
        match found.as_slice() {
            [] => None,
            [one] => Some(Ok((*one).clone())),
            many => Some(Err(format!(
                "several servers {how} {uri}: {}; name one with --server",
                many.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    };
    let listing = |l: &Result<ResourceListing, String>| l.as_ref().ok().cloned();
    let listing_it: Vec<&String> = listed
        .iter()
        .filter(|(_, l)| listing(l).is_some_and(|l| l.resources.iter().any(|r| r.uri == uri)))
        .map(|(s, _)| s)
        .collect();
    if let Some(found) = pick(listing_it, "list") {
        return found;
    }
    let matching: Vec<&String> = listed
        .iter()
        .filter(|(_, l)| {
            listing(l).is_some_and(|l| {
                l.templates.iter().any(|t| {
                    let prefix = crate::runtime::template_start(&t.uri_template);
                    !prefix.is_empty() && uri.starts_with(prefix)
                })
            })
        })
        .map(|(s, _)| s)
        .collect();
    if let Some(found) = pick(matching, "have a template matching") {
        return found;
    }
    match listed {
        [(only, _)] => Ok(only.clone()),
        [] => Err("no ready server offers resources".into()),
        _ => Err(format!(
            "no server lists {uri} or has a template for it; name one with --server"
        )),
    }
}

pub async fn run_read(mut config: Config, args: ReadArgs) -> ExitCode {
    // Only the named server needs to start.
    let runtime = match content::start_for_one(
        &mut config,
        args.server.as_deref(),
        args.asks,
        "read",
    )
    .await
    {
        Ok(r) => r,
        Err(code) => return code,
    };
    let found = match &args.server {
        Some(server) => Ok(server.clone()),
        None => server_for(&args.uri, &listings(&runtime).await),
    };
    let server = match content::found_or_exit(&runtime, found, "resources").await {
        Ok(server) => server,
        Err(code) => return code,
    };
    let read = runtime
        .read_resource(&server, &args.uri, CancellationToken::new())
        .await;
    runtime.close().await;
    let contents = match read {
        Ok(contents) => contents,
        Err(e) => {
            output::error_line(&format!("error: {}", sanitize_line(&e.to_string(), 300)));
            return ExitCode::from(1);
        }
    };
    if args.json {
        let value = json!({
            "server": server,
            "uri": args.uri,
            "contents": contents.iter().map(resource_content_json).collect::<Vec<_>>(),
        });
        output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ));
    } else {
        for part in &contents {
            match part {
                ResourceContent::Text { text, .. } => {
                    let text = safe_text(text);
                    output::print(&text);
                    if !text.ends_with('\n') {
                        output::print("\n");
                    }
                }
                ResourceContent::Blob { bytes, .. } => output::print(&format!(
                    "[blob {}, {} bytes: --json carries it base64]\n",
                    sanitize_line(part.mime_type().unwrap_or("of no stated type"), 60),
                    bytes.len()
                )),
            }
        }
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{ResourceInfo, TemplateInfo};

    fn listing(
        server: &str,
        uris: &[&str],
        templates: &[&str],
    ) -> (String, Result<ResourceListing, String>) {
        (
            server.to_string(),
            Ok(ResourceListing {
                resources: uris
                    .iter()
                    .map(|u| ResourceInfo {
                        server: server.into(),
                        uri: (*u).into(),
                        name: String::new(),
                        title: None,
                        description: None,
                        mime_type: None,
                        size: None,
                    })
                    .collect(),
                templates: templates
                    .iter()
                    .map(|t| TemplateInfo {
                        server: server.into(),
                        uri_template: (*t).into(),
                        name: String::new(),
                        title: None,
                        description: None,
                        mime_type: None,
                    })
                    .collect(),
                skills: Vec::new(),
            }),
        )
    }

    #[test]
    fn finds_the_server_of_a_uri() {
        let listed = vec![
            listing("a", &["x://1"], &["t://{id}"]),
            listing("b", &["x://2", "x://shared"], &[]),
            listing("c", &["x://shared"], &["t://{id}"]),
        ];
        assert_eq!(server_for("x://1", &listed), Ok("a".into()));
        assert!(server_for("x://shared", &listed)
            .unwrap_err()
            .contains("several servers list x://shared: b, c"));
        assert!(server_for("t://9", &listed).unwrap_err().contains("a, c"));
        assert!(server_for("nowhere://", &listed).is_err());
        assert_eq!(
            server_for("nowhere://", &[listing("solo", &[], &[])]),
            Ok("solo".into())
        );
    }
}
