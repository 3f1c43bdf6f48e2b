//! `EventBus`: the runtime's one ordered, bounded event queue, and the driver's `EventStream`.
//!
//! Separate from the event enum because the queueing policy is its own concern. Nothing a
//! server can make it send grows memory without bound: notifications wait for room (the
//! transport reader awaits [`EventBus::room`] before each one, so a flood slows the server
//! down through its stdout pipe and nothing is lost), and when the driver stops reading
//! altogether the bus stops waiting after [`STALL_LIMIT`], drops what does not fit and says so
//! in place with one `EventsDropped { count }` per gap, counting exactly.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tokio::sync::{broadcast, Notify};

use super::events::RuntimeEvent;
use super::observe::Observer;
use crate::mcp::events::{EventSink, McpEvent};
use crate::mcp::notify::{McpNotification, McpNotificationListener, RoomFuture};

/// Most high-volume events (logs, progress, stderr lines, other notifications) queued for the
/// driver at once; a producer that finds the queue this full waits for room.
pub const FLOOD_BOUND: usize = 4096;
/// Extra high-volume events taken without waiting (several servers' readers that were let in
/// at once, stderr lines which never wait); past it they are dropped and counted.
const FLOOD_SLACK: usize = 1024;
/// Most stderr lines queued at once. They never wait (a server blocked on its stderr pipe
/// could stall its answers), so past this they are dropped and counted; being a class of
/// their own, a server flooding its stderr leaves the room of the other high-volume events
/// (other servers' logs and progress) to them.
const STDERR_BOUND: usize = 1024;
/// Most events of any kind queued at once (a driver that never reads while calls go on).
pub const TOTAL_BOUND: usize = 65_536;
/// Most server notices kept for a gateway's host that has not taken them yet.
const HOST_NOTICES_BOUND: usize = 1024;
/// How long a producer waits for room before the bus takes the driver to have stopped reading.
pub const STALL_LIMIT: Duration = Duration::from_secs(2);

#[derive(Default)]
struct State {
    queue: VecDeque<RuntimeEvent>,
    /// High-volume events in `queue` (stderr lines apart).
    flood: usize,
    /// Stderr lines in `queue`.
    stderr: usize,
    /// `close` was called: nothing more is taken; the driver reads what is queued, then `None`.
    closed: bool,
    /// The stream was dropped: everything goes nowhere.
    gone: bool,
    /// A producer waited `STALL_LIMIT` in vain; until the driver reads again nobody waits.
    stalled: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Wakes the driver (one permit is stored if it is not waiting yet).
    readable: Notify,
    /// Wakes every producer waiting for room.
    room: Notify,
    /// Servers' log messages and resource updates, also for the gateway's hosts that asked for
    /// them (sent only while one listens; a host that falls behind loses the oldest, never the
    /// runtime).
    host_notices: broadcast::Sender<McpNotification>,
    /// Sees every event as it is sent (telemetry), set once as the runtime is made.
    observer: OnceLock<Arc<dyn Observer>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The receiving end of a runtime's events, in the order they happened.
pub struct EventStream(Arc<Shared>);

impl EventStream {
    /// The next event; `None` once the runtime closed and everything sent before was read.
    pub async fn recv(&mut self) -> Option<RuntimeEvent> {
        loop {
            let readable = self.0.readable.notified();
            {
                let mut state = self.0.lock();
                if let Some(event) = state.queue.pop_front() {
                    if is_stderr(&event) {
                        state.stderr -= 1;
                    } else if is_flood(&event) {
                        state.flood -= 1;
                    }
                    if state.flood < FLOOD_BOUND {
                        state.stalled = false;
                        self.0.room.notify_waiters();
                    }
                    return Some(event);
                }
                if state.closed {
                    return None;
                }
            }
            readable.await;
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.gone = true;
        state.queue.clear();
        state.flood = 0;
        state.stderr = 0;
        self.0.room.notify_waiters();
    }
}

/// The sending end, shared by the runtime's parts. Closing it (once, from `AgentRuntime::close`)
/// ends the stream for the driver even while parts of the runtime still hold clones.
#[derive(Clone)]
pub(crate) struct EventBus(Arc<Shared>);

impl EventBus {
    /// Every server log message and resource update from now on, for a gateway's host.
    pub(crate) fn host_notices(&self) -> broadcast::Receiver<McpNotification> {
        self.0.host_notices.subscribe()
    }

