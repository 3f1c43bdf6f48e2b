//! What is said about keys: a command is a key with its footer entry, its help lines, when it
//! applies and what pressing it does. Each pane lists its own (`panes/*.rs`, `COMMANDS`); the
//! lists of anywhere and of the views over the panes are here. `hints.rs` gathers them for the
//! footer and the help; the key test presses each and checks that it does what its list says,
//! so the footer, the help and the handlers cannot drift apart unnoticed.

use crossterm::event::{KeyCode, KeyModifiers};

use super::app::App;
use super::overlay::Layer;
use super::pane_state::Pane;

/// When a command applies (the footer offers it only then; the help lists it always).
#[derive(Debug, Clone, Copy)]
pub enum When {
    Always,
    /// Not listed in the footer, only in the help.
    HelpOnly,
    /// The agent is at work.
    Busy,
    /// The approval on screen may be given for the session (not a destructive tool).
    SessionAllowed,
    /// The view on screen has more than it shows (its scroll keys do something).
    Scrolls,
    /// What the pane has selected allows it (the pane's own test of it).
    If(fn(&App) -> bool),
}

/// What pressing a command does, as the key test checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Does {
    /// Another pane is focused.
    Refocuses,
    /// This view goes on top.
    Opens(Layer),
    /// Work for the event loop: an effect whose variant has this name.
    Runs(&'static str),
    /// Quits, or asks first when something is at stake.
    Quits,
    /// The pane's selection, scroll or filter changes.
    Moves,
    /// The Conversation's input changes.
    Edits,
    /// The conversation starts anew (its entries go; the session is left on disk).
    Clears,
    /// The view on top closes (answered, cancelled or put away), showing the one below.
    Closes,
    /// The view on top changes in itself (a field, a choice, raw JSON and back, the save
    /// line, a question asked once more).
    Changes,
}

/// One key of a pane, as the footer, the help and the key test know it.
#[derive(Debug, Clone, Copy)]
pub struct Command {
    /// The key as the footer writes it (`None`: the help's entry only).
    pub footer: Option<(&'static str, &'static str)>,
    /// The key as the help writes it, and its lines there (`None`: listed in another section).
    pub help: Option<(&'static str, &'static str)>,
    pub when: When,
    /// What the key test types first (text the command needs), then presses, and what it
    /// checks the key did: read by that test only (`tui/tests/commands.rs`).
    #[cfg_attr(not(test), allow(dead_code))]
    pub typed: &'static str,
    #[cfg_attr(not(test), allow(dead_code))]
    pub press: (KeyCode, KeyModifiers),
    #[cfg_attr(not(test), allow(dead_code))]
    pub does: Does,
}

pub(super) const NONE: KeyModifiers = KeyModifiers::NONE;

pub(super) const fn cmd(
    footer: Option<(&'static str, &'static str)>,
    help: Option<(&'static str, &'static str)>,
    when: When,
    press: KeyCode,
    does: Does,
) -> Command {
    Command {
        footer,
        help,
        when,
        typed: "",
        press: (press, NONE),
        does,
    }
}

pub(super) const fn with(
    press: (KeyCode, KeyModifiers),
    typed: &'static str,
    command: Command,
) -> Command {
    Command {
        press,
        typed,
        ..command
    }
}

/// Where a list applies: a pane, anywhere outside the Conversation's input, anywhere
/// including it, or a view over the panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Anywhere,
    WhileTyping,
    Pane(Pane),
    /// The quit question, an approval, a server's URL request, a sampling request under
    /// review, the pickers.
    Overlay(Layer),
    /// `A` on a destructive tool: the approval asks once more.
    ApprovalConfirm,
    /// A dialog the operator opened, a server's request being answered, the filter line
    /// (`dialog_commands.rs`).
    Dialog(Dialog),
}

