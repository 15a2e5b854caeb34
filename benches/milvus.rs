//! The Milvus backend at scale: push throughput and query latency on an index of >= 100k chunks,
//! local legs against Milvus-run legs. Run by `scripts/bench/bench-milvus.sh`, which starts the
//! server and sets:
//!   ENGINE_MILVUS_URL      milvus://HOST:PORT/COLLECTION to push to
//!   ENGINE_BENCH_INDEX     the index directory (built here when absent)
//!   ENGINE_BENCH_CORPUS    a BEIR corpus.jsonl of the documents to index (synthesised by the script)
//!   ENGINE_BENCH_QUERIES   queries.jsonl files, colon separated
//! The vectors come from the hash embedder (384 dimensions, no model): what is measured is moving
//! and searching rows, not embedding them, and the hash vectors say nothing about quality.

use engine::internals::percentile;
use engine::{Engine, HashEmbedder, Mode, SearchRequest, Settings, Source};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run scripts/bench/bench-milvus.sh"))
}

fn queries() -> Vec<String> {
    let mut out = Vec::new();
    for f in env("ENGINE_BENCH_QUERIES").split(':') {
        for line in std::fs::read_to_string(f).expect("queries file").lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("json line");
            out.push(v["text"].as_str().unwrap_or_default().to_string());
        }
    }
    out
}

/// p50 and p95 in milliseconds of the searches of `queries` on `engine` (after one warm-up).
fn latency(engine: &Engine, queries: &[String]) -> (f64, f64) {
    let _ = engine.search_with(&SearchRequest::new(queries[0].clone(), 10, Mode::Hybrid)).expect("warm-up");
    let mut ms: Vec<f64> = queries
        .iter()
        .map(|q| {
            let started = Instant::now();
            engine.search_with(&SearchRequest::new(q.clone(), 10, Mode::Hybrid)).expect("search");
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    (percentile(&ms, 0.5), percentile(&ms, 0.95))
}

fn main() {
    let url = env("ENGINE_MILVUS_URL");
    let index = PathBuf::from(env("ENGINE_BENCH_INDEX"));
    let embedder = Arc::new(HashEmbedder::new(384));
    if engine::internals::current_generation(&index).ok().flatten().is_none() {
        let corpus = PathBuf::from(env("ENGINE_BENCH_CORPUS"));
        let started = Instant::now();
        let report = engine::internals::build(
            &index,
            &Source::Beir(corpus),
            &Settings::default(),
            embedder.as_ref(),
            &Default::default(),
        )
        .expect("index");
        println!("indexed {} chunks in {:.0} s", report.chunks_added, started.elapsed().as_secs_f64());
    }
    let chunks = engine::internals::status(&index).expect("status").chunks;
    let backend =
        engine::internals::Backend::connect(&url, Duration::from_secs(600), Duration::from_secs(600)).expect("connect");
    let vector = engine::internals::VectorConfig::default();
    let started = Instant::now();
    let first = backend.push(&index, &vector, false).expect("push");
    let push_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let again = backend.push(&index, &vector, false).expect("second push");
    let again_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let full = backend.push(&index, &vector, true).expect("full push");
    let full_s = started.elapsed().as_secs_f64();
    println!(
        "push of {chunks} chunks: {} written in {push_s:.1} s ({:.0} chunks/s); second push (the record of the first, listed: {}): {} written, {} deleted in {again_s:.1} s; --full push (listed: {}): {} written, {} deleted in {full_s:.1} s",
        first.upserted,
        first.upserted as f64 / push_s,
        again.listed,
        again.upserted,
        again.deleted,
        full.listed,
        full.upserted,
        full.deleted
    );

    let queries: Vec<String> = queries().into_iter().take(200).collect();
    let open = |backend: Option<&str>| {
        let mut settings = Settings::default();
        if let Some(url) = backend {
            settings.set("backend.url", url).expect("backend.url");
            settings.set("backend.timeout_ms", 60_000).expect("backend.timeout_ms");
        }
        Engine::builder(&index).settings(settings).embedder(embedder.clone()).open().expect("open")
    };
    let (p50, p95) = latency(&open(None), &queries);
    println!("hybrid search, local legs:  p50 {p50:.1} ms, p95 {p95:.1} ms ({} queries)", queries.len());
    let (p50, p95) = latency(&open(Some(&url)), &queries);
    println!("hybrid search, Milvus legs: p50 {p50:.1} ms, p95 {p95:.1} ms ({} queries)", queries.len());
}
