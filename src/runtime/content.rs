//! Resources and prompts of the ready servers, for the drivers (the console, the headless
//! `resources`, `read`, `prompts` and `prompt`): the runtime asks the manager for a server's
//! `McpResourceClient` / `McpPromptClient` and says plainly when a server cannot answer
//! (not configured, not ready, or it did not declare the capability).
//!
//! Separate from `lifecycle.rs` because none of this touches the registry, the gate or the
//! call path: resources and prompts are read, never called.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::lifecycle::AgentRuntime;
use crate::mcp::capabilities::Capabilities;
use crate::mcp::client::McpError;
use crate::mcp::events::{ServerReport, ServerStatus};
use crate::mcp::prompts::{McpPromptClient, PromptInfo, PromptMessages};
use crate::mcp::resources::{
    Completion, CompletionTarget, McpResourceClient, ResourceContent, ResourceInfo, TemplateInfo,
};
use crate::mcp::skills::{LoadedSkill, McpSkillClient, SkillError, SkillInfo, SKILLS_EXTENSION_ID};

/// Why a resource or prompt request could not be answered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ContentError {
    #[error("no server named {0} is configured")]
    UnknownServer(String),
    #[error("server {0} is not ready")]
    NotReady(String),
    #[error("server {server} does not offer {what} (not in its capabilities)")]
    NotOffered { server: String, what: &'static str },
    #[error("{server}: {source}")]
    Mcp {
        server: String,
        #[source]
        source: McpError,
    },
    /// A skill that could not be loaded (not listed, or its `SKILL.md` refused).
    #[error("{server}: {source}")]
    Skill {
        server: String,
        #[source]
        source: SkillError,
    },
}

/// What a capability check is for.
#[derive(Clone, Copy)]
enum Offer {
    Resources,
    Prompts,
    Completions,
    Skills,
}

impl Offer {
    fn what(self) -> &'static str {
        match self {
            Offer::Resources => "resources",
            Offer::Prompts => "prompts",
            Offer::Completions => "completions",
            Offer::Skills => "skills (the io.modelcontextprotocol/skills extension)",
        }
    }

    fn offered(self, caps: &Capabilities) -> bool {
        match self {
            Offer::Resources => caps.resources.is_some(),
            Offer::Prompts => caps.prompts.is_some(),
            Offer::Completions => caps.completions,
            Offer::Skills => caps.extensions.iter().any(|e| e == SKILLS_EXTENSION_ID),
        }
    }
}

/// A ready server's resources and templates, listed together.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ResourceListing {
    pub resources: Vec<ResourceInfo>,
    pub templates: Vec<TemplateInfo>,
    /// Its skills, when it declared the skills extension (from the listing: no file read).
    pub skills: Vec<SkillInfo>,
}

impl AgentRuntime {
    /// The ready servers whose capabilities include resources, in config order.
    pub fn resource_servers(&self) -> Vec<String> {
        self.offering(Offer::Resources)
    }

    /// The ready servers that declared the skills extension, in config order.
    pub fn skill_servers(&self) -> Vec<String> {
        self.offering(Offer::Skills)
    }

    /// The ready servers whose capabilities include prompts, in config order.
    pub fn prompt_servers(&self) -> Vec<String> {
        self.offering(Offer::Prompts)
    }

    fn offering(&self, offer: Offer) -> Vec<String> {
        self.reports()
            .into_iter()
            .filter(|r| r.status == ServerStatus::Ready)
            .filter(|r| r.capabilities.as_ref().is_some_and(|c| offer.offered(c)))
            .map(|r| r.name)
            .collect()
    }

    /// The report of a ready server that declared `offer`.
    fn ready_offering(&self, server: &str, offer: Offer) -> Result<ServerReport, ContentError> {
        let report = self
            .reports()
            .into_iter()
            .find(|r| r.name == server)
            .ok_or_else(|| ContentError::UnknownServer(server.to_string()))?;
        if report.status != ServerStatus::Ready {
            return Err(ContentError::NotReady(server.to_string()));
        }
        if !report
            .capabilities
            .as_ref()
            .is_some_and(|c| offer.offered(c))
        {
            return Err(ContentError::NotOffered {
                server: server.to_string(),
                what: offer.what(),
            });
        }
        Ok(report)
    }

    fn resource_client(
        &self,
        server: &str,
        offer: Offer,
    ) -> Result<std::sync::Arc<dyn McpResourceClient>, ContentError> {
        self.ready_offering(server, offer)?;
        self.manager
            .resource_client(server)
            .ok_or_else(|| ContentError::NotReady(server.to_string()))
    }

    fn prompt_client(
        &self,
        server: &str,
    ) -> Result<std::sync::Arc<dyn McpPromptClient>, ContentError> {
        self.ready_offering(server, Offer::Prompts)?;
        self.manager
            .prompt_client(server)
            .ok_or_else(|| ContentError::NotReady(server.to_string()))
    }

