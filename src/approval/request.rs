//! `ApprovalRequest`: one question to the operator, answered through a oneshot reply.
//!
//! Separate from the gate because it travels: the runtime creates it, the TUI (or a headless
//! driver) answers it, and the executor waits on the other end.

use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::tool::ToolDescriptor;

use super::pins::PinChange;
use super::ApprovalDecision;

/// Who asked for a call: the operator (the console, `call`), or the agent, with the text the
/// model wrote just before it asked (its stated reason; may be empty).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum CallOrigin {
    #[default]
    Operator,
    Agent {
        reason: String,
    },
    /// Another MCP host, through the gateway (`serve`), as it named itself.
    Host {
        name: String,
        version: String,
    },
}

impl CallOrigin {
    pub fn as_str(&self) -> &'static str {
        match self {
            CallOrigin::Operator => "operator",
            CallOrigin::Agent { .. } => "agent",
            CallOrigin::Host { .. } => "host",
        }
    }
}

/// How an approval request was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnsweredBy {
    /// A person chose (the console's modal, `y` on the terminal).
    Operator,
    /// `--yes` on the command line approved it without asking.
    YesFlag,
    /// Nobody could be asked (no terminal, no `--yes`): refused without asking.
    NoTerminal,
    /// The request was dropped unanswered (a closed modal, a driver that went away): a deny.
    Unanswered,
    /// Asked through the gateway with no console to answer (`serve`, `gateway.unattended:
    /// rules`): refused without asking.
    Unattended,
}

impl AnsweredBy {
    pub const ALL: [AnsweredBy; 5] = [
        AnsweredBy::Operator,
        AnsweredBy::YesFlag,
        AnsweredBy::NoTerminal,
        AnsweredBy::Unanswered,
        AnsweredBy::Unattended,
    ];

    /// The one named `name` (the words of [`as_str`](Self::as_str)).
    pub fn named(name: &str) -> Option<AnsweredBy> {
        AnsweredBy::ALL.into_iter().find(|b| b.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AnsweredBy::Operator => "operator",
            AnsweredBy::YesFlag => "yes_flag",
            AnsweredBy::NoTerminal => "no_terminal",
            AnsweredBy::Unanswered => "unanswered",
            AnsweredBy::Unattended => "unattended",
        }
    }
}

/// A pending approval. Answer it with [`ApprovalRequest::respond`]; dropping it unanswered
/// (a closed modal, a driver that went away) counts as [`ApprovalDecision::Deny`] on the waiting
/// side — see [`await_decision`].
#[derive(Debug)]
pub struct ApprovalRequest {
    /// Unique per runtime; lets queued approvals be told apart.
    pub id: u64,
    pub tool: ToolDescriptor,
    /// The arguments the call would run with.
    pub arguments: Value,
    /// Why the gate asks (from `GateVerdict::Ask`).
    pub why: String,
    /// Who asked for the call.
    pub origin: CallOrigin,
    /// What changed in the tool since it was approved (its diff), when it did.
    pub change: Option<PinChange>,
    reply: oneshot::Sender<ApprovalDecision>,
    /// Set by [`ApprovalRequest::respond_by`] just before the answer is sent.
    by: Arc<OnceLock<AnsweredBy>>,
}

impl ApprovalRequest {
    /// A request and the receiver the executor waits on.
    pub fn new(
        id: u64,
        tool: ToolDescriptor,
        arguments: Value,
        why: String,
    ) -> (Self, oneshot::Receiver<ApprovalDecision>) {
        let (reply, receiver) = oneshot::channel();
        (
            ApprovalRequest {
                id,
                tool,
                arguments,
                why,
                origin: CallOrigin::Operator,
                change: None,
                reply,
                by: Arc::new(OnceLock::new()),
            },
            receiver,
        )
    }

    /// The same request, asked for by `origin`.
    pub fn with_origin(mut self, origin: CallOrigin) -> Self {
        self.origin = origin;
        self
    }

    /// The same request, about a tool that changed since it was approved.
    pub fn with_change(mut self, change: Option<PinChange>) -> Self {
        self.change = change;
        self
    }

    /// Where the waiting side reads how the request was answered, once the answer arrived.
    pub(crate) fn answered_by(&self) -> Arc<OnceLock<AnsweredBy>> {
        self.by.clone()
    }

    /// Whether `AllowForSession` may be offered (never for destructive tools).
    pub fn session_approval_allowed(&self) -> bool {
        !self.tool.destructive.is_destructive()
    }

    /// Sends the operator's answer. If the waiting side is gone the answer has no one to reach,
    /// which is fine.
    pub fn respond(self, decision: ApprovalDecision) {
        self.respond_by(decision, AnsweredBy::Operator);
    }

    /// Sends an answer and says how it was given (`--yes`, no terminal to ask on, …).
    pub fn respond_by(self, decision: ApprovalDecision, by: AnsweredBy) {
        let _ = self.by.set(by);
        let _ = self.reply.send(decision);
    }
}

/// Waits for the answer to a request; a request dropped unanswered is a `Deny`.
pub async fn await_decision(receiver: oneshot::Receiver<ApprovalDecision>) -> ApprovalDecision {
    receiver.await.unwrap_or(ApprovalDecision::Deny)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{DestructiveBehavior, SideEffectLevel};
    use serde_json::json;

    fn descriptor(destructive: DestructiveBehavior) -> ToolDescriptor {
        ToolDescriptor {
            pin: None,
            name: "bash".into(),
            description: String::new(),
            input_schema: json!({}).into(),
            side_effect: SideEffectLevel::Mutating,
            destructive,
            provenance: String::new(),
            flags: Vec::new(),
            origin: None,
        }
    }

    #[tokio::test]
    async fn respond_reaches_the_waiter() {
        let (req, rx) = ApprovalRequest::new(
            7,
            descriptor(DestructiveBehavior::Destructive),
            json!({"command": "ls"}),
            "asks".into(),
        );
        assert_eq!(req.id, 7);
        assert!(!req.session_approval_allowed());
        req.respond(ApprovalDecision::AllowOnce);
        assert_eq!(await_decision(rx).await, ApprovalDecision::AllowOnce);
    }

    #[tokio::test]
    async fn dropping_unanswered_is_deny() {
        let (req, rx) = ApprovalRequest::new(
            1,
            descriptor(DestructiveBehavior::NonDestructive),
            json!({}),
            String::new(),
        );
        assert!(req.session_approval_allowed());
        drop(req);
        assert_eq!(await_decision(rx).await, ApprovalDecision::Deny);
    }

    #[tokio::test]
    async fn how_it_was_answered_reaches_the_waiter() {
        let (req, rx) = ApprovalRequest::new(
            3,
            descriptor(DestructiveBehavior::NonDestructive),
            json!({}),
            String::new(),
        );
        let req = req.with_origin(CallOrigin::Agent {
            reason: "saving it".into(),
        });
        assert_eq!(req.origin.as_str(), "agent");
        let by = req.answered_by();
        req.respond_by(ApprovalDecision::AllowOnce, AnsweredBy::YesFlag);
        assert_eq!(await_decision(rx).await, ApprovalDecision::AllowOnce);
        assert_eq!(by.get(), Some(&AnsweredBy::YesFlag));
    }

    #[test]
    fn responding_to_a_gone_waiter_is_harmless() {
        let (req, rx) = ApprovalRequest::new(
            2,
            descriptor(DestructiveBehavior::NonDestructive),
            json!({}),
            String::new(),
        );
        drop(rx);
        req.respond(ApprovalDecision::Deny);
    }
}
