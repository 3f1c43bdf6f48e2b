//! `aimon-console import FILE [--write] [--format F]`: the servers another client already knows
//! (Claude Desktop, Claude Code's `.mcp.json`, VS Code's `mcp.json`, Codex's `config.toml`) as
//! entries of this config. Prints the YAML it would add (with a comment above each entry saying
//! where it came from and what changed on the way); `--write` appends it to the config file
//! through the comment-preserving writer, creating the file if `--config` names one that does
//! not exist. Exit 0 imported (or printed), 1 the config could not be written, 2 the file or
//! the config could not be read.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_yaml::Value;

use super::output;
use crate::config::edit::YamlDoc;
use crate::config::import::{self, Format};
use crate::config::{self, ConfigErrorKind, ConfigFile, SERVERS};

#[derive(clap::Args, Debug, Clone)]
pub struct ImportArgs {
    /// claude_desktop_config.json, .mcp.json, .vscode/mcp.json or Codex's config.toml.
    pub file: PathBuf,
    /// Append the servers to the config file (otherwise only print what would be added).
    #[arg(long)]
    pub write: bool,
    /// The file's format, when its name and content do not tell.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<FormatArg>,
}

/// `--format`.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum FormatArg {
    /// claude_desktop_config.json (values taken literally).
    ClaudeDesktop,
    /// Claude Code's .mcp.json (${VAR} and ${VAR:-default}).
    ClaudeCode,
    /// VS Code's mcp.json (servers, inputs, ${env:…}, ${input:…}).
    Vscode,
    /// Codex's config.toml ([mcp_servers.NAME]).
    Codex,
}

impl FormatArg {
    fn format(self) -> Format {
        match self {
            FormatArg::ClaudeDesktop => Format::ClaudeDesktop,
            FormatArg::ClaudeCode => Format::ClaudeCode,
            FormatArg::Vscode => Format::VsCode,
            FormatArg::Codex => Format::Codex,
        }
    }
}

/// Which `provider:` an agent profile takes for the models the host of `format` uses (the
/// servers are imported; a model profile is the operator's to write: docs/agent.md).
fn provider_hint(format: Format) -> &'static str {
    match format {
        Format::ClaudeDesktop | Format::ClaudeCode => {
            "that host's models are Anthropic's: for the agent, a profile with `provider: anthropic`, `base_url: https://api.anthropic.com/v1` and `api_key: ${ANTHROPIC_API_KEY}` (docs/agent.md, Providers)"
        }
        Format::Codex => {
            "Codex speaks OpenAI's Responses API: for the agent, a profile with `provider: openai-responses`, `base_url: https://api.openai.com/v1` and `api_key: ${OPENAI_API_KEY}` (docs/agent.md, Providers)"
        }
        Format::VsCode => {
            "for the agent, a profile's `provider:` follows its service: `anthropic` for Anthropic, `openai-responses` for OpenAI's reasoning models, `openai-chat` (the default) for any Chat Completions endpoint (docs/agent.md, Providers)"
        }
    }
}

/// Where the entries go: the config file, or (no config, only printing) an empty text.
enum Target {
    File(ConfigFile),
    Nowhere(YamlDoc),
}

impl Target {
    fn doc(&self) -> &YamlDoc {
        match self {
            Target::File(file) => file.doc(),
            Target::Nowhere(doc) => doc,
        }
    }

    fn append(&mut self, entry: &Value, notes: &[String]) -> Result<String, String> {
        match self {
            Target::File(file) => file
                .append(SERVERS, entry, notes)
                .map(|c| c.inserted)
                .map_err(|e| e.to_string()),
            Target::Nowhere(doc) => doc
                .append(SERVERS, entry, notes)
                .map(|c| c.inserted)
                .map_err(|e| e.to_string()),
        }
    }
}

