//! What one server's session carries besides rmcp's own state: the progress routes (a request's
//! progress token → the caller's progress sink and idle deadline), the tools-stale flag set by
//! `tools/list_changed`, the per-server tap that feeds both in wire order, and the resource
//! subscriptions the operator holds.
//!
//! Separate from the client because these are filled on the transport's reader task, before
//! rmcp sees a message, and read by the client's requests.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{NumberOrString, ProgressToken};
use serde_json::Value;
use tokio::sync::Notify;

use super::events::EventSink;
use super::notify::{
    McpNotification, McpNotificationListener, Notice, NotificationTap, RoomFuture,
};
use crate::tool::{ProgressSink, ProgressUpdate};

/// The live state of one server's session, shared by its tap and its client.
#[derive(Clone)]
pub struct SessionLinks {
    /// The configured server name.
    pub server: String,
    /// Where the MCP layer reports (server→client requests among others).
    pub sink: EventSink,
    pub(crate) routes: Arc<ProgressRoutes>,
    pub(crate) tools_stale: Arc<AtomicBool>,
    /// A `start: lazy` server's entry: its kept tool list is dropped on `tools/list_changed`.
    pub(crate) kept_list: Option<Arc<crate::config::ServerConfig>>,
    pub(crate) subscriptions: Arc<tokio::sync::Mutex<Subscriptions>>,
    /// The URIs whose `resources/updated` is reported: those subscribed to, kept apart from
    /// `subscriptions` so the tap can read them without waiting. An update for any other URI
    /// (one in flight as an unsubscribe went out, or one never asked for) is dropped.
    pub(crate) wanted: Arc<Mutex<BTreeSet<String>>>,
}

/// The resources subscribed to on one session (`resources.rs` keeps it): the URIs, and on a
/// 2026-07-28 session the task that holds the `subscriptions/listen` request carrying them.
#[derive(Default)]
pub(crate) struct Subscriptions {
    pub(crate) uris: BTreeSet<String>,
    /// Drains the open `subscriptions/listen` stream (the tap has already reported what it
    /// carries); aborting it drops the stream, which cancels the request.
    pub(crate) listen: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        if let Some(listen) = self.listen.take() {
            listen.abort();
        }
    }
}

impl std::fmt::Debug for SessionLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLinks")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl SessionLinks {
    pub fn new(server: &str, sink: EventSink) -> Self {
        SessionLinks {
            server: server.to_string(),
            sink,
            routes: Arc::default(),
            tools_stale: Arc::default(),
            kept_list: None,
            subscriptions: Arc::default(),
            wanted: Arc::default(),
        }
    }

    /// The links of a server whose tool list is kept on disk (`start: lazy`): a
    /// `tools/list_changed` drops it.
    pub fn keeping_list(mut self, config: &crate::config::ServerConfig) -> Self {
        self.kept_list = Some(Arc::new(config.clone()));
        self
    }

    /// The tap a transport of this session delivers to: progress of a pending request goes to
    /// that request (and nowhere else), `tools/list_changed` marks the tools stale, and every
    /// notification but routed progress goes on to `next`.
    pub fn tap(&self, next: NotificationTap) -> NotificationTap {
        NotificationTap::new(Arc::new(SessionTap {
            routes: self.routes.clone(),
            tools_stale: self.tools_stale.clone(),
            kept_list: self.kept_list.clone(),
            wanted: self.wanted.clone(),
            next,
        }))
    }

    /// Whether `tools/list_changed` arrived since the tools were last listed.
    pub fn tools_stale(&self) -> bool {
        self.tools_stale.load(Ordering::SeqCst)
    }

    /// Reports `resources/updated` of `uri` from now on (`on`), or no longer.
    pub(crate) fn want_updates(&self, uri: &str, on: bool) {
        let mut wanted = self.wanted.lock().unwrap_or_else(|e| e.into_inner());
        if on {
            wanted.insert(uri.to_string());
        } else {
            wanted.remove(uri);
        }
    }

    /// Clears the stale flag; called as a listing starts, so a change announced while it runs
    /// marks the tools stale again.
    pub(crate) fn take_tools_stale(&self) -> bool {
        self.tools_stale.swap(false, Ordering::SeqCst)
    }
}

