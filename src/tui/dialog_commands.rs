//! The keys of the views whose keys change as they are used: the dialogs the operator opens
//! (a resource being read, a form, the call editor, a text, the trust preview, the restart
//! question, the rules list, the help), a server's question as a form, a sampling request
//! being answered, the Tools filter line. Which list applies is `dialog(app)`; the footer
//! shows its entries that apply now, a view that draws its keys inside itself is given the
//! same entries, and the key test presses each.

use crossterm::event::KeyCode::{self, Char, Down, Enter, Esc, Left, PageDown, Tab};
use crossterm::event::KeyModifiers;

use super::app::App;
use super::commands::{cmd, with, Command, Dialog, Does::*, When::*, CTRL};
use super::modals::form::{FormEditor, FormPurpose};
use super::modals::sampling::SamplingStage;
use super::modals::viewer::ResourceView;
use super::modals::Modal;
use super::overlay::Layer;
use crate::runtime::{ElicitationMode, FieldKind};

/// The list of the view of kind `layer` (the one on top, or one under the quit question),
/// when it is one of these; `None` for the panes when the filter line is being written.
pub fn dialog(app: &App, layer: Option<Layer>) -> Option<Dialog> {
    let o = &app.overlays;
    Some(match layer {
        Some(Layer::Modal) => match o.modal.as_ref()? {
            Modal::Resource(view) if view.save.is_some() => Dialog::Saving,
            Modal::Resource(_) => Dialog::Viewer,
            Modal::Form(form) => match form.purpose {
                FormPurpose::Template { .. } => Dialog::TemplateForm,
                _ => Dialog::PromptForm,
            },
            Modal::Editor(editor) if editor.form.is_some() && !editor.raw => Dialog::CallForm,
            Modal::Editor(_) => Dialog::RawArguments,
            Modal::Prompt(_) | Modal::Instructions(_) | Modal::Text(_) => Dialog::Text,
            Modal::Trust(_) => Dialog::Trust,
            Modal::RestartAll => Dialog::RestartAll,
            Modal::Ledger { .. } => Dialog::Ledger,
            Modal::Help { .. } | Modal::Result { .. } => Dialog::Scrolled,
        },
        Some(Layer::Elicitation) => match (&o.elicitation_form, &o.elicitations.front()?.mode) {
            (Some(_), ElicitationMode::Form { .. }) => Dialog::ElicitationForm,
            _ => return None,
        },
        Some(Layer::Sampling) => match o.samplings.front()?.stage {
            SamplingStage::Review { .. } => return None,
            SamplingStage::Asking { .. } => Dialog::SamplingAsking,
            SamplingStage::Answer { .. } => Dialog::SamplingAnswer,
        },
        None if app.panes.tools.filter_editing => Dialog::Filter,
        _ => return None,
    })
}

/// The commands of `dialog`, in the order the footer gives them.
pub fn commands(dialog: Dialog) -> &'static [Command] {
    match dialog {
        Dialog::Viewer => VIEWER,
        Dialog::Saving => SAVING,
        Dialog::PromptForm => PROMPT_FORM,
        Dialog::TemplateForm => TEMPLATE_FORM,
        Dialog::CallForm => CALL_FORM,
        Dialog::RawArguments => RAW_ARGUMENTS,
        Dialog::ElicitationForm => ELICITATION_FORM,
        Dialog::Text => TEXT,
        Dialog::Trust => TRUST,
        Dialog::RestartAll => RESTART_ALL,
        Dialog::Ledger => LEDGER,
        Dialog::Scrolled => SCROLLED,
        Dialog::SamplingAsking => SAMPLING_ASKING,
        Dialog::SamplingAnswer => SAMPLING_ANSWER,
        Dialog::Filter => FILTER,
    }
}

const SCROLL: Command = cmd(
    Some(("↑↓/PgUp/PgDn", "scroll")),
    None,
    If(scrolls),
    Down,
    Moves,
);
const CLOSE: Command = cmd(Some(("Esc", "close")), None, Always, Esc, Closes);
const CANCEL: Command = cmd(Some(("Esc", "cancel")), None, Always, Esc, Closes);
const fn ctrl(c: char) -> (KeyCode, KeyModifiers) {
    (Char(c), CTRL)
}

