//! Tests of `import`: names, detection, and one sample of each format read into entries.

use std::path::Path;

use super::*;

fn yaml(text: &str) -> Value {
    serde_yaml::from_str(text).unwrap()
}

#[test]
fn names_follow_the_rule() {
    for (original, name) in [
        ("files", "files"),
        ("My Server", "my-server"),
        ("GitHub_MCP", "github-mcp"),
        ("--x--", "x"),
        ("über.tool", "ber-tool"),
        ("", "server"),
        ("日本", "server"),
    ] {
        assert_eq!(server_name(original), name, "{original:?}");
        assert!(is_valid_server_name(&server_name(original)));
    }
}

#[test]
fn claude_desktop_sample() {
    let text = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "My Notes": {
      "command": "node",
      "args": ["notes.js", "${literally}"],
      "env": {"API_KEY": "abc", "PORT": 3000},
      "disabled": true,
      "alwaysAllow": ["read"]
    }
  },
  "globalShortcut": "Ctrl+Space"
}"#;
    let existing = [yaml("{name: filesystem, command: other}")];
    let import = read(
        Path::new("/h/claude_desktop_config.json"),
        text,
        None,
        &existing,
    )
    .unwrap();
    assert_eq!(import.format, Format::ClaudeDesktop);
    let [fs, notes] = import.servers.as_slice() else {
        panic!("{:?}", import.servers)
    };
    assert_eq!(fs.name, "filesystem-2");
    assert_eq!(
        fs.entry,
        yaml("{name: filesystem-2, command: npx, args: [-y, '@modelcontextprotocol/server-filesystem', /Users/me/Desktop]}")
    );
    assert!(
        fs.notes[1].contains("the config already has a server named filesystem"),
        "{:?}",
        fs.notes
    );
    assert_eq!(notes.name, "my-notes");
    assert_eq!(
        notes.entry,
        yaml("{name: my-notes, command: node, args: [notes.js, '$${literally}'], env: {API_KEY: '${MY_NOTES_API_KEY}', PORT: '3000'}, enabled: false}")
    );
    assert_eq!(
        notes.notes,
        vec![
            "imported from /h/claude_desktop_config.json (Claude Desktop): \"My Notes\"".to_string(),
            "renamed \"My Notes\" to my-notes: server names must match ^[a-z0-9]([a-z0-9-]*[a-z0-9])?$".to_string(),
            "not carried (no counterpart here): alwaysAllow".to_string(),
            "secret values were not imported: set MY_NOTES_API_KEY (env API_KEY) in the environment the console runs in".to_string(),
        ]
    );
}

#[test]
fn claude_code_sample() {
    let text = r#"{"mcpServers": {
      "api": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
      "old": {"type": "sse", "url": "${BASE:-http://localhost:3001}/sse"},
      "local": {"command": "${HOME}/bin/srv", "env": {"DEBUG": "${DEBUG:-false}"}},
      "odd": {"type": "websocket", "url": "ws://x"}
    }}"#;
    let import = read(Path::new("/p/.mcp.json"), text, None, &[]).unwrap();
    assert_eq!(import.format, Format::ClaudeCode);
    let entries: Vec<&Value> = import.servers.iter().map(|s| &s.entry).collect();
    assert_eq!(
        entries,
        vec![
            &yaml("{name: api, transport: streamable_http, url: 'https://api.example.com/mcp', headers: {Authorization: 'Bearer ${API_TOKEN}'}}"),
            &yaml("{name: old, transport: sse, url: '${BASE}/sse'}"),
            &yaml("{name: local, command: '${HOME}/bin/srv', env: {DEBUG: '${DEBUG}'}}"),
        ]
    );
    assert!(import.servers[1]
        .notes
        .iter()
        .any(|n| n.contains("there are no defaults here")));
    assert_eq!(
        import.skipped,
        vec![("odd".to_string(), "unknown type \"websocket\"".to_string())]
    );
}

