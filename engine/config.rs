//! Settings: built-in defaults ← config file ← command-line flags, merged once and validated.
//!
//! Each pipeline stage has its own small config (`EmbedConfig`, `ChunkConfig`, `FuseConfig`…).
//! A section is declared once with [`section!`], which generates the resolved struct (with its
//! defaults), an all-`Option` layer struct for the file and the flags, `overwrite` (later layer
//! wins) and `resolve`. Reading a file never fails on a bad value: unknown keys and values of the
//! wrong type produce a warning that names the key and the fallback used. Values of the right type
//! outside their [`bounds`] are errors for the command line ([`SettingsLayer::resolve`]); the
//! hook and the daemon, which must keep answering, lose only the section ([`Settings::load`]).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::ops::RangeInclusive;
use std::path::Path;

macro_rules! section {
    ($(#[$meta:meta])* $name:ident / $layer:ident {
        $( $(#[$fmeta:meta])* $field:ident : $ty:ty = $default:expr ),* $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct $name { $( $(#[$fmeta])* pub $field: $ty, )* }

        impl Default for $name {
            fn default() -> Self { Self { $( $field: $default, )* } }
        }

        #[doc = concat!("One layer (file or flags) of [`", stringify!($name), "`]: `None` means not set here.")]
        #[derive(Debug, Clone, Default)]
        pub struct $layer { $( $(#[$fmeta])* pub $field: Option<$ty>, )* }

        impl $layer {
            /// Fields set in `later` win over fields set in `self`.
            pub fn overwrite(self, later: $layer) -> $layer {
                $layer { $( $field: later.$field.or(self.$field), )* }
            }

            /// The settings this layer describes, with defaults for unset fields.
            pub fn resolve(&self) -> $name {
                let d = $name::default();
                $name { $( $field: self.$field.clone().unwrap_or(d.$field), )* }
            }

            /// Reads the layer from a TOML table; bad or unknown keys become warnings.
            fn from_table(section: &str, mut table: toml::Table, warnings: &mut Vec<String>) -> $layer {
                let defaults = $name::default();
                let layer = $layer { $(
                    $field: table.remove(stringify!($field)).and_then(|v| {
                        let shown = v.to_string();
                        match <$ty as Deserialize>::deserialize(v) {
                            Ok(x) => Some(x),
                            Err(e) => {
                                warnings.push(format!(
                                    "config: [{}] {} = {} is invalid ({}); using the default {:?}",
                                    section, stringify!($field), shown, e.message(), defaults.$field));
                                None
                            }
                        }
                    }),
                )* };
                for key in table.keys() {
                    warnings.push(format!("config: unknown key [{}] {}; ignored", section, key));
                }
                layer
            }
        }
    };
}

section! {
    /// The embedding model's run-time settings.
    EmbedConfig / EmbedLayer {
        /// Texts per ONNX run at most; 8–16 is fastest on this class of machine.
        batch_size: usize = 16,
        /// Padded tokens per ONNX run at most: long texts go in smaller runs. A run's working
        /// memory grows with the square of its length, and ONNX Runtime's arena keeps the largest
        /// run's: measured peak RSS indexing 419 code chunks, 970 MB at 4096 (16 × 256 tokens),
        /// 570 MB at 2048, 396 MB at 1024, at the same speed.
        batch_tokens: usize = 1024,
        /// Tokens the model sees per text; longer texts are truncated.
        max_length: usize = 256,
        /// ONNX intra-op threads (`None`: all cores).
        threads: Option<usize> = None,
        /// ONNX Runtime's CPU memory arena. Once `batch_tokens` bounds the runs, turning it off
        /// saves little memory and cost half the speed when measured (35.8 s instead of 19.0 s
        /// for the same 419 chunks).
        memory_arena: bool = true,
    }
}

section! {
    /// What the directory walk takes in.
    IndexConfig / IndexLayer {
        /// Only paths matching one of these globs are indexed (empty: everything).
        include: Vec<String> = Vec::new(),
        /// Paths matching these globs are skipped.
        exclude: Vec<String> = Vec::new(),
        /// Hidden directories walked anyway (memory records live in one).
        hidden_include: Vec<String> = vec![".claude/memory".to_string()],
        /// Larger files are skipped with a warning.
        max_file_size: u64 = 1024 * 1024,
    }
}

section! {
    /// Chunk sizes.
    ChunkConfig / ChunkLayer {
        /// Token budget of a chunk's body; the title rides on top, within the model's 256.
        max_tokens: usize = 240,
        /// Share of a window carried into the next one.
        overlap: f32 = 0.15,
        /// Token budget of a piece of a long memory record (a compaction summary, a session
        /// record): a piece is about one fact, so the piece a prompt finds is the fact it asks
        /// for, whole, not a window of 240 tokens that may cut before it. Chosen on the dev half
        /// of golden/transcripts with `[context] record_parts` (README, memory quality).
        memory_max_tokens: usize = 80,
    }
}

section! {
    /// The vector leg.
    VectorConfig / VectorLayer {
        /// HNSW links per node.
        m: usize = 16,
        /// HNSW candidate-list size while building the graph: larger is slower to build and more accurate.
        ef_construction: usize = 200,
        /// HNSW candidate-list size per query on a graph of up to `ef_search_rows` rows (raised to
        /// the number of hits wanted when smaller).
        ef_search: usize = 96,
        /// Graph size up to which `ef_search` holds as it is.
        ef_search_rows: usize = 20_000,
        /// Added to `ef_search` per doubling of the graph beyond `ef_search_rows`: recall at a
        /// fixed candidate-list size falls as the graph grows. Measured by `cargo bench --bench
        /// vector` on 54.7k code chunks (scripts/bench-large.sh): recall@10 0.969 at ef 96, 0.979
        /// at 128, 0.986 at 160, 0.990 at 200 on one build, 0.978 at 166 on another (builds vary);
        /// 72 gives ef 201 there. A denser graph (m 24) did no better at equal ef.
        ef_search_per_doubling: usize = 72,
        /// Below this many vectors, exact search is used: it is exact, and faster there. Measured
        /// by `cargo bench --bench vector` on SciFact + CoSQA embeddings: exact 0.46 ms vs HNSW
        /// 0.56 ms at 5k vectors, exact 1.19 ms vs HNSW 0.70 ms at 10k.
        exact_below: usize = 7_000,
        /// Share of rows an update may leave outside a reused HNSW graph (removed rows still in
        /// it, new rows searched exactly beside it) before the graph is rebuilt from scratch.
        /// Below it, editing a file in a large index takes a second, not a graph build.
        stale_max: f32 = 0.1,
    }
}

section! {
    /// The BM25 leg: per-field boosts.
    Bm25Config / Bm25Layer {
        /// Boost of the title field.
        title_boost: f32 = 1.5,
        /// Boost of the body text.
        body_boost: f32 = 1.0,
        /// Boost of the symbols a chunk defines.
        symbols_boost: f32 = 2.0,
        /// Boost of the file path.
        path_boost: f32 = 0.5,
        /// Boost of a memory record's tags.
        tags_boost: f32 = 1.5,
    }
}

/// Leg weights of one intent profile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    /// Weight of the vector (embedding) leg.
    pub vector: f32,
    /// Weight of the lexical (BM25) leg.
    pub lexical: f32,
    /// Weight of the symbol leg (chunks defining identifiers the query names).
    pub symbol: f32,
}

const fn w(vector: f32, lexical: f32, symbol: f32) -> Weights {
    Weights { vector, lexical, symbol }
}

/// Search modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Lexical leg only.
    Bm25,
    /// Vector leg only.
    Vector,
    /// All legs fused.
    Hybrid,
}

section! {
    /// The search path.
    SearchConfig / SearchLayer {
        /// Results returned.
        k: usize = 10,
        /// Hits each leg contributes to fusion.
        top_n: usize = 100,
        /// Legs searched when a request does not say.
        mode: Mode = Mode::Hybrid,
        /// Fused candidates read from the index per result wanted (`factor · wanted + extra`):
        /// the boosts reorder them and overlapping windows of one chunk are dropped, so more
        /// than the wanted number are read to fill the list.
        candidates_factor: usize = 3,
        /// The `extra` of `candidates_factor`: fused candidates read on top of the multiple.
        candidates_extra: usize = 10,
        /// Characters of a hit's snippet (the lines around the query's words).
        snippet_chars: usize = 240,
        /// Score factor of a memory record another record supersedes (`supersedes`, or a newer
        /// record of the same category and title): the newer one ranks first.
        superseded_factor: f32 = 0.5,
        /// Recency decay of memory records: a record of a `memory_decay_categories` category
        /// loses half its score every this many days since it was created; 0 turns it off
        /// (the default: measured in the README, it did not help the memory sets).
        memory_half_life_days: f32 = 0.0,
        /// The categories recency decay applies to.
        memory_decay_categories: Vec<String> =
            ["session", "notes", "bugfix", "task"].iter().map(|s| s.to_string()).collect(),
    }
}

section! {
    /// Weighted RRF fusion.
    FuseConfig / FuseLayer {
        /// RRF k of the vector leg: a hit at rank r adds weight / (k + r).
        k_vector: f32 = 70.0,
        /// RRF k of the lexical (BM25) leg.
        k_lexical: f32 = 70.0,
        /// RRF k of the symbol leg.
        k_symbol: f32 = 50.0,
        /// Leg weights for queries naming identifiers.
        symbol: Weights = w(0.2, 0.2, 0.5),
        /// Leg weights for questions about relations: callers, call chains, dependencies.
        flow: Weights = w(0.3, 0.3, 0.4),
        /// Leg weights for conceptual questions.
        concept: Weights = w(0.7, 0.2, 0.1),
        /// Leg weights for natural-language queries asking for code.
        // Tuned on CoSQA dev (natural-language queries over code: BM25 hits are mostly noise
        // there); the starting point was vector .5, lexical .35, symbol .15.
        code: Weights = w(0.8, 0.1, 0.1),
        /// Leg weights when no intent stands out.
        balanced: Weights = w(0.4, 0.4, 0.2),
        /// Exponent applied to intent probabilities before mixing profiles (1: plain softmax).
        /// 3 measured better than 1 on CoSQA dev (MRR@10 .469 → .509 with the tuned profiles).
        intent_sharpness: f32 = 3.0,
        /// Consensus factor min(max, 1 + beta·(√n − 1)) · (1 − w + w·quality). Off by default:
        /// beta 0.3 with w 0.5 lowered CoSQA dev MRR@10 (.509 → .466) and SciFact nDCG@10
        /// (.709 → .706), because a document found by both legs but ranked low by one of them
        /// was pushed below a single-leg hit. Kept configurable for collections where it helps.
        consensus_beta: f32 = 0.0,
        /// Upper bound of the consensus factor's first term, `max` in the formula above.
        consensus_max: f32 = 1.5,
        /// Rank scale of the legs' average rank in the consensus quality: 1 / (1 + rank / q0).
        consensus_q0: f32 = 10.0,
        /// How much the legs' average rank scales the consensus factor (0.5 in the original
        /// formula: factor × (0.5 + 0.5·quality)).
        consensus_quality_weight: f32 = 0.0,
        /// Factor for hits whose symbols or path match one the query names.
        expansion_boost: f32 = 1.1,
        /// Factor for tests, benchmarks and fixtures ([`crate::ingest::is_test_path`]) when the
        /// query is not about tests: they repeat the words of the code they test and crowded the
        /// answer out. Chosen on the dev halves of the real-project sets (0.9 / 0.8 / 0.7 / 0.5:
        /// the answering file within the first three files for 83 / 88 / 88 / 88% of dev prompts,
        /// 76% at 1.0); 1.0 turns it off.
        test_factor: f32 = 0.8,
        /// Factor for every file that is not a test, benchmark or fixture when the query is about
        /// tests ([`crate::intent::about_tests`]): "which test covers…" wants the test, and the
        /// code under test shares its words. 1.0 turns it off.
        non_test_factor: f32 = 0.7,
        /// A leg whose mixed weight is below this share of the strongest leg's is dropped: under
        /// RRF's flat curve a 0.12 lexical weight still let BM25's top hit jump ten vector ranks.
        /// CoSQA dev MRR@10 .507 → .537 (0.20: .523; 0.30: same as 0.25); golden dev sets and
        /// SciFact unchanged (no balanced or concept profile is that lopsided).
        min_weight_ratio: f32 = 0.25,
        /// How hits are ordered (see [`FuseMethod`]). Learned fusion is opt-in: fitted on SciFact
        /// train and the golden dev halves it lifts SciFact test but loses CoSQA dev (README,
        /// "Learned fusion").
        method: FuseMethod = FuseMethod::Rrf,
        /// RRF candidates the learned fusion reorders.
        learned_depth: usize = 100,
        /// Weights of the learned fusion's features, in `fuse::FEATURES` order, fitted
        /// by `scripts/fit-fusion.py` on SciFact train and the golden sets' dev halves.
        learned_weights: Vec<f32> = LEARNED_WEIGHTS.to_vec(),
        /// Intercept of the learned fusion's logistic model.
        learned_bias: f32 = LEARNED_BIAS,
    }
}

/// Features of the learned fusion (their names: `fuse::FEATURES`).
pub(crate) const LEARNED_FEATURES: usize = 14;

/// `scripts/fit-fusion.py --train sf-train.jsonl golden.jsonl` (README, "Learned fusion").
const LEARNED_WEIGHTS: [f32; LEARNED_FEATURES] = [
    -0.1511, 1.8916, 1.9461, 0.2781, 2.6186, -3.5881, 4.1802, 4.0555, 0.5027, 0.1468, -5.5405, 2.9813, -0.8536, 4.3665,
];
const LEARNED_BIAS: f32 = -6.0737;

/// How the legs' hits are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FuseMethod {
    /// Weighted reciprocal rank fusion with intent-mixed weights.
    Rrf,
    /// RRF, then its first `learned_depth` candidates reordered by a logistic model of what the
    /// legs returned for them (`fuse::FEATURES`).
    Learned,
}

/// When the cross-encoder reranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum RerankMode {
    /// Never rerank.
    Never,
    /// Rerank every hybrid query.
    Always,
    /// Long enough queries whose intent is concept or flow, or that ask why / how / explain / debug.
    Auto,
}

section! {
    /// The optional rerank stage.
    RerankConfig / RerankLayer {
        /// When the reranker runs (a request may override it).
        mode: RerankMode = RerankMode::Auto,
        /// Directory holding the cross-encoder (`model.onnx` and its tokenizer files); default:
        /// `models/reranker/` once `scripts/fetch-models.sh --reranker` has installed the
        /// manifest's `[reranker]` there.
        model: Option<String> = None,
        /// Fused hits the reranker rescores.
        top_k: usize = 20,
        /// Final score = weight · sigmoid(logit) + (1 − weight) · fused score / best fused score.
        /// Fitted with ms-marco-MiniLM-L-12 on the golden dev halves (nDCG@10 summed over five
        /// sets: 0.15 → 4.422, 0.3 → 4.442, 0.5 → 4.391, 0.8 → 4.396, no rerank 4.343) and checked
        /// on SciFact train (0.698 → 0.723); README, "Rerank".
        weight: f32 = 0.3,
        /// Tokens per (query, passage) pair.
        max_length: usize = 256,
        /// Pairs per ONNX run. One: a pair's score does not depend on its batch (the packaged int8
        /// graph quantizes activations over the whole padded batch), the deadline is checked after
        /// every pair, and nothing is padded: a pair costs its own length (20 pairs of exactly 256
        /// tokens, where padding costs nothing: 0.98 s one by one, 0.73 s as one batch, `cargo
        /// bench --bench rerank`).
        batch_size: usize = 1,
        /// Past this, the fused order stands (and the response says so). The packaged
        /// cross-encoder took p50 0.27–0.65 s for 20 hits in the README's runs, 1 s for 20 pairs
        /// of 256 tokens (`cargo bench --bench rerank`).
        deadline_ms: u64 = 2000,
        /// Auto mode: at least this many words…
        auto_min_words: usize = 4,
        /// …and a concept or flow intent, or one of these words.
        auto_words: Vec<String> = ["why", "how", "explain", "debug"].iter().map(|s| s.to_string()).collect(),
    }
}

section! {
    /// Confidence labels (high / medium / low) per hit. Calibrated on the dev half of the golden
    /// sets (README, "Confidence calibration"): the fused score alone cannot tell hits apart —
    /// rank 10 still has ~0.73 of the best RRF score — so labels also need the raw evidence
    /// (cosine to the query; raw BM25 when there is no model) relative to the best hit's.
    TierConfig / TierLayer {
        /// Final-score ratio to the best hit needed for "high"…
        high_ratio: f32 = 0.75,
        /// …and for "medium"; below it, "low".
        medium_ratio: f32 = 0.40,
        /// Evidence ratio (the better of cosine and BM25, each to the best hit's) needed for
        /// "high" (dev: 0.95 → 86% of high hits relevant; 0.85 → 79%)…
        evidence_high: f32 = 0.95,
        /// …and for "medium".
        evidence_medium: f32 = 0.80,
        /// Absolute evidence floor: below `floor_high` a hit cannot be high, below `floor_medium`
        /// it is low, whatever its ratios. On: without it 82% of high hits were relevant instead
        /// of 87%, and 3 of the 3 dev prompts with no answer got context.
        floor: bool = true,
        /// Cosine below which a hit cannot be "high".
        floor_high: f32 = 0.40,
        /// Cosine below which a hit is "low".
        floor_medium: f32 = 0.30,
        /// The same floors on raw BM25 scores, for answers without a model.
        floor_high_bm25: f32 = 12.0,
        /// Raw BM25 score below which a hit is "low" when there is no model.
        floor_medium_bm25: f32 = 6.0,
        /// When more than `max_inject` hits sit within `cluster_ratio` of the best evidence, none
        /// is high. Off: it changed no label on the dev half.
        cluster_cap: bool = false,
        /// Evidence ratio to the best hit that counts as "close" for the cluster cap.
        cluster_ratio: f32 = 0.90,
        /// Close hits the cluster cap allows before it withholds "high".
        max_inject: usize = 3,
        /// A lone result needs at least this cosine to be high.
        single_floor: f32 = 0.55,
    }
}

section! {
    /// Abstention ([`crate::abstain`]): a logistic model of query-level evidence decides whether
    /// anything answers a prompt; below `threshold` the hook and `--format context` add nothing.
    /// Fitted by `scripts/fit-abstain.py` on every golden set's prompts; leave-one-corpus-out
    /// figures in the README ("Abstention").
    AbstainConfig / AbstainLayer {
        /// Off: no verdict is made and hits keep the labels [`TierConfig`] gave them.
        enabled: bool = true,
        /// Weight of the best hit's cosine (the weights and the intercept below are one fit of
        /// `scripts/fit-abstain.py`).
        w_cosine: f32 = 4.27,
        /// Weight of the best coverage of the query's term weight by one of the first hits.
        w_coverage: f32 = 5.07,
        /// Weight of the share of the query's term weight the corpus has never seen.
        w_unseen: f32 = -3.57,
        /// Weight of a conversational prompt (1 when conversational, else 0).
        w_conversational: f32 = -4.15,
        /// Weight of the vector leg's cosine gap (its best cosine minus its `gap_rank`-th).
        w_gap: f32 = 7.72,
        /// Intercept of the logistic model.
        bias: f32 = -3.77,
        /// Probability below which the engine says nothing: the fit's threshold keeps 96% of
        /// the prompts that have an answer.
        threshold: f32 = 0.31,
        /// The threshold when the best hit is a memory record: records are short notes written
        /// in other words than a later prompt, so the same evidence means more. The same rule
        /// (keep 96% of the prompts that have an answer) on the dev halves of the two memory
        /// sets (golden/memory, golden/transcripts), fitted again whenever capture or memory
        /// chunking changes; held-out and leave-one-set-out figures in the README ("Claude Code
        /// hook", memory quality).
        memory_threshold: f32 = 0.252,
        /// The best hit is "high" only at this probability and when it covers this share of
        /// the query's term weight itself.
        high_probability: f32 = 0.5,
        /// Share of the query's term weight the best hit must cover to be "high".
        high_coverage: f32 = 0.5,
        /// Stands in for the cosine when there is no model (BM25 only): abstention then rests on
        /// coverage.
        cosine_without_model: f32 = 0.5,
        /// Hits of the first this-many files are listed (at least "medium"), the rest "low".
        list_files: usize = 8,
        /// First hits whose own coverage of the query is measured on every query (the best of
        /// them is the model's coverage signal): changing it changes what the model was fitted on.
        measured_hits: usize = 10,
        /// First hits whose words together make the query-level coverage (diagnostics).
        coverage_hits: usize = 3,
        /// Rank within a leg that counts as that leg agreeing on the best hit (diagnostics).
        agreement_rank: usize = 10,
        /// The vector leg's hit whose cosine the best one is compared with (the gap feature):
        /// changing it changes what the model was fitted on.
        gap_rank: usize = 10,
        /// Stands in for the cosine gap when there is no model (or fewer than `gap_rank`
        /// vectors): the fit never sees such a prompt, so this alone sets the gap's part of
        /// those verdicts. Between the medians of the golden prompts (no-answer 0.069,
        /// answerable 0.155; README, "The cosine gap").
        gap_without_model: f32 = 0.1,
    }
}

/// How `--format context` prints hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputMode {
    /// By confidence: high with the most room (a clear winner in full), medium compact, low left out.
    Tiered,
    /// Every hit as a `<result>`.
    Legacy,
}

section! {
    /// The context block handed to an LLM (`engine search --format context`, the hook).
    ContextConfig / ContextLayer {
        /// How the block lays hits out (see [`OutputMode`]).
        output_mode: OutputMode = OutputMode::Tiered,
        /// Token budget of the block, counted with the model's tokenizer.
        budget_tokens: usize = 2000,
        /// Packing stops at this share of the budget.
        fill: f32 = 0.95,
        /// Characters of the one-line summary of a hit.
        summary_chars: usize = 100,
        /// Characters of a result's snippet.
        snippet_chars: usize = 400,
        /// Caps on other user-controlled strings.
        title_chars: usize = 120,
        /// Characters of a path.
        path_chars: usize = 200,
        /// Characters of a tag or a memory record's category.
        tag_chars: usize = 40,
        /// Tags shown per hit.
        max_tags: usize = 8,
        /// A clear winner (full text) needs a raw cosine of at least this…
        winner_min_cosine: f32 = 0.55,
        /// …and every other hit's cosine at most (1 − gap) of its cosine.
        winner_gap: f32 = 0.15,
        /// Neighbouring chunks added on each side of a strong hit in an ambiguous cluster.
        neighbours: usize = 1,
        /// Pieces of one long memory record (a compaction summary) shown together in its entry,
        /// each as its own window: the record's attributes are written once, not once per piece,
        /// and the room saved shows more pieces.
        record_parts: usize = 6,
    }
}

section! {
    /// `engine hook` and the daemon.
    HookConfig / HookLayer {
        /// Past this, the hook gives up (or answers from BM25 if that was ready).
        deadline_ms: u64 = 1500,
        /// The context never exceeds this many characters (the client previews larger ones).
        max_chars: usize = 8000,
        /// Hits searched per prompt: enough for `[abstain] list_files` distinct files (the
        /// context lists one line per file). 8 listed ~5 files; 24 raised the dev halves' hit
        /// rate (click 92 → 96%, ripgrep 83 → 88%).
        k: usize = 24,
        /// Whether the cross-encoder reranks a prompt's hits (`[rerank] mode` is for `search` and
        /// MCP): never by default, as ms-marco-MiniLM-L-12 takes 0.3–1 s for 20 hits on this
        /// machine's two cores (README, "Rerank"); the hook then loads no reranker at all. Opted
        /// in, `[hook] deadline_ms` must leave room for `[rerank] deadline_ms`.
        rerank: RerankMode = RerankMode::Never,
        /// Prompts with fewer words get no context.
        min_words: usize = 3,
        /// Prompts are cut to this many characters before searching.
        max_query_chars: usize = 2000,
        /// Ask the warm daemon first (and start it when it is not running).
        daemon: bool = true,
        /// The daemon exits after this long without a request.
        idle_timeout_s: u64 = 1800,
        /// CPU niceness of the indexing the hook starts in the background (first run, edits
        /// without a daemon, captured memory); 0 runs it at normal priority. At 19 a prompt
        /// answered while a first index embeds took 11–12 ms at p50 instead of 17–21 (README,
        /// "Claude Code hook").
        background_nice: i32 = 19,
        /// A session starting in a project without an index starts indexing it in the background
        /// (only a git work tree or a directory with `engine.toml`, owned by the user, never the
        /// home directory or `/`).
        auto_index: bool = true,
        /// Session digest: memory record categories it lists, newest first…
        digest_categories: Vec<String> = ["decision", "convention"].iter().map(|s| s.to_string()).collect(),
        /// …at most this many…
        digest_records: usize = 8,
        /// …within this many characters.
        digest_max_chars: usize = 3000,
        /// A session's own record or compaction summary shows this many characters of itself
        /// (other records show `[context] summary_chars`).
        digest_session_chars: usize = 900,
    }
}

section! {
    /// Memory capture from transcripts (`PreCompact`, `SessionEnd`, `engine memory capture`).
    CaptureConfig / CaptureLayer {
        /// Capture on `PreCompact` and `SessionEnd`.
        enabled: bool = true,
        /// Titles of captured records are cut to this many characters.
        title_chars: usize = 100,
        /// A session record lists this many prompts…
        session_prompts: usize = 12,
        /// …each cut to this many characters…
        prompt_chars: usize = 240,
        /// …this many files per list…
        session_files: usize = 20,
        /// …this many commands…
        session_commands: usize = 15,
        /// …and this many errors.
        session_errors: usize = 10,
        /// At most this many decision and convention records per capture.
        max_statements: usize = 30,
        /// Keep the last this many recaps (long list-like assistant messages) of a session.
        max_recaps: usize = 3,
        /// Findings (explaining sentences of the assistant) per notes record.
        notes_per_record: usize = 12,
        /// At most this many names per edited file in the `changes` record.
        names_per_file: usize = 40,
        /// At most this many `task` records (an issue tracker's view of a task the session
        /// worked on) per capture…
        max_tasks: usize = 20,
        /// …each its tracker's output cut to this many characters.
        task_chars: usize = 8000,
    }
}

section! {
    /// `engine memory gc`.
    MemoryConfig / MemoryLayer {
        /// Records of the same category whose words overlap this much (Jaccard) are near
        /// duplicates; gc keeps the newest.
        near_duplicate: f32 = 0.8,
        /// gc removes `session` records older than this many days (0: never).
        session_max_age_days: u64 = 90,
        /// gc removes `bugfix` records older than this many days (0: never).
        bugfix_max_age_days: u64 = 365,
    }
}

/// Declares the sections once: the resolved [`Settings`], the [`SettingsLayer`] of `Option`s, and
/// everything that goes over every section (reading, merging, resolving, validating).
macro_rules! settings {
    ($( $section:ident : $config:ident / $layer:ident ),* $(,)?) => {
        /// Everything the engine can be configured with, resolved.
        #[derive(Debug, Clone, Default, PartialEq, Serialize)]
        pub struct Settings {
            $(
                #[doc = concat!("The `[", stringify!($section), "]` section.")]
                pub $section: $config,
            )*
        }

        /// One layer of every section.
        #[derive(Debug, Clone, Default)]
        pub struct SettingsLayer {
            $(
                #[doc = concat!("The `[", stringify!($section), "]` section of this layer.")]
                pub $section: $layer,
            )*
        }

        impl SettingsLayer {
            /// Takes every known section out of a parsed file; bad keys become warnings.
            fn from_root(root: &mut toml::Table, warnings: &mut Vec<String>) -> SettingsLayer {
                SettingsLayer { $(
                    $section: $layer::from_table(
                        stringify!($section),
                        take_section(root, stringify!($section), warnings),
                        warnings,
                    ),
                )* }
            }

            /// Fields set in `later` win.
            pub fn overwrite(self, later: SettingsLayer) -> SettingsLayer {
                SettingsLayer { $( $section: self.$section.overwrite(later.$section), )* }
            }

            /// Resolves without validating ([`Settings::problems`] lists what is out of range).
            pub fn resolve_unchecked(&self) -> Settings {
                Settings { $( $section: self.$section.resolve(), )* }
            }
        }

        impl Settings {
            fn sections(&self) -> Vec<(&'static str, &dyn Validate)> {
                vec![ $( (stringify!($section), &self.$section as &dyn Validate), )* ]
            }

            /// Replaces each section that has a problem by its defaults; returns the warnings saying so.
            fn with_valid_sections(mut self) -> (Settings, Vec<String>) {
                let defaults = Settings::default();
                let mut warnings = Vec::new();
                $(
                    let problems = problems_of(stringify!($section), &self.$section);
                    if !problems.is_empty() {
                        warnings.extend(problems.into_iter().map(|p| {
                            format!("config: {p}; using the [{}] defaults", stringify!($section))
                        }));
                        self.$section = defaults.$section.clone();
                    }
                )*
                (self, warnings)
            }
        }
    };
}

settings! {
    embed: EmbedConfig / EmbedLayer,
    index: IndexConfig / IndexLayer,
    chunk: ChunkConfig / ChunkLayer,
    vector: VectorConfig / VectorLayer,
    bm25: Bm25Config / Bm25Layer,
    search: SearchConfig / SearchLayer,
    fuse: FuseConfig / FuseLayer,
    rerank: RerankConfig / RerankLayer,
    tier: TierConfig / TierLayer,
    abstain: AbstainConfig / AbstainLayer,
    context: ContextConfig / ContextLayer,
    hook: HookConfig / HookLayer,
    capture: CaptureConfig / CaptureLayer,
    memory: MemoryConfig / MemoryLayer,
}

/// Removes section `name` from a parsed file; a value that is not a table is a warning.
fn take_section(root: &mut toml::Table, name: &str, warnings: &mut Vec<String>) -> toml::Table {
    match root.remove(name) {
        Some(toml::Value::Table(t)) => t,
        Some(other) => {
            warnings.push(format!("config: [{name}] should be a table, found {}; ignored", other.type_str()));
            toml::Table::new()
        }
        None => toml::Table::new(),
    }
}

/// Characters of the offending line quoted in a TOML syntax error.
const QUOTED_LINE_CHARS: usize = 80;

/// A TOML syntax error on one line: where it is, toml's (multi-line) message joined, and the line
/// itself, which names the key when the value is the problem (`k = 18446744073709551615`).
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
    let Some(span) = e.span() else { return message };
    let before = text.get(..span.start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let quoted: String = text.lines().nth(line - 1).unwrap_or("").trim().chars().take(QUOTED_LINE_CHARS).collect();
    format!("line {line}, column {column}: {message} (in `{quoted}`)")
}

impl SettingsLayer {
    /// Parses a config file's text; returns the layer and the warnings about keys it ignored.
    pub(crate) fn from_toml(text: &str, origin: &str) -> Result<(SettingsLayer, Vec<String>)> {
        let mut root: toml::Table =
            toml::from_str(text).map_err(|e| Error::Config(format!("{origin}: {}", toml_error(text, &e))))?;
        let mut warnings = Vec::new();
        let layer = SettingsLayer::from_root(&mut root, &mut warnings);
        for key in root.keys() {
            warnings.push(format!("config: unknown section [{key}]; ignored"));
        }
        Ok((layer, warnings))
    }

    /// Reads a config file if it exists.
    pub fn from_file(path: &Path) -> Result<(SettingsLayer, Vec<String>)> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((SettingsLayer::default(), Vec::new())),
            Err(_) if path.is_dir() => {
                return Err(Error::Config(format!("{} is a directory, not a config file", path.display())))
            }
            Err(e) => return Err(Error::io(format!("reading config {}", path.display()), e)),
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::Config(format!(
                "{}: not UTF-8 text (invalid byte at offset {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ))
        })?;
        SettingsLayer::from_toml(&text, &path.display().to_string())
    }

    /// Resolves and validates.
    pub fn resolve(&self) -> Result<Settings> {
        let settings = self.resolve_unchecked();
        settings.validate()?;
        Ok(settings)
    }
}