struct SessionTap {
    routes: Arc<ProgressRoutes>,
    tools_stale: Arc<AtomicBool>,
    kept_list: Option<Arc<crate::config::ServerConfig>>,
    wanted: Arc<Mutex<BTreeSet<String>>>,
    next: NotificationTap,
}

impl McpNotificationListener for SessionTap {
    fn on_notification(&self, notification: &McpNotification) {
        // By method first: reading a log message's data here would copy it for nothing.
        match notification.method.as_str() {
            "notifications/progress" => {
                if let Notice::Progress {
                    token,
                    progress,
                    total,
                    message,
                } = notification.notice()
                {
                    let update = ProgressUpdate {
                        progress,
                        total,
                        message,
                    };
                    if self.routes.route(&token, update) {
                        return;
                    }
                }
            }
            "notifications/tools/list_changed" => {
                self.tools_stale.store(true, Ordering::SeqCst);
                if let Some(config) = &self.kept_list {
                    super::tool_cache::remove(config);
                }
            }
            "notifications/resources/updated" => {
                if let Notice::ResourceUpdated { uri } = notification.notice() {
                    let wanted = self.wanted.lock().unwrap_or_else(|e| e.into_inner());
                    if !wanted.contains(&uri) {
                        tracing::debug!(%uri, "resources/updated of a resource not subscribed to: dropped");
                        return;
                    }
                }
            }
            _ => {}
        }
        self.next.deliver(notification);
    }

    fn room(&self) -> RoomFuture<'_> {
        Box::pin(self.next.room())
    }
}

struct Route {
    sink: ProgressSink,
    activity: Arc<Notify>,
}

/// Pending requests by progress token (a number or a string, as sent: a float matches none).
#[derive(Default)]
pub(crate) struct ProgressRoutes(Mutex<Routes>);

/// Tokens of requests that ended remembered, so late progress for them is known as such.
const ENDED_KEPT: usize = 256;

#[derive(Default)]
struct Routes {
    live: HashMap<NumberOrString, Route>,
    /// The last `ENDED_KEPT` tokens whose requests ended (answered, cancelled, timed out): a
    /// server that ignores a cancel and keeps reporting progress is not heard any more.
    ended: VecDeque<NumberOrString>,
}

/// The token a notification names, as a route's key.
fn token_key(token: &Value) -> Option<NumberOrString> {
    match token {
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        _ => None,
    }
}

impl ProgressRoutes {
    /// Routes progress for `token` to `sink` until the guard is dropped.
    pub(crate) fn register(
        self: &Arc<Self>,
        token: &ProgressToken,
        sink: ProgressSink,
    ) -> RouteGuard {
        let key = token.0.clone();
        let activity = Arc::new(Notify::new());
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .live
            .insert(
                key.clone(),
                Route {
                    sink,
                    activity: activity.clone(),
                },
            );
        RouteGuard {
            routes: self.clone(),
            key,
            activity,
        }
    }

    /// Hands `update` to the request that carried `token`, or drops it when that request has
    /// ended (late progress of a cancelled call); false when the token is not one of ours.
    fn route(&self, token: &Value, update: ProgressUpdate) -> bool {
        let Some(key) = token_key(token) else {
            return false;
        };
        let found = {
            let routes = self.0.lock().unwrap_or_else(|e| e.into_inner());
            match routes.live.get(&key) {
                Some(r) => Some((r.sink.clone(), r.activity.clone())),
                None if routes.ended.contains(&key) => {
                    tracing::debug!(?key, "progress for a request that ended: dropped");
                    return true;
                }
                None => None,
            }
        };
        match found {
            Some((sink, activity)) => {
                sink.report(update);
                activity.notify_one();
                true
            }
            None => false,
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).live.len()
    }
}

