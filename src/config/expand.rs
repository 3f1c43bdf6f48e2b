//! `${VAR}` expansion of config string values: `${NAME}` is looked up, `$${` is a literal `${`.
//!
//! A pure string function, separate from `load.rs` so its small grammar is tested on its own;
//! `load.rs` decides which values are expanded and where an error points.

/// Why a value could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    #[error("environment variable {0} is not set")]
    Unset(String),
    #[error("unterminated \"${{\" (write \"$${{\" for a literal \"${{\")")]
    Unterminated,
    #[error("invalid variable name {0:?} in \"${{…}}\" (letters, digits and _, not starting with a digit)")]
    BadName(String),
}

/// Expand every `${NAME}` in `text` through `env`; `$${` stands for a literal `${`. A `$` not
/// followed by `{` is kept as is.
pub fn expand(text: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(after) = tail.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
        } else if let Some(after) = tail.strip_prefix("${") {
            let close = after.find('}').ok_or(ExpandError::Unterminated)?;
            let name = &after[..close];
            if !is_var_name(name) {
                return Err(ExpandError::BadName(name.to_string()));
            }
            let value = env(name).ok_or_else(|| ExpandError::Unset(name.to_string()))?;
            out.push_str(&value);
            rest = &after[close + 1..];
        } else {
            out.push('$');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

pub(super) fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/op".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn expands_variables() {
        assert_eq!(expand("${HOME}/x", &env).as_deref(), Ok("/home/op/x"));
        assert_eq!(expand("a${EMPTY}b", &env).as_deref(), Ok("ab"));
        assert_eq!(
            expand("${HOME}:${HOME}", &env).as_deref(),
            Ok("/home/op:/home/op")
        );
        assert_eq!(expand("no vars", &env).as_deref(), Ok("no vars"));
    }

    #[test]
    fn dollar_dollar_brace_is_literal() {
        assert_eq!(expand("$${HOME}", &env).as_deref(), Ok("${HOME}"));
        // Read left to right: a lone `$`, then `$${` (literal `${`).
        assert_eq!(expand("$$${HOME}", &env).as_deref(), Ok("$${HOME}"));
        assert_eq!(expand("cost $5 $$", &env).as_deref(), Ok("cost $5 $$"));
        assert_eq!(expand("end$", &env).as_deref(), Ok("end$"));
    }

    #[test]
    fn errors() {
        assert_eq!(
            expand("${NOPE}", &env),
            Err(ExpandError::Unset("NOPE".to_string()))
        );
        assert_eq!(expand("${HOME", &env), Err(ExpandError::Unterminated));
        assert_eq!(
            expand("${}", &env),
            Err(ExpandError::BadName(String::new()))
        );
        assert_eq!(
            expand("${1A}", &env),
            Err(ExpandError::BadName("1A".to_string()))
        );
    }

    #[test]
    fn expanded_values_are_not_rescanned() {
        let env = |_: &str| Some("${OTHER}".to_string());
        assert_eq!(expand("${X}", &env).as_deref(), Ok("${OTHER}"));
    }
}
