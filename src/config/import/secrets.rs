//! Secret values are not imported. A value under a secret's name (the redaction rule of
//! `config::redact`: an env variable or header named like `*KEY*`, `*TOKEN*`,
//! `Authorization`…, and every bearer token) that holds a literal, not a `${VAR}` reference,
//! becomes a reference to a variable of the environment the console runs in, and the operator
//! is told which variables to set. So no secret is printed in the preview or written to the
//! config, and the config starts once the variables are set.

use crate::config::expand::is_var_name;
use crate::config::redact::is_secret_name;

/// The variables one server's secrets were moved to: the variable, and where it is used
/// (`env NOTES_API_KEY`, `header Authorization`, `bearer token`).
#[derive(Debug, Default)]
pub(super) struct Moved(Vec<(String, String)>);

impl Moved {
    /// `value` (in this config's terms) as it is written under `what` (`env KEY`, `header
    /// Name`) named `name`, for server `server`: a literal under a secret's name becomes
    /// `${VAR}`, anything else stays as it is.
    pub(super) fn value(&mut self, server: &str, name: &str, what: &str, value: String) -> String {
        if !is_secret_name(name) {
            return value;
        }
        self.secret(server, name, what, value)
    }

    /// `value`, known to be a secret (a bearer token), as it is written.
    pub(super) fn secret(&mut self, server: &str, name: &str, what: &str, value: String) -> String {
        if value.is_empty() || holds_reference(&value) {
            return value;
        }
        let var = variable(server, name);
        let reference = format!("${{{var}}}");
        self.0.push((var, what.to_string()));
        reference
    }

    /// The sentence that tells the operator what to set, when anything was moved.
    pub(super) fn note(&self) -> Option<String> {
        if self.0.is_empty() {
            return None;
        }
        let each: Vec<String> = self
            .0
            .iter()
            .map(|(var, what)| format!("{var} ({what})"))
            .collect();
        Some(format!(
            "secret values were not imported: set {} in the environment the console runs in",
            each.join(", ")
        ))
    }
}

/// Whether `value` uses a `${…}` reference (a `$${` is a literal `${`).
fn holds_reference(value: &str) -> bool {
    let bytes = value.as_bytes();
    (0..bytes.len().saturating_sub(1))
        .any(|i| bytes[i] == b'$' && bytes[i + 1] == b'{' && (i == 0 || bytes[i - 1] != b'$'))
}

/// The variable a secret named `name` of server `server` is read from: the name itself when it
/// already starts with the server's (`NOTES_API_KEY` of `notes`), else the two joined
/// (`NOTES_AUTHORIZATION`), upper case, anything but letters and digits made `_`.
fn variable(server: &str, name: &str) -> String {
    let upper = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect()
    };
    let (server, name) = (upper(server), upper(name));
    let var = if name.starts_with(&format!("{server}_")) {
        name
    } else {
        format!("{server}_{name}")
    };
    if is_var_name(&var) {
        var
    } else {
        format!("_{var}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_secret_becomes_a_variable_and_the_rest_stays() {
        let mut moved = Moved::default();
        assert_eq!(
            moved.value("notes", "NOTES_API_KEY", "env NOTES_API_KEY", "sk-1".into()),
            "${NOTES_API_KEY}"
        );
        assert_eq!(
            moved.value(
                "my-api",
                "Authorization",
                "header Authorization",
                "Bearer x".into()
            ),
            "${MY_API_AUTHORIZATION}"
        );
        assert_eq!(
            moved.secret("9lives", "bearer token", "bearer token", "t".into()),
            "${_9LIVES_BEARER_TOKEN}"
        );
        // Not a secret's name, already a reference, empty, a literal `${`: as they were.
        assert_eq!(
            moved.value("n", "LOG_LEVEL", "env LOG_LEVEL", "debug".into()),
            "debug"
        );
        assert_eq!(
            moved.value("n", "API_KEY", "env API_KEY", "${MY_KEY}".into()),
            "${MY_KEY}"
        );
        assert_eq!(
            moved.value("n", "Authorization", "header", "Bearer ${T}".into()),
            "Bearer ${T}"
        );
        assert_eq!(
            moved.value("n", "API_KEY", "env API_KEY", String::new()),
            ""
        );
        assert_eq!(
            moved.value("n", "API_KEY", "env API_KEY", "a$${b".into()),
            "${N_API_KEY}"
        );
        let note = moved.note().expect("a note");
        assert!(
            note.contains("set NOTES_API_KEY (env NOTES_API_KEY), MY_API_AUTHORIZATION (header Authorization), _9LIVES_BEARER_TOKEN (bearer token), N_API_KEY (env API_KEY)"),
            "{note}"
        );
        assert!(
            !note.contains("sk-1") && !note.contains("Bearer x"),
            "{note}"
        );
        assert!(Moved::default().note().is_none());
    }
}
