//! Which agent profile `run`, the console and the daemon's sessions use: `--model` (`model`)
//! if given; else, for a session resumed, the profile it last used (if the config still has
//! it); else `agent.default`.

use std::path::Path;

use super::transcript::{self, Record};
use crate::config::{AgentConfig, ModelProfile};
use crate::text::sanitize;

/// The profile a run or the console uses, and what to tell the operator about it.
pub struct ProfileChoice {
    pub profile: ModelProfile,
    /// For `--resume`: why this profile continues the session (`the session's`, `--model`, …).
    pub why: Option<String>,
}

impl ProfileChoice {
    /// For `--resume`: which profile continues session `id`, and why that one.
    pub fn notice(&self, id: &str) -> Option<String> {
        let why = self.why.as_deref()?;
        Some(format!(
            "continuing session {} with profile {} (model {}; {why})",
            crate::text::sanitize_line(id, 80),
            sanitize(&self.profile.name, true),
            sanitize(&self.profile.model, true)
        ))
    }
}

/// `--model` if given; else, for `--resume`, the profile the session last used (if the config
/// still has it); else `agent.default`. An unknown `--model` or session is an error.
pub fn profile_choice(
    agent: &AgentConfig,
    dir: &Path,
    model: Option<&str>,
    resume: Option<&str>,
) -> Result<ProfileChoice, String> {
    let chosen = |name: Option<&str>| agent.profile(name).cloned().map_err(|e| e.to_string());
    let Some(id) = resume else {
        return Ok(ProfileChoice {
            profile: chosen(model)?,
            why: None,
        });
    };
    let records = transcript::locate(dir, id)
        .and_then(|path| transcript::read_kinds(&path, &["session", "resumed"]))
        .map_err(|e| e.to_string())?;
    let last = last_profile(&records);
    let (profile, why) = match (model, last) {
        (Some(name), _) => (chosen(Some(name))?, "--model".to_string()),
        (None, Some(last)) if agent.profiles.contains_key(last) => {
            (chosen(Some(last))?, "the session's".to_string())
        }
        (None, Some(last)) => (
            chosen(None)?,
            format!(
                "agent.default: the session's profile {} is no longer in the config",
                sanitize(last, true)
            ),
        ),
        (None, None) => (chosen(None)?, "agent.default".to_string()),
    };
    Ok(ProfileChoice {
        profile,
        why: Some(why),
    })
}

/// The profile a session was last continued with (its `resumed` lines), else started with.
fn last_profile(records: &[Record]) -> Option<&str> {
    records.iter().rev().find_map(|r| match r {
        Record::Session { profile, .. } | Record::Resumed { profile, .. } => Some(profile.as_str()),
        Record::Prompt { .. }
        | Record::Compacted { .. }
        | Record::Assistant { .. }
        | Record::ToolCall { .. }
        | Record::Approval { .. }
        | Record::Allowed { .. }
        | Record::Hook { .. }
        | Record::ToolResult { .. }
        | Record::Answer { .. }
        | Record::Stopped { .. } => None,
    })
}
