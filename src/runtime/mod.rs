//! The agent runtime: owns the registry, the manager and the gate; runs calls; publishes events.
