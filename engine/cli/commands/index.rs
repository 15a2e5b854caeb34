//! `engine index`: a directory or a BEIR collection into an index, incrementally, with a progress
//! bar on a terminal.

use crate::cli::flags::{settings, IndexArgs};
use crate::config::{Settings, SettingsLayer};
use crate::index::{self, BuildOptions, IndexReport};
use crate::ingest::Source;
use crate::models::Models;
use anyhow::Result;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub(crate) fn run(args: IndexArgs, config: Option<&Path>) -> Result<i32> {
    if let Some(nice) = args.nice {
        crate::integrations::daemon::lower_priority(nice);
    }
    let settings = settings(config, SettingsLayer::default())?;
    let (source, index_dir) = match args.beir {
        Some(b) => {
            let dir = args.index.unwrap_or_else(|| crate::eval::cache_index_dir("beir", &b));
            (Source::Beir(std::path::absolute(&b)?), dir)
        }
        None => {
            let (root, dir) = project(args.path, args.index)?;
            (Source::Dir(root), dir)
        }
    };
    let report = with_progress(&index_dir, &source, &settings, args.rebuild, args.json)?;
    for w in &report.warnings {
        eprintln!("engine: {w}");
    }
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "indexed {}: {} files scanned, {} changed, {} removed, {} skipped; {} chunks added, {} removed ({} embedded, {} from cache) in {:.2}s",
            index_dir.display(),
            report.files_scanned,
            report.files_changed,
            report.files_removed,
            report.files_skipped,
            report.chunks_added,
            report.chunks_removed,
            report.chunks_embedded,
            report.chunks_cached,
            report.seconds.total
        );
    }
    Ok(0)
}

/// The directory to index and its index. With neither given: the project whose index `search`
/// would use from here (the nearest `.engine/` at or above the current directory), else the
/// current directory. A new index inside a project that has one is made as asked, with a note.
fn project(path: Option<PathBuf>, index: Option<PathBuf>) -> Result<(PathBuf, PathBuf)> {
    let cwd = std::env::current_dir()?;
    if path.is_none() && index.is_none() {
        if let Some(found) = index::store::find_index(&cwd).index {
            let root = found.parent().unwrap_or(&found).to_path_buf();
            if root != cwd {
                eprintln!("engine: updating the index of {} (the project this directory is in)", root.display());
            }
            return Ok((root, found));
        }
    }
    let root = std::path::absolute(path.unwrap_or(cwd))?;
    let dir = index.unwrap_or_else(|| root.join(".engine"));
    if !dir.exists() {
        let above = root.parent().and_then(|p| index::store::find_index(p).index);
        if let Some(above) = above {
            eprintln!(
                "engine: {} already has an index ({}); this makes a second one at {} (`engine index` with no path updates the first)",
                above.parent().unwrap_or(&above).display(),
                above.display(),
                dir.display()
            );
        }
    }
    Ok((root, dir))
}

/// Runs an indexing job with a progress display on a terminal and plain lines otherwise.
pub(crate) fn with_progress(
    index_dir: &Path,
    source: &Source,
    settings: &Settings,
    rebuild: bool,
    quiet: bool,
) -> Result<IndexReport> {
    let models = Models::locate()?.cached_in(index_dir);
    for why in &models.refused {
        eprintln!("engine: {why}");
    }
    let embedder = crate::embed::LazyOnnxEmbedder::new(models, settings)?;
    let terminal = std::io::stderr().is_terminal() && !quiet;
    let bar = terminal.then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("embedding {bar:40} {pos}/{len} chunks ({per_sec}, eta {eta})")
                .expect("valid template"),
        );
        b
    });
    let last_pct = std::sync::atomic::AtomicUsize::new(usize::MAX);
    let progress = |done: usize, total: usize| {
        if let Some(b) = &bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        } else if !quiet {
            let pct = done * 10 / total.max(1);
            if last_pct.swap(pct, std::sync::atomic::Ordering::Relaxed) != pct {
                eprintln!("engine: embedded {done}/{total} chunks");
            }
        }
    };
    let options = BuildOptions { rebuild, progress: Some(&progress), release_model: true };
    let report = index::build(index_dir, source, settings, &embedder, &options)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(report)
}
