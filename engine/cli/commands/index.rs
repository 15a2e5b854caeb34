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
            let root = std::path::absolute(args.path.unwrap_or_else(|| PathBuf::from(".")))?;
            let dir = args.index.unwrap_or_else(|| root.join(".engine"));
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
    let embedder = crate::embed::LazyOnnxEmbedder::new(models, settings);
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