/// Bounds of numeric settings and of the flags that override them. Values outside them either
/// cannot work (0 results, a zero-width window) or exhaust the machine before failing (a
/// trillion-slot result buffer, a million ONNX threads, a 1 TB file read into memory).
pub mod bounds {
    use std::ops::RangeInclusive;

    /// Results per query (`[search] k`, `[hook] k`, `engine search -k`).
    pub const K: RangeInclusive<usize> = 1..=1000;
    /// Hits each leg hands to fusion.
    pub(crate) const TOP_N: RangeInclusive<usize> = 1..=10_000;
    /// ONNX intra-op threads.
    pub(crate) const THREADS: RangeInclusive<usize> = 1..=256;
    /// Texts (or pairs) per ONNX run: 256 texts of 256 tokens took 6.4 GB of RSS on this machine.
    pub const BATCH: RangeInclusive<usize> = 1..=64;
    /// Padded tokens per ONNX run.
    pub const BATCH_TOKENS: RangeInclusive<usize> = 64..=65_536;
    /// Tokens per model input: MiniLM and BERT-style cross-encoders have 512 positions.
    pub(crate) const MODEL_TOKENS: RangeInclusive<usize> = 8..=512;
    /// Chunk body budget in tokens.
    pub(crate) const CHUNK_TOKENS: RangeInclusive<usize> = 16..=4096;
    /// Any deadline, in milliseconds: at most 10 minutes.
    pub(crate) const DEADLINE_MS: RangeInclusive<u64> = 1..=600_000;
    /// CPU niceness of background work: 0 (normal) to 19 (lowest).
    pub(crate) const NICE: RangeInclusive<i32> = 0..=19;
    /// The daemon's idle timeout, in seconds: at most a week.
    pub const IDLE_TIMEOUT_S: RangeInclusive<u64> = 1..=604_800;
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
}

