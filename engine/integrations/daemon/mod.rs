//! `engine serve`: a warm daemon for the hook and `engine search`. A process per prompt or per
//! search would pay the model load every time; the daemon keeps the index and the model loaded
//! and answers on a Unix socket in the index directory (owner-only). One JSON line per request and
//! per answer. Connections are answered side by side, each on a thread of its own, with at most a
//! few searches running at once ([`state::Permits`]): a client that connects and sends nothing
//! costs only its own connection. It reopens the index when a new generation appears, reloads its
//! settings when the project's `engine.toml` changes, survives bad requests, refuses clients built
//! from a different binary (they fall back to searching in process), and exits after an idle
//! timeout or as soon as its index directory is deleted or replaced (a stale daemon would otherwise
//! answer beside the new one).

pub(crate) mod search;
mod state;

use crate::error::{Error, Result};
use search::{Failure, Printed, SearchCall};
use serde::{Deserialize, Serialize};
use state::Daemon;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
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

/// One request: a prompt's context (the hook), a search (`engine search`), or how the daemon is
/// doing (`engine status`).
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Request {
    pub binary: String,
    /// The prompt's query (the hook).
    #[serde(default)]
    pub query: String,
    /// Files were edited since the last reindex: bring the index up to date before searching
    /// (the daemon has the model loaded, so a few changed files take milliseconds).
    #[serde(default)]
    pub reindex: bool,
    /// `engine search`, answered as the command would answer it in its own process.
    #[serde(default)]
    pub search: Option<SearchCall>,
    /// The client's `ENGINE_MODELS_DIR`: a search is answered only with the models it would load.
    #[serde(default)]
    pub models: Option<String>,
    /// Only say how the daemon is doing.
    #[serde(default)]
    pub status: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct Response {
    pub binary: String,
    #[serde(default)]
    pub context: Option<String>,
    /// Why the request was not answered (the client then answers in its own process).
    #[serde(default)]
    pub error: Option<String>,
    /// What the search prints.
    #[serde(default)]
    pub printed: Option<Printed>,
    /// The search failed, as it would have in the client's process.
    #[serde(default)]
    pub failed: Option<Failure>,
    #[serde(default)]
    pub serving: Option<Serving>,
}

/// How a daemon is doing, for `engine status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Serving {
    /// Its process id.
    pub pid: u32,
    /// Seconds since it started.
    pub up_s: u64,
    /// Prompts answered (the hook).
    pub prompts: u64,
    /// Searches answered (`engine search`).
    pub searches: u64,
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

/// How long `engine search` waits for the daemon's answer: as long as a search in its own process
/// could take (a cross-encoder reranks for up to `[rerank] deadline_ms`, a daemon just started
/// loads the model first); a daemon slower than that is taken for hung and replaced.
const SEARCH_WAIT: Duration = Duration::from_secs(10);

/// How long `engine status` waits to hear how the daemon is doing.
const STATUS_WAIT: Duration = Duration::from_secs(2);

/// Sends one request and reads the answer before `deadline`. `Err(why)` when there is no usable
/// daemon. With `start`, a missing or refusing socket starts one for the next requests, and a
/// daemon that does not answer in time (stopped, hung) is replaced: its socket is taken away, so
/// it exits when it wakes.
fn call(index: &Path, request: &Request, deadline: Instant, start: bool) -> std::result::Result<Response, String> {
    let path = socket_path(index);
    let socket_ino = inode(&path);
    let mut stream = match UnixStream::connect(&path) {
        Ok(s) => s,
        Err(e) if !start => return Err(format!("no daemon on {} ({e})", path.display())),
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
    let line = serde_json::to_string(request).map_err(|e| e.to_string())?;
    stream.write_all(format!("{line}\n").as_bytes()).map_err(|e| format!("daemon write: {e}"))?;
    let mut answer = String::new();
    if let Err(e) = BufReader::new(&stream).read_line(&mut answer) {
        if !start {
            return Err(format!("the daemon did not answer in time ({e})"));
        }
        // Only the socket this client talked to: a daemon that replaced it since keeps its own.
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
    if resp.binary != request.binary {
        return Err(format!("daemon runs another build ({}); searched in process", resp.binary));
    }
    Ok(resp)
}

/// Asks the daemon for a prompt's context before `deadline`. `Err(why)` when there is no usable
/// daemon (the caller searches in process); a missing or refusing socket also starts one, and a
/// daemon that does not answer in time is replaced.
pub fn ask(index: &Path, query: &str, reindex: bool, deadline: Instant) -> std::result::Result<Option<String>, String> {
    let request = Request { binary: binary_id(), query: query.to_string(), reindex, ..Request::default() };
    let resp = call(index, &request, deadline, true)?;
    match resp.error {
        Some(e) => Err(format!("daemon: {e}")),
        None => Ok(resp.context),
    }
}

/// Has the daemon answer `engine search`: what to print, or the search's own failure. `Err(why)`
/// when no daemon of this build can answer it exactly as the command would (it then searches in
/// its own process); as for the hook, a missing daemon is started for the next search.
pub(crate) fn search(
    index: &Path,
    call_: &SearchCall,
) -> std::result::Result<std::result::Result<Printed, Failure>, String> {
    // Settings that would not come back equal from their JSON are not sent: the daemon would
    // answer another search.
    let trip = serde_json::to_value(&call_.settings).and_then(serde_json::from_value::<crate::Settings>);
    if trip.as_ref().ok() != Some(&call_.settings) {
        return Err("the settings do not survive the trip to the daemon".into());
    }
    let request = Request {
        binary: binary_id(),
        search: Some(call_.clone()),
        models: std::env::var("ENGINE_MODELS_DIR").ok(),
        ..Request::default()
    };
    let resp = call(index, &request, Instant::now() + SEARCH_WAIT, true)?;
    match (resp.printed, resp.failed, resp.error) {
        (Some(printed), _, _) => Ok(Ok(printed)),
        (None, Some(failed), _) => Ok(Err(failed)),
        (None, None, why) => Err(why.unwrap_or_else(|| "the daemon gave no answer".into())),
    }
}

/// How the daemon of this build serving `index` is doing; `None` when none answers. Never starts one.
pub(crate) fn serving(index: &Path) -> Option<Serving> {
    let request = Request { binary: binary_id(), status: true, ..Request::default() };
    call(index, &request, Instant::now() + STATUS_WAIT, false).ok()?.serving
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

/// How long a connection may take to send its request line. Connections are answered side by
/// side, so a slow or idle client holds only its own thread until then.
const READ_WAIT: Duration = Duration::from_secs(30);

/// Connections open at once at most; past it a client is told the daemon is busy (it then answers
/// in its own process) rather than queued behind clients that send nothing.
const MAX_CONNECTIONS: usize = 64;

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
    let socket = socket_path(&index);
    let (listener, _) = bind(&socket)?;
    let daemon = Arc::new(Daemon::open(index, dir, socket, idle_override)?);
    {
        let daemon = daemon.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(WATCH_INTERVAL);
            if daemon.idle_too_long() {
                daemon.exit("idle timeout");
            }
            daemon.check();
        });
    }
    accept(&listener, &daemon, binary_id().into());
    Ok(())
}

/// Answers every connection on a thread of its own, [`MAX_CONNECTIONS`] at most.
fn accept(listener: &UnixListener, daemon: &Arc<Daemon>, me: Arc<str>) {
    let open = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        if open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            busy(&me, stream);
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        let (daemon, me, done) = (daemon.clone(), me.clone(), open.clone());
        let spawned = std::thread::Builder::new().name("engine-conn".into()).spawn(move || {
            if let Err(e) = handle(&daemon, &me, stream) {
                eprintln!("engine serve: {e}");
            }
            done.fetch_sub(1, Ordering::SeqCst);
        });
        if let Err(e) = spawned {
            // The stream went down with the closure: that client answers in its own process.
            open.fetch_sub(1, Ordering::SeqCst);
            eprintln!("engine serve: no thread for a connection ({e})");
        }
    }
}

