//! The Conversation pane's input box: multi-line text with a cursor (Enter sends, Alt-Enter
//! breaks the line), and the prompts sent before, recalled with Up/Down. Plain data: the pane
//! draws it, the keys change it.

/// Prompts remembered for Up/Down.
const HISTORY_KEEP: usize = 200;

/// The prompt being written, and the ones sent before.
#[derive(Debug, Clone)]
pub struct InputBox {
    /// Never empty: an empty box is one empty line.
    lines: Vec<String>,
    /// The cursor: a line, and a character (not byte) position in it.
    row: usize,
    col: usize,
    history: Vec<String>,
    /// The history entry shown (Up/Down), if any; `draft` holds what was being written.
    recall: Option<usize>,
    draft: Option<Vec<String>>,
    /// Entries edited while shown, as they were left: shown so again until a prompt is sent
    /// (as readline does), so walking the history never loses what was typed.
    edits: std::collections::HashMap<usize, Vec<String>>,
}

impl Default for InputBox {
    fn default() -> Self {
        InputBox {
            lines: vec![String::new()],
            row: 0,
            col: 0,
            history: Vec::new(),
            recall: None,
            draft: None,
            edits: std::collections::HashMap::new(),
        }
    }
}

fn byte_at(line: &str, col: usize) -> usize {
    line.char_indices().nth(col).map_or(line.len(), |(i, _)| i)
}

impl InputBox {
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The cursor: (line, character).
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The cursor is where a word starts (the start of a line, or after white space).
    pub fn at_word_start(&self) -> bool {
        self.col == 0
            || self.lines[self.row]
                .chars()
                .nth(self.col - 1)
                .is_some_and(char::is_whitespace)
    }

    /// Nothing but white space.
    pub fn is_blank(&self) -> bool {
        self.lines.iter().all(|l| l.trim().is_empty())
    }

    fn line_len(&self) -> usize {
        self.lines[self.row].chars().count()
    }

    pub fn insert(&mut self, c: char) {
        if c == '\n' {
            self.newline();
            return;
        }
        if c.is_control() {
            return;
        }
        let line = &mut self.lines[self.row];
        let at = byte_at(line, self.col);
        line.insert(at, c);
        self.col += 1;
    }

    /// Pasted text: line breaks kept (`\r\n` and `\r` as one), tabs as spaces, other control
    /// characters dropped.
    pub fn insert_str(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        for c in text.chars() {
            match c {
                '\t' => self.insert(' '),
                c => self.insert(c),
            }
        }
    }

    /// Breaks the line at the cursor.
    pub fn newline(&mut self) {
        let line = &mut self.lines[self.row];
        let at = byte_at(line, self.col);
        let rest = line.split_off(at);
        self.lines.insert(self.row + 1, rest);
        self.row += 1;
        self.col = 0;
    }

    pub fn backspace(&mut self) {
        if self.col > 0 {
            let line = &mut self.lines[self.row];
            let at = byte_at(line, self.col - 1);
            line.remove(at);
            self.col -= 1;
        } else if self.row > 0 {
            let line = self.lines.remove(self.row);
            self.row -= 1;
            self.col = self.line_len();
            self.lines[self.row].push_str(&line);
        }
    }