/// The views whose keys change as they are used: each state a list of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    /// A resource being read (its save line is `Saving`).
    Viewer,
    Saving,
    /// A prompt's arguments, a template's variables.
    PromptForm,
    TemplateForm,
    /// A tool's arguments as a form, and as raw JSON.
    CallForm,
    RawArguments,
    /// A server's question as a form.
    ElicitationForm,
    /// A text shown whole: instructions, a prompt's messages, an Events line, Details.
    Text,
    Trust,
    RestartAll,
    Ledger,
    /// The help, a call's result.
    Scrolled,
    /// A sampling request: the model answering, and its answer.
    SamplingAsking,
    SamplingAnswer,
    /// The Tools filter line.
    Filter,
}

impl Dialog {
    pub const ALL: [Dialog; 15] = [
        Dialog::Viewer,
        Dialog::Saving,
        Dialog::PromptForm,
        Dialog::TemplateForm,
        Dialog::CallForm,
        Dialog::RawArguments,
        Dialog::ElicitationForm,
        Dialog::Text,
        Dialog::Trust,
        Dialog::RestartAll,
        Dialog::Ledger,
        Dialog::Scrolled,
        Dialog::SamplingAsking,
        Dialog::SamplingAnswer,
        Dialog::Filter,
    ];
}

use Does::*;
use KeyCode::{Char, Enter, Esc, Tab};
use When::*;

pub(super) const ANYWHERE: &[Command] = &[
    cmd(
        Some(("Tab/1-8", "pane")),
        Some(("Tab / Shift-Tab", "next / previous pane (on a large screen, of those shown;\nthe digits pick Conversation, Tools, Resources, Prompts)")),
        Always,
        Tab,
        Refocuses,
    ),
    cmd(None, Some(("1 2 3 4 5 6 7", "Servers, Details, Tools, Calls, Events, Resources, Prompts")), HelpOnly, Char('4'), Refocuses),
    cmd(None, Some(("8", "Conversation (when the config has an agent)")), HelpOnly, Char('8'), Refocuses),
    with(
        (Char('4'), KeyModifiers::ALT),
        "",
        cmd(None, Some(("Alt-1 … Alt-8", "the same, from the Conversation's input or a filter too")), HelpOnly, Tab, Refocuses),
    ),
    cmd(None, Some(("↑ ↓  or  j k", "move in the pane")), HelpOnly, Char('j'), Moves),
    cmd(None, Some(("PgUp PgDn", "page (the stderr tail in Details, lists)")), HelpOnly, KeyCode::PageDown, Moves),
    cmd(Some(("L", "approvals")), Some(("L", "rules (policy.rules) and session approvals; d revokes\n(a rule: d twice, it is removed from the config file)")), Always, Char('L'), Opens(Layer::Modal)),
    cmd(None, Some(("R", "restart all: close every server, re-read the config\n(attached: every daemon's, each on its own config)\n(asks first while calls run: they end cancelled)")), HelpOnly, Char('R'), Opens(Layer::Modal)),
    cmd(Some(("q", "quit")), Some(("q  Ctrl-C", "quit (asks first while calls run, the agent works,\nor a prompt is being written)")), Always, Char('q'), Quits),
    cmd(Some(("?", "help")), Some(("?", "this help (Esc or ? closes)")), Always, Char('?'), Opens(Layer::Modal)),
];

pub(super) const CTRL: KeyModifiers = KeyModifiers::CONTROL;

/// The keys that work anywhere and also while typing in the Conversation (letters go to the
/// input there): the footer's second line in that pane.
pub(super) const WHILE_TYPING: &[Command] = &[
    cmd(
        Some(("Tab/Alt-1-8", "pane")),
        Some((
            "Tab  Alt-1 … 8",
            "another pane (letters and digits go to the input)",
        )),
        Always,
        Tab,
        Refocuses,
    ),
    cmd(
        Some(("F1", "help")),
        Some(("F1", "this help")),
        Always,
        KeyCode::F(1),
        Opens(Layer::Modal),
    ),
    with(
        (Char('c'), CTRL),
        "",
        cmd(
            Some(("Ctrl-C", "quit")),
            Some((
                "Ctrl-C",
                "quit (asks first while the agent works or a prompt is\nbeing written)",
            )),
            Always,
            Enter,
            Quits,
        ),
    ),
];

