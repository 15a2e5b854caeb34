//! Settings: built-in defaults ← config file ← command-line flags, merged once and validated.
//!
//! Each pipeline stage has its own small config (`EmbedConfig`, `ChunkConfig`, `FuseConfig`…).
//! A section is declared once with [`section!`], which generates the resolved struct (with its
//! defaults), an all-`Option` layer struct for the file and the flags, `overwrite` (later layer
//! wins) and `resolve`. Reading a file never fails on a bad value: unknown keys and values of the
//! wrong type produce a warning that names the key and the fallback used.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
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
        pub struct $layer { $( pub $field: Option<$ty>, )* }

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
        /// Texts per ONNX run; 8–16 is fastest on this class of machine.
        batch_size: usize = 16,
        /// Tokens the model sees per text; longer texts are truncated.
        max_length: usize = 256,
        /// ONNX intra-op threads (`None`: all cores).
        threads: Option<usize> = None,
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
    }
}

section! {
    /// The vector leg.
    VectorConfig / VectorLayer {
        /// HNSW links per node.
        m: usize = 16,
        ef_construction: usize = 200,
        ef_search: usize = 96,
        /// Below this many vectors, exact search is used: it is exact, and faster there. Measured
        /// by `cargo bench --bench vector` on SciFact + CoSQA embeddings: exact 0.46 ms vs HNSW
        /// 0.56 ms at 5k vectors, exact 1.19 ms vs HNSW 0.70 ms at 10k.
        exact_below: usize = 7_000,
    }
}

section! {
    /// The BM25 leg: per-field boosts.
    Bm25Config / Bm25Layer {
        title_boost: f32 = 1.5,
        body_boost: f32 = 1.0,
        symbols_boost: f32 = 2.0,
        path_boost: f32 = 0.5,
        tags_boost: f32 = 1.5,
    }
}

/// Leg weights of one intent profile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    pub vector: f32,
    pub lexical: f32,
    pub symbol: f32,
}

const fn w(vector: f32, lexical: f32, symbol: f32) -> Weights {
    Weights { vector, lexical, symbol }
}

/// Search modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
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
        mode: Mode = Mode::Hybrid,
    }
}

section! {
    /// Weighted RRF fusion.
    FuseConfig / FuseLayer {
        k_vector: f32 = 70.0,
        k_lexical: f32 = 70.0,
        k_symbol: f32 = 50.0,
        symbol: Weights = w(0.2, 0.2, 0.5),
        flow: Weights = w(0.3, 0.3, 0.4),
        concept: Weights = w(0.7, 0.2, 0.1),
        // Tuned on CoSQA dev (natural-language queries over code: BM25 hits are mostly noise
        // there); the starting point was vector .5, lexical .35, symbol .15.
        code: Weights = w(0.8, 0.1, 0.1),
        balanced: Weights = w(0.4, 0.4, 0.2),
        /// Exponent applied to intent probabilities before mixing profiles (1: plain softmax).
        /// 3 measured better than 1 on CoSQA dev (MRR@10 .469 → .509 with the tuned profiles).
        intent_sharpness: f32 = 3.0,
        /// Consensus factor min(max, 1 + beta·(√n − 1)) · (1 − w + w·quality). Off by default:
        /// beta 0.3 with w 0.5 lowered CoSQA dev MRR@10 (.509 → .466) and SciFact nDCG@10
        /// (.709 → .706), because a document found by both legs but ranked low by one of them
        /// was pushed below a single-leg hit. Kept configurable for collections where it helps.
        consensus_beta: f32 = 0.0,
        consensus_max: f32 = 1.5,
        consensus_q0: f32 = 10.0,
        /// How much the legs' average rank scales the consensus factor (0.5 in the original
        /// formula: factor × (0.5 + 0.5·quality)).
        consensus_quality_weight: f32 = 0.0,
        /// Factor for hits whose symbols or path match one the query names.
        expansion_boost: f32 = 1.1,
        /// A leg whose mixed weight is below this share of the strongest leg's is dropped: under
        /// RRF's flat curve a 0.12 lexical weight still let BM25's top hit jump ten vector ranks.
        /// CoSQA dev MRR@10 .507 → .537 (0.20: .523; 0.30: same as 0.25); golden dev sets and
        /// SciFact unchanged (no balanced or concept profile is that lopsided).
        min_weight_ratio: f32 = 0.25,
    }
}

