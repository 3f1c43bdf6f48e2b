//! A server's `elicitation/create` as a request the driver answers, like an approval: an id, a
//! reply, and dropping it unanswered declines. Form mode carries the fields built from the
//! requested schema and checks an acceptance against them before it goes back; URL mode
//! carries the URL and what the server said it is for.
//!
//! Separate from the handler (which receives the request and waits for the answer) because the
//! request travels: the MCP layer creates it, the runtime publishes it, the console's modal or
//! a headless command answers it.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};
use tokio::sync::oneshot;

use super::reply::Reply;

use super::form::{check_content, defaults_of, fields_of, FormField};

/// Ids of elicitation requests, unique in this process.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// What the server asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationMode {
    /// Fill in a form: the requested schema as sent, and the fields built from it.
    Form {
        schema: Value,
        fields: Vec<FormField>,
    },
    /// Open a URL (an out-of-band flow: a login, a payment).
    Url { url: String, elicitation_id: String },
}

/// How the driver answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    /// Accepted: for a form, the content (checked against its fields); for a URL, none.
    Accept(Option<Map<String, Value>>),
    /// Declined, and why (the server hears only "decline"; the operator sees the reason).
    Decline(String),
    /// Dismissed without a choice.
    Cancel,
}

/// One question from a server, waiting for the driver.
///
/// Clones share one reply: the first answer wins. Dropping every clone unanswered declines.
#[derive(Clone)]
pub struct ElicitationRequest {
    /// Unique in this process; lets queued requests be told apart.
    pub id: u64,
    pub server: String,
    /// What the server says it wants, as sent (not sanitized: whoever shows it does that).
    pub message: String,
    pub mode: ElicitationMode,
    reply: Reply<ElicitationAnswer>,
}

impl std::fmt::Debug for ElicitationRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ElicitationRequest")
            .field("id", &self.id)
            .field("server", &self.server)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl PartialEq for ElicitationRequest {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl ElicitationRequest {
    /// A form request from `schema`; `Err` names what the form cannot ask.
    pub fn form(
        server: &str,
        message: String,
        schema: Value,
    ) -> Result<(ElicitationRequest, oneshot::Receiver<ElicitationAnswer>), String> {
        let fields = fields_of(&schema)?;
        Ok(ElicitationRequest::new(
            server,
            message,
            ElicitationMode::Form { schema, fields },
        ))
    }

    /// A URL request.
    pub fn url(
        server: &str,
        message: String,
        url: String,
        elicitation_id: String,
    ) -> (ElicitationRequest, oneshot::Receiver<ElicitationAnswer>) {
        ElicitationRequest::new(
            server,
            message,
            ElicitationMode::Url {
                url,
                elicitation_id,
            },
        )
    }

    fn new(
        server: &str,
        message: String,
        mode: ElicitationMode,
    ) -> (ElicitationRequest, oneshot::Receiver<ElicitationAnswer>) {
        let (reply, receiver) = Reply::new();
        (
            ElicitationRequest {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                server: server.to_string(),
                message,
                mode,
                reply,
            },
            receiver,
        )
    }

    /// Whether the server still waits for an answer (not answered, not withdrawn).
    pub fn is_open(&self) -> bool {
        self.reply.is_open()
    }

    /// Resolves once nobody waits for an answer any more: answered, or withdrawn by the
    /// server (or given up on).
    pub async fn closed(&self) {
        self.reply.closed().await
    }

    /// The form's fields (none for a URL request).
    pub fn fields(&self) -> &[FormField] {
        match &self.mode {
            ElicitationMode::Form { fields, .. } => fields,
            ElicitationMode::Url { .. } => &[],
        }
    }

    fn send(&self, answer: ElicitationAnswer) {
        self.reply.send(answer);
    }

    /// Accepts a form with `content`, after checking it against the form's fields; on a
    /// problem nothing is sent and the problems come back. A URL request is accepted as is
    /// (`content` must be empty).
    pub fn accept(&self, content: Map<String, Value>) -> Result<(), Vec<String>> {
        match &self.mode {
            ElicitationMode::Form { fields, .. } => {
                check_content(fields, &content)?;
                self.send(ElicitationAnswer::Accept(Some(content)));
            }
            ElicitationMode::Url { .. } => self.send(ElicitationAnswer::Accept(None)),
        }
        Ok(())
    }

    /// Accepts a form with the schema's defaults (fields without one left out), as headless
    /// `--elicitation defaults` and the conformance client answer; a URL request is declined
    /// (nobody is there to open it).
    pub fn accept_defaults(&self) {
        match &self.mode {
            ElicitationMode::Form { fields, .. } => {
                self.send(ElicitationAnswer::Accept(Some(defaults_of(fields))))
            }
            ElicitationMode::Url { .. } => self.decline("no one is here to open the URL"),
        }
    }

    /// Declines, saying why (for the operator; the server hears only "decline").
    pub fn decline(&self, why: impl Into<String>) {
        self.send(ElicitationAnswer::Decline(why.into()));
    }

    /// Dismisses the request without a choice.
    pub fn cancel(&self) {
        self.send(ElicitationAnswer::Cancel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer", "default": 3}, "s": {"type": "string"}}, "required": ["s"]})
    }

    #[tokio::test]
    async fn an_accepted_form_is_checked_before_it_goes() {
        let (request, rx) = ElicitationRequest::form("srv", "m".into(), schema()).unwrap();
        let bad = json!({"n": "x"}).as_object().unwrap().clone();
        assert_eq!(request.accept(bad).unwrap_err().len(), 2);
        let good = json!({"s": "hi"}).as_object().unwrap().clone();
        request.clone().accept(good.clone()).unwrap();
        // The first answer wins; a later one reaches no one.
        assert!(!request.is_open());
        request.cancel();
        assert_eq!(rx.await.unwrap(), ElicitationAnswer::Accept(Some(good)));
    }

    #[tokio::test]
    async fn defaults_and_dropping() {
        let (request, rx) = ElicitationRequest::form("srv", "m".into(), schema()).unwrap();
        request.accept_defaults();
        assert_eq!(
            rx.await.unwrap(),
            ElicitationAnswer::Accept(Some(json!({"n": 3}).as_object().unwrap().clone()))
        );
        let (request, rx) =
            ElicitationRequest::url("srv", "m".into(), "https://x".into(), "i".into());
        let copy = request.clone();
        assert!(request.is_open());
        drop(request);
        drop(copy);
        assert!(
            rx.await.is_err(),
            "dropped unanswered: the handler declines"
        );
        assert!(ElicitationRequest::form(
            "s",
            "m".into(),
            json!({"properties": {"o": {"type": "object"}}})
        )
        .is_err());
    }
}
