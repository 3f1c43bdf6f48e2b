//! The console: the terminal, the event loop and the effects it runs. `App` (app.rs) holds the
//! state, `keys.rs` and the panes (`panes/`, each a component) take the keys, `view.rs`,
//! `panes/` and `modals/` draw.
//!
//! The loop `select!`s over terminal events, app events (runtime events forwarded with their
//! runtime's generation, and the results of background work) and draw requests. It draws only
//! when asked (`frame.rs`), so an idle console uses no CPU.

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod answer_elicitation;
pub mod answer_sampling;
pub mod app;
mod approval_keys;
pub mod attached;
pub mod chat;
mod commands;
mod content;
mod content_open;
mod dialog_commands;
mod dialog_keys;
mod effects;
mod footer;
mod frame;
mod guard;
mod hints;
mod ingest;
mod keys;
pub mod launch;
pub mod listing;
mod login;
pub mod messages;
pub mod modals;
mod open;
pub mod overlay;
pub mod pane_state;
pub mod panes;
mod serving;
pub mod state;
mod terminal;
pub use serving::Serving;
pub mod theme;
mod view;
pub mod widgets;

#[cfg(test)]
mod tests;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::Event;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use self::app::App;
use self::terminal::{install_panic_hook, restore_terminal, Term, TerminalGuard};

use self::frame::FrameRequester;
use self::messages::{AppEvent, Effect};
use self::theme::Theme;
use crate::config::{self, ApprovalRule, Config};
use crate::runtime::{AgentRuntime, AgentRuntimeFactory, RuntimeOptions};

/// How long closing the runtime may take when quitting.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// Longest wait, on quitting, for the prompt and the calls in flight to end cancelled.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(2);
/// While something moves, frames come this often.
const ANIMATION: Duration = Duration::from_millis(100);
/// App events waiting at most: a flood of server output waits upstream (nothing is lost).
const APP_QUEUE: usize = 4_096;
/// App events handled in one go before a frame is asked for.
const BATCH: usize = 512;
/// The frame log's target (`AIMON_LOG=aimon_console::tui::frame=debug`).
const FRAME_LOG: &str = "aimon_console::tui::frame";

/// What the console starts with besides the config: the agent profile (else `agent.default`)
/// and a session to continue (`--model`, `--resume`, checked by the caller).
#[derive(Default)]
pub struct ConsoleOptions {
    pub model: Option<String>,
    pub resume: Option<String>,
    /// Why `model` continues the resumed session (`the session's`, `--model`, …).
    pub why: Option<String>,
    /// Serve other MCP hosts while the console runs (`--serve-http`): their calls show in
    /// Calls and their questions in the approval modal.
    pub serving: Option<Arc<Serving>>,
    /// Show a daemon's runtime instead of starting one (`attach`): the link to it, and its
    /// notifications.
    pub attach: Vec<(
        Arc<crate::daemon::client::Link>,
        mpsc::Receiver<crate::daemon::client::Notice>,
    )>,
}

