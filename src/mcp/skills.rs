//! Skills (the `io.modelcontextprotocol/skills` extension, SEP-2640): a server's skills listed
//! (`skills/list`, every page), and one loaded when the operator asks for it: its `SKILL.md` read
//! (`resources/read`) and used only when its bytes have the listed size and digest and its YAML
//! front matter matches the listed one, field by field. Nothing of a skill is read before it is
//! loaded (not at connection, not at listing), and its other files are named, not fetched.
//!
//! Separate from `resources.rs`: a skill is a listing of its own with its own rules, read
//! through the same bounded requests.

use rmcp::model::{ClientRequest, ListSkillsRequest, ServerResult, Skill, SkillResources};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::client::{DefaultMcpClient, McpClient, McpError};
use super::resources::{McpResourceClient, ResourceContent};

pub use rmcp::model::SKILLS_EXTENSION_ID;

/// Most bytes of a `SKILL.md` read (the listing says its size; this bounds a lying one).
const MAX_SKILL_BYTES: u64 = 1024 * 1024;

/// One skill a server lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillInfo {
    pub server: String,
    /// The URI of its `SKILL.md`.
    pub uri: String,
    pub name: String,
    pub description: String,
    /// Its files with their sizes (the `SKILL.md` among them), or `None` when the server
    /// lists them as dynamic (no digests to verify against).
    pub files: Option<Vec<SkillFile>>,
}

/// One file of a skill, as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillFile {
    pub uri: String,
    pub size: u64,
}

/// A skill loaded: its `SKILL.md`, verified.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadedSkill {
    #[serde(flatten)]
    pub info: SkillInfo,
    /// The whole `SKILL.md`, front matter included.
    pub text: String,
    /// What was checked, in words (`size and sha256 digest as listed, front matter as listed`).
    pub verified: String,
}

/// Why a skill was not loaded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SkillError {
    #[error("{0}")]
    Mcp(#[from] McpError),
    #[error("no skill with the SKILL.md {0} is listed")]
    NotListed(String),
    /// The `SKILL.md` read does not match its listing: refused, nothing of it used.
    #[error("refused: {0}")]
    Refused(String),
}

impl SkillInfo {
    fn from_skill(server: &str, skill: &Skill) -> SkillInfo {
        let files = match &skill.resources {
            SkillResources::Files(files) => Some(
                files
                    .iter()
                    .map(|f| SkillFile {
                        uri: f.uri.clone(),
                        size: f.size,
                    })
                    .collect(),
            ),
            _ => None,
        };
        SkillInfo {
            server: server.to_string(),
            uri: skill.uri.clone(),
            name: skill.frontmatter.name.clone(),
            description: skill.frontmatter.description.clone(),
            files,
        }
    }
}

/// The skills of one server, behind the same deadlines as its tool calls (an interface of its
/// own, as resources and prompts have: `McpClient` does not grow).
#[async_trait::async_trait]
pub trait McpSkillClient: Send + Sync {
    /// Every skill the server lists, as shown.
    async fn skills(&self) -> Result<Vec<SkillInfo>, McpError>;
    /// Loads the skill whose `SKILL.md` is `uri`, verified against the listing.
    async fn load_skill(
        &self,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<LoadedSkill, SkillError>;
}

#[async_trait::async_trait]
impl McpSkillClient for DefaultMcpClient {
    async fn skills(&self) -> Result<Vec<SkillInfo>, McpError> {
        let server = McpClient::server(self).to_string();
        Ok(self
            .list_skills()
            .await?
            .iter()
            .map(|skill| SkillInfo::from_skill(&server, skill))
            .collect())
    }

