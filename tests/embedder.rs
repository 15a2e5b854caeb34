//! Tests against the real embedding model (installed by scripts/fetch-models.sh). They always run:
//! a missing model is a test failure with the fix in the message, never a skip.

use engine::internals::{dot, LazyOnnxEmbedder, WordPieceCounter};
use engine::{Embedder, Error, Models, OnnxEmbedder, Settings};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn models() -> Models {
    Models::open(&root().join("models")).expect("models/models.toml")
}

fn embedder() -> &'static OnnxEmbedder {
    static E: OnceLock<OnnxEmbedder> = OnceLock::new();
    E.get_or_init(|| {
        OnnxEmbedder::load(&models(), &Settings::default())
            .unwrap_or_else(|e| panic!("{e} — the real model is required for these tests"))
    })
}

fn cos(a: &str, b: &str) -> f32 {
    let v = embedder().embed(&[a, b]).unwrap();
    dot(&v[0], &v[1])
}

#[test]
fn reference_pair_matches_the_published_similarity() {
    let c = cos("A man is eating food.", "A man is eating a piece of bread.");
    assert!((c - 0.754).abs() <= 0.01, "cosine {c}");
}

#[test]
fn paraphrases_are_close() {
    for (a, b) in [
        ("How do I reset my password?", "What are the steps to change a forgotten password?"),
        ("The cat sat on the mat.", "A cat was sitting on a rug."),
        ("The server crashed because it ran out of memory.", "An out-of-memory error brought the server down."),
    ] {
        let c = cos(a, b);
        assert!(c > 0.6, "{a:?} ~ {b:?} = {c}");
    }
}

#[test]
fn unrelated_texts_are_far() {
    for (a, b) in [
        ("A man is eating food.", "The quarterly tax report is due on Friday."),
        ("Photosynthesis converts light into chemical energy.", "He parked the truck behind the stadium."),
        ("Rust borrow checker rules", "My grandmother knits wool sweaters."),
    ] {
        let c = cos(a, b);
        assert!(c < 0.15, "{a:?} ~ {b:?} = {c}");
    }
}

#[test]
fn vectors_are_normalised_with_the_manifest_dimension() {
    let v = embedder().embed(&["hello world"]).unwrap();
    assert_eq!(v[0].len(), 384);
    assert!((dot(&v[0], &v[0]) - 1.0).abs() < 1e-4);
}

#[test]
fn a_text_alone_and_inside_a_batch_embeds_the_same() {
    let text = "Incremental indexing re-embeds only changed chunks.";
    let alone = embedder().embed(&[text]).unwrap().remove(0);
    let batch = embedder()
        .embed(&[
            "short",
            text,
            "a considerably longer sentence that forces the batch to be padded well beyond the length of the others",
            "",
        ])
        .unwrap();
    let max_diff = alone.iter().zip(&batch[1]).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(max_diff < 1e-5, "max abs diff {max_diff}");
    // Deterministic: same call, same bits.
    assert_eq!(embedder().embed(&[text]).unwrap()[0], alone);
}

#[test]
fn empty_and_huge_inputs_embed_without_panic() {
    let huge = "lorem ipsum dolor sit amet ".repeat(4000); // ~108k chars
    let v = embedder().embed(&["", &huge, "   "]).unwrap();
    assert_eq!(v.len(), 3);
    assert!(v.iter().all(|x| x.len() == 384 && x.iter().all(|f| f.is_finite())));
}

#[test]
fn token_counter_uses_the_model_tokenizer() {
    assert_eq!(embedder().count_tokens("hello world"), 2);
    assert!(embedder().count_tokens(&"word ".repeat(1000)) >= 1000, "no truncation when counting");
}

/// A models dir with the real manifest where `broken` is written with `contents` (or left out).
fn broken_models_dir(broken: &str, contents: Option<&[u8]>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("models");
    std::fs::copy(src.join("models.toml"), dir.path().join("models.toml")).unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let name = entry.unwrap().file_name();
        let name = name.to_string_lossy();
        if name == "models.toml" || name.starts_with('.') || name == broken {
            continue;
        }
        std::os::unix::fs::symlink(src.join(&*name), dir.path().join(&*name)).unwrap();
    }
    if let Some(bytes) = contents {
        std::fs::write(dir.path().join(broken), bytes).unwrap();
    }
    dir
}