/// Tells a client over [`MAX_CONNECTIONS`] to answer in its own process.
fn busy(me: &str, stream: UnixStream) {
    let resp = Response { binary: me.into(), error: Some("busy: too many connections".into()), ..Response::default() };
    let _ = stream.set_write_timeout(Some(Duration::from_millis(100)));
    if let Ok(out) = serde_json::to_string(&resp) {
        let _ = (&stream).write_all(format!("{out}\n").as_bytes());
    }
}

/// The answer to one well-formed request.
fn answer(d: &Daemon, me: &str, r: &Request) -> Response {
    let ok = |resp: Response| Response { binary: me.into(), ..resp };
    if r.status {
        let serving = Serving {
            pid: std::process::id(),
            up_s: d.started.elapsed().as_secs(),
            prompts: d.prompts.load(Ordering::SeqCst),
            searches: d.searches.load(Ordering::SeqCst),
        };
        return ok(Response { serving: Some(serving), ..Response::default() });
    }
    if let Some(call) = &r.search {
        if r.models != std::env::var("ENGINE_MODELS_DIR").ok() {
            return ok(Response {
                error: Some("the search's ENGINE_MODELS_DIR is not the daemon's".into()),
                ..Response::default()
            });
        }
        d.refresh();
        return match d.search(call) {
            Ok(done) => {
                d.searches.fetch_add(1, Ordering::SeqCst);
                let (printed, failed) = match done {
                    Ok(p) => (Some(p), None),
                    Err(f) => (None, Some(f)),
                };
                ok(Response { printed, failed, ..Response::default() })
            }
            Err(why) => ok(Response { error: Some(why), ..Response::default() }),
        };
    }
    // A prompt: the index brought up to date first when the client recorded edits.
    if r.reindex {
        d.reindex();
    }
    d.refresh();
    let engine = d.engine();
    let _permit = d.permits.acquire();
    // The hook waits for this answer its share of its deadline; the search backend, if any, no
    // longer than that either.
    let hook = &engine.settings.hook;
    let share = std::time::Duration::from_millis((hook.deadline_ms as f32 * hook.daemon_share) as u64);
    let deadline = std::time::Instant::now() + share;
    let resp = match crate::integrations::prompt::prompt_context(&engine, &r.query, Some(deadline)) {
        Ok(block) => Response { context: block.map(|b| b.text), ..Response::default() },
        Err(e) => Response { error: Some(e.to_string()), ..Response::default() },
    };
    d.prompts.fetch_add(1, Ordering::SeqCst);
    ok(resp)
}