/// When the cross-encoder reranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum RerankMode {
    Never,
    Always,
    /// Long enough queries whose intent is concept or flow, or that ask why / how / explain / debug.
    Auto,
}

section! {
    /// The optional rerank stage.
    RerankConfig / RerankLayer {
        mode: RerankMode = RerankMode::Auto,
        /// Directory holding the cross-encoder (`model.onnx` and its tokenizer files); default:
        /// `models/reranker/` when the model manifest has a `[reranker]` entry.
        model: Option<String> = None,
        /// Fused hits the reranker rescores.
        top_k: usize = 20,
        /// Final score = weight · sigmoid(logit) + (1 − weight) · fused score / best fused score.
        weight: f32 = 0.8,
        /// Tokens per (query, passage) pair.
        max_length: usize = 256,
        /// Pairs per ONNX run.
        batch_size: usize = 20,
        /// Past this, the fused order stands (and the response says so).
        deadline_ms: u64 = 500,
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
        floor_high: f32 = 0.40,
        floor_medium: f32 = 0.30,
        /// The same floors on raw BM25 scores, for answers without a model.
        floor_high_bm25: f32 = 12.0,
        floor_medium_bm25: f32 = 6.0,
        /// When more than `max_inject` hits sit within `cluster_ratio` of the best evidence, none
        /// is high. Off: it changed no label on the dev half.
        cluster_cap: bool = false,
        cluster_ratio: f32 = 0.90,
        max_inject: usize = 3,
        /// A lone result needs at least this cosine to be high.
        single_floor: f32 = 0.55,
    }
}

/// How `--format context` prints hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputMode {
    /// By confidence: high in full, medium compact, low left out.
    Tiered,
    /// Every hit as a `<result>`.
    Legacy,
}

section! {
    /// The context block handed to an LLM (`engine search --format context`, the hook).
    ContextConfig / ContextLayer {
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
        path_chars: usize = 200,
        tag_chars: usize = 40,
        max_tags: usize = 8,
        /// A clear winner (full text) needs a raw cosine of at least this…
        winner_min_cosine: f32 = 0.55,
        /// …and every other hit's cosine at most (1 − gap) of its cosine.
        winner_gap: f32 = 0.15,
        /// Neighbouring chunks added on each side of a strong hit in an ambiguous cluster.
        neighbours: usize = 1,
    }
}

section! {
    /// `engine hook` and the daemon.
    HookConfig / HookLayer {
        /// Past this, the hook gives up (or answers from BM25 if that was ready).
        deadline_ms: u64 = 1500,
        /// The context never exceeds this many characters (the client previews larger ones).
        max_chars: usize = 8000,
        /// Hits searched per prompt.
        k: usize = 8,
        /// Prompts with fewer words get no context.
        min_words: usize = 3,
        /// Prompts are cut to this many characters before searching.
        max_query_chars: usize = 2000,
        /// Ask the warm daemon first (and start it when it is not running).
        daemon: bool = true,
        /// The daemon exits after this long without a request.
        idle_timeout_s: u64 = 1800,
        /// Session digest: memory record categories it lists, newest first…
        digest_categories: Vec<String> = ["decision", "convention"].iter().map(|s| s.to_string()).collect(),
        /// …at most this many…
        digest_records: usize = 8,
        /// …within this many characters.
        digest_max_chars: usize = 3000,
    }
}

/// Everything the engine can be configured with, resolved.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Settings {
    pub embed: EmbedConfig,
    pub index: IndexConfig,
    pub chunk: ChunkConfig,
    pub vector: VectorConfig,
    pub bm25: Bm25Config,
    pub search: SearchConfig,
    pub fuse: FuseConfig,
    pub rerank: RerankConfig,
    pub tier: TierConfig,
    pub context: ContextConfig,
    pub hook: HookConfig,
}

