//! One console's connection: its requests read line by line (bounded), answered in order of
//! completion; its writer sends answers first, then the events its queue holds, saying first
//! how many it dropped. Nothing a console does (stop reading, flood requests, send garbage)
//! holds up the daemon or the other consoles: its events are dropped and counted, its own
//! requests wait for room among its answers.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::hub::{Console, Hub, Who};
use super::questions::Answer;
use super::wire::{
    self, code, error_response, notification, result_response, Frame, Framer, Incoming,
};
use crate::approval::ApprovalDecision;
use crate::runtime::{tool_json, ToolsJson};

/// Most answers waiting to be written to one console, and most of its requests at work at
/// once (calls, prompts, restarts): its next request waits for room.
const ANSWERS: usize = 64;
/// How long a console over TCP has to bring its token (`initialize`) before it is let go.
const INITIALIZE_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// What a request gets: its result, or an error code and message.
type Reply = Result<Value, (i64, String)>;

/// Who is at the other end, as its transport tells: over the Unix socket, its pid; over TCP,
/// nothing but the token its `initialize` must bring.
pub struct Peer {
    pub pid: Option<i32>,
    pub token: Option<String>,
}

/// Serves one console until it goes away, fails to bring the token, or the daemon stops.
pub async fn run<S>(hub: Arc<Hub>, stream: S, peer: Peer, stop: CancellationToken)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (mut read, write) = tokio::io::split(stream);
    let (answers, answers_rx) = mpsc::channel::<String>(ANSWERS);
    let (console, events_rx) = Console::new();
    let writer = tokio::spawn(write_loop(write, answers_rx, events_rx, console.clone()));
    let over_tcp = peer.token.is_some();
    let mut session = Session {
        hub,
        console,
        who: None,
        peer,
        refused: false,
        answers,
        work: Arc::new(Semaphore::new(ANSWERS)),
        stop: stop.clone(),
    };
    let mut framer = Framer::default();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut frames = Vec::new();
    let initialize_by = tokio::time::sleep(INITIALIZE_WITHIN);
    tokio::pin!(initialize_by);
    loop {
        let read = tokio::select! {
            read = read.read(&mut chunk) => read,
            () = stop.cancelled() => break,
            // Over TCP, a connection that has not shown the token holds nothing for long.
            () = &mut initialize_by, if over_tcp && session.who.is_none() => break,
        };
        let n = match read {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        framer.feed(&chunk[..n], &mut |frame| frames.push(frame));
        for frame in frames.drain(..) {
            // Refused: nothing more it sent is read.
            if session.refused {
                break;
            }
            match frame {
                Frame::TooLong => {
                    let message = format!("a message is at most {} bytes", wire::MAX_LINE);
                    session
                        .send(error_response(
                            &Value::Null,
                            code::INVALID_REQUEST,
                            &message,
                        ))
                        .await;
                }
                Frame::Line(line) if line.iter().all(u8::is_ascii_whitespace) => {}
                Frame::Line(line) => match wire::parse(&line) {
                    Ok(incoming) => session.handle(incoming).await,
                    Err(e) => session.send(e.response()).await,
                },
            }
        }
        if session.refused {
            break;
        }
    }
    session.hub.detach(&session.console);
    drop(session);
    let _ = writer.await;
}

struct Session {
    hub: Arc<Hub>,
    console: Arc<Console>,
    who: Option<Who>,
    peer: Peer,
    /// It did not bring the token: the connection ends once that is said.
    refused: bool,
    answers: mpsc::Sender<String>,
    /// Its requests at work (calls, prompts, restarts): each holds a permit until answered.
    work: Arc<Semaphore>,
    stop: CancellationToken,
}

impl Session {
    async fn send(&self, line: String) {
        let _ = self.answers.send(line).await;
    }