pub(super) const QUIT: &[Command] = &[
    cmd(Some(("y", "quit")), None, Always, Char('y'), Quits),
    cmd(Some(("n/Esc", "stay")), None, Always, Esc, Closes),
];

pub(super) const APPROVAL: &[Command] = &[
    cmd(Some(("y", "allow once")), Some(("y", "allow once")), Always, Char('y'), Closes),
    cmd(Some(("n/Esc", "deny")), Some(("n  Esc", "deny")), Always, Esc, Closes),
    cmd(Some(("a", "allow for session")), Some(("a", "allow this tool until you quit or press R\n(not for a destructive tool)")), SessionAllowed, Char('a'), Closes),
    cmd(Some(("A", "always")), Some(("A", "always allow it: a rule in the config file (asks once\nmore for a destructive tool)")), Always, Char('A'), Runs("AlwaysAllow")),
    cmd(Some(("↑↓", "scroll")), Some(("↑ ↓  PgUp PgDn", "scroll the arguments (long values wrap, shown whole;\n\"lines 1–15 of 26\" says when there is more; Home End)\n(an agent's call says when it asked and its reason:\nthe text the model wrote just before the call)")), Scrolls, KeyCode::Down, Moves),
];

pub(super) const APPROVAL_CONFIRM: &[Command] = &[
    cmd(
        Some(("y", "always allow")),
        None,
        Always,
        Char('y'),
        Runs("AlwaysAllow"),
    ),
    cmd(Some(("n/Esc", "back")), None, Always, Esc, Moves),
];

pub(super) const ELICITATION_URL: &[Command] = &[
    cmd(
        Some(("o/Enter", "open (accept)")),
        Some(("o  Enter", "a URL: open it (xdg-open) and accept")),
        Always,
        Char('o'),
        Runs("OpenUrl"),
    ),
    cmd(
        Some(("d", "decline")),
        Some(("d", "a URL: decline")),
        Always,
        Char('d'),
        Closes,
    ),
    cmd(
        Some(("Esc", "cancel")),
        Some(("Esc", "cancel")),
        Always,
        Esc,
        Closes,
    ),
];

pub(super) const SAMPLING: &[Command] = &[
    cmd(Some(("y/Enter", "ask the model")), Some(("y  Enter", "the agent's model answers (nothing is sent yet);\nthen type to edit the answer, Ctrl-S sends it, Ctrl-R\ngoes back to the request")), Always, Char('y'), Runs("Sample")),
    cmd(Some(("n/Esc", "reject")), Some(("n  Esc", "reject: the server gets an error")), Always, Esc, Closes),
    cmd(Some(("↑↓/PgUp/PgDn", "scroll")), Some(("↑ ↓  PgUp PgDn", "scroll the request")), Always, KeyCode::Down, Moves),
];

pub(super) const PROFILE_PICKER: &[Command] = &[
    cmd(Some(("Enter", "use")), None, Always, Enter, Closes),
    cmd(Some(("↑↓", "move")), None, Always, KeyCode::Down, Moves),
    cmd(Some(("Esc", "close")), None, Always, Esc, Closes),
];

pub(super) const CONTENT_PICKER: &[Command] = &[
    cmd(Some(("Enter", "pick")), None, Always, Enter, Closes),
    cmd(Some(("↑↓", "move")), None, Always, KeyCode::Down, Moves),
    cmd(Some(("type", "filter")), None, Always, Char('t'), Moves),
    cmd(Some(("Esc", "as text")), None, Always, Esc, Closes),
];

/// Whether a command that applies `when` applies now.
pub fn offered(app: &App, when: When) -> bool {
    match when {
        Always => true,
        HelpOnly => false,
        Busy => app.chat.busy(),
        SessionAllowed => app
            .overlays
            .approvals
            .front()
            .is_some_and(|r| r.session_approval_allowed()),
        Scrolls => app.overlays.scroll_limit.get() > 0,
        If(applies) => applies(app),
    }
}
