//! The warm daemon answering `engine search` and prompts side by side: the same output as the
//! command in its own process (stdout, stderr and exit code, every format), and a client that
//! connects and sends nothing holds up no one else.

use crate::common::*;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// `engine serve` on `index`, in the environment `engine()` gives the commands, once it answers.
fn serve(index: &Path) -> Child {
    let daemon = Command::new(bin())
        .args(["serve", "--index", index.to_str().unwrap()])
        .env_remove("ENGINE_MODELS_DIR")
        .env_remove("ORT_DYLIB_PATH")
        .spawn()
        .unwrap();
    // The guard only keeps a broken daemon from hanging the suite; nothing here is timed.
    let t = Instant::now();
    while serving(index).is_null() {
        assert!(t.elapsed() < Duration::from_secs(180), "the daemon never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
    daemon
}

/// What `engine status --json` says of the daemon (null: none of this build answers).
fn serving(index: &Path) -> serde_json::Value {
    let (code, out, err) = engine(&["status", "--json", "--index", index.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    json(&out)["daemon"].clone()
}

/// The output with the timings (different on every run) left out of JSON.
fn steady(out: &str) -> String {
    fn strip(v: &mut serde_json::Value) {
        if let Some(o) = v.as_object_mut() {
            o.remove("timings_ms");
            o.values_mut().for_each(strip);
        } else if let Some(a) = v.as_array_mut() {
            a.iter_mut().for_each(strip);
        }
    }
    match serde_json::from_str::<serde_json::Value>(out) {
        Ok(mut v) => {
            strip(&mut v);
            v.to_string()
        }
        Err(_) => out.to_string(),
    }
}

#[test]
fn search_prints_the_same_with_and_without_the_warm_daemon() {
    let p = project("[hook]\nidle_timeout_s = 120\n");
    let index = p.path().join(".engine");
    let i = index.to_str().unwrap();
    let q = "why did we move sessions to redis?";
    let cases: Vec<Vec<&str>> = vec![
        vec!["search", q, "--index", i],
        vec!["search", q, "--json", "--index", i],
        vec!["search", q, "--json", "--explain", "-k", "3", "--index", i],
        vec!["search", q, "--format", "context", "--index", i],
        vec!["search", q, "--format", "context", "--json", "--index", i],
        vec!["search", "SessionStore::invalidate_user", "--mode", "bm25", "--json", "--index", i],
        vec!["search", "zzqx unknownword", "--mode", "vector", "--index", i],
        // Errors: an empty query, a missing index.
        vec!["search", "  ", "--index", i],
        vec!["search", q, "--index", "/proc/no-such-index"],
    ];
    assert!(serving(&index).is_null(), "no daemon yet");
    let alone: Vec<_> = cases.iter().map(|args| engine(args, None)).collect();
    assert!(alone[..7].iter().all(|(code, _, _)| *code == 0), "{alone:?}");
    assert!(alone[7..].iter().all(|(code, _, _)| *code != 0), "{alone:?}");
    let mut daemon = serve(&index);
    for (args, (code, out, err)) in cases.iter().zip(&alone) {
        let (c, o, e) = engine_with_daemon(args, None);
        assert_eq!((c, steady(&o), e.as_str()), (*code, steady(out), err.as_str()), "{args:?}");
    }
    // The seven searches were the daemon's to answer (the errors are found before asking it).
    assert_eq!(serving(&index)["searches"], 7, "{}", serving(&index));
    // --no-daemon and [search] daemon = false: searched here, the daemon not asked.
    let (code, out, _) = engine_with_daemon(&["search", q, "--json", "--no-daemon", "--index", i], None);
    assert_eq!((code, steady(&out)), (alone[1].0, steady(&alone[1].1)));
    let config = p.path().join("off.toml");
    std::fs::write(&config, "[search]\ndaemon = false\n").unwrap();
    let (code, _, _) = engine_with_daemon(&["search", q, "--config", config.to_str().unwrap(), "--index", i], None);
    assert_eq!(code, 0);
    assert_eq!(serving(&index)["searches"], 7);
    daemon.kill().unwrap();
    let _ = daemon.wait();
}

#[test]
fn a_connection_that_sends_nothing_does_not_hold_up_prompts_or_searches() {
    let p = project("[hook]\nidle_timeout_s = 120\ndeadline_ms = 600000\n");
    let index = p.path().join(".engine");
    let mut daemon = serve(&index);
    // Connected and silent for as long as the others take: a daemon answering one connection at
    // a time would wait on it until its read timed out and it was closed.
    let idle = std::os::unix::net::UnixStream::connect(index.join("engine.sock")).unwrap();
    let (code, out, err) = hook(&prompt(p.path(), "why did we move sessions off memcached?"), &["--plain"], &[]);
    assert_eq!((code, err.as_str()), (0, ""), "answered by the daemon, not in process after a wait");
    assert!(out.contains("decision-session-store.json"), "{out}");
    let (code, out, err) =
        engine_with_daemon(&["search", "session store", "--json", "--index", index.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    assert!(json(&out)["results"].as_array().is_some_and(|r| !r.is_empty()), "{out}");
    let now = serving(&index);
    assert_eq!((now["prompts"].as_u64(), now["searches"].as_u64()), (Some(1), Some(1)), "{now}");
    // The silent client still has its connection, and an answer once it speaks.
    (&idle).write_all(b"not json\n").unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut answer = String::new();
    BufReader::new(&idle).read_line(&mut answer).unwrap();
    assert!(json(&answer)["error"].as_str().is_some_and(|e| e.starts_with("bad request")), "{answer}");
    daemon.kill().unwrap();
    let _ = daemon.wait();
}
