//! `engine serve`: a warm daemon for the hook. A hook process per prompt would pay the model load
//! every time; the daemon keeps the index and the model loaded and answers on a Unix
//! socket in the index directory (owner-only). One JSON line per request and per answer. It
//! reopens the index when a new generation appears, reloads its settings when the project's
//! `engine.toml` changes, survives bad requests, refuses clients built from a different binary
//! (they fall back to searching in process), and exits after an idle timeout or as soon as its
//! index directory is deleted or replaced (a stale daemon would otherwise answer beside the new one).

use crate::embed::Embedder;
use crate::error::{Error, Result};
use crate::search::Engine;
use crate::Settings;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

/// The socket's name inside the index directory.
pub(crate) const SOCKET: &str = "engine.sock";

pub(crate) fn socket_path(index: &Path) -> PathBuf {
    index.join(SOCKET)
}

/// Identifies this build: version plus the executable's size and modification time, so a rebuilt
/// binary never talks to a daemon started from the old one.
pub(crate) fn binary_id() -> String {
    let stamp = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let mtime = m.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
            format!("{}-{mtime}", m.len())
        })
        .unwrap_or_default();
    format!("{}+{stamp}", env!("CARGO_PKG_VERSION"))
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    pub binary: String,
    pub query: String,
    /// Files were edited since the last reindex: bring the index up to date before searching
    /// (the daemon has the model loaded, so a few changed files take milliseconds).
    #[serde(default)]
    pub reindex: bool,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Response {
    pub binary: String,
    #[serde(default)]
    pub context: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
}

/// Starts a command detached from the hook (own session, no stdio), not waited for.
pub(crate) fn detach(cmd: &mut std::process::Command) -> std::io::Result<()> {
    use std::os::unix::process::CommandExt;
    cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn().map(|_| ())
}

/// Lowers this process to CPU niceness `nice`, before it starts its worker threads (they inherit
/// it): indexing in the background at the lowest priority leaves the cores to the daemon
/// answering prompts, whose ONNX threads otherwise wait on the indexer's. With the kernel's
/// autogroup scheduling a session competes as one group whatever its processes' niceness, so a
/// process leading a session of its own ([`detach`]) lowers its group too; one started from a
/// terminal leaves the terminal's group alone. Either can fail (a niceness the process may not
/// take); the priority then stays as it was.
pub fn lower_priority(nice: i32) {
    // SAFETY: getpriority, getsid and getpid only read; setpriority changes only the calling
    // thread's scheduling priority. -1 from getpriority may be an error: then 19 is kept as the
    // floor rather than risking a raise.
    let leader = unsafe {
        let now = libc::getpriority(libc::PRIO_PROCESS, 0);
        let now = if now == -1 { 19 } else { now };
        libc::setpriority(libc::PRIO_PROCESS, 0, nice.max(now));
        libc::getsid(0) == libc::getpid()
    };
    if leader {
        // The kernel refuses a second change within 100 ms system-wide (two indexers started
        // together); the group then keeps its priority, and the process its own.
        if let Err(e) = std::fs::write("/proc/self/autogroup", nice.to_string()) {
            eprintln!("engine: the scheduler group's priority was left as it was ({e})");
        }
    }
}

/// Starts `engine serve` for an index in the background.
pub fn spawn(index: &Path) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    detach(std::process::Command::new(exe).arg("serve").arg("--index").arg(index))
}

/// Asks the daemon for a prompt's context before `deadline`. `Err(why)` when there is no usable
/// daemon (the caller searches in process); a missing or refusing socket also starts one. A
/// daemon that does not answer in time (stopped, hung) is replaced: its socket is taken away, so
/// it exits when it wakes, and a new one starts for the next prompts.
pub fn ask(index: &Path, query: &str, reindex: bool, deadline: Instant) -> std::result::Result<Option<String>, String> {
    let path = socket_path(index);
    let socket_ino = inode(&path);
    let mut stream = match UnixStream::connect(&path) {
        Ok(s) => s,
        Err(e) => {
            if e.kind() == std::io::ErrorKind::ConnectionRefused {
                let _ = std::fs::remove_file(&path); // a daemon that died left its socket
            }
            let started = spawn(index).is_ok();
            return Err(format!(
                "no daemon on {} ({e}){}",
                path.display(),
                if started { "; started one for the next prompts" } else { "" }
            ));
        }
    };
    if let Some(why) = stranger(&stream) {
        return Err(format!("refused the daemon on {}: {why}", path.display()));
    }
    let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let _ = stream.set_read_timeout(Some(left));
    let _ = stream.set_write_timeout(Some(left));
    let me = binary_id();
    let request = Request { binary: me.clone(), query: query.to_string(), reindex };
    let line = serde_json::to_string(&request).map_err(|e| e.to_string())?;
    stream.write_all(format!("{line}\n").as_bytes()).map_err(|e| format!("daemon write: {e}"))?;
    let mut answer = String::new();
    if let Err(e) = BufReader::new(&stream).read_line(&mut answer) {
        // Only the socket this hook talked to: a daemon that replaced it since keeps its own.
        if socket_ino.is_some() && inode(&path) == socket_ino {
            let _ = std::fs::remove_file(&path);
        }
        let started = spawn(index).is_ok();
        return Err(format!(
            "the daemon did not answer in time ({e}); replaced it{}",
            if started { ": a new one starts for the next prompts" } else { "" }
        ));
    }
    let resp: Response = serde_json::from_str(&answer).map_err(|e| format!("daemon answered garbage ({e})"))?;
    if resp.binary != me {
        return Err(format!("daemon runs another build ({}); searched in process", resp.binary));
    }
    match resp.error {
        Some(e) => Err(format!("daemon: {e}")),
        None => Ok(resp.context),
    }
}

