//! Bounded memory while indexing: the heap an indexing run needs beyond what it starts with
//! grows with the corpus no faster than the index it builds.
//!
//! A test binary of its own, with one test: it counts every allocation of the process, which
//! other tests running beside it would disturb.

use engine::internals::{build, current_generation, VectorConfig, VectorStore};
use engine::{BuildOptions, HashEmbedder, Settings, Source};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only the counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size > layout.size() {
                let live = LIVE.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
                PEAK.fetch_max(live, Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

const DIM: usize = 384;

/// Markdown files of `sections` sections each, every section a chunk of its own.
fn corpus(root: &Path, files: usize, sections: usize) {
    for f in 0..files {
        let mut text = format!("# Module {f}\n\n");
        for s in 0..sections {
            text.push_str(&format!("## Section {s} of module {f}\n\n"));
            for w in 0..60 {
                text.push_str(&format!("word{} term{} ", (f * 31 + s * 7 + w) % 997, (f + w) % 89));
            }
            text.push_str("\n\n");
        }
        std::fs::write(root.join(format!("m{f}.md")), text).unwrap();
    }
}

/// (peak heap above the start of the run, heap held by the built index's vectors and graph once
/// opened), for a corpus of `files` files.
fn measure(files: usize) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("src");
    std::fs::create_dir_all(&root).unwrap();
    corpus(&root, files, 8);
    let mut settings = Settings::default();
    // Every size builds an HNSW graph, the structure that dominates at scale.
    settings.set("vector.exact_below", 0).unwrap();
    let embedder = HashEmbedder::new(DIM);
    let index_dir = dir.path().join("idx");

    let start = LIVE.load(Relaxed);
    PEAK.store(start, Relaxed);
    let report = build(&index_dir, &Source::Dir(root), &settings, &embedder, &BuildOptions::default()).unwrap();
    let peak = PEAK.load(Relaxed) - start;

    let before = LIVE.load(Relaxed);
    let generation = current_generation(&index_dir).unwrap().unwrap();
    let store =
        VectorStore::open(&generation, true, &VectorConfig { exact_below: 0, ..VectorConfig::default() }).unwrap();
    let held = LIVE.load(Relaxed) - before;
    drop(store);
    (report.chunks_added, peak, held)
}

#[test]
fn indexing_needs_little_more_memory_per_chunk_than_the_index_it_builds() {
    let (small_chunks, small_peak, small_held) = measure(250);
    let (large_chunks, large_peak, large_held) = measure(1000);
    let chunks = (large_chunks - small_chunks) as f64;
    let peak_per_chunk = (large_peak - small_peak) as f64 / chunks;
    let held_per_chunk = (large_held - small_held) as f64 / chunks;
    eprintln!(
        "chunks {small_chunks} → {large_chunks}: peak heap {:.1} → {:.1} MiB ({peak_per_chunk:.0} B per chunk), \
         opened index {:.1} → {:.1} MiB ({held_per_chunk:.0} B per chunk)",
        small_peak as f64 / 1048576.0,
        large_peak as f64 / 1048576.0,
        small_held as f64 / 1048576.0,
        large_held as f64 / 1048576.0,
    );
    assert!(peak_per_chunk < 1.5 * held_per_chunk, "{peak_per_chunk:.0} B per chunk vs {held_per_chunk:.0}");
}
