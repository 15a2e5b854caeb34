//! Embedding speed with the real model: one short query, back to back and after the embedder sat
//! idle (as the daemon's prompts find it); eight queries of mixed lengths one by one
//! and in one call, on one thread (so time is CPU: what prompts answered side by side share); and
//! throughput on 256 chunks of ~200 tokens at batch sizes 1, 8, 16 and 32. Run: `cargo bench --bench embed`.
//! `ENGINE_BENCH_CHUNKS` changes the chunk count (default 256).
//! With `ENGINE_BENCH_TEXTS=FILE` (JSON lines with `title` and `text`, as `engine export` writes
//! them) it only times the raw embedder over those chunks, in the steps indexing uses, and prints
//! chunks/s: the reference `scripts/bench/bench-large.sh` compares indexing throughput with.

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use engine::{Embedder, Models, OnnxEmbedder, Settings};
use std::time::{Duration, Instant};

/// Deterministic prose-like chunks of about `tokens` model tokens.
fn chunks(n: usize, embedder: &OnnxEmbedder, tokens: usize) -> Vec<String> {
    const WORDS: &[&str] = &[
        "index",
        "query",
        "vector",
        "memory",
        "session",
        "cache",
        "latency",
        "protein",
        "cell",
        "expression",
        "function",
        "returns",
        "error",
        "handler",
        "the",
        "of",
        "and",
        "which",
        "retrieval",
        "ranking",
        "embedding",
        "tokenizer",
        "increases",
        "reduced",
        "patients",
        "treatment",
        "study",
        "model",
        "graph",
        "neighbour",
        "search",
        "document",
        "storage",
        "commit",
        "rollback",
        "upload",
        "timeout",
        "retry",
    ];
    let mut seed: u64 = 42;
    (0..n)
        .map(|_| {
            let mut text = String::new();
            while embedder.count_tokens(&text) < tokens {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                text.push_str(WORDS[(seed >> 33) as usize % WORDS.len()]);
                text.push(if (seed >> 20).is_multiple_of(11) { '.' } else { ' ' });
                text.push(' ');
            }
            text
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let models = Models::locate().expect("models");
    let started = Instant::now();
    let embedder = OnnxEmbedder::load(&models, &Settings::default()).expect("model (run scripts/fetch-models.sh)");
    println!("model load: {:.0} ms", started.elapsed().as_secs_f64() * 1e3);

    c.bench_function("embed/short_query", |b| b.iter(|| embedder.embed_query("how is the session cache invalidated")));
    after_idle(c, &embedder);

    queries_together(c, &models);

    let n: usize = std::env::var("ENGINE_BENCH_CHUNKS").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
    let texts = chunks(n, &embedder, 200);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut group = c.benchmark_group("embed/chunks_200_tokens");
    group.sample_size(10).warm_up_time(Duration::from_millis(1)).measurement_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(n as u64));
    for batch in [1usize, 8, 16, 32] {
        let mut settings = Settings::default();
        settings.set("embed.batch_size", batch).unwrap();
        let e = OnnxEmbedder::load(&models, &settings).unwrap();
        group.bench_with_input(BenchmarkId::from_parameter(batch), &refs, |b, refs| b.iter(|| e.embed(refs).unwrap()));
    }
    group.finish();
}

/// Eight queries of 6 to 30 tokens, one run each against one run for all (padded to the longest).
fn queries_together(c: &mut Criterion, models: &Models) {
    let mut settings = Settings::default();
    settings.set("embed.threads", 1).unwrap();
    let e = OnnxEmbedder::load(models, &settings).unwrap();
    let queries: Vec<String> = [6, 9, 12, 15, 18, 22, 26, 30].iter().map(|&t| chunks(1, &e, t).remove(0)).collect();
    let refs: Vec<&str> = queries.iter().map(String::as_str).collect();
    let mut group = c.benchmark_group("embed/8_queries_1_thread");
    group.bench_function("one_by_one", |b| {
        b.iter(|| refs.iter().map(|q| e.embed_query(q).unwrap()).collect::<Vec<_>>())
    });
    group.bench_function("one_call", |b| b.iter(|| e.embed(&refs).unwrap()));
    group.finish();
}

/// Embeds every chunk of `path` as indexing does (title + body, 64 texts per call).
fn raw_throughput(path: &str) {
    let models = Models::locate().expect("models");
    let embedder = OnnxEmbedder::load(&models, &Settings::default()).expect("model (run scripts/fetch-models.sh)");
    let texts: Vec<String> = std::fs::read_to_string(path)
        .expect("ENGINE_BENCH_TEXTS file")
        .lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("json line");
            let (title, text) = (v["title"].as_str().unwrap_or_default(), v["text"].as_str().unwrap_or_default());
            if title.is_empty() || text.starts_with(title) {
                text.to_string()
            } else {
                format!("{title}\n{text}")
            }
        })
        .collect();
    let mut refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    // Indexing sorts what it embeds by length the same way.
    refs.sort_by_key(|t| std::cmp::Reverse(t.len()));
    let started = Instant::now();
    for step in refs.chunks(64) {
        embedder.embed(step).expect("embedding");
    }
    let secs = started.elapsed().as_secs_f64();
    println!("raw embedder: {} chunks in {secs:.1} s = {:.1} chunks/s", refs.len(), refs.len() as f64 / secs);
}

/// The same query after the embedder sat idle, as the hook's prompts reach the daemon: apart
/// rather than back to back, so its threads are parked and its caches cold.
fn after_idle(c: &mut Criterion, embedder: &OnnxEmbedder) {
    let mut group = c.benchmark_group("embed/short_query_after_idle");
    group.sample_size(10).measurement_time(Duration::from_secs(1)).warm_up_time(Duration::from_millis(200));
    for idle_ms in [20u64, 200] {
        group.bench_with_input(BenchmarkId::from_parameter(format!("{idle_ms}ms")), &idle_ms, |b, &idle_ms| {
            b.iter_custom(|iters| {
                let mut busy = Duration::ZERO;
                for _ in 0..iters {
                    std::thread::sleep(Duration::from_millis(idle_ms));
                    let started = Instant::now();
                    std::hint::black_box(embedder.embed_query("how is the session cache invalidated").unwrap());
                    busy += started.elapsed();
                }
                busy
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(path) = std::env::var("ENGINE_BENCH_TEXTS") {
        return raw_throughput(&path);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
