//! Which agent profile `run` and the console use: `--model` if given; else, for `--resume`,
//! the profile the session last used (if the config still has it); else `agent.default`.

use std::path::Path;

use super::output::safe_text;
use crate::agent::transcript;
use crate::config::{AgentConfig, ModelProfile};

/// The profile a run or the console uses, and what to tell the operator about it.
pub(super) struct ProfileChoice {
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
            safe_text(&self.profile.name),
            safe_text(&self.profile.model)
        ))
    }
}

/// `--model` if given; else, for `--resume`, the profile the session last used (if the config
/// still has it); else `agent.default`. An unknown `--model` or session is an error.
pub(super) fn profile_choice(
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
        .and_then(|path| transcript::read(&path))
        .map_err(|e| e.to_string())?;
    let last = transcript::last_profile(&records);
    let (profile, why) = match (model, last) {
        (Some(name), _) => (chosen(Some(name))?, "--model".to_string()),
        (None, Some(last)) if agent.profiles.contains_key(last) => {
            (chosen(Some(last))?, "the session's".to_string())
        }
        (None, Some(last)) => (
            chosen(None)?,
            format!(
                "agent.default: the session's profile {} is no longer in the config",
                safe_text(last)
            ),
        ),
        (None, None) => (chosen(None)?, "agent.default".to_string()),
    };
    Ok(ProfileChoice {
        profile,
        why: Some(why),
    })
}