    /// Lists the skills again (the listing is what the file is checked against), reads the
    /// `SKILL.md` and verifies it.
    async fn load_skill(
        &self,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<LoadedSkill, SkillError> {
        let skills = self.list_skills().await?;
        let skill = skills
            .iter()
            .find(|s| s.uri == uri)
            .ok_or_else(|| SkillError::NotListed(uri.to_string()))?;
        let contents = McpResourceClient::read_resource(self, uri, cancel).await?;
        let bytes = contents
            .into_iter()
            .find(|part| part.uri() == uri)
            .map(|part| match part {
                ResourceContent::Text { text, .. } => text.into_bytes(),
                ResourceContent::Blob { bytes, .. } => bytes,
            })
            .ok_or_else(|| SkillError::Refused(format!("reading {uri} gave no content for it")))?;
        let verified = verify(skill, &bytes).map_err(SkillError::Refused)?;
        let server = McpClient::server(self).to_string();
        Ok(LoadedSkill {
            info: SkillInfo::from_skill(&server, skill),
            text: String::from_utf8_lossy(&bytes).into_owned(),
            verified,
        })
    }
}

impl DefaultMcpClient {
    /// Every skill the server lists (all pages).
    async fn list_skills(&self) -> Result<Vec<Skill>, McpError> {
        self.all_pages(
            "skills/list",
            |cursor| {
                ClientRequest::ListSkillsRequest(ListSkillsRequest {
                    method: Default::default(),
                    params: super::resources::paged(cursor),
                    extensions: Default::default(),
                })
            },
            |answer| match answer {
                ServerResult::ListSkillsResult(page) => Some((page.skills, page.next_cursor)),
                _ => None,
            },
        )
        .await
    }
}

/// Checks a `SKILL.md` read against its listing: the size and digest its entry gives (when the
/// files are listed, not dynamic), then its front matter against the listed one, every field.
/// What was checked, in words, or why it is refused.
pub fn verify(skill: &Skill, bytes: &[u8]) -> Result<String, String> {
    if bytes.len() as u64 > MAX_SKILL_BYTES {
        return Err(format!(
            "{} is {} bytes, over the {MAX_SKILL_BYTES}-byte limit for a SKILL.md",
            skill.uri,
            bytes.len()
        ));
    }
    let mut checked = Vec::new();
    if let SkillResources::Files(files) = &skill.resources {
        let entry = files
            .iter()
            .find(|f| f.uri == skill.uri)
            .ok_or_else(|| format!("the listing names no size or digest for {}", skill.uri))?;
        entry.verify(bytes).map_err(|e| e.to_string())?;
        checked.push("size and sha256 digest as listed");
    }
    let text =
        std::str::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", skill.uri))?;
    let found = front_matter(text)?;
    let listed = match serde_json::to_value(&skill.frontmatter) {
        Ok(Value::Object(listed)) => listed,
        _ => return Err("the listed front matter is not a mapping".into()),
    };
    if let Some(key) = differing_field(&listed, &found) {
        return Err(format!(
            "the front matter of {} does not match its listing: `{key}` differs",
            skill.uri
        ));
    }
    checked.push("front matter as listed");
    Ok(checked.join(", "))
}

/// The first field (by name) whose value differs between the two front matters, or that only
/// one of them has.
fn differing_field(a: &Map<String, Value>, b: &Map<String, Value>) -> Option<String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .find(|key| a.get(*key) != b.get(*key))
        .map(|key| crate::text::sanitize_line(key, 64))
}

/// The YAML front matter of a `SKILL.md` (between a first line `---` and the next line `---`)
/// as a JSON mapping. The fuzz target `skill_front_matter` feeds it arbitrary text.
pub fn front_matter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("the SKILL.md does not start with a `---` front matter line".into());
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err("the SKILL.md front matter has no closing `---` line".into());
    }
    let value: Value = serde_yaml::from_str(&yaml)
        .map_err(|e| format!("the SKILL.md front matter is not YAML: {e}"))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err("the SKILL.md front matter is not a mapping".into()),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{SkillFrontmatter, SkillResource};

    use super::*;

    const SKILL: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n";
    const URI: &str = "skill://pdf-processing/SKILL.md";

    fn listed(body: &str) -> Skill {
        Skill::new(
            URI,
            SkillFrontmatter::new(
                "pdf-processing",
                "Extract, fill, and assemble PDF documents",
            ),
            SkillResources::Files(vec![SkillResource::from_bytes(URI, body.as_bytes())]),
        )
    }

    #[test]
    fn a_skill_as_listed_is_verified() {
        assert_eq!(
            verify(&listed(SKILL), SKILL.as_bytes()),
            Ok("size and sha256 digest as listed, front matter as listed".into())
        );
    }

    #[test]
    fn a_changed_byte_a_changed_size_or_a_changed_front_matter_is_refused() {
        let skill = listed(SKILL);
        let evil = SKILL.replace("Skill body.", "Evil body!!");
        let why = verify(&skill, evil.as_bytes()).unwrap_err();
        assert!(why.contains("digest"), "{why}");
        let longer = format!("{SKILL}more\n");
        let why = verify(&skill, longer.as_bytes()).unwrap_err();
        assert!(why.contains("bytes"), "{why}");
        // Digest and size listed for the changed file, its front matter not.
        let changed = SKILL.replace(
            "description: Extract, fill, and assemble PDF documents",
            "description: Exfiltrate credentials",
        );
        let mut skill = listed(&changed);
        skill.frontmatter = listed(SKILL).frontmatter;
        let why = verify(&skill, changed.as_bytes()).unwrap_err();
        assert!(why.contains("`description` differs"), "{why}");
    }

    #[test]
    fn front_matter_is_the_yaml_between_the_first_two_rules() {
        let found = front_matter(SKILL).unwrap();
        assert_eq!(found["name"], "pdf-processing");
        assert!(front_matter("no front matter").is_err());
        assert!(front_matter("---\nname: x\n").is_err());
        assert!(front_matter("---\n- a list\n---\n").is_err());
        assert!(front_matter("---\n: :\n  - [\n---\n").is_err());
        assert_eq!(
            front_matter("---\r\nname: x\r\n---\r\n").unwrap()["name"],
            "x"
        );
    }
}
