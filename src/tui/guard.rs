//! Keys that answer a question are not taken from typing meant for something else. An
//! approval that pops up while the operator types the next prompt would otherwise take the
//! next `y`, `a`, `A` or `n` typed as its answer (an `A` writes a rule): a key sooner than
//! anyone reads the question, or while typing goes on, is held; a key that comes in one burst
//! with others (a paste, or a sentence typed into the wrong pane) does not confirm the
//! question the key before it opened.

use std::time::{Duration, Instant};

/// Keys closer together than this came in one burst: nobody reads a question that fast.
const BURST: Duration = Duration::from_millis(80);
/// Text typed this long before a question came means the operator was typing at it.
const TYPING: Duration = Duration::from_secs(1);
/// How long the typing must stop before the question takes an answer.
const PAUSE: Duration = Duration::from_millis(600);
/// Nobody reads a question and decides in less: a key sooner was meant for something else.
const READ: Duration = Duration::from_millis(300);

/// What the guard knows about the keys.
#[derive(Debug, Default)]
pub struct KeyGuard {
    /// When text last went into the conversation's input box since it was last sent.
    typed_at: Option<Instant>,
    /// When the last key came, and the time from the one before it to it, as the event loop
    /// saw them (none when keys are given to the app directly).
    last_key: Option<Instant>,
    gap: Option<Duration>,
    /// Until when the approval on screen takes no answer (the operator was typing).
    hold_until: Option<Instant>,
    /// When the approval on screen came up.
    asked_at: Option<Instant>,
}

impl KeyGuard {
    /// A key came from the terminal at `at`.
    pub fn key_came(&mut self, at: Instant) {
        self.gap = self.last_key.map(|last| at.saturating_duration_since(last));
        self.last_key = Some(at);
    }

    /// Text went into the input box.
    pub fn typed(&mut self, now: Instant) {
        self.typed_at = Some(now);
    }

    /// The input box was sent: what was typed went where it was meant to.
    pub fn sent(&mut self) {
        self.typed_at = None;
    }

    /// An approval question came up (none was on screen).
    pub fn question_came(&mut self, now: Instant) {
        self.asked_at = Some(now);
        if self
            .typed_at
            .is_some_and(|t| now.saturating_duration_since(t) < TYPING)
        {
            self.hold_until = Some(now + PAUSE);
        }
    }

    /// Whether a key answering the approval on screen at `now` is taken; if not, why (each
    /// key while held holds it a pause longer).
    pub fn answer(&mut self, now: Instant) -> Result<(), &'static str> {
        // A key from the terminal sooner after the question than anyone reads it.
        let unread = match (self.last_key, self.asked_at) {
            (Some(key), Some(asked)) => key.saturating_duration_since(asked) < READ,
            _ => false,
        };
        if unread || self.hold_until.is_some_and(|until| now < until) {
            self.hold_until = Some(now + PAUSE);
            return Err("you were typing when this question came: stop for a moment, then answer (keys typed meanwhile are not taken)");
        }
        self.hold_until = None;
        self.confirm()
    }

    /// Whether a key confirming a question (write the trust, quit) is taken.
    pub fn confirm(&self) -> Result<(), &'static str> {
        match self.gap {
            Some(gap) if gap < BURST => Err(
                "that key came in one burst with others (typing or a paste), not taken: press it again to answer",
            ),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_holds_an_answer_until_it_stops_and_a_burst_is_not_an_answer() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut guard = KeyGuard::default();
        // Sent, then a question: answered at once.
        guard.typed(t0);
        guard.sent();
        guard.question_came(ms(200));
        assert_eq!(guard.answer(ms(250)), Ok(()));
        // Typing on after the send when it comes: held while the keys go on.
        guard.typed(ms(1000));
        guard.question_came(ms(1100));
        assert!(guard.answer(ms(1200)).is_err());
        assert!(
            guard.answer(ms(1700)).is_err(),
            "held a pause past each key"
        );
        assert_eq!(guard.answer(ms(2400)), Ok(()));
        // A key from the terminal right after the question came: held, and held on while
        // keys follow.
        guard.question_came(ms(2500));
        guard.key_came(ms(2600));
        assert!(guard.answer(ms(2600)).is_err());
        guard.key_came(ms(3000));
        assert!(guard.answer(ms(3000)).is_err());
        guard.key_came(ms(3700));
        assert_eq!(guard.answer(ms(3700)), Ok(()));
        // A key close behind another is a burst.
        guard.key_came(ms(4000));
        guard.key_came(ms(4010));
        assert!(guard.confirm().is_err());
        guard.key_came(ms(4500));
        assert_eq!(guard.confirm(), Ok(()));
    }
}