const VIEWER: &[Command] = &[
    SCROLL,
    cmd(Some(("w", "save")), None, If(blob), Char('w'), Changes),
    cmd(
        Some(("s", "unsubscribe")),
        None,
        If(subscribed),
        Char('s'),
        Runs("Subscribe"),
    ),
    cmd(
        Some(("s", "subscribe")),
        None,
        If(not_subscribed),
        Char('s'),
        Runs("Subscribe"),
    ),
    CLOSE,
];

const SAVING: &[Command] = &[
    with(
        (Enter, KeyModifiers::NONE),
        "x.bin",
        cmd(Some(("Enter", "write")), None, Always, Enter, Runs("Save")),
    ),
    cmd(Some(("Esc", "back")), None, Always, Esc, Changes),
];

/// The keys of a form's fields, after its own. (A prompt's arguments and a template's
/// variables are text: the server may suggest their values. A tool's arguments and a server's
/// question may be yes-no or choices: no server suggests those.)
const FIELD: Command = cmd(Some(("↑↓", "field")), None, Always, Down, Changes);
const TOGGLE: Command = cmd(
    Some(("Space", "toggle")),
    None,
    If(on_yes_no),
    Char(' '),
    Changes,
);
const CHOOSE: Command = cmd(Some(("←→", "choose")), None, If(on_choice), Left, Changes);
const PICK: Command = cmd(
    Some(("←→/Space", "pick")),
    None,
    If(on_choices),
    Char(' '),
    Changes,
);
const COMPLETE: Command = cmd(Some(("Tab", "complete")), None, If(suggests), Tab, Changes);

const PROMPT_FORM: &[Command] = &[
    with(
        ctrl('s'),
        "x",
        cmd(
            Some(("Ctrl-S", "send")),
            None,
            Always,
            Enter,
            Runs("GetPrompt"),
        ),
    ),
    CANCEL,
    FIELD,
    COMPLETE,
];

const TEMPLATE_FORM: &[Command] = &[
    with(
        ctrl('s'),
        "x",
        cmd(
            Some(("Ctrl-S", "send")),
            None,
            Always,
            Enter,
            Runs("ReadResource"),
        ),
    ),
    CANCEL,
    FIELD,
    COMPLETE,
];

/// Ctrl-S in the call editor, as a form or as raw JSON.
const SEND_CALL: Command = with(
    ctrl('s'),
    "",
    cmd(Some(("Ctrl-S", "send")), None, Always, Enter, Runs("Call")),
);

const CALL_FORM: &[Command] = &[
    SEND_CALL,
    with(
        ctrl('r'),
        "",
        cmd(Some(("Ctrl-R", "raw JSON")), None, Always, Enter, Changes),
    ),
    CANCEL,
    FIELD,
    TOGGLE,
    CHOOSE,
    PICK,
];

const RAW_ARGUMENTS: &[Command] = &[
    SEND_CALL,
    with(
        ctrl('r'),
        "",
        cmd(Some(("Ctrl-R", "form")), None, If(has_form), Enter, Changes),
    ),
    with(
        ctrl('u'),
        "",
        cmd(Some(("Ctrl-U", "clear line")), None, Always, Enter, Changes),
    ),
    CANCEL,
];

const ELICITATION_FORM: &[Command] = &[
    with(
        ctrl('s'),
        "",
        cmd(
            Some(("Ctrl-S", "accept")),
            Some((
                "Ctrl-S",
                "a form: accept (checked against its schema first)",
            )),
            Always,
            Enter,
            Closes,
        ),
    ),
    with(
        ctrl('d'),
        "",
        cmd(
            Some(("Ctrl-D", "decline")),
            Some(("Ctrl-D", "a form: decline")),
            Always,
            Enter,
            Closes,
        ),
    ),
    CANCEL,
    cmd(
        Some(("↑↓", "field")),
        Some((
            "↑ ↓  Tab",
            "a form: field; Space / ← → for yes-no and choices",
        )),
        Always,
        Down,
        Changes,
    ),
    TOGGLE,
    CHOOSE,
    PICK,
];

const TEXT: &[Command] = &[SCROLL, CLOSE];

const TRUST: &[Command] = &[
    cmd(
        Some(("y/Enter", "write")),
        None,
        Always,
        Char('y'),
        Runs("WriteTrust"),
    ),
    cmd(Some(("n/Esc", "cancel")), None, Always, Esc, Closes),
    cmd(
        Some(("↑↓/PgUp/PgDn", "scroll")),
        None,
        Scrolls,
        PageDown,
        Moves,
    ),
];