/// One layer of every section.
#[derive(Debug, Clone, Default)]
pub struct SettingsLayer {
    pub embed: EmbedLayer,
    pub index: IndexLayer,
    pub chunk: ChunkLayer,
    pub vector: VectorLayer,
    pub bm25: Bm25Layer,
    pub search: SearchLayer,
    pub fuse: FuseLayer,
    pub rerank: RerankLayer,
    pub tier: TierLayer,
    pub context: ContextLayer,
    pub hook: HookLayer,
}

impl SettingsLayer {
    /// Parses a config file's text; returns the layer and the warnings about keys it ignored.
    pub fn from_toml(text: &str, origin: &str) -> Result<(SettingsLayer, Vec<String>)> {
        let mut root: toml::Table =
            toml::from_str(text).map_err(|e| Error::Config(format!("{origin}: {}", e.message())))?;
        let mut warnings = Vec::new();
        let mut take = |name: &str, warnings: &mut Vec<String>| match root.remove(name) {
            Some(toml::Value::Table(t)) => t,
            Some(other) => {
                warnings.push(format!("config: [{name}] should be a table, found {}; ignored", other.type_str()));
                toml::Table::new()
            }
            None => toml::Table::new(),
        };
        let layer = SettingsLayer {
            embed: EmbedLayer::from_table("embed", take("embed", &mut warnings), &mut warnings),
            index: IndexLayer::from_table("index", take("index", &mut warnings), &mut warnings),
            chunk: ChunkLayer::from_table("chunk", take("chunk", &mut warnings), &mut warnings),
            vector: VectorLayer::from_table("vector", take("vector", &mut warnings), &mut warnings),
            bm25: Bm25Layer::from_table("bm25", take("bm25", &mut warnings), &mut warnings),
            search: SearchLayer::from_table("search", take("search", &mut warnings), &mut warnings),
            fuse: FuseLayer::from_table("fuse", take("fuse", &mut warnings), &mut warnings),
            rerank: RerankLayer::from_table("rerank", take("rerank", &mut warnings), &mut warnings),
            tier: TierLayer::from_table("tier", take("tier", &mut warnings), &mut warnings),
            context: ContextLayer::from_table("context", take("context", &mut warnings), &mut warnings),
            hook: HookLayer::from_table("hook", take("hook", &mut warnings), &mut warnings),
        };
        for key in root.keys() {
            warnings.push(format!("config: unknown section [{key}]; ignored"));
        }
        Ok((layer, warnings))
    }

