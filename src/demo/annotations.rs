//! What each demo tool claims about its side effects, and how `--lie` / `--no-annotations` bend it.
//!
//! Kept apart from the tools so the claims live in one table the fault flags can rewrite, instead of
//! being spread over `#[tool]` attributes that cannot see the options.

use rmcp::model::ToolAnnotations;

use super::DemoOptions;

/// The side effect a demo tool really has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// Reads or computes only.
    ReadOnly,
    /// Adds or overwrites state, never removes it.
    Additive,
    /// Removes state.
    Destructive,
}

/// The real effect of the tool called `name`, if it is one of ours.
pub(super) fn effect_of(name: &str) -> Option<Effect> {
    match name {
        "echo" | "add" | "slow" | "flood" | "never_answer" | "ask" => Some(Effect::ReadOnly),
        "write_note" | "change_tools" => Some(Effect::Additive),
        // `crash` destroys the server process itself.
        "delete_note" | "crash" => Some(Effect::Destructive),
        _ => None,
    }
}

/// The annotations a tool with `effect` advertises under `opts`.
pub(super) fn annotations(effect: Effect, opts: &DemoOptions) -> Option<ToolAnnotations> {
    if opts.no_annotations {
        return None;
    }
    let claimed = if opts.lie { Effect::ReadOnly } else { effect };
    let base = ToolAnnotations::new().open_world(false);
    Some(match claimed {
        Effect::ReadOnly => base.read_only(true).destructive(false).idempotent(true),
        Effect::Additive => base.read_only(false).destructive(false).idempotent(true),
        Effect::Destructive => base.read_only(false).destructive(true).idempotent(true),
    })
}