/// A section's own consistency rules; problems name the key, its value and what is allowed.
trait Validate {
    fn check(&self, c: &mut Check);
}

/// Collects the problems of one section.
struct Check {
    section: &'static str,
    problems: Vec<String>,
}

impl Check {
    fn new(section: &'static str) -> Check {
        Check { section, problems: Vec::new() }
    }

    fn fail(&mut self, key: &str, value: impl std::fmt::Display, allowed: impl std::fmt::Display) {
        self.problems.push(format!("[{}] {key} = {value} is out of range: allowed {allowed}", self.section));
    }

    fn int<T: PartialOrd + std::fmt::Display>(&mut self, key: &str, value: T, allowed: RangeInclusive<T>) {
        if !allowed.contains(&value) {
            self.fail(key, value, format!("{}..={}", allowed.start(), allowed.end()));
        }
    }

    /// A finite float within `allowed` (NaN and infinities never are).
    fn float(&mut self, key: &str, value: f32, allowed: RangeInclusive<f32>) {
        if !value.is_finite() || !allowed.contains(&value) {
            self.fail(key, value, format!("a finite number in {}..={}", allowed.start(), allowed.end()));
        }
    }

    /// A finite float above 0, at most `max`.
    fn positive(&mut self, key: &str, value: f32, max: f32) {
        if !value.is_finite() || value <= 0.0 || value > max {
            self.fail(key, value, format!("a finite number above 0, at most {max}"));
        }
    }