/// Answers one connection; a bad request gets an error answer, never a crash.
fn handle(d: &Daemon, me: &str, stream: UnixStream) -> std::result::Result<(), String> {
    if let Some(why) = stranger(&stream) {
        return Err(format!("refused a client: {why}"));
    }
    let _ = stream.set_read_timeout(Some(READ_WAIT));
    let mut line = String::new();
    // Requests are one line; cap what a client can make us read.
    let mut reader = BufReader::new(std::io::Read::take(&stream, 4 << 20));
    reader.read_line(&mut line).map_err(|e| format!("read: {e}"))?;
    d.touch();
    d.check();
    let error = |e: String| Response { binary: me.into(), error: Some(e), ..Response::default() };
    let resp = match serde_json::from_str::<Request>(&line) {
        Err(e) => error(format!("bad request: {e}")),
        Ok(r) if r.binary != me => error("another build".into()),
        // A panic while answering (a damaged file a dependency asserts on) costs this request,
        // never the daemon.
        Ok(r) => crate::error::catch_panic(|| answer(d, me, &r))
            .unwrap_or_else(|why| error(format!("the search stopped ({why})"))),
    };
    d.touch();
    let out = serde_json::to_string(&resp).map_err(|e| e.to_string())?;
    (&stream).write_all(format!("{out}\n").as_bytes()).map_err(|e| format!("write: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::Embedder;
    use crate::ingest::Source;
    use crate::search::Engine;
    use crate::{HashEmbedder, Settings};

    /// A daemon's state over a one-file project indexed with the hashing fake (no socket bound).
    fn daemon_on(root: &Path) -> Daemon {
        std::fs::write(root.join("a.md"), "# Sessions\n\nSessions live in Redis.\n").unwrap();
        let index = root.join(".engine");
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(16));
        let source = Source::Dir(root.to_path_buf());
        crate::index::build(&index, &source, &Settings::default(), embedder.as_ref(), &Default::default()).unwrap();
        let engine = Engine::with_embedder(&index, Settings::default(), Some(embedder), None).unwrap();
        let (dir, socket) = (dir_id(&index).unwrap(), socket_path(&index));
        Daemon::with_engine(index, dir, socket, None, engine, Settings::default(), None)
    }

    #[test]
    fn config_edits_and_deletion_are_picked_up_keeping_the_model() {
        let dir = tempfile::tempdir().unwrap();
        let d = daemon_on(dir.path());
        let model = d.engine().embedder().cloned().unwrap();
        let config = dir.path().join("engine.toml");
        std::fs::write(&config, "[hook]\nk = 3\n").unwrap();
        d.reload_if_changed();
        assert_eq!((d.settings().hook.k, d.engine().settings.hook.k), (3, 3));
        assert!(Arc::ptr_eq(d.engine().embedder().unwrap(), &model), "[embed] unchanged: the model is kept");
        // Fixed to another bad value: that section falls back to its defaults.
        std::fs::write(&config, "[hook]\nk = 1000000000000\n").unwrap();
        d.reload_if_changed();
        assert_eq!(d.engine().settings.hook, crate::config::HookConfig::default());
        std::fs::write(&config, "[context]\noutput_mode = \"legacy\"\n").unwrap();
        d.reload_if_changed();
        assert_eq!(d.engine().settings.context.output_mode, crate::config::OutputMode::Legacy);
        std::fs::remove_file(&config).unwrap();
        d.reload_if_changed();
        assert_eq!(d.engine().settings, Settings::default(), "no file: the defaults again");
    }

    fn request(query: &str, reindex: bool) -> String {
        let request = Request { binary: "me".into(), query: query.into(), reindex, ..Request::default() };
        serde_json::to_string(&request).unwrap() + "\n"
    }

    #[test]
    fn edits_the_daemon_cannot_reindex_while_another_run_holds_the_index_stay_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let d = daemon_on(dir.path());
        let pending = d.index.join(crate::integrations::prompt::PENDING);
        let ask = |d: &Daemon| {
            let (mut client, server) = UnixStream::pair().unwrap();
            client.write_all(request("where do sessions live", true).as_bytes()).unwrap();
            handle(d, "me", server).unwrap();
        };
        ask(&d);
        assert!(!pending.exists(), "an index nobody else holds is reindexed: nothing left over");
        let lock = crate::index::store::WriterLock::acquire(&d.index).unwrap();
        ask(&d);
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

    /// One answer line read from a connection, with a generous guard against hanging the suite
    /// (not a measured latency).
    fn answer_of(stream: &UnixStream) -> Response {
        stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    #[test]
    fn a_client_that_sends_nothing_holds_up_no_one_else() {
        let dir = tempfile::tempdir().unwrap();
        let daemon = Arc::new(daemon_on(dir.path()));
        let socket = dir.path().join("test.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        {
            let daemon = daemon.clone();
            std::thread::spawn(move || accept(&listener, &daemon, "me".into()));
        }
        // Connected, silent: a daemon answering one connection at a time would wait on it.
        let idle = UnixStream::connect(&socket).unwrap();
        for _ in 0..3 {
            let mut other = UnixStream::connect(&socket).unwrap();
            other.write_all(request("where do sessions live", false).as_bytes()).unwrap();
            let resp = answer_of(&other);
            assert_eq!(
                (resp.binary.as_str(), resp.error),
                ("me", None),
                "answered while the first client says nothing"
            );
        }
        // The silent client still has its connection, and an answer once it asks.
        (&idle).write_all(request("where do sessions live", false).as_bytes()).unwrap();
        assert_eq!(answer_of(&idle).error, None);
        assert_eq!(daemon.prompts.load(Ordering::SeqCst), 4);
    }
}