    /// Every resource and resource template of `server` (all pages of each).
    pub async fn list_resources(&self, server: &str) -> Result<ResourceListing, ContentError> {
        let client = self.resource_client(server, Offer::Resources)?;
        let mcp = |source| ContentError::Mcp {
            server: server.to_string(),
            source,
        };
        let resources = client.list_resources().await.map_err(mcp)?;
        // A server may keep no templates: method-not-found there is an empty list.
        let templates = match client.list_resource_templates().await {
            Ok(templates) => templates,
            Err(McpError::Server { code: -32601, .. }) => Vec::new(),
            Err(e) => return Err(mcp(e)),
        };
        // Skills ride on resources: a skills listing that fails loses only the skills (said in
        // the log; `skills` says it to the operator), not the resources.
        let skills = match self.skill_client(server) {
            Ok(client) => client.skills().await.unwrap_or_else(|e| {
                tracing::warn!(server, error = %e, "skills/list failed");
                Vec::new()
            }),
            Err(_) => Vec::new(),
        };
        Ok(ResourceListing {
            resources,
            templates,
            skills,
        })
    }

    /// Reads one resource of `server`; `cancel` ends the read (the server is told).
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<ResourceContent>, ContentError> {
        let client = self.resource_client(server, Offer::Resources)?;
        client
            .read_resource(uri, cancel)
            .await
            .map_err(|source| ContentError::Mcp {
                server: server.to_string(),
                source,
            })
    }

    /// Subscribes to (`on`) or unsubscribes from the updates of one resource of `server`.
    pub async fn set_subscription(
        &self,
        server: &str,
        uri: &str,
        on: bool,
    ) -> Result<(), ContentError> {
        let client = self.resource_client(server, Offer::Resources)?;
        let outcome = if on {
            client.subscribe(uri).await
        } else {
            client.unsubscribe(uri).await
        };
        outcome.map_err(|source| ContentError::Mcp {
            server: server.to_string(),
            source,
        })
    }

    /// The resources of `server` subscribed to on its current session.
    pub async fn subscriptions(&self, server: &str) -> Vec<String> {
        match self.manager.resource_client(server) {
            Some(client) => client.subscribed().await,
            None => Vec::new(),
        }
    }

    /// Suggestions for `argument` of a prompt or template of `server` (`completion/complete`).
    pub async fn complete(
        &self,
        server: &str,
        target: &CompletionTarget,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Completion, ContentError> {
        let client = self.resource_client(server, Offer::Completions)?;
        client
            .complete(target, argument, value, context)
            .await
            .map_err(|source| ContentError::Mcp {
                server: server.to_string(),
                source,
            })
    }

    /// Every prompt of `server` (all pages).
    pub async fn list_prompts(&self, server: &str) -> Result<Vec<PromptInfo>, ContentError> {
        let client = self.prompt_client(server)?;
        client
            .list_prompts()
            .await
            .map_err(|source| ContentError::Mcp {
                server: server.to_string(),
                source,
            })
    }

    /// The messages of prompt `name` of `server` with `arguments` (string values).
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
        cancel: CancellationToken,
    ) -> Result<PromptMessages, ContentError> {
        let client = self.prompt_client(server)?;
        let arguments = arguments
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        client
            .get_prompt(name, arguments, cancel)
            .await
            .map_err(|source| ContentError::Mcp {
                server: server.to_string(),
                source,
            })
    }

    fn skill_client(&self, server: &str) -> Result<Arc<dyn McpSkillClient>, ContentError> {
        self.ready_offering(server, Offer::Skills)?;
        self.manager
            .skill_client(server)
            .ok_or_else(|| ContentError::NotReady(server.to_string()))
    }

    /// Every skill `server` lists (nothing of any skill is read).
    pub async fn list_skills(&self, server: &str) -> Result<Vec<SkillInfo>, ContentError> {
        let client = self.skill_client(server)?;
        client.skills().await.map_err(|source| ContentError::Mcp {
            server: server.to_string(),
            source,
        })
    }

    /// [`load_skill`](Self::load_skill), as a read of its `SKILL.md` (for the resource viewer).
    pub async fn read_skill_file(
        &self,
        server: &str,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<Vec<ResourceContent>, ContentError> {
        let skill = self.load_skill(server, uri, cancel).await?;
        Ok(vec![ResourceContent::Text {
            uri: uri.to_string(),
            mime_type: Some("text/markdown".into()),
            text: skill.text,
        }])
    }

    /// Loads the skill of `server` whose `SKILL.md` is `uri`: read and verified against the
    /// listing; refused when it does not match.
    pub async fn load_skill(
        &self,
        server: &str,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<LoadedSkill, ContentError> {
        let client = self.skill_client(server)?;
        client
            .load_skill(uri, cancel)
            .await
            .map_err(|source| ContentError::Skill {
                server: server.to_string(),
                source,
            })
    }
}
