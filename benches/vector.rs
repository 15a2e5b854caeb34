//! HNSW against exact search on real embeddings: recall@10 and the latency crossover.
//!   scripts/bench/bench-search.sh builds the index this reads (ENGINE_BENCH_INDEX) and runs it.
//! Queries are real query embeddings (ENGINE_BENCH_QUERIES), embedded with the default model.

use engine::internals::{current_generation, dot, percentile, top_k, Graph, VectorConfig, VectorStore};
use engine::{Embedder, Models, OnnxEmbedder, Settings};
use std::time::Instant;

fn main() {
    let dir = std::path::PathBuf::from(std::env::var("ENGINE_BENCH_INDEX").expect("ENGINE_BENCH_INDEX"));
    let gen = current_generation(&dir).unwrap().expect("an index");
    // ENGINE_BENCH_M / ENGINE_BENCH_EF_CONSTRUCTION: build settings to try instead of the defaults.
    let env = |name: &str, default: usize| std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let defaults = VectorConfig::default();
    let config = VectorConfig {
        m: env("ENGINE_BENCH_M", defaults.m),
        ef_construction: env("ENGINE_BENCH_EF_CONSTRUCTION", defaults.ef_construction),
        ..defaults
    };
    let store = VectorStore::open(&gen, false, &config).unwrap();

    let embedder = OnnxEmbedder::load(&Models::locate().unwrap(), &Settings::default()).unwrap();
    let mut texts = Vec::new();
    for f in std::env::var("ENGINE_BENCH_QUERIES").expect("ENGINE_BENCH_QUERIES").split(':') {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            texts.push(v["text"].as_str().unwrap_or_default().to_string());
        }
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let queries = embedder.embed(&refs).unwrap();
    let dim = store.dim;
    println!("{} vectors of {dim} dims, {} real queries", store.len(), queries.len());

    // Recall@10 of the index's own graph (as `engine index` built and stored it) at the default
    // ef_search, against exact search on the same rows.
    if let Ok(stored) = VectorStore::open(&gen, true, &config) {
        let mut recall = 0.0;
        for q in &queries {
            let exact: Vec<usize> = stored.search_exact(q, 10).into_iter().map(|h| h.0).collect();
            recall += stored.search(q, 10).iter().filter(|h| exact.contains(&h.0)).count() as f64 / 10.0;
        }
        println!(
            "stored graph, ef_search {}: recall@10 {:.4} over {} queries",
            stored.ef_search(),
            recall / queries.len() as f64,
            queries.len()
        );
    }

    // Recall@10 of the graph against exact search on the whole collection.
    let t = Instant::now();
    let graph = Graph::build(dim, &store.data, &config);
    println!(
        "HNSW build (m {}, ef_construction {}): {:.1} s",
        config.m,
        config.ef_construction,
        t.elapsed().as_secs_f64()
    );
    for ef in [64, 96, 128, 160, 200, 256, 320, 400] {
        let mut recall = 0.0;
        let mut times = Vec::new();
        for q in &queries {
            let exact: Vec<usize> = store.search_exact(q, 10).into_iter().map(|h| h.0).collect();
            let t = Instant::now();
            let approx = graph.search(q, 10, ef);
            times.push(t.elapsed().as_secs_f64() * 1e3);
            recall += approx.iter().filter(|h| exact.contains(&h.0)).count() as f64 / 10.0;
        }
        println!(
            "  ef_search {ef:>3}: recall@10 {:.4}, p50 {:.3} ms, p95 {:.3} ms",
            recall / queries.len() as f64,
            percentile(&times, 0.5),
            percentile(&times, 0.95)
        );
    }

    // Crossover: exact scan vs graph (at the default ef_search) as the collection grows.
    // ENGINE_BENCH_CROSSOVER=0 leaves it out (a graph build per size).
    if std::env::var("ENGINE_BENCH_CROSSOVER").is_ok_and(|v| v == "0") {
        return;
    }
    println!("size    exact p50 ms   hnsw p50 ms   hnsw recall@10");
    for n in [1000usize, 2000, 5000, 10000, 15000, 20000] {
        if n > store.len() {
            break;
        }
        let data = &store.data[..n * dim];
        let sub = Graph::build(dim, data, &config);
        let (mut te, mut th, mut recall) = (Vec::new(), Vec::new(), 0.0);
        for q in &queries {
            let t = Instant::now();
            let exact = top_k((0..n).map(|i| (i, dot(&data[i * dim..(i + 1) * dim], q))), 10);
            te.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let approx = sub.search(q, 10, config.ef_search);
            th.push(t.elapsed().as_secs_f64() * 1e3);
            recall += approx.iter().filter(|h| exact.iter().any(|e| e.0 == h.0)).count() as f64 / 10.0;
        }
        println!(
            "{n:>6}  {:>12.3}  {:>12.3}  {:>14.4}",
            percentile(&te, 0.5),
            percentile(&th, 0.5),
            recall / queries.len() as f64
        );
    }
}
