//! The docs cannot drift from the binary: every command line they show (in `sh` blocks, and
//! as inline code starting `aimon-console …`) names a command the binary has, and every option
//! it passes is one that command's `--help` lists.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// The documents read: the README and everything in `docs/`.
fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable");
            (p.display().to_string(), text)
        })
        .collect()
}

/// The command lines of `text`: lines of `sh` blocks (joined where they end in `\`), and
/// inline code spans, that start with `aimon-console ` or `cargo run --release -- `; each as
/// the words after the program.
fn command_lines(text: &str) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = !in_sh && line.trim() == "```sh";
            continue;
        }
        if in_sh {
            pending.push_str(line.trim_end_matches('\\'));
            if line.ends_with('\\') {
                pending.push(' ');
                continue;
            }
            found.extend(words_of(&std::mem::take(&mut pending)));
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1 {
                found.extend(words_of(span));
            }
        }
    }
    found
}

/// The words after the program, up to a pipe, a comment or `&&`; brackets and placeholders
/// of a synopsis dropped to their options.
fn words_of(line: &str) -> Option<(String, Vec<String>)> {
    let line = line.trim();
    let rest = line
        .strip_prefix("aimon-console ")
        .or_else(|| line.strip_prefix("cargo run --release -- "))?;
    let mut words = Vec::new();
    for word in rest.split_whitespace() {
        if matches!(word, "|" | "&&" | "#" | ">") {
            break;
        }
        words.push(word.trim_matches(|c| c == '[' || c == ']').to_string());
    }
    Some((line.to_string(), words))
}

/// The options a `--help` text lists (`--json`, `-c`, …).
fn options_in(help: &str) -> Vec<String> {
    help.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']' || c == '=')
        .filter(|w| w.starts_with('-') && w.len() > 1)
        .map(|w| {
            w.trim_end_matches(|c: char| !c.is_alphanumeric())
                .to_string()
        })
        .collect()
}

fn help(args: &[&str]) -> Option<String> {
    let out = Command::new(common::bin())
        .args(args)
        .arg("--help")
        .output()
        .expect("the binary runs");
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Global options that take a value (their value is not the command).
const VALUED: [&str; 5] = ["--config", "-c", "--model", "--resume", "--log-file"];

#[test]
fn every_command_line_in_the_docs_is_one_the_binary_takes() {
    let global = options_in(&help(&[]).expect("--help"));
    let mut helps: HashMap<String, Option<Vec<String>>> = HashMap::new();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (file, text) in documents() {
        for (line, words) in command_lines(&text) {
            checked += 1;
            let mut i = 0;
            // Options before the command are the console's own.
            while let Some(word) = words.get(i).filter(|w| w.starts_with('-')) {
                let option = word.split('=').next().unwrap_or(word);
                if !global.iter().any(|g| g == option) {
                    wrong.push(format!("{file}: `{line}`: no global option {option}"));
                }
                i += if VALUED.contains(&option) && !word.contains('=') {
                    2
                } else {
                    1
                };
            }
            let Some(command) = words.get(i) else {
                continue;
            };
            // A placeholder or a path, not a command: the console itself.
            if !command.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
                continue;
            }
            let options = helps
                .entry(command.clone())
                .or_insert_with(|| help(&[command]).map(|h| options_in(&h)));
            let Some(options) = options else {
                wrong.push(format!("{file}: `{line}`: no command {command}"));
                continue;
            };
            for word in &words[i + 1..] {
                if !word.starts_with('-') || word.chars().all(|c| c == '-') {
                    continue;
                }
                let option = word.split('=').next().unwrap_or(word);
                if !options.iter().any(|o| o == option) && !global.iter().any(|g| g == option) {
                    wrong.push(format!(
                        "{file}: `{line}`: {command} has no option {option}"
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 30, "only {checked} command lines found");
}