/// A registered route; dropping it unregisters the token.
pub(crate) struct RouteGuard {
    routes: Arc<ProgressRoutes>,
    key: NumberOrString,
    activity: Arc<Notify>,
}

impl RouteGuard {
    /// Resolves at the next progress update for this request (one stored if it came already).
    pub(crate) async fn progressed(&self) {
        self.activity.notified().await;
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        let mut routes = self.routes.0.lock().unwrap_or_else(|e| e.into_inner());
        routes.live.remove(&self.key);
        if routes.ended.len() >= ENDED_KEPT {
            routes.ended.pop_front();
        }
        routes.ended.push_back(self.key.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Collect(Mutex<Vec<String>>);
    impl McpNotificationListener for Collect {
        fn on_notification(&self, n: &McpNotification) {
            self.0.lock().unwrap().push(n.method.clone());
        }
    }

    fn note(method: &str, params: Value) -> McpNotification {
        McpNotification {
            server: "s".into(),
            method: method.into(),
            params,
        }
    }

    #[test]
    fn an_update_goes_on_only_while_its_resource_is_subscribed_to() {
        let links = SessionLinks::new("s", super::super::events::null_sink());
        let seen = Arc::new(Collect(Mutex::new(Vec::new())));
        let tap = links.tap(NotificationTap::new(seen.clone()));
        let updated = || {
            note(
                "notifications/resources/updated",
                json!({"uri": "demo://a"}),
            )
        };
        tap.deliver(&updated());
        links.want_updates("demo://a", true);
        tap.deliver(&updated());
        // One in flight as the unsubscribe went out.
        links.want_updates("demo://a", false);
        tap.deliver(&updated());
        assert_eq!(
            *seen.0.lock().unwrap(),
            vec!["notifications/resources/updated".to_string()]
        );
    }

    #[tokio::test]
    async fn progress_goes_to_its_request_and_the_rest_goes_on() {
        let links = SessionLinks::new("s", super::super::events::null_sink());
        let seen = Arc::new(Collect(Mutex::new(Vec::new())));
        let tap = links.tap(NotificationTap::new(seen.clone()));
        let got = Arc::new(Mutex::new(Vec::new()));
        let into = got.clone();
        let guard = links.routes.register(
            &ProgressToken(NumberOrString::Number(7)),
            ProgressSink::new(move |u| into.lock().unwrap().push(u.progress)),
        );
        tap.deliver(&note(
            "notifications/progress",
            json!({"progressToken": 7, "progress": 2}),
        ));
        // Stored permit: the waiter sees the update that came before it waited.
        guard.progressed().await;
        tap.deliver(&note(
            "notifications/progress",
            json!({"progressToken": 8, "progress": 1}),
        ));
        assert!(!links.tools_stale());
        tap.deliver(&note("notifications/tools/list_changed", Value::Null));
        assert!(links.tools_stale());
        assert!(links.take_tools_stale());
        assert!(!links.tools_stale());
        assert_eq!(*got.lock().unwrap(), vec![2.0]);
        assert_eq!(
            *seen.0.lock().unwrap(),
            vec!["notifications/progress", "notifications/tools/list_changed"]
        );
        drop(guard);
        assert_eq!(links.routes.len(), 0);
        // Its request over (a cancelled call whose server goes on): its progress is dropped,
        // not passed on as a notification nobody asked for; unknown tokens still go on.
        tap.deliver(&note(
            "notifications/progress",
            json!({"progressToken": 7, "progress": 3}),
        ));
        tap.deliver(&note(
            "notifications/progress",
            json!({"progressToken": 9, "progress": 1}),
        ));
        assert_eq!(*got.lock().unwrap(), vec![2.0]);
        assert_eq!(
            *seen.0.lock().unwrap(),
            vec![
                "notifications/progress",
                "notifications/tools/list_changed",
                "notifications/progress"
            ]
        );
    }
}
