//! Where the config file is: `--config`, else `$AIMON_CONFIG`, else `./aimon.yaml`, else the
//! user config folder. Separate from loading: finding a file and reading what it says fail in
//! different ways and are tested apart.

use std::path::{Path, PathBuf};

use super::error::ConfigError;

/// Where this program keeps what it writes for itself (transcripts, pinned tool definitions):
/// `$XDG_STATE_HOME/aimon-console` (`~/.local/state/aimon-console`).
pub fn state_home() -> PathBuf {
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .unwrap_or_else(std::env::temp_dir)
        .join("aimon-console")
}

/// The file name looked for in the current directory.
pub const LOCAL_CONFIG_NAME: &str = "aimon.yaml";

/// Where the config is: `explicit` (`--config`), else `$AIMON_CONFIG`, else `./aimon.yaml` if
/// it exists, else `aimon-console/config.yaml` under the user config folder
/// (`$XDG_CONFIG_HOME`). An explicit or `$AIMON_CONFIG` path is returned as is (reading it
/// reports a missing file); otherwise the error names every place looked at.
pub fn resolve_path(explicit: Option<&Path>) -> Result<PathBuf, ConfigError> {
    let from_env = std::env::var_os("AIMON_CONFIG").map(PathBuf::from);
    let cwd = std::env::current_dir().ok();
    resolve_path_from(explicit, from_env, cwd.as_deref(), dirs::config_dir())
}

/// [`resolve_path`] with its inputs passed in.
fn resolve_path_from(
    explicit: Option<&Path>,
    from_env: Option<PathBuf>,
    cwd: Option<&Path>,
    config_dir: Option<PathBuf>,
) -> Result<PathBuf, ConfigError> {
    if let Some(path) = explicit {
        return Ok(path.to_path_buf());
    }
    if let Some(path) = from_env.filter(|p| !p.as_os_str().is_empty()) {
        return Ok(path);
    }
    // In the order of precedence.
    let mut looked_at = vec![
        "--config (not given)".to_string(),
        "$AIMON_CONFIG (not set)".to_string(),
    ];
    let local = match cwd {
        Some(cwd) => cwd.join(LOCAL_CONFIG_NAME),
        None => PathBuf::from(LOCAL_CONFIG_NAME),
    };
    if local.is_file() {
        return Ok(local);
    }
    looked_at.push(local.display().to_string());
    match config_dir {
        Some(dir) => {
            let user = dir.join("aimon-console").join("config.yaml");
            if user.is_file() {
                return Ok(user);
            }
            looked_at.push(user.display().to_string());
        }
        None => looked_at.push(
            "$XDG_CONFIG_HOME/aimon-console/config.yaml (no config folder known)".to_string(),
        ),
    }
    Err(ConfigError::not_found(&looked_at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigErrorKind;

    #[test]
    fn resolve_path_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cwd = dir.path().join("cwd");
        let config_home = dir.path().join("xdg");
        let user = config_home.join("aimon-console").join("config.yaml");
        std::fs::create_dir_all(&cwd).expect("mkdir");
        std::fs::create_dir_all(user.parent().expect("parent")).expect("mkdir");

        // Nothing exists: the error names every place.
        let err = resolve_path_from(None, None, Some(&cwd), Some(config_home.clone()))
            .expect_err("nothing found");
        assert_eq!(err.kind(), ConfigErrorKind::NotFound);
        let shown = err.to_string();
        // Every place, in the order of precedence.
        let places = [
            "--config".to_string(),
            "AIMON_CONFIG".to_string(),
            cwd.join("aimon.yaml").display().to_string(),
            user.display().to_string(),
        ];
        let at: Vec<usize> = places
            .iter()
            .map(|place| {
                shown
                    .find(place.as_str())
                    .unwrap_or_else(|| panic!("{shown} should name {place}"))
            })
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{shown}");

        // The user config folder is the last resort.
        std::fs::write(&user, "").expect("write");
        let found = resolve_path_from(None, None, Some(&cwd), Some(config_home.clone()));
        assert_eq!(found.ok(), Some(user.clone()));

        // ./aimon.yaml beats it.
        let local = cwd.join("aimon.yaml");
        std::fs::write(&local, "").expect("write");
        let found = resolve_path_from(None, None, Some(&cwd), Some(config_home.clone()));
        assert_eq!(found.ok(), Some(local.clone()));

        // $AIMON_CONFIG beats both (even when it does not exist: reading it will say so), but an
        // empty value counts as unset.
        let from_env = dir.path().join("env.yaml");
        let found = resolve_path_from(
            None,
            Some(from_env.clone()),
            Some(&cwd),
            Some(config_home.clone()),
        );
        assert_eq!(found.ok(), Some(from_env.clone()));
        let found = resolve_path_from(
            None,
            Some(PathBuf::new()),
            Some(&cwd),
            Some(config_home.clone()),
        );
        assert_eq!(found.ok(), Some(local));

        // --config beats everything.
        let explicit = dir.path().join("explicit.yaml");
        let found = resolve_path_from(
            Some(&explicit),
            Some(from_env),
            Some(&cwd),
            Some(config_home),
        );
        assert_eq!(found.ok(), Some(explicit));

        // No config folder known: still named in the error.
        let err = resolve_path_from(None, None, Some(dir.path()), None).expect_err("none");
        assert!(err.to_string().contains("$XDG_CONFIG_HOME"), "{err}");
    }
}
