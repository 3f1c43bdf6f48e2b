//! Nothing a stdio server started outlives the console, not even what left its process group.
//!
//! Killing a server's process group (docs/ARCHITECTURE.md §4.2) misses a descendant that moved to a
//! group or session of its own (`setsid`, a daemon's double fork). Three things catch those:
//!
//! - The console is a child subreaper (`PR_SET_CHILD_SUBREAPER`): an orphaned descendant is
//!   re-parented to the console, not to init, so it stays in reach.
//! - Every server is started with [`SERVER_MARK`] in its environment, a value of its own that
//!   its descendants inherit. A server's descendants are its process tree while it lives, and,
//!   once orphaned, every child of the console that carries its mark, with their trees.
//! - When a server is closed or dies, those are killed (SIGKILL: they were asked politely with
//!   the group) and reaped.
//!
//! Reaping must not disturb tokio, which waits for each child it spawned by pid. So the console
//! never waits for "any child": it waits only for zombies it can tell are orphans it inherited
//! — processes it killed as descendants, or zombies in another session than the console's, or
//! in another process group than the console's without leading it. A child the console spawned
//! (a server, a shell of the `bash` tool) is in the console's session and either in its group
//! or leading a group of its own, so none of these ever matches one.
//!
//! Sweeps for such zombies run when a server starts, exits or is closed, and after requests to a
//! stdio server (at most one every `SWEEP_EVERY`): an orphan that exits by itself is reaped at
//! the next of these. Nothing runs while the console is idle, and no descriptor is held for it
//! (a SIGCHLD listener would keep a signal pipe and a runtime of its own open for good).
//!
//! Linux only (`/proc`, `prctl`), like the rest of the process handling.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// The environment variable that marks a server's processes (inherited by its descendants).
pub const SERVER_MARK: &str = crate::child_mark::NAME;

/// How long a killed descendant that is our child is waited for, to reap it.
const REAP_WAIT: Duration = Duration::from_secs(1);
/// Most killed pids remembered for reaping (a bound, not an expectation).
const KILLED_LIMIT: usize = 4096;
/// Sweeps after requests come at most this often.
const SWEEP_EVERY: Duration = Duration::from_secs(5);

static SUBREAPER: Once = Once::new();
static IS_SUBREAPER: AtomicBool = AtomicBool::new(false);

/// Descendants killed, by pid, with their start time: reaped when they turn up as our zombies.
static KILLED: Mutex<Option<HashMap<i32, u64>>> = Mutex::new(None);

/// The servers' leaders the console spawned and has not yet seen exit: children of the
/// console that are neither orphans nor zombies to reap, so a walk or a sweep passes them by
/// without reading their `/proc` entries (with 16 servers, each close read every other
/// server's environment).
static LEADERS: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

/// `pid` leads a server the console spawned.
pub fn leader_started(pid: i32) {
    LEADERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashSet::new)
        .insert(pid);
}

/// The leader `pid` has exited (and been waited for): its pid may be someone else's now.
pub fn leader_ended(pid: i32) {
    if let Some(leaders) = LEADERS.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        leaders.remove(&pid);
    }
}

/// The console's children but the servers' leaders it spawned and waits for itself; `None`
/// where the kernel does not list children.
fn children_to_look_at(me: i32) -> Option<Vec<i32>> {
    let children = children_of(me)?;
    let leaders = LEADERS.lock().unwrap_or_else(|e| e.into_inner());
    Some(match leaders.as_ref() {
        Some(leaders) => children
            .into_iter()
            .filter(|p| !leaders.contains(p))
            .collect(),
        None => children,
    })
}

/// Makes the console a child subreaper, once per process. Whether it is one.
pub fn enable() -> bool {
    SUBREAPER.call_once(|| {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer and touches no memory.
        let done = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0;
        if !done {
            tracing::warn!(error = %std::io::Error::last_os_error(), "cannot become a child subreaper: escaped grandchildren are found by their mark only");
        }
        IS_SUBREAPER.store(done, Ordering::SeqCst);
    });
    IS_SUBREAPER.load(Ordering::SeqCst)
}

/// Milliseconds after `EPOCH` of the last sweep after a request.
static LAST_SWEEP: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Sweeps for orphaned zombies in the background, unless a sweep after a request ran in the last
/// `SWEEP_EVERY` (so a busy server costs one `/proc` scan per period, an idle one nothing).
pub fn sweep_soon() {
    let now = u64::try_from(epoch().elapsed().as_millis()).unwrap_or(u64::MAX);
    let last = LAST_SWEEP.load(Ordering::Relaxed);
    let every = u64::try_from(SWEEP_EVERY.as_millis()).unwrap_or(u64::MAX);
    if now.saturating_sub(last) < every && last != 0 {
        return;
    }
    if LAST_SWEEP
        .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
    {
        sweep();
    }
}