    pub fn delete(&mut self) {
        if self.col < self.line_len() {
            let line = &mut self.lines[self.row];
            let at = byte_at(line, self.col);
            line.remove(at);
        } else if self.row + 1 < self.lines.len() {
            let next = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&next);
        }
    }

    pub fn left(&mut self) {
        if self.col > 0 {
            self.col -= 1;
        } else if self.row > 0 {
            self.row -= 1;
            self.col = self.line_len();
        }
    }

    pub fn right(&mut self) {
        if self.col < self.line_len() {
            self.col += 1;
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = 0;
        }
    }

    pub fn home(&mut self) {
        self.col = 0;
    }

    pub fn end(&mut self) {
        self.col = self.line_len();
    }

    /// Up: the line above, or (on the first line) the prompt sent before.
    pub fn up(&mut self) {
        if self.row > 0 {
            self.row -= 1;
            self.col = self.col.min(self.line_len());
            return;
        }
        let next = match self.recall {
            None if self.history.is_empty() => return,
            None => self.history.len() - 1,
            Some(0) => return,
            Some(i) => i - 1,
        };
        self.leave();
        self.show(next);
    }

    /// Keeps what the box shows before another entry replaces it: the draft, or an entry's
    /// edit.
    fn leave(&mut self) {
        match self.recall {
            None => self.draft = Some(self.lines.clone()),
            Some(i)
                if self.history[i]
                    .split('\n')
                    .ne(self.lines.iter().map(String::as_str)) =>
            {
                self.edits.insert(i, self.lines.clone());
            }
            Some(i) => {
                self.edits.remove(&i);
            }
        }
    }

    /// Down: the line below, or (on the last line) the next prompt in the history, then what
    /// was being written.
    pub fn down(&mut self) {
        if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = self.col.min(self.line_len());
            return;
        }
        let Some(i) = self.recall else {
            return;
        };
        self.leave();
        if i + 1 < self.history.len() {
            self.show(i + 1);
        } else {
            self.lines = self.draft.take().unwrap_or_else(|| vec![String::new()]);
            self.recall = None;
            self.row = self.lines.len() - 1;
            self.col = self.line_len();
        }
    }

    fn show(&mut self, i: usize) {
        self.lines = match self.edits.get(&i) {
            Some(edit) => edit.clone(),
            None => self.history[i].split('\n').map(str::to_string).collect(),
        };
        self.recall = Some(i);
        self.row = self.lines.len() - 1;
        self.col = self.line_len();
    }

    pub fn clear(&mut self) {
        self.lines = vec![String::new()];
        self.row = 0;
        self.col = 0;
    }

    /// Takes the text to send: it joins the history (unless it repeats the last entry) and the
    /// box is emptied; the draft and the entries' edits are dropped.
    pub fn take(&mut self) -> String {
        let text = self.text();
        self.recall = None;
        self.draft = None;
        self.edits.clear();
        self.remember(&text);
        self.clear();
        text
    }

    /// Adds a prompt to the history (a resumed conversation's prompts, a sent one).
    pub fn remember(&mut self, text: &str) {
        if text.trim().is_empty() || self.history.last().is_some_and(|l| l == text) {
            return;
        }
        if self.history.len() == HISTORY_KEEP {
            self.history.remove(0);
            // The indices moved: an entry's edit would show on its neighbour.
            self.edits.clear();
            self.recall = self.recall.and_then(|i| i.checked_sub(1));
        }
        self.history.push(text.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(text: &str) -> InputBox {
        let mut input = InputBox::default();
        for c in text.chars() {
            input.insert(c);
        }
        input
    }

    #[test]
    fn lines_break_join_and_the_cursor_moves_in_characters() {
        let mut input = typed("héllo");
        input.left();
        input.left();
        input.newline();
        assert_eq!(input.lines(), ["hél", "lo"]);
        assert_eq!(input.cursor(), (1, 0));
        input.backspace();
        assert_eq!(input.text(), "héllo");
        assert_eq!(input.cursor(), (0, 3));
        input.delete();
        assert_eq!(input.text(), "hélo");
        input.end();
        input.insert_str("\r\nworld\tx\u{1b}");
        assert_eq!(input.lines(), ["hélo", "world x"]);
        input.up();
        assert_eq!(input.cursor(), (0, 4));
        input.home();
        input.left();
        assert_eq!(input.cursor(), (0, 0));
        input.end();
        input.right();
        assert_eq!(input.cursor(), (1, 0));
        assert!(!input.is_blank());
        input.clear();
        assert!(input.is_blank());
    }

    #[test]
    fn up_and_down_walk_the_history_and_come_back_to_the_draft() {
        let mut input = typed("first");
        assert_eq!(input.take(), "first");
        input.insert_str("second\nline");
        assert_eq!(input.take(), "second\nline");
        input.insert_str("draft");
        input.up();
        assert_eq!(input.text(), "second\nline");
        assert_eq!(input.cursor(), (1, 4));
        // On a multi-line entry, Up first goes up a line, then to the older entry.
        input.up();
        assert_eq!(input.cursor(), (0, 4));
        input.up();
        assert_eq!(input.text(), "first");
        input.up();
        assert_eq!(input.text(), "first");
        input.down();
        assert_eq!(input.text(), "second\nline");
        input.down();
        input.down();
        assert_eq!(input.text(), "draft");
        input.down();
        assert_eq!(input.text(), "draft");
        // Typing into a recalled entry loses neither it nor the draft.
        input.up();
        assert_eq!(input.text(), "second\nline");
        input.insert_str(" X");
        input.up();
        input.up();
        assert_eq!(input.text(), "first");
        input.down();
        assert_eq!(input.text(), "second\nline X");
        input.down();
        assert_eq!(input.text(), "draft");
        // Sent, the edit is the newest entry and the entry edited is as it was.
        input.up();
        assert_eq!(input.take(), "second\nline X");
        input.up();
        input.up();
        input.up();
        assert_eq!(input.text(), "second\nline");
        input.clear();
        input.take();
        // Sending the same prompt twice keeps one entry.
        input.clear();
        input.insert_str("first");
        input.take();
        input.insert_str("first");
        input.take();
        input.up();
        input.up();
        assert_eq!(input.text(), "second\nline X");
    }
}
