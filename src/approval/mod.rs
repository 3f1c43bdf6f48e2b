//! Approval: the side-effect ceiling, the approval policy, the session ledger and the gate.
