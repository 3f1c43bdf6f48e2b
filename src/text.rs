//! Text from servers made safe to show: control and escape sequences removed, length bounded.
//!
//! Lives at the bottom layer because the MCP layer quotes server output in warnings and failure
//! messages, the CLI prints it, and the TUI draws it: all must show the same, harmless text.

/// Removes every terminal control sequence (CSI, OSC, DCS, single-character escapes) and every
/// other control character except tab, which becomes a space. Newlines are kept only when
/// `keep_newlines`; otherwise they become `⏎`.
pub fn sanitize(input: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => skip_escape(&mut chars),
            // C1 CSI / OSC / DCS introducers.
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\n' if keep_newlines => out.push('\n'),
            '\n' => out.push('⏎'),
            '\t' => out.push(' '),
            c if c.is_control() => {}
            // Bidirectional overrides can reorder what the operator reads.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {}
            c => out.push(c),
        }
    }
    out
}

/// `sanitize` on one line, cut to at most `max_chars` characters (with `…` when cut).
pub fn sanitize_line(input: &str, max_chars: usize) -> String {
    truncate(&sanitize(input, false), max_chars)
}

/// The `s` of a plural: `""` for one, `"s"` for any other count.
pub fn plural(n: impl TryInto<u64>) -> &'static str {
    match n.try_into() {
        Ok(1) => "",
        _ => "s",
    }
}

/// Cuts `s` to at most `max_chars` characters, marking the cut with `…`.
pub fn truncate(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max_chars.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Quotes the first bytes of raw output (possibly not UTF-8) for a message.
pub fn quote_bytes(bytes: &[u8], max_chars: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    format!("\"{}\"", sanitize_line(text.trim_end(), max_chars))
}

/// Whether `text`, lowercased, holds `lowered`: ASCII text compared in place, other text
/// lowercased first. Anything holds the empty text.
pub fn holds_lowered(text: &str, lowered: &str) -> bool {
    if lowered.is_empty() {
        true
    } else if text.is_ascii() && lowered.is_ascii() {
        let needle = lowered.as_bytes();
        text.as_bytes()
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
    } else {
        text.to_lowercase().contains(lowered)
    }
}

/// Whole milliseconds of a duration, for reports and JSON (saturating).
pub fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A duration for people: `850ms`, `2.0s`, `1m30s`.
pub fn fmt_duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms < 1_000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1_000)
    }
}

fn skip_escape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    match chars.peek().copied() {
        Some('[') => {
            chars.next();
            skip_csi(chars);
        }
        Some(']') | Some('P') | Some('X') | Some('^') | Some('_') => {
            chars.next();
            skip_string(chars);
        }
        // Two-character sequences (ESC c, ESC 7, ESC ( B ...): drop the next char, and a
        // charset designator's argument too.
        Some('(') | Some(')') | Some('*') | Some('+') | Some('#') | Some('%') => {
            chars.next();
            chars.next();
        }
        Some(_) => {
            chars.next();
        }
        None => {}
    }
}

/// CSI: parameters and intermediates up to a final byte in `@`..=`~`.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
    }
}

/// OSC / DCS / PM / APC: up to BEL or ST (`ESC \` or U+009C).
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

/// The candidates nearest to `word`, if near enough to be a slip (a few edits for a long
/// word, one for a short one, any difference of case alone): all those at the least distance,
/// sorted.
pub fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let limit = (word.chars().count() / 3 + 1).min(3);
    let near: Vec<(usize, &str)> = candidates
        .map(|c| {
            let d = if c.eq_ignore_ascii_case(word) {
                0
            } else {
                edit_distance(word, c)
            };
            (d, c)
        })
        .filter(|&(d, _)| d <= limit)
        .collect();
    let Some(best) = near.iter().map(|&(d, _)| d).min() else {
        return Vec::new();
    };
    let mut words: Vec<&str> = near
        .into_iter()
        .filter(|&(d, _)| d == best)
        .map(|(_, c)| c)
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// Edit distance over characters, two neighbours swapped counting as one edit (`modle` is one
/// from `model`, two from `models`): the optimal string alignment distance.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: two rows back (for a swap), the previous one and the one being filled.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (previous[j] + 1)
                .min(row[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        before = std::mem::replace(&mut previous, row);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_osc_title_and_clear_screen() {
        assert_eq!(sanitize("a\x1b]0;pwned\x07b\x1b[2Jc", false), "abc");
        assert_eq!(
            sanitize("x\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\y", false),
            "xlinky"
        );
    }

    #[test]
    fn strips_c0_c1_and_bidi_but_keeps_text() {
        assert_eq!(sanitize("a\u{0}b\u{8}c\u{9b}31md\u{202e}e", false), "abcde");
        assert_eq!(sanitize("héllo\twörld", false), "héllo wörld");
        assert_eq!(sanitize("l1\nl2", true), "l1\nl2");
        assert_eq!(sanitize("l1\nl2", false), "l1⏎l2");
    }

    #[test]
    fn truncates_by_chars() {
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
        assert_eq!(quote_bytes(b"hi\xff there\n", 40), "\"hi\u{fffd} there\"");
    }

    /// The tool filter's match: case-insensitive in ASCII without lowercasing the text, and
    /// in other text as `to_lowercase` has it.
    #[test]
    fn finds_a_lowered_text_whatever_the_case() {
        assert!(holds_lowered("Read_File", "d_f"));
        assert!(holds_lowered("Read_File", ""));
        assert!(!holds_lowered("Read_File", "write"));
        assert!(!holds_lowered("ab", "abc"));
        assert!(holds_lowered("ÜBERWEISUNG senden", "überweisung"));
        assert!(!holds_lowered("Überweisung", "ueber"));
    }
}
