//! `engine embed`: texts through the local model and their cosine similarities (a model check).

use crate::cli::flags::{settings, EmbedArgs};
use crate::embed::{dot, Embedder, OnnxEmbedder};
use crate::models::Models;
use anyhow::Result;
use std::path::Path;

pub(crate) fn run(args: EmbedArgs, config: Option<&Path>) -> Result<i32> {
    let settings = settings(config, args.layer())?;
    let models = Models::locate()?;
    let started = std::time::Instant::now();
    let embedder = OnnxEmbedder::load(&models, &settings)?;
    let loaded = started.elapsed();
    let refs: Vec<&str> = args.texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs)?;
    println!(
        "model {} ({} dims) loaded in {:.0} ms; embedded {} texts in {:.1} ms",
        embedder.id(),
        embedder.dimensions(),
        loaded.as_secs_f64() * 1e3,
        args.texts.len(),
        (started.elapsed() - loaded).as_secs_f64() * 1e3
    );
    for (i, a) in args.texts.iter().enumerate() {
        for (j, b) in args.texts.iter().enumerate().skip(i + 1) {
            println!("{:.4}  {a:?} ~ {b:?}", dot(&vectors[i], &vectors[j]));
        }
    }
    Ok(0)
}
