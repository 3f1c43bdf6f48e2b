//! Each format's `${…}` variables rewritten into this config's: `${NAME}` is an environment
//! variable here, `$${` a literal `${`. Claude Desktop and Codex expand nothing, so every `${`
//! they hold is literal; Claude Code knows `${VAR}` and `${VAR:-default}`; VS Code knows
//! `${env:VAR}`, `${input:id}` (asked of the user) and its own folders.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::expand::is_var_name;

/// How a format's values treat `${…}`.
#[derive(Debug, Clone)]
pub(super) enum Vars {
    /// Already in this config's terms (Codex's reader escapes as it reads).
    Ours,
    /// Nothing is expanded: every `${` is literal.
    Literal,
    /// Claude Code: `${VAR}`, `${VAR:-default}`.
    ClaudeCode,
    /// VS Code: `${env:VAR}`, `${input:id}` (with the inputs' descriptions), `${userHome}`,
    /// `${workspaceFolder}` and friends.
    VsCode { inputs: BTreeMap<String, String> },
}

impl Vars {
    /// The folder relative paths of the file at `path` are read against: for VS Code the
    /// workspace (the folder holding `.vscode/`), else the file's own folder.
    pub(super) fn base(&self, path: &Path) -> Option<PathBuf> {
        let absolute = std::path::absolute(path).ok()?;
        let folder = absolute.parent()?.to_path_buf();
        match self {
            Vars::VsCode { .. } if folder.file_name().is_some_and(|n| n == ".vscode") => {
                folder.parent().map(Path::to_path_buf)
            }
            Vars::VsCode { .. } | Vars::Ours | Vars::Literal | Vars::ClaudeCode => Some(folder),
        }
    }

    /// `value` in this config's terms; what had to change is added to `notes`.
    pub(super) fn convert(&self, value: &str, notes: &mut Vec<String>) -> String {
        match self {
            Vars::Ours => return value.to_string(),
            Vars::Literal => return value.replace("${", "$${"),
            Vars::ClaudeCode | Vars::VsCode { .. } => {}
        }
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(at) = rest.find("${") {
            out.push_str(&rest[..at]);
            let after = &rest[at + 2..];
            let Some(close) = after.find('}') else {
                out.push_str("$${");
                rest = after;
                continue;
            };
            out.push_str(&self.variable(&after[..close], notes));
            rest = &after[close + 1..];
        }
        out.push_str(rest);
        out
    }

    /// One `${inner}`.
    fn variable(&self, inner: &str, notes: &mut Vec<String>) -> String {
        let mut note = |n: String| {
            if !notes.contains(&n) {
                notes.push(n);
            }
        };
        let literal = format!("$${{{inner}}}");
        match self {
            Vars::Ours | Vars::Literal => literal,
            Vars::ClaudeCode => {
                if is_var_name(inner) {
                    return format!("${{{inner}}}");
                }
                match inner.split_once(":-") {
                    Some((name, default)) if is_var_name(name) => {
                        note(format!(
                            "${{{inner}}} became ${{{name}}}: there are no defaults here, so {name} must be set (it was {default:?} when unset)"
                        ));
                        format!("${{{name}}}")
                    }
                    Some(_) | None => {
                        note(format!("${{{inner}}} is not a variable here: kept as text"));
                        literal
                    }
                }
            }
            Vars::VsCode { inputs } => {
                if let Some(name) = inner.strip_prefix("env:") {
                    if is_var_name(name) {
                        return format!("${{{name}}}");
                    }
                }
                if let Some(id) = inner.strip_prefix("input:") {
                    let name = env_name(id);
                    let asked = inputs
                        .get(id)
                        .map(|d| format!(" ({d:?})"))
                        .unwrap_or_default();
                    note(format!(
                        "${{input:{id}}} became ${{{name}}}: VS Code asks for it{asked}; here it comes from the environment, so set {name} before starting"
                    ));
                    return format!("${{{name}}}");
                }
                match inner {
                    "userHome" => "${HOME}".to_string(),
                    "pathSeparator" | "/" => "/".to_string(),
                    _ => {
                        note(format!(
                            "${{{inner}}} is a VS Code variable with no counterpart here: kept as text"
                        ));
                        literal
                    }
                }
            }
        }
    }
}

/// An environment variable name made of a VS Code input id: `api-key` → `API_KEY`.
fn env_name(id: &str) -> String {
    let mut name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// VS Code's folder variables, which need to know where the workspace is: replaced in `value`
/// before [`Vars::convert`] sees it.
pub(super) fn workspace_folders(value: &str, workspace: Option<&Path>) -> String {
    let Some(workspace) = workspace else {
        return value.to_string();
    };
    let folder = workspace.display().to_string().replace("${", "$${");
    let base = workspace
        .file_name()
        .map(|n| n.to_string_lossy().replace("${", "$${"))
        .unwrap_or_default();
    value
        .replace("${workspaceFolderBasename}", &base)
        .replace("${workspaceFolder}", &folder)
        .replace("${cwd}", &folder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_rewrites_its_variables() {
        let mut notes = Vec::new();
        assert_eq!(Vars::Literal.convert("a ${B} c", &mut notes), "a $${B} c");
        assert!(notes.is_empty());
        assert_eq!(
            Vars::ClaudeCode.convert("${HOME}/x ${DEBUG:-false} ${1x}", &mut notes),
            "${HOME}/x ${DEBUG} $${1x}"
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        let vs = Vars::VsCode {
            inputs: BTreeMap::from([("api-key".to_string(), "The API key".to_string())]),
        };
        let mut notes = Vec::new();
        assert_eq!(
            vs.convert(
                "${env:TOKEN} ${input:api-key} ${userHome}${/}x ${command:pick}",
                &mut notes
            ),
            "${TOKEN} ${API_KEY} ${HOME}/x $${command:pick}"
        );
        assert!(
            notes[0].contains("VS Code asks for it (\"The API key\")"),
            "{notes:?}"
        );
        assert_eq!(notes.len(), 2);
        assert_eq!(
            workspace_folders(
                "${workspaceFolder}/a ${workspaceFolderBasename}",
                Some(Path::new("/w/proj"))
            ),
            "/w/proj/a proj"
        );
    }
}
