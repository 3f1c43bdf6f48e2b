//! `aimon-console trust SERVER ignore|trust [--dry-run]`: the console's trust toggle without the
//! console. Starts that server alone to list its tools, prints the same preview the console
//! shows (which tools change side effect or destructiveness, and why), then writes
//! `annotation_trust` for it into the config file through the comment-preserving writer.
//! Exit 0 written (or nothing to change), 1 the file could not be written, 2 config error or no
//! such server.

use std::process::ExitCode;

use super::check::start_runtime;
use super::output::{self, Style};
use crate::config::{self, AnnotationTrust, Config};
use crate::runtime::{ServerStatus, TraitChange};
use crate::text::sanitize_line;
use crate::tool::{DestructiveBehavior, SideEffectLevel};

#[derive(clap::Args, Debug, Clone)]
pub struct TrustArgs {
    /// The server, as named in the config.
    pub server: String,
    /// The new trust: `ignore` (every tool mutating and destructive) or `trust` (the server's
    /// annotations decide).
    #[arg(value_parser = ["ignore", "trust"])]
    pub trust: String,
    /// Print the preview; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `MUTATING, destructive` and the like, as the console's preview writes them.
fn traits_label(traits: (SideEffectLevel, DestructiveBehavior)) -> String {
    let level = match traits.0 {
        SideEffectLevel::ReadOnly => "read-only",
        SideEffectLevel::Mutating => "MUTATING",
    };
    match traits.1 {
        DestructiveBehavior::Destructive => format!("{level}, destructive"),
        DestructiveBehavior::NonDestructive => level.to_string(),
    }
}

/// The preview's lines about the tools: how many change, and each change with its why.
fn changes_text(changes: &[TraitChange], tools: usize, style: Style) -> String {
    if tools == 0 {
        return "The server lists no tools now; the new trust applies to whatever it lists after a restart.\n".to_string();
    }
    if changes.is_empty() {
        return format!("None of its {tools} tools change side effect or destructiveness.\n");
    }
    let mut out = format!("{} of its {tools} tools change:\n", changes.len());
    for c in changes {
        let safer =
            c.after.0 == SideEffectLevel::ReadOnly && c.before.0 == SideEffectLevel::Mutating;
        let after = traits_label(c.after);
        let after = if safer {
            style.yellow(&after)
        } else {
            style.green(&after)
        };
        out.push_str(&format!(
            "  {}  {} → {after}\n      {}\n",
            sanitize_line(&c.tool, 120),
            traits_label(c.before),
            style.dim(&sanitize_line(&c.provenance, 200))
        ));
    }
    out
}

pub async fn run(mut config: Config, args: TrustArgs) -> ExitCode {
    let to = match args.trust.as_str() {
        "trust" => AnnotationTrust::Trust,
        _ => AnnotationTrust::Ignore,
    };
    let Some(entry) = config
        .mcp
        .servers
        .iter()
        .find(|s| s.name == args.server)
        .cloned()
    else {
        return super::no_such_server(&config, &args.server);
    };
    let style = Style::for_stdout();
    let from = entry.annotation_trust;
    output::print(&format!(
        "{}\n",
        style.bold(&format!(
            "Trust: {}  {} → {}",
            entry.name,
            from.as_str(),
            to.as_str()
        ))
    ));
    if from == to {
        output::print(&format!(
            "{} already has annotation_trust: {}; nothing to write.\n",
            entry.name,
            to.as_str()
        ));
        return ExitCode::SUCCESS;
    }
    // Only this server starts: its tools are what the preview is about.
    config.mcp.servers.retain(|s| s.name == args.server);
    let preview = if entry.enabled {
        let runtime = match start_runtime(&config, super::asks::AskArgs::default(), "trust").await {
            Ok(r) => r,
            Err(code) => return code,
        };
        let report = runtime.wait_for_server(&entry.name).await;
        let changes = runtime.preview_trust(&entry.name, to);
        runtime.close().await;
        match report {
            Some(r) if r.status == ServerStatus::Ready => changes_text(&changes, r.tools, style),
            Some(r) => format!(
                "{} did not start ({}), so there are no tools to preview; the new trust applies to whatever it lists once it starts.\n",
                entry.name,
                r.failure.as_ref().map_or("failed", |f| f.class.as_str())
            ),
            None => String::new(),
        }
    } else {
        format!(
            "{} is disabled, so its tools are not listed and there is nothing to preview; the new trust applies once it is enabled.\n",
            entry.name
        )
    };
    output::print(&preview);
    if to == AnnotationTrust::Trust {
        output::print(&format!(
            "\n{}\n",
            style.yellow("Trusting lets the server's own claims decide: a tool that says readOnlyHint runs without asking.")
        ));
    }
    output::print("\n");
    let file = config.path.display();
    if args.dry_run {
        output::print(&format!(
            "--dry-run: nothing written (would write annotation_trust: {} for {} into {file}).\n",
            to.as_str(),
            entry.name
        ));
        return ExitCode::SUCCESS;
    }
    match config::set_server_trust(&config.path, config.source_digest, &entry.name, to) {
        Ok(_) => {
            output::print(&format!(
                "Wrote annotation_trust: {} for {} into {file} (the rest of the file is kept as is).\n\
                 It takes effect when the server starts next (r on it, or R, in a running console).\n",
                to.as_str(),
                entry.name
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            output::error_line(&format!("error: {e}"));
            ExitCode::from(1)
        }
    }
}