    async fn handle(&mut self, incoming: Incoming) {
        // A notification from a console asks for nothing this version knows.
        let Some(id) = incoming.id else { return };
        let params = incoming.params;
        let who = self.who.clone();
        let reply = match (incoming.method.as_str(), who.as_ref()) {
            ("initialize", None) => self.initialize(&params),
            ("initialize", Some(_)) => Err((code::NOT_INITIALIZED, "already initialized".into())),
            (_, None) => Err((code::NOT_INITIALIZED, "send initialize first".into())),
            ("ping", Some(_)) => Ok(json!({})),
            ("servers", Some(_)) => Ok(json!({"servers": self.hub.runtime.reports()})),
            ("tools", Some(_)) => {
                let tools = self.hub.runtime.tool_snapshot();
                Ok(json!({"tools": ToolsJson(&tools, Some(self.hub.runtime.gate()))}))
            }
            ("approve", Some(who)) if params["decision"] == "allow_always" => {
                let (call, who) = (params.get("id").and_then(Value::as_u64), who.clone());
                return self
                    .spawned(id, |hub| async move {
                        match call {
                            Some(call) => super::edits::always(hub, call, who).await,
                            None => Err(invalid("`id` is the call's id, a number")),
                        }
                    })
                    .await;
            }
            ("approve", Some(who)) => approve(&self.hub, &params, who),
            ("answer_elicitation", Some(who)) => answer_elicitation(&self.hub, &params, who),
            ("answer_sampling", Some(who)) => super::sampling::answer(&self.hub, &params, who),
            ("sample", Some(_)) => {
                return self
                    .spawned(id, |hub| super::sampling::sample(hub, params))
                    .await
            }
            ("ledger", Some(_)) => Ok(crate::runtime::ledger_json(self.hub.runtime.gate())),
            ("remove_rule", Some(_)) => {
                return self
                    .spawned(id, |hub| super::edits::remove_rule(hub, params))
                    .await
            }
            ("revoke", Some(_)) => match params.get("tool").and_then(Value::as_str) {
                Some(tool) => Ok(json!({"revoked": self.hub.runtime.gate().revoke(tool)})),
                None => Err(invalid("`tool` is the tool's name")),
            },
            ("trust", Some(_)) => {
                return self
                    .spawned(id, |hub| super::edits::trust(hub, params))
                    .await
            }
            ("cancel", Some(_)) => match params.get("id").and_then(Value::as_u64) {
                Some(call) => Ok(json!({"cancelled": self.hub.runtime.cancel_call(call)})),
                None => Err(invalid("`id` is the call's id, a number")),
            },
            ("call", Some(_)) => return self.call(id, &params).await,
            ("prompt", Some(_)) => {
                let stop = self.stop.child_token();
                return self
                    .spawned(id, |hub| super::sessions::prompt(hub, params, stop))
                    .await;
            }
            ("open_session", Some(_)) => {
                return self
                    .spawned(id, |hub| super::sessions::open(hub, params))
                    .await
            }
            ("stop_prompt", Some(_)) => match params.get("session").and_then(Value::as_str) {
                Some(session) => Ok(json!({"stopped": self.hub.sessions.stop(session)})),
                None => Err(invalid("`session` is the session's id")),
            },
            (method, Some(_)) if super::content::METHODS.contains(&method) => {
                let method = method.to_string();
                return self
                    .spawned(id, |hub| super::content::answer(hub, method, params))
                    .await;
            }
            ("sessions", Some(_)) => Ok(json!({"sessions": self.hub.sessions.ids()})),
            ("restart", Some(_)) => {
                return self
                    .spawned(id, |hub| super::edits::restart(hub, params))
                    .await
            }
            (method, Some(_)) => Err((code::METHOD_NOT_FOUND, format!("no method {method:?}"))),
        };
        self.send(reply_line(&id, reply)).await;
    }

