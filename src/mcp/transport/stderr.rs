//! The per-server stderr ring buffer: the last lines a server wrote, kept across restarts.
//!
//! Separate from the process so that it outlives any one child (a restart appends a marker line).

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::text;

/// Lines kept per server.
pub const STDERR_RING_LINES: usize = 500;
/// Characters kept per line; the rest is cut with `…`.
pub const STDERR_LINE_CHARS: usize = 2_000;

/// A bounded, thread-safe ring of sanitized stderr lines.
#[derive(Debug)]
pub struct StderrRing {
    inner: Mutex<Ring>,
    capacity: usize,
}

#[derive(Debug, Default)]
struct Ring {
    lines: VecDeque<String>,
    total: u64,
}

impl StderrRing {
    pub fn new(capacity: usize) -> Self {
        StderrRing {
            inner: Mutex::new(Ring::default()),
            capacity: capacity.max(1),
        }
    }

    /// Appends one raw line (sanitized and cut here); the oldest line goes when full.
    pub fn push(&self, raw: &str) -> String {
        let line = text::sanitize_line(raw.trim_end_matches(['\r', '\n']), STDERR_LINE_CHARS);
        let mut ring = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if ring.lines.len() == self.capacity {
            ring.lines.pop_front();
        }
        ring.lines.push_back(line.clone());
        ring.total += 1;
        line
    }

    /// The last `n` lines, oldest first.
    pub fn tail(&self, n: usize) -> Vec<String> {
        let ring = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let skip = ring.lines.len().saturating_sub(n);
        ring.lines.iter().skip(skip).cloned().collect()
    }

    /// How many lines were ever pushed (the ring keeps only the last ones).
    pub fn total(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).total
    }
}

impl Default for StderrRing {
    fn default() -> Self {
        StderrRing::new(STDERR_RING_LINES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_sanitized() {
        let ring = StderrRing::new(3);
        for i in 0..5 {
            ring.push(&format!("line {i}\x1b[31m\n"));
        }
        assert_eq!(ring.tail(10), vec!["line 2", "line 3", "line 4"]);
        assert_eq!(ring.tail(1), vec!["line 4"]);
        assert_eq!(ring.total(), 5);
    }
}
