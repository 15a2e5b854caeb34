//! `engine status`: what an index holds.

use crate::cli::flags::StatusArgs;
use anyhow::Result;

pub(crate) fn run(args: StatusArgs) -> Result<i32> {
    let dir = super::index_dir(args.index)?;
    let st = crate::index::status(&dir)?;
    if args.json {
        println!("{}", serde_json::to_string(&st)?);
        return Ok(0);
    }
    println!("index      {}", st.index);
    println!("model      {} ({} dims)", st.model, st.dimensions);
    println!("documents  {}", st.documents);
    println!("chunks     {} ({})", st.chunks, if st.graph { "HNSW graph" } else { "exact vector search" });
    if st.vectors < st.chunks {
        println!(
            "vectors    {} of {} chunks (still embedding: the rest are found by BM25 only)",
            st.vectors, st.chunks
        );
    }
    println!("on disk    {:.1} MiB", st.bytes_on_disk as f64 / 1048576.0);
    println!("updated    {} (unix seconds), generation {}", st.updated_unix, st.generation);
    for (k, c) in &st.by_kind {
        println!("  kind {k:<10} {:>6} documents {:>7} chunks", c.documents, c.chunks);
    }
    for (k, c) in &st.by_lang {
        println!("  lang {k:<10} {:>6} documents {:>7} chunks", c.documents, c.chunks);
    }
    Ok(0)
}
