//! Every key the panes answer, one list per pane and one for anywhere: the footer shows the
//! entries that apply now, the help (`?`, F1) lists them all, and the key test presses each
//! and checks that it does what the list says. The keys' handlers are in `keys.rs` and
//! `chat/keys.rs`; this is what is said about them, in one place, so the footer, the help and
//! the handlers cannot drift apart unnoticed.

use std::sync::LazyLock;

use crossterm::event::{KeyCode, KeyModifiers};

use super::app::App;
use super::listing::RowKind;
use super::overlay::Layer;
use super::pane_state::Pane;
use crate::config::TransportKind;
use crate::tui::state::ServerRow;

/// When a command applies (the footer offers it only then; the help lists it always).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    /// The selected server can be asked for a log level.
    CanLog,
    /// The selected server sent instructions.
    HasInstructions,
    /// The selected server is a stdio one (it has a stderr tail).
    Stdio,
    /// The selected server is a streamable_http one (OAuth).
    CanLogin,
    /// A row is selected.
    Selected,
    /// The selected resource row is a template.
    Template,
    /// The selected resource row is a resource, subscribed.
    Subscribed,
    /// The selected resource row is a resource, not subscribed.
    NotSubscribed,
    /// The selected call is still running.
    Cancellable,
    /// The Events pane holds a line rather than following the newest.
    Holding,
    /// The agent is at work.
    Busy,
    /// The approval on screen may be given for the session (not a destructive tool).
    SessionAllowed,
    /// The view on screen has more than it shows (its scroll keys do something).
    Scrolls,
    /// Not listed in the footer, only in the help.
    HelpOnly,
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

const NONE: KeyModifiers = KeyModifiers::NONE;

