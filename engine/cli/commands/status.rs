//! `engine status`: what an index holds, and whether a warm daemon of this build serves it (read
//! from the index in this process either way: it loads no model, so a daemon would save nothing).

use crate::cli::flags::StatusArgs;
use anyhow::Result;

pub(crate) fn run(args: StatusArgs) -> Result<i32> {
    let dir = super::index_dir(args.index)?;
    let st = crate::index::status(&dir)?;
    let serving = crate::integrations::daemon::serving(&dir);
    if args.json {
        let mut v = serde_json::to_value(&st)?;
        v["daemon"] = serde_json::to_value(&serving)?;
        println!("{v}");
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
    match serving {
        Some(s) => println!(
            "daemon     pid {}, up {}, {} prompts and {} searches answered",
            s.pid,
            since(s.up_s),
            s.prompts,
            s.searches
        ),
        None => println!("daemon     none of this build (the next search or prompt starts one)"),
    }
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
    format!("{date} ({} ago)", since(ago.as_secs()))
}

/// A span of seconds as a person reads it: `12 min`.
fn since(s: u64) -> String {
    let (m, h, d) = (s / 60, s / 3600, s / 86_400);
    match () {
        _ if s < 60 => format!("{s} s"),
        _ if m < 60 => format!("{m} min"),
        _ if h < 48 => format!("{h} h"),
        _ => format!("{d} days"),
    }
}