#[test]
fn credentials_in_a_url_become_a_basic_authorization_header() {
    let text = r#"{"mcpServers": {
      "kept": {"type": "http", "url": "https://me:p%40ss@h.example/mcp?x=1"},
      "both": {"type": "http", "url": "https://me:pw@h.example/mcp", "headers": {"authorization": "Bearer t"}},
      "vars": {"type": "http", "url": "https://${USER}:${KEY}@h.example/mcp"},
      "empty": {"type": "http", "url": "https://:@h.example/empty"}
    }}"#;
    let import = read(Path::new("/p/.mcp.json"), text, None, &[]).unwrap();
    // base64 of "me:p@ss".
    assert_eq!(
        import.servers[0].entry,
        yaml("{name: kept, transport: streamable_http, url: 'https://h.example/mcp?x=1', headers: {Authorization: '${KEPT_AUTHORIZATION}'}}")
    );
    let notes = &import.servers[0].notes;
    assert!(
        notes.iter().any(|n| n.contains("Authorization: Basic")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("set KEPT_AUTHORIZATION (header Authorization)")),
        "{notes:?}"
    );
    assert!(!format!("{notes:?}").contains("bWU6cEBzcw"), "{notes:?}");
    // Nothing to send: the url loses its empty user name and password, no header.
    assert_eq!(
        import.servers[1].entry,
        yaml("{name: empty, transport: streamable_http, url: 'https://h.example/empty'}")
    );
    assert_eq!(
        import.skipped,
        vec![
            (
                "both".to_string(),
                "its url holds a user name or password and it sets Authorization too".to_string()
            ),
            (
                "vars".to_string(),
                "its url's user name or password is a variable: give an Authorization header instead"
                    .to_string()
            )
        ]
    );
}

#[test]
fn vscode_sample() {
    let text = r#"{
  // Secrets are asked for once.
  "inputs": [
    {"type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true},
  ],
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.githubcopilot.com/mcp/",
      "headers": {"Authorization": "Bearer ${input:gh-token}"},
    },
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"], "envFile": "${workspaceFolder}/.env"},
    "tree": {"command": "node", "args": ["${workspaceFolder}/tree.js"], "cwd": "sub", "env": {"HOME_DIR": "${userHome}", "T": "${env:TOKEN}"}, "dev": {"watch": "*.js"}},
  },
}"#;
    let import = read(Path::new("/w/proj/.vscode/mcp.json"), text, None, &[]).unwrap();
    assert_eq!(import.format, Format::VsCode);
    let [github, fetch, tree] = import.servers.as_slice() else {
        panic!("{:?}", import.servers)
    };
    assert_eq!(
        github.entry,
        yaml("{name: github, transport: streamable_http, url: 'https://api.githubcopilot.com/mcp/', headers: {Authorization: 'Bearer ${GH_TOKEN}'}}")
    );
    assert!(
        github.notes.iter().any(|n| n.contains(
            "${input:gh-token} became ${GH_TOKEN}: VS Code asks for it (\"GitHub token\")"
        )),
        "{:?}",
        github.notes
    );
    assert_eq!(
        fetch.entry,
        yaml("{name: fetch, command: uvx, args: [mcp-server-fetch]}")
    );
    assert!(
        fetch
            .notes
            .iter()
            .any(|n| n.starts_with("envFile \"/w/proj/.env\" not carried")),
        "{:?}",
        fetch.notes
    );
    assert_eq!(
        tree.entry,
        yaml("{name: tree, command: node, args: [/w/proj/tree.js], env: {HOME_DIR: '${HOME}', T: '${TOKEN}'}, cwd: /w/proj/sub}")
    );
    assert!(
        tree.notes
            .iter()
            .any(|n| n == "not carried (no counterpart here): dev"),
        "{:?}",
        tree.notes
    );
}

