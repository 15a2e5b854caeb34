//! How far a running indexing run's embedding has got. The live generation holds the vectors it
//! was published with until the run publishes the next (its text goes live first, so search
//! answers while the model works), so `engine status` would read "0 of 2,277" while the run's
//! bar says 1,472. The run writes its count here after each batch; `status` and `search` read it
//! while the run that wrote it is alive and its generation is the live one.

use super::store;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file, in the index directory (beside `CURRENT` and `lock`, outside every generation).
pub(crate) const FILE: &str = "embedding.json";

/// An indexing run's embedding, as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Embedding {
    /// Texts embedded so far by the run (what its progress bar shows).
    pub done: usize,
    /// Texts the run has to embed.
    pub total: usize,
    /// The generation the run made live with its text, whose vectors are on the way.
    pub generation: u64,
    /// The process running it.
    pub pid: u32,
}

/// Writes the run's progress as it goes, and removes the file when the run ends (or fails).
pub(crate) struct Writer {
    path: PathBuf,
    generation: u64,
}

impl Writer {
    /// The progress of the run whose text generation is `generation`, in `index_dir`.
    pub fn new(index_dir: &Path, generation: u64) -> Writer {
        Writer { path: index_dir.join(FILE), generation }
    }

    /// Records `done` of `total`. Progress is news, not data: a failed write is left unsaid.
    pub fn write(&self, done: usize, total: usize) {
        let e = Embedding { done, total, generation: self.generation, pid: std::process::id() };
        if let Ok(bytes) = serde_json::to_vec(&e) {
            let tmp = self.path.with_extension(format!("{}.tmp", std::process::id()));
            if std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &self.path)).is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The embedding of the run indexing `index_dir` now, if one is under way: its file is there, the
/// process that wrote it is alive, and its text generation is the live one (once the run
/// publishes every vector, or before its text went live, the live generation says it all).
pub fn embedding(index_dir: &Path) -> Option<Embedding> {
    let e: Embedding = serde_json::from_slice(&std::fs::read(index_dir.join(FILE)).ok()?).ok()?;
    let live = store::current_generation(index_dir).ok()??;
    let name = store::gen_name(e.generation);
    (live.file_name().is_some_and(|n| n == name.as_str()) && alive(e.pid)).then_some(e)
}

/// Whether a process with this id exists (one of another user's counts: it cannot be signalled).
fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else { return false };
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    unsafe { libc::kill(pid, 0) == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_only_while_its_run_and_generation_are_live() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(store::CURRENT), store::gen_name(3)).unwrap();
        std::fs::create_dir(dir.path().join(store::gen_name(3))).unwrap();
        assert_eq!(embedding(dir.path()), None, "no run");
        let w = Writer::new(dir.path(), 3);
        w.write(64, 100);
        let got = embedding(dir.path()).unwrap();
        assert_eq!((got.done, got.total, got.pid), (64, 100, std::process::id()));
        // Another generation went live (the run's full one): the live index says it all.
        std::fs::write(dir.path().join(store::CURRENT), store::gen_name(4)).unwrap();
        std::fs::create_dir(dir.path().join(store::gen_name(4))).unwrap();
        assert_eq!(embedding(dir.path()), None);
        // A run that died: its file is stale.
        std::fs::write(dir.path().join(store::CURRENT), store::gen_name(3)).unwrap();
        let dead = Embedding { done: 1, total: 2, generation: 3, pid: i32::MAX as u32 };
        std::fs::write(dir.path().join(FILE), serde_json::to_vec(&dead).unwrap()).unwrap();
        assert_eq!(embedding(dir.path()), None);
        drop(w);
        assert!(!dir.path().join(FILE).exists(), "the run's end removes it");
    }
}
