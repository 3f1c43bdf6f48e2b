//! Sandboxing a child process with Linux Landlock: what it may read and write, and whether it may
//! open TCP connections (`SandboxConfig`, from `sandbox:` of a stdio server or
//! `policy.bash_sandbox`).
//!
//! The ruleset is built in the parent (paths opened, rules added: everything that allocates or
//! can fail with words), and the child only calls `restrict_self` between fork and exec: two
//! system calls, nothing allocated, so it is safe in the child of a multi-threaded program. The
//! restriction is inherited by everything the child starts and cannot be lifted.
//!
//! Landlock allows, it cannot deny below an allowed folder: reading is either everywhere
//! (`read` not given) or the listed paths and the system's. Writing is the `write` folders and
//! `/dev/null`. `network: false` refuses TCP `connect` and `bind` (Landlock ABI 4, Linux 6.7);
//! UDP and Unix sockets are not covered by this kernel's Landlock.

use std::io;
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, ABI,
};

use crate::config::SandboxConfig;

/// The rights asked for; a kernel with an older ABI gets what it knows of them.
const TARGET_ABI: ABI = ABI::V5;
/// Writes are controlled whole (truncation included) from ABI 3 (Linux 6.2).
const MIN_ABI_FILES: i32 = 3;
/// TCP connect and bind are controlled from ABI 4 (Linux 6.7).
const MIN_ABI_NETWORK: i32 = 4;

/// What the system itself needs to be readable for a program to start, when `read` is given.
const SYSTEM_READ: &[&str] = &[
    "/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/dev", "/proc", "/sys", "/opt",
];

/// A sandbox made ready for one spawn.
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
    /// What the process runs under, in words, for Details and `check --json`.
    pub summary: String,
}

/// Builds the ruleset of `config` for a process running `command`. `Err` (why) when the sandbox
/// is `required` and cannot be applied here; otherwise a sandbox that could not be applied is
/// `Ok` with no ruleset and a summary that says so.
pub fn prepare(config: &SandboxConfig, command: Option<&Path>) -> Result<Prepared, String> {
    prepare_on(kernel_abi(), config, command)
}

/// [`prepare`] on a kernel whose Landlock ABI is `kernel`.
fn prepare_on(
    kernel: io::Result<i32>,
    config: &SandboxConfig,
    command: Option<&Path>,
) -> Result<Prepared, String> {
    let need = if config.network {
        MIN_ABI_FILES
    } else {
        MIN_ABI_NETWORK
    };
    let unavailable = |why: String| {
        if config.required {
            Err(format!("its sandbox is required, and {why}"))
        } else {
            Ok(Prepared {
                ruleset: None,
                summary: format!("NOT sandboxed: {why} (sandbox.required is false)"),
            })
        }
    };
    let abi = match kernel {
        Ok(abi) if abi >= need => abi,
        Ok(abi) => {
            return unavailable(format!(
                "this kernel's Landlock is ABI {abi}; {} needs ABI {need} (Linux {})",
                if need == MIN_ABI_NETWORK {
                    "network: false"
                } else {
                    "a sandbox"
                },
                if need == MIN_ABI_NETWORK {
                    "6.7"
                } else {
                    "6.2"
                }
            ))
        }
        Err(e) => return unavailable(no_landlock(&e)),
    };
    let ruleset =
        build(config, command).map_err(|e| format!("its sandbox could not be built: {e}"))?;
    Ok(Prepared {
        ruleset: Some(ruleset),
        summary: format!("Landlock (ABI {abi}): {}", describe(config)),
    })
}

impl Prepared {
    /// Makes `cmd` restrict itself before it runs its program. A sandbox that was not built
    /// (no Landlock, not required) changes nothing.
    pub fn apply(self, cmd: &mut tokio::process::Command) {
        let Some(ruleset) = self.ruleset else {
            return;
        };
        let mut slot = Some(ruleset);
        // SAFETY: the closure runs in the child between fork and exec. It only moves the ruleset
        // out of the child's own copy of `slot` and calls `restrict_self`, which makes two system
        // calls (prctl(PR_SET_NO_NEW_PRIVS), landlock_restrict_self) and allocates nothing; its
        // errors become an errno without allocating either.
        unsafe {
            cmd.pre_exec(move || restrict(&mut slot));
        }
    }
}

/// In the child: applies the ruleset, or fails the spawn with its errno.
fn restrict(slot: &mut Option<RulesetCreated>) -> io::Result<()> {
    let Some(ruleset) = slot.take() else {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    };
    match ruleset.restrict_self() {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
        Ok(_) => Err(io::Error::from_raw_os_error(libc::ENOSYS)),
        Err(_) => Err(io::Error::from_raw_os_error(libc::EPERM)),
    }
}