#[test]
fn a_missing_model_file_names_the_file_and_the_fix() {
    let dir = broken_models_dir("model.onnx", None);
    let err = OnnxEmbedder::load(&Models::open(dir.path()).unwrap(), &Settings::default()).err().unwrap();
    assert!(matches!(err, Error::ModelMissing { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("model.onnx") && msg.contains("scripts/fetch-models.sh"), "{msg}");
    assert_eq!(err.class(), engine::ErrorClass::Model);
}

#[test]
fn a_corrupt_model_file_names_the_file_and_the_fix() {
    let dir = broken_models_dir("model.onnx", Some(b"this is not an onnx graph"));
    let err = OnnxEmbedder::load(&Models::open(dir.path()).unwrap(), &Settings::default()).err().unwrap();
    let msg = err.to_string();
    assert!(matches!(err, Error::ModelLoad { .. }), "{msg}");
    assert!(msg.contains("model.onnx") && msg.contains("scripts/fetch-models.sh"), "{msg}");
}

#[test]
fn a_corrupt_tokenizer_names_the_tokenizer() {
    let dir = broken_models_dir("tokenizer.json", Some(b"{ not json"));
    let err = OnnxEmbedder::load(&Models::open(dir.path()).unwrap(), &Settings::default()).err().unwrap();
    let msg = err.to_string();
    assert!(msg.contains("tokenizer.json") && msg.contains("scripts/fetch-models.sh"), "{msg}");
}

fn engine_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_engine"))
}

#[test]
fn a_corrupt_runtime_library_fails_cleanly_in_the_binary() {
    // The runtime is loaded once per process, so this needs a process of its own.
    let dir = broken_models_dir("libonnxruntime.so.1.31.1", Some(b"\x7fELF garbage"));
    let out = std::process::Command::new(engine_bin())
        .args(["embed", "hello"])
        .env("ENGINE_MODELS_DIR", dir.path())
        .env_remove("ORT_DYLIB_PATH")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("libonnxruntime.so.1.31.1") && stderr.contains("scripts/fetch-models.sh"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
}

#[test]
fn the_binary_finds_its_models_without_any_variable() {
    let out = std::process::Command::new(engine_bin())
        .args(["embed", "A man is eating food.", "A man is eating a piece of bread."])
        .current_dir(std::env::temp_dir())
        .env_remove("ENGINE_MODELS_DIR")
        .env_remove("ORT_DYLIB_PATH")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("0.75"), "{stdout}");
}

#[test]
fn the_fast_token_count_matches_the_tokenizer_on_every_corpus_file() {
    let mut tok = tokenizers::Tokenizer::from_file(root().join("models/tokenizer.json")).unwrap();
    tok.with_padding(None);
    tok.with_truncation(None).unwrap();
    let fast = WordPieceCounter::new(&tok).expect("MiniLM uses BERT WordPiece");
    let mut files = Vec::new();
    for dir in ["sample", "golden", "engine", "tests"] {
        for e in ignore::WalkBuilder::new(root().join(dir)).hidden(false).build().flatten() {
            if e.file_type().is_some_and(|t| t.is_file()) {
                files.push(e.into_path());
            }
        }
    }
    let (mut checked, mut mixed) = (0, 0);
    let slow = |t: &str| tok.encode_fast(t, false).unwrap().len();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else { continue };
        for piece in text.split("\n\n").chain(std::iter::once(text.as_str())) {
            let want = slow(piece);
            assert_eq!(fast.count_mixed(piece, &slow), want, "{}: {:?}", f.display(), &piece[..piece.len().min(200)]);
            if fast.count(piece).is_none() {
                mixed += 1;
            }
            checked += 1;
        }
    }
    // Non-ASCII: accents, CJK, symbols, bidi and zero-width characters around ASCII words.
    for piece in [
        "café naïve – “quotes” … 日本語のテキスト x→y",
        "a\u{202E}b zero\u{200B}width 🎉 emoji",
        "ÀÉÎ straße",
        "a [UNK] b[SEP]c [cls] x[MASK]",
    ] {
        assert_eq!(fast.count_mixed(piece, &slow), slow(piece), "{piece:?}");
    }
    assert!(checked > 1000 && mixed > 10, "{checked} texts checked, {mixed} with non-ASCII words");
}

#[test]
fn a_released_model_loads_again_and_embeds_the_same() {
    let lazy = LazyOnnxEmbedder::new(models(), &Settings::default()).unwrap();
    let text = "Sessions are stored in Redis so that every web node sees them.";
    let before = lazy.embed(&[text]).unwrap();
    lazy.release();
    let after = lazy.embed(&[text]).unwrap();
    assert!(dot(&before[0], &after[0]) > 0.9999, "{}", dot(&before[0], &after[0]));
}