    fn initialize(&mut self, params: &Value) -> Reply {
        if let Some(token) = &self.peer.token {
            let given = params.get("token").and_then(Value::as_str).unwrap_or("");
            if !super::tcp::token_matches(given, token) {
                self.refused = true;
                return Err((
                    code::UNAUTHORIZED,
                    "unauthorized: over TCP, initialize brings the daemon's token \
                     (aimon-console daemon --print-token on its machine)"
                        .into(),
                ));
            }
        }
        let version = params.get("protocol_version").and_then(Value::as_u64);
        if version != Some(wire::PROTOCOL_VERSION) {
            return Err((
                code::UNSUPPORTED_VERSION,
                format!(
                    "this daemon speaks protocol_version {} (asked: {})",
                    wire::PROTOCOL_VERSION,
                    params.get("protocol_version").unwrap_or(&Value::Null)
                ),
            ));
        }
        let client = params.get("client").cloned().unwrap_or_default();
        let text = |key: &str| {
            client
                .get(key)
                .and_then(Value::as_str)
                .map(|s| crate::text::sanitize_line(s, 64))
                .unwrap_or_else(|| "?".into())
        };
        let who = Who {
            name: text("name"),
            user: text("user"),
            host: text("host"),
            pid: self.peer.pid,
        };
        let (recent, approvals) = self.hub.attach(self.console.clone());
        let values = |lines: Vec<Arc<str>>| -> Vec<Value> {
            lines
                .iter()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        };
        let tools: Vec<Value> = self.hub.runtime.tools().iter().map(tool_json).collect();
        let result = json!({
            "protocol_version": wire::PROTOCOL_VERSION,
            "daemon": {
                "version": env!("CARGO_PKG_VERSION"),
                "pid": std::process::id(),
                "config": self.hub.config.path,
                "token_store": crate::runtime::token_store_dir(),
                "consoles": self.hub.consoles(),
            },
            "you": who.json(),
            "servers": self.hub.runtime.reports(),
            "tools": tools,
            "approvals": values(approvals),
            "elicitations": values(self.hub.questions.waiting()),
            "samplings": values(self.hub.samplings.waiting()),
            "recent": values(recent),
        });
        self.who = Some(who);
        Ok(result)
    }

    /// A permit for one more request at work; waits (and so stops reading this console)
    /// while it has `ANSWERS` of them.
    async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        self.work.clone().acquire_owned().await.ok()
    }

    /// A call as the operator: run in its own task, so this console's other requests (its
    /// approval among them) go on meanwhile.
    async fn call(&self, id: Value, params: &Value) {
        let (tool, arguments) = match (params.get("tool"), params.get("arguments")) {
            (Some(Value::String(tool)), None) => (tool.clone(), json!({})),
            (Some(Value::String(tool)), Some(args @ Value::Object(_))) => {
                (tool.clone(), args.clone())
            }
            _ => {
                let line = reply_line(&id, Err(invalid("`tool` is a name, `arguments` an object")));
                return self.send(line).await;
            }
        };
        let Some(permit) = self.permit().await else {
            return;
        };
        let (runtime, answers, cancel) = (
            self.hub.runtime.clone(),
            self.answers.clone(),
            self.stop.child_token(),
        );
        tokio::spawn(async move {
            let _permit = permit;
            let outcome = runtime.call(&tool, arguments, cancel).await;
            let result =
                serde_json::to_value(&outcome).map_err(|e| (code::INVALID_PARAMS, e.to_string()));
            let _ = answers.send(reply_line(&id, result)).await;
        });
    }

    /// Work that takes its time (a prompt, a session opened, a config write, a restart) in
    /// its own task, answered when it ends; this console's other requests go on meanwhile (a
    /// prompt's events go to every console, its calls' approvals to whichever answers first).
    /// It holds one of the console's permits while it runs.
    async fn spawned<F>(&self, id: Value, work: impl FnOnce(Arc<Hub>) -> F)
    where
        F: std::future::Future<Output = Reply> + Send + 'static,
    {
        let Some(permit) = self.permit().await else {
            return;
        };
        let (answers, job) = (self.answers.clone(), work(self.hub.clone()));
        tokio::spawn(async move {
            let _permit = permit;
            let reply = job.await;
            let _ = answers.send(reply_line(&id, reply)).await;
        });
    }
}

