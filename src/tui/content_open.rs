//! What Enter (and `s`) does on the Resources and Prompts panes: a resource is read into the
//! viewer (`s` subscribes to it), a template or a prompt with arguments opens its form (with
//! `completion/complete` where the server declared it), a prompt without arguments shows its
//! messages.
//!
//! Separate from `content.rs`, which keeps the rows following the servers; this is the
//! operator's side of the same panes.

use std::collections::BTreeMap;

use super::app::App;

use super::listing::{PromptRow, RowKind};
use super::messages::{Effect, Level};
use super::modals::form::{FormEditor, FormPurpose};
use super::modals::viewer::ResourceView;
use super::modals::Modal;
use crate::runtime::FormField;

impl App {
    /// `s` on a resource: subscribe to its updates, or stop.
    pub(super) fn toggle_subscription(&mut self) -> Vec<Effect> {
        let Some(row) = self.panes.resources.selected_row() else {
            return Vec::new();
        };
        match row.kind {
            RowKind::Template => {
                self.notify(
                    Level::Warn,
                    "a template is not a resource: Enter reads one, then s subscribes to it",
                );
                return Vec::new();
            }
            RowKind::Skill => {
                self.notify(Level::Warn, "a skill is loaded (Enter), not subscribed to");
                return Vec::new();
            }
            RowKind::Resource => {}
        }
        vec![Effect::Subscribe {
            server: row.server.clone(),
            uri: row.uri.clone(),
            on: !row.subscribed,
        }]
    }

    /// Enter on the Resources pane: a resource is read in the viewer; a template opens its
    /// argument form; a skill is loaded into the viewer (its `SKILL.md`, or why it was refused).
    pub(super) fn open_resource(&mut self) -> Vec<Effect> {
        let Some(row) = self.panes.resources.selected_row().cloned() else {
            return Vec::new();
        };
        match row.kind {
            RowKind::Resource => {
                if let Some(r) = self
                    .panes
                    .resources
                    .rows
                    .iter_mut()
                    .find(|r| r.server == row.server && r.uri == row.uri)
                {
                    r.updated = false;
                }
                self.overlays.modal = Some(Modal::Resource(ResourceView::new(
                    &row.server,
                    &row.uri,
                    &row.name,
                    row.subscribed,
                )));
                vec![Effect::ReadResource {
                    server: row.server,
                    uri: row.uri,
                }]
            }
            RowKind::Skill => {
                self.overlays.modal = Some(Modal::Resource(ResourceView::new(
                    &row.server,
                    &row.uri,
                    &format!("skill {}", row.name),
                    false,
                )));
                vec![Effect::LoadSkill {
                    server: row.server,
                    uri: row.uri,
                }]
            }
            RowKind::Template => {
                let fields: Vec<FormField> = crate::runtime::template_variables(&row.uri)
                    .iter()
                    .map(|name| FormField::text(name, true, None))
                    .collect();
                let completable = self.completable(&row.server);
                let mut form = FormEditor::new(
                    format!("{} · read {}", row.server, row.name),
                    vec![row.shown_uri.clone()],
                    fields,
                    FormPurpose::Template {
                        server: row.server,
                        template: row.uri,
                    },
                    completable,
                );
                let effects = form.completion_request();
                self.overlays.modal = Some(Modal::Form(Box::new(form)));
                effects
            }
        }
    }

    /// Enter on the Prompts pane: its argument form, or its messages when it takes none.
    pub(super) fn open_prompt(&mut self) -> Vec<Effect> {
        let Some(row) = self.panes.prompts.selected_row().cloned() else {
            return Vec::new();
        };
        if row.arguments.is_empty() {
            return self.get_prompt(row.server, row.name, &row.shown_name, BTreeMap::new());
        }
        self.prompt_form(row, false)
    }

    /// Opens the argument form of prompt `row`: its messages are shown, or (from the
    /// Conversation's `/`) added to the conversation.
    pub(super) fn prompt_form(&mut self, row: PromptRow, into_conversation: bool) -> Vec<Effect> {
        let fields: Vec<FormField> = row
            .raw_args
            .iter()
            .zip(&row.arguments)
            .map(|(raw, shown)| {
                let mut field = FormField::text(raw, shown.required, shown.description.clone());
                field.title = shown.title.clone();
                field
            })
            .collect();
        let completable = self.completable(&row.server);
        let mut form = FormEditor::new(
            format!("{} · prompt {}", row.server, row.shown_name),
            if row.description.is_empty() {
                Vec::new()
            } else {
                vec![row.description.clone()]
            },
            fields,
            FormPurpose::Prompt {
                server: row.server,
                name: row.name,
                into_conversation,
            },
            completable,
        );
        let effects = form.completion_request();
        self.overlays.modal = Some(Modal::Form(Box::new(form)));
        effects
    }

    /// Opens the messages view of prompt `name` and asks for them.
    pub(super) fn get_prompt(
        &mut self,
        server: String,
        name: String,
        shown: &str,
        arguments: BTreeMap<String, String>,
    ) -> Vec<Effect> {
        self.overlays.modal = Some(Modal::Prompt(super::modals::viewer::PromptView::new(
            &server, &name, shown,
        )));
        vec![Effect::GetPrompt {
            server,
            name,
            arguments,
        }]
    }

    /// Whether `server` declared completions.
    fn completable(&self, server: &str) -> bool {
        self.servers
            .iter()
            .find(|s| s.name == server)
            .and_then(|s| s.report.as_ref())
            .and_then(|r| r.capabilities.as_ref())
            .is_some_and(|c| c.completions)
    }
}