    pub(crate) fn new() -> (EventBus, EventStream) {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            readable: Notify::new(),
            room: Notify::new(),
            host_notices: broadcast::channel(HOST_NOTICES_BOUND).0,
            observer: OnceLock::new(),
        });
        (EventBus(shared.clone()), EventStream(shared))
    }

    /// Queues an event without waiting. A high-volume event past the bound, or any event past
    /// `TOTAL_BOUND`, is dropped and counted in an `EventsDropped` at that place in the stream.
    /// After `close`, or once the driver dropped the stream, it goes nowhere. (A dropped
    /// approval request answers itself `Deny`: its reply channel closes.)
    pub(crate) fn send(&self, event: RuntimeEvent) {
        if let Some(observer) = self.0.observer.get() {
            observer.event(&event);
        }
        let mut state = self.0.lock();
        if state.closed || state.gone {
            return;
        }
        let stderr = is_stderr(&event);
        let flood = !stderr && is_flood(&event);
        let fits = state.queue.len() < TOTAL_BOUND
            && if stderr {
                state.stderr < STDERR_BOUND
            } else if flood {
                state.flood < FLOOD_BOUND + FLOOD_SLACK
            } else {
                true
            };
        if fits {
            if stderr {
                state.stderr += 1;
            } else if flood {
                state.flood += 1;
            }
            state.queue.push_back(event);
        } else {
            match state.queue.back_mut() {
                Some(RuntimeEvent::EventsDropped { count }) => *count += 1,
                // The marker itself may go one past the bound: it is what says where the gap is.
                _ => state
                    .queue
                    .push_back(RuntimeEvent::EventsDropped { count: 1 }),
            }
        }
        drop(state);
        self.0.readable.notify_one();
    }

    /// Resolves when a high-volume event may be sent without passing the bound: at once while
    /// there is room, when the driver has read enough, or after `STALL_LIMIT` of the driver not
    /// reading (then at once until it reads again; what does not fit is dropped and counted).
    pub(crate) async fn room(&self) {
        let deadline = tokio::time::Instant::now() + STALL_LIMIT;
        loop {
            let room = self.0.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            {
                let state = self.0.lock();
                if state.closed || state.gone || state.stalled || state.flood < FLOOD_BOUND {
                    return;
                }
            }
            tokio::select! {
                () = &mut room => {}
                () = tokio::time::sleep_until(deadline) => {
                    self.0.lock().stalled = true;
                    return;
                }
            }
        }
    }

    /// Hands every event from now on to `observer` too (once; a second is ignored).
    pub(crate) fn observe(&self, observer: Arc<dyn Observer>) {
        let _ = self.0.observer.set(observer);
    }

    /// The observer, if there is one.
    pub(crate) fn observer(&self) -> Option<&Arc<dyn Observer>> {
        self.0.observer.get()
    }

    /// Ends the stream: the driver's `recv` returns `None` once it has read what was sent.
    pub(crate) fn close(&self) {
        self.0.lock().closed = true;
        self.0.readable.notify_one();
        self.0.room.notify_waiters();
    }
}

impl EventBus {
    /// The bus as an MCP event sink.
    pub(crate) fn mcp_sink(&self) -> EventSink {
        let bus = self.clone();
        Arc::new(move |event| bus.send(RuntimeEvent::Mcp(event)))
    }
}

impl McpNotificationListener for EventBus {
    fn on_notification(&self, notification: &McpNotification) {
        let hosts = &self.0.host_notices;
        if hosts.receiver_count() > 0
            && matches!(
                notification.method.as_str(),
                "notifications/message" | "notifications/resources/updated"
            )
        {
            let _ = hosts.send(notification.clone());
        }
        self.send(RuntimeEvent::from_notification(notification));
    }

    fn room(&self) -> RoomFuture<'_> {
        Box::pin(EventBus::room(self))
    }
}
/// A server's stderr line.
fn is_stderr(event: &RuntimeEvent) -> bool {
    matches!(event, RuntimeEvent::Mcp(McpEvent::Stderr { .. }))
}