#[test]
fn codex_sample() {
    let text = r#"
model = "o3"

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-server", "${not_a_var}"]
env = { "API_KEY" = "value" }
env_vars = ["PATH_EXTRA"]
startup_timeout_sec = 20
tool_timeout_sec = 60.5
enabled_tools = ["search"]

[mcp_servers.Remote_One]
url = "https://mcp.example.com/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
http_headers = { "X-Team" = "ops" }
env_http_headers = { "X-Key" = "REMOTE_KEY" }
enabled = false
"#;
    let import = read(Path::new("/h/.codex/config.toml"), text, None, &[]).unwrap();
    assert_eq!(import.format, Format::Codex);
    let [docs, remote] = import.servers.as_slice() else {
        panic!("{:?}", import.servers)
    };
    assert_eq!(
        docs.entry,
        yaml("{name: docs, command: npx, args: [-y, mcp-server, '$${not_a_var}'], env: {API_KEY: '${DOCS_API_KEY}'}, request_timeout: 60500ms}")
    );
    assert!(
        docs.notes
            .iter()
            .any(|n| n.starts_with("env_vars not needed")),
        "{:?}",
        docs.notes
    );
    assert!(docs
        .notes
        .iter()
        .any(|n| n == "not carried (no counterpart here): enabled_tools"));
    assert_eq!(
        remote.entry,
        yaml("{name: remote-one, transport: streamable_http, url: 'https://mcp.example.com/mcp', headers: {X-Team: ops, X-Key: '${REMOTE_KEY}'}, bearer_token: '${REMOTE_TOKEN}', enabled: false}")
    );
}

#[test]
fn bad_files_say_what_is_wrong() {
    let err = read(Path::new("/x/c.json"), "{\"mcpServers\": ", None, &[]).unwrap_err();
    assert!(
        err.to_string().starts_with("/x/c.json: not valid JSON:"),
        "{err}"
    );
    let err = read(Path::new("/x/c.toml"), "model = 1\n", None, &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/x/c.toml: no [mcp_servers.NAME] tables (Codex's format)"
    );
    let err = read(Path::new("/x/c.json"), "{\"mcpServers\": {}}", None, &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "/x/c.json: no servers in it (read as Claude Code .mcp.json)"
    );
}

#[test]
fn a_server_the_config_has_already_is_not_imported_again() {
    let text = r#"{"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-filesystem", "/data"]},
        "other files": {"command": "npx", "args": ["-y", "server-filesystem", "/home"]},
        "remote": {"type": "http", "url": "https://mcp.example.com/mcp"},
        "remote sse": {"type": "sse", "url": "https://mcp.example.com/mcp"}
    }}"#;
    // The same server under another name (transport written out, trust set since), and the
    // same url over Streamable HTTP.
    let existing = [
        yaml("{name: fs, transport: stdio, command: npx, args: [-y, server-filesystem, /data], annotation_trust: trusted}"),
        yaml("{name: web, transport: streamable_http, url: 'https://mcp.example.com/mcp'}"),
    ];
    let import = read(Path::new("/p/.mcp.json"), text, None, &existing).unwrap();
    assert_eq!(
        import.present,
        vec![
            ("files".to_string(), "fs".to_string()),
            ("remote".to_string(), "web".to_string())
        ]
    );
    // Other args, or the same url over another transport, are other servers; so is the same
    // command with another token in its env.
    let names: Vec<&str> = import.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["other-files", "remote-sse"]);
    // Imported again with what it added: nothing is new.
    let mut all = existing.to_vec();
    all.extend(import.servers.iter().map(|s| s.entry.clone()));
    let again = read(Path::new("/p/.mcp.json"), text, None, &all).unwrap();
    assert!(again.servers.is_empty(), "{:?}", again.servers);
    assert_eq!(again.present.len(), 4);
    let token = r#"{"mcpServers": {"files": {"command": "npx", "args": ["-y", "server-filesystem", "/data"], "env": {"TOKEN": "x"}}}}"#;
    let other = read(Path::new("/p/.mcp.json"), token, None, &existing).unwrap();
    assert!(other.present.is_empty(), "{:?}", other.present);
    assert_eq!(other.servers.len(), 1);
    // A server found already there does not keep the name it would have had.
    let both = r#"{"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-filesystem", "/data"]},
        "Files": {"command": "npx", "args": ["-y", "server-filesystem", "/srv"]}
    }}"#;
    let again = read(Path::new("/p/.mcp.json"), both, None, &existing).unwrap();
    assert_eq!(again.present, vec![("files".to_string(), "fs".to_string())]);
    let names: Vec<&str> = again.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["files"]);
}