const RESTART_ALL: &[Command] = &[
    cmd(
        Some(("y", "restart all")),
        None,
        Always,
        Char('y'),
        Runs("RestartAll"),
    ),
    cmd(Some(("n/Esc", "back")), None, Always, Esc, Closes),
];

const LEDGER: &[Command] = &[
    cmd(Some(("d", "revoke")), None, If(listed), Char('d'), Changes),
    cmd(Some(("↑↓", "move")), None, If(listed), Down, Moves),
    CLOSE,
];

const SCROLLED: &[Command] = &[
    cmd(Some(("↑↓", "scroll")), None, Scrolls, Down, Moves),
    CLOSE,
];

const SAMPLING_ASKING: &[Command] = &[cmd(
    Some(("Esc", "stop the model")),
    None,
    Always,
    Esc,
    Changes,
)];

const SAMPLING_ANSWER: &[Command] = &[
    with(
        ctrl('s'),
        "",
        cmd(Some(("Ctrl-S", "send it")), None, Always, Enter, Closes),
    ),
    with(
        ctrl('r'),
        "",
        cmd(Some(("Ctrl-R", "back")), None, Always, Enter, Changes),
    ),
    cmd(Some(("Esc", "reject")), None, Always, Esc, Closes),
    cmd(
        Some(("PgUp/PgDn", "scroll the request")),
        None,
        Always,
        PageDown,
        Moves,
    ),
];

const FILTER: &[Command] = &[
    cmd(Some(("Enter", "keep filter")), None, Always, Enter, Moves),
    cmd(Some(("Esc", "clear")), None, Always, Esc, Moves),
];

/// The resource or the text on screen has more than it shows.
fn scrolls(app: &App) -> bool {
    match &app.overlays.modal {
        Some(Modal::Resource(view)) => view.scrolls(),
        Some(Modal::Prompt(view) | Modal::Instructions(view) | Modal::Text(view)) => view.scrolls(),
        _ => false,
    }
}

fn viewer(app: &App) -> Option<&ResourceView> {
    match app.overlays.modal.as_ref()? {
        Modal::Resource(view) => Some(view),
        _ => None,
    }
}

/// The resource read is a blob (`w` writes it to a file).
fn blob(app: &App) -> bool {
    viewer(app).is_some_and(|v| v.bytes_to_save().is_some())
}

fn subscribed(app: &App) -> bool {
    viewer(app).is_some_and(|v| v.subscribed)
}

fn not_subscribed(app: &App) -> bool {
    viewer(app).is_some_and(|v| !v.subscribed)
}

/// The form on top: the operator's, the call editor's, or a server's question.
fn form(app: &App) -> Option<&FormEditor> {
    let o = &app.overlays;
    match (dialog(app, app.top_layer())?, o.modal.as_ref()) {
        (Dialog::PromptForm | Dialog::TemplateForm, Some(Modal::Form(form))) => Some(form),
        (Dialog::CallForm, Some(Modal::Editor(editor))) => editor.form.as_ref(),
        (Dialog::ElicitationForm, _) => o.elicitation_form.as_ref(),
        _ => None,
    }
}

fn focused(app: &App) -> Option<&FieldKind> {
    form(app)
        .and_then(|f| f.fields.get(f.focus))
        .map(|f| &f.kind)
}

/// The field in focus is a yes-no one.
fn on_yes_no(app: &App) -> bool {
    matches!(focused(app), Some(FieldKind::Boolean))
}

/// The field in focus is a choice of one.
fn on_choice(app: &App) -> bool {
    matches!(focused(app), Some(FieldKind::Choice(_)))
}

/// The field in focus is a choice of several.
fn on_choices(app: &App) -> bool {
    matches!(focused(app), Some(FieldKind::MultiChoice { .. }))
}

/// The server suggested completions for the field in focus.
fn suggests(app: &App) -> bool {
    form(app).is_some_and(|f| !f.suggestions.is_empty())
}

/// The call editor's raw JSON can go back to a form (the schema has properties).
fn has_form(app: &App) -> bool {
    matches!(&app.overlays.modal, Some(Modal::Editor(editor)) if editor.form.is_some())
}

/// The rules list has an entry.
fn listed(app: &App) -> bool {
    matches!(&app.overlays.modal, Some(Modal::Ledger { entries, .. }) if !entries.is_empty())
}
