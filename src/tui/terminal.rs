//! The terminal the console takes: raw mode, the alternate screen, bracketed paste, the
//! cursor hidden; and given back on every way out (return, `?`, a panic).

use std::io::{self, Stdout};

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste, Event};
use crossterm::execute;
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::mpsc;

pub(super) type Term = Terminal<CrosstermBackend<Stdout>>;

/// Restores the terminal on every way out: drop (return, `?`, panic unwinding).
pub(super) struct TerminalGuard;

impl TerminalGuard {
    pub(super) fn enter() -> io::Result<(TerminalGuard, Term)> {
        enable_raw_mode()?;
        let guard = TerminalGuard;
        execute!(
            io::stdout(),
            EnterAlternateScreen,
            EnableBracketedPaste,
            crossterm::cursor::Hide
        )?;
        // A fixed viewport, resized on the terminal's resize events (`resize`): ratatui asks
        // the backend for the terminal's size before each frame of a full-screen one, which
        // crossterm answers by opening /dev/tty, an ioctl and a close: three system calls a
        // frame to learn what the resize events already say.
        let (width, height) = crossterm::terminal::size()?;
        let viewport = Viewport::Fixed(Rect::new(0, 0, width, height));
        let terminal = Terminal::with_options(
            CrosstermBackend::new(io::stdout()),
            TerminalOptions { viewport },
        )?;
        Ok((guard, terminal))
    }
}

/// The terminal is now `width` × `height`: the next frame is drawn whole at that size.
pub(super) fn resize(terminal: &mut Term, width: u16, height: u16) {
    if let Err(e) = terminal.resize(Rect::new(0, 0, width, height)) {
        tracing::warn!(error = %e, "the terminal's new size was not taken");
    }
}

pub(super) fn restore_terminal() {
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// Restores the terminal before the panic message is printed.
pub(super) fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
}

/// How many terminal events may wait for the console (a paste arrives as one).
const INPUT_QUEUE: usize = 256;

/// The terminal's input, read on a thread of its own that blocks in `crossterm::event::read`.
/// crossterm's `EventStream` polls its reader under a lock its own waker thread holds while it
/// waits for input, so every poll from the console's loop (one each time any other event woke
/// it) spun on that lock and yielded the core: about 5 % of the console's CPU under a stream
/// of events, and the core given away in the middle of its work. This thread holds the reader
/// alone; the console only receives. A read error is passed on and ends the thread; so does a
/// console that no longer listens.
pub(super) fn input() -> mpsc::Receiver<io::Result<Event>> {
    let (tx, rx) = mpsc::channel(INPUT_QUEUE);
    let spawned = std::thread::Builder::new()
        .name("terminal-input".into())
        .spawn(move || loop {
            let event = crossterm::event::read();
            let failed = event.is_err();
            if tx.blocking_send(event).is_err() || failed {
                break;
            }
        });
    if let Err(e) = spawned {
        // The receiver then ends at once, which the console takes as the terminal gone.
        tracing::error!(error = %e, "cannot start the terminal's input thread");
    }
    rx
}
