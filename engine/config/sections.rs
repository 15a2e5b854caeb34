//! Every settings section, each key declared once: type, default, allowed range, one-line doc.
//! `docs/config.md` is generated from here (`engine config reference`); a test fails when it is
//! stale. Why a default is what it is, with the measurements, is in `docs/experiments.md`.

use super::bounds::*;
use super::check::{learned_weights, Bound, Check, Rules};
use super::section::{bound_text, section};
use super::{FuseMethod, Mode, OutputMode, RerankMode, Weights, LEARNED_BIAS, LEARNED_WEIGHTS};

const fn w(vector: f32, lexical: f32, symbol: f32) -> Weights {
    Weights { vector, lexical, symbol }
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

section! {
    /// The embedding model's run-time settings.
    EmbedConfig / EmbedLayer {
        /// Which embedding model of the models directory: unset for the default (`[embedder]` of
        /// models.toml), or the name of one of its `[embedders.NAME]` tables ("bge-small",
        /// "e5-small"), installed with `scripts/fetch-models.sh --embedder NAME`. An index is
        /// built with one model; another asks for a rebuild.
        model: Option<String> = None,
        /// Texts per ONNX run at most.
        batch_size: usize = 16 => Bound::ints(BATCH),
        /// Padded tokens per ONNX run at most: long texts go in smaller runs, which bounds the
        /// memory a run's attention takes.
        batch_tokens: usize = 1024 => Bound::ints(BATCH_TOKENS),
        /// Tokens the model sees per text; longer texts are truncated.
        max_length: usize = 256 => Bound::ints(MODEL_TOKENS),
        /// ONNX intra-op threads (unset: all cores).
        threads: Option<usize> = None => Bound::ints(THREADS),
        /// ONNX Runtime's CPU memory arena (off saves little memory and costs speed).
        memory_arena: bool = true,
        /// ONNX intra-op threads spin while they wait for work: faster batches on an idle
        /// machine, but a short query then burns every core it was given, which prompts
        /// answered side by side (the daemon) pay for.
        spinning: bool = false,
    }
}

section! {
    /// What the directory walk takes in.
    IndexConfig / IndexLayer {
        /// Only paths matching one of these globs are indexed (empty: everything).
        include: Vec<String> = Vec::new() => Bound::Globs,
        /// Paths matching these globs are skipped.
        exclude: Vec<String> = Vec::new() => Bound::Globs,
        /// Hidden directories walked anyway (memory records live in one).
        hidden_include: Vec<String> = strings(&[".claude/memory"]) => Bound::InsideProject,
        /// Larger files are skipped with a warning (bytes).
        max_file_size: u64 = 1024 * 1024 => Bound::ints(MAX_FILE_SIZE),
    }
}

section! {
    /// Chunk sizes.
    ChunkConfig / ChunkLayer {
        /// Token budget of a chunk's body; the title rides on top, within the model's limit.
        max_tokens: usize = 240 => Bound::ints(CHUNK_TOKENS),
        /// Share of a window carried into the next one.
        overlap: f32 = 0.15 => Bound::Float(0.0..=0.9),
        /// Token budget of a piece of a long memory record: a piece is about one fact, so the
        /// piece a prompt finds is the fact it asks for, whole.
        memory_max_tokens: usize = 80 => Bound::ints(CHUNK_TOKENS),
    }
}

section! {
    /// The vector leg.
    VectorConfig / VectorLayer {
        /// HNSW links per node.
        m: usize = 16 => Bound::ints(HNSW_M),
        /// HNSW candidate-list size while building the graph: larger is slower and more accurate.
        ef_construction: usize = 200 => Bound::ints(HNSW_EF),
        /// HNSW candidate-list size per query on a graph of up to `ef_search_rows` rows (raised
        /// to the number of hits wanted when smaller).
        ef_search: usize = 96 => Bound::ints(HNSW_EF),
        /// Graph size up to which `ef_search` holds as it is.
        ef_search_rows: usize = 20_000 => Bound::ints(1..=*EXACT_BELOW.end()),
        /// Added to `ef_search` per doubling of the graph beyond `ef_search_rows`: recall at a
        /// fixed candidate-list size falls as the graph grows.
        ef_search_per_doubling: usize = 72 => Bound::ints(0..=*HNSW_EF.end()),
        /// Below this many vectors, search is exact (exact, and faster there than the graph).
        exact_below: usize = 7_000 => Bound::ints(EXACT_BELOW),
        /// Share of rows an update may leave outside a reused HNSW graph before the graph is
        /// rebuilt: below it, editing a file in a large index takes a second, not a graph build.
        stale_max: f32 = 0.1 => Bound::Float(0.0..=1.0),
    }
}

section! {
    /// The BM25 leg: per-field boosts.
    Bm25Config / Bm25Layer {
        /// Boost of the title field.
        title_boost: f32 = 1.5 => Bound::Float(0.0..=FACTOR_MAX),
        /// Boost of the body text.
        body_boost: f32 = 1.0 => Bound::Float(0.0..=FACTOR_MAX),
        /// Boost of the symbols a chunk defines.
        symbols_boost: f32 = 2.0 => Bound::Float(0.0..=FACTOR_MAX),
        /// Boost of the file path.
        path_boost: f32 = 0.5 => Bound::Float(0.0..=FACTOR_MAX),
        /// Boost of a memory record's tags.
        tags_boost: f32 = 1.5 => Bound::Float(0.0..=FACTOR_MAX),
        /// Extra weight of a quoted span ("…", `…`, '…') found in a chunk's title or text with its
        /// words in order and next to each other (stop words stand for any word; a span needs
        /// two other words), on top of its words' own matches; 0 reads quotes as plain words.
        phrase_boost: f32 = 2.0 => Bound::Float(0.0..=FACTOR_MAX),
    }
}

section! {
    /// The search path.
    SearchConfig / SearchLayer {
        /// Results returned.
        k: usize = 10 => Bound::ints(K),
        /// Hits each leg contributes to fusion.
        top_n: usize = 100 => Bound::ints(TOP_N),
        /// Legs searched when a request does not say: bm25, vector or hybrid.
        mode: Mode = Mode::Hybrid,
        /// Fused candidates read per result wanted (`factor · wanted + extra`): boosts reorder
        /// them and overlapping windows are dropped, so more are read than wanted.
        candidates_factor: usize = 3 => Bound::ints(1..=100),
        /// The `extra` of `candidates_factor`.
        candidates_extra: usize = 10 => Bound::ints(0..=*TOP_N.end()),
        /// Chunks the lexical leg found that have no vector yet (a record captured a moment ago,
        /// its reindex still embedding) embedded at query time and ranked by the vector leg.
        embed_fresh: usize = 8 => Bound::ints(0..=*TOP_N.end()),
        /// Characters of a hit's snippet.
        snippet_chars: usize = 240 => Bound::ints(CHARS),
        /// A hit whose text mostly repeats a better hit's from another file (versioned copies
        /// of a document, an Info file or man page built from a manual) is folded into it and
        /// named in its `also_in`: the share of the smaller text's word pairs the other holds for
        /// that (0: off).
        duplicate_overlap: f32 = 0.7 => Bound::Float(0.0..=1.0),
        /// Score factor of a memory record a newer one supersedes, so the newer ranks first.
        superseded_factor: f32 = 0.5 => Bound::Float(0.0..=1.0),
        /// Half-life in days of a decaying memory record's score (0: no decay).
        memory_half_life_days: f32 = 0.0 => Bound::Float(0.0..=36_500.0),
        /// The memory categories recency decay applies to.
        memory_decay_categories: Vec<String> = strings(&["session", "note", "bugfix", "task"]),
        /// `engine search` asks the warm daemon serving the index (the same output, without
        /// loading the model), starts one for the next search when none runs, and searches in
        /// process meanwhile; `--no-daemon` for one search.
        daemon: bool = true,
    }
}

section! {
    /// Weighted RRF fusion, its first candidates then reordered by the learned model (`method`).
    FuseConfig / FuseLayer {
        /// RRF k of the vector leg: a hit at rank r adds weight / (k + r).
        k_vector: f32 = 70.0 => Bound::Positive(RRF_K_MAX),
        /// RRF k of the lexical (BM25) leg.
        k_lexical: f32 = 70.0 => Bound::Positive(RRF_K_MAX),
        /// RRF k of the symbol leg.
        k_symbol: f32 = 50.0 => Bound::Positive(RRF_K_MAX),
        /// Leg weights for queries naming identifiers.
        symbol: Weights = w(0.5, 0.5, 0.3) => Bound::Weights,
        /// Leg weights for questions about relations: callers, call chains, dependencies.
        flow: Weights = w(0.3, 0.3, 0.4) => Bound::Weights,
        /// Leg weights for conceptual questions.
        concept: Weights = w(0.7, 0.2, 0.1) => Bound::Weights,
        /// Leg weights for natural-language queries asking for code (BM25 hits are mostly noise
        /// there).
        code: Weights = w(0.8, 0.1, 0.1) => Bound::Weights,
        /// Leg weights when no intent stands out.
        balanced: Weights = w(0.4, 0.4, 0.2) => Bound::Weights,
        /// Exponent on intent probabilities before mixing profiles (1: plain softmax).
        intent_sharpness: f32 = 3.0 => Bound::Float(0.0..=FACTOR_MAX),
        /// Consensus factor min(max, 1 + beta·(√n − 1)) · (1 − w + w·quality) for hits several
        /// legs found; 0 turns it off (it pushed two-leg hits ranked low by one leg above
        /// single-leg ones).
        consensus_beta: f32 = 0.0 => Bound::Float(0.0..=FACTOR_MAX),
        /// The `max` of the consensus factor.
        consensus_max: f32 = 1.5 => Bound::Float(1.0..=FACTOR_MAX),
        /// Rank scale of the consensus quality: 1 / (1 + average rank / q0).
        consensus_q0: f32 = 10.0 => Bound::Positive(RRF_K_MAX),
        /// The `w` of the consensus factor: how much the legs' average rank scales it.
        consensus_quality_weight: f32 = 0.0 => Bound::Float(0.0..=1.0),
        /// Factor for hits whose symbols or path match one the query names.
        expansion_boost: f32 = 1.1 => Bound::Positive(FACTOR_MAX),
        /// Factor for tests, benchmarks and fixtures when the query is not about tests: they
        /// repeat the words of the code they test (1: off).
        test_factor: f32 = 0.8 => Bound::Positive(FACTOR_MAX),
        /// Factor for everything that is not a test when the query is about tests (1: off).
        non_test_factor: f32 = 0.7 => Bound::Positive(FACTOR_MAX),
        /// Factor for code the project took from elsewhere or a tool wrote (under `vendor/`,
        /// `third_party/`, `deps/`; a `parse.c` beside its `parse.y`; a "generated by" or "DO NOT
        /// EDIT" banner) and for translation catalogs (`.po`, `.pot`) when the query does not
        /// name the file: they repeat the words of the project's own sources (1: off).
        third_party_factor: f32 = 0.6 => Bound::Positive(FACTOR_MAX),
        /// A leg whose mixed weight is below this share of the strongest leg's is dropped: under
        /// RRF's flat curve a small weight still lets a leg's top hit jump many ranks.
        min_weight_ratio: f32 = 0.25 => Bound::Float(0.0..=1.0),
        /// How hybrid hits are ordered: rrf, or learned (RRF, then reordered by a logistic model
        /// of what the legs returned). Only hybrid is fused: bm25 and vector modes are the plain
        /// legs under either, with the same boosts and de-duplication.
        method: FuseMethod = FuseMethod::Learned,
        /// RRF candidates the learned fusion reorders.
        learned_depth: usize = 100 => Bound::ints(TOP_N),
        /// Weights of the learned fusion's features (`scripts/fit/fit-fusion.py`).
        learned_weights: Vec<f32> = LEARNED_WEIGHTS.to_vec() => learned_weights(),
        /// Intercept of the learned fusion's logistic model.
        learned_bias: f32 = LEARNED_BIAS => Bound::Float(-1000.0..=1000.0),
    }
}

section! {
    /// The optional rerank stage.
    RerankConfig / RerankLayer {
        /// When the cross-encoder reranks: never, always, or auto (the trigger rules below).
        mode: RerankMode = RerankMode::Auto,
        /// Directory of the cross-encoder (`model.onnx` and tokenizer files), or "maxsim";
        /// unset: the manifest's reranker once `scripts/fetch-models.sh --reranker` installed it.
        model: Option<String> = None,
        /// Fused hits the reranker rescores.
        top_k: usize = 20 => Bound::ints(K),
        /// Final score = weight · sigmoid(logit) + (1 − weight) · fused score / best fused score.
        weight: f32 = 0.3 => Bound::Float(0.0..=1.0),
        /// Tokens per (query, passage) pair.
        max_length: usize = 256 => Bound::ints(MODEL_TOKENS),
        /// Pairs per ONNX run; 1 makes a pair's score independent of its batch (the int8 graph
        /// quantizes activations per batch) and checks the deadline after every pair.
        batch_size: usize = 1 => Bound::ints(BATCH),
        /// Past this, the fused order stands (and the response says so).
        deadline_ms: u64 = 2000 => Bound::ints(DEADLINE_MS),
        /// Auto mode: at least this many words…
        auto_min_words: usize = 4 => Bound::ints(COUNT),
        /// …and a concept or flow intent, or one of these words.
        auto_words: Vec<String> = strings(&["why", "how", "explain", "debug"]),
    }
}

section! {
    /// Confidence labels (high / medium / low) per hit when abstention is off: the fused score
    /// alone cannot tell hits apart, so labels also need the raw evidence (cosine; raw BM25
    /// without a model) relative to the best hit's.
    TierConfig / TierLayer {
        /// Final-score ratio to the best hit needed for "high"…
        high_ratio: f32 = 0.75 => Bound::Float(0.0..=1.0),
        /// …and for "medium"; below it, "low".
        medium_ratio: f32 = 0.40 => Bound::Float(0.0..=1.0),
        /// Evidence ratio (the better of cosine and BM25, each to the best hit's) for "high"…
        evidence_high: f32 = 0.95 => Bound::Float(0.0..=1.0),
        /// …and for "medium".
        evidence_medium: f32 = 0.80 => Bound::Float(0.0..=1.0),
        /// Absolute evidence floors (below `floor_high` never high, below `floor_medium` low).
        floor: bool = true,
        /// Cosine below which a hit cannot be "high".
        floor_high: f32 = 0.40 => Bound::Float(0.0..=1.0),
        /// Cosine below which a hit is "low".
        floor_medium: f32 = 0.30 => Bound::Float(0.0..=1.0),
        /// Raw BM25 score below which a hit cannot be "high" when there is no model.
        floor_high_bm25: f32 = 12.0 => Bound::Float(0.0..=BM25_FLOOR_MAX),
        /// Raw BM25 score below which a hit is "low" when there is no model.
        floor_medium_bm25: f32 = 6.0 => Bound::Float(0.0..=BM25_FLOOR_MAX),
        /// When more than `max_inject` hits sit within `cluster_ratio` of the best evidence,
        /// none is high.
        cluster_cap: bool = false,
        /// Evidence ratio to the best hit that counts as "close" for the cluster cap.
        cluster_ratio: f32 = 0.90 => Bound::Float(0.0..=1.0),
        /// Close hits the cluster cap allows before it withholds "high".
        max_inject: usize = 3 => Bound::ints(K),
        /// A lone result needs at least this cosine to be high.
        single_floor: f32 = 0.55 => Bound::Float(0.0..=1.0),
    }
}

section! {
    /// Abstention: a logistic model of query-level evidence decides whether anything answers a
    /// prompt; below `threshold` the hook and `--format context` add nothing. Fitted by
    /// `scripts/fit/fit-abstain.py` on every golden set's prompts.
    AbstainConfig / AbstainLayer {
        /// Off: no verdict is made and hits keep the labels `[tier]` gives them.
        enabled: bool = true,
        /// Weight of the best hit's cosine.
        w_cosine: f32 = 4.27 => Bound::Float(-WEIGHT_MAX..=WEIGHT_MAX),
        /// Weight of the best coverage of the query's term weight by one of the first hits.
        w_coverage: f32 = 5.07 => Bound::Float(-WEIGHT_MAX..=WEIGHT_MAX),
        /// Weight of the share of the query's term weight the corpus has never seen.
        w_unseen: f32 = -3.57 => Bound::Float(-WEIGHT_MAX..=WEIGHT_MAX),
        /// Weight of a conversational prompt (1 when conversational, else 0).
        w_conversational: f32 = -4.15 => Bound::Float(-WEIGHT_MAX..=WEIGHT_MAX),
        /// Weight of the vector leg's cosine gap (its best cosine minus its `gap_rank`-th).
        w_gap: f32 = 7.72 => Bound::Float(-WEIGHT_MAX..=WEIGHT_MAX),
        /// Intercept of the logistic model.
        bias: f32 = -3.77 => Bound::Float(-WEIGHT_MAX..=WEIGHT_MAX),
        /// Probability below which the engine says nothing (the fit keeps 96% of the prompts
        /// that have an answer).
        threshold: f32 = 0.31 => Bound::Float(0.0..=1.0),
        /// The threshold when the best hit is a memory record: records are short notes written
        /// in other words than a later prompt, so the same evidence means more.
        memory_threshold: f32 = 0.252 => Bound::Float(0.0..=1.0),
        /// The best hit is "high" only at this probability…
        high_probability: f32 = 0.5 => Bound::Float(0.0..=1.0),
        /// …and when it covers this share of the query's term weight itself.
        high_coverage: f32 = 0.5 => Bound::Float(0.0..=1.0),
        /// Stands in for the cosine when there is no model (abstention then rests on coverage).
        cosine_without_model: f32 = 0.5 => Bound::Float(0.0..=1.0),
        /// Hits of the first this-many files are listed (at least "medium"), the rest "low".
        list_files: usize = 8 => Bound::ints(K),
        /// First hits whose coverage of the query is measured on every query (what the model
        /// was fitted on).
        measured_hits: usize = 10 => Bound::ints(K),
        /// First hits whose words together make the query-level coverage (diagnostics).
        coverage_hits: usize = 3 => Bound::ints(K),
        /// Rank within a leg that counts as that leg agreeing on the best hit (diagnostics).
        agreement_rank: usize = 10 => Bound::ints(TOP_N),
        /// The vector hit whose cosine the best one is compared with (the gap feature; what the
        /// model was fitted on).
        gap_rank: usize = 10 => Bound::ints(TOP_N),
        /// Stands in for the cosine gap when there is no model (or fewer vectors than
        /// `gap_rank`): between the gaps of answerable and unanswerable golden prompts.
        gap_without_model: f32 = 0.1 => Bound::Float(0.0..=1.0),
    }
}

section! {
    /// The context block handed to an LLM (`engine search --format context`, the hook).
    ContextConfig / ContextLayer {
        /// How the block lays hits out: tiered (by confidence) or legacy (every hit a result).
        output_mode: OutputMode = OutputMode::Tiered,
        /// Token budget of the block, counted with the model's tokenizer.
        budget_tokens: usize = 2000 => Bound::ints(BUDGET_TOKENS),
        /// Packing stops at this share of the budget.
        fill: f32 = 0.95 => Bound::Float(0.1..=1.0),
        /// Characters of the one line a medium entry shows (the line naming most of the prompt's
        /// words; a longer line is cut between words), and of a record in the session digest.
        summary_chars: usize = 100 => Bound::ints(CHARS),
        /// Characters of a result's snippet: whole lines around the prompt's words, cut between
        /// lines (inside only a line longer than this).
        snippet_chars: usize = 400 => Bound::ints(CHARS),
        /// Characters of a title.
        title_chars: usize = 120 => Bound::ints(CHARS),
        /// Characters of a path.
        path_chars: usize = 200 => Bound::ints(CHARS),
        /// Characters of a tag or a memory record's category.
        tag_chars: usize = 40 => Bound::ints(CHARS),
        /// Tags shown per hit.
        max_tags: usize = 8 => Bound::ints(COUNT),
        /// A clear winner (shown in full) needs a raw cosine of at least this…
        winner_min_cosine: f32 = 0.55 => Bound::Float(0.0..=1.0),
        /// …and every other hit's cosine at most (1 − gap) of its cosine.
        winner_gap: f32 = 0.15 => Bound::Float(0.0..=1.0),
        /// Neighbouring chunks added on each side of a strong hit in an ambiguous cluster.
        neighbours: usize = 1 => Bound::ints(COUNT),
        /// Pieces of one long memory record shown together in its entry.
        record_parts: usize = 6 => Bound::ints(1..=100),
        /// Tokens the medium memory records of a block may take, attributes included: their
        /// best-ranked pieces (passages) first, whichever record each belongs to. At the default
        /// the block's own budget binds first (docs/experiments.md, 2026-11-26: a smaller one
        /// costs answers until ranking puts the answering passage first).
        record_budget_tokens: usize = 1900 => Bound::ints(BUDGET_TOKENS),
    }
}

section! {
    /// `engine hook` and the daemon.
    HookConfig / HookLayer {
        /// Past this, the hook gives up (or answers from BM25 if that was ready).
        deadline_ms: u64 = 1500 => Bound::ints(DEADLINE_MS),
        /// The context never exceeds this many characters.
        max_chars: usize = 8000 => Bound::ints(HOOK_CHARS),
        /// Hits searched per prompt: enough for `[abstain] list_files` distinct files.
        k: usize = 24 => Bound::ints(K),
        /// Whether the cross-encoder reranks a prompt's hits (a cross-encoder costs most of a
        /// second per prompt; `[rerank] mode` is for `search` and MCP).
        rerank: RerankMode = RerankMode::Never,
        /// Prompts with fewer words get no context.
        min_words: usize = 3 => Bound::ints(COUNT),
        /// Prompts are cut to this many characters before searching.
        max_query_chars: usize = 2000 => Bound::ints(CHARS),
        /// Ask the warm daemon first (and start it when it is not running).
        daemon: bool = true,
        /// Share of `deadline_ms` the daemon has to answer; past it, it is taken for stopped or
        /// hung, replaced, and the prompt answered in process with what time is left.
        daemon_share: f32 = 0.6 => Bound::Float(0.1..=1.0),
        /// The daemon exits after this many seconds without a request.
        idle_timeout_s: u64 = 1800 => Bound::ints(IDLE_TIMEOUT_S),
        /// CPU niceness of the indexing the hook starts in the background (0: normal priority),
        /// so prompts answered meanwhile keep the cores.
        background_nice: i32 = 19 => Bound::ints(NICE),
        /// A session starting in a project without an index starts indexing it in the background
        /// (a git work tree or a directory with `engine.toml`, owned by the user, never the home
        /// directory or `/`).
        auto_index: bool = true,
        /// SessionStart answers within this many milliseconds: the digest comes from the live
        /// index and any reindex runs detached at `background_nice`; a digest not ready in time
        /// is left out (stderr says so).
        session_start_budget_ms: u64 = 1000 => Bound::ints(DEADLINE_MS),
        /// Session digest: memory record categories it lists, newest first…
        digest_categories: Vec<String> = strings(&["decision", "convention"]),
        /// …at most this many…
        digest_records: usize = 8 => Bound::ints(COUNT),
        /// …within this many characters.
        digest_max_chars: usize = 3000 => Bound::ints(CHARS),
        /// Characters a session's own record or compaction summary shows of itself.
        digest_session_chars: usize = 900 => Bound::ints(CHARS),
    }
}

section! {
    /// Memory capture from transcripts (`PreCompact`, `PostCompact`, `SessionEnd`, `engine memory capture`).
    CaptureConfig / CaptureLayer {
        /// Capture on `PreCompact`, `PostCompact` and `SessionEnd`.
        enabled: bool = true,
        /// Reading a transcript stops after this long (what was read is captured): within the
        /// hook's timeout whatever the file.
        deadline_ms: u64 = 20_000 => Bound::ints(DEADLINE_MS),
        /// Titles of captured records are cut to this many characters.
        title_chars: usize = 100 => Bound::ints(CHARS),
        /// A session record lists this many prompts…
        session_prompts: usize = 12 => Bound::ints(COUNT),
        /// …each cut to this many characters…
        prompt_chars: usize = 240 => Bound::ints(CHARS),
        /// …this many files per list…
        session_files: usize = 20 => Bound::ints(COUNT),
        /// …this many commands…
        session_commands: usize = 15 => Bound::ints(COUNT),
        /// …and this many errors.
        session_errors: usize = 10 => Bound::ints(COUNT),
        /// At most this many decision and convention records per capture.
        max_statements: usize = 30 => Bound::ints(COUNT),
        /// Keep the last this many recaps (long list-like assistant messages) of a session.
        max_recaps: usize = 3 => Bound::ints(COUNT),
        /// Findings (explaining sentences of the assistant) per notes record.
        notes_per_record: usize = 12 => Bound::ints(1..=100),
        /// At most this many names per edited file in the `changes` record.
        names_per_file: usize = 40 => Bound::ints(COUNT),
        /// The lines edits added after a session's last compaction (no summary holds them: the
        /// values, settings and calls a later prompt asks about), at most this many per file…
        tail_lines_per_file: usize = 20 => Bound::ints(COUNT),
        /// …and this many in all.
        tail_lines: usize = 200 => Bound::ints(0..=10_000),
        /// At most this many `task` records (a tracker's view of a task the session worked on)…
        max_tasks: usize = 20 => Bound::ints(COUNT),
        /// …each its tracker's output cut to this many characters.
        task_chars: usize = 8000 => Bound::ints(CHARS),
    }
}

section! {
    /// `engine memory gc`.
    MemoryConfig / MemoryLayer {
        /// Records of one category whose words overlap this much (Jaccard) are near duplicates;
        /// gc keeps the newest.
        near_duplicate: f32 = 0.8 => Bound::Float(0.0..=1.0),
        /// gc removes `session` records older than this many days (0: never).
        session_max_age_days: u64 = 90 => Bound::ints(0..=36_500),
        /// gc removes `bugfix` records older than this many days (0: never).
        bugfix_max_age_days: u64 = 365 => Bound::ints(0..=36_500),
    }
}

section! {
    /// A search backend that runs the BM25 and vector legs in place of the local index
    /// (docs/scale-out.md); the engine still runs everything else, on the local index's chunks.
    BackendConfig / BackendLayer {
        /// `milvus://HOST:PORT/COLLECTION`, a collection `engine push` wrote (unset: the local
        /// index runs the legs).
        url: Option<String> = None,
        /// Milliseconds to connect, and per request, before the backend counts as unreachable.
        timeout_ms: u64 = 3000 => Bound::ints(DEADLINE_MS),
    }
}

// The rules relating two keys of a section; the other sections have none.
impl Rules for EmbedConfig {}
impl Rules for IndexConfig {}
impl Rules for ChunkConfig {}
impl Rules for Bm25Config {}
impl Rules for SearchConfig {}
impl Rules for FuseConfig {}
impl Rules for RerankConfig {}
impl Rules for ContextConfig {}
impl Rules for HookConfig {}
impl Rules for CaptureConfig {}
impl Rules for MemoryConfig {}
// The URL's form is checked where it is used (`backend::BackendUrl::parse`): backend reads the
// index, which reads settings.
impl Rules for BackendConfig {}

impl Rules for VectorConfig {
    fn rules(&self, c: &mut Check) {
        // A graph's candidate list while building holds at least its links.
        if self.ef_construction < self.m {
            c.problems.push(format!(
                "[{}] ef_construction = {} is below m = {}: allowed ef_construction >= m",
                c.section, self.ef_construction, self.m
            ));
        }
    }
}

impl Rules for TierConfig {
    fn rules(&self, c: &mut Check) {
        c.ordered("medium_ratio", self.medium_ratio, "high_ratio", self.high_ratio);
        c.ordered("evidence_medium", self.evidence_medium, "evidence_high", self.evidence_high);
        c.ordered("floor_medium", self.floor_medium, "floor_high", self.floor_high);
        c.ordered("floor_medium_bm25", self.floor_medium_bm25, "floor_high_bm25", self.floor_high_bm25);
    }
}

impl Rules for AbstainConfig {
    fn rules(&self, c: &mut Check) {
        c.ordered("threshold", self.threshold, "high_probability", self.high_probability);
    }
}
