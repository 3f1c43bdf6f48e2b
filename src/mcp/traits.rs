//! `McpToolTraits::resolve`: the one place where a server's annotations and the operator's trust
//! in that server become a tool's side-effect level and destructiveness (docs/ARCHITECTURE.md §3).
//!
//! Nothing else in the program interprets annotations; everything downstream reads the resolved
//! traits on the `ToolDescriptor`.

use crate::config::AnnotationTrust;
use crate::tool::{DestructiveBehavior, SideEffectLevel, ToolDescriptor};

use super::annotations::{McpToolAnnotations, DEFAULT_DESTRUCTIVE_HINT, DEFAULT_READ_ONLY_HINT};

/// A tool's resolved traits and, in words, why they are what they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpToolTraits {
    pub side_effect: SideEffectLevel,
    pub destructive: DestructiveBehavior,
    /// Which hint, default and trust decided each axis (shown to the operator).
    pub provenance: String,
}

impl McpToolTraits {
    /// Resolves the traits of one tool, exactly per docs/ARCHITECTURE.md §3:
    ///
    /// - `Ignore`: `Mutating` + `Destructive`, as if there were no annotations.
    /// - `Trust`: `readOnlyHint` gives the level and `destructiveHint` the destructiveness, with
    ///   the MCP defaults (readOnly=false, destructive=true) for missing hints; `readOnlyHint: true`
    ///   means `ReadOnly` + `NonDestructive` whatever `destructiveHint` says.
    pub fn resolve(
        annotations: Option<&McpToolAnnotations>,
        trust: AnnotationTrust,
    ) -> McpToolTraits {
        match trust {
            AnnotationTrust::Ignore => Self::ignored(annotations),
            AnnotationTrust::Trust => Self::trusted(annotations),
        }
    }

    fn ignored(annotations: Option<&McpToolAnnotations>) -> McpToolTraits {
        let detail = match annotations {
            Some(a) if !a.has_no_hints() => "annotations present but not trusted",
            Some(_) | None => "no annotations",
        };
        McpToolTraits {
            side_effect: SideEffectLevel::Mutating,
            destructive: DestructiveBehavior::Destructive,
            provenance: format!("ignored: server trust is ignore ({detail})"),
        }
    }

    fn trusted(annotations: Option<&McpToolAnnotations>) -> McpToolTraits {
        let read_only_hint = annotations.and_then(|a| a.read_only_hint);
        let destructive_hint = annotations.and_then(|a| a.destructive_hint);
        let read_only = read_only_hint.unwrap_or(DEFAULT_READ_ONLY_HINT);
        let read_only_words = describe("readOnlyHint", read_only_hint, DEFAULT_READ_ONLY_HINT);
        let prefix = match annotations {
            Some(_) => "",
            None => "no annotations: ",
        };

        if read_only {
            // A read-only tool cannot destroy anything; a contradicting destructiveHint loses.
            let overridden = match destructive_hint {
                Some(true) => " (overrides destructiveHint=true)",
                Some(false) | None => "",
            };
            return McpToolTraits {
                side_effect: SideEffectLevel::ReadOnly,
                destructive: DestructiveBehavior::NonDestructive,
                provenance: format!("{prefix}{read_only_words}{overridden}, trusted"),
            };
        }

        let destructive = destructive_hint.unwrap_or(DEFAULT_DESTRUCTIVE_HINT);
        let destructive_words = describe(
            "destructiveHint",
            destructive_hint,
            DEFAULT_DESTRUCTIVE_HINT,
        );
        McpToolTraits {
            side_effect: SideEffectLevel::Mutating,
            destructive: if destructive {
                DestructiveBehavior::Destructive
            } else {
                DestructiveBehavior::NonDestructive
            },
            provenance: format!("{prefix}{read_only_words}, {destructive_words}, trusted"),
        }
    }
}

/// `name=value` when the hint was sent, `name missing (default value)` otherwise.
fn describe(name: &str, hint: Option<bool>, default: bool) -> String {
    match hint {
        Some(value) => format!("{name}={value}"),
        None => format!("{name} missing (default {default})"),
    }
}

