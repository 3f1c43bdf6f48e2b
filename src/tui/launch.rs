//! How a server is started, as the operator sees it: the resolved command line (program,
//! arguments, working directory, the environment it adds) or the endpoint, for Details and for
//! copying (`c`). Secret values never show: a secret variable is written as a reference to the
//! operator's own (`TOKEN="$TOKEN"`), a secret header as `<redacted>`.

use crate::config::redact::{is_secret_name, shown};
use crate::config::{ServerConfig, TransportKind};
use crate::text::sanitize_line;

/// Characters kept of one configured value.
const VALUE_CHARS: usize = 500;

/// The widest line of the command to copy: it is broken between words, each line but the
/// last ending in ` \` (the shell joins them again), so that a viewer never wraps it inside
/// an argument (the `c` viewer is 74 columns inside).
const COMMAND_WIDTH: usize = 70;

/// `words` as shell lines of at most `COMMAND_WIDTH` characters (a longer word alone on its
/// line), each but the last continued with ` \`.
fn shell_lines(words: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in words {
        let wide = line.chars().count() + 1 + word.chars().count() + 2;
        if !line.is_empty() && wide > COMMAND_WIDTH {
            lines.push(std::mem::take(&mut line) + " \\");
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// A server's launch, as lines to show and a command to copy.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Launch {
    /// One line for Details: `prog arg…` or the URL.
    pub summary: String,
    /// The whole of it: a shell command line to reproduce the start (stdio), or the endpoint,
    /// its headers and token (HTTP); then what the values hide.
    pub lines: Vec<String>,
}

/// `s` as one shell word: as is when plain, else single-quoted.
pub(super) fn quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

impl Launch {
    pub fn of(config: &ServerConfig) -> Launch {
        let clean = |s: &str| sanitize_line(s, VALUE_CHARS);
        match config.transport {
            TransportKind::Stdio => {
                let program = config.command.as_deref().unwrap_or("");
                let words: Vec<String> = std::iter::once(program)
                    .chain(config.args.iter().map(String::as_str))
                    .map(|w| quote(&clean(w)))
                    .collect();
                let command = words.join(" ");
                let env: Vec<String> = config
                    .env
                    .iter()
                    .map(|(name, value)| {
                        let name = clean(name);
                        if is_secret_name(&name) {
                            format!("{name}=\"${name}\"")
                        } else {
                            format!("{name}={}", quote(&clean(value)))
                        }
                    })
                    .collect();
                let mut shell: Vec<String> = Vec::new();
                if let Some(cwd) = &config.cwd {
                    shell.push("cd".into());
                    shell.push(format!("{} &&", quote(&clean(&cwd.display().to_string()))));
                }
                if !env.is_empty() {
                    shell.push("env".into());
                    shell.extend(env);
                }
                shell.extend(words);
                let mut lines = shell_lines(&shell);
                let secrets: Vec<String> = config
                    .env
                    .keys()
                    .filter(|n| is_secret_name(n))
                    .map(|n| clean(n))
                    .collect();
                if !secrets.is_empty() {
                    lines.push(String::new());
                    lines.push(if secrets.len() == 1 {
                        format!(
                            "{} is a secret: its value is not shown (set it in your shell first).",
                            secrets[0]
                        )
                    } else {
                        format!(
                            "{} are secrets: their values are not shown (set them in your shell first).",
                            secrets.join(", ")
                        )
                    });
                }
                lines.push(String::new());
                lines.push(format!(
                    "working directory: {}",
                    config.cwd.as_ref().map_or_else(
                        || match std::env::current_dir() {
                            Ok(dir) => format!(
                                "{} (the console's own: no cwd in its entry)",
                                clean(&dir.display().to_string())
                            ),
                            Err(_) => "the console's own (no cwd in its entry)".to_string(),
                        },
                        |c| clean(&c.display().to_string())
                    )
                ));
                if !config.env.is_empty() {
                    let names: Vec<String> = config.env.keys().map(|n| clean(n)).collect();
                    lines.push(format!(
                        "adds to the environment: {} (the rest is inherited)",
                        names.join(", ")
                    ));
                }
                Launch {
                    summary: command,
                    lines,
                }
            }
            TransportKind::StreamableHttp | TransportKind::Sse => {
                let url = clean(config.url.as_deref().unwrap_or(""));
                let mut lines = vec![format!("{} {url}", config.transport.as_str())];
                for (name, value) in &config.headers {
                    lines.push(format!(
                        "header {}: {}",
                        clean(name),
                        clean(shown(name, value))
                    ));
                }
                if config.bearer_token.is_some() {
                    lines.push("Authorization: Bearer <redacted>".to_string());
                }
                Launch {
                    summary: url,
                    lines,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_command_line_to_copy_with_secrets_left_out() {
        let mut s = ServerConfig::stdio(
            "fs",
            "npx",
            vec!["-y".into(), "server fs".into(), "it's".into()],
        );
        s.cwd = Some(PathBuf::from("/srv/data"));
        s.env.insert("API_TOKEN".into(), "hunter2".into());
        s.env.insert("LANG".into(), "C".into());
        let launch = Launch::of(&s);
        assert_eq!(launch.summary, r"npx -y 'server fs' 'it'\''s'");
        assert_eq!(
            launch.lines[0],
            r#"cd /srv/data && env API_TOKEN="$API_TOKEN" LANG=C npx -y 'server fs' \"#
        );
        assert_eq!(launch.lines[1], r"'it'\''s'");
        let all = launch.lines.join("\n");
        assert!(!all.contains("hunter2"), "{all}");
        assert!(
            all.contains("adds to the environment: API_TOKEN, LANG"),
            "{all}"
        );
        assert!(
            all.contains("API_TOKEN is a secret: its value is not shown"),
            "{all}"
        );
        assert!(all.contains("working directory: /srv/data"), "{all}");
        // No cwd: the directory it inherits, named.
        s.cwd = None;
        let here = std::env::current_dir().expect("a current directory");
        let all = Launch::of(&s).lines.join("\n");
        assert!(
            all.contains(&format!(
                "working directory: {} (the console's own: no cwd in its entry)",
                here.display()
            )),
            "{all}"
        );
    }
}
