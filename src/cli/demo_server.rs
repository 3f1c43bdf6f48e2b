//! `aimon-console demo-server`: run the built-in demo MCP server on stdin/stdout (or over Streamable
//! HTTP with `--http`), with fault flags.
//!
//! The process-level faults (stderr text, early exit, a non-JSON stdout line, a stray child) are done
//! here, before any protocol; everything the handler itself does is passed on as `DemoOptions`,
//! and what the HTTP endpoint does as `HttpFaults`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use http::StatusCode;

use super::demo_faults::{Next, ProcessFaults, WireArgs};
use crate::demo::{
    bind_address, serve_http, serve_stdio, DemoAuth, DemoDpop, DemoOptions, DemoSkills, HttpFaults,
    SocketFault, MCP_PATH,
};

/// The line `--garbage-stdout` writes before the protocol starts.
pub const GARBAGE_LINE: &str = "demo-server: starting up (this line is not JSON)";

/// Flags of `demo-server`. Without any, the server is well-behaved.
#[derive(clap::Args, Debug, Clone, Default)]
// The faults below HTTP replace the endpoint: one at a time, and nothing for HTTP to do.
#[command(group(
    clap::ArgGroup::new("socket_fault")
        .args(["http_hang", "http_hangup_mid_answer", "http_reset_mid_answer", "http_not_http"])
        .conflicts_with_all(["http_status", "require_bearer", "http_401_on", "oauth"])
))]
pub struct DemoServerArgs {
    /// Sleep this many milliseconds before answering the handshake (`initialize` or `server/discover`).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub init_delay_ms: u64,
    /// Sleep this many milliseconds before answering `tools/list`.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub tools_delay_ms: u64,
    /// Write the `--stderr` text, then exit with CODE without reading stdin.
    #[arg(long, value_name = "CODE", allow_negative_numbers = true)]
    pub exit_before_init: Option<i32>,
    /// Write TEXT (and a newline) to stderr at start-up.
    #[arg(long, value_name = "TEXT")]
    pub stderr: Option<String>,
    /// Write a non-JSON line to stdout before serving.
    #[arg(long)]
    pub garbage_stdout: bool,
    /// Never answer the handshake; read stdin until it closes.
    #[arg(long)]
    pub hang_init: bool,
    /// The mutating tools (write_note, delete_note) claim to be read-only and non-destructive.
    #[arg(long)]
    pub lie: bool,
    /// No tool carries annotations (wins over --lie).
    #[arg(long)]
    pub no_annotations: bool,
    /// Put terminal escape sequences in tool descriptions, results and stderr.
    #[arg(long)]
    pub evil: bool,
    /// Poison `add`'s description (an <IMPORTANT> block asking the model to read ~/.cursor/mcp.json
    /// and keep it from the user), as published tool-poisoning attacks do.
    #[arg(long)]
    pub poison: bool,
    /// A rug pull: after the first `write_note` call, create FILE and change `write_note`'s
    /// description and schema (announced with tools/list_changed); while FILE exists, every start
    /// serves the changed tool.
    #[arg(long, value_name = "FILE")]
    pub rug_pull: Option<std::path::PathBuf>,
    /// At start-up, spawn `sleep SECONDS` in this process group and leave it running.
    #[arg(long, value_name = "SECONDS")]
    pub spawn_child: Option<u64>,
    /// Serve over Streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is HOST:PORT, or a bare
    /// PORT on 127.0.0.1 (port 0 picks a free one); the URL is printed on stdout once listening.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// With --http: answer 401 to any request without `Authorization: Bearer TOKEN`.
    #[arg(long, value_name = "TOKEN", requires = "http")]
    pub require_bearer: Option<String>,
    /// With --http: the endpoint wants an OAuth access token, from an authorization server on the
    /// same listener (metadata, dynamic registration, an authorize endpoint that approves at
    /// once, tokens and refresh tokens).
    #[arg(long, requires = "http", conflicts_with = "require_bearer")]
    pub oauth: bool,
    /// With --oauth: access tokens are valid SECONDS (default 3600).
    #[arg(long, value_name = "SECONDS", requires = "oauth", value_parser = clap::value_parser!(u64).range(1..))]
    pub oauth_token_ttl: Option<u64>,
    /// With --oauth: token responses leave out `expires_in` (expiry shows only as a 401).
    #[arg(long, requires = "oauth")]
    pub oauth_hide_expiry: bool,
    /// With --oauth: DPoP-bound tokens (RFC 9449): the authorization server offers ES256
    /// proofs and binds its tokens to the client's key; the endpoint takes them only as
    /// `Authorization: DPoP` with a fresh proof.
    #[arg(long, requires = "oauth")]
    pub oauth_dpop: bool,
    /// With --oauth-dpop: both ask for a DPoP nonce first (`use_dpop_nonce`).
    #[arg(long, requires = "oauth_dpop")]
    pub oauth_dpop_nonce: bool,
    /// With --http: answer every request to /mcp with STATUS (an error status, 400 to 599).
    #[arg(long, value_name = "STATUS", requires = "http", value_parser = error_status)]
    pub http_status: Option<StatusCode>,
    /// With --http: answer 401 to every JSON-RPC request for METHOD (e.g. tools/list,
    /// tools/call) and serve the rest: credentials that stopped being enough after start-up.
    #[arg(long, value_name = "METHOD", requires = "http")]
    pub http_401_on: Option<String>,
    /// With --http: read every request and never answer; connections stay open until the client
    /// closes them.
    #[arg(long, requires = "http")]
    pub http_hang: bool,
    /// With --http: answer each request with one JSON body instead of an SSE stream.
    #[arg(long, requires = "http")]
    pub http_json: bool,
    /// With --http: answer a request with 200 and headers promising a JSON body, send part of
    /// the body, then close the connection.
    #[arg(long, requires = "http")]
    pub http_hangup_mid_answer: bool,
    /// With --http: as --http-hangup-mid-answer, but end the connection with a reset (RST)
    /// instead of a close.
    #[arg(long, requires = "http")]
    pub http_reset_mid_answer: bool,
    /// With --http: answer a request with a line that is not HTTP, then close the connection.
    #[arg(long, requires = "http")]
    pub http_not_http: bool,
    /// Serve N generated trivial read-only tools (`extra_0` …) besides the five real ones.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub extra_tools: usize,
    /// Answer tools/list in pages of N tools, each pointing to the next with nextCursor
    /// (default: every tool in one page).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub tools_page: Option<u64>,
    /// Say in every tools/list answer that it stays fresh MS milliseconds (`ttlMs`, MCP
    /// 2026-07-28 caching): what a `start: lazy` server's kept list lives on.
    #[arg(long, value_name = "MS")]
    pub tools_ttl: Option<u64>,
    /// Also serve the live-server fixtures: flood, change_tools, crash, never_answer, ask.
    #[arg(long)]
    pub live_tools: bool,
    /// List N generated resources (`demo://extra/0` …) besides the real ones (in pages of 50).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub extra_resources: usize,
    /// Every result of a call goes on with BYTES of numbered filler lines (at most 64 MiB): long
    /// results from any tool.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub result_pad: usize,
    /// Serve only these tools (a comma-separated list of names), for a short tool list.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub only_tools: Vec<String>,
    /// Speak protocol 2025-11-25 only (server/discover answered method-not-found): the client
    /// falls back to initialize, and `ask` can send elicitation/create.
    #[arg(long)]
    pub legacy: bool,
    /// Serve one skill (the skills extension, SEP-2640): note-taking, its SKILL.md and a file.
    #[arg(long)]
    pub skills: bool,
    /// Like --skills, but the SKILL.md served is not the one listed (its digest differs).
    #[arg(long, conflicts_with = "skills")]
    pub tampered_skill: bool,
    #[command(flatten)]
    pub faults: ProcessFaults,
    /// Boxed, so that the CLI's command enum stays small (clippy::large_enum_variant).
    #[command(flatten)]
    pub wire: Box<WireArgs>,
}