pub fn run(explicit_config: Option<&Path>, args: ImportArgs) -> ExitCode {
    let fail = |message: String, code: u8| {
        output::error_line(&message);
        ExitCode::from(code)
    };
    let text = match std::fs::read_to_string(&args.file) {
        Ok(text) => text,
        Err(e) => {
            return fail(
                format!("error: {}: cannot read: {e}", args.file.display()),
                super::EXIT_CONFIG,
            )
        }
    };
    let config_path = match config::resolve_path(explicit_config) {
        Ok(path) => Some(path),
        Err(e) if e.kind() == ConfigErrorKind::NotFound && !args.write => None,
        Err(e) => {
            return fail(
                format!(
                    "error: {e}; with --write, --config FILE says where (it is created if missing)"
                ),
                super::EXIT_CONFIG,
            )
        }
    };
    // The config must load before anything is added to it.
    if let Some(path) = config_path.as_ref().filter(|p| p.exists()) {
        if let Err(e) = config::load(path) {
            let lead = if args.write {
                "error: the config does not load; fix it first:"
            } else {
                "note: the config does not load (the entries below are not checked against it):"
            };
            output::error_line(&format!("{lead}\n{}", e.report()));
            if args.write {
                return ExitCode::from(super::EXIT_CONFIG);
            }
        }
    }
    let mut target = match &config_path {
        Some(path) => match ConfigFile::open_or_new(path) {
            Ok(file) => Target::File(file),
            Err(e) => return fail(format!("error: {e}"), super::EXIT_CONFIG),
        },
        None => match YamlDoc::parse("") {
            Ok(doc) => Target::Nowhere(doc),
            Err(e) => return fail(format!("error: {e}"), 1),
        },
    };
    let existing: Vec<Value> = match target.doc().get(SERVERS) {
        Some(Value::Sequence(items)) => items.clone(),
        _ => Vec::new(),
    };
    let imported = match import::read(
        &args.file,
        &text,
        args.format.map(FormatArg::format),
        &existing,
    ) {
        Ok(imported) => imported,
        Err(e) => return fail(format!("error: {e}"), super::EXIT_CONFIG),
    };
    for (name, why) in &imported.skipped {
        output::error_line(&format!(
            "skipped {}: {why}",
            crate::text::sanitize_line(&format!("{name:?}"), 80)
        ));
    }
    for (name, there) in &imported.present {
        output::error_line(&format!(
            "already in the config: {} as {} (the same command, args, cwd and env, or url and headers); not added again",
            crate::text::sanitize_line(&format!("{name:?}"), 80),
            crate::text::sanitize_line(there, 80)
        ));
    }
    if imported.servers.is_empty() && !imported.present.is_empty() {
        output::error_line(&format!(
            "nothing to add: every server {} has is in the config already",
            args.file.display()
        ));
        return ExitCode::SUCCESS;
    }
    if imported.servers.is_empty() {
        return fail(
            format!(
                "error: {}: no server could be imported",
                args.file.display()
            ),
            super::EXIT_CONFIG,
        );
    }
    let mut added = String::new();
    for server in &imported.servers {
        match target.append(&server.entry, &server.notes) {
            Ok(text) => added.push_str(&text),
            Err(e) => return fail(format!("error: cannot add {}: {e}", server.name), 1),
        }
    }
    // What was added must load as config (variables not set here stand in as placeholders).
    let shown_path = config_path
        .clone()
        .unwrap_or_else(|| PathBuf::from(config::LOCAL_CONFIG_NAME));
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .or_else(|| Some("placeholder".into()))
    };
    if let Err(e) = config::load_str(&shown_path, target.doc().text(), &env) {
        return fail(
            format!(
                "error: the imported entries would not load:\n{}",
                e.report()
            ),
            1,
        );
    }
    if added.ends_with('\n') && !added.trim_start().starts_with(',') {
        output::print(&added);
    } else {
        // The config's list is in flow style (`[…]`): the entries go in as flow items, without
        // their notes. Show them whole.
        output::print(&import::as_yaml(&imported.servers));
        output::error_line(
            "note: the config's server list is written in flow style ([…]): the entries are added there as flow items, and their notes are not written",
        );
    }
    let names: Vec<&str> = imported.servers.iter().map(|s| s.name.as_str()).collect();
    output::error_line(&format!(
        "{} server{} from {} ({}): {}",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        args.file.display(),
        imported.format.as_str(),
        names.join(", ")
    ));
    output::error_line(&format!("note: {}", provider_hint(imported.format)));
    match (target, args.write) {
        (Target::File(file), true) => {
            let path = file.path().to_path_buf();
            match file.save() {
                Ok(_) => {
                    output::error_line(&format!(
                        "added to {}; `aimon-console check` starts them",
                        path.display()
                    ));
                    ExitCode::SUCCESS
                }
                Err(e) => fail(format!("error: {e}"), 1),
            }
        }
        (Target::File(file), false) => {
            output::error_line(&format!(
                "not written: add --write to append them to {}",
                file.path().display()
            ));
            ExitCode::SUCCESS
        }
        (Target::Nowhere(_), _) => {
            output::error_line(
                "not written: no config file found; `--write --config FILE` creates one",
            );
            ExitCode::SUCCESS
        }
    }
}
