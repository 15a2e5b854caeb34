//! Search latency per stage and end to end, in process, on a prebuilt index of >= 10k chunks:
//!   scripts/bench/bench-search.sh     (builds the SciFact + CoSQA index, then runs this bench)
//! Reads ENGINE_BENCH_INDEX (index directory) and ENGINE_BENCH_QUERIES (queries.jsonl files,
//! colon separated). Prints p50/p95 per stage over every query and the RSS of the process holding
//! the index open, then criterion's end-to-end measurements per mode.

use criterion::{criterion_group, criterion_main, Criterion};
use engine::internals::percentile;
use engine::{Engine, Mode, SearchRequest, Settings};
use std::path::PathBuf;

mod common;

fn rss_mib() -> f64 {
    common::proc_status_mib("VmRSS")
}

fn queries() -> Vec<String> {
    let files =
        std::env::var("ENGINE_BENCH_QUERIES").expect("ENGINE_BENCH_QUERIES (see scripts/bench/bench-search.sh)");
    let mut out = Vec::new();
    for f in files.split(':') {
        for line in std::fs::read_to_string(f).expect("queries file").lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("json line");
            out.push(v["text"].as_str().unwrap_or_default().to_string());
        }
    }
    out
}

/// Runs every query once (hybrid, k=10) and prints each stage's p50/p95.
fn stage_table(engine: &Engine, queries: &[String], label: &str) {
    let mut stages: Vec<(&str, Vec<f64>)> =
        ["intent", "embed", "bm25", "vector", "fuse", "candidates", "total"].iter().map(|s| (*s, Vec::new())).collect();
    let mut wall = Vec::new();
    for q in queries {
        let t = std::time::Instant::now();
        let r = engine.search_with(&SearchRequest::new(q.as_str(), 10, Mode::Hybrid)).unwrap();
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        let tm = &r.timings_ms;
        for (name, v) in stages.iter_mut() {
            v.push(match *name {
                "intent" => tm.intent,
                "embed" => tm.embed,
                "bm25" => tm.bm25,
                "vector" => tm.vector,
                "fuse" => tm.fuse,
                "candidates" => tm.candidates,
                _ => tm.total,
            });
        }
    }
    println!("{label}, {} queries, k=10 (ms; bm25 runs concurrently with embed+vector):", queries.len());
    for (name, v) in &stages {
        println!("  {name:<10} p50 {:>7.3}  p95 {:>7.3}", percentile(v, 0.5), percentile(v, 0.95));
    }
    println!("  end-to-end wall p50 {:>7.3}  p95 {:>7.3}", percentile(&wall, 0.5), percentile(&wall, 0.95));
}

fn bench(c: &mut Criterion) {
    let dir = PathBuf::from(
        std::env::var("ENGINE_BENCH_INDEX").expect("ENGINE_BENCH_INDEX (see scripts/bench/bench-search.sh)"),
    );
    let before = rss_mib();
    let engine = Engine::builder(&dir).open().expect("open index and model");
    let shape = engine::internals::status(&dir).expect("index status");
    engine.warm_up().expect("load the model");
    let after = rss_mib();
    let queries = queries();
    println!(
        "index: {} chunks, graph: {}; RSS {before:.0} MiB before open, {after:.0} MiB with the index and model loaded",
        shape.chunks, shape.graph
    );

    stage_table(&engine, &queries, "hybrid (learned fusion, the default)");
    // The same queries under RRF: learned fusion's scoring shows in "fuse", the deeper candidate
    // list it reorders in "candidates".
    let mut rrf = Settings::default();
    rrf.set("fuse.method", "rrf").unwrap();
    let rrf = Engine::builder(&dir).settings(rrf).open().expect("open index and model");
    rrf.warm_up().expect("load the model");
    stage_table(&rrf, &queries, "hybrid (RRF)");
    println!("RSS after the queries: {:.0} MiB", rss_mib());

    let mut group = c.benchmark_group("search");
    group.sample_size(50);
    for (name, mode) in [("bm25", Mode::Bm25), ("vector", Mode::Vector), ("hybrid", Mode::Hybrid)] {
        let mut i = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) % queries.len();
                engine.search_with(&SearchRequest::new(queries[i].as_str(), 10, mode)).unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