/// Why the process at the other end of a socket is not to be talked to, if it is not: it runs as
/// another user. The socket lives in an index directory only its owner can write to, so this
/// matters when that check was bypassed; it costs one system call.
pub(crate) fn stranger(stream: &UnixStream) -> Option<String> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: ucred is plain data; getsockopt writes at most `len` bytes into it.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    match rc {
        0 if cred.uid == me => None,
        0 => Some(format!("it runs as uid {}, not as you (uid {me})", cred.uid)),
        _ => Some(format!("its user cannot be checked ({})", std::io::Error::last_os_error())),
    }
}

/// How often the daemon checks its idle time, its index directory and its config file.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// A directory's identity: `rm -rf .engine && engine index` keeps the path but not this.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DirId {
    dev: u64,
    ino: u64,
}

fn dir_id(path: &Path) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().filter(|m| m.is_dir()).map(|m| DirId { dev: m.dev(), ino: m.ino() })
}

fn inode(path: &Path) -> Option<u64> {
    std::fs::symlink_metadata(path).map(|m| std::os::unix::fs::MetadataExt::ino(&m)).ok()
}

/// Opens the engine for the daemon, reusing an already loaded embedder when there is one.
fn open_engine(index: &Path, settings: Settings, embedder: Option<Arc<dyn Embedder>>) -> Result<Engine> {
    let rerank = settings.hook.rerank;
    Engine::open_serving(index, settings, embedder, rerank)
}

/// The daemon's state, shared by the thread answering requests and the watch thread.
struct Daemon {
    index: PathBuf,
    engine: Engine,
    settings: Settings,
    /// The config file's content when the settings were last loaded (`None`: no file).
    config_seen: Option<Vec<u8>>,
    dir: DirId,
    socket: PathBuf,
    socket_ino: Option<u64>,
    /// `--idle-timeout`; otherwise the (reloadable) `[hook] idle_timeout_s`.
    idle_override: Option<Duration>,
    last_request: Instant,
}

impl Daemon {
    /// Whether this daemon no longer serves anything: its index directory was deleted or
    /// replaced, or its socket is gone or another daemon's (no client can reach it then).
    fn orphaned(&self) -> bool {
        dir_id(&self.index) != Some(self.dir) || inode(&self.socket) != self.socket_ino
    }

    fn idle_too_long(&self) -> bool {
        let idle = self.idle_override.unwrap_or(Duration::from_secs(self.settings.hook.idle_timeout_s));
        self.last_request.elapsed() >= idle
    }

    /// Exits, removing the socket only if it is still ours, not one a newer daemon bound since.
    fn exit(&self, why: &str) -> ! {
        eprintln!("engine serve: {why}; exiting");
        if self.socket_ino.is_some() && inode(&self.socket) == self.socket_ino {
            let _ = std::fs::remove_file(&self.socket);
        }
        // As in `hook::finish`: no exit handlers or ONNX Runtime destructors may run under a thread
        // still inside the runtime (the warm-up, or a reindex started before the lock was taken).
        // SAFETY: _exit only ends the process.
        unsafe { libc::_exit(0) }
    }

    /// Exits when orphaned; reloads the settings when the config file changed.
    fn check(&mut self) {
        if self.orphaned() {
            self.exit(&format!("{} was removed or replaced", self.index.display()));
        }
        self.reload_if_changed();
    }

