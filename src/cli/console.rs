//! `aimon-console [--model NAME] [--resume ID]`: the console (the default command). Its agent
//! options are checked here, before the terminal is taken and before the fallback off a
//! terminal (the `check` report): an unknown profile or session is a config error (exit 2)
//! either way, as for `run`. A resumed session continues with the profile `run` would take.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use super::output;
use crate::agent::profile::profile_choice;
use crate::agent::transcript;
use crate::config::Config;
use crate::tui::{ConsoleOptions, Serving};

/// The console's own options (with no command).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ConsoleArgs {
    /// The console's agent profile (a name in agent.models; default: agent.default).
    #[arg(long = "model", value_name = "NAME")]
    pub model: Option<String>,
    /// Continue the agent's conversation of session ID in the console (see `sessions`).
    #[arg(long = "resume", value_name = "ID")]
    pub resume: Option<String>,
    /// Also serve other MCP hosts at http://ADDR/mcp (HOST:PORT, or a bare PORT on 127.0.0.1):
    /// their calls show in Calls and ask in the approval modal (bearer token: gateway-token).
    #[arg(long = "serve-http", value_name = "ADDR")]
    pub serve_http: Option<String>,
}

/// Checks the options against the config, then runs the console on a terminal, or prints the
/// start-up report elsewhere (a pipe, CI).
pub async fn run(config: Config, args: ConsoleArgs) -> ExitCode {
    match check(&config, &args) {
        Ok(options) if std::io::stdout().is_terminal() => crate::tui::run(config, options).await,
        Ok(_) => super::check::run(config, super::check::CheckArgs::default()).await,
        Err(message) => {
            output::error_line(&message);
            ExitCode::from(super::EXIT_CONFIG)
        }
    }
}

fn check(config: &Config, args: &ConsoleArgs) -> Result<ConsoleOptions, String> {
    // `--serve-http` first, else the config's `gateway.listen`.
    let listen = match (&args.serve_http, &config.gateway.listen) {
        (Some(addr), _) => Some(("--serve-http", addr)),
        (None, Some(addr)) => Some(("gateway.listen", addr)),
        (None, None) => None,
    };
    let serving = match listen {
        None => None,
        Some((from, addr)) => Some(Arc::new(serving(from, addr)?)),
    };
    if args.model.is_none() && args.resume.is_none() {
        return Ok(ConsoleOptions {
            serving,
            ..ConsoleOptions::default()
        });
    }
    let Some(agent) = &config.agent else {
        return Err(format!(
            "{}: no agent: section: --model and --resume need one (see docs/agent.md)",
            config.path.display()
        ));
    };
    let choice = profile_choice(
        agent,
        &transcript::sessions_dir(),
        args.model.as_deref(),
        args.resume.as_deref(),
    )
    .map_err(|e| format!("error: {e}"))?;
    Ok(ConsoleOptions {
        model: Some(choice.profile.name),
        resume: args.resume.clone(),
        why: choice.why,
        serving,
        attach: Vec::new(),
    })
}

/// The socket `--serve-http ADDR` (or `gateway.listen`, named by `from`) asks for, bound
/// before the console starts (a port in use is said on the command line), and the token hosts
/// bring.
fn serving(from: &str, addr: &str) -> Result<Serving, String> {
    let addr = crate::net::bind_address(addr);
    let listener = std::net::TcpListener::bind(&addr)
        .map_err(|e| format!("error: {from}: cannot listen on {addr}: {e}"))?;
    let token = crate::runtime::gateway_token()
        .map_err(|e| format!("error: {from}: no gateway token: {e}"))?;
    Ok(Serving { listener, token })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{AgentConfig, ModelProfile, PolicyConfig};

    #[test]
    fn unknown_profiles_and_sessions_are_refused_before_the_console_starts() {
        let mut config = Config::from_servers(Vec::new(), PolicyConfig::default());
        let args = ConsoleArgs {
            model: Some("nope".into()),
            serve_http: None,
            resume: None,
        };
        assert!(check(&config, &args)
            .expect_err("no agent")
            .contains("no agent: section"));
        let profile = ModelProfile::url("demo", "http://127.0.0.1:1/v1", "demo");
        config.agent = Some(AgentConfig {
            default: "demo".into(),
            profiles: [("demo".to_string(), profile)].into_iter().collect(),
        });
        let err = check(&config, &args).expect_err("unknown profile");
        assert!(err.contains("nope"), "{err}");
        let ok = ConsoleArgs {
            model: Some("demo".into()),
            serve_http: None,
            resume: None,
        };
        assert_eq!(
            check(&config, &ok).expect("known").model.as_deref(),
            Some("demo")
        );
        let bad_id = ConsoleArgs {
            model: None,
            serve_http: None,
            resume: Some("../etc/passwd".into()),
        };
        assert!(check(&config, &bad_id).is_err());
        assert!(check(&config, &ConsoleArgs::default()).is_ok());
    }
}