/// `writes only under /a, /b; reads everything; no TCP`.
pub fn describe(config: &SandboxConfig) -> String {
    let list = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let writes = if config.write.is_empty() {
        "writes nothing (but /dev/null)".to_string()
    } else {
        format!("writes only under {}", list(&config.write))
    };
    let reads = match &config.read {
        None => "reads everything".to_string(),
        Some(paths) => format!("reads the system's files and {}", list(paths)),
    };
    let network = if config.network {
        "may connect"
    } else {
        "no TCP connect or listen"
    };
    format!("{writes}; {reads}; {network}")
}

/// The Landlock ABI of the running kernel (`ENOSYS`: none; `EOPNOTSUPP`: off at boot).
pub fn kernel_abi() -> io::Result<i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the VERSION flag only
    // returns the ABI version (or an error); it reads and writes no memory.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(i32::try_from(version).unwrap_or(i32::MAX))
    }
}

fn no_landlock(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no Landlock".to_string(),
        Some(libc::EOPNOTSUPP) => {
            "Landlock is off on this kernel (add landlock to the lsm= boot parameter)".to_string()
        }
        _ => format!("Landlock could not be asked: {e}"),
    }
}

fn build(config: &SandboxConfig, command: Option<&Path>) -> Result<RulesetCreated, String> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V3))
        .and_then(|r| {
            r.set_compatibility(CompatLevel::BestEffort)
                .handle_access(AccessFs::from_all(TARGET_ABI))
        })
        .map_err(|e| e.to_string())?;
    if !config.network {
        ruleset = ruleset
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| e.to_string())?
            .set_compatibility(CompatLevel::BestEffort);
    }
    let mut created = ruleset
        .create()
        .map_err(|e| e.to_string())?
        .set_compatibility(CompatLevel::BestEffort);
    let read = AccessFs::from_read(TARGET_ABI);
    let mut readable: Vec<PathBuf> = match &config.read {
        None => vec![PathBuf::from("/")],
        Some(paths) => {
            let mut all: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
            all.extend(paths.iter().cloned());
            // Its own program, wherever it is installed.
            all.extend(command.and_then(program_folder));
            all
        }
    };
    readable.retain(|p| p.exists());
    for path in readable {
        created = created
            .add_rule(PathBeneath::new(open(&path)?, read))
            .map_err(|e| e.to_string())?;
    }
    created = created
        .add_rule(PathBeneath::new(
            open(Path::new("/dev/null"))?,
            AccessFs::from_file(TARGET_ABI),
        ))
        .map_err(|e| e.to_string())?;
    for path in &config.write {
        // A folder that is not there yet is made, so that the rule has something to hold.
        let _ = std::fs::create_dir_all(path);
        let access = if path.is_dir() {
            AccessFs::from_all(TARGET_ABI)
        } else {
            AccessFs::from_file(TARGET_ABI)
        };
        created = created
            .add_rule(PathBeneath::new(open(path)?, access))
            .map_err(|e| e.to_string())?;
    }
    Ok(created)
}

fn open(path: &Path) -> Result<PathFd, String> {
    PathFd::new(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The folder of `command` as found on `PATH` (or as given, when it has a slash).
fn program_folder(command: &Path) -> Option<PathBuf> {
    if command.components().count() > 1 {
        return command.parent().map(Path::to_path_buf);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|dir| dir.join(command).is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(network: bool, required: bool) -> SandboxConfig {
        SandboxConfig {
            read: None,
            write: Vec::new(),
            network,
            required,
        }
    }

    fn refusal(kernel: io::Result<i32>, config: &SandboxConfig) -> String {
        match prepare_on(kernel, config, None) {
            Err(why) => why,
            Ok(p) => panic!("expected a refusal, got {:?}", p.summary),
        }
    }

    #[test]
    fn a_required_sandbox_refuses_a_kernel_without_landlock_and_says_why() {
        let enosys = || Err(io::Error::from_raw_os_error(libc::ENOSYS));
        assert_eq!(
            refusal(enosys(), &config(true, true)),
            "its sandbox is required, and this kernel has no Landlock"
        );
        let off = Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        assert!(refusal(off, &config(true, true)).contains("Landlock is off"));
        // Too old for `network: false`, new enough for files.
        assert_eq!(
            refusal(Ok(3), &config(false, true)),
            "its sandbox is required, and this kernel's Landlock is ABI 3; network: false needs ABI 4 (Linux 6.7)"
        );
        assert!(prepare_on(Ok(3), &config(true, true), None).is_ok_and(|p| p.ruleset.is_some()));
        // Not required: it runs, and the summary says it is not sandboxed.
        let prepared = prepare_on(enosys(), &config(true, false), None).unwrap();
        assert!(prepared.ruleset.is_none());
        assert_eq!(
            prepared.summary,
            "NOT sandboxed: this kernel has no Landlock (sandbox.required is false)"
        );
    }

    #[test]
    fn the_summary_says_what_is_allowed() {
        let config = SandboxConfig {
            read: Some(vec![PathBuf::from("/srv/data")]),
            write: vec![PathBuf::from("/tmp/out")],
            network: false,
            required: true,
        };
        assert_eq!(
            describe(&config),
            "writes only under /tmp/out; reads the system's files and /srv/data; no TCP connect or listen"
        );
    }
}
