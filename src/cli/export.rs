//! `aimon-console export --for HOST [--http URL]`: the snippet that adds this console's gateway
//! to another host's config, the inverse of `import`. By default the host starts `serve
//! --stdio` on this config; with `--http` it connects to a console or `serve --http` already
//! running, its bearer token an environment reference (`AIMON_GATEWAY_TOKEN`), never the token.

use std::path::Path;
use std::process::ExitCode;

use serde_json::json;

use super::output;
use crate::config::Config;

/// The environment variable a host's config names for the gateway's token.
pub const TOKEN_VAR: &str = "AIMON_GATEWAY_TOKEN";

#[derive(clap::Args, Debug, Clone)]
pub struct ExportArgs {
    /// The host whose config the snippet is for.
    #[arg(long = "for", value_enum, value_name = "HOST")]
    pub host: ExportHost,
    /// Connect to a gateway already serving at URL (`serve --http`, the console's
    /// `--serve-http`) instead of starting `serve --stdio`.
    #[arg(long, value_name = "URL")]
    pub http: Option<String>,
}

/// The hosts `export` writes for.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportHost {
    /// Claude Code's .mcp.json.
    ClaudeCode,
    /// claude_desktop_config.json.
    ClaudeDesktop,
    /// VS Code's .vscode/mcp.json.
    Vscode,
    /// Codex's ~/.codex/config.toml.
    Codex,
    /// Cursor's mcp.json.
    Cursor,
}

pub fn run(config: &Config, args: ExportArgs) -> ExitCode {
    let binary = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "aimon-console".to_string());
    match snippet(args.host, &binary, &config.path, args.http.as_deref()) {
        Ok(text) => {
            output::print(&text);
            ExitCode::SUCCESS
        }
        Err(why) => {
            output::error_line(&format!("error: {why}"));
            ExitCode::from(super::EXIT_CONFIG)
        }
    }
}

/// The snippet for `host`: `binary --config CONFIG serve --stdio`, or the gateway at `url`.
pub fn snippet(
    host: ExportHost,
    binary: &str,
    config: &Path,
    url: Option<&str>,
) -> Result<String, String> {
    let args = [
        "--config".to_string(),
        config.display().to_string(),
        "serve".to_string(),
        "--stdio".to_string(),
    ];
    let pretty = |v: serde_json::Value| {
        format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
    };
    let bearer = |reference: &str| format!("Bearer {reference}");
    Ok(match (host, url) {
        (ExportHost::ClaudeDesktop, Some(_)) => {
            return Err(
                "Claude Desktop's config file takes servers it starts (stdio): leave out --http"
                    .to_string(),
            )
        }
        (ExportHost::ClaudeDesktop | ExportHost::Cursor, None) => {
            pretty(json!({"mcpServers": {"aimon": {"command": binary, "args": args}}}))
        }
        (ExportHost::Cursor, Some(url)) => pretty(json!({"mcpServers": {"aimon": {
            "url": url,
            "headers": {"Authorization": bearer(&format!("${{env:{TOKEN_VAR}}}"))}
        }}})),
        (ExportHost::ClaudeCode, None) => pretty(json!({"mcpServers": {"aimon": {
            "type": "stdio", "command": binary, "args": args
        }}})),
        (ExportHost::ClaudeCode, Some(url)) => pretty(json!({"mcpServers": {"aimon": {
            "type": "http",
            "url": url,
            "headers": {"Authorization": bearer(&format!("${{{TOKEN_VAR}}}"))}
        }}})),
        (ExportHost::Vscode, None) => pretty(json!({"servers": {"aimon": {
            "type": "stdio", "command": binary, "args": args
        }}})),
        (ExportHost::Vscode, Some(url)) => pretty(json!({"servers": {"aimon": {
            "type": "http",
            "url": url,
            "headers": {"Authorization": bearer(&format!("${{env:{TOKEN_VAR}}}"))}
        }}})),
        (ExportHost::Codex, None) => {
            let args: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
            format!(
                "[mcp_servers.aimon]\ncommand = {}\nargs = [{}]\n",
                toml_string(binary),
                args.join(", ")
            )
        }
        (ExportHost::Codex, Some(url)) => format!(
            "[mcp_servers.aimon]\nurl = {}\nbearer_token_env_var = \"{TOKEN_VAR}\"\n",
            toml_string(url)
        ),
    })
}

/// A TOML basic string (JSON's escapes are TOML's for what a path or URL holds).
fn toml_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}