    /// `low_key` must not exceed `high_key`.
    fn ordered(&mut self, low_key: &str, low: f32, high_key: &str, high: f32) {
        if low > high {
            self.problems.push(format!(
                "[{}] {low_key} = {low} is above {high_key} = {high}: allowed {low_key} <= {high_key}",
                self.section
            ));
        }
    }

    fn globs(&mut self, key: &str, patterns: &[String]) {
        for p in patterns {
            if let Err(e) = globset::Glob::new(p) {
                self.problems.push(format!("[{}] {key}: {p:?} is not a valid glob ({e})", self.section));
            }
        }
    }

    fn weights(&mut self, key: &str, w: &Weights) {
        let max = bounds::FACTOR_MAX;
        self.float(&format!("{key}.vector"), w.vector, 0.0..=max);
        self.float(&format!("{key}.lexical"), w.lexical, 0.0..=max);
        self.float(&format!("{key}.symbol"), w.symbol, 0.0..=max);
        if w.vector + w.lexical + w.symbol <= 0.0 {
            self.problems.push(format!("[{}] {key}: every weight is 0; at least one must be above 0", self.section));
        }
    }
}

impl Validate for EmbedConfig {
    fn check(&self, c: &mut Check) {
        c.int("batch_size", self.batch_size, bounds::BATCH);
        c.int("batch_tokens", self.batch_tokens, bounds::BATCH_TOKENS);
        c.int("max_length", self.max_length, bounds::MODEL_TOKENS);
        if let Some(t) = self.threads {
            c.int("threads", t, bounds::THREADS);
        }
    }
}