/// The traits `tool` would have under `trust`, for previewing a trust change; `None` for a tool
/// that did not come from an MCP server. Goes through `resolve`, the one place trust is decided.
pub fn preview(tool: &ToolDescriptor, trust: AnnotationTrust) -> Option<McpToolTraits> {
    let origin = tool.origin.as_ref()?;
    let annotations = origin
        .annotations
        .as_ref()
        .map(|text| McpToolAnnotations::from_json(&text.to_value()));
    Some(McpToolTraits::resolve(annotations.as_ref(), trust))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHOICES: [Option<bool>; 3] = [None, Some(false), Some(true)];

    fn every_annotation_combination() -> Vec<McpToolAnnotations> {
        let mut all = Vec::new();
        for read_only_hint in CHOICES {
            for destructive_hint in CHOICES {
                for idempotent_hint in CHOICES {
                    for open_world_hint in CHOICES {
                        all.push(McpToolAnnotations {
                            read_only_hint,
                            destructive_hint,
                            idempotent_hint,
                            open_world_hint,
                            title: None,
                        });
                    }
                }
            }
        }
        all
    }

    #[test]
    fn covers_all_81_combinations() {
        assert_eq!(every_annotation_combination().len(), 81);
    }

    #[test]
    fn ignore_is_always_mutating_and_destructive() {
        for ann in every_annotation_combination() {
            let t = McpToolTraits::resolve(Some(&ann), AnnotationTrust::Ignore);
            assert_eq!(t.side_effect, SideEffectLevel::Mutating, "{ann:?}");
            assert_eq!(t.destructive, DestructiveBehavior::Destructive, "{ann:?}");
            assert!(t.provenance.starts_with("ignored: server trust is ignore"));
        }
        let t = McpToolTraits::resolve(None, AnnotationTrust::Ignore);
        assert_eq!(t.side_effect, SideEffectLevel::Mutating);
        assert_eq!(t.destructive, DestructiveBehavior::Destructive);
    }

    #[test]
    fn trust_follows_the_hints_with_mcp_defaults() {
        for ann in every_annotation_combination() {
            let t = McpToolTraits::resolve(Some(&ann), AnnotationTrust::Trust);
            let read_only = ann.read_only_hint.unwrap_or(false);
            let destructive = ann.destructive_hint.unwrap_or(true);
            if read_only {
                assert_eq!(t.side_effect, SideEffectLevel::ReadOnly, "{ann:?}");
                assert_eq!(
                    t.destructive,
                    DestructiveBehavior::NonDestructive,
                    "{ann:?}"
                );
            } else {
                assert_eq!(t.side_effect, SideEffectLevel::Mutating, "{ann:?}");
                assert_eq!(t.destructive.is_destructive(), destructive, "{ann:?}");
            }
            assert!(t.provenance.ends_with(", trusted"), "{}", t.provenance);
            // The idempotent and open-world hints never change the outcome.
            let stripped = McpToolAnnotations {
                idempotent_hint: None,
                open_world_hint: None,
                ..ann.clone()
            };
            let s = McpToolTraits::resolve(Some(&stripped), AnnotationTrust::Trust);
            assert_eq!(
                (s.side_effect, s.destructive),
                (t.side_effect, t.destructive)
            );
        }
    }

    #[test]
    fn trust_without_annotations_uses_the_defaults() {
        let t = McpToolTraits::resolve(None, AnnotationTrust::Trust);
        assert_eq!(t.side_effect, SideEffectLevel::Mutating);
        assert_eq!(t.destructive, DestructiveBehavior::Destructive);
        assert_eq!(
            t.provenance,
            "no annotations: readOnlyHint missing (default false), \
             destructiveHint missing (default true), trusted"
        );
    }

    fn provenance(ro: Option<bool>, de: Option<bool>, trust: AnnotationTrust) -> String {
        let ann = McpToolAnnotations {
            read_only_hint: ro,
            destructive_hint: de,
            ..Default::default()
        };
        McpToolTraits::resolve(Some(&ann), trust).provenance
    }

    #[test]
    fn provenance_names_the_deciding_hint_or_default() {
        use AnnotationTrust::{Ignore, Trust};
        assert_eq!(
            provenance(Some(true), None, Trust),
            "readOnlyHint=true, trusted"
        );
        assert_eq!(
            provenance(Some(true), Some(false), Trust),
            "readOnlyHint=true, trusted"
        );
        assert_eq!(
            provenance(Some(true), Some(true), Trust),
            "readOnlyHint=true (overrides destructiveHint=true), trusted"
        );
        assert_eq!(
            provenance(Some(false), Some(false), Trust),
            "readOnlyHint=false, destructiveHint=false, trusted"
        );
        assert_eq!(
            provenance(None, None, Trust),
            "readOnlyHint missing (default false), destructiveHint missing (default true), trusted"
        );
        assert_eq!(
            provenance(None, Some(false), Trust),
            "readOnlyHint missing (default false), destructiveHint=false, trusted"
        );
        assert_eq!(
            provenance(Some(true), None, Ignore),
            "ignored: server trust is ignore (annotations present but not trusted)"
        );
        assert_eq!(
            McpToolTraits::resolve(None, Ignore).provenance,
            "ignored: server trust is ignore (no annotations)"
        );
    }

    #[test]
    fn contradiction_resolves_lenient_under_trust() {
        let ann = McpToolAnnotations {
            read_only_hint: Some(true),
            destructive_hint: Some(true),
            ..Default::default()
        };
        let t = McpToolTraits::resolve(Some(&ann), AnnotationTrust::Trust);
        assert_eq!(t.side_effect, SideEffectLevel::ReadOnly);
        assert_eq!(t.destructive, DestructiveBehavior::NonDestructive);
    }
}