    /// Reloads the settings after the config file changed (content compared: a rewrite can keep
    /// the size and the modification time). Keeps the model unless `[embed]` changed.
    fn reload_if_changed(&mut self) {
        let content = std::fs::read(crate::integrations::prompt::project_config(&self.index)).ok();
        if content == self.config_seen {
            return;
        }
        self.config_seen = content;
        let (settings, warnings) = crate::integrations::prompt::project_settings(&self.index);
        for w in warnings {
            eprintln!("engine serve: {w}");
        }
        if settings == self.settings {
            return;
        }
        let keep = if settings.embed == self.settings.embed { self.engine.embedder().cloned() } else { None };
        match open_engine(&self.index, settings.clone(), keep) {
            Ok(engine) => {
                self.engine = engine;
                self.settings = settings;
            }
            Err(e) => eprintln!("engine serve: config changed but the index could not be reopened: {e}"),
        }
    }

    /// Reads the new generation when one appeared (an index run finished), keeping the model and
    /// the reranker (as the MCP server does).
    fn refresh(&mut self) {
        if let Ok(Some(current)) = crate::index::store::current_generation(&self.index) {
            if current != self.engine.generation_dir() {
                if let Err(e) = self.engine.reopen() {
                    eprintln!("engine serve: could not reopen the index: {e}");
                }
            }
        }
    }
}

fn lock(daemon: &Mutex<Daemon>) -> std::sync::MutexGuard<'_, Daemon> {
    // A request that panicked leaves consistent state behind: every field is replaced whole.
    daemon.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Binds `index/engine.sock` with mode 0600; a live daemon already there is an error, a stale
/// socket file is replaced. Returns the socket's inode, to recognise it as ours later.
fn bind(path: &Path) -> Result<(UnixListener, Option<u64>)> {
    if UnixStream::connect(path).is_ok() {
        return Err(Error::InvalidInput(format!("a daemon already serves {}", path.display())));
    }
    let _ = std::fs::remove_file(path);
    // The socket is born owner-only: bound under a umask of 0177 rather than restricted after the
    // bind, so there is no moment at which it has the default mode.
    // SAFETY: umask only swaps the process's file-creation mask; restored right after.
    let before = unsafe { libc::umask(0o177) };
    let bound = UnixListener::bind(path);
    unsafe { libc::umask(before) };
    let listener = bound.map_err(|e| Error::io(format!("binding {}", path.display()), e))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| Error::io(format!("restricting {}", path.display()), e))?;
    Ok((listener, inode(path)))
}

/// Serves the index at `index` with the project's settings, reloaded when its `engine.toml`
/// changes, until idle for `idle_override` (default: `[hook] idle_timeout_s`) or until the index
/// directory is deleted or replaced.
pub fn serve(index: &Path, idle_override: Option<Duration>) -> Result<()> {
    let index = std::path::absolute(index).map_err(|e| Error::io(format!("resolving {}", index.display()), e))?;
    let dir = dir_id(&index).ok_or_else(|| Error::IndexMissing { path: index.clone() })?;
    let config_seen = std::fs::read(crate::integrations::prompt::project_config(&index)).ok();
    let (settings, warnings) = crate::integrations::prompt::project_settings(&index);
    for w in warnings {
        eprintln!("engine serve: {w}");
    }
    let socket = socket_path(&index);
    let (listener, socket_ino) = bind(&socket)?;
    let engine = open_engine(&index, settings.clone(), None)?;
    let daemon = Arc::new(Mutex::new(Daemon {
        index,
        engine,
        settings,
        config_seen,
        dir,
        socket,
        socket_ino,
        idle_override,
        last_request: Instant::now(),
    }));
    {
        let daemon = daemon.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(WATCH_INTERVAL);
            let mut d = lock(&daemon);
            if d.idle_too_long() {
                d.exit("idle timeout");
            }
            d.check();
        });
    }
    let me = binary_id();
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        let mut d = lock(&daemon);
        d.check();
        if let Err(e) = handle(&mut d, &me, stream) {
            eprintln!("engine serve: {e}");
        }
        d.last_request = Instant::now();
    }
    Ok(())
}

/// The answer to one well-formed request: the index brought up to date first when the client
/// recorded edits, then the prompt's context.
fn answer(d: &mut Daemon, me: &str, r: &Request) -> Response {
    if r.reindex {
        if let Some(embedder) = d.engine.embedder().cloned() {
            match crate::integrations::prompt::reindex(&d.index, &d.settings, embedder.as_ref()) {
                Ok(()) => {}
                // Another run holds the index (a first index, a capture's): the next prompt tries
                // again rather than the edits waiting for the next edit.
                Err(Error::Locked { .. }) => crate::integrations::prompt::defer_reindex(&d.index),
                Err(e) => eprintln!("engine serve: reindex failed: {e}"),
            }
        }
    }
    d.refresh();
    match crate::integrations::prompt::prompt_context(&d.engine, &r.query) {
        Ok(block) => Response { binary: me.into(), context: block.map(|b| b.text), error: None },
        Err(e) => Response { binary: me.into(), context: None, error: Some(e.to_string()) },
    }
}

