//! The rewake bridge's runtime end (seed §7.2, `McpNotificationToRewakeBridge` →
//! `ExternalEventResolver`): the runtime's notification listener puts each notification on the
//! event stream, then hands it to the `Rewaker`, which delivers whatever external events the
//! rewake rules make of it to the driver as `RuntimeEvent::Rewake`.
//!
//! Kept in one place, apart from the event bus, so that how notifications fan out can change
//! without touching the rules, and the other way round.

use crate::config::RewakeRule;
use crate::mcp::notify::{McpNotification, McpNotificationListener, RoomFuture};
use crate::mcp::rewake::RewakeMapper;

use super::bus::EventBus;
use super::events::RuntimeEvent;

/// Delivers the external events the rewake rules make of a notification.
pub(crate) struct Rewaker {
    mapper: RewakeMapper,
    bus: EventBus,
}

impl Rewaker {
    pub(crate) fn new(rules: &[RewakeRule], bus: EventBus) -> Self {
        Rewaker {
            mapper: RewakeMapper::new(rules.to_vec()),
            bus,
        }
    }

    /// Maps one notification; every event it makes goes to the driver.
    pub(crate) fn on_notification(&self, notification: &McpNotification) {
        if self.mapper.is_empty() {
            return;
        }
        for event in self.mapper.map(notification) {
            self.bus.send(RuntimeEvent::Rewake(event));
        }
    }
}

/// The runtime's notification listener: the notification itself on the stream, then the
/// rewake rules.
pub(crate) struct RuntimeListener {
    pub(crate) bus: EventBus,
    pub(crate) rewaker: Rewaker,
}

impl McpNotificationListener for RuntimeListener {
    fn on_notification(&self, notification: &McpNotification) {
        self.bus.on_notification(notification);
        self.rewaker.on_notification(notification);
    }

    /// The bus's backpressure holds for the whole listener.
    fn room(&self) -> RoomFuture<'_> {
        Box::pin(self.bus.room())
    }
}
