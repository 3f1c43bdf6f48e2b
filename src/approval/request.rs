//! `ApprovalRequest`: one question to the operator, answered through a oneshot reply.
//!
//! Separate from the gate because it travels: the runtime creates it, the TUI (or a headless
//! driver) answers it, and the executor waits on the other end.

use serde_json::Value;
use tokio::sync::oneshot;

use crate::tool::ToolDescriptor;

use super::ApprovalDecision;

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
    reply: oneshot::Sender<ApprovalDecision>,
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
                reply,
            },
            receiver,
        )
    }

    /// Whether `AllowForSession` may be offered (never for destructive tools).
    pub fn session_approval_allowed(&self) -> bool {
        !self.tool.destructive.is_destructive()
    }

    /// Sends the answer. If the waiting side is gone the answer has no one to reach, which is fine.
    pub fn respond(self, decision: ApprovalDecision) {
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
            name: "bash".into(),
            description: String::new(),
            input_schema: json!({}),
            side_effect: SideEffectLevel::Mutating,
            destructive,
            provenance: String::new(),
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
