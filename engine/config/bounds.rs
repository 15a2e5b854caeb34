//! Bounds of numeric settings and of the flags that override them. Values outside them either
//! cannot work (0 results, a zero-width window) or exhaust the machine before failing (a
//! trillion-slot result buffer, a million ONNX threads, a 1 TB file read into memory).

use std::ops::RangeInclusive;

/// Results per query (`[search] k`, `[hook] k`, `engine search -k`).
pub(crate) const K: RangeInclusive<usize> = 1..=1000;
/// Hits each leg hands to fusion.
pub(crate) const TOP_N: RangeInclusive<usize> = 1..=10_000;
/// ONNX intra-op threads.
pub(crate) const THREADS: RangeInclusive<usize> = 1..=256;
/// Texts (or pairs) per ONNX run: beyond it a run of long texts takes gigabytes.
pub(crate) const BATCH: RangeInclusive<usize> = 1..=64;
/// Padded tokens per ONNX run.
pub(crate) const BATCH_TOKENS: RangeInclusive<usize> = 64..=65_536;
/// Tokens per model input: MiniLM and BERT-style cross-encoders have 512 positions.
pub(crate) const MODEL_TOKENS: RangeInclusive<usize> = 8..=512;
/// Chunk body budget in tokens.
pub(crate) const CHUNK_TOKENS: RangeInclusive<usize> = 16..=4096;
/// Any deadline, in milliseconds: at most 10 minutes.
pub(crate) const DEADLINE_MS: RangeInclusive<u64> = 1..=600_000;
/// CPU niceness of background work: 0 (normal) to 19 (lowest).
pub(crate) const NICE: RangeInclusive<i32> = 0..=19;
/// The daemon's idle timeout, in seconds: at most a week.
pub(crate) const IDLE_TIMEOUT_S: RangeInclusive<u64> = 1..=604_800;
/// Largest file the walk reads into memory: 1 GiB.
pub(crate) const MAX_FILE_SIZE: RangeInclusive<u64> = 1..=(1 << 30);
/// HNSW links per node.
pub(crate) const HNSW_M: RangeInclusive<usize> = 2..=128;
/// HNSW candidate list sizes (build and search).
pub(crate) const HNSW_EF: RangeInclusive<usize> = 1..=10_000;
/// Collection size below which vectors are scanned exactly.
pub(crate) const EXACT_BELOW: RangeInclusive<usize> = 0..=100_000_000;
/// Token budget of a context block.
pub(crate) const BUDGET_TOKENS: RangeInclusive<usize> = 50..=100_000;
/// Character caps on strings shown in context blocks and digests.
pub(crate) const CHARS: RangeInclusive<usize> = 10..=100_000;
/// Characters of a hook answer.
pub(crate) const HOOK_CHARS: RangeInclusive<usize> = 1..=1_000_000;
/// Small counts: tags per hit, neighbours per side, digest records, words.
pub(crate) const COUNT: RangeInclusive<usize> = 0..=100;
/// RRF k per leg (strictly positive).
pub(crate) const RRF_K_MAX: f32 = 10_000.0;
/// Leg weights, field boosts and other multipliers.
pub(crate) const FACTOR_MAX: f32 = 100.0;
/// Raw BM25 score floors.
pub(crate) const BM25_FLOOR_MAX: f32 = 1000.0;
/// Weights and intercept of the abstention model (either sign).
pub(crate) const WEIGHT_MAX: f32 = 1000.0;