    /// Reads a config file if it exists.
    pub fn from_file(path: &Path) -> Result<(SettingsLayer, Vec<String>)> {
        match std::fs::read_to_string(path) {
            Ok(text) => SettingsLayer::from_toml(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((SettingsLayer::default(), Vec::new())),
            Err(e) => Err(Error::io(format!("reading config {}", path.display()), e)),
        }
    }

    /// Fields set in `later` win.
    pub fn overwrite(self, later: SettingsLayer) -> SettingsLayer {
        SettingsLayer {
            embed: self.embed.overwrite(later.embed),
            index: self.index.overwrite(later.index),
            chunk: self.chunk.overwrite(later.chunk),
            vector: self.vector.overwrite(later.vector),
            bm25: self.bm25.overwrite(later.bm25),
            search: self.search.overwrite(later.search),
            fuse: self.fuse.overwrite(later.fuse),
            rerank: self.rerank.overwrite(later.rerank),
            tier: self.tier.overwrite(later.tier),
            context: self.context.overwrite(later.context),
            hook: self.hook.overwrite(later.hook),
        }
    }

    /// Resolves and validates.
    pub fn resolve(&self) -> Result<Settings> {
        let settings = Settings {
            embed: self.embed.resolve(),
            index: self.index.resolve(),
            chunk: self.chunk.resolve(),
            vector: self.vector.resolve(),
            bm25: self.bm25.resolve(),
            search: self.search.resolve(),
            fuse: self.fuse.resolve(),
            rerank: self.rerank.resolve(),
            tier: self.tier.resolve(),
            context: self.context.resolve(),
            hook: self.hook.resolve(),
        };
        settings.validate()?;
        Ok(settings)
    }
}

impl Settings {
    /// Rejects values no stage can work with.
    pub fn validate(&self) -> Result<()> {
        let e = &self.embed;
        if e.batch_size == 0 || e.batch_size > 1024 {
            return Err(Error::Config(format!("[embed] batch_size = {} must be 1..=1024", e.batch_size)));
        }
        if !(8..=512).contains(&e.max_length) {
            return Err(Error::Config(format!("[embed] max_length = {} must be 8..=512", e.max_length)));
        }
        if e.threads == Some(0) {
            return Err(Error::Config("[embed] threads must be at least 1".into()));
        }
        if !(16..=4096).contains(&self.chunk.max_tokens) {
            return Err(Error::Config(format!("[chunk] max_tokens = {} must be 16..=4096", self.chunk.max_tokens)));
        }
        if !(0.0..0.9).contains(&self.chunk.overlap) {
            return Err(Error::Config(format!("[chunk] overlap = {} must be in 0..0.9", self.chunk.overlap)));
        }
        if self.search.k == 0 || self.search.top_n == 0 {
            return Err(Error::Config("[search] k and top_n must be at least 1".into()));
        }
        let f = &self.fuse;
        if f.k_vector <= 0.0
            || f.k_lexical <= 0.0
            || f.k_symbol <= 0.0
            || f.consensus_q0 <= 0.0
            || f.consensus_max < 1.0
        {
            return Err(Error::Config(
                "[fuse] RRF k values and consensus_q0 must be positive, consensus_max at least 1".into(),
            ));
        }
        let r = &self.rerank;
        if r.top_k == 0 || r.batch_size == 0 || !(0.0..=1.0).contains(&r.weight) || !(8..=512).contains(&r.max_length) {
            return Err(Error::Config(format!(
                "[rerank] top_k = {}, batch_size = {}, weight = {}, max_length = {}: need top_k, batch_size >= 1, weight in 0..=1, max_length 8..=512",
                r.top_k, r.batch_size, r.weight, r.max_length
            )));
        }
        let t = &self.tier;
        for (name, low, high) in
            [("ratio", t.medium_ratio, t.high_ratio), ("evidence", t.evidence_medium, t.evidence_high)]
        {
            if !(0.0..=1.0).contains(&low) || low > high || high > 1.0 {
                return Err(Error::Config(format!(
                    "[tier] medium and high {name} thresholds ({low}, {high}): need 0 <= medium <= high <= 1"
                )));
            }
        }
        let c = &self.context;
        if c.budget_tokens < 50 || !(0.1..=1.0).contains(&c.fill) || c.summary_chars < 10 {
            return Err(Error::Config(format!(
                "[context] budget_tokens = {}, fill = {}, summary_chars = {}: need budget_tokens >= 50, fill in 0.1..=1, summary_chars >= 10",
                c.budget_tokens, c.fill, c.summary_chars
            )));
        }
        let v = &self.vector;
        if v.m < 2 || v.m > 128 || v.ef_construction < v.m || v.ef_search == 0 {
            return Err(Error::Config(format!(
                "[vector] m = {}, ef_construction = {}, ef_search = {}: need 2 <= m <= 128, ef_construction >= m, ef_search >= 1",
                v.m, v.ef_construction, v.ef_search
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn invalid_settings_are_rejected() {
        let (layer, _) = SettingsLayer::from_toml("[embed]\nbatch_size = 0\n", "t").unwrap();
        assert!(matches!(layer.resolve(), Err(Error::Config(_))));
        assert!(SettingsLayer::from_toml("[embed", "cfg.toml").unwrap_err().to_string().contains("cfg.toml"));
    }
}
