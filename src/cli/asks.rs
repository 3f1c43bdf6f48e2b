//! How headless commands answer what a server asks of the operator: there is nobody to show
//! a form to, so `elicitation/create` is declined with a reason, or, with
//! `--elicitation defaults`, accepted with the requested schema's defaults (a URL request is
//! still declined: nobody is there to open it). A server's `sampling/createMessage` (declared
//! only when the config has an `agent:`) is always rejected: a model may run on a server's
//! behalf only with an operator to approve the request and its answer.

use crate::runtime::{ElicitationRequest, SamplingRequest};

/// The answer to a server's `elicitation/create` without an operator.
#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ElicitationChoice {
    /// Decline, saying there is no operator to ask.
    #[default]
    Decline,
    /// Accept a form with the schema's defaults.
    Defaults,
}

/// `--elicitation`, for the commands that start servers and run something on them.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct AskArgs {
    /// How to answer a server's elicitation/create: decline it (default), or accept a form
    /// with the schema's defaults.
    #[arg(long, value_enum, default_value_t, value_name = "decline|defaults")]
    pub elicitation: ElicitationChoice,
}

impl AskArgs {
    /// Answers `request` for headless `command`.
    pub fn answer(self, request: &ElicitationRequest, command: &str) {
        match self.elicitation {
            ElicitationChoice::Decline => request.decline(format!(
                "aimon-console {command} has no operator to ask (--elicitation defaults accepts with the schema's defaults)"
            )),
            ElicitationChoice::Defaults => request.accept_defaults(),
        }
    }
}

/// Rejects a server's sampling request for headless `command`: nobody is there to approve it.
pub fn reject_sampling(request: &SamplingRequest, command: &str) {
    request.reject(format!(
        "aimon-console {command} has no operator to approve a sampling request (the console answers them)"
    ));
}