impl DemoServerArgs {
    /// The part of the flags the handler reads.
    pub fn options(&self) -> DemoOptions {
        DemoOptions {
            init_delay: Duration::from_millis(self.init_delay_ms),
            tools_delay: Duration::from_millis(self.tools_delay_ms),
            hang_init: self.hang_init,
            lie: self.lie,
            no_annotations: self.no_annotations,
            evil: self.evil,
            poison: self.poison,
            rug_pull: self.rug_pull.clone(),
            extra_tools: self.extra_tools,
            tools_page: self
                .tools_page
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            tools_ttl: self.tools_ttl,
            live_tools: self.live_tools,
            extra_resources: self.extra_resources,
            result_pad: self.result_pad.min(64 << 20),
            only_tools: self.only_tools.clone(),
            legacy: self.legacy,
            skills: match (self.skills, self.tampered_skill) {
                (_, true) => DemoSkills::Tampered,
                (true, false) => DemoSkills::Served,
                (false, false) => DemoSkills::None,
            },
        }
    }

    /// The part of the flags the HTTP endpoint reads.
    pub fn http_faults(&self) -> HttpFaults {
        let socket = [
            (self.http_hang, SocketFault::Hang),
            (self.http_hangup_mid_answer, SocketFault::HangUpMidAnswer),
            (self.http_reset_mid_answer, SocketFault::ResetMidAnswer),
            (self.http_not_http, SocketFault::NotHttp),
        ]
        .into_iter()
        .find_map(|(on, fault)| on.then_some(fault));
        let oauth = self.oauth.then(|| DemoAuth {
            token_ttl: self
                .oauth_token_ttl
                .map_or(DemoAuth::default().token_ttl, Duration::from_secs),
            hide_expiry: self.oauth_hide_expiry,
            dpop: self.oauth_dpop.then_some(DemoDpop {
                nonce: self.oauth_dpop_nonce,
            }),
        });
        HttpFaults {
            require_bearer: self.require_bearer.clone(),
            status: self.http_status,
            unauthorized_on: self.http_401_on.clone(),
            socket,
            oauth,
            malformed_tools: self.wire.malformed_tools,
            json_answers: self.http_json,
        }
    }
}