fn invalid(message: &str) -> (i64, String) {
    (code::INVALID_PARAMS, message.to_string())
}

fn reply_line(id: &Value, reply: Reply) -> String {
    match reply {
        Ok(result) => result_response(id, result),
        Err((code, message)) => error_response(id, code, &message),
    }
}

/// `approve {id, decision}`: the first answer to a waiting approval.
fn approve(hub: &Hub, params: &Value, who: &Who) -> Reply {
    let Some(call) = params.get("id").and_then(Value::as_u64) else {
        return Err(invalid("`id` is the call's id, a number"));
    };
    let decision = match params.get("decision").and_then(Value::as_str) {
        Some("allow_once") => ApprovalDecision::AllowOnce,
        Some("allow_for_session") => ApprovalDecision::AllowForSession,
        Some("deny") => ApprovalDecision::Deny,
        _ => {
            return Err(invalid(
                "`decision` is allow_once, allow_for_session, allow_always or deny",
            ))
        }
    };
    hub.answer(call, decision, who)
        .map(|()| json!({"id": call, "decision": decision.as_str()}))
        .map_err(|refusal| (refusal.code, refusal.message))
}

/// `answer_elicitation {id, action, content?}`: the first answer to a server's question, said
/// to every console (`elicitation_answered`).
fn answer_elicitation(hub: &Hub, params: &Value, who: &Who) -> Reply {
    let Some(question) = params.get("id").and_then(Value::as_u64) else {
        return Err(invalid("`id` is the question's id, a number"));
    };
    let answer = Answer::from_params(params).map_err(|why| (code::INVALID_PARAMS, why))?;
    let told = hub
        .questions
        .answer_question(question, answer, who)
        .map_err(|refusal| (refusal.code, refusal.message))?;
    hub.broadcast(notification("elicitation_answered", told.clone()));
    Ok(told)
}

/// Writes answers first, then events; before an event, how many this console lost since.
async fn write_loop<W: AsyncWrite + Unpin>(
    write: W,
    mut answers: mpsc::Receiver<String>,
    mut events: mpsc::Receiver<Arc<str>>,
    console: Arc<Console>,
) {
    let mut out = BufWriter::new(write);
    let mut open = true;
    loop {
        let line: Arc<str> = tokio::select! {
            biased;
            answer = answers.recv() => match answer {
                Some(answer) => answer.into(),
                // The console's session ended (it went away, or the daemon is stopping): what
                // is queued for it (`closing` among it) still goes, then the connection ends.
                None => break,
            },
            event = events.recv() => match event {
                Some(event) => {
                    console.queued.fetch_sub(event.len(), Ordering::Relaxed);
                    let lost = console.dropped.swap(0, Ordering::Relaxed);
                    if lost > 0 {
                        let said = notification("dropped", json!({"count": lost}));
                        if write_line(&mut out, &said).await.is_err() {
                            break;
                        }
                    }
                    event
                }
                None => break,
            },
        };
        if write_line(&mut out, &line).await.is_err() {
            open = false;
            break;
        }
        if answers.is_empty() && events.is_empty() && out.flush().await.is_err() {
            open = false;
            break;
        }
    }
    while open {
        let Ok(event) = events.try_recv() else { break };
        open = write_line(&mut out, &event).await.is_ok();
    }
    if open && out.flush().await.is_ok() {
        let _ = out.shutdown().await;
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    out: &mut BufWriter<W>,
    line: &str,
) -> std::io::Result<()> {
    out.write_all(line.as_bytes()).await?;
    out.write_all(b"\n").await
}
