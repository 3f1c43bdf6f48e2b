//! Wrapping text to a width in terminal cells: words kept whole where they fit, a word wider
//! than a row cut. Ours rather than ratatui's `Wrap` because the Conversation pane wraps only
//! the rows it shows (the tail of a long answer), and must know how many rows that takes.

use unicode_width::UnicodeWidthChar;

/// The cells `c` takes (0 for what takes none).
pub fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// The cells `s` takes.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// `text` (one line, no line breaks) as rows of at most `width` cells. An empty line is one
/// empty row. Spaces where a row breaks are dropped.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut row_w = 0;
    for word in text.split_inclusive(' ') {
        let word_w = self::width(word);
        let bare = word.trim_end_matches(' ');
        let bare_w = self::width(bare);
        if row_w + bare_w <= width {
            row.push_str(word);
            row_w += word_w;
            continue;
        }
        if row_w > 0 {
            rows.push(std::mem::take(&mut row).trim_end().to_string());
            row_w = 0;
        }
        // A word wider than a row: cut it.
        for c in word.chars() {
            let w = char_width(c);
            if row_w + w > width && row_w > 0 {
                rows.push(std::mem::take(&mut row));
                row_w = 0;
            }
            row.push(c);
            row_w += w;
        }
    }
    let last = row.trim_end().to_string();
    if !last.is_empty() || rows.is_empty() {
        rows.push(last);
    }
    rows
}

/// `text` (one line) as rows of at most `width` cells for the input box: broken before a
/// word that does not fit (a word wider than a row is cut), every character (spaces too)
/// kept in its place for the cursor. Returns each row's first character index too.
pub fn input_wrap(text: &str, width: usize) -> Vec<(usize, String)> {
    let width = width.max(1);
    let mut rows = vec![(0, String::new())];
    let mut row_w = 0;
    // The word being read: its first character's index, its byte offset in the row, and the
    // cells it takes so far. A word that starts a row has nowhere better to go.
    let mut word: Option<(usize, usize)> = None;
    let mut word_w = 0;
    for (i, c) in text.chars().enumerate() {
        let Some((_, row)) = rows.last_mut() else {
            break;
        };
        if c == ' ' {
            word = None;
            word_w = 0;
        } else if word.is_none() {
            word = Some((i, row.len()));
        }
        let w = char_width(c);
        if row_w + w > width && row_w > 0 {
            // The word so far goes to the next row, whole.
            if let Some((start, at)) = word.filter(|(_, at)| *at > 0) {
                let tail = row.split_off(at);
                rows.push((start, tail));
                row_w = word_w;
                word = Some((start, 0));
            }
            // Still too wide (a long word, or a wide character after it): cut here.
            if row_w + w > width && row_w > 0 {
                rows.push((i, String::new()));
                row_w = 0;
                word = word.map(|_| (i, 0));
            }
        }
        if let Some((_, row)) = rows.last_mut() {
            row.push(c);
        }
        row_w += w;
        if c != ' ' {
            word_w += w;
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_stay_whole_and_long_ones_are_cut() {
        assert_eq!(wrap("", 10), vec![""]);
        assert_eq!(
            wrap("the quick brown fox", 10),
            vec!["the quick", "brown fox"]
        );
        assert_eq!(wrap("abcdefghijkl xy", 5), vec!["abcde", "fghij", "kl xy"]);
        assert_eq!(wrap("a  b", 10), vec!["a  b"]);
        // Wide characters count two cells.
        assert_eq!(
            wrap("日本語のテキスト", 6),
            vec!["日本語", "のテキ", "スト"]
        );
        for row in wrap(
            "lorem ipsum dolor sit amet, consectetur adipiscing elit",
            12,
        ) {
            assert!(width(&row) <= 12, "{row:?}");
        }
    }

    #[test]
    fn the_input_breaks_between_words_and_keeps_every_character() {
        assert_eq!(input_wrap("", 4), vec![(0, String::new())]);
        // A word that does not fit goes to the next row whole; the space stays behind.
        assert_eq!(
            input_wrap("save a note called", 10),
            vec![
                (0, "save a ".into()),
                (7, "note ".into()),
                (12, "called".into())
            ]
        );
        // A word wider than a row is cut.
        assert_eq!(
            input_wrap("ab abcdefgh", 4),
            vec![(0, "ab ".into()), (3, "abcd".into()), (7, "efgh".into())]
        );
        // Spaces past the edge start the next row; wide characters count two cells.
        assert_eq!(
            input_wrap("abcd  ef", 4),
            vec![(0, "abcd".into()), (4, "  ef".into())]
        );
        assert_eq!(
            input_wrap("日本 語", 4),
            vec![(0, "日本".into()), (2, " 語".into())]
        );
        // A wide character after a word that moved: cut after the word, not past the edge.
        assert_eq!(
            input_wrap(" bcd日", 4),
            vec![(0, " ".into()), (1, "bcd".into()), (4, "日".into())]
        );
        for text in [
            "lorem ipsum dolor sit amet",
            "a bb ccc dddd eeeee",
            "x  y   z",
            " bcd日 日本語 a日b 日日日日日",
        ] {
            for width in 1..12 {
                let rows = input_wrap(text, width);
                let joined: String = rows.iter().map(|(_, r)| r.as_str()).collect();
                assert_eq!(joined, text, "{width}");
                let mut at = 0;
                for (start, row) in &rows {
                    assert_eq!(*start, at, "{text:?} at {width}: {rows:?}");
                    at += row.chars().count();
                    // Only a character wider than the row itself overflows it.
                    assert!(
                        self::width(row) <= width || row.chars().count() == 1,
                        "{text:?} at {width}: {rows:?}"
                    );
                }
            }
        }
    }
}
