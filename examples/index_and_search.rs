//! Index a folder and search it: the library's whole job in a dozen lines.
//!
//!     cargo run --release --example index_and_search [FOLDER] [QUERY]
//!
//! Defaults to the bundled `sample/` project and one question about it. The index goes to a
//! temporary directory; a real program would keep it (e.g. `FOLDER/.engine`) so the next run
//! only re-reads what changed. The model comes from `scripts/fetch-models.sh` (see the README).

use engine::{Engine, Source};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let folder =
        args.next().map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample"));
    let query = args.next().unwrap_or_else(|| "why did we move sessions to redis?".into());
    let scratch = tempfile::tempdir()?;

    // Index the folder, then search it with the same loaded model.
    let (engine, report) = Engine::builder(scratch.path().join(".engine")).index(&Source::Dir(folder))?;
    println!("indexed {} files into {} chunks", report.files_changed, report.chunks_added);

    let answer = engine.search(&query)?;
    println!("{query}");
    for hit in &answer.results {
        println!("  {:6} {:.4}  {}:{}  {}", hit.confidence.as_str(), hit.score, hit.path, hit.start_line, hit.title);
    }
    Ok(())
}
