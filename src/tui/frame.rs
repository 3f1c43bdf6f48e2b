//! The frame requester: handlers ask for a frame, the scheduler coalesces requests into at most
//! one draw per interval and never ticks on its own, so an idle console uses no CPU.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

/// Frames are never drawn closer together than this (~60 per second).
const MIN_INTERVAL: Duration = Duration::from_millis(16);

/// Asks for frames. Cheap to clone; every handler that changes what is shown calls it.
#[derive(Clone, Debug)]
pub struct FrameRequester {
    tx: mpsc::UnboundedSender<Instant>,
    /// A frame as soon as possible is asked for and not yet handed to the drawer: asking
    /// again changes nothing, so it sends nothing (a burst of events wakes the scheduler once,
    /// not once an event).
    asked: Arc<AtomicBool>,
}

impl FrameRequester {
    /// A requester and the receiver of draw notifications (one per coalesced frame).
    pub fn new() -> (FrameRequester, mpsc::Receiver<()>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (draw_tx, draw_rx) = mpsc::channel(1);
        let asked = Arc::new(AtomicBool::new(false));
        tokio::spawn(schedule(rx, draw_tx, asked.clone()));
        (FrameRequester { tx, asked }, draw_rx)
    }

    /// A frame as soon as possible.
    pub fn schedule_frame(&self) {
        if !self.asked.swap(true, Ordering::AcqRel) {
            let _ = self.tx.send(Instant::now());
        }
    }

    /// A frame after `delay` (spinners, elapsed counters).
    pub fn schedule_frame_in(&self, delay: Duration) {
        let _ = self.tx.send(Instant::now() + delay);
    }
}

/// Keeps the earliest requested time, sleeps until then, sends one draw notification. `asked`
/// is cleared as the notification goes: what changes after it asks for the next frame.
async fn schedule(
    mut requests: mpsc::UnboundedReceiver<Instant>,
    draw: mpsc::Sender<()>,
    asked: Arc<AtomicBool>,
) {
    let mut next: Option<Instant> = None;
    let mut last_draw = Instant::now() - MIN_INTERVAL;
    loop {
        let wait = async {
            match next {
                Some(at) => tokio::time::sleep_until(at.max(last_draw + MIN_INTERVAL)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            request = requests.recv() => match request {
                Some(at) => next = Some(next.map_or(at, |n| n.min(at))),
                None => return,
            },
            () = wait => {
                next = None;
                last_draw = Instant::now();
                asked.store(false, Ordering::Release);
                // A full channel means a draw is already pending: this request is covered.
                let _ = draw.try_send(());
            }
        }
    }
}

/// What this thread has used so far: its CPU time (`CLOCK_THREAD_CPUTIME_ID`, the scheduler's
/// own count) and its page faults, minor and major (`getrusage(RUSAGE_THREAD)`). Between two
/// readings: a frame's own cost apart from the time it waited for a core or for the terminal,
/// and the code or data it had to bring back into memory. (`getrusage`'s user and system
/// times are that count split by the kernel's tick samples and kept from going backwards, so
/// over a frame they could stand still: frames of 0.59 and 0.93 ms read 0 µs.)
#[derive(Clone, Copy)]
pub struct ThreadUsage {
    pub cpu: Duration,
    pub faults: u64,
    pub major_faults: u64,
    /// Times the thread gave up its core: to wait (for the terminal, a lock), and taken off
    /// it (another thread's turn).
    pub waits: u64,
    pub preempted: u64,
}

impl ThreadUsage {
    pub fn now() -> ThreadUsage {
        // SAFETY: all-zero is a valid `rusage` (integers and timevals).
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `usage` is a valid rusage for getrusage to write.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
            return ThreadUsage {
                cpu: Duration::ZERO,
                faults: 0,
                major_faults: 0,
                waits: 0,
                preempted: 0,
            };
        }
        let count = |n: libc::c_long| u64::try_from(n).unwrap_or(0);
        // SAFETY: all-zero is a valid `timespec`.
        let mut cpu: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: `cpu` is a valid timespec for clock_gettime to write.
        let cpu = if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut cpu) } == 0 {
            Duration::new(
                u64::try_from(cpu.tv_sec).unwrap_or(0),
                u32::try_from(cpu.tv_nsec).unwrap_or(0),
            )
        } else {
            Duration::ZERO
        };
        ThreadUsage {
            cpu,
            faults: count(usage.ru_minflt),
            major_faults: count(usage.ru_majflt),
            waits: count(usage.ru_nvcsw),
            preempted: count(usage.ru_nivcsw),
        }
    }

    /// What was used since `earlier`.
    pub fn since(self, earlier: ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            cpu: self.cpu.saturating_sub(earlier.cpu),
            faults: self.faults.saturating_sub(earlier.faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
            waits: self.waits.saturating_sub(earlier.waits),
            preempted: self.preempted.saturating_sub(earlier.preempted),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn coalesces_a_burst_into_one_frame() {
        let (requester, mut draws) = FrameRequester::new();
        for _ in 0..100 {
            requester.schedule_frame();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(draws.try_recv().is_ok());
        assert!(draws.try_recv().is_err(), "one frame for the whole burst");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_after_a_frame_went_out_gets_a_frame_of_its_own() {
        let (requester, mut draws) = FrameRequester::new();
        requester.schedule_frame();
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(draws.try_recv().is_ok());
        // What changed while that frame was drawn.
        requester.schedule_frame();
        requester.schedule_frame();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(draws.try_recv().is_ok(), "a second frame");
        assert!(draws.try_recv().is_err(), "one for both requests");
    }

    #[tokio::test(start_paused = true)]
    async fn stays_quiet_without_requests() {
        let (_requester, mut draws) = FrameRequester::new();
        tokio::time::sleep(Duration::from_secs(10)).await;
        assert!(draws.try_recv().is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_delayed_request_waits() {
        let (requester, mut draws) = FrameRequester::new();
        requester.schedule_frame_in(Duration::from_millis(500));
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(draws.try_recv().is_err());
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(draws.try_recv().is_ok());
    }
}
