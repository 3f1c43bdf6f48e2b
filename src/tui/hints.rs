//! What the footer and the help say: the commands of each context (a pane's from its component,
//! the others' from `commands.rs`), the footer's entries that apply now, and the help's text,
//! which is every list in turn and then what the words on screen mean.

use std::sync::LazyLock;

use super::app::App;
use super::commands::*;
use super::dialog_commands::{self, dialog};
use super::overlay::Layer;
use super::pane_state::Pane;
use super::panes;

/// The commands of `context`, in the order the footer and the help give them.
pub fn commands(context: Context) -> &'static [Command] {
    match context {
        Context::Anywhere => ANYWHERE,
        Context::WhileTyping => WHILE_TYPING,
        Context::Pane(pane) => panes::commands(pane),
        Context::Overlay(Layer::Quit) => QUIT,
        Context::Overlay(Layer::Approval) => APPROVAL,
        Context::ApprovalConfirm => APPROVAL_CONFIRM,
        Context::Overlay(Layer::Elicitation) => ELICITATION_URL,
        Context::Overlay(Layer::Sampling) => SAMPLING,
        Context::Overlay(Layer::ProfilePicker) => PROFILE_PICKER,
        Context::Overlay(Layer::ContentPicker) => CONTENT_PICKER,
        Context::Dialog(dialog) => dialog_commands::commands(dialog),
        // The dialog the operator opened: each kind, each state of it, is a `Dialog`.
        Context::Overlay(Layer::Modal) => &[],
    }
}

/// The keys that work anywhere from `pane`: the footer's second line.
pub fn global_context(pane: Pane) -> Context {
    if panes::types(pane) {
        Context::WhileTyping
    } else {
        Context::Anywhere
    }
}

const ANYWHERE_TITLE: &str = "Anywhere (in the Conversation, letters and digits go to the input:\nthere Tab, Alt-1 … Alt-8, F1 and Ctrl-C still work)";

/// Every context with its section's title in the help, in the help's order: anywhere, each
/// pane in the order of its key (an input's section closes with the keys that work while
/// typing), then the views over the panes. An empty title goes on with the section before.
pub fn contexts() -> &'static [(Context, &'static str)] {
    static CONTEXTS: LazyLock<Vec<(Context, &'static str)>> = LazyLock::new(|| {
        let mut all = vec![(Context::Anywhere, ANYWHERE_TITLE)];
        for pane in Pane::ALL {
            all.push((Context::Pane(pane), panes::help_title(pane)));
            if panes::types(pane) {
                all.push((Context::WhileTyping, ""));
            }
        }
        all.extend([
            (
                Context::Overlay(Layer::Approval),
                "Approval (shown when a call waits for you)",
            ),
            (Context::ApprovalConfirm, ""),
            (
                Context::Overlay(Layer::Elicitation),
                "A server asks (elicitation; after approvals)",
            ),
            (Context::Dialog(Dialog::ElicitationForm), ""),
            (
                Context::Overlay(Layer::Sampling),
                "A server asks for a model's message (sampling; with an agent configured)",
            ),
            (Context::Overlay(Layer::ProfilePicker), ""),
            (Context::Overlay(Layer::ContentPicker), ""),
            (Context::Overlay(Layer::Quit), ""),
        ]);
        // The dialogs' keys are in their footers only (the help's lines on them are under
        // the keys that open them), a server's form's in both.
        for dialog in Dialog::ALL {
            if dialog != Dialog::ElicitationForm {
                all.push((Context::Dialog(dialog), ""));
            }
        }
        all
    });
    &CONTEXTS
}

/// The context of the view of kind `layer`: its list is its footer.
pub fn view_context(app: &App, layer: Layer) -> Context {
    if let Some(dialog) = dialog(app, Some(layer)) {
        return Context::Dialog(dialog);
    }
    match layer {
        Layer::Approval if app.overlays.approval_confirm => Context::ApprovalConfirm,
        layer => Context::Overlay(layer),
    }
}

/// The keys of the view of kind `layer` that apply now: the footer's, and the line of them a
/// view draws inside itself.
pub fn view_keys(app: &App, layer: Layer) -> Vec<(&'static str, &'static str)> {
    footer(app, view_context(app, layer))
}

/// Every footer entry of `context`, whether it applies now or not (a view that draws its keys
/// inside itself).
pub fn keys_of(context: Context) -> Vec<(&'static str, &'static str)> {
    commands(context).iter().filter_map(|c| c.footer).collect()
}

/// The footer's keys for `context` now.
pub fn footer(app: &App, context: Context) -> Vec<(&'static str, &'static str)> {
    commands(context)
        .iter()
        .filter(|c| offered(app, c.when))
        .filter_map(|c| c.footer)
        .collect()
}

/// The help's text: every context's keys, then what the words on screen mean.
pub fn help_text() -> &'static str {
    static TEXT: LazyLock<String> = LazyLock::new(|| {
        let mut text = String::from("aimon-console: keys\n");
        for (context, title) in contexts() {
            if !title.is_empty() {
                text.push('\n');
                text.push_str(title);
                text.push('\n');
            }
            for (keys, lines) in commands(*context).iter().filter_map(|c| c.help) {
                for (i, line) in lines.lines().enumerate() {
                    let key = if i == 0 { keys } else { "" };
                    text.push_str(&format!("  {key:<18}{line}\n"));
                }
            }
        }
        text.push_str(WORDS);
        text
    });
    &TEXT
}

/// What the words on screen mean, after the keys.
const WORDS: &str = include_str!("../../assets/help_words.txt");
