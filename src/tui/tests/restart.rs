//! Restart tests of the console: `R` asking first while calls run, its stderr markers and
//! its config errors, a restart counting down, `r` on a disabled server, a write refused
//! because the file changed on disk. The fixtures are the snapshot tests' (`tests.rs`).

use crate::runtime::RuntimeEvent;
use crate::tui::modals::Modal;
use crate::tui::tests::fixtures::{key, populated};

/// `R` on a config with several mistakes: every one of them reaches Events, the notice says
/// the first and how many more.
#[test]
fn every_config_error_of_a_refused_restart_is_shown() {
    use crate::tui::messages::AppEvent;
    let text = "mcp:\n  servers:\n    - name: a\n      comand: x\n      argz: []\n";
    let err = crate::config::load_str(std::path::Path::new("c.yaml"), text, &|_| None)
        .expect_err("two unknown keys");
    assert!(err.count() >= 2, "{}", err.report());
    let (mut app, _) = populated();
    let before = app.events.rows.len();
    app.on_app_event(AppEvent::Restarting(1, Err(err.report())));
    let shown: Vec<String> = app
        .events
        .rows
        .iter()
        .skip(before)
        .map(|r| r.text.clone())
        .collect();
    assert_eq!(shown.len(), err.count(), "{shown:?}");
    assert!(shown[0].starts_with("cannot restart: the config does not load: c.yaml:4"));
    assert!(shown[1].starts_with("c.yaml:5"), "{shown:?}");
    let notice = &app.notice.as_ref().unwrap().1;
    assert!(
        notice.ends_with(&format!("(+{} more in Events)", err.count() - 1)),
        "{notice}"
    );
}

#[test]
fn restart_all_asks_first_while_calls_run() {
    use crate::tui::messages::Effect;
    use crossterm::event::KeyCode;
    let (mut app, _) = populated();
    assert!(app.calls.running() > 0);
    assert!(app.on_key(key(KeyCode::Char('R'))).is_empty());
    assert!(matches!(app.overlays.modal, Some(Modal::RestartAll)));
    let screen = crate::tui::tests::draw(&app, (80, 24));
    assert!(
        screen.contains("still running: restart every server and cancel them?"),
        "{screen}"
    );
    assert!(app.on_key(key(KeyCode::Esc)).is_empty());
    assert!(app.overlays.modal.is_none());
    app.on_key(key(KeyCode::Char('R')));
    assert_eq!(
        app.on_key(key(KeyCode::Char('y'))),
        vec![Effect::RestartAll]
    );
    assert!(app.overlays.modal.is_none());
}

/// A restart counting down keeps frames coming (the countdown froze: nothing else moved).
#[test]
fn a_restart_counting_down_keeps_frames_coming() {
    use crate::runtime::McpEvent;
    let mut app = crate::tui::app::App::new(
        &crate::tui::tests::fixtures::config(),
        crate::tui::theme::Theme::plain(),
        std::time::Instant::now(),
    );
    let report = crate::tui::tests::fixtures::ready_report("notes");
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ServerStarted(Box::new(report))));
    assert!(!app.restart_counting_down());
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ServerDown {
        server: "notes".into(),
        exit: None,
        reason: "the server exited".into(),
        at: std::time::UNIX_EPOCH,
        uptime: std::time::Duration::from_secs(1),
        crashes: 1,
        restart: crate::config::RestartPolicy::OnFailure,
    }));
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::RestartScheduled {
        server: "notes".into(),
        attempt: 1,
        delay: std::time::Duration::from_secs(2),
        crashes: 1,
    }));
    assert!(app.restart_counting_down());
    assert!(app.animating());
    let report = crate::tui::tests::fixtures::ready_report("notes");
    app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ServerStarted(Box::new(report))));
    assert!(!app.restart_counting_down());
}

/// `r` on a server whose entry says `enabled: false` says why it did not start and how to
/// start it (it said "restarted: disabled").
#[test]
fn restarting_a_disabled_server_says_how_to_enable_it() {
    let (mut app, _) = populated();
    let config = crate::tui::tests::fixtures::config();
    let parked = config
        .mcp
        .servers
        .iter()
        .find(|s| s.name == "parked")
        .expect("parked");
    let report = crate::runtime::ServerReport::disabled(parked);
    app.on_app_event(crate::tui::messages::AppEvent::ServerRestarted(report));
    assert_eq!(
        app.notice.as_ref().map(|(_, t)| t.as_str()),
        Some("parked not started: its entry says enabled: false (`aimon-console enable parked`, then r)")
    );
}

/// A write refused because the file changed on disk says how the console loads it again.
#[test]
fn a_file_changed_on_disk_says_r_loads_it_again() {
    let why = crate::tui::write_failure(crate::config::WriteError::Changed {
        path: "/home/op/aimon.yaml".into(),
    });
    assert_eq!(
        why,
        "/home/op/aimon.yaml changed on disk since it was loaded: nothing written; R reloads it (restarting every server), then try again"
    );
}

/// `R` keeps each server's stderr tail and marks where the restart came, as `r` does.
#[test]
fn restart_all_marks_the_stderr_tails_it_keeps() {
    let (mut app, _) = populated();
    let broken = |app: &crate::tui::app::App| {
        app.servers
            .iter()
            .find(|s| s.name == "broken")
            .map(|s| s.stderr.iter().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(broken(&app), ["starting broken", "boom"]);
    app.on_app_event(crate::tui::messages::AppEvent::Restarting(
        1,
        Ok(Box::new(crate::tui::tests::fixtures::config())),
    ));
    assert_eq!(
        broken(&app),
        [
            "starting broken",
            "boom",
            crate::tui::app::RESTART_ALL_MARKER
        ]
    );
    // A server with nothing on stderr gets no marker.
    let notes = app
        .servers
        .iter()
        .find(|s| s.name == "notes")
        .expect("notes");
    assert!(notes.stderr.is_empty());
}
