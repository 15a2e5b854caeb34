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
    if let Some(e) = st.embedding {
        println!(
            "vectors    {} of {} chunks (pid {} is embedding: {} of {} texts done; until it ends, search has {} and finds the rest by BM25 only)",
            st.embedded(),
            st.chunks,
            e.pid,
            e.done,
            e.total,
            st.vectors
        );
    } else if st.vectors < st.chunks {
        println!(
            "vectors    {} of {} chunks (embedding stopped: the next `engine index` embeds the rest; until then they are found by BM25 only)",
            st.vectors, st.chunks
        );
    }
    println!("on disk    {:.1} MiB", st.bytes_on_disk as f64 / 1048576.0);
    println!("updated    {}, generation {}", updated(st.updated_unix), st.generation);
    for (k, c) in &st.by_kind {
        println!("  kind {k:<10} {:>6} documents {:>7} chunks", c.documents, c.chunks);
    }
    for (k, c) in &st.by_lang {
        println!("  lang {k:<10} {:>6} documents {:>7} chunks", c.documents, c.chunks);
    }
    Ok(0)
}

/// When the index was last written, as a person reads it: `2026-11-26 14:10:05 UTC (12 min ago)`.
fn updated(unix: u64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix);
    let date = crate::memory::rfc3339(at).replacen('T', " ", 1).replace('Z', " UTC");
    let Ok(ago) = std::time::SystemTime::now().duration_since(at) else { return date };
    let (s, m, h, d) = (ago.as_secs(), ago.as_secs() / 60, ago.as_secs() / 3600, ago.as_secs() / 86_400);
    let ago = match () {
        _ if s < 60 => format!("{s} s ago"),
        _ if m < 60 => format!("{m} min ago"),
        _ if h < 48 => format!("{h} h ago"),
        _ => format!("{d} days ago"),
    };
    format!("{date} ({ago})")
}
