//! `engine chunks`: how files are chunked, with line ranges, token counts, titles and symbols.

use crate::cli::flags::{settings, ChunksArgs};
use crate::config::SettingsLayer;
use crate::embed::{Embedder, OnnxEmbedder};
use crate::models::Models;
use anyhow::{Context, Result};
use std::path::Path;

pub(crate) fn run(args: ChunksArgs, config: Option<&Path>) -> Result<i32> {
    let settings = settings(config, SettingsLayer::default())?;
    // Chunk budgets are in model tokens; without the model, an estimate.
    let embedder = Models::locate().and_then(|m| OnnxEmbedder::load(&m, &settings)).ok();
    let count = |t: &str| match &embedder {
        Some(e) => e.count_tokens(t),
        None => crate::embed::approx_tokens(t),
    };
    for file in &args.files {
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let rel = file.to_string_lossy().to_string();
        let Some(doc) = crate::ingest::Document::from_path(&rel, text) else {
            eprintln!("engine: {rel}: not a file type the engine indexes");
            continue;
        };
        for c in crate::chunk::chunk_document(&doc, &settings.chunk, &count) {
            let symbols = if c.symbols.is_empty() { String::new() } else { format!("  [{}]", c.symbols.join(", ")) };
            println!("{rel}:{}-{}  {} tokens  {}{symbols}", c.start_line, c.end_line, count(&c.text), c.title);
        }
    }
    Ok(0)
}