impl std::fmt::Debug for ConsoleOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsoleOptions")
            .field("model", &self.model)
            .field("resume", &self.resume)
            .field("serving", &self.serving.as_ref().map(|s| s.url()))
            .field(
                "attach",
                &self
                    .attach
                    .iter()
                    .map(|(l, _)| &l.address)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Runs the console on `config` until the operator quits.
pub async fn run(config: Config, options: ConsoleOptions) -> ExitCode {
    install_panic_hook();
    let (guard, mut terminal) = match TerminalGuard::enter() {
        Ok(t) => t,
        Err(e) => {
            tracing::error!(error = %e, "cannot set up the terminal");
            restore_terminal();
            return ExitCode::from(1);
        }
    };
    let code = event_loop(&mut terminal, config, options).await;
    drop(guard);
    code
}

async fn event_loop(terminal: &mut Term, config: Config, options: ConsoleOptions) -> ExitCode {
    let (app_tx, mut app_rx) = mpsc::channel::<AppEvent>(APP_QUEUE);
    let (frames, mut draw_rx) = FrameRequester::new();
    let mut app = App::new(&config, Theme::from_env(), Instant::now());
    app.chat
        .start_with(options.model, options.resume, options.why);
    app.session.serving = options.serving;
    app.announce_serving();
    if options.attach.is_empty() {
        start_runtime(config, 0, 0, app_tx.clone(), app.session.serving.clone());
    } else {
        let (links, notices) = options.attach.into_iter().unzip();
        let attachment = attached::Attachment::new(links);
        app.attach(attachment.clone());
        attached::start(attachment, notices, app_tx.clone());
    }
    let mut term_events = terminal::input();
    // Closing the terminal (SIGHUP) or `kill` (SIGTERM) quits as `q` does: what is in flight
    // ends cancelled, the servers and the model endpoint are stopped, the terminal restored.
    let mut hangup = quit_signal(tokio::signal::unix::SignalKind::hangup());
    let mut terminate = quit_signal(tokio::signal::unix::SignalKind::terminate());
    frames.schedule_frame();

    loop {
        tokio::select! {
            () = signalled(&mut hangup) => break,
            () = signalled(&mut terminate) => break,
            event = term_events.recv() => match event {
                Some(Ok(Event::Key(key))) => {
                    // A key can start a turn or answer an approval: its time is now, not the
                    // last frame's (an idle console draws no frames).
                    let at = Instant::now();
                    app.set_now(at);
                    app.key_came(at);
                    for effect in app.on_key(key) {
                        run_effect(effect, &app, &app_tx);
                    }
                    frames.schedule_frame();
                }
                Some(Ok(Event::Resize(width, height))) => {
                    terminal::resize(terminal, width, height);
                    frames.schedule_frame();
                }
                Some(Ok(Event::Paste(text))) => {
                    app.set_now(Instant::now());
                    app.on_paste(&text);
                    frames.schedule_frame();
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::error!(error = %e, "terminal input failed");
                    break;
                }
                None => break,
            },
            Some(event) = app_rx.recv() => {
                app.set_now(Instant::now());
                let mut effects = app.on_app_event(event);
                // Take what else is waiting (a flood of server logs) before asking for a frame.
                for _ in 0..BATCH {
                    match app_rx.try_recv() {
                        Ok(event) => effects.extend(app.on_app_event(event)),
                        Err(_) => break,
                    }
                }
                for effect in effects {
                    run_effect(effect, &app, &app_tx);
                }
                frames.schedule_frame();
            }
            Some(()) = draw_rx.recv() => {
                let drawing = Instant::now();
                // Measured only for the frame log: four system calls a frame otherwise spent.
                let logged = tracing::enabled!(target: FRAME_LOG, tracing::Level::DEBUG)
                    .then(frame::ThreadUsage::now);
                app.set_now(drawing);
                let mut rendered = drawing;
                if let Err(e) = terminal.draw(|f| {
                    app.render(f);
                    rendered = Instant::now();
                }) {
                    tracing::error!(error = %e, "drawing failed");
                    break;
                }
                // `AIMON_LOG=aimon_console::tui::frame=debug`: each frame's time (the benches
                // read it), of it the part spent writing to the terminal, the CPU this thread
                // spent on it (the rest is waiting: for the terminal, for a core), how often it
                // gave up its core to wait and was taken off it for another thread (`waits`,
                // `preempted`), and the page faults it took (code or data brought back).
                if let Some(before) = logged {
                    let used = frame::ThreadUsage::now().since(before);
                    let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
                    let (write_us, us) = (micros(rendered.elapsed()), micros(drawing.elapsed()));
                    let (faults, major_faults) = (used.faults, used.major_faults);
                    let (waits, preempted) = (used.waits, used.preempted);
                    let cpu_us = micros(used.cpu);
                    tracing::debug!(target: FRAME_LOG, faults, major_faults, waits, preempted, write_us, cpu_us, us, "frame drawn");
                }
                if app.animating() {
                    frames.schedule_frame_in(ANIMATION);
                }
            }
        }
        if app.should_quit() {
            break;
        }
    }
    if let Some(runtime) = app.runtime().cloned() {
        settle_in_flight(&mut app, &runtime, &mut app_rx).await;
        let _ = terminal.draw(|f| {
            let area = f.area();
            f.render_widget(ratatui::widgets::Paragraph::new("closing servers…"), area)
        });
        if tokio::time::timeout(CLOSE_TIMEOUT, runtime.close())
            .await
            .is_err()
        {
            tracing::warn!("closing the runtime took too long");
        }
    }
    ExitCode::SUCCESS
}

/// A stream of `kind` signals, if one can be had (else the console just does not see them).
fn quit_signal(kind: tokio::signal::unix::SignalKind) -> Option<tokio::signal::unix::Signal> {
    match tokio::signal::unix::signal(kind) {
        Ok(signal) => Some(signal),
        Err(e) => {
            tracing::warn!(error = %e, "cannot listen for a quit signal");
            None
        }
    }
}

/// The next signal of `signal`; never, without one.
async fn signalled(signal: &mut Option<tokio::signal::unix::Signal>) {
    match signal {
        Some(signal) => {
            if signal.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending::<()>().await,
    }
}

/// Quitting ends what is in flight as cancelled, not as the servers' going away: the agent's
/// prompt (its transcript says `cancelled`) and every running call are cancelled, and their
/// ends are taken in, for up to `SETTLE_TIMEOUT`, before the servers close.
async fn settle_in_flight(
    app: &mut App,
    runtime: &AgentRuntime,
    app_rx: &mut mpsc::Receiver<AppEvent>,
) {
    if let Some(turn) = &app.chat.turn {
        turn.cancel.cancel();
    }
    for row in app.calls.rows.iter().filter(|r| !r.status.is_final()) {
        runtime.cancel_call(row.id);
    }
    let settled = tokio::time::timeout(SETTLE_TIMEOUT, async {
        while app.chat.busy() || app.calls.running() > 0 {
            let Some(event) = app_rx.recv().await else {
                break;
            };
            // What they would start (a turn boundary, the next prompt) is not started now.
            let _ = app.on_app_event(event);
        }
    })
    .await;
    if settled.is_err() {
        tracing::warn!("calls still running when the console quit");
    }
}

/// Starts runtime `generation` in the background; its events and its arrival come back as
/// app events.
fn start_runtime(
    config: Config,
    generation: u64,
    first_call_id: u64,
    app_tx: mpsc::Sender<AppEvent>,
    serving: Option<Arc<Serving>>,
) {
    let (events, mut stream) = AgentRuntimeFactory::events();
    let forward = app_tx.clone();
    tokio::spawn(async move {
        while let Some(event) = stream.recv().await {
            // Waiting here holds the runtime's bounded queue back, which holds the servers'
            // output back: a flood slows down instead of filling memory.
            if forward
                .send(AppEvent::Runtime(generation, event))
                .await
                .is_err()
            {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let options = RuntimeOptions {
            first_call_id,
            serves_hosts: serving.is_some(),
            ..crate::telemetry::options(&config)
        };
        let result = AgentRuntimeFactory::create(&config, options, events)
            .await
            .map(Arc::new)
            .map_err(|e| e.to_string());
        if let (Ok(runtime), Some(serving)) = (&result, serving) {
            serving::serve_hosts(runtime.clone(), &serving, &config.gateway, &app_tx).await;
        }
        let _ = app_tx
            .send(AppEvent::RuntimeReady(generation, result))
            .await;
    });
}

/// Why the config file was not written, and, for a file changed on disk since the console
/// loaded it, how to load it again.
pub(super) fn write_failure(e: config::WriteError) -> String {
    match e {
        config::WriteError::Changed { path } => format!(
            "{} changed on disk since it was loaded: nothing written; R reloads it (restarting every server), then try again",
            path.display()
        ),
        other => other.to_string(),
    }
}

/// Writes `policy.rules` in the background (`edit`), then loads the file again: the gate takes
/// its rules from the file as written.
fn write_rules(
    tx: mpsc::Sender<AppEvent>,
    path: std::path::PathBuf,
    done: String,
    edit: impl FnOnce() -> Result<u64, config::WriteError> + Send + 'static,
) {
    tokio::spawn(async move {
        let result = tokio::task::spawn_blocking(move || {
            let digest = edit().map_err(write_failure)?;
            let loaded = config::load(&path).map_err(|e| {
                format!("the rule was written, but the config file does not load now ({e}); R restarts with it once fixed")
            })?;
            Ok((digest, loaded.policy.rules))
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()));
        let _ = tx.send(AppEvent::RulesWritten { done, result }).await;
    });
}

/// Runs one effect in the background; results come back as app events.
fn run_effect(effect: Effect, app: &App, app_tx: &mpsc::Sender<AppEvent>) {
    if let Some(attachment) = app.attachment() {
        return attached::effects::run_effect(effect, app, attachment, app_tx);
    }
    let runtime: Option<Arc<AgentRuntime>> = app.runtime().cloned();
    let tx = app_tx.clone();
    match effect {
        Effect::Quit => {}
        Effect::Call { tool, arguments } => {
            // Between calls is a turn boundary: tool-list changes come in first; but not under
            // an agent's prompt in flight, whose tools change only between its model turns.
            let boundary = !app.chat.busy();
            if let Some(rt) = runtime {
                tokio::spawn(async move {
                    if boundary {
                        rt.turn_boundary().await;
                    }
                    rt.call(&tool, arguments, CancellationToken::new()).await;
                });
            }
        }
        Effect::TurnBoundary => {
            if let Some(rt) = runtime {
                tokio::spawn(async move {
                    rt.turn_boundary().await;
                });
            }
        }
        Effect::CancelCall(id) => {
            if let Some(rt) = runtime {
                rt.cancel_call(id);
            }
        }
        Effect::ListResources { server } => effects::list_resources(runtime, tx, server),
        Effect::ReadResource { server, uri } => {
            effects::read_resource(runtime, tx, (server, uri), false)
        }
        Effect::LoadSkill { server, uri } => {
            effects::read_resource(runtime, tx, (server, uri), true)
        }
        Effect::Subscribe { server, uri, on } => effects::subscribe(runtime, tx, server, uri, on),
        Effect::Complete(ask) => effects::complete(runtime, tx, ask),
        Effect::ListPrompts { server } => effects::list_prompts(runtime, tx, server),
        Effect::GetPrompt {
            server,
            name,
            arguments,
        } => effects::get_prompt(runtime, tx, server, name, arguments),
        Effect::Save { path, bytes } => effects::save(tx, path, bytes),
        Effect::OpenUrl { url } => effects::open_url(tx, url),
        Effect::SetLogLevel { server, level } => {
            if let Some(rt) = runtime {
                let asked = server.clone();
                let work = async move {
                    let set = rt.set_log_level(&asked, level).await;
                    set.map_err(|e| e.to_string())
                };
                effects::set_log_level(tx, server, level, work);
            }
        }
        Effect::WriteTrust {
            server,
            trust,
            digest,
        } => {
            let path = app.config_path().clone();
            tokio::spawn(async move {
                let result = tokio::task::spawn_blocking({
                    let server = server.clone();
                    move || config::set_server_trust(&path, digest, &server, trust)
                })
                .await
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(write_failure));
                let _ = tx
                    .send(AppEvent::TrustWritten {
                        server,
                        trust,
                        result,
                    })
                    .await;
            });
        }
        Effect::RestartServer { server } => {
            let path = app.config_path().clone();
            tokio::spawn(async move {
                let refused = |why: String| AppEvent::RestartRefused {
                    server: server.clone(),
                    why,
                };
                let Some(rt) = runtime else {
                    let _ = tx
                        .send(refused("the console has no runtime yet".into()))
                        .await;
                    return;
                };
                // The entry as it is on disk now (a new trust, a fixed command).
                // Every error of the file, one a line (`ConfigError::report`), not the first only.
                let loaded = tokio::task::spawn_blocking(move || config::load(&path))
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|r| r.map_err(|e| e.report()));
                let entry = match loaded {
                    Ok(cfg) => cfg.mcp.servers.into_iter().find(|s| s.name == server),
                    Err(e) => {
                        let why = format!("the config file does not load: {e}");
                        let _ = tx.send(refused(why)).await;
                        return;
                    }
                };
                let Some(entry) = entry else {
                    let why = "it is not in the config file any more (R restarts everything \
                               with the file as it is)"
                        .to_string();
                    let _ = tx.send(refused(why)).await;
                    return;
                };
                let report = rt.restart_server(&entry).await;
                let _ = tx.send(AppEvent::ServerRestarted(report)).await;
            });
        }
        Effect::AlwaysAllow { tool, pin, digest } => {
            let path = app.config_path().clone();
            let rule = ApprovalRule::allow_tool(&tool, pin.as_deref());
            let done = format!(
                "{tool} is always allowed now (a rule in policy.rules; L lists and revokes it)"
            );
            let file = path.clone();
            write_rules(tx, path, done, move || {
                config::add_rule(&file, digest, &rule)
            });
        }
        Effect::RemoveRule { index, digest } => {
            let path = app.config_path().clone();
            let done = format!("removed policy.rules[{index}] from the config file");
            let file = path.clone();
            write_rules(tx, path, done, move || {
                config::remove_rule(&file, digest, index)
            });
        }
        Effect::Login { server } => {
            tokio::spawn(login::login(server, app.config_path().clone(), runtime, tx));
        }
        Effect::Agent(effect) => chat::task::run_effect(effect, app, &tx),
        Effect::Sample { id } => app.run_sample(id, &tx),
        // Only over `attach`: a console's own gate is read and revoked at once.
        Effect::Ledger(_) => {}
        Effect::RestartAll => {
            let path = app.config_path().clone();
            let generation = app.generation() + 1;
            // The calls of the runtime before stay listed: the new one's ids go on from theirs.
            let first_call_id = app.last_call_id();
            let serving = app.session.serving.clone();
            // Calls still running (the operator said so) end cancelled, not cut off.
            let running: Vec<u64> = app
                .calls
                .rows
                .iter()
                .filter(|r| r.cancellable())
                .map(|r| r.id)
                .collect();
            tokio::spawn(async move {
                let loaded = tokio::task::spawn_blocking(move || config::load(&path))
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|r| r.map_err(|e| e.report()));
                let config = match loaded {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = tx.send(AppEvent::Restarting(generation, Err(e))).await;
                        return;
                    }
                };
                if let Some(rt) = runtime {
                    for id in running {
                        rt.cancel_call(id);
                    }
                    rt.close().await;
                }
                let _ = tx
                    .send(AppEvent::Restarting(
                        generation,
                        Ok(Box::new(config.clone())),
                    ))
                    .await;
                start_runtime(config, generation, first_call_id, tx, serving);
            });
        }
    }
}
