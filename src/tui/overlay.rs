//! The overlay stack: every view drawn over the panes (the quit question, approvals, servers'
//! questions and sampling requests, the dialog of the moment, the Conversation's pickers) and
//! the one place that decides which of them is on top. The view on top is the one drawn, the
//! one that gets the keys and the one whose keys the footer names; keys (`keys.rs`), drawing
//! (`view.rs`) and the footer (`footer.rs`) all ask [`Overlays::top`], so they cannot
//! disagree. The newest view to open goes on top (an approval arriving over an open picker
//! covers it; answering it shows the picker again, as it was); the quit question is always
//! on top. A kind already open keeps its place when more of it arrive: a second approval
//! queues behind the first, where the operator is already looking.

use std::cell::Cell;
use std::collections::VecDeque;

use super::guard::KeyGuard;
use super::modals::form::FormEditor;
use super::modals::sampling::Sampling;
use super::modals::Modal;
use crate::approval::ApprovalRequest;
use crate::runtime::ElicitationRequest;

/// A kind of view over the panes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The Conversation's profile picker (Ctrl-P).
    ProfilePicker,
    /// The Conversation's `@` resource or `/` prompt picker.
    ContentPicker,
    /// The dialog the operator opened ([`Modal`]).
    Modal,
    /// A server's sampling request, waiting for the operator.
    Sampling,
    /// A server's question (a form or a URL), waiting for the operator.
    Elicitation,
    /// A tool call waiting for the operator's approval.
    Approval,
    /// "Quit?": over everything else, answered first.
    Quit,
}

impl Layer {
    /// Every kind, least urgent first: the order several kinds take when they open at once.
    pub const ALL: [Layer; 7] = [
        Layer::ProfilePicker,
        Layer::ContentPicker,
        Layer::Modal,
        Layer::Sampling,
        Layer::Elicitation,
        Layer::Approval,
        Layer::Quit,
    ];
}

/// The views over the panes and their order.
#[derive(Default)]
pub struct Overlays {
    /// The kinds open, oldest first, as of the last [`Overlays::sync`].
    order: Vec<Layer>,
    /// The quit question is open.
    pub quit_asked: bool,
    /// Calls waiting for approval, oldest first; the first is on screen.
    pub approvals: VecDeque<ApprovalRequest>,
    /// Lines scrolled in the approval's arguments.
    pub approval_scroll: u16,
    /// `A` on a destructive tool: the approval asks once more before the rule is written.
    pub approval_confirm: bool,
    /// `d` on a rule in the `L` list: the index it asked about; `d` again removes it.
    pub rule_removal: Option<usize>,
    /// Servers' questions waiting for the operator, oldest first.
    pub elicitations: VecDeque<ElicitationRequest>,
    /// The form of the first elicitation, when it is a form.
    pub elicitation_form: Option<FormEditor>,
    /// Servers' sampling requests waiting for the operator, oldest first.
    pub samplings: VecDeque<Sampling>,
    /// The dialog the operator opened, if any.
    pub modal: Option<Modal>,
    /// How far the scrolling view drawn last (approval, help, a call's result) can scroll:
    /// set while drawing, where the wrapped height is known; the scroll keys stop there.
    pub scroll_limit: Cell<u16>,
    /// Keeps typing meant for something else from answering a question.
    pub guard: KeyGuard,
}

impl Overlays {
    /// Brings the order in line with what is open (`open`): closed kinds leave, newly opened
    /// ones go on top (several at once in [`Layer::ALL`] order), the quit question last.
    /// Called once after every handler (key, paste, app event).
    pub fn sync(&mut self, open: impl Fn(Layer) -> bool) {
        self.order.retain(|layer| open(*layer));
        for layer in Layer::ALL {
            if open(layer) && !self.order.contains(&layer) {
                self.order.push(layer);
            }
        }
        if let Some(at) = self.order.iter().position(|l| *l == Layer::Quit) {
            let quit = self.order.remove(at);
            self.order.push(quit);
        }
    }

    /// The view on top, if any. A kind opened since the last sync (a test that sets state
    /// directly) counts as newest, so the answer never names a closed view.
    pub fn top(&self, open: impl Fn(Layer) -> bool) -> Option<Layer> {
        if open(Layer::Quit) {
            return Some(Layer::Quit);
        }
        Layer::ALL
            .iter()
            .rev()
            .copied()
            .find(|layer| open(*layer) && !self.order.contains(layer))
            .or_else(|| self.order.iter().rev().copied().find(|layer| open(*layer)))
    }
}

#[cfg(test)]
mod tests {
    use super::{Layer, Overlays};

    fn top_after(steps: &[&[Layer]]) -> Option<Layer> {
        let mut stack = Overlays::default();
        let mut last: &[Layer] = &[];
        for open in steps {
            stack.sync(|l| open.contains(&l));
            last = open;
        }
        stack.top(|l| last.contains(&l))
    }

    #[test]
    fn the_newest_view_is_on_top_and_closing_it_shows_the_one_below() {
        use Layer::*;
        assert_eq!(
            top_after(&[&[ContentPicker], &[ContentPicker, Elicitation]]),
            Some(Elicitation)
        );
        assert_eq!(
            top_after(&[&[Elicitation], &[Elicitation, ContentPicker]]),
            Some(ContentPicker)
        );
        assert_eq!(
            top_after(&[
                &[ContentPicker],
                &[ContentPicker, Elicitation],
                &[ContentPicker]
            ]),
            Some(ContentPicker)
        );
        // Opened together: the more urgent on top.
        assert_eq!(top_after(&[&[Modal, Approval]]), Some(Approval));
        // The quit question is always on top.
        assert_eq!(top_after(&[&[Quit], &[Quit, Approval]]), Some(Quit));
        assert_eq!(top_after(&[&[]]), None);
    }
}