/// The graph the engine runs, `models/model.onnx` (`scripts/derive-embedder.py`: the package's
/// int8 weights in ONNX Runtime's MatMulNBits, int8 compute), is the packaged model: its vectors
/// stay within activation rounding of the package's own graph, and differ from them, so it is the
/// derived graph that the manifest makes the engine load.
#[test]
fn the_derived_graph_computes_the_packaged_model() {
    let src = root().join("models");
    let packaged = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        if e.path().is_file() && e.file_name() != "models.toml" {
            std::os::unix::fs::symlink(e.path(), packaged.path().join(e.file_name())).unwrap();
        }
    }
    let manifest = std::fs::read_to_string(src.join("models.toml")).unwrap();
    // A table the manifest does not know is ignored: the package's own graph is loaded.
    let derived = "[[embedder.derived]]";
    assert!(manifest.contains(derived), "models.toml derives the graph");
    std::fs::write(packaged.path().join("models.toml"), manifest.replace(derived, "[[unused]]")).unwrap();
    let package = OnnxEmbedder::load(&Models::open(packaged.path()).unwrap(), &Settings::default()).unwrap();
    let texts = [
        "how is the session cache invalidated",
        "A man is eating food.",
        "fn open_index(dir: &Path) -> Result<Index, Error> { Index::open_in_dir(dir) }",
        "Photosynthesis converts light into chemical energy in the chloroplasts of plant cells.",
    ];
    let (ours, theirs) = (embedder().embed(&texts).unwrap(), package.embed(&texts).unwrap());
    let cosines: Vec<f32> = ours.iter().zip(&theirs).map(|(a, b)| dot(a, b)).collect();
    assert!(cosines.iter().all(|&c| c >= 0.998), "{cosines:?}");
    assert!(cosines.iter().any(|&c| c < 0.999_99), "the derived graph was not the one loaded: {cosines:?}");
}

/// The settings that pick the manifest's `[embedders.NAME]` model.
fn settings_for(model: &str) -> Settings {
    Settings::from_toml(&format!("[embed]\nmodel = \"{model}\"\n")).unwrap()
}

/// Another embedder of the manifest (installed by `scripts/fetch-models.sh --embedder bge-small`)
/// is loaded by name, pooled and prefixed as the manifest says: a query is embedded with the
/// model's instruction (so differently from the same text as a passage), finds its passage, and a
/// text's vector does not depend on its batch (the derived graph quantizes per row).
#[test]
fn another_embedder_is_picked_by_name_with_its_pooling_and_prefixes() {
    let bge = OnnxEmbedder::load(&models(), &settings_for("bge-small"))
        .unwrap_or_else(|e| panic!("{e} — run scripts/fetch-models.sh --embedder bge-small"));
    assert!(bge.id().starts_with("bge-small-en-v1.5-int8@"), "{}", bge.id());
    let query = "how do sessions survive a deploy";
    let passages = [
        "Sessions are stored in Redis, so a deploy that restarts the web nodes no longer logs users out.",
        "The thumbnail worker resizes uploaded photos to three sizes.",
        "fn add(a: i32, b: i32) -> i32 { a + b }",
    ];
    let q = bge.embed_query(query).unwrap();
    let as_passage = bge.embed(&[query]).unwrap().remove(0);
    assert!(dot(&q, &as_passage) < 0.999, "the query instruction was not applied");
    let p = bge.embed(&passages).unwrap();
    let scores: Vec<f32> = p.iter().map(|v| dot(&q, v)).collect();
    assert!(scores[0] > scores[1] + 0.05 && scores[0] > scores[2] + 0.05, "{scores:?}");
    let alone = bge.embed(&passages[1..2]).unwrap().remove(0);
    let max_diff = alone.iter().zip(&p[1]).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    assert!(max_diff < 1e-5, "max abs diff {max_diff}");
    assert_ne!(embedder().embed(&passages[..1]).unwrap()[0], p[0], "the default model was loaded");
}

/// An index built with one model is refused by a search configured with another, with the
/// rebuild asked for and both models named.
#[test]
fn an_index_built_with_one_model_asks_for_a_rebuild_under_another() {
    let dir = tempfile::tempdir().unwrap();
    let (project, index) = (dir.path().join("p"), dir.path().join("index"));
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("a.md"), "# Sessions\n\nSessions live in Redis.\n").unwrap();
    let config = dir.path().join("bge.toml");
    std::fs::write(&config, "[embed]\nmodel = \"bge-small\"\n").unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(engine_bin())
            .args(args)
            .env("ENGINE_MODELS_DIR", root().join("models"))
            .output()
            .unwrap()
    };
    let (p, i, c) = (project.to_str().unwrap(), index.to_str().unwrap(), config.to_str().unwrap());
    assert!(run(&["index", p, "--index", i]).status.success());
    let out = run(&["search", "sessions", "--index", i, "--config", c]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("all-MiniLM-L6-v2-int8") && err.contains("bge-small-en-v1.5-int8") && err.contains("--rebuild"),
        "{err}"
    );
    assert!(run(&["index", p, "--index", i, "--config", c, "--rebuild"]).status.success());
    let out = run(&["search", "sessions", "--index", i, "--config", c, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("a.md"));
}
