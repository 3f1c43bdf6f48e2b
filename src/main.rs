//! aimon-console: parse the command line, set up file logging, dispatch to a command. Nothing else.

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::process::ExitCode;

use aimon_console::cli::{self, ConfigArgs};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Terminal operator console for MCP tool servers.
#[derive(Parser, Debug)]
#[command(name = "aimon-console", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    config: ConfigArgs,
    #[command(flatten)]
    console: cli::console::ConsoleArgs,
    /// Log file (see the default below).
    #[arg(long, global = true, value_name = "FILE")]
    log_file: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Start every server, print the start-up report; exit 0 all ready, 1 any failed, 2 bad config.
    Check(cli::check::CheckArgs),
    /// Start every server and print the tool table with each tool's traits and why.
    Tools(cli::tools::ToolsArgs),
    /// Call one tool through the approval gate.
    Call(cli::call::CallArgs),
    /// What an agent request carries, in estimated tokens: system prompt, tools by server, history.
    Usage(cli::usage::UsageArgs),
    /// Be the one MCP server another host uses: every configured server's tools, through the gate.
    Serve(cli::serve::ServeArgs),
    /// Run the servers without a console, for consoles to attach to (docs/daemon.md).
    Daemon(cli::daemon::DaemonArgs),
    /// The console over a running daemon: its servers, calls, approvals and sessions; q detaches.
    Attach(cli::attach::AttachArgs),
    /// Print the bearer token hosts bring to `serve --http` (made on first use, kept owner-only).
    GatewayToken,
    /// Print the snippet that adds this gateway to another host's config (the inverse of import).
    Export(cli::export::ExportArgs),
    /// Start every server and print runtime events until a signal (or stdout closes).
    Watch(cli::watch::WatchArgs),
    /// List every resource and resource template of the ready servers.
    Resources(cli::resources::ResourcesArgs),
    /// Read one resource.
    Read(cli::resources::ReadArgs),
    /// List every prompt of the ready servers, with its arguments.
    Prompts(cli::prompts::PromptsArgs),
    /// Get one prompt's messages.
    Prompt(cli::prompts::PromptArgs),
    /// List the skills of the ready servers (SEP-2640), or load one (--load URI), verified.
    Skills(cli::skills::SkillsArgs),
    /// Ask the agent (the model of agent: in the config) one prompt; it calls tools through the gate.
    Run(cli::run::RunArgs),
    /// List the agent's conversations (transcripts), for `run --resume ID`.
    Sessions(cli::sessions::SessionsArgs),
    /// Log in to a Streamable HTTP server with OAuth (prints the URL; waits for the browser).
    Login(cli::login::LoginArgs),
    /// Forget a server's OAuth login (deletes its stored tokens).
    Logout(cli::logout::LogoutArgs),
    /// Print (or with --write append) the servers of a Claude, VS Code or Codex config as entries of this one.
    Import(cli::import::ImportArgs),
    /// Preview and write a server's annotation_trust (ignore or trust) into the config.
    Trust(cli::trust::TrustArgs),
    /// Set a server's `enabled: true` in the config.
    Enable(cli::enable::ServerArg),
    /// Set a server's `enabled: false` in the config: listed, never started.
    Disable(cli::enable::ServerArg),
    /// Run the built-in demo MCP server on stdio or HTTP (for config.example.yaml and tests).
    DemoServer(cli::demo_server::DemoServerArgs),
    /// Run the built-in demo model: an OpenAI-compatible endpoint on loopback, by fixed rules.
    DemoModel(cli::demo_model::DemoModelArgs),
    /// The client under test of the MCP conformance suite (`.ci/run`).
    #[command(hide = true)]
    Conformance(cli::conformance::ConformanceArgs),
}

fn default_log_file() -> PathBuf {
    aimon_console::config::state_home().join("aimon-console.log")
}

/// Lines the log writer's queue holds (see `init_logging`).
const LOG_QUEUE_LINES: usize = 8_192;

/// Logs go to a file, never to the screen; the guard flushes on drop.
fn init_logging(path: &PathBuf) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    // Owner-only, as everything this program keeps for itself (a folder made here 0700, a
    // file made here 0600): a log names servers, tools and what they answered.
    let dir = path.parent()?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .ok()?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .ok()?;
    // The writer thread's queue is allocated whole up front: 128,000 lines by default (4 MiB
    // resident in every process, servers included). 8,192 lines (256 KiB) is plenty for a
    // file that keeps up; past it a burst drops lines rather than blocking the console.
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .finish(file);
    let filter = tracing_subscriber::EnvFilter::try_from_env("AIMON_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(guard)
}

