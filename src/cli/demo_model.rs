//! `aimon-console demo-model`: the built-in model endpoint on loopback, speaking one provider's
//! wire (`--wire`), with its rules (`--script`, `--prefer-server`) and fault flags. Prints `listening on URL` (the
//! base URL, `…/v1`) on its first stdout line, which is what a profile's `command:` reads.

use std::io::Write;
use std::time::Duration;

use anyhow::Context;
use http::StatusCode;

use crate::demo::{bind_address, serve_model, DemoWire, ModelFaults, ModelRules, ScriptTurn};

/// Flags of `demo-model`. Without any, it answers by its rules.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DemoModelArgs {
    /// Listen on ADDR: HOST:PORT, or a bare PORT on 127.0.0.1 (0, the default, picks a free one).
    #[arg(long, value_name = "ADDR", default_value = "0")]
    pub listen: String,
    /// The API to speak: chat (Chat Completions, POST /v1/chat/completions), anthropic (the
    /// Messages API, POST /v1/messages) or responses (OpenAI's Responses API, POST
    /// /v1/responses).
    #[arg(long, value_name = "WIRE", default_value = "chat", value_parser = wire)]
    pub wire: DemoWire,
    /// Each answer carries reasoning (a thinking block with its signature, a reasoning item
    /// with encrypted content), and a request that sends an answer with tool calls back without
    /// it is refused (400), as Anthropic's API does with thinking on. Not for --wire chat.
    #[arg(long)]
    pub reasoning: bool,
    /// Replay this script (a JSON array of turns: {"text", "tool_calls": [{"name", "arguments"}]});
    /// answer N of a conversation is turn N, the rules after the last.
    #[arg(long, value_name = "FILE")]
    pub script: Option<std::path::PathBuf>,
    /// Among tools of the same name on several servers, call this server's.
    #[arg(long, value_name = "SERVER")]
    pub prefer_server: Option<String>,
    /// Answer requests with this HTTP status (400 to 599) and a JSON error.
    #[arg(long, value_name = "N", value_parser = error_status)]
    pub status: Option<StatusCode>,
    /// With --status: only the first N requests get it, then it answers normally.
    #[arg(long, value_name = "N", requires = "status")]
    pub times: Option<u32>,
    /// With --status: send `Retry-After: S`.
    #[arg(long, value_name = "S", requires = "status")]
    pub retry_after: Option<u64>,
    /// Answer a streamed request with 200 and an empty body.
    #[arg(long)]
    pub empty_stream: bool,
    /// Make the second chunk of a streamed answer something that is not JSON.
    #[arg(long)]
    pub malformed_chunk: bool,
    /// Drop the connection in the middle of a streamed answer, before its finish reason.
    #[arg(long)]
    pub cut_stream: bool,
    /// End a streamed answer cleanly after its first two events, without its finish reason or
    /// its end.
    #[arg(long)]
    pub unfinished_stream: bool,
    /// After the first event of a streamed answer, start one that never ends: a byte every
    /// 200 ms, forever.
    #[arg(long)]
    pub drip_stream: bool,
    /// Read requests and never answer.
    #[arg(long)]
    pub hang: bool,
    /// The first answer to each prompt calls a tool that does not exist.
    #[arg(long)]
    pub invent_tool: bool,
    /// The first answer to each prompt sends tool arguments that are not JSON.
    #[arg(long)]
    pub bad_arguments: bool,
    /// Call a tool in every answer, forever (the agent's max_turns stops it).
    #[arg(long)]
    pub loop_tools: bool,
    /// Answer 401 to requests without the key: `Authorization: Bearer KEY` (`x-api-key: KEY`
    /// with --wire anthropic).
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,
    /// Wait this many milliseconds between two chunks of a streamed answer (with
    /// --tokens-per-sec: before the first).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub chunk_delay_ms: u64,
    /// Send the chunks of a streamed answer (a word each) at this many a second.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub tokens_per_sec: Option<u32>,
    /// An answer no rule gives (the introduction) is N words long instead.
    #[arg(long, value_name = "WORDS")]
    pub long_answer: Option<usize>,
}

fn wire(text: &str) -> Result<DemoWire, String> {
    DemoWire::named(text)
        .ok_or_else(|| format!("{text:?} is not a wire: chat, anthropic or responses"))
}

fn error_status(text: &str) -> Result<StatusCode, String> {
    let code: u16 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    match StatusCode::from_u16(code) {
        Ok(status) if (400..=599).contains(&code) => Ok(status),
        _ => Err(format!("{code} is not an error status (400 to 599)")),
    }
}

/// Runs the demo model until the process is stopped.
pub fn run(args: DemoModelArgs) -> anyhow::Result<()> {
    let script = match &args.script {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the script {}", path.display()))?;
            let turns: Vec<ScriptTurn> = serde_json::from_str(&text)
                .with_context(|| format!("the script {} is not a list of turns", path.display()))?;
            Some(turns)
        }
        None => None,
    };
    let rules = ModelRules {
        script,
        prefer_server: args.prefer_server.clone(),
        invent_tool: args.invent_tool,
        bad_arguments: args.bad_arguments,
        loop_tools: args.loop_tools,
        long_answer: args.long_answer,
        reasoning: args.reasoning,
    };
    let faults = ModelFaults {
        status: args.status,
        status_times: args.times,
        retry_after: args.retry_after,
        empty_stream: args.empty_stream,
        malformed_chunk: args.malformed_chunk,
        cut_stream: args.cut_stream,
        unfinished_stream: args.unfinished_stream,
        drip_stream: args.drip_stream,
        hang: args.hang,
        api_key: args.api_key.clone(),
        chunk_delay: Duration::from_millis(args.chunk_delay_ms),
        tokens_per_sec: args.tokens_per_sec,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(bind_address(&args.listen))
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let addr = listener.local_addr()?;
        let mut out = std::io::stdout();
        writeln!(out, "listening on http://{addr}/v1")?;
        out.flush()?;
        serve_model(listener, rules, faults, args.wire).await?;
        Ok(())
    })
}