/// A sweep is waiting for its turn on the blocking pool: sweeps asked meanwhile are the same
/// one (16 servers closing at once ask 16 times in a millisecond).
static SWEEP_QUEUED: AtomicBool = AtomicBool::new(false);

/// Sweeps for orphaned zombies in the background (on tokio's blocking pool, when there is a
/// runtime; else here). A sweep asked while one is queued and not yet begun is that one.
pub fn sweep() {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            if SWEEP_QUEUED.swap(true, Ordering::SeqCst) {
                return;
            }
            runtime.spawn_blocking(|| {
                // From here on a new ask is a new sweep: what exits now is seen by it.
                SWEEP_QUEUED.store(false, Ordering::SeqCst);
                reap_orphans();
            });
        }
        Err(_) => {
            reap_orphans();
        }
    }
}

/// One process as `/proc/<pid>/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Proc {
    pid: i32,
    state: u8,
    ppid: i32,
    pgrp: i32,
    session: i32,
    /// Clock ticks after boot: with the pid, who the process is (pids are reused).
    start: u64,
}

impl Proc {
    fn read(pid: i32) -> Option<Proc> {
        let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
        parse_stat(&stat)
    }

    fn is_zombie(&self) -> bool {
        self.state == b'Z'
    }
}

/// Parses a `stat` line: `pid (comm) state ppid pgrp session … starttime …`; the command may
/// hold spaces and parentheses, so the fields are counted from the last `)`.
fn parse_stat(stat: &[u8]) -> Option<Proc> {
    let open = stat.iter().position(|b| *b == b'(')?;
    let close = stat.iter().rposition(|b| *b == b')')?;
    let pid = std::str::from_utf8(&stat[..open])
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let rest = std::str::from_utf8(stat.get(close + 1..)?).ok()?;
    let fields: Vec<&str> = rest.split_ascii_whitespace().collect();
    // fields[0] is field 3 of proc(5): state; 4 ppid, 5 pgrp, 6 session, 22 starttime.
    Some(Proc {
        pid,
        state: *fields.first()?.as_bytes().first()?,
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Every process in `/proc`.
fn all_processes() -> Vec<Proc> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(Proc::read)
        .collect()
}

/// When this process started, in clock ticks after boot (with the pid, who it is).
pub fn process_start() -> Option<u64> {
    Proc::read(std::process::id() as i32).map(|p| p.start)
}

/// Kills what the servers of a console or daemon that is gone left behind: every process
/// marked by a server that `owner` started (`SERVER_MARK=<owner>-…`), that started after
/// `owner` did (`owner_start`) and, when the pid `owner` now belongs to another process,
/// before that one (whose own servers carry the same prefix). Nothing while `owner` itself is
/// still alive. Returns how many were killed.
pub fn end_leftovers_of(owner: i32, owner_start: u64) -> usize {
    let holder = Proc::read(owner).filter(|p| !p.is_zombie());
    if holder.is_some_and(|p| p.start == owner_start) {
        return 0;
    }
    let before = holder.map_or(u64::MAX, |p| p.start);
    let prefix = format!("{SERVER_MARK}={owner}-");
    let found: Vec<Found> = all_processes()
        .into_iter()
        .filter(|p| !p.is_zombie() && p.start >= owner_start && p.start < before)
        .filter(|p| {
            std::fs::read(format!("/proc/{}/environ", p.pid)).is_ok_and(|env| {
                env.split(|b| *b == 0)
                    .any(|kv| kv.starts_with(prefix.as_bytes()))
            })
        })
        .map(|p| Found {
            pid: p.pid,
            start: p.start,
        })
        .collect();
    kill(&found)
}

/// Whether `pid`'s environment holds `SERVER_MARK=mark`.
fn has_mark(pid: i32, mark: &str) -> bool {
    has_any_mark(pid, std::iter::once(mark))
}

/// Whether `pid` carries one of `marks` (its environment read once).
fn has_any_mark<'a>(pid: i32, marks: impl Iterator<Item = &'a str>) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let prefix = format!("{SERVER_MARK}=");
    let Some(theirs) = env
        .split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(prefix.as_bytes()))
    else {
        return false;
    };
    marks.into_iter().any(|mark| mark.as_bytes() == theirs)
}

/// A descendant found, to be killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pid: i32,
    start: u64,
}

