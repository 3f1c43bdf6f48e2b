//! RFC 6570 URI templates, as resource templates use them: expanding one with the values the
//! operator typed, and naming its variables (the fields of the form that asks for them).
//!
//! Separate from `resources.rs` (the requests): this is only text, shared by the console's
//! template form and the read it makes.

use std::collections::BTreeMap;

/// Expands an RFC 6570 URI template with `values`: simple `{var}` (reserved characters
/// percent-encoded), `{+var}` (reserved allowed), and the `{/var}`, `{.var}`, `{#var}`,
/// `{?var}`, `{&var}` operators, each with one or more comma-separated names.
pub fn expand_template(template: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let expr = &rest[open + 1..open + close];
        out.push_str(&expand_expression(expr, values));
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

/// The literal start of a URI template, up to its first expression: what every URI it makes
/// begins with.
pub fn template_start(template: &str) -> &str {
    template.split('{').next().unwrap_or(template)
}

/// The names of a URI template's variables, in order, each once.
pub fn template_variables(template: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let expr = &rest[open + 1..open + close];
        let body = expr.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for name in body.split(',') {
            let name = name.trim_end_matches('*');
            let name = name.split(':').next().unwrap_or(name);
            if !name.is_empty() && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        rest = &rest[open + close + 1..];
    }
    names
}

fn expand_expression(expr: &str, values: &BTreeMap<String, String>) -> String {
    let (op, body) = match expr.chars().next() {
        Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(c), &expr[1..]),
        _ => (None, expr),
    };
    let (first, sep, named, reserved) = match op {
        None => ("", ",", false, false),
        Some('+') => ("", ",", false, true),
        Some('#') => ("#", ",", false, true),
        Some('.') => (".", ".", false, false),
        Some('/') => ("/", "/", false, false),
        Some(';') => (";", ";", true, false),
        Some('?') => ("?", "&", true, false),
        Some(_) => ("&", "&", true, false),
    };
    let mut parts = Vec::new();
    for name in body.split(',') {
        let name = name.trim_end_matches('*');
        let name = name.split(':').next().unwrap_or(name);
        let Some(value) = values.get(name) else {
            continue;
        };
        let encoded = encode(value, reserved);
        parts.push(if named {
            format!("{name}={encoded}")
        } else {
            encoded
        });
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("{first}{}", parts.join(sep))
}

/// Percent-encodes everything outside the unreserved set (and, when `reserved`, the reserved set).
fn encode(value: &str, reserved: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (reserved
                && matches!(
                    b,
                    b':' | b'/'
                        | b'?'
                        | b'#'
                        | b'['
                        | b']'
                        | b'@'
                        | b'!'
                        | b'$'
                        | b'&'
                        | b'\''
                        | b'('
                        | b')'
                        | b'*'
                        | b'+'
                        | b','
                        | b';'
                        | b'='
                ));
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn expands_the_template_forms_servers_use() {
        let v = values(&[("id", "3"), ("title", "a b/c"), ("q", "x&y")]);
        assert_eq!(
            expand_template("demo://resource/dynamic/text/{id}", &v),
            "demo://resource/dynamic/text/3"
        );
        assert_eq!(expand_template("n://{title}", &v), "n://a%20b%2Fc");
        assert_eq!(expand_template("n://{+title}", &v), "n://a%20b/c");
        assert_eq!(expand_template("n://x{/id,title}", &v), "n://x/3/a%20b%2Fc");
        assert_eq!(expand_template("n://x{?q,id}", &v), "n://x?q=x%26y&id=3");
        assert_eq!(expand_template("n://x{?missing}", &v), "n://x");
        assert_eq!(expand_template("n://{unclosed", &v), "n://{unclosed");
    }

    #[test]
    fn names_each_variable_once() {
        assert_eq!(
            template_variables("a://{x}/{+y}{?z,x}{/w*}"),
            vec!["x", "y", "z", "w"]
        );
        assert!(template_variables("a://plain").is_empty());
    }
}