/// Answers one connection; a bad request gets an error answer, never a crash.
fn handle(d: &mut Daemon, me: &str, stream: UnixStream) -> std::result::Result<(), String> {
    if let Some(why) = stranger(&stream) {
        return Err(format!("refused a client: {why}"));
    }
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut line = String::new();
    // Requests are one line; cap what a client can make us read.
    let mut reader = BufReader::new(std::io::Read::take(&stream, 4 << 20));
    reader.read_line(&mut line).map_err(|e| format!("read: {e}"))?;
    let error = |e: String| Response { binary: me.into(), context: None, error: Some(e) };
    let resp = match serde_json::from_str::<Request>(&line) {
        Err(e) => error(format!("bad request: {e}")),
        Ok(r) if r.binary != me => error("another build".into()),
        // A panic while answering (a damaged file a dependency asserts on) costs this request,
        // never the daemon.
        Ok(r) => crate::error::catch_panic(|| answer(d, me, &r))
            .unwrap_or_else(|why| error(format!("the search stopped ({why})"))),
    };
    let out = serde_json::to_string(&resp).map_err(|e| e.to_string())?;
    (&stream).write_all(format!("{out}\n").as_bytes()).map_err(|e| format!("write: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Source;
    use crate::HashEmbedder;

    /// A daemon's state over a one-file project indexed with the hashing fake (no socket bound).
    fn daemon_on(root: &Path) -> Daemon {
        std::fs::write(root.join("a.md"), "# Sessions\n\nSessions live in Redis.\n").unwrap();
        let index = root.join(".engine");
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(16));
        let source = Source::Dir(root.to_path_buf());
        crate::index::build(&index, &source, &Settings::default(), embedder.as_ref(), &Default::default()).unwrap();
        let engine = Engine::with_embedder(&index, Settings::default(), Some(embedder), None).unwrap();
        Daemon {
            dir: dir_id(&index).unwrap(),
            socket: socket_path(&index),
            index,
            engine,
            settings: Settings::default(),
            config_seen: None,
            socket_ino: None,
            idle_override: None,
            last_request: Instant::now(),
        }
    }

    #[test]
    fn config_edits_and_deletion_are_picked_up_keeping_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = daemon_on(dir.path());
        let model = d.engine.embedder().cloned().unwrap();
        let config = dir.path().join("engine.toml");
        std::fs::write(&config, "[hook]\nk = 3\n").unwrap();
        d.reload_if_changed();
        assert_eq!((d.settings.hook.k, d.engine.settings.hook.k), (3, 3));
        assert!(Arc::ptr_eq(d.engine.embedder().unwrap(), &model), "[embed] unchanged: the model is kept");
        // Fixed to another bad value: that section falls back to its defaults.
        std::fs::write(&config, "[hook]\nk = 1000000000000\n").unwrap();
        d.reload_if_changed();
        assert_eq!(d.engine.settings.hook, crate::config::HookConfig::default());
        std::fs::write(&config, "[context]\noutput_mode = \"legacy\"\n").unwrap();
        d.reload_if_changed();
        assert_eq!(d.engine.settings.context.output_mode, crate::config::OutputMode::Legacy);
        std::fs::remove_file(&config).unwrap();
        d.reload_if_changed();
        assert_eq!(d.engine.settings, Settings::default(), "no file: the defaults again");
    }

    #[test]
    fn edits_the_daemon_cannot_reindex_while_another_run_holds_the_index_stay_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let mut d = daemon_on(dir.path());
        let pending = d.index.join(crate::integrations::prompt::PENDING);
        let ask = |d: &mut Daemon| {
            let (mut client, server) = UnixStream::pair().unwrap();
            let request = Request { binary: "me".into(), query: "where do sessions live".into(), reindex: true };
            writeln!(client, "{}", serde_json::to_string(&request).unwrap()).unwrap();
            handle(d, "me", server).unwrap();
        };
        ask(&mut d);
        assert!(!pending.exists(), "an index nobody else holds is reindexed: nothing left over");
        let lock = crate::index::store::WriterLock::acquire(&d.index).unwrap();
        ask(&mut d);
        drop(lock);
        let left = std::fs::read_to_string(&pending).unwrap();
        assert!(left.contains("deferred"), "the next prompt reindexes instead: {left:?}");
    }

    #[test]
    fn a_deleted_or_replaced_index_directory_orphans_the_daemon() {
        let dir = tempfile::tempdir().unwrap();
        let d = daemon_on(dir.path());
        assert!(!d.orphaned());
        let moved = dir.path().join("old-index");
        std::fs::rename(&d.index, &moved).unwrap();
        assert!(d.orphaned(), "deleted (moved away)");
        std::fs::create_dir(&d.index).unwrap();
        assert!(d.orphaned(), "replaced by a new directory at the same path");
    }
}
