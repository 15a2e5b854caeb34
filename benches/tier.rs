//! Confidence labels and context packing for 20 hits, with token counts from the real tokenizer
//! (the budget is in model tokens). Goal: ≤ 0.5 ms.
//!
//!     cargo bench --bench tier

use criterion::{criterion_group, criterion_main, Criterion};
use engine::internals::{context as pack_context, label, ContextConfig, TierConfig};
use engine::{Embedder, Hit, Models, OnnxEmbedder};

fn hits() -> Vec<Hit> {
    (0..20)
        .map(|i| {
            let text = format!(
                "Decision {i}: sessions moved from Memcached to Redis because restarts logged everyone out. {}",
                "The store keeps a sliding thirty-minute TTL and AOF persistence. ".repeat(6)
            );
            Hit {
                id: format!("docs/note-{i}.md#{i}"),
                doc: format!("docs/note-{i}.md"),
                path: format!("docs/note-{i}.md"),
                title: format!("Note {i} > Sessions"),
                start_line: 1,
                end_line: 20,
                score: 0.0165 - i as f32 * 0.0004,
                cosine: Some(0.72 - i as f32 * 0.02),
                bm25: Some(18.0 - i as f32 * 0.5),
                snippet: text.chars().take(240).collect(),
                text,
                kind: "markdown".into(),
                tags: vec!["sessions".into(), "redis".into()],
                ..Default::default()
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let models = Models::locate().expect("models: run scripts/fetch-models.sh");
    let embedder = OnnxEmbedder::load(&models, &Default::default()).expect("model");
    let count = |s: &str| embedder.count_tokens(s);
    let tier = TierConfig::default();
    let context = ContextConfig::default();
    let base = hits();
    let none = |_: &Hit| Vec::new();
    let mut sample = base.clone();
    label(&mut sample, &tier);
    let block = pack_context("sessions redis", &sample, &context, &none, &count);
    let t = std::time::Instant::now();
    let n: usize = (0..200).map(|_| count(&base[0].text)).sum();
    println!(
        "count_tokens of a {}-char text: {:.1} µs ({} tokens)",
        base[0].text.len(),
        t.elapsed().as_secs_f64() * 1e6 / 200.0,
        n / 200
    );
    println!("20 hits → rule {:?}, {} shown, {} tokens", block.rule, block.shown.len(), block.tokens);
    c.bench_function("label+context 20 hits", |b| {
        b.iter(|| {
            let mut h = base.clone();
            label(&mut h, &tier);
            pack_context("sessions redis", &h, &context, &none, &count)
        })
    });
    let legacy = ContextConfig { output_mode: engine::OutputMode::Legacy, ..context.clone() };
    c.bench_function("label+context 20 hits, legacy (all packed)", |b| {
        b.iter(|| {
            let mut h = base.clone();
            label(&mut h, &tier);
            pack_context("sessions redis", &h, &legacy, &none, &count)
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