impl Validate for IndexConfig {
    fn check(&self, c: &mut Check) {
        c.globs("include", &self.include);
        c.globs("exclude", &self.exclude);
        // The walk joins these to the project root: an absolute path or a `..` would index
        // files outside the project.
        for dir in &self.hidden_include {
            let p = std::path::Path::new(dir);
            if p.is_absolute() || p.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
                c.problems.push(format!(
                    "[index] hidden_include: {dir:?} must be a path inside the project (relative, without \"..\")"
                ));
            }
        }
        c.int("max_file_size", self.max_file_size, bounds::MAX_FILE_SIZE);
    }
}

impl Validate for ChunkConfig {
    fn check(&self, c: &mut Check) {
        c.int("max_tokens", self.max_tokens, bounds::CHUNK_TOKENS);
        c.int("memory_max_tokens", self.memory_max_tokens, bounds::CHUNK_TOKENS);
        // Past 0.9 a window would advance by a token or two at a time.
        c.float("overlap", self.overlap, 0.0..=0.9);
    }
}

impl VectorConfig {
    /// The HNSW candidate-list size for a graph of `rows` rows: `ef_search`, plus
    /// `ef_search_per_doubling` per doubling beyond `ef_search_rows`.
    pub fn ef_search_for(&self, rows: usize) -> usize {
        let doublings = (rows as f64 / self.ef_search_rows.max(1) as f64).log2().max(0.0);
        let ef = self.ef_search as f64 + self.ef_search_per_doubling as f64 * doublings;
        (ef.ceil() as usize).min(*bounds::HNSW_EF.end())
    }
}

