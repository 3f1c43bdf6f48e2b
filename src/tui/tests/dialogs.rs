//! The dialogs and the answers to servers' requests, opened the way they open for real, for
//! the key test (`commands.rs`): each `Dialog` of `dialog_commands.rs`, in the state its
//! `variant` picks.

use crossterm::event::KeyCode;
use serde_json::json;

use crate::agent::sampling::Sampled;
use crate::config::{ApprovalRule, RuleDecision, ToolPattern};
use crate::runtime::{
    ElicitationRequest, McpEvent, ResourceContent, RuntimeEvent, SamplingRequest,
};
use crate::tui::app::App;
use crate::tui::commands::Dialog;
use crate::tui::listing::ContentEvent;
use crate::tui::messages::{AppEvent, CompletionAsk, Effect};
use crate::tui::modals::ledger::LedgerRow;
use crate::tui::modals::Modal;
use crate::tui::pane_state::Pane;
use crate::tui::state::ToolRow;
use crate::tui::tests::draw;
use crate::tui::tests::fixtures::{ctrl, ignored, key};
use crate::tui::tests::sampling::ask;
use crate::tui::tests::server_content::content;

/// Keeps the requests' answer channels open while a test looks at them.
pub(super) type Askers = Vec<Box<dyn std::any::Any>>;

/// How many setups `open` knows: the viewer reads a text, a blob, one subscribed to; the text
/// view shows a line, or a long text.
pub(super) const VARIANTS: usize = 3;

/// Opens `dialog` on `app`, in setup `variant` (`0..VARIANTS`).
pub(super) fn open(app: &mut App, dialog: Dialog, variant: usize, askers: &mut Askers) {
    match dialog {
        Dialog::Viewer => read(app, variant),
        Dialog::Saving => {
            read(app, 1);
            app.on_key(key(KeyCode::Char('w')));
        }
        Dialog::PromptForm => {
            app.set_focus(Pane::Prompts);
            let effects = app.on_key(key(KeyCode::Enter));
            suggest(app, effects);
        }
        Dialog::TemplateForm => {
            app.set_focus(Pane::Resources);
            for _ in 0..3 {
                app.on_key(key(KeyCode::Down));
            }
            let effects = app.on_key(key(KeyCode::Enter));
            suggest(app, effects);
        }
        Dialog::CallForm | Dialog::RawArguments => {
            // A tool whose arguments are a yes-no, a choice and a choice of several.
            let mut tool = ignored("notes", "configure");
            tool.input_schema = json!({"type": "object", "properties": {
                "urgent": {"type": "boolean"},
                "colour": {"type": "string", "enum": ["red", "green"]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}})
            .into();
            app.tools.insert(0, ToolRow::from_descriptor(&tool));
            app.set_focus(Pane::Tools);
            app.panes.tools.selected = 0;
            app.on_key(key(KeyCode::Enter));
            if dialog == Dialog::RawArguments {
                app.on_key(ctrl('r'));
            }
        }
        Dialog::ElicitationForm => {
            let schema = json!({"type": "object", "properties": {
                "name": {"type": "string"},
                "urgent": {"type": "boolean"},
                "size": {"type": "string", "enum": ["small", "large"]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}});
            let (request, answer) =
                ElicitationRequest::form("notes", "Details".into(), schema).expect("a form");
            askers.push(Box::new(answer));
            app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request)));
        }
        // An Events line, or the whole Details of the server with a long stderr tail.
        Dialog::Text if variant == 0 => {
            app.set_focus(Pane::Events);
            app.on_key(key(KeyCode::Enter));
        }
        Dialog::Text => {
            app.panes.servers.selected = app
                .servers
                .iter()
                .position(|s| s.name == "broken")
                .unwrap_or(0);
            app.set_focus(Pane::Details);
            app.on_key(key(KeyCode::Enter));
        }
        Dialog::Trust => {
            app.set_focus(Pane::Servers);
            app.on_key(key(KeyCode::Char('t')));
            // Small enough that the preview scrolls.
            let _ = draw(app, (50, 10));
        }
        Dialog::RestartAll => {
            app.set_focus(Pane::Servers);
            app.on_key(key(KeyCode::Char('R')));
        }
        Dialog::Ledger => app.overlays.modal = Some(ledger()),
        Dialog::Scrolled => {
            app.on_key(key(KeyCode::F(1)));
            let _ = draw(app, (80, 24));
        }
        Dialog::SamplingAsking | Dialog::SamplingAnswer => {
            let (request, answer) = SamplingRequest::new("notes", ask());
            let id = request.id;
            askers.push(Box::new(answer));
            app.on_runtime_event(RuntimeEvent::Mcp(McpEvent::SamplingRequested(request)));
            app.on_key(key(KeyCode::Char('y')));
            if dialog == Dialog::SamplingAnswer {
                app.on_app_event(AppEvent::Sampled {
                    id,
                    result: Ok(Sampled {
                        text: "The demo notes say hello.".into(),
                        model: "demo-model".into(),
                        finish_reason: Some("stop".into()),
                    }),
                });
            }
        }
        Dialog::Filter => {
            app.set_focus(Pane::Tools);
            app.on_key(key(KeyCode::Char('/')));
        }
    }
}

/// The rules list as `L` opens it on a config file with two rules (without a runtime `L`
/// lists nothing).
pub(super) fn ledger() -> Modal {
    let rule = |index, tool: &str, decision| LedgerRow::Rule {
        index,
        rule: ApprovalRule {
            pin: None,
            pattern: ToolPattern {
                tool: Some(tool.into()),
                server: None,
            },
            decision,
        },
        from: None,
    };
    Modal::Ledger {
        entries: vec![
            rule(0, "mcp__notes__echo", RuleDecision::Allow),
            rule(1, "mcp__notes__delete_note", RuleDecision::Deny),
        ],
        selected: 0,
        asking: false,
    }
}

/// Reads resource row `row` of notes (0 a text, 1 a blob, 2 one subscribed to).
fn read(app: &mut App, row: usize) {
    app.set_focus(Pane::Resources);
    for _ in 0..row {
        app.on_key(key(KeyCode::Down));
    }
    app.on_key(key(KeyCode::Enter));
    let uri = app.panes.resources.rows[row].uri.clone();
    let read = if row == 1 {
        ResourceContent::Blob {
            uri: uri.clone(),
            mime_type: Some("image/png".into()),
            bytes: vec![0x89, b'P', b'N', b'G'],
        }
    } else {
        let text: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        ResourceContent::Text {
            uri: uri.clone(),
            mime_type: Some("text/plain".into()),
            text,
        }
    };
    content(
        app,
        ContentEvent::ResourceRead {
            server: "notes".into(),
            uri,
            result: Ok(vec![read]),
        },
    );
}

/// The server's suggestions for what a form asked to complete.
fn suggest(app: &mut App, effects: Vec<Effect>) {
    for effect in effects {
        if let Effect::Complete(CompletionAsk { seq, .. }) = effect {
            content(
                app,
                ContentEvent::Completed {
                    seq,
                    result: Ok(vec!["todo".into(), "tea".into()]),
                },
            );
        }
    }
}
