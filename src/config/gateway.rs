//! `gateway:`: how the console serves other MCP hosts (`serve`, `--serve-http`, or `listen:`
//! here), what their tools are named, and what their calls get when nobody is at a console.

use serde::{Deserialize, Serialize};

use super::context::Context;
use super::error::ConfigErrorKind;

/// The `gateway:` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayConfig {
    /// What `serve` (no console to ask) does with a mutating call.
    pub unattended: Unattended,
    /// `listen`: where the console also serves hosts over HTTP, as `--serve-http ADDR` does
    /// (`HOST:PORT`, or a bare port on loopback). `None`: the console serves only when asked.
    pub listen: Option<String>,
    /// `naming`: the name a host sees for a server's tool or prompt.
    pub naming: Naming,
    /// `max_calls_per_host`: how many calls of one host run at once; the rest wait their turn,
    /// so one flooding host cannot starve another.
    pub max_calls_per_host: usize,
}

/// The default of `gateway.max_calls_per_host`.
pub const DEFAULT_MAX_CALLS_PER_HOST: usize = 16;

impl Default for GatewayConfig {
    fn default() -> GatewayConfig {
        GatewayConfig {
            unattended: Unattended::default(),
            listen: None,
            naming: Naming::default(),
            max_calls_per_host: DEFAULT_MAX_CALLS_PER_HOST,
        }
    }
}

/// `gateway.unattended`: with no console to ask, a host's mutating call is refused outright
/// (`refuse`, the default), or runs when a rule or a hook allows it, every other refused
/// (`rules`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unattended {
    #[default]
    Refuse,
    Rules,
}

/// `gateway.naming`: a template of `{server}` and `{tool}` (`{server}__{tool}` by default) that
/// names what a host sees. `{tool}` alone offers the servers' own names, for one server or
/// servers whose names do not collide (a later server's tool that would take a name already
/// offered is left out, never mixed up). Resource URIs follow: kept as the server gave them
/// when the template leaves out `{server}`, else offered as `aimon://<server>/<uri>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Naming {
    template: String,
}

impl Default for Naming {
    fn default() -> Naming {
        Naming {
            template: "{server}__{tool}".to_string(),
        }
    }
}

impl Naming {
    /// The template, checked: `{tool}` once, `{server}` at most once, and around them only
    /// what MCP allows in a tool name (letters, digits, `_`, `-`, `.`).
    pub fn parse(template: &str) -> Result<Naming, String> {
        let rest = template.replacen("{tool}", "", 1);
        if rest.len() == template.len() {
            return Err(format!("{template:?} has no {{tool}}"));
        }
        let rest = rest.replacen("{server}", "", 1);
        if let Some(c) = rest
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        {
            return Err(format!(
                "{template:?}: {c:?} may not be in a tool name (only {{server}}, {{tool}} once \
                 each, and letters, digits, _, - and .)"
            ));
        }
        Ok(Naming {
            template: template.to_string(),
        })
    }

    /// Whether the server is part of the names (else the servers' own names are offered).
    pub fn qualifies(&self) -> bool {
        self.template.contains("{server}")
    }

    /// The name a host sees for `server`'s `name`.
    pub fn name(&self, server: &str, name: &str) -> String {
        self.template
            .replacen("{server}", server, 1)
            .replacen("{tool}", name, 1)
    }

    /// The URI a host sees for `server`'s `uri` (a URI template the same way).
    pub fn uri(&self, server: &str, uri: &str) -> String {
        if self.qualifies() {
            format!("aimon://{server}/{uri}")
        } else {
            uri.to_string()
        }
    }

    pub fn template(&self) -> &str {
        &self.template
    }
}

/// The raw `gateway:` section.
#[derive(Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with `unattended`, `listen`, `naming` and `max_calls_per_host`"
)]
pub(super) struct RawGateway {
    #[serde(default)]
    unattended: Option<Unattended>,
    #[serde(default)]
    listen: Option<String>,
    #[serde(default)]
    naming: Option<String>,
    #[serde(default)]
    max_calls_per_host: Option<u64>,
}

/// The `gateway:` section, checked (each mistake recorded at its place).
pub(super) fn gateway(cx: &Context, raw: Option<RawGateway>) -> GatewayConfig {
    let raw = raw.unwrap_or_default();
    let defaults = GatewayConfig::default();
    let naming = match raw.naming {
        None => defaults.naming,
        Some(template) => Naming::parse(&template).unwrap_or_else(|why| {
            cx.report(cx.error(
                ConfigErrorKind::Invalid,
                "gateway.naming",
                format!("gateway.naming: {why}"),
            ));
            Naming::default()
        }),
    };
    let max_calls_per_host = match raw.max_calls_per_host {
        None => defaults.max_calls_per_host,
        Some(0) => {
            cx.report(cx.error(
                ConfigErrorKind::Invalid,
                "gateway.max_calls_per_host",
                "gateway.max_calls_per_host: must be at least 1".to_string(),
            ));
            defaults.max_calls_per_host
        }
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    let listen = raw
        .listen
        .and_then(|addr| cx.keep(cx.expand("gateway.listen", &addr)));
    GatewayConfig {
        unattended: raw.unattended.unwrap_or_default(),
        listen,
        naming,
        max_calls_per_host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naming_names_tools_and_uris() {
        let default = Naming::default();
        assert_eq!(default.name("notes", "write_note"), "notes__write_note");
        assert_eq!(
            default.uri("notes", "test://static-text"),
            "aimon://notes/test://static-text"
        );
        let flat = Naming::parse("{tool}").unwrap();
        assert_eq!(flat.name("notes", "write_note"), "write_note");
        assert_eq!(flat.uri("notes", "test://x"), "test://x");
        let dotted = Naming::parse("{server}.{tool}").unwrap();
        assert_eq!(dotted.name("a", "b"), "a.b");
    }

    #[test]
    fn naming_refuses_what_a_tool_name_cannot_hold() {
        assert!(Naming::parse("{server}").unwrap_err().contains("no {tool}"));
        assert!(Naming::parse("{server}/{tool}")
            .unwrap_err()
            .contains("'/' may not be in a tool name"));
        assert!(Naming::parse("{tool}{tool}").is_err());
        assert!(Naming::parse("{server}{server}{tool}").is_err());
    }
}
