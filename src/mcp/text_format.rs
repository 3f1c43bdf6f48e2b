//! The string `format`s a form checks (`email`, `uri`, `date`, `date-time`, RFC 3339 dates and
//! times): which ones are known, and whether a text is in one.
//!
//! Separate from `form.rs` (fields, values, answers): these are only rules about text.

/// The `format` of a string field that is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

impl TextFormat {
    pub(super) fn parse(format: &str) -> Option<TextFormat> {
        match format {
            "email" => Some(TextFormat::Email),
            "uri" => Some(TextFormat::Uri),
            "date" => Some(TextFormat::Date),
            "date-time" => Some(TextFormat::DateTime),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TextFormat::Email => "email",
            TextFormat::Uri => "uri",
            TextFormat::Date => "date",
            TextFormat::DateTime => "date-time",
        }
    }

    /// Whether `text` is in this format.
    pub(super) fn holds(self, text: &str) -> bool {
        match self {
            TextFormat::Email => match text.split_once('@') {
                Some((local, domain)) => {
                    !local.is_empty()
                        && !domain.contains('@')
                        && domain.contains('.')
                        && !domain.starts_with('.')
                        && !domain.ends_with('.')
                        && !text.contains(char::is_whitespace)
                }
                None => false,
            },
            TextFormat::Uri => match text.split_once(':') {
                Some((scheme, rest)) => {
                    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                        && scheme
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                        && !rest.is_empty()
                        && !text.contains(char::is_whitespace)
                }
                None => false,
            },
            TextFormat::Date => is_date(text),
            TextFormat::DateTime => match text.split_once(['T', 't']) {
                Some((date, time)) => is_date(date) && is_time(time),
                None => false,
            },
        }
    }
}

/// `YYYY-MM-DD`, a real day.
fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<u32>(), m.parse::<u32>(), d.parse::<u32>()) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `HH:MM:SS[.frac](Z|±HH:MM)` (RFC 3339).
fn is_time(text: &str) -> bool {
    let (clock, zone) = if let Some(clock) = text.strip_suffix(['Z', 'z']) {
        (clock, None)
    } else {
        match text.rfind(['+', '-']) {
            Some(at) => (&text[..at], Some(&text[at + 1..])),
            None => return false,
        }
    };
    let hms = |s: &str, seconds: bool| -> bool {
        let parts: Vec<&str> = s.split(':').collect();
        let want = if seconds { 3 } else { 2 };
        parts.len() == want
            && parts.iter().enumerate().all(|(i, p)| {
                let p = if i == 2 {
                    p.split('.').next().unwrap_or(p)
                } else {
                    p
                };
                let max = match i {
                    0 => 23,
                    1 => 59,
                    _ => 60,
                };
                p.len() == 2 && p.parse::<u32>().is_ok_and(|v| v <= max)
            })
    };
    hms(clock, true) && zone.is_none_or(|z| hms(z, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(TextFormat::Uri.holds("https://example.org/x"));
        assert!(!TextFormat::Uri.holds("example.org"));
        assert!(TextFormat::DateTime.holds("2024-01-31T23:59:60.5+02:00"));
        assert!(TextFormat::DateTime.holds("2024-01-31T00:00:00Z"));
        assert!(!TextFormat::DateTime.holds("2024-01-31T24:00:00Z"));
        assert!(!TextFormat::Date.holds("2024-13-01"));
        assert!(!TextFormat::Email.holds("a@b"));
    }
}