/// The children of `pid`, from `/proc/<pid>/task/*/children` (every thread's: a child's parent
/// is the thread that started it): a few small reads instead of a scan of every process.
/// `None` when the kernel does not offer those files (`CONFIG_PROC_CHILDREN`).
fn children_of(pid: i32) -> Option<Vec<i32>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut children = Vec::new();
    let mut offered = false;
    for task in tasks.flatten() {
        let Ok(list) = std::fs::read_to_string(task.path().join("children")) else {
            continue;
        };
        offered = true;
        children.extend(
            list.split_ascii_whitespace()
                .filter_map(|p| p.parse::<i32>().ok()),
        );
    }
    // A process with threads but no `children` file: the kernel does not offer them. (One
    // that exited meanwhile has no tasks either: nothing to walk.)
    (offered || !Path::new(&format!("/proc/{pid}")).exists()).then_some(children)
}

/// The descendants of the server led by `leader` (`None` once it has exited and been reaped:
/// its pid may already belong to someone else) and marked `mark`: its process tree, and every
/// orphan of its tree (a child of the console carrying its mark, or, where the console could
/// not become a subreaper, any process carrying it) with theirs. The leader is not among them.
///
/// The tree is walked from the leader and from the console's own children (a subreaper's
/// orphans are those), not found in a scan of every process: closing 16 servers read 3,600
/// `/proc` entries that way. Without a subreaper, or without `children` files, it scans.
pub fn descendants(leader: Option<i32>, mark: &str) -> Vec<Found> {
    descendants_of_all(&[(leader, mark)])
}

/// [`descendants`] of several servers at once (closing them all): the console's own children
/// are read once for all of them, not once each.
pub fn descendants_of_all(servers: &[(Option<i32>, &str)]) -> Vec<Found> {
    let me = std::process::id() as i32;
    if IS_SUBREAPER.load(Ordering::SeqCst) {
        if let Some(found) = walked_descendants(servers, me) {
            return found;
        }
    }
    servers
        .iter()
        .flat_map(|(leader, mark)| scanned_descendants(*leader, mark, me))
        .collect()
}

/// `descendants` by walking the trees down from the leaders and from the console's children;
/// `None` where the kernel does not list children.
fn walked_descendants(servers: &[(Option<i32>, &str)], me: i32) -> Option<Vec<Found>> {
    let leaders: HashSet<i32> = servers.iter().filter_map(|(leader, _)| *leader).collect();
    let mut roots: Vec<i32> = leaders.iter().copied().collect();
    for pid in children_to_look_at(me)? {
        let orphan = !leaders.contains(&pid)
            && Proc::read(pid).is_some_and(|p| !p.is_zombie())
            && has_any_mark(pid, servers.iter().map(|(_, mark)| *mark));
        if orphan {
            roots.push(pid);
        }
    }
    let mut found = Vec::new();
    let mut seen: HashSet<i32> = HashSet::new();
    let mut queue = roots;
    while let Some(pid) = queue.pop() {
        if pid == me || !seen.insert(pid) {
            continue;
        }
        if !leaders.contains(&pid) {
            let Some(p) = Proc::read(pid) else {
                continue;
            };
            found.push(Found {
                pid,
                start: p.start,
            });
        }
        queue.extend(children_of(pid).unwrap_or_default());
    }
    Some(found)
}

/// `descendants` from a scan of every process.
fn scanned_descendants(leader: Option<i32>, mark: &str, me: i32) -> Vec<Found> {
    let all = all_processes();
    let mut children: HashMap<i32, Vec<&Proc>> = HashMap::new();
    for p in &all {
        children.entry(p.ppid).or_default().push(p);
    }
    let subreaper = IS_SUBREAPER.load(Ordering::SeqCst);
    let mut roots: Vec<i32> = leader.into_iter().collect();
    roots.extend(
        all.iter()
            .filter(|p| !p.is_zombie() && Some(p.pid) != leader && p.pid != me)
            .filter(|p| !subreaper || p.ppid == me)
            .filter(|p| has_mark(p.pid, mark))
            .map(|p| p.pid),
    );
    let mut found = Vec::new();
    let mut seen: HashSet<i32> = HashSet::new();
    let mut queue = roots;
    while let Some(pid) = queue.pop() {
        if !seen.insert(pid) {
            continue;
        }
        if Some(pid) != leader {
            if let Some(p) = all.iter().find(|p| p.pid == pid) {
                found.push(Found {
                    pid,
                    start: p.start,
                });
            }
        }
        for child in children.get(&pid).into_iter().flatten() {
            if child.pid != me {
                queue.push(child.pid);
            }
        }
    }
    found
}

