//! What servers push that a gateway's host asked for, told to that host: log messages at or
//! above the level it set (`logging/setLevel`), and `notifications/resources/updated` for the
//! resources it subscribed to (under the URIs it knows them by). Told after each of its calls
//! (before the result, so what the server sent during a call reaches the host first) and every
//! [`WATCH`](super::face) between.

// Logging is SEP-2577-deprecated in rmcp; the hosts and servers of today use it.
#![allow(deprecated)]

use std::collections::BTreeSet;
use std::sync::Mutex;

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ResourceUpdatedNotificationParam,
};
use rmcp::service::Peer;
use rmcp::RoleServer;
use tokio::sync::broadcast;

use super::face_backend::Backend;
use super::notify::{LogLevel, McpNotification, Notice};
use crate::config::Naming;

/// What one host asked to be told, and where it reads it from (once it asked anything).
#[derive(Default)]
pub(super) struct HostNotices {
    wanted: Mutex<Wanted>,
}

#[derive(Default)]
struct Wanted {
    level: Option<LogLevel>,
    /// `(server, its URI)` of each resource subscribed to.
    resources: BTreeSet<(String, String)>,
    from: Option<broadcast::Receiver<McpNotification>>,
}

/// One thing to tell the host.
enum Due {
    Log(LoggingMessageNotificationParam),
    Updated(String),
}

impl HostNotices {
    fn wanted(&self) -> std::sync::MutexGuard<'_, Wanted> {
        self.wanted.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn set_level(&self, level: LoggingLevel, backend: &dyn Backend) {
        let mut wanted = self.wanted();
        wanted.level = Some(LogLevel::from_rmcp(level));
        wanted.from.get_or_insert_with(|| backend.host_notices());
    }

    /// The host subscribed to (`on`) or unsubscribed from `server`'s `uri`.
    pub(super) fn subscribe(&self, server: &str, uri: &str, on: bool, backend: &dyn Backend) {
        let mut wanted = self.wanted();
        let key = (server.to_string(), uri.to_string());
        if on {
            wanted.resources.insert(key);
            wanted.from.get_or_insert_with(|| backend.host_notices());
        } else {
            wanted.resources.remove(&key);
        }
    }

    /// Tells the host what came since last time.
    pub(super) async fn tell(&self, peer: &Peer<RoleServer>, naming: &Naming) {
        let due: Vec<Due> = {
            let mut wanted = self.wanted();
            let Wanted {
                level,
                resources,
                from,
            } = &mut *wanted;
            let Some(from) = from.as_mut() else {
                return;
            };
            let mut due = Vec::new();
            loop {
                match from.try_recv() {
                    Ok(notice) => due.extend(for_host(&notice, *level, resources, naming)),
                    Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                    Err(_) => break,
                }
            }
            due
        };
        for notice in due {
            let told = match notice {
                Due::Log(line) => peer.notify_logging_message(line).await,
                Due::Updated(uri) => {
                    peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                        .await
                }
            };
            if told.is_err() {
                return;
            }
        }
    }
}

/// A server's notification as the host is told it, if it asked for it: a log message at or
/// above `level` (its logger prefixed with the server), an update of a resource it subscribed
/// to (under its offered URI).
fn for_host(
    notice: &McpNotification,
    level: Option<LogLevel>,
    resources: &BTreeSet<(String, String)>,
    naming: &Naming,
) -> Option<Due> {
    match notice.notice() {
        Notice::Log {
            level: at,
            logger,
            data,
        } => {
            if at < level? {
                return None;
            }
            let logger = match logger {
                Some(logger) => format!("{}/{logger}", notice.server),
                None => notice.server.clone(),
            };
            let mut param = LoggingMessageNotificationParam::new(at.to_rmcp(), data);
            param.logger = Some(logger);
            Some(Due::Log(param))
        }
        Notice::ResourceUpdated { uri } => resources
            .contains(&(notice.server.clone(), uri.clone()))
            .then(|| Due::Updated(naming.uri(&notice.server, &uri))),
        _ => None,
    }
}