const fn cmd(
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

const fn with(press: (KeyCode, KeyModifiers), typed: &'static str, command: Command) -> Command {
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
    /// review, the pickers. (A form, the call editor, a viewer and a sampling answer name
    /// their own keys, which change as they are used.)
    Overlay(Layer),
    /// `A` on a destructive tool: the approval asks once more.
    ApprovalConfirm,
    /// A server's question as a form (help only: the form's own keys are its footer).
    ElicitationForm,
}

use Does::*;
use KeyCode::{Char, End, Enter, Esc, PageUp, Tab, Up};
use When::*;

const ANYWHERE: &[Command] = &[
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
    cmd(None, Some(("R", "restart all: close every server, re-read the config\n(asks first while calls run: they end cancelled)")), HelpOnly, Char('R'), Opens(Layer::Modal)),
    cmd(Some(("q", "quit")), Some(("q  Ctrl-C", "quit (asks first while calls run, the agent works,\nor a prompt is being written)")), Always, Char('q'), Quits),
    cmd(Some(("?", "help")), Some(("?", "this help (Esc or ? closes)")), Always, Char('?'), Opens(Layer::Modal)),
];

const SERVERS: &[Command] = &[
    cmd(Some(("t", "trust")), Some(("t", "toggle annotation trust: preview, then write config")), Always, Char('t'), Opens(Layer::Modal)),
    cmd(Some(("r", "restart")), Some(("r", "start the selected server again: a failed one too\n(its entry re-read from the config; applies pending trust)")), Always, Char('r'), Runs("RestartServer")),
    cmd(Some(("R", "all")), None, Always, Char('R'), Opens(Layer::Modal)),
    cmd(Some(("c", "command")), Some(("c", "how it is started: the command line (cwd, env; secret\nvalues left out) or endpoint, whole, to copy")), Always, Char('c'), Opens(Layer::Modal)),
    cmd(Some(("l", "log level")), Some(("l", "log level asked of it: warning, error, debug, info")), CanLog, Char('l'), Runs("SetLogLevel")),
    cmd(Some(("o", "login")), Some(("o", "OAuth login (streamable_http): browser, then restart")), CanLogin, Char('o'), Runs("Login")),
    cmd(Some(("i", "instructions")), Some(("i", "its instructions, whole (also in Details)")), HasInstructions, Char('i'), Opens(Layer::Modal)),
];

const DETAILS: &[Command] = &[
    cmd(Some(("PgUp/PgDn", "stderr")), None, Stdio, PageUp, Moves),
    cmd(
        Some(("r", "restart")),
        None,
        Always,
        Char('r'),
        Runs("RestartServer"),
    ),
    cmd(
        Some(("c", "command")),
        None,
        Always,
        Char('c'),
        Opens(Layer::Modal),
    ),
    cmd(
        Some(("i", "instructions")),
        None,
        HasInstructions,
        Char('i'),
        Opens(Layer::Modal),
    ),
    cmd(
        Some(("l", "log level")),
        None,
        CanLog,
        Char('l'),
        Runs("SetLogLevel"),
    ),
    cmd(
        Some(("o", "login")),
        None,
        CanLogin,
        Char('o'),
        Runs("Login"),
    ),
    // Last: the pane says it where it cuts the summary.
    cmd(
        Some(("Enter", "view all")),
        Some(("Enter", "the whole summary and stderr tail, scrollable")),
        Always,
        Enter,
        Opens(Layer::Modal),
    ),
];

const TOOLS: &[Command] = &[
    cmd(Some(("Enter", "call")), Some(("Enter", "call it: a form, a field per argument (↑ ↓ Tab move;\n* required; defaults and your last arguments filled\nin), Ctrl-R raw JSON and back, Ctrl-S sends")), Always, Enter, Opens(Layer::Modal)),
    cmd(Some(("d", "describe")), Some(("d", "its whole description, traits and input schema")), Always, Char('d'), Opens(Layer::Modal)),
    cmd(Some(("/", "filter")), Some(("/", "filter by name or description (Ctrl-U empties it,\nEsc clears it)")), Always, Char('/'), Moves),
];

const RESOURCES: &[Command] = &[
    cmd(Some(("Enter", "fill in and read")), None, Template, Enter, Opens(Layer::Modal)),
    cmd(Some(("Enter", "read")), Some(("Enter", "read it (text scrolls; a blob: w saves it to a file);\na template: fill in its variables (suggestions: Tab)")), NotSubscribed, Enter, Runs("ReadResource")),
    cmd(Some(("s", "unsubscribe")), None, Subscribed, Char('s'), Runs("Subscribe")),
    cmd(Some(("s", "subscribe")), Some(("s", "subscribe / unsubscribe: ◉; * marks an update\n(an open resource is read again)")), NotSubscribed, Char('s'), Runs("Subscribe")),
];

const PROMPTS: &[Command] = &[cmd(
    Some(("Enter", "get")),
    Some(("Enter", "fill in its arguments (Tab takes a suggestion),\nCtrl-S shows the messages the server returns")),
    Selected,
    Enter,
    Opens(Layer::Modal),
)];

const CALLS: &[Command] = &[
    cmd(
        Some(("Enter", "result")),
        Some(("Enter", "the whole result (it says both times)")),
        Selected,
        Enter,
        Opens(Layer::Modal),
    ),
    cmd(
        Some(("c", "cancel")),
        Some(("c", "cancel the selected call (it ends at once)")),
        Cancellable,
        Char('c'),
        Runs("CancelCall"),
    ),
];

const EVENTS: &[Command] = &[
    cmd(
        Some(("Enter", "whole line")),
        Some(("Enter", "the whole line")),
        Selected,
        Enter,
        Opens(Layer::Modal),
    ),
    cmd(
        Some(("↑↓", "scroll")),
        Some((
            "↑ ↓  PgUp PgDn",
            "scroll back; End follows the newest again",
        )),
        Always,
        Up,
        Moves,
    ),
    cmd(Some(("End", "follow")), None, Holding, End, Moves),
];

const CTRL: KeyModifiers = KeyModifiers::CONTROL;

const CONVERSATION: &[Command] = &[
    with((Enter, NONE), "x", cmd(Some(("Enter", "send")), Some(("Enter", "send the prompt (Alt-Enter or Ctrl-J: a new line)")), Always, Enter, Runs("Agent"))),
    with((Enter, KeyModifiers::ALT), "x", cmd(Some(("Alt-Enter", "new line")), None, Always, Enter, Edits)),
    cmd(Some(("Esc", "cancel turn")), Some(("Esc", "cancel the turn in flight: the model request is\ndropped, its running calls are cancelled")), Busy, Esc, Runs("Agent")),
    with((Char('p'), CTRL), "", cmd(Some(("Ctrl-P", "profile")), Some(("Ctrl-P", "agent profile (agent.models); the conversation goes on")), Always, Enter, Opens(Layer::ProfilePicker))),
    with((Char('n'), CTRL), "", cmd(Some(("Ctrl-N", "new")), Some(("Ctrl-N", "a new conversation (a new session; the note says how\nto continue the one left; approvals given with `a` stay)")), Always, Enter, Clears)),
    cmd(Some(("↑↓", "history")), Some(("↑ ↓", "earlier prompts (in a long prompt: its lines); an\nedited one stays edited until a prompt is sent")), Always, Up, Edits),
    with((Char('u'), CTRL), "abc", cmd(None, Some(("Ctrl-U", "clear the input")), HelpOnly, Enter, Edits)),
    cmd(Some(("PgUp/PgDn", "scroll")), Some(("PgUp PgDn", "scroll the conversation (scrolled up, it stays put\nwhile the answer goes on below)")), Always, PageUp, Moves),
    cmd(None, Some(("@", "attach a resource (a picker; typing filters; Esc, a\nspace, or Enter on no match types it as text); its text\ngoes with the prompt. Backspace in an empty box drops it")), HelpOnly, Char('@'), Opens(Layer::ContentPicker)),
    cmd(None, Some(("/", "(first) run a server prompt: its arguments, then its\nmessages join the conversation and the model answers")), HelpOnly, Char('/'), Opens(Layer::ContentPicker)),
];

/// The keys that work anywhere and also while typing in the Conversation (letters go to the
/// input there): the footer's second line in that pane.
const WHILE_TYPING: &[Command] = &[
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

const QUIT: &[Command] = &[
    cmd(Some(("y", "quit")), None, Always, Char('y'), Quits),
    cmd(Some(("n/Esc", "stay")), None, Always, Esc, Closes),
];

const APPROVAL: &[Command] = &[
    cmd(Some(("y", "allow once")), Some(("y", "allow once")), Always, Char('y'), Closes),
    cmd(Some(("n/Esc", "deny")), Some(("n  Esc", "deny")), Always, Esc, Closes),
    cmd(Some(("a", "allow for session")), Some(("a", "allow this tool until you quit or press R\n(not for a destructive tool)")), SessionAllowed, Char('a'), Closes),
    cmd(Some(("A", "always")), Some(("A", "always allow it: a rule in the config file (asks once\nmore for a destructive tool)")), Always, Char('A'), Runs("AlwaysAllow")),
    cmd(Some(("↑↓", "scroll")), Some(("↑ ↓  PgUp PgDn", "scroll the arguments (long values wrap, shown whole;\n\"lines 1–15 of 26\" says when there is more; Home End)\n(an agent's call says when it asked and its reason:\nthe text the model wrote just before the call)")), Scrolls, KeyCode::Down, Moves),
];

const APPROVAL_CONFIRM: &[Command] = &[
    cmd(
        Some(("y", "always allow")),
        None,
        Always,
        Char('y'),
        Runs("AlwaysAllow"),
    ),
    cmd(Some(("n/Esc", "back")), None, Always, Esc, Moves),
];

const ELICITATION_URL: &[Command] = &[
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

const ELICITATION_FORM: &[Command] = &[
    cmd(
        None,
        Some((
            "↑ ↓  Tab",
            "a form: field; Space / ← → for yes-no and choices",
        )),
        HelpOnly,
        KeyCode::Down,
        Moves,
    ),
    with(
        (Char('s'), CTRL),
        "",
        cmd(
            None,
            Some((
                "Ctrl-S",
                "a form: accept (checked against its schema first)",
            )),
            HelpOnly,
            Enter,
            Closes,
        ),
    ),
    with(
        (Char('d'), CTRL),
        "",
        cmd(
            None,
            Some(("Ctrl-D", "a form: decline")),
            HelpOnly,
            Enter,
            Closes,
        ),
    ),
];

const SAMPLING: &[Command] = &[
    cmd(Some(("y/Enter", "ask the model")), Some(("y  Enter", "the agent's model answers (nothing is sent yet);\nthen type to edit the answer, Ctrl-S sends it, Ctrl-R\ngoes back to the request")), Always, Char('y'), Runs("Sample")),
    cmd(Some(("n/Esc", "reject")), Some(("n  Esc", "reject: the server gets an error")), Always, Esc, Closes),
    cmd(Some(("↑↓/PgUp/PgDn", "scroll")), Some(("↑ ↓  PgUp PgDn", "scroll the request")), Always, KeyCode::Down, Moves),
];

const PROFILE_PICKER: &[Command] = &[
    cmd(Some(("Enter", "use")), None, Always, Enter, Closes),
    cmd(Some(("↑↓", "move")), None, Always, KeyCode::Down, Moves),
    cmd(Some(("Esc", "close")), None, Always, Esc, Closes),
];

const CONTENT_PICKER: &[Command] = &[
    cmd(Some(("Enter", "pick")), None, Always, Enter, Closes),
    cmd(Some(("↑↓", "move")), None, Always, KeyCode::Down, Moves),
    cmd(Some(("type", "filter")), None, Always, Char('t'), Moves),
    cmd(Some(("Esc", "as text")), None, Always, Esc, Closes),
];

/// The commands of `context`, in the order the footer and the help give them.
pub fn commands(context: Context) -> &'static [Command] {
    match context {
        Context::Anywhere => ANYWHERE,
        Context::WhileTyping => WHILE_TYPING,
        Context::Pane(Pane::Servers) => SERVERS,
        Context::Pane(Pane::Details) => DETAILS,
        Context::Pane(Pane::Tools) => TOOLS,
        Context::Pane(Pane::Calls) => CALLS,
        Context::Pane(Pane::Events) => EVENTS,
        Context::Pane(Pane::Resources) => RESOURCES,
        Context::Pane(Pane::Prompts) => PROMPTS,
        Context::Pane(Pane::Conversation) => CONVERSATION,
        Context::Overlay(Layer::Quit) => QUIT,
        Context::Overlay(Layer::Approval) => APPROVAL,
        Context::ApprovalConfirm => APPROVAL_CONFIRM,
        Context::Overlay(Layer::Elicitation) => ELICITATION_URL,
        Context::ElicitationForm => ELICITATION_FORM,
        Context::Overlay(Layer::Sampling) => SAMPLING,
        Context::Overlay(Layer::ProfilePicker) => PROFILE_PICKER,
        Context::Overlay(Layer::ContentPicker) => CONTENT_PICKER,
        // The dialog the operator opened names its own keys (they change with what it shows).
        Context::Overlay(Layer::Modal) => &[],
    }
}

/// The keys that work anywhere from `pane`: the footer's second line.
pub fn global_context(pane: Pane) -> Context {
    match pane {
        Pane::Conversation => Context::WhileTyping,
        Pane::Servers
        | Pane::Details
        | Pane::Tools
        | Pane::Calls
        | Pane::Events
        | Pane::Resources
        | Pane::Prompts => Context::Anywhere,
    }
}

/// Every context, in the help's order (the keys that work while typing close the
/// Conversation's section).
pub const CONTEXTS: [(Context, &str); 18] = [
    (
        Context::Anywhere,
        "Anywhere (in the Conversation, letters and digits go to the input:\nthere Tab, Alt-1 … Alt-8, F1 and Ctrl-C still work)",
    ),
    (Context::Pane(Pane::Servers), "Servers"),
    (Context::Pane(Pane::Details), "Details"),
    (Context::Pane(Pane::Tools), "Tools"),
    (Context::Pane(Pane::Resources), "Resources"),
    (Context::Pane(Pane::Prompts), "Prompts"),
    (
        Context::Pane(Pane::Calls),
        "Calls (the time is the run; a wait for approval is apart: waited 3.6s)",
    ),
    (Context::Pane(Pane::Events), "Events"),
    (
        Context::Pane(Pane::Conversation),
        "Conversation (the agent: a model calling the tools through the same gate)",
    ),
    (Context::WhileTyping, ""),
    (Context::Overlay(Layer::Approval), "Approval (shown when a call waits for you)"),
    (Context::ApprovalConfirm, ""),
    (
        Context::Overlay(Layer::Elicitation),
        "A server asks (elicitation; after approvals)",
    ),
    (Context::ElicitationForm, ""),
    (
        Context::Overlay(Layer::Sampling),
        "A server asks for a model's message (sampling; with an agent configured)",
    ),
    (Context::Overlay(Layer::ProfilePicker), ""),
    (Context::Overlay(Layer::ContentPicker), ""),
    (Context::Overlay(Layer::Quit), ""),
];

/// Whether `command` applies now, to what `app` has selected.
pub fn offered(app: &App, when: When) -> bool {
    let server = app.selected_server();
    let resource = app.panes.resources.selected_row();
    match when {
        Always => true,
        HelpOnly => false,
        CanLog => server.is_some_and(|s| s.cannot_log().is_none()),
        HasInstructions => server.is_some_and(ServerRow::has_instructions),
        Stdio => server.is_some_and(|s| s.transport == TransportKind::Stdio),
        CanLogin => server.is_some_and(ServerRow::can_login),
        Selected => match app.focus {
            Pane::Calls => app.calls.rows.get(app.panes.calls.selected).is_some(),
            Pane::Prompts => !app.panes.prompts.rows.is_empty(),
            Pane::Events => !app.events.rows.is_empty(),
            Pane::Servers | Pane::Details | Pane::Tools | Pane::Resources | Pane::Conversation => {
                true
            }
        },
        Template => resource.is_some_and(|r| r.kind == RowKind::Template),
        Subscribed => resource.is_some_and(|r| r.kind != RowKind::Template && r.subscribed),
        NotSubscribed => resource.is_some_and(|r| r.kind != RowKind::Template && !r.subscribed),
        Cancellable => app
            .calls
            .rows
            .get(app.panes.calls.selected)
            .is_some_and(|r| r.cancellable()),
        Holding => app.panes.events.selected.is_some(),
        Busy => app.chat.busy(),
        SessionAllowed => app
            .overlays
            .approvals
            .front()
            .is_some_and(|r| r.session_approval_allowed()),
        Scrolls => app.overlays.scroll_limit.get() > 0,
    }
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
        for (context, title) in CONTEXTS {
            if !title.is_empty() {
                text.push('\n');
                text.push_str(title);
                text.push('\n');
            }
            for (keys, lines) in commands(context).iter().filter_map(|c| c.help) {
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
