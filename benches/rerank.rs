//! Reranking 20 (query, passage) pairs of up to 256 tokens: the generated test cross-encoder
//! (`scripts/make-test-reranker.sh`) always, and a real one when `models/reranker/` holds it.
//! Prints p50 and p95 (50 runs, 10 for a real model) as one batch and one pair per run (the
//! engine's default), then criterion's estimate of the latter.
//!
//!     cargo bench --bench rerank

use criterion::{criterion_group, criterion_main, Criterion};
use engine::{Models, OnnxCrossEncoder, Reranker};

fn passages() -> Vec<String> {
    (0..20)
        .map(|i| {
            format!(
                "Passage {i}. {}",
                "Sessions moved from Memcached to Redis because node restarts logged every user out; the store keeps a sliding TTL. "
                    .repeat(12)
            )
        })
        .collect()
}

fn percentile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

fn bench(c: &mut Criterion) {
    let models = Models::locate().expect("models: run scripts/fetch-models.sh");
    let mut rerankers: Vec<(String, OnnxCrossEncoder)> = Vec::new();
    let packaged = models.dir().join("packaged-reranker/reranker"); // where scripts/test.sh puts it
    for dir in [models.dir().join("test-reranker"), models.dir().join("reranker"), packaged] {
        if dir.join("model.onnx").is_file() {
            let r = OnnxCrossEncoder::load(&models, &dir, 256).expect("reranker loads");
            rerankers.push((r.id().to_string(), r));
        } else {
            println!("{}: not present, skipped", dir.display());
        }
    }
    let texts = passages();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let query = "why did we move sessions off memcached";
    let mut group = c.benchmark_group("rerank");
    group.sample_size(10);
    for (id, r) in &rerankers {
        // The real model takes about a second a call: fewer runs.
        let runs = if id.starts_with("test-") { 50 } else { 10 };
        let time = |f: &dyn Fn()| {
            let mut ms: Vec<f64> = (0..runs)
                .map(|_| {
                    let t = std::time::Instant::now();
                    f();
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            (percentile(&mut ms, 0.5), percentile(&mut ms, 0.95))
        };
        let batch = || {
            r.score(query, &refs).unwrap();
        };
        // As the engine scores them by default (`[rerank] batch_size` = 1).
        let singles = || {
            for p in &refs {
                r.score(query, &[p]).unwrap();
            }
        };
        let (p50, p95) = time(&batch);
        println!("{id}: 20 pairs × 256 tokens, one batch: p50 {p50:.2} ms, p95 {p95:.2} ms");
        let (p50, p95) = time(&singles);
        println!("{id}: 20 pairs × 256 tokens, one pair per run: p50 {p50:.2} ms, p95 {p95:.2} ms");
        group.bench_function(format!("20 pairs one per run {id}"), |b| b.iter(singles));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