impl Validate for VectorConfig {
    fn check(&self, c: &mut Check) {
        c.int("m", self.m, bounds::HNSW_M);
        c.int("ef_construction", self.ef_construction, self.m.max(*bounds::HNSW_EF.start())..=*bounds::HNSW_EF.end());
        c.int("ef_search", self.ef_search, bounds::HNSW_EF);
        c.int("ef_search_rows", self.ef_search_rows, 1..=*bounds::EXACT_BELOW.end());
        c.int("ef_search_per_doubling", self.ef_search_per_doubling, 0..=*bounds::HNSW_EF.end());
        c.int("exact_below", self.exact_below, bounds::EXACT_BELOW);
        c.float("stale_max", self.stale_max, 0.0..=1.0);
    }
}

impl Validate for Bm25Config {
    fn check(&self, c: &mut Check) {
        let max = bounds::FACTOR_MAX;
        c.float("title_boost", self.title_boost, 0.0..=max);
        c.float("body_boost", self.body_boost, 0.0..=max);
        c.float("symbols_boost", self.symbols_boost, 0.0..=max);
        c.float("path_boost", self.path_boost, 0.0..=max);
        c.float("tags_boost", self.tags_boost, 0.0..=max);
    }
}

impl Validate for SearchConfig {
    fn check(&self, c: &mut Check) {
        c.float("superseded_factor", self.superseded_factor, 0.0..=1.0);
        c.float("memory_half_life_days", self.memory_half_life_days, 0.0..=36_500.0);
        c.int("k", self.k, bounds::K);
        c.int("top_n", self.top_n, bounds::TOP_N);
        c.int("candidates_factor", self.candidates_factor, 1..=100);
        c.int("candidates_extra", self.candidates_extra, 0..=*bounds::TOP_N.end());
        c.int("snippet_chars", self.snippet_chars, bounds::CHARS);
    }
}

impl Validate for FuseConfig {
    fn check(&self, c: &mut Check) {
        let max = bounds::FACTOR_MAX;
        c.positive("k_vector", self.k_vector, bounds::RRF_K_MAX);
        c.positive("k_lexical", self.k_lexical, bounds::RRF_K_MAX);
        c.positive("k_symbol", self.k_symbol, bounds::RRF_K_MAX);
        for (key, w) in [
            ("symbol", &self.symbol),
            ("flow", &self.flow),
            ("concept", &self.concept),
            ("code", &self.code),
            ("balanced", &self.balanced),
        ] {
            c.weights(key, w);
        }
        c.float("intent_sharpness", self.intent_sharpness, 0.0..=max);
        c.float("consensus_beta", self.consensus_beta, 0.0..=max);
        c.float("consensus_max", self.consensus_max, 1.0..=max);
        c.positive("consensus_q0", self.consensus_q0, bounds::RRF_K_MAX);
        c.float("consensus_quality_weight", self.consensus_quality_weight, 0.0..=1.0);
        c.positive("expansion_boost", self.expansion_boost, max);
        c.positive("test_factor", self.test_factor, max);
        c.positive("non_test_factor", self.non_test_factor, max);
        c.float("min_weight_ratio", self.min_weight_ratio, 0.0..=1.0);
        c.int("learned_depth", self.learned_depth, bounds::TOP_N);
        if self.learned_weights.len() != LEARNED_FEATURES {
            c.problems.push(format!(
                "[{}] learned_weights has {} values: allowed {LEARNED_FEATURES}, one per feature of the learned fusion",
                c.section,
                self.learned_weights.len(),
            ));
        }
        for (i, w) in self.learned_weights.iter().enumerate() {
            c.float(&format!("learned_weights[{i}]"), *w, -1000.0..=1000.0);
        }
        c.float("learned_bias", self.learned_bias, -1000.0..=1000.0);
    }
}

impl Validate for RerankConfig {
    fn check(&self, c: &mut Check) {
        c.int("top_k", self.top_k, bounds::K);
        c.float("weight", self.weight, 0.0..=1.0);
        c.int("max_length", self.max_length, bounds::MODEL_TOKENS);
        c.int("batch_size", self.batch_size, bounds::BATCH);
        c.int("deadline_ms", self.deadline_ms, bounds::DEADLINE_MS);
        c.int("auto_min_words", self.auto_min_words, bounds::COUNT);
    }
}

impl Validate for TierConfig {
    fn check(&self, c: &mut Check) {
        for (key, value) in [
            ("high_ratio", self.high_ratio),
            ("medium_ratio", self.medium_ratio),
            ("evidence_high", self.evidence_high),
            ("evidence_medium", self.evidence_medium),
            ("floor_high", self.floor_high),
            ("floor_medium", self.floor_medium),
            ("cluster_ratio", self.cluster_ratio),
            ("single_floor", self.single_floor),
        ] {
            c.float(key, value, 0.0..=1.0);
        }
        c.float("floor_high_bm25", self.floor_high_bm25, 0.0..=bounds::BM25_FLOOR_MAX);
        c.float("floor_medium_bm25", self.floor_medium_bm25, 0.0..=bounds::BM25_FLOOR_MAX);
        c.ordered("medium_ratio", self.medium_ratio, "high_ratio", self.high_ratio);
        c.ordered("evidence_medium", self.evidence_medium, "evidence_high", self.evidence_high);
        c.ordered("floor_medium", self.floor_medium, "floor_high", self.floor_high);
        c.ordered("floor_medium_bm25", self.floor_medium_bm25, "floor_high_bm25", self.floor_high_bm25);
        c.int("max_inject", self.max_inject, bounds::K);
    }
}

impl Validate for AbstainConfig {
    fn check(&self, c: &mut Check) {
        let max = bounds::WEIGHT_MAX;
        for (key, value) in [
            ("w_cosine", self.w_cosine),
            ("w_coverage", self.w_coverage),
            ("w_unseen", self.w_unseen),
            ("w_conversational", self.w_conversational),
            ("w_gap", self.w_gap),
            ("bias", self.bias),
        ] {
            c.float(key, value, -max..=max);
        }
        for (key, value) in [
            ("threshold", self.threshold),
            ("memory_threshold", self.memory_threshold),
            ("high_probability", self.high_probability),
            ("high_coverage", self.high_coverage),
            ("cosine_without_model", self.cosine_without_model),
            ("gap_without_model", self.gap_without_model),
        ] {
            c.float(key, value, 0.0..=1.0);
        }
        c.ordered("threshold", self.threshold, "high_probability", self.high_probability);
        c.int("list_files", self.list_files, bounds::K);
        c.int("measured_hits", self.measured_hits, bounds::K);
        c.int("coverage_hits", self.coverage_hits, bounds::K);
        c.int("agreement_rank", self.agreement_rank, bounds::TOP_N);
        c.int("gap_rank", self.gap_rank, bounds::TOP_N);
    }
}

