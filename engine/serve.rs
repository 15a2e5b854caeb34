//! `engine serve`: a warm daemon for the hook. A hook process per prompt would pay the model load
//! (~0.4 s) every time; the daemon keeps the index and the model loaded and answers on a Unix
//! socket in the index directory (owner-only). One JSON line per request and per answer. It
//! reopens the index when a new generation appears, survives bad requests, refuses clients built
//! from a different binary (they fall back to searching in process), and exits after an idle
//! timeout.

use crate::error::{Error, Result};
use crate::search::Engine;
use crate::Settings;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The socket's name inside the index directory.
pub const SOCKET: &str = "engine.sock";

pub fn socket_path(index: &Path) -> PathBuf {
    index.join(SOCKET)
}

/// Identifies this build: version plus the executable's size and modification time, so a rebuilt
/// binary never talks to a daemon started from the old one.
pub fn binary_id() -> String {
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
pub struct Request {
    pub binary: String,
    pub query: String,
    /// Files were edited since the last reindex: bring the index up to date before searching
    /// (the daemon has the model loaded, so a few changed files take milliseconds).
    #[serde(default)]
    pub reindex: bool,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Response {
    pub binary: String,
    #[serde(default)]
    pub context: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
}

/// Starts a command detached from the hook (own session, no stdio), not waited for.
pub fn detach(cmd: &mut std::process::Command) -> std::io::Result<()> {
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

/// Starts `engine serve` for an index in the background.
pub fn spawn(index: &Path) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    detach(std::process::Command::new(exe).arg("serve").arg("--index").arg(index))
}

/// Asks the daemon for a prompt's context before `deadline`. `Err(why)` when there is no usable
/// daemon (the caller searches in process); a missing or refusing socket also starts one.
pub fn ask(index: &Path, query: &str, reindex: bool, deadline: Instant) -> std::result::Result<Option<String>, String> {
    let path = socket_path(index);
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
    BufReader::new(&stream).read_line(&mut answer).map_err(|e| format!("daemon did not answer in time ({e})"))?;
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
pub fn stranger(stream: &UnixStream) -> Option<String> {
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

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Serves until idle for `idle`. Binds `index/engine.sock` with mode 0600; a live daemon already
/// there is an error, a stale socket file is replaced.
pub fn serve(index: &Path, settings: Settings, idle: Duration) -> Result<()> {
    let path = socket_path(index);
    if UnixStream::connect(&path).is_ok() {
        return Err(Error::InvalidInput(format!("a daemon already serves {}", path.display())));
    }
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|e| Error::io(format!("binding {}", path.display()), e))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::io(format!("restricting {}", path.display()), e))?;
    }
    let inode = |p: &Path| std::fs::metadata(p).map(|m| std::os::unix::fs::MetadataExt::ino(&m)).ok();
    let ours = inode(&path);
    let mut engine = Engine::open(index, settings.clone())?;
    engine.warm_up()?;
    let me = binary_id();
    let last = Arc::new(AtomicU64::new(now_secs()));
    {
        let (last, path) = (last.clone(), path.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            if now_secs().saturating_sub(last.load(Ordering::Relaxed)) >= idle.as_secs() {
                // Only remove the socket if it is still ours, not one a newer daemon bound since.
                if ours.is_some() && inode(&path) == ours {
                    let _ = std::fs::remove_file(&path);
                }
                std::process::exit(0);
            }
        });
    }
    for conn in listener.incoming() {
        let Ok(stream) = conn else { continue };
        last.store(now_secs(), Ordering::Relaxed);
        if let Err(e) = handle(&mut engine, index, &settings, &me, stream) {
            eprintln!("engine serve: {e}");
        }
        last.store(now_secs(), Ordering::Relaxed);
    }
    Ok(())
}

/// Reopens the engine when a new generation appeared (an index run finished), keeping the model.
fn refresh(engine: &mut Engine, index: &Path, settings: &Settings) {
    if let Ok(Some(current)) = crate::index::store::current_generation(index) {
        if current != engine.generation_dir() {
            match Engine::with_embedder(index, settings.clone(), engine.embedder().cloned(), None) {
                Ok(e) => *engine = e.with_configured_reranker(),
                Err(e) => eprintln!("engine serve: could not reopen the index: {e}"),
            }
        }
    }
}

/// Answers one connection; a bad request gets an error answer, never a crash.
fn handle(
    engine: &mut Engine,
    index: &Path,
    settings: &Settings,
    me: &str,
    stream: UnixStream,
) -> std::result::Result<(), String> {
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
        Ok(r) => {
            if r.reindex {
                if let Some(embedder) = engine.embedder().cloned() {
                    if let Err(e) = crate::hook::reindex(index, settings, embedder.as_ref()) {
                        eprintln!("engine serve: reindex failed: {e}");
                    }
                }
            }
            refresh(engine, index, settings);
            match crate::hook::prompt_context(engine, &r.query) {
                Ok(block) => Response { binary: me.into(), context: block.map(|b| b.text), error: None },
                Err(e) => error(e.to_string()),
            }
        }
    };
    let out = serde_json::to_string(&resp).map_err(|e| e.to_string())?;
    (&stream).write_all(format!("{out}\n").as_bytes()).map_err(|e| format!("write: {e}"))
}
