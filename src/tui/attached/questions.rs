//! What a daemon's servers ask its consoles: questions (elicitation: a form or a URL) and
//! sampling requests. Each shows here as the console shows one of its own runtime's, and its
//! answer goes back to the daemon (`answer_elicitation`, `answer_sampling`), where the first
//! console's answer wins. Once another console has answered, or the server has withdrawn it,
//! it leaves this one, and the notice line says so. A sampling request's model answer is
//! written by the daemon's model (`sample`, effects.rs), for the operator to review here.

use serde_json::{json, Value};
use tokio::sync::oneshot;

use super::Feed;
use crate::runtime::{
    ElicitationAnswer, ElicitationRequest, McpEvent, RuntimeEvent, SamplingAnswer, SamplingAsk,
    SamplingRequest,
};
use crate::tui::messages::{AppEvent, Level};

/// The two kinds of request a daemon's console answers; each has ids of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    Question,
    Sampling,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Question => "question",
            Kind::Sampling => "sampling request",
        }
    }
}

impl Feed {
    /// The event's id (as the console shows it) and the daemon's own, if it is this daemon's.
    fn ids(&self, value: &Value) -> Option<(u64, u64)> {
        let shown = value["id"].as_u64()?;
        Some((shown, self.daemon().names.local_id(shown)?))
    }

    /// An `elicitation_requested` event (its names as the console shows them): asked here.
    pub(super) async fn question(&mut self, value: &Value) -> bool {
        let Some((_, id)) = self.ids(value) else {
            return true;
        };
        let server = value["server"].as_str().unwrap_or_default();
        let message = value["message"].as_str().unwrap_or_default().to_string();
        let text = |key: &str| value[key].as_str().unwrap_or_default().to_string();
        let made = match value["mode"].as_str() {
            Some("url") => Ok(ElicitationRequest::url(
                server,
                message,
                text("url"),
                text("elicitation_id"),
            )),
            _ => ElicitationRequest::form(server, message, value["schema"].clone()),
        };
        let (request, answer) = match made {
            Ok(made) => made,
            Err(why) => return self.cannot_show(server, Kind::Question, &why).await,
        };
        self.wait_for_answer(Kind::Question, id, answer, move |answer| match answer {
            ElicitationAnswer::Accept(content) => {
                json!({"id": id, "action": "accept", "content": content})
            }
            ElicitationAnswer::Decline(_) => json!({"id": id, "action": "decline"}),
            ElicitationAnswer::Cancel => json!({"id": id, "action": "cancel"}),
        });
        let asked = RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request));
        self.send(AppEvent::Runtime(0, asked)).await
    }

    /// A `sampling_requested` event: asked here, under the id the console shows it by.
    pub(super) async fn sampling(&mut self, value: &Value) -> bool {
        let Some((shown, id)) = self.ids(value) else {
            return true;
        };
        let server = value["server"].as_str().unwrap_or_default();
        let ask = match serde_json::from_value::<SamplingAsk>(value["request"].clone()) {
            Ok(ask) => ask,
            Err(why) => return self.cannot_show(server, Kind::Sampling, &why).await,
        };
        let (request, answer) = SamplingRequest::with_id(shown, server, ask);
        self.wait_for_answer(Kind::Sampling, id, answer, move |answer| match answer {
            SamplingAnswer::Answer {
                text,
                model,
                stop_reason,
                edited,
            } => json!({"id": id, "action": "answer", "text": text, "model": model,
                "stop": stop_reason, "edited": edited}),
            SamplingAnswer::Reject(why) => json!({"id": id, "action": "reject", "reason": why}),
        });
        let asked = RuntimeEvent::Mcp(McpEvent::SamplingRequested(request));
        self.send(AppEvent::Runtime(0, asked)).await
    }

    async fn cannot_show(
        &self,
        server: &str,
        kind: Kind,
        why: &(dyn std::fmt::Display + Sync),
    ) -> bool {
        let said = format!(
            "{server} asks a {} this console cannot show ({why}); another console of the daemon may answer it",
            kind.noun()
        );
        self.send(AppEvent::Notice(Level::Warn, said)).await
    }

    /// Sends this console's answer to request `id` (the daemon's) when it comes, as `params`
    /// make it.
    fn wait_for_answer<A: Send + 'static>(
        &mut self,
        kind: Kind,
        id: u64,
        answer: oneshot::Receiver<A>,
        params: impl FnOnce(A) -> Value + Send + 'static,
    ) {
        let (link, tx) = (self.daemon().link.clone(), self.tx.clone());
        let method = match kind {
            Kind::Question => "answer_elicitation",
            Kind::Sampling => "answer_sampling",
        };
        let waiting = tokio::spawn(async move {
            // No answer (the console quit, or another console answered first): nothing to say.
            let Ok(answer) = answer.await else {
                return;
            };
            if let Err((_, why)) = link.request(method, params(answer)).await {
                let _ = tx.send(AppEvent::Notice(Level::Warn, why)).await;
            }
        });
        self.questions.insert((kind, id), waiting);
    }

    /// Request `id` is answered or withdrawn: it leaves this console with the next event.
    async fn gone(&mut self, kind: Kind, id: u64) {
        if let Some(waiting) = self.questions.remove(&(kind, id)) {
            // Its end drops the request's reply: the console's queue lets it go. An abort
            // only asks; the wait is over once the task has ended, so it is awaited here, or
            // the next event (the notice below) could reach the console while the reply
            // still looks open, and the request would stay on the screen.
            waiting.abort();
            let _ = waiting.await;
        }
    }

    /// `elicitation_withdrawn`, `sampling_withdrawn`: its server no longer waits for the
    /// answer.
    pub(super) async fn withdrawn(&mut self, kind: Kind, params: &Value) -> bool {
        let Some(id) = params["id"].as_u64() else {
            return true;
        };
        self.gone(kind, id).await;
        let server = self
            .daemon()
            .names
            .server(params["server"].as_str().unwrap_or("a server"));
        let said = format!("{server} withdrew its {}", kind.noun());
        self.send(AppEvent::Notice(Level::Info, said)).await
    }

    /// `elicitation_answered`, `sampling_answered`: the request leaves this console (with the
    /// next event), which says who answered it unless it was this one.
    pub(super) async fn answered(&mut self, kind: Kind, params: &Value) -> bool {
        let Some(id) = params["id"].as_u64() else {
            return true;
        };
        self.gone(kind, id).await;
        let (by, you) = (&params["by"], &self.daemon().link.hello["you"]);
        if by["pid"] == you["pid"] && by["text"] == you["text"] {
            return true;
        }
        let said = format!(
            "a server's {} was answered ({}) by {}",
            kind.noun(),
            params["action"].as_str().unwrap_or("?"),
            by["text"].as_str().unwrap_or("another console")
        );
        self.send(AppEvent::Notice(Level::Info, said)).await
    }
}
