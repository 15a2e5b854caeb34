//! Indexing end to end with the real model: incremental runs, compatibility, the writer lock,
//! and crash safety under SIGKILL.

use crate::common::*;
use std::path::Path;

fn index_json(root: &Path, index: &Path) -> serde_json::Value {
    let (code, out, err) =
        engine(&["index", root.to_str().unwrap(), "--index", index.to_str().unwrap(), "--json"], None);
    assert_eq!(code, 0, "{err}");
    json(&out)
}

#[test]
fn reindexing_touches_only_what_changed() {
    let corpus = sample_copy();
    let idx = tempfile::tempdir().unwrap();
    let first = index_json(corpus.path(), idx.path());
    assert!(first["files_changed"].as_u64().unwrap() >= 10, "{first}");
    assert_eq!(first["files_removed"], 0);
    assert!(first["chunks_added"].as_u64().unwrap() >= first["files_changed"].as_u64().unwrap());
    for key in ["walk", "chunk", "embed", "bm25", "vector", "total"] {
        assert!(first["seconds"][key].is_f64(), "{key} in {first}");
    }

    let again = index_json(corpus.path(), idx.path());
    assert_eq!(
        (again["files_changed"].as_u64(), again["chunks_embedded"].as_u64(), again["chunks_added"].as_u64()),
        (Some(0), Some(0), Some(0)),
        "{again}"
    );

    // Edit one file, delete one, add one.
    let p = corpus.path();
    let conv = std::fs::read_to_string(p.join("docs/conventions.md")).unwrap();
    std::fs::write(p.join("docs/conventions.md"), conv.replace("72 characters", "50 characters")).unwrap();
    std::fs::remove_file(p.join("src/thumbnails.go")).unwrap();
    std::fs::write(p.join("docs/oncall.md"), "# On-call\n\nThe pager rotation changes every Wednesday at noon.\n")
        .unwrap();
    let third = index_json(p, idx.path());
    assert_eq!(third["files_changed"], 2, "{third}");
    assert_eq!(third["files_removed"], 1, "{third}");
    assert!(third["chunks_removed"].as_u64().unwrap() >= 2, "{third}");
    // Unchanged sections of the edited file come from the cache.
    assert!(third["chunks_cached"].as_u64().unwrap() >= 1, "{third}");

    let (code, out, err) =
        engine(&["search", "pager rotation wednesday", "--index", idx.path().to_str().unwrap(), "--json"], None);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["results"][0]["path"], "docs/oncall.md", "{v}");
    let (_, out, _) = engine(&["search", "ThumbnailJob", "--index", idx.path().to_str().unwrap(), "--json"], None);
    assert!(!out.contains("thumbnails.go"), "deleted file still indexed: {out}");

    let (code, out, err) = engine(&["status", "--index", idx.path().to_str().unwrap(), "--json"], None);
    assert_eq!(code, 0, "{err}");
    let st = json(&out);
    assert_eq!(st["documents"], first["files_changed"]);
    assert!(st["by_kind"]["memory"]["documents"].as_u64().unwrap() == 3, "{st}");
    assert!(st["by_lang"]["rust"]["chunks"].as_u64().unwrap() >= 1, "{st}");
    // In text, when it was written reads as a date and an age, not unix seconds.
    let (code, out, err) = engine(&["status", "--index", idx.path().to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    let line = out.lines().find(|l| l.starts_with("updated")).unwrap_or_else(|| panic!("{out}"));
    let date =
        regex::Regex::new(r"^updated +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+ (s|min|h) ago\), generation \d+$")
            .unwrap();
    assert!(date.is_match(line), "{line}");
}

#[test]
fn the_index_keeps_itself_out_of_git() {
    let project = sample_copy();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").args(args).current_dir(project.path()).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q"]);
    let (code, _, err) = engine(&["index", project.path().to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(project.path().join(".engine/.gitignore")).unwrap(), "*\n");
    let status = git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains(".engine"), "{status}");
    assert!(status.contains(".claude/memory/"), "memory records stay for review: {status}");
}

