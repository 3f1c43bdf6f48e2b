//! How headless commands answer what a server asks of the operator: there is nobody to show
//! a form to, so `elicitation/create` is declined with a reason, or, with
//! `--elicitation defaults`, accepted with the requested schema's defaults (a URL request is
//! still declined: nobody is there to open it).

use crate::runtime::ElicitationRequest;

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