/// Kills each of `found` that is still the process found (not a reused pid, not yet a
/// zombie) with SIGKILL, and remembers it for reaping. Returns how many were killed.
pub fn kill(found: &[Found]) -> usize {
    let mut killed = 0;
    for f in found {
        let Some(now) = Proc::read(f.pid) else {
            continue;
        };
        if now.start != f.start || now.is_zombie() {
            continue;
        }
        // SAFETY: kill has no memory-safety preconditions; the pid was just seen to be the
        // process found.
        if unsafe { libc::kill(f.pid, libc::SIGKILL) } == 0 {
            killed += 1;
            let mut remembered = KILLED.lock().unwrap_or_else(|e| e.into_inner());
            let remembered = remembered.get_or_insert_with(HashMap::new);
            if remembered.len() >= KILLED_LIMIT {
                remembered.clear();
            }
            remembered.insert(f.pid, f.start);
        }
    }
    if killed > 0 {
        tracing::info!(
            killed,
            "killed descendants that had left their server's process group"
        );
    }
    killed
}

/// Waits (a little) for the killed descendants among `found` that are our children to die,
/// and reaps them, so that none is left a zombie once a server is closed.
pub async fn reap_killed(found: &[Found]) {
    let deadline = tokio::time::Instant::now() + REAP_WAIT;
    let me = std::process::id() as i32;
    let mut left: Vec<Found> = found.to_vec();
    while !left.is_empty() {
        left.retain(|f| match Proc::read(f.pid) {
            Some(p) if p.start == f.start && p.ppid == me => !(p.is_zombie() && reap(f.pid)),
            // Gone, someone else's child, or a reused pid: not ours to wait for.
            Some(_) | None => false,
        });
        if left.is_empty() || tokio::time::Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Marks of servers whose leader exited, waiting for one walk for their orphans.
static ORPHANS_OF: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Ends what a server whose leader just exited left outside its group (the console's children
/// carrying its `mark`), in one walk with the others that exited in the same moment: 16
/// servers closing at once are one walk of the console's children, not 16. After a yield (the
/// exits of the moment are in), the first of them to run walks for all that are waiting; the
/// rest find nothing left to do.
pub async fn end_orphans_of(mark: String) {
    ORPHANS_OF
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(mark);
    tokio::task::yield_now().await;
    let found = orphans_of_marks();
    end_escaped(&found).await;
}

/// The orphans of the servers in `ORPHANS_OF`, which it empties (none when it is empty).
fn orphans_of_marks() -> Vec<Found> {
    let marks = std::mem::take(&mut *ORPHANS_OF.lock().unwrap_or_else(|e| e.into_inner()));
    if marks.is_empty() {
        return Vec::new();
    }
    let trees: Vec<(Option<i32>, &str)> = marks.iter().map(|m| (None, m.as_str())).collect();
    descendants_of_all(&trees)
}

/// Kills the escaped descendants `found`, reaps them, and sweeps for orphans.
pub async fn end_escaped(found: &[Found]) {
    kill(found);
    reap_killed(found).await;
    sweep();
}

/// Waits for zombie `pid` without blocking; whether it was reaped.
fn reap(pid: i32) -> bool {
    let mut status = 0;
    // SAFETY: `status` is a valid place for waitpid to write to; WNOHANG never blocks.
    let reaped = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid;
    if reaped {
        if let Some(killed) = KILLED.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            killed.remove(&pid);
        }
    }
    reaped
}

/// Reaps every zombie child of the console that is an orphan it inherited (see the module
/// documentation for how one is told from a child someone waits for). Returns how many.
pub fn reap_orphans() -> usize {
    let me = std::process::id() as i32;
    // SAFETY: getsid(0) and getpgrp() read this process's own ids; no memory is touched.
    let (my_session, my_group) = unsafe { (libc::getsid(0), libc::getpgrp()) };
    let killed: HashMap<i32, u64> = KILLED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_default();
    // Its own children are listed with it; else every process is read.
    let children = match children_to_look_at(me) {
        Some(pids) => pids.into_iter().filter_map(Proc::read).collect(),
        None => all_processes(),
    };
    children
        .into_iter()
        .filter(|p| p.ppid == me && p.is_zombie())
        .filter(|p| is_inherited(p, my_session, my_group) || killed.get(&p.pid) == Some(&p.start))
        .filter(|p| reap(p.pid))
        .count()
}

/// Whether a child of the console can only be an orphan it inherited: in another session, or
/// in another process group that it does not lead.
fn is_inherited(p: &Proc, my_session: i32, my_group: i32) -> bool {
    p.session != my_session || (p.pgrp != my_group && p.pgrp != p.pid)
}

#[cfg(test)]
#[path = "reaper_tests.rs"]
mod tests;