fn main() -> ExitCode {
    let log_default = default_log_file();
    let command = Cli::command().after_help(format!(
        "Logs go to {} (--log-file overrides; AIMON_LOG sets the level, e.g. debug).\n\
         With no command, opens the console (on a terminal; elsewhere prints the `check` report).",
        log_default.display()
    ));
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };

    if let Some(Command::DemoServer(args)) = cli.command {
        // The demo server's stdout is the protocol; it logs only where asked.
        let _guard = cli.log_file.as_ref().and_then(init_logging);
        return match cli::demo_server::run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                cli::output::error_line(&format!("demo-server: {e:#}"));
                ExitCode::from(1)
            }
        };
    }

    if let Some(Command::DemoModel(args)) = cli.command {
        let _guard = cli.log_file.as_ref().and_then(init_logging);
        return match cli::demo_model::run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                cli::output::error_line(&format!("demo-model: {e:#}"));
                ExitCode::from(1)
            }
        };
    }

    let _guard = init_logging(cli.log_file.as_ref().unwrap_or(&log_default));
    let command = match cli.command {
        // The conformance client needs no config file.
        Some(Command::Conformance(args)) => {
            return block_on(async move { cli::conformance::run(args).await })
        }
        // Sessions are files of their own; no config needed.
        Some(Command::Sessions(args)) => return cli::sessions::run(args),
        Some(Command::GatewayToken) => return cli::serve::print_token(),
        // Import may create the config file.
        Some(Command::Import(args)) => return cli::import::run(cli.config.config.as_deref(), args),
        other => other,
    };
    let explicit = cli.config.config.as_deref();
    let loaded = match command {
        // The servers are the daemon's: a console attaches with no config file too.
        Some(Command::Attach(_)) => cli::attach::load_config(explicit),
        _ => cli::load_config(explicit),
    };
    let config = match loaded {
        Ok(c) => c,
        Err(code) => return code,
    };
    block_on(async move {
        match command {
            // On a terminal the console; elsewhere (a pipe, CI) the start-up report instead of
            // a screen, its options checked first either way.
            None => cli::console::run(config, cli.console).await,
            Some(Command::Check(args)) => cli::check::run(config, args).await,
            Some(Command::Tools(args)) => cli::tools::run(config, args).await,
            Some(Command::Call(args)) => cli::call::run(config, args).await,
            Some(Command::Usage(args)) => cli::usage::run(config, args).await,
            Some(Command::Serve(args)) => cli::serve::run(config, args).await,
            Some(Command::Daemon(args)) => cli::daemon::run(config, args).await,
            Some(Command::Attach(args)) => cli::attach::run(config, args).await,
            Some(Command::Export(args)) => cli::export::run(&config, args),
            Some(Command::Watch(args)) => cli::watch::run(config, args).await,
            Some(Command::Resources(args)) => cli::resources::run_list(config, args).await,
            Some(Command::Read(args)) => cli::resources::run_read(config, args).await,
            Some(Command::Skills(args)) => cli::skills::run(config, args).await,
            Some(Command::Prompts(args)) => cli::prompts::run_list(config, args).await,
            Some(Command::Prompt(args)) => cli::prompts::run_get(config, args).await,
            Some(Command::Run(args)) => cli::run::run(config, args).await,
            Some(Command::Login(args)) => cli::login::run(config, args).await,
            Some(Command::Logout(args)) => cli::logout::run(config, args).await,
            Some(Command::Trust(args)) => cli::trust::run(config, args).await,
            Some(Command::Enable(args)) => cli::enable::run(config, args, true),
            Some(Command::Disable(args)) => cli::enable::run(config, args, false),
            Some(
                Command::DemoServer(_)
                | Command::DemoModel(_)
                | Command::Conformance(_)
                | Command::Import(_)
                | Command::GatewayToken
                | Command::Sessions(_),
            ) => ExitCode::SUCCESS,
        }
    })
}

/// Runs a command on the async runtime.
///
/// One thread: the console's work is waiting on pipes and sockets, and on 2 cores the wake-ups
/// between worker threads cost more than they give (`cargo bench -- call/demo`: sequential calls
/// through the whole stack at 0.80x the bare pipe loop on one thread, 0.64x on the multi-thread
/// runtime, same run). Blocking work goes to `spawn_blocking` as before.
///
/// The command runs as a task, not as the future `block_on` polls: on this runtime a task that
/// wakes that future makes the scheduler poll the OS for events first (one more `epoll_wait` a
/// wake-up: two a model turn of `run`), while waking a task is a push to its queue.
fn block_on(command: impl std::future::Future<Output = ExitCode> + Send + 'static) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            cli::output::error_line(&format!("error: cannot start the async runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    let task = runtime.spawn(command);
    let code = match runtime.block_on(task) {
        Ok(code) => code,
        Err(e) => match e.try_into_panic() {
            // The panic hook has restored the terminal and said where; the process ends as a
            // panic would have ended it.
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => {
                cli::output::error_line(&format!("error: the command was cancelled: {e}"));
                ExitCode::from(1)
            }
        },
    };
    // Anything still running (abandoned starts) is dropped here, which kills its process group.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    code
}
