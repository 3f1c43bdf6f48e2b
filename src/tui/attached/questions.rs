//! A server's question (elicitation: a form or a URL) that the daemon asks its consoles. It
//! shows here as the console shows one of its own runtime's, and its answer goes back to the
//! daemon (`answer_elicitation`), where the first console's answer wins. Once another console
//! has answered, the question leaves this one, and the notice line says who answered.

use serde_json::{json, Value};

use super::Feed;
use crate::runtime::{ElicitationAnswer, ElicitationRequest, McpEvent, RuntimeEvent};
use crate::tui::messages::{AppEvent, Level};

impl Feed {
    /// An `elicitation_requested` event (its names as the console shows them): asked here.
    pub(super) async fn question(&mut self, value: &Value) -> bool {
        let Some(id) = value["id"]
            .as_u64()
            .and_then(|id| self.daemon().names.local_id(id))
        else {
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
            Err(why) => {
                let said = format!(
                    "{server} asks a question this console cannot show ({why}); another console of the daemon may answer it"
                );
                return self.send(AppEvent::Notice(Level::Warn, said)).await;
            }
        };
        let (link, tx) = (self.daemon().link.clone(), self.tx.clone());
        let waiting = tokio::spawn(async move {
            // No answer (the console quit, or another console answered first): nothing to say.
            let Ok(answer) = answer.await else {
                return;
            };
            let params = match answer {
                ElicitationAnswer::Accept(content) => {
                    json!({"id": id, "action": "accept", "content": content})
                }
                ElicitationAnswer::Decline(_) => json!({"id": id, "action": "decline"}),
                ElicitationAnswer::Cancel => json!({"id": id, "action": "cancel"}),
            };
            if let Err((_, why)) = link.request("answer_elicitation", params).await {
                let _ = tx.send(AppEvent::Notice(Level::Warn, why)).await;
            }
        });
        self.questions.insert(id, waiting);
        let asked = RuntimeEvent::Mcp(McpEvent::ElicitationRequested(request));
        self.send(AppEvent::Runtime(0, asked)).await
    }

    /// Question `id` is answered or withdrawn: it leaves this console with the next event.
    async fn question_gone(&mut self, id: u64) {
        if let Some(waiting) = self.questions.remove(&id) {
            // Its end drops the question's reply: the console's queue lets it go. An abort
            // only asks; the wait is over once the task has ended, so it is awaited here, or
            // the next event (the notice below) could reach the console while the reply
            // still looks open, and the question would stay on the screen.
            waiting.abort();
            let _ = waiting.await;
        }
    }

    /// `elicitation_withdrawn`: its server no longer waits for the answer.
    pub(super) async fn question_withdrawn(&mut self, params: &Value) -> bool {
        let Some(id) = params["id"].as_u64() else {
            return true;
        };
        self.question_gone(id).await;
        let server = self
            .daemon()
            .names
            .server(params["server"].as_str().unwrap_or("a server"));
        let said = format!("{server} withdrew its question");
        self.send(AppEvent::Notice(Level::Info, said)).await
    }

    /// `elicitation_answered`: the question leaves this console (with the next event), which
    /// says who answered it unless it was this one.
    pub(super) async fn question_answered(&mut self, params: &Value) -> bool {
        let Some(id) = params["id"].as_u64() else {
            return true;
        };
        self.question_gone(id).await;
        let (by, you) = (&params["by"], &self.daemon().link.hello["you"]);
        if by["pid"] == you["pid"] && by["text"] == you["text"] {
            return true;
        }
        let said = format!(
            "a server's question was answered ({}) by {}",
            params["action"].as_str().unwrap_or("?"),
            by["text"].as_str().unwrap_or("another console")
        );
        self.send(AppEvent::Notice(Level::Info, said)).await
    }
}