#[test]
fn an_index_from_another_model_asks_for_a_rebuild() {
    let corpus = sample_copy();
    let idx = tempfile::tempdir().unwrap();
    index_json(corpus.path(), idx.path());
    let current = std::fs::read_to_string(idx.path().join("CURRENT")).unwrap();
    let meta_path = idx.path().join(current.trim()).join("meta.json");
    let meta = std::fs::read_to_string(&meta_path).unwrap().replace("all-MiniLM-L6-v2-int8", "some-other-model");
    std::fs::write(&meta_path, &meta).unwrap();
    // As another build would have written it: the generation's checksums agree with its metadata.
    let sums_path = meta_path.with_file_name("checksums.json");
    let mut sums: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sums_path).unwrap()).unwrap();
    use sha2::Digest;
    sums["meta.json"] =
        serde_json::json!({"len": meta.len(), "sha256": hex::encode(sha2::Sha256::digest(meta.as_bytes()))});
    std::fs::write(&sums_path, sums.to_string()).unwrap();
    let (code, _, err) = engine(&["search", "sessions", "--index", idx.path().to_str().unwrap()], None);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("engine index --rebuild") && err.contains("some-other-model"), "{err}");
    let (code, _, err) =
        engine(&["index", corpus.path().to_str().unwrap(), "--index", idx.path().to_str().unwrap()], None);
    assert_eq!(code, 4, "{err}");
    let (code, _, err) =
        engine(&["index", corpus.path().to_str().unwrap(), "--index", idx.path().to_str().unwrap(), "--rebuild"], None);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = engine(&["search", "sessions", "--index", idx.path().to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_second_writer_gets_a_clear_message() {
    let corpus = sample_copy();
    let idx = tempfile::tempdir().unwrap();
    let _held = engine::internals::WriterLock::acquire(idx.path()).unwrap();
    let (code, _, err) =
        engine(&["index", corpus.path().to_str().unwrap(), "--index", idx.path().to_str().unwrap()], None);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("being written by another `engine index`"), "{err}");
}

/// Deterministic pseudo-random numbers for the kill schedule.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn write_note(dir: &Path, i: u64, version: u64) {
    let words = [
        "latency",
        "quorum",
        "replica",
        "snapshot",
        "compaction",
        "tombstone",
        "gossip",
        "lease",
        "shard",
        "checkpoint",
    ];
    let mut text = format!("# Note {i}\n\nUnique marker note{i}v{version}.\n\n");
    for p in 0..3 {
        text.push_str(&format!(
            "Paragraph {p} about {} and {} in version {version}: the {} protocol keeps the {} consistent.\n\n",
            words[(i as usize + p) % 10],
            words[(i as usize * 3 + p) % 10],
            words[(i as usize * 7 + p) % 10],
            words[(i as usize + 2 * p) % 10]
        ));
    }
    std::fs::write(dir.join(format!("note{i}.md")), text).unwrap();
}