/// Whether a server can make many of these (they wait for room, or are dropped and counted).
fn is_flood(event: &RuntimeEvent) -> bool {
    match event {
        RuntimeEvent::Mcp(McpEvent::Stderr { .. } | McpEvent::ServerRequest { .. })
        | RuntimeEvent::Notification(_)
        | RuntimeEvent::ServerLog { .. }
        | RuntimeEvent::CallProgress { .. }
        | RuntimeEvent::ListChanged { .. }
        | RuntimeEvent::ResourceUpdated { .. }
        // Made from notifications: as many as a server sends.
        | RuntimeEvent::Rewake(_) => true,
        RuntimeEvent::Mcp(
            McpEvent::PhaseStarted { .. }
            | McpEvent::ServerStarted(_)
            | McpEvent::ServerClosed { .. }
            | McpEvent::ServerDown { .. }
            | McpEvent::RestartScheduled { .. }
            | McpEvent::GaveUp { .. }
            | McpEvent::ElicitationRequested(_)
            | McpEvent::SamplingRequested(_),
        )
        | RuntimeEvent::CallStarted { .. }
        | RuntimeEvent::CallStatus { .. }
        | RuntimeEvent::CallFinished { .. }
        | RuntimeEvent::ApprovalRequested(_)
        | RuntimeEvent::ApprovalAnswered { .. }
        | RuntimeEvent::CallAllowed { .. }
        | RuntimeEvent::HostSession { .. }
        | RuntimeEvent::ToolsChanged(_)
        | RuntimeEvent::HookRan(_)
        | RuntimeEvent::EventsDropped { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::notify::LogLevel;
    use serde_json::json;

    fn log(n: u64) -> RuntimeEvent {
        RuntimeEvent::ServerLog {
            server: "s".into(),
            level: LogLevel::Info,
            logger: None,
            data: json!(n),
        }
    }

    fn number(event: &RuntimeEvent) -> Option<u64> {
        match event {
            RuntimeEvent::ServerLog { data, .. } => data.as_u64(),
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_producer_that_waits_for_room_loses_nothing_and_keeps_order() {
        let (bus, mut stream) = EventBus::new();
        let total = (FLOOD_BOUND * 3) as u64;
        let producer = tokio::spawn(async move {
            for n in 0..total {
                bus.room().await;
                bus.send(log(n));
            }
            bus.close();
        });
        let mut next = 0;
        let mut most_queued = 0;
        while let Some(event) = stream.recv().await {
            most_queued = most_queued.max(stream.0.lock().queue.len());
            assert_eq!(number(&event), Some(next));
            next += 1;
            if next % 1000 == 0 {
                tokio::task::yield_now().await;
            }
        }
        producer.await.unwrap();
        assert_eq!(next, total);
        assert!(most_queued <= FLOOD_BOUND, "{most_queued}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_driver_that_stops_reading_gets_a_counted_gap_not_a_hung_reader() {
        let (bus, mut stream) = EventBus::new();
        let total = (FLOOD_BOUND + FLOOD_SLACK + 500) as u64;
        for n in 0..total {
            // Returns at once while there is room, then after STALL_LIMIT once, then at once.
            bus.room().await;
            bus.send(log(n));
        }
        bus.send(RuntimeEvent::CallStatus {
            id: 1,
            status: crate::runtime::CallStatus::Running,
        });
        bus.close();
        let mut logs = 0u64;
        let mut dropped = 0u64;
        let mut last = None;
        while let Some(event) = stream.recv().await {
            match &event {
                RuntimeEvent::EventsDropped { count } => dropped += count,
                RuntimeEvent::ServerLog { .. } => logs += 1,
                _ => {}
            }
            last = Some(event);
        }
        assert_eq!(logs + dropped, total);
        assert_eq!(dropped, 500);
        assert!(matches!(last, Some(RuntimeEvent::CallStatus { .. })));
    }

    #[tokio::test]
    async fn nothing_waits_or_queues_once_the_stream_is_gone() {
        let (bus, stream) = EventBus::new();
        drop(stream);
        for n in 0..(FLOOD_BOUND as u64 * 2) {
            bus.room().await;
            bus.send(log(n));
        }
        assert!(bus.0.lock().queue.is_empty());
    }
}
