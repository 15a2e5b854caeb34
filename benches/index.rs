//! Indexing speed against the raw embedder, in one run on the same chunks:
//!   cargo bench --bench index                  (SciFact from ../shared/datasets, first 1000 docs)
//!   ENGINE_BENCH_DOCS=5183 cargo bench --bench index   (the whole corpus)
//! Prints: raw embedder chunks/s, indexing chunks/s (walk + chunk + embed + tantivy + vectors,
//! cold cache), their ratio, a no-change reindex time, and the process's peak RSS.

use engine::internals::{build, chunk_document, embed_text, scan_beir, ChunkConfig};
use engine::{BuildOptions, Embedder, Models, OnnxEmbedder, Settings, Source};
use std::io::Write;
use std::time::Instant;

mod common;

fn peak_rss_mib() -> f64 {
    common::proc_status_mib("VmHWM")
}

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = std::env::var("ENGINE_BENCH_BEIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join("../shared/datasets/scifact"));
    let limit: usize = std::env::var("ENGINE_BENCH_DOCS").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let settings = Settings::default();
    let models = Models::locate().expect("models (run scripts/fetch-models.sh)");
    let embedder = OnnxEmbedder::load(&models, &settings).expect("embedder");

    // A corpus of the first `limit` documents.
    let tmp = tempfile::tempdir().unwrap();
    let docs = scan_beir(&corpus).expect("BEIR corpus").documents;
    let docs: Vec<_> = docs.into_iter().take(limit).collect();
    let mut f = std::fs::File::create(tmp.path().join("corpus.jsonl")).unwrap();
    for d in &docs {
        let line = serde_json::json!({"_id": d.id, "title": d.title.clone().unwrap_or_default(), "text": d.text});
        writeln!(f, "{line}").unwrap();
    }
    drop(f);

    // Raw embedder throughput on exactly the chunks the indexer will embed.
    let count = |s: &str| embedder.count_tokens(s);
    let mut texts: Vec<String> =
        docs.iter().flat_map(|d| chunk_document(d, &ChunkConfig::default(), &count)).map(|c| embed_text(&c)).collect();
    texts.sort_by_key(|t| std::cmp::Reverse(t.len()));
    texts.dedup();
    let t = Instant::now();
    for batch in texts.chunks(64) {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        embedder.embed(&refs).unwrap();
    }
    let raw = texts.len() as f64 / t.elapsed().as_secs_f64();

    // Full indexing, cold cache.
    let idx = tmp.path().join("idx");
    let source = Source::Beir(tmp.path().to_path_buf());
    let report = build(&idx, &source, &settings, &embedder, &BuildOptions::default()).unwrap();
    let indexing = report.chunks_embedded as f64 / report.seconds.total;
    // No change.
    let t = Instant::now();
    let again = build(&idx, &source, &settings, &embedder, &BuildOptions::default()).unwrap();
    let nochange = t.elapsed().as_secs_f64();
    assert_eq!(again.chunks_added, 0);

    println!("corpus: {} ({} documents, {} chunks)", corpus.display(), docs.len(), report.chunks_added);
    println!("raw embedder:      {raw:.1} chunks/s");
    println!("indexing (cold):   {indexing:.1} chunks/s  = {:.1}% of raw", 100.0 * indexing / raw);
    println!(
        "  phases (s): walk {:.2}  chunk {:.2}  embed {:.2}  bm25 {:.2} (concurrent with embed)  vector {:.2}  total {:.2}",
        report.seconds.walk, report.seconds.chunk, report.seconds.embed, report.seconds.bm25, report.seconds.vector, report.seconds.total
    );
    println!("no-change reindex: {nochange:.3} s");
    println!("peak RSS:          {:.0} MiB", peak_rss_mib());
}