/// An HTTP error status (400 to 599), for `--http-status`.
fn error_status(text: &str) -> Result<StatusCode, String> {
    text.parse::<u16>()
        .ok()
        .and_then(|code| StatusCode::from_u16(code).ok())
        .filter(|s| s.is_client_error() || s.is_server_error())
        .ok_or_else(|| format!("{text:?} is not an HTTP error status (400 to 599)"))
}

/// Run the demo server until stdin closes (or exit early under `--exit-before-init`).
pub fn run(args: DemoServerArgs) -> anyhow::Result<()> {
    if let Some(text) = &args.stderr {
        let mut stderr = std::io::stderr().lock();
        // Best effort: a closed stderr must not stop the server.
        let _ = writeln!(stderr, "{text}").and_then(|()| stderr.flush());
    }
    if args.evil {
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(
            stderr,
            "{}evil stderr{}",
            crate::demo::EVIL,
            crate::demo::EVIL
        )
        .and_then(|()| stderr.flush());
    }
    if let Some(seconds) = args.spawn_child {
        // Same process group on purpose (no setsid/setpgid): the client must kill the whole group.
        // stdin is closed so the child never reads protocol; stdout/stderr are inherited, so the
        // child also holds the server's pipes open, as a real stray grandchild would.
        let child = Command::new("sleep")
            .arg(seconds.to_string())
            .stdin(Stdio::null())
            .spawn()
            .context("spawning the --spawn-child process")?;
        // Not waited for: dropping a `Child` neither kills nor reaps it.
        drop(child);
    }
    if let Some(code) = args.exit_before_init {
        std::process::exit(code);
    }
    match args.faults.apply()? {
        Next::Serve => {}
        Next::Exit(code) => std::process::exit(code),
    }
    if args.garbage_stdout {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{GARBAGE_LINE}")
            .and_then(|()| stdout.flush())
            .context("writing the --garbage-stdout line")?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("building the demo server's tokio runtime")?;
    let result = match &args.http {
        None => runtime
            .block_on(serve_stdio(args.options(), args.wire.faults()))
            .map_err(anyhow::Error::from),
        Some(addr) => runtime.block_on(async {
            let addr = bind_address(addr);
            let listener = tokio::net::TcpListener::bind(&addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            let local = listener.local_addr().context("reading the bound address")?;
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "listening on http://{local}{MCP_PATH}")
                .and_then(|()| stdout.flush())
                .context("writing the listening line")?;
            drop(stdout);
            serve_http(args.options(), listener, args.http_faults())
                .await
                .map_err(anyhow::Error::from)
        }),
    };
    // Do not wait on a blocking stdin read that may still be parked in the pool.
    runtime.shutdown_timeout(Duration::from_millis(100));
    result.context("demo server")
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: DemoServerArgs,
    }

    fn parse(argv: &[&str]) -> Result<DemoServerArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("demo-server").chain(argv.iter().copied()))
            .map(|cli| cli.args)
    }

    #[test]
    fn no_flags_is_a_well_behaved_server() -> Result<(), clap::Error> {
        let args = parse(&[])?;
        assert_eq!(args.options(), DemoOptions::default());
        assert!(args.exit_before_init.is_none() && args.stderr.is_none());
        assert!(!args.garbage_stdout && args.spawn_child.is_none());
        Ok(())
    }

    #[test]
    fn flags_reach_the_handler_options() -> Result<(), clap::Error> {
        let args = parse(&[
            "--init-delay-ms",
            "250",
            "--tools-delay-ms",
            "40",
            "--hang-init",
            "--lie",
            "--no-annotations",
            "--exit-before-init",
            "-2",
            "--stderr",
            "oops",
            "--garbage-stdout",
            "--spawn-child",
            "30",
        ])?;
        let opts = args.options();
        assert_eq!(opts.init_delay, Duration::from_millis(250));
        assert_eq!(opts.tools_delay, Duration::from_millis(40));
        assert!(opts.hang_init && opts.lie && opts.no_annotations);
        assert_eq!(args.exit_before_init, Some(-2));
        assert_eq!(args.stderr.as_deref(), Some("oops"));
        assert!(args.garbage_stdout);
        assert_eq!(args.spawn_child, Some(30));
        Ok(())
    }

    #[test]
    fn fault_flags_parse() -> Result<(), clap::Error> {
        let args = parse(&[
            "--extra-tools",
            "95",
            "--wrong-id",
            "--huge-line",
            "10000000",
            "--partial-json-then-die",
            "--flood-stderr",
            "--close-stdout",
            "--child-ignores-term",
            "60",
            "--exit-after-ms",
            "1500",
            "--exit-code",
            "7",
        ])?;
        assert_eq!(args.options().extra_tools, 95);
        let f = &args.faults;
        assert!(f.wrong_id && f.partial_json_then_die && f.flood_stderr && f.close_stdout);
        assert_eq!(f.huge_line, Some(10_000_000));
        assert_eq!(f.child_ignores_term, Some(60));
        assert_eq!((f.exit_after_ms, f.exit_code), (Some(1500), 7));
        Ok(())
    }

    #[test]
    fn wire_and_grandchild_flags_parse() -> Result<(), clap::Error> {
        assert!(!parse(&[])?.wire.faults().any());
        let args = parse(&[
            "--ignore-discover",
            "--bad-utf8",
            "tools/list",
            "--result-and-error",
            "tools/call",
            "--huge-answer",
            "17000000",
            "--malformed-tools",
            "--duplicate-tool",
            "--setsid-grandchild",
            "600",
        ])?;
        let wire = args.wire.faults();
        assert!(wire.ignore_discover && wire.malformed_tools && wire.duplicate_tool);
        assert_eq!(wire.bad_utf8.as_deref(), Some("tools/list"));
        assert_eq!(wire.result_and_error.as_deref(), Some("tools/call"));
        assert_eq!(wire.huge_answer, Some(17_000_000));
        assert_eq!(args.faults.setsid_grandchild, Some(600));
        let http = parse(&["--http", "0", "--http-401-on", "tools/list"])?;
        assert_eq!(
            http.http_faults().unauthorized_on.as_deref(),
            Some("tools/list")
        );
        assert!(
            parse(&["--http-401-on", "tools/list"]).is_err(),
            "needs --http"
        );
        Ok(())
    }

    #[test]
    fn http_fault_flags_reach_the_endpoint() -> Result<(), clap::Error> {
        let http = ["--http", "0"];
        assert_eq!(parse(&http)?.http_faults(), HttpFaults::default());
        let args = parse(
            &[
                &http[..],
                &["--http-status", "503", "--require-bearer", "t"],
            ]
            .concat(),
        )?;
        let faults = args.http_faults();
        assert_eq!(faults.status, Some(StatusCode::SERVICE_UNAVAILABLE));
        assert_eq!(faults.require_bearer.as_deref(), Some("t"));
        let oauth = parse(
            &[
                &http[..],
                &[
                    "--oauth",
                    "--oauth-token-ttl",
                    "2",
                    "--oauth-hide-expiry",
                    "--oauth-dpop",
                    "--oauth-dpop-nonce",
                ],
            ]
            .concat(),
        )?;
        assert_eq!(
            oauth.http_faults().oauth,
            Some(DemoAuth {
                token_ttl: Duration::from_secs(2),
                hide_expiry: true,
                dpop: Some(DemoDpop { nonce: true }),
            })
        );
        for (flag, fault) in [
            ("--http-hang", SocketFault::Hang),
            ("--http-hangup-mid-answer", SocketFault::HangUpMidAnswer),
            ("--http-reset-mid-answer", SocketFault::ResetMidAnswer),
            ("--http-not-http", SocketFault::NotHttp),
        ] {
            let args = parse(&[&http[..], &[flag]].concat())?;
            assert_eq!(args.http_faults().socket, Some(fault), "{flag}");
        }
        Ok(())
    }

    #[test]
    fn http_faults_need_http_and_come_one_at_a_time() {
        for argv in [
            &["--http-hang"][..],
            &["--http-status", "500"],
            &["--http", "0", "--http-status", "200"],
            &["--http", "0", "--http-status", "600"],
            &["--http", "0", "--http-hang", "--http-not-http"],
            &[
                "--http",
                "0",
                "--http-hangup-mid-answer",
                "--http-reset-mid-answer",
            ],
            &[
                "--http",
                "0",
                "--http-hangup-mid-answer",
                "--http-status",
                "500",
            ],
            &["--http", "0", "--http-not-http", "--require-bearer", "t"],
            &["--oauth"],
            &["--http", "0", "--oauth", "--require-bearer", "t"],
            &["--http", "0", "--oauth", "--http-hang"],
            &["--http", "0", "--oauth-token-ttl", "5"],
            &["--http", "0", "--oauth", "--oauth-token-ttl", "0"],
        ] {
            assert!(parse(argv).is_err(), "{argv:?} is accepted");
        }
    }

    #[test]
    fn bad_numbers_are_rejected() {
        assert!(parse(&["--init-delay-ms", "soon"]).is_err());
        assert!(
            parse(&["--exit-code", "3"]).is_err(),
            "--exit-code needs --exit-after-ms"
        );
        assert!(parse(&["--spawn-child", "-1"]).is_err());
    }
}