impl Validate for ContextConfig {
    fn check(&self, c: &mut Check) {
        c.int("budget_tokens", self.budget_tokens, bounds::BUDGET_TOKENS);
        c.float("fill", self.fill, 0.1..=1.0);
        for (key, value) in [
            ("summary_chars", self.summary_chars),
            ("snippet_chars", self.snippet_chars),
            ("title_chars", self.title_chars),
            ("path_chars", self.path_chars),
            ("tag_chars", self.tag_chars),
        ] {
            c.int(key, value, bounds::CHARS);
        }
        c.int("max_tags", self.max_tags, bounds::COUNT);
        c.float("winner_min_cosine", self.winner_min_cosine, 0.0..=1.0);
        c.float("winner_gap", self.winner_gap, 0.0..=1.0);
        c.int("neighbours", self.neighbours, bounds::COUNT);
        c.int("record_parts", self.record_parts, 1..=100);
    }
}

impl Validate for HookConfig {
    fn check(&self, c: &mut Check) {
        c.int("deadline_ms", self.deadline_ms, bounds::DEADLINE_MS);
        c.int("max_chars", self.max_chars, bounds::HOOK_CHARS);
        c.int("k", self.k, bounds::K);
        c.int("min_words", self.min_words, bounds::COUNT);
        c.int("max_query_chars", self.max_query_chars, bounds::CHARS);
        c.int("idle_timeout_s", self.idle_timeout_s, bounds::IDLE_TIMEOUT_S);
        c.int("background_nice", self.background_nice, bounds::NICE);
        c.int("digest_records", self.digest_records, bounds::COUNT);
        c.int("digest_max_chars", self.digest_max_chars, bounds::CHARS);
        c.int("digest_session_chars", self.digest_session_chars, bounds::CHARS);
    }
}

impl Validate for CaptureConfig {
    fn check(&self, c: &mut Check) {
        for (key, value) in
            [("title_chars", self.title_chars), ("prompt_chars", self.prompt_chars), ("task_chars", self.task_chars)]
        {
            c.int(key, value, bounds::CHARS);
        }
        for (key, value) in [
            ("session_prompts", self.session_prompts),
            ("session_files", self.session_files),
            ("session_commands", self.session_commands),
            ("session_errors", self.session_errors),
            ("max_statements", self.max_statements),
            ("max_recaps", self.max_recaps),
            ("names_per_file", self.names_per_file),
            ("max_tasks", self.max_tasks),
        ] {
            c.int(key, value, bounds::COUNT);
        }
        c.int("notes_per_record", self.notes_per_record, 1..=100);
    }
}

impl Validate for MemoryConfig {
    fn check(&self, c: &mut Check) {
        c.float("near_duplicate", self.near_duplicate, 0.0..=1.0);
        c.int("session_max_age_days", self.session_max_age_days, 0..=36_500);
        c.int("bugfix_max_age_days", self.bugfix_max_age_days, 0..=36_500);
    }
}

fn problems_of(section: &'static str, config: &dyn Validate) -> Vec<String> {
    let mut c = Check::new(section);
    config.check(&mut c);
    c.problems
}

impl Settings {
    /// Reads a project's config for a long-lived or must-not-fail caller (the hook, the daemon):
    /// a missing file gives the defaults; a bad value costs only its own section, which falls
    /// back to that section's defaults with a warning; valid sections are kept. Errors only
    /// when the file cannot be read or parsed at all.
    pub fn load(path: &Path) -> Result<(Settings, Vec<String>)> {
        let (layer, mut warnings) = SettingsLayer::from_file(path)?;
        let (settings, fallbacks) = layer.resolve_unchecked().with_valid_sections();
        warnings.extend(fallbacks);
        Ok((settings, warnings))
    }

    /// Reads a config file for a command a person typed (the CLI), with its flags on top: the
    /// same reading as [`Settings::load`], but strict, because a person can fix the file now.
    /// Any value out of range is [`Error::Config`] naming the file and every bad key; the
    /// warnings (unknown keys and sections) come back with the settings.
    pub fn load_with_flags(path: &Path, flags: SettingsLayer) -> Result<(Settings, Vec<String>)> {
        let (file, warnings) = SettingsLayer::from_file(path)?;
        match file.overwrite(flags).resolve() {
            Ok(settings) => Ok((settings, warnings)),
            // Flags are range-checked by the CLI, so a value out of range comes from the file.
            Err(Error::Config(m)) => Err(Error::Config(format!("{}: {m}", path.display()))),
            Err(e) => Err(e),
        }
    }

    /// Every value out of its allowed range, one line each, naming the key.
    pub fn problems(&self) -> Vec<String> {
        self.sections().into_iter().flat_map(|(name, section)| problems_of(name, section)).collect()
    }

    /// Rejects values no stage can work with (all of them, in one message).
    pub(crate) fn validate(&self) -> Result<()> {
        let problems = self.problems();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Error::Config(problems.join("; ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learned_fusion_needs_one_weight_per_feature() {
        let layer = |t: &str| SettingsLayer::from_toml(t, "c.toml").map(|(l, _)| l);
        let err = layer("[fuse]\nmethod = \"learned\"\nlearned_weights = [1.0, 2.0]\n").unwrap().resolve().unwrap_err();
        let err = err.to_string();
        assert!(err.contains("learned_weights has 2 values") && err.contains("allowed 14"), "{err}");
        assert_eq!(
            layer("[fuse]\nmethod = \"learned\"\n").unwrap().resolve().unwrap().fuse.method,
            FuseMethod::Learned
        );
        let (_, warnings) = SettingsLayer::from_toml("[fuse]\nmethod = \"magic\"\n", "c.toml").unwrap();
        assert!(warnings.iter().any(|w| w.contains("method = \"magic\" is invalid")), "{warnings:?}");
    }

    #[test]
    fn ef_search_holds_for_small_graphs_and_grows_per_doubling() {
        let c = VectorConfig::default();
        assert_eq!(c.ef_search_for(0), c.ef_search);
        assert_eq!(c.ef_search_for(c.ef_search_rows), c.ef_search);
        assert_eq!(c.ef_search_for(4 * c.ef_search_rows), c.ef_search + 2 * c.ef_search_per_doubling);
        assert!(c.ef_search_for(usize::MAX / 2) <= *bounds::HNSW_EF.end());
    }

    #[test]
    fn hidden_include_stays_inside_the_project() {
        for bad in ["/etc", "../other", ".claude/../../x"] {
            let (layer, _) = SettingsLayer::from_toml(&format!("[index]\nhidden_include = [{bad:?}]\n"), "t").unwrap();
            let e = layer.resolve().unwrap_err().to_string();
            assert!(e.contains("hidden_include") && e.contains("inside the project"), "{e}");
        }
        let (layer, _) = SettingsLayer::from_toml("[index]\nhidden_include = [\".github\"]\n", "t").unwrap();
        assert!(layer.resolve().is_ok());
    }

    #[test]
    fn later_layers_win_and_defaults_fill_the_rest() {
        let (file, warnings) = SettingsLayer::from_toml("[embed]\nbatch_size = 8\nmax_length = 128\n", "t").unwrap();
        assert!(warnings.is_empty());
        let flags =
            SettingsLayer { embed: EmbedLayer { batch_size: Some(4), ..Default::default() }, ..Default::default() };
        let s = file.overwrite(flags).resolve().unwrap();
        assert_eq!(s.embed.batch_size, 4);
        assert_eq!(s.embed.max_length, 128);
        assert_eq!(s.embed.threads, None);
    }

    #[test]
    fn bad_values_and_unknown_keys_warn_with_the_fallback() {
        let (layer, warnings) =
            SettingsLayer::from_toml("[embed]\nbatch_size = \"big\"\nbatchsize = 3\n[nope]\nx=1\n", "t").unwrap();
        assert_eq!(layer.resolve().unwrap().embed.batch_size, 16);
        assert!(
            warnings.iter().any(|w| w.contains("batch_size") && w.contains("using the default 16")),
            "{warnings:?}"
        );
        assert!(warnings.iter().any(|w| w.contains("unknown key [embed] batchsize")));
        assert!(warnings.iter().any(|w| w.contains("unknown section [nope]")));
    }

    #[test]
    fn a_misspelt_mode_warns_with_the_fallback() {
        let (layer, warnings) =
            SettingsLayer::from_toml("[context]\noutput_mode = \"tierd\"\n[rerank]\nmode = \"sometimes\"\n", "t")
                .unwrap();
        let s = layer.resolve().unwrap();
        assert_eq!(s.context.output_mode, OutputMode::Tiered);
        assert_eq!(s.rerank.mode, RerankMode::Auto);
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("[context] output_mode = \"tierd\"") && w.contains("using the default Tiered")),
            "{warnings:?}"
        );
        assert!(warnings.iter().any(|w| w.contains("[rerank] mode") && w.contains("Auto")), "{warnings:?}");
    }

