//! `aimon-console skills [--json]`: every skill of the ready servers that declared the skills
//! extension (SEP-2640), read from nothing but their listings; `aimon-console skills --load URI
//! [--server NAME] [--json]`: one skill loaded — its `SKILL.md` read and printed only when its
//! size, digest and front matter match the listing. Exit 0 ok, 1 a server could not answer or
//! the skill was refused, 2 a config error or a skill no server can be told from.

use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use super::asks::AskArgs;
use super::content;
use super::output::{self, safe_text, Style, Table};
use crate::config::Config;
use crate::runtime::{AgentRuntime, SkillInfo};
use crate::text::sanitize_line;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct SkillsArgs {
    /// Load the skill whose SKILL.md is URI (read and verified against the listing).
    #[arg(long, value_name = "URI")]
    pub load: Option<String>,
    /// With --load: the server to load it from (else the one that lists it).
    #[arg(long, value_name = "NAME", requires = "load")]
    pub server: Option<String>,
    /// Print JSON (shapes in docs/commands.md).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub asks: AskArgs,
}

/// Every skill server's skills; failures are kept by server.
async fn listings(runtime: &AgentRuntime) -> Vec<(String, Result<Vec<SkillInfo>, String>)> {
    content::per_server(runtime.skill_servers(), |server| async move {
        runtime.list_skills(&server).await
    })
    .await
}

pub async fn run(mut config: Config, args: SkillsArgs) -> ExitCode {
    match args.load.clone() {
        None => list(&config, args.json).await,
        Some(uri) => load(&mut config, &uri, args).await,
    }
}

async fn list(config: &Config, json: bool) -> ExitCode {
    let runtime = match content::start_settled(config, "skills").await {
        Ok(r) => r,
        Err(code) => return code,
    };
    let listed = listings(&runtime).await;
    let gaps = content::gaps(&runtime, json, "skills");
    runtime.close().await;
    content::print_listing("skills", listed, gaps, json, |skills| {
        let mut table = Table::new(
            vec!["SERVER", "SKILL", "DESCRIPTION", "FILES", "SKILL.md"],
            vec![false, false, false, true, false],
        );
        for s in skills {
            table.row(vec![
                s.server.clone(),
                sanitize_line(&s.name, 64),
                sanitize_line(&s.description, 80),
                s.files
                    .as_ref()
                    .map_or_else(|| "dynamic".to_string(), |f| f.len().to_string()),
                sanitize_line(&s.uri, 100),
            ]);
        }
        table.render(Style::for_stdout(), &|_, _, cell| cell)
    })
}

async fn load(config: &mut Config, uri: &str, args: SkillsArgs) -> ExitCode {
    // Only the named server needs to start.
    let runtime =
        match content::start_for_one(config, args.server.as_deref(), args.asks, "skills").await {
            Ok(r) => r,
            Err(code) => return code,
        };
    let found = match &args.server {
        Some(server) => Ok(server.clone()),
        None => server_listing(uri, &listings(&runtime).await),
    };
    let server = match content::found_or_exit(&runtime, found, "skills").await {
        Ok(server) => server,
        Err(code) => return code,
    };
    let loaded = runtime
        .load_skill(&server, uri, CancellationToken::new())
        .await;
    runtime.close().await;
    let skill = match loaded {
        Ok(skill) => skill,
        Err(e) => {
            output::error_line(&format!("error: {}", sanitize_line(&e.to_string(), 300)));
            return ExitCode::from(1);
        }
    };
    if args.json {
        output::print(&format!(
            "{}\n",
            serde_json::to_string_pretty(&skill).unwrap_or_default()
        ));
    } else {
        let text = safe_text(&skill.text);
        output::print(&text);
        if !text.ends_with('\n') {
            output::print("\n");
        }
        output::error_line(&format!("verified: {}", skill.verified));
    }
    ExitCode::SUCCESS
}

/// The server that lists a skill whose `SKILL.md` is `uri`, else the only skill server.
fn server_listing(
    uri: &str,
    listed: &[(String, Result<Vec<SkillInfo>, String>)],
) -> Result<String, String> {
    let listing: Vec<&String> = listed
        .iter()
        .filter(|(_, l)| l.as_ref().is_ok_and(|l| l.iter().any(|s| s.uri == uri)))
        .map(|(server, _)| server)
        .collect();
    match (listing.as_slice(), listed) {
        ([one], _) => Ok((*one).clone()),
        ([], [(only, _)]) => Ok(only.clone()),
        ([], []) => Err("no ready server offers skills".into()),
        ([], _) => Err(format!(
            "no server lists the skill {uri}; name one with --server"
        )),
        (many, _) => Err(format!(
            "several servers list {uri}: {}; name one with --server",
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