#[test]
fn sigkill_at_random_moments_never_breaks_the_index() {
    let corpus = tempfile::tempdir().unwrap();
    let idx = tempfile::tempdir().unwrap();
    let (c, ix) = (corpus.path(), idx.path());
    for i in 0..40 {
        write_note(c, i, 0);
    }
    // A complete index first, so every kill below has a live generation to preserve.
    let (code, _, err) = engine(&["index", c.to_str().unwrap(), "--index", ix.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    let mut rng = Lcg(7);
    let mut next_note = 40;
    // How long a run of this size takes here, now: the kills land within it whatever the
    // machine's speed or load.
    for _ in 0..12 {
        write_note(c, rng.next(next_note), 0);
    }
    let t = std::time::Instant::now();
    let (code, _, err) = engine(&["index", c.to_str().unwrap(), "--index", ix.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    let run_ms = (t.elapsed().as_millis() as u64).max(50);
    let mut killed_mid_run = 0;
    for run in 1..=20u64 {
        // Change some notes, delete one, add one, so every run has work to do.
        for _ in 0..12 {
            write_note(c, rng.next(next_note), run);
        }
        let victim = c.join(format!("note{}.md", rng.next(next_note)));
        let _ = std::fs::remove_file(victim);
        write_note(c, next_note, run);
        next_note += 1;

        let mut child = std::process::Command::new(bin())
            .args(["index", c.to_str().unwrap(), "--index", ix.to_str().unwrap(), "--json"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(rng.next(run_ms)));
        if child.try_wait().unwrap().is_none() {
            killed_mid_run += 1;
        }
        child.kill().ok(); // SIGKILL
        child.wait().unwrap();

        {
            let (code, out, err) =
                engine(&["search", "quorum replica protocol", "--index", ix.to_str().unwrap(), "--json"], None);
            assert_eq!(code, 0, "run {run}: search failed after kill: {err}");
            assert!(!json(&out)["results"].as_array().unwrap().is_empty(), "run {run}: no results");
            let (code, _, err) = engine(&["status", "--index", ix.to_str().unwrap()], None);
            assert_eq!(code, 0, "run {run}: {err}");
        }
    }
    eprintln!("kill test: {killed_mid_run} of 20 indexing runs were killed while running");
    assert!(killed_mid_run >= 10, "only {killed_mid_run} of 20 runs were killed while running");
    // The next run repairs everything: all notes present, the newest searchable.
    let (code, out, err) = engine(&["index", c.to_str().unwrap(), "--index", ix.to_str().unwrap(), "--json"], None);
    assert_eq!(code, 0, "{err}: {out}");
    let files = std::fs::read_dir(c).unwrap().count();
    let (_, out, _) = engine(&["status", "--index", ix.to_str().unwrap(), "--json"], None);
    assert_eq!(json(&out)["documents"].as_u64().unwrap() as usize, files);
    // Every chunk has its vector again, whatever a killed run left pending.
    assert_eq!(json(&out)["vectors"], json(&out)["chunks"], "{out}");
    let newest = format!("note{}v20", next_note - 1);
    let (_, out, _) = engine(&["search", &newest, "--index", ix.to_str().unwrap(), "--json", "--mode", "bm25"], None);
    assert_eq!(json(&out)["results"][0]["path"], format!("note{}.md", next_note - 1), "{out}");
    // No unfinished generations are left behind.
    let gens = std::fs::read_dir(ix)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("gen-"))
        .count();
    assert!(gens <= 2, "{gens} generations on disk");
}

#[test]
fn a_run_with_nothing_to_embed_never_loads_the_model() {
    let corpus = sample_copy();
    let idx = tempfile::tempdir().unwrap();
    index_json(corpus.path(), idx.path());
    // A models dir whose model.onnx is garbage: only a run that embeds would notice.
    let models = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(root().join("models")).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == "model.onnx" {
            std::fs::write(models.path().join(&name), b"not a model").unwrap();
        } else if e.path().is_file() {
            std::os::unix::fs::symlink(e.path(), models.path().join(&name)).unwrap();
        }
    }
    let run = |args: &[&str]| {
        std::process::Command::new(bin()).args(args).env("ENGINE_MODELS_DIR", models.path()).output().unwrap()
    };
    let args = ["index", corpus.path().to_str().unwrap(), "--index", idx.path().to_str().unwrap(), "--json"];
    let out = run(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(corpus.path().join("new.md"), "# New\n\nSomething to embed.\n").unwrap();
    let out = run(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("model.onnx"), "{stderr}");
}

/// `engine index` with no path, in a subdirectory of an indexed project, updates that project's
/// index (as `search` from there reads it) instead of making a second one; a path given inside it
/// is indexed as asked, with a note.
#[test]
fn index_from_a_subdirectory_updates_the_project_it_is_in() {
    let p = sample_copy();
    let root = p.path();
    let (code, _, err) = engine(&["index", root.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    let docs = root.join("docs");
    std::fs::write(docs.join("kiwi.md"), "# Kiwi\n\nThe kiwi deployment runs on Fridays.\n").unwrap();
    let (code, out, err) = engine(&["index"], Some(&docs));
    assert_eq!(code, 0, "{err}");
    assert!(!docs.join(".engine").exists(), "a second index was made: {out} {err}");
    assert!(err.contains("updating the index of") && out.contains("1 changed"), "{out} {err}");
    let (_, out, _) = engine(&["search", "kiwi deployment", "--json"], Some(&docs));
    assert_eq!(json(&out)["results"][0]["path"], "docs/kiwi.md", "{out}");
    let (code, _, err) = engine(&["index", "."], Some(&docs));
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("already has an index") && docs.join(".engine").is_dir(), "{err}");
}