    #[test]
    fn the_defaults_are_within_bounds() {
        assert_eq!(Settings::default().problems(), Vec::<String>::new());
    }

    #[test]
    fn out_of_range_values_name_the_key_the_value_and_the_range() {
        let text = "[search]\nk = 1000000000000\n[embed]\nthreads = 1000000\n[fuse]\nk_lexical = inf\n\
                    [index]\nmax_file_size = 2147483648\nexclude = [\"a[\"]\n[tier]\nfloor_medium = 0.5\n\
                    [hook]\nbackground_nice = 20\n";
        let (layer, warnings) = SettingsLayer::from_toml(text, "t").unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let problems = layer.resolve_unchecked().problems();
        let want = [
            "[embed] threads = 1000000 is out of range: allowed 1..=256",
            "[index] exclude: \"a[\" is not a valid glob",
            "[index] max_file_size = 2147483648 is out of range: allowed 1..=1073741824",
            "[search] k = 1000000000000 is out of range: allowed 1..=1000",
            "[fuse] k_lexical = inf is out of range: allowed a finite number above 0, at most 10000",
            "[tier] floor_medium = 0.5 is above floor_high = 0.4",
            "[hook] background_nice = 20 is out of range: allowed 0..=19",
        ];
        assert_eq!(problems.len(), want.len(), "{problems:#?}");
        for (p, w) in problems.iter().zip(want) {
            assert!(p.starts_with(w), "{p:?} should start with {w:?}");
        }
        let err = layer.resolve().unwrap_err().to_string();
        assert!(!err.contains('\n') && err.contains("[search] k = 1000000000000"), "{err}");
    }

    #[test]
    fn load_keeps_valid_sections_and_resets_only_invalid_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("engine.toml");
        std::fs::write(&path, "[hook]\nk = 1000000000000\nmax_chars = 500\n[search]\nk = 5\n[nope]\n").unwrap();
        let (s, warnings) = Settings::load(&path).unwrap();
        assert_eq!(s.hook, HookConfig::default(), "the whole invalid section falls back");
        assert_eq!(s.search.k, 5, "a valid section is kept");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("unknown section [nope]")));
        assert!(
            warnings.iter().any(|w| w
                == "config: [hook] k = 1000000000000 is out of range: allowed 1..=1000; using the [hook] defaults"),
            "{warnings:?}"
        );
        let (s, warnings) = Settings::load(&dir.path().join("missing.toml")).unwrap();
        assert_eq!((s, warnings.len()), (Settings::default(), 0));
    }

    #[test]
    fn unreadable_files_are_config_errors_on_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("engine.toml");
        std::fs::write(&path, b"[hook]\nk = \xff\n").unwrap();
        let err = Settings::load(&path).unwrap_err();
        assert!(matches!(err, Error::Config(_)) && err.to_string().contains("not UTF-8"), "{err}");
        std::fs::write(&path, "[hook]\nk = 3\n[search\n").unwrap();
        let err = Settings::load(&path).unwrap_err().to_string();
        assert!(err.contains("line 3, column 8") && err.contains("(in `[search`)"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        std::fs::write(&path, "[search]\nk = 18446744073709551615\n").unwrap();
        let err = Settings::load(&path).unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("`k = 18446744073709551615`"), "{err}");
    }

    #[test]
    fn invalid_settings_are_rejected() {
        let (layer, _) = SettingsLayer::from_toml("[embed]\nbatch_size = 0\n", "t").unwrap();
        assert!(matches!(layer.resolve(), Err(Error::Config(_))));
        assert!(SettingsLayer::from_toml("[embed", "cfg.toml").unwrap_err().to_string().contains("cfg.toml"));
    }
}

/// Property tests: whatever a config file holds, reading it never panics, and what the hook and
/// the daemon load from it ([`Settings::load`]) is always valid settings.
#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    const SECTIONS: [&str; 13] = [
        "embed", "index", "chunk", "vector", "bm25", "search", "fuse", "rerank", "tier", "abstain", "context", "hook",
        "nope",
    ];
    const KEYS: [&str; 26] = [
        "k",
        "top_n",
        "threads",
        "batch_size",
        "max_length",
        "max_tokens",
        "overlap",
        "m",
        "ef_search",
        "ef_search_rows",
        "ef_search_per_doubling",
        "deadline_ms",
        "max_chars",
        "budget_tokens",
        "fill",
        "high_ratio",
        "medium_ratio",
        "weight",
        "mode",
        "output_mode",
        "include",
        "hidden_include",
        "k_vector",
        "concept",
        "idle_timeout_s",
        "nonsense",
    ];

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|v| v.to_string()),
            any::<u64>().prop_map(|v| v.to_string()),
            any::<f64>().prop_map(|v| format!("{v:?}")),
            Just("nan".to_string()),
            Just("-inf".to_string()),
            any::<bool>().prop_map(|v| v.to_string()),
            "[a-z/.*]{0,12}".prop_map(|v| format!("{v:?}")),
            "[a-z/.*]{0,8}".prop_map(|v| format!("[{v:?}, \"/etc\"]")),
            Just("{ vector = 1.0, lexical = -2.0, symbol = 0.0 }".to_string()),
        ]
    }

    fn config_text() -> impl Strategy<Value = String> {
        let line = (prop::sample::select(KEYS.to_vec()), value()).prop_map(|(k, v)| format!("{k} = {v}\n"));
        let section = (prop::sample::select(SECTIONS.to_vec()), prop::collection::vec(line, 0..6))
            .prop_map(|(name, lines)| format!("[{name}]\n{}", lines.concat()));
        prop_oneof![
            8 => prop::collection::vec(section, 0..5).prop_map(|s| s.concat()),
            1 => ".{0,200}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

        #[test]
        fn any_config_loads_leniently_into_valid_settings(text in config_text()) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("engine.toml");
            std::fs::write(&path, &text).unwrap();
            // Strict reading: an error or settings, never a panic.
            if let Ok((layer, _)) = SettingsLayer::from_toml(&text, "t") {
                let _ = layer.resolve();
            }
            // Lenient reading: when the file parses, what comes back is always usable.
            if let Ok((settings, _)) = Settings::load(&path) {
                prop_assert!(settings.validate().is_ok(), "{:?}", settings.problems());
            }
        }
    }
}
