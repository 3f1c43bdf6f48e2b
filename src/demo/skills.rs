//! `--skills`: the demo server serves one skill (the skills extension, SEP-2640), `note-taking`:
//! its `SKILL.md` and a style guide beside it, listed with their sizes and digests and read
//! through `resources/read`. `--tampered-skill` serves a `SKILL.md` whose bytes are not the
//! ones listed, for the client's verification.

use rmcp::model::{
    ListSkillsResult, ReadResourceResult, ResourceContents, Skill, SkillFrontmatter, SkillResource,
    SkillResources,
};

/// The skill's `SKILL.md`.
pub const SKILL_URI: &str = "skill://note-taking/SKILL.md";
/// The file beside it.
const STYLE_URI: &str = "skill://note-taking/reference/STYLE.md";
const NAME: &str = "note-taking";
const DESCRIPTION: &str = "Write short notes with the demo server's write_note";
const SKILL_MD: &str = "---\nname: note-taking\ndescription: Write short notes with the demo server's write_note\n---\n\n# Note taking\n\nCall write_note with a short title and a body of a few lines; see reference/STYLE.md.\n";
const STYLE_MD: &str = "# Style\n\nTitles in lower case, bodies in full sentences.\n";

/// What `--skills` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DemoSkills {
    #[default]
    None,
    /// The skill as listed.
    Served,
    /// A `SKILL.md` whose bytes differ from the listed digest.
    Tampered,
}

impl DemoSkills {
    pub fn any(self) -> bool {
        self != DemoSkills::None
    }

    /// `skills/list`: the one skill, its files with sizes and digests.
    pub(super) fn listing(self) -> ListSkillsResult {
        let skill = Skill::new(
            SKILL_URI,
            SkillFrontmatter::new(NAME, DESCRIPTION),
            SkillResources::Files(vec![
                SkillResource::from_bytes(SKILL_URI, SKILL_MD.as_bytes()),
                SkillResource::from_bytes(STYLE_URI, STYLE_MD.as_bytes()),
            ]),
        );
        ListSkillsResult::with_all_items(if self.any() { vec![skill] } else { vec![] })
    }

    /// `resources/read` of one of the skill's files; `None` for any other URI.
    pub(super) fn read(self, uri: &str) -> Option<ReadResourceResult> {
        let text = match (self, uri) {
            (DemoSkills::None, _) => return None,
            (DemoSkills::Tampered, SKILL_URI) => SKILL_MD.replace("a short title", "a brief title"),
            (_, SKILL_URI) => SKILL_MD.to_string(),
            (_, STYLE_URI) => STYLE_MD.to_string(),
            _ => return None,
        };
        Some(ReadResourceResult::new(vec![ResourceContents::text(
            text, uri,
        )
        .with_mime_type("text/markdown")]))
    }
}
