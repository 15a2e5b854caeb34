//! Command-line definitions and dispatch. `run` is one `match` on the command; each arm builds
//! settings from the flags layer and calls the library.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use engine::config::{bounds, EmbedLayer, Mode, RerankLayer, RerankMode, SearchLayer, Settings, SettingsLayer};
use engine::embed::{dot, Embedder, OnnxEmbedder};
use engine::eval::RunMode;
use engine::index::{self, BuildOptions};
use engine::ingest::Source;
use engine::models::Models;
use engine::{Engine, SearchRequest, SearchResponse};
use std::io::IsTerminal;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

mod memory;

#[derive(Debug, Parser)]
#[command(name = "engine", version, about = "Local, offline hybrid semantic search")]
pub struct Cli {
    /// Config file (default: engine.toml in the current directory, if present).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Index a directory (default: the current one) or a BEIR corpus, incrementally.
    Index {
        /// Directory to index.
        path: Option<PathBuf>,
        /// Index directory (default: PATH/.engine).
        #[arg(long)]
        index: Option<PathBuf>,
        /// Index a BEIR collection (a directory holding corpus.jsonl) instead of a directory.
        #[arg(long, conflicts_with = "path")]
        beir: Option<PathBuf>,
        /// Rebuild from scratch (the embedding cache is kept).
        #[arg(long)]
        rebuild: bool,
        /// Print a JSON summary.
        #[arg(long)]
        json: bool,
        /// Run at this CPU niceness, 1 (a little lower) to 19 (lowest): the hook's background
        /// indexing ([hook] background_nice), so a prompt answered meanwhile keeps the cores.
        #[arg(long, value_parser = clap::value_parser!(i32).range(1..=19))]
        nice: Option<i32>,
    },
    /// Write every chunk with its vector as JSON lines (schema: docs/scale-out.md), for loading
    /// into a distributed engine.
    Export {
        #[arg(long)]
        index: Option<PathBuf>,
        /// Write here instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Show what an index holds.
    Status {
        #[arg(long)]
        index: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Measure retrieval quality: the golden sets (no arguments; the CI gate), a BEIR collection
    /// in several modes side by side, or another system's TREC run.
    Eval {
        /// A BEIR collection directory (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).
        #[arg(long, conflicts_with = "golden")]
        beir: Option<PathBuf>,
        /// Golden sets: a directory of sets or one set (default: the nearest golden/ above the
        /// current directory).
        #[arg(long)]
        golden: Option<PathBuf>,
        /// Thresholds for the golden gate (default: thresholds.toml in the golden directory).
        #[arg(long)]
        thresholds: Option<PathBuf>,
        /// BEIR: the qrels split (default: test if present, else dev). Golden sets: all, dev or
        /// held-out (the gate runs only on all).
        #[arg(long)]
        split: Option<String>,
        /// Configurations to run, comma separated: bm25, vector, hybrid, hybrid+rerank (always
        /// rerank), hybrid+auto (the configured trigger).
        #[arg(long, default_value = "bm25,vector,hybrid")]
        modes: String,
        /// Index directory for a BEIR collection (default: a per-collection cache directory).
        #[arg(long)]
        index: Option<PathBuf>,
        /// Score this TREC run file (with --qrels) instead of running the engine.
        #[arg(long, requires = "qrels", conflicts_with_all = ["beir", "golden"])]
        run: Option<PathBuf>,
        #[arg(long)]
        qrels: Option<PathBuf>,
        /// List the queries that got better and worse between two modes.
        #[arg(long, num_args = 2, value_names = ["MODE_A", "MODE_B"])]
        compare: Option<Vec<String>>,
        /// Print the JSON report (one line per set or collection).
        #[arg(long)]
        json: bool,
        /// Also write the Markdown report here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write one JSON line per query here: for golden sets the hook's search (evidence,
        /// labels, relevance, the context), for a BEIR collection the first 100 hybrid hits with
        /// each leg's rank and score and their grades (`scripts/fit-fusion.py` reads both).
        #[arg(long)]
        features: Option<PathBuf>,
    },
    /// Show how files are chunked: line ranges, titles and symbols.
    Chunks {
        /// Files to chunk.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Search the index.
    Search {
        /// The query.
        query: String,
        /// Index directory (default: the nearest .engine/ above the current directory).
        #[arg(long)]
        index: Option<PathBuf>,
        /// Number of results.
        #[arg(short = 'k', long = "k", value_parser = usize_in(bounds::K))]
        k: Option<usize>,
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        /// Print JSON (same as --format json).
        #[arg(long)]
        json: bool,
        /// Output: text (for a person), json, or context (the tiered block an LLM gets; with
        /// --json, the block as JSON with its rule, tokens and per-hit layers).
        #[arg(long, value_enum)]
        format: Option<Format>,
        /// Rerank: never, always, or auto (the configured trigger rules).
        #[arg(long, value_enum)]
        rerank: Option<RerankMode>,
        /// Include per-stage scores.
        #[arg(long)]
        explain: bool,
    },
    /// The Claude Code hook: reads the event JSON on stdin, prints context (always exits 0).
    Hook {
        #[command(subcommand)]
        action: Option<HookAction>,
        /// Print the context block as plain text instead of the hook's JSON.
        #[arg(long)]
        plain: bool,
    },
    /// Keep an index and the model loaded and answer the hook on a Unix socket in the index.
    Serve {
        /// Index directory (default: the nearest .engine/ above the current directory).
        #[arg(long)]
        index: Option<PathBuf>,
        /// Exit after this many seconds without a request (default: [hook] idle_timeout_s).
        #[arg(long, value_parser = clap::value_parser!(u64).range(bounds::IDLE_TIMEOUT_S))]
        idle_timeout: Option<u64>,
    },
    /// Serve the index and the project memory as MCP tools over stdio (search, get, remember,
    /// forget, recent), for Claude Code and other MCP clients.
    Mcp {
        #[command(subcommand)]
        action: Option<McpAction>,
        /// Index directory (default: the nearest .engine/ above the current directory).
        #[arg(long)]
        index: Option<PathBuf>,
    },
    /// Check configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Project memory: the records under .claude/memory/ (add, list, show, edit, delete, stats,
    /// gc, export, import, capture from a transcript).
    Memory(memory::MemoryArgs),
    /// Embed texts with the local model and print their cosine similarities (a model check).
    Embed {
        /// Texts to embed.
        #[arg(required = true)]
        texts: Vec<String>,
        /// Texts per ONNX run.
        #[arg(long, value_parser = usize_in(bounds::BATCH))]
        batch_size: Option<usize>,
    },
}

/// A flag's parser holding it to the same bounds as the setting it overrides.
fn usize_in(range: RangeInclusive<usize>) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(*range.start() as u64..=*range.end() as u64)
}

/// `engine search` output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
    Context,
}

#[derive(Debug, Subcommand)]
pub enum HookAction {
    /// Add the engine's hooks to .claude/settings.json (a backup is kept; idempotent).
    Install {
        /// This project's .claude/settings.json (the default).
        #[arg(long, conflicts_with = "user")]
        project: bool,
        /// ~/.claude/settings.json.
        #[arg(long)]
        user: bool,
    },
    /// Remove exactly the hooks install added.
    Uninstall {
        #[arg(long, conflicts_with = "user")]
        project: bool,
        #[arg(long)]
        user: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Add the server to Claude Code's MCP configuration: .mcp.json here (the default) or
    /// ~/.claude.json (a backup is kept; idempotent).
    Install {
        /// This project's .mcp.json, in the current directory (the default).
        #[arg(long, conflicts_with = "user")]
        project: bool,
        /// The mcpServers of ~/.claude.json (every project of this user).
        #[arg(long)]
        user: bool,
    },
    /// Remove exactly the entry install added.
    Uninstall {
        #[arg(long, conflicts_with = "user")]
        project: bool,
        #[arg(long)]
        user: bool,
    },
}

fn claude_settings(user: bool) -> Result<PathBuf> {
    if user {
        let home = std::env::var_os("HOME").ok_or_else(|| engine::Error::InvalidInput("HOME is not set".into()))?;
        Ok(PathBuf::from(home).join(".claude/settings.json"))
    } else {
        Ok(std::env::current_dir()?.join(".claude/settings.json"))
    }
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Validate a config file (default: engine.toml): unknown keys, bad values, invalid settings.
    Check {
        file: Option<PathBuf>,
        /// Also print the resolved settings.
        #[arg(long)]
        show: bool,
    },
}

fn settings_from(config: &Option<PathBuf>, flags: SettingsLayer) -> Result<engine::Settings> {
    let path = config.clone().unwrap_or_else(|| PathBuf::from("engine.toml"));
    let (settings, warnings) = engine::Settings::load_with_flags(&path, flags)?;
    for w in warnings {
        eprintln!("engine: {}", engine::error::one_line(&w));
    }
    Ok(settings)
}

/// Where `engine eval` keeps the index of a collection or golden corpus (`kind` is `beir` or
/// `golden`), keyed by its absolute path: datasets may be read-only, and indexes are reused.
pub fn cache_index_dir(kind: &str, corpus: &Path) -> PathBuf {
    let abs = std::path::absolute(corpus).unwrap_or_else(|_| corpus.to_path_buf());
    let name = abs.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "corpus".into());
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    use sha2::Digest;
    let tag = hex::encode(&sha2::Sha256::digest(abs.to_string_lossy().as_bytes())[..4]);
    base.join("engine").join(kind).join(format!("{name}-{tag}"))
}

fn search_index_dir(index: Option<PathBuf>) -> Result<PathBuf> {
    match index {
        Some(dir) => Ok(dir),
        None => {
            let cwd = std::env::current_dir()?;
            let found = index::store::find_index(&cwd);
            for why in &found.distrusted {
                eprintln!("engine: {why}");
            }
            found.index.ok_or_else(|| engine::Error::IndexMissing { path: cwd.join(".engine") }.into())
        }
    }
}

/// Runs an indexing job with a progress display on a terminal and plain lines otherwise.
pub fn run_index(
    index_dir: &Path,
    source: &Source,
    settings: &Settings,
    rebuild: bool,
    quiet: bool,
) -> Result<index::IndexReport> {
    let near = match source {
        Source::Dir(p) => p.clone(),
        Source::Beir(_) => index_dir.to_path_buf(),
    };
    let models = Models::locate(Some(&near))?;
    let embedder = engine::embed::LazyOnnxEmbedder::new(models, settings.embed.clone());
    let terminal = std::io::stderr().is_terminal() && !quiet;
    let bar = terminal.then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("embedding {bar:40} {pos}/{len} chunks ({per_sec}, eta {eta})")
                .expect("valid template"),
        );
        b
    });
    let last_pct = std::sync::atomic::AtomicUsize::new(usize::MAX);
    let progress = |done: usize, total: usize| {
        if let Some(b) = &bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        } else if !quiet {
            let pct = done * 10 / total.max(1);
            if last_pct.swap(pct, std::sync::atomic::Ordering::Relaxed) != pct {
                eprintln!("engine: embedded {done}/{total} chunks");
            }
        }
    };
    let options = BuildOptions { rebuild, progress: Some(&progress), release_model: true };
    let report = index::build(index_dir, source, settings, &embedder, &options)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(report)
}

fn highlight(text: &str, query: &str, color: bool) -> String {
    if !color {
        return text.to_string();
    }
    let terms: Vec<String> =
        query.split(|c: char| !c.is_alphanumeric()).filter(|t| t.len() > 2).map(str::to_lowercase).collect();
    text.split(' ')
        .map(|w| {
            let lw = w.to_lowercase();
            if terms.iter().any(|t| lw.contains(t.as_str())) {
                format!("\x1b[1;33m{w}\x1b[0m")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints results for a person.
pub fn print_human(resp: &SearchResponse) {
    let color = std::io::stdout().is_terminal();
    if resp.degraded {
        eprintln!(
            "engine: answering from BM25 only: {}",
            resp.degraded_reason.as_deref().unwrap_or("no embedding model")
        );
    }
    if let Some(v) = resp.vectors {
        eprintln!(
            "engine: still embedding: {} of {} chunks have vectors; the rest are found by BM25 only",
            v.embedded, v.chunks
        );
    }
    if let Some(r) = resp.rerank.as_ref().filter(|r| !r.applied) {
        eprintln!("engine: not reranked: {}", r.reason.as_deref().unwrap_or("unknown reason"));
    }
    if resp.results.is_empty() {
        println!("no results for {:?}", resp.query);
    }
    for (i, h) in resp.results.iter().enumerate() {
        println!(
            "{:>2}. {:.4} {:<6}  {}:{}-{}  {}",
            i + 1,
            h.score,
            h.confidence.as_str(),
            h.path,
            h.start_line,
            h.end_line,
            h.title
        );
        println!("      {}", highlight(&h.snippet, &resp.query, color));
    }
}

/// How `engine eval` prints its reports.
struct EvalOutput {
    json: bool,
    out: Option<PathBuf>,
    compare: Option<Vec<String>>,
    features: Option<PathBuf>,
}

impl EvalOutput {
    fn print(&self, reports: &[engine::eval::Report]) -> Result<()> {
        let md: String = reports.iter().map(|r| r.markdown()).collect::<Vec<_>>().join("\n");
        if let Some(path) = &self.out {
            std::fs::write(path, &md).with_context(|| format!("writing {}", path.display()))?;
        }
        if self.json {
            for r in reports {
                println!("{}", serde_json::to_string(r)?);
            }
        } else {
            print!("{md}");
        }
        if let Some(pair) = &self.compare {
            for report in reports {
                let (better, worse) = report.compare(&pair[0], &pair[1])?;
                let say = |s: String| if self.json { eprintln!("{s}") } else { println!("{s}") };
                say(format!(
                    "\n{}: {} queries better in {} than {}, {} worse (nDCG@10):",
                    report.dataset,
                    better.len(),
                    pair[0],
                    pair[1],
                    worse.len()
                ));
                for (q, a, b) in better.iter().take(20) {
                    say(format!("  + {q}: {a:.3} vs {b:.3}"));
                }
                for (q, a, b) in worse.iter().take(20) {
                    say(format!("  - {q}: {a:.3} vs {b:.3}"));
                }
            }
        }
        Ok(())
    }
}

/// The modes to run: the requested ones plus any named by `--compare`.
fn with_compared_modes(mut modes: Vec<RunMode>, compare: &Option<Vec<String>>) -> Vec<RunMode> {
    for m in compare.iter().flatten() {
        if let Some(mode) = RunMode::parse(m) {
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
    }
    modes
}

/// Scores another system's TREC run with the engine's metrics.
fn eval_run_file(run: &Path, qrels_path: &Path) -> Result<engine::eval::Report> {
    use engine::eval;
    let qrels = eval::read_qrels(qrels_path)?;
    let ranked = eval::read_run(run)?;
    let mut per_query = std::collections::BTreeMap::new();
    for (q, judged) in &qrels {
        let list = ranked.get(q).cloned().unwrap_or_default();
        if let Some(m) = eval::score(&list, judged) {
            per_query.insert(q.clone(), m);
        }
    }
    // trec_eval ignores runs for unjudged queries too; a run over every split is common.
    let unjudged = ranked.keys().filter(|q| !qrels.contains_key(*q)).count();
    if unjudged > 0 {
        eprintln!(
            "engine: {}: {unjudged} queries have no judgments in {}; ignored",
            run.display(),
            qrels_path.display()
        );
    }
    let name = run.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "run".into());
    let runs = vec![eval::run_report(&name, per_query, &[], &Default::default())];
    let queries = runs[0].per_query.len();
    Ok(eval::Report { dataset: run.display().to_string(), split: qrels_path.display().to_string(), queries, runs })
}

/// Indexes a BEIR collection (reusing an unchanged index) and runs its queries in each mode.
fn eval_beir(
    beir: &Path,
    split: Option<String>,
    index: Option<PathBuf>,
    settings: &Settings,
    modes: &[RunMode],
    quiet: bool,
    features: Option<&Path>,
) -> Result<engine::eval::Report> {
    use engine::eval;
    let split = match split {
        Some(s) => s,
        None if beir.join("qrels/test.tsv").is_file() => "test".into(),
        None => "dev".into(),
    };
    let queries = eval::read_queries(&beir.join("queries.jsonl"))?;
    let qrels = eval::read_qrels_for(&beir.join("qrels").join(format!("{split}.tsv")), Some(&queries))?;
    let dir = index.unwrap_or_else(|| cache_index_dir("beir", beir));
    let indexed = run_index(&dir, &Source::Beir(std::path::absolute(beir)?), settings, false, quiet)?;
    if indexed.files_changed + indexed.files_removed > 0 {
        eprintln!("engine: indexed {} documents into {}", indexed.files_changed, dir.display());
    }
    let engine = Engine::builder(&dir).settings(settings.clone()).bm25_fallback().open()?;
    let name = std::path::absolute(beir)?.file_name().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    if let Some(path) = features {
        let text: String = eval::candidates(&engine, &format!("{name}/{split}"), &queries, &qrels)?
            .iter()
            .map(|v| format!("{v}\n"))
            .collect();
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    let runs = eval::run_modes(&engine, &queries, &qrels, modes)?;
    Ok(eval::Report { dataset: name, split, queries: runs.first().map_or(0, |r| r.per_query.len()), runs })
}

/// The nearest `golden/` directory at or above the current one.
fn find_golden() -> Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    cwd.ancestors().map(|d| d.join("golden")).find(|g| engine::eval::golden::discover(g).is_ok()).ok_or_else(|| {
        engine::Error::InvalidInput(format!(
            "no golden sets found in or above {} (give --golden DIR, --beir DIR or --run FILE --qrels FILE)",
            cwd.display()
        ))
        .into()
    })
}

/// Exit code when a golden set misses a threshold.
pub const EXIT_QUALITY_GATE: i32 = 5;

/// Runs the golden sets and, on both halves, holds them to their thresholds.
fn eval_golden(
    golden: Option<PathBuf>,
    thresholds: Option<PathBuf>,
    split: Option<String>,
    modes: Vec<RunMode>,
    settings: &Settings,
    opts: &EvalOutput,
) -> Result<i32> {
    use engine::eval::golden::{self, GoldenSet, Split};
    let root = match golden {
        Some(g) => g,
        None => find_golden()?,
    };
    let split = match split.as_deref() {
        None => Split::All,
        Some(s) => <Split as clap::ValueEnum>::from_str(s, true).map_err(|_| {
            engine::Error::InvalidInput(format!("--split {s:?}: golden sets have all, dev and held-out"))
        })?,
    };
    let threshold_file = thresholds.or_else(|| {
        let dir = if root.join(golden::SET_FILE).is_file() {
            root.parent().map(Path::to_path_buf)
        } else {
            Some(root.clone())
        };
        dir.map(|d| d.join(golden::THRESHOLDS_FILE)).filter(|p| p.is_file())
    });
    let limits = threshold_file.as_deref().map(golden::read_thresholds).transpose()?;
    let mut reports = Vec::new();
    let mut checks = Vec::new();
    let mut hooks = Vec::new();
    let mut feature_lines = Vec::new();
    for path in golden::discover(&root)? {
        let set = GoldenSet::load(&path)?;
        let mut modes = with_compared_modes(modes.clone(), &opts.compare);
        for m in limits.iter().filter_map(|l| l.get(&set.name)).flat_map(|by_mode| by_mode.keys()) {
            if m == golden::HOOK {
                continue;
            }
            let mode = RunMode::parse(m).expect("checked when read");
            if !modes.contains(&mode) {
                modes.push(mode);
            }
        }
        set.prepare(&settings.capture)?;
        let dir = cache_index_dir("golden", &set.corpus);
        run_index(&dir, &Source::Dir(std::path::absolute(&set.corpus)?), settings, false, true)?;
        let engine = Engine::builder(&dir).settings(settings.clone()).bm25_fallback().open()?;
        if opts.features.is_some() {
            feature_lines.extend(golden::features(&engine, &set)?);
        }
        // A set judged by fact has no ranking to score, only what the hook gives.
        let report = if set.by_fact() {
            engine::eval::Report {
                dataset: set.name.clone(),
                split: split.as_str().into(),
                queries: 0,
                runs: Vec::new(),
            }
        } else {
            golden::run(&engine, &set, split, &modes)?
        };
        let hook = golden::hook_quality(&engine, &set, split)?;
        let mut lines = vec![format!("{} ({}): {hook}", set.name, split.as_str())];
        if split == Split::All {
            for half in [Split::Dev, Split::HeldOut] {
                lines.push(format!("{} ({}): {}", set.name, half.as_str(), golden::hook_quality(&engine, &set, half)?));
            }
        }
        if opts.json {
            lines.iter().for_each(|l| eprintln!("engine: hook path: {l}"));
        } else {
            hooks.extend(lines);
        }
        let (right, labelled) = golden::intent_accuracy(&set, split);
        if labelled > 0 && !opts.json {
            eprintln!("engine: {}: expected intent matched for {right} of {labelled} labelled queries", set.name);
        }
        if let (Some(l), Split::All) = (&limits, split) {
            checks.extend(golden::gate(&set.name, &report, &hook, l));
        }
        if !set.by_fact() {
            reports.push(report);
        }
    }
    if let Some(path) = &opts.features {
        let text: String = feature_lines.iter().map(|v| format!("{v}\n")).collect();
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    opts.print(&reports)?;
    if !hooks.is_empty() {
        println!("\nhook path (prompt in, context out):\n{}", hooks.join("\n"));
    }
    if split != Split::All && limits.is_some() {
        eprintln!("engine: thresholds apply to both halves together; not checked for --split {}", split.as_str());
    }
    let failed = checks.iter().filter(|c| !c.passed()).count();
    if !checks.is_empty() {
        let say = |s: String| if opts.json { eprintln!("{s}") } else { println!("{s}") };
        say(format!(
            "\ngolden gate ({}): {} of {} thresholds met",
            threshold_file.as_deref().map(|p| p.display().to_string()).unwrap_or_default(),
            checks.len() - failed,
            checks.len()
        ));
        for c in &checks {
            say(c.to_string());
        }
    }
    Ok(if failed > 0 { EXIT_QUALITY_GATE } else { 0 })
}

/// Runs one command; returns the process exit code.
pub fn run(cli: Cli) -> Result<i32> {
    // First, while the process has one thread: see `silence_runtime_telemetry`.
    engine::models::silence_runtime_telemetry();
    match cli.command {
        Command::Index { path, index, beir, rebuild, json, nice } => {
            if let Some(nice) = nice {
                engine::serve::lower_priority(nice);
            }
            let settings = settings_from(&cli.config, SettingsLayer::default())?;
            let (source, index_dir) = match beir {
                Some(b) => {
                    let dir = index.unwrap_or_else(|| cache_index_dir("beir", &b));
                    (Source::Beir(std::path::absolute(&b)?), dir)
                }
                None => {
                    let root = std::path::absolute(path.unwrap_or_else(|| PathBuf::from(".")))?;
                    let dir = index.unwrap_or_else(|| root.join(".engine"));
                    (Source::Dir(root), dir)
                }
            };
            let report = run_index(&index_dir, &source, &settings, rebuild, json)?;
            for w in &report.warnings {
                eprintln!("engine: {w}");
            }
            if json {
                println!("{}", serde_json::to_string(&report)?);
            } else {
                println!(
                    "indexed {}: {} files scanned, {} changed, {} removed, {} skipped; {} chunks added, {} removed ({} embedded, {} from cache) in {:.2}s",
                    index_dir.display(),
                    report.files_scanned,
                    report.files_changed,
                    report.files_removed,
                    report.files_skipped,
                    report.chunks_added,
                    report.chunks_removed,
                    report.chunks_embedded,
                    report.chunks_cached,
                    report.seconds.total
                );
            }
            Ok(0)
        }
        Command::Export { index, out } => {
            let dir = search_index_dir(index)?;
            let n = match out {
                Some(path) => {
                    let file = std::fs::File::create(&path)
                        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
                    let mut w = std::io::BufWriter::new(file);
                    let n = engine::index::export::export(&dir, &mut w)?;
                    std::io::Write::flush(&mut w)?;
                    n
                }
                None => engine::index::export::export(&dir, &mut std::io::stdout().lock())?,
            };
            eprintln!("engine: exported {n} chunks");
            Ok(0)
        }
        Command::Status { index, json } => {
            let dir = search_index_dir(index)?;
            let st = index::status(&dir)?;
            if json {
                println!("{}", serde_json::to_string(&st)?);
            } else {
                println!("index      {}", st.index);
                println!("model      {} ({} dims)", st.model, st.dimensions);
                println!("documents  {}", st.documents);
                println!("chunks     {} ({})", st.chunks, if st.graph { "HNSW graph" } else { "exact vector search" });
                if st.vectors < st.chunks {
                    println!(
                        "vectors    {} of {} chunks (still embedding: the rest are found by BM25 only)",
                        st.vectors, st.chunks
                    );
                }
                println!("on disk    {:.1} MiB", st.bytes_on_disk as f64 / 1048576.0);
                println!("updated    {} (unix seconds), generation {}", st.updated_unix, st.generation);
                for (k, c) in &st.by_kind {
                    println!("  kind {k:<10} {:>6} documents {:>7} chunks", c.documents, c.chunks);
                }
                for (k, c) in &st.by_lang {
                    println!("  lang {k:<10} {:>6} documents {:>7} chunks", c.documents, c.chunks);
                }
            }
            Ok(0)
        }
        Command::Eval { beir, golden, thresholds, split, modes, index, run, qrels, compare, json, out, features } => {
            let opts = EvalOutput { json, out, compare, features };
            let modes = RunMode::parse_list(&modes)?;
            if let Some(run) = run {
                let qrels = qrels.expect("clap requires --qrels with --run");
                opts.print(&[eval_run_file(&run, &qrels)?])?;
                Ok(0)
            } else if let Some(beir) = beir {
                let settings = settings_from(&cli.config, SettingsLayer::default())?;
                let modes = with_compared_modes(modes, &opts.compare);
                opts.print(&[eval_beir(&beir, split, index, &settings, &modes, json, opts.features.as_deref())?])?;
                Ok(0)
            } else {
                let settings = settings_from(&cli.config, SettingsLayer::default())?;
                eval_golden(golden, thresholds, split, modes, &settings, &opts)
            }
        }
        Command::Chunks { files } => {
            let settings = settings_from(&cli.config, SettingsLayer::default())?;
            // Chunk budgets are in model tokens; without the model, an estimate.
            let embedder = Models::locate(None).and_then(|m| OnnxEmbedder::load(&m, &settings.embed)).ok();
            let count = |t: &str| match &embedder {
                Some(e) => e.count_tokens(t),
                None => engine::embed::approx_tokens(t),
            };
            for file in &files {
                let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
                let rel = file.to_string_lossy().to_string();
                let Some(doc) = engine::ingest::Document::from_path(&rel, text) else {
                    eprintln!("engine: {rel}: not a file type the engine indexes");
                    continue;
                };
                for c in engine::chunk::chunk_document(&doc, &settings.chunk, &count) {
                    let symbols =
                        if c.symbols.is_empty() { String::new() } else { format!("  [{}]", c.symbols.join(", ")) };
                    println!("{rel}:{}-{}  {} tokens  {}{symbols}", c.start_line, c.end_line, count(&c.text), c.title);
                }
            }
            Ok(0)
        }
        Command::Hook { action: None, plain } => {
            use std::io::Read;
            let mut input = Vec::new();
            // Never fail on stdin: an unreadable one is reported like malformed JSON.
            let _ = std::io::stdin().take(64 << 20).read_to_end(&mut input);
            // Does not return: `finish` leaves with `_exit`, so exit never races ONNX Runtime.
            engine::hook::finish(engine::hook::run(&input, plain))
        }
        Command::Hook { action: Some(HookAction::Install { user, .. }), .. } => {
            let path = claude_settings(user)?;
            let exe = std::env::current_exe()?;
            let r = engine::hook::install(&path, &exe)?;
            if r.changed.is_empty() {
                println!("{}: the engine's hooks are already installed", path.display());
            } else {
                println!("{}: added {} ({})", path.display(), r.changed.join(", "), engine::hook::hook_command(&exe));
            }
            if let Some(b) = r.backup {
                println!("previous file kept as {}", b.display());
            }
            Ok(0)
        }
        Command::Hook { action: Some(HookAction::Uninstall { user, .. }), .. } => {
            let path = claude_settings(user)?;
            let r = engine::hook::uninstall(&path)?;
            if r.changed.is_empty() {
                println!("{}: no engine hooks to remove", path.display());
            } else {
                println!("{}: removed the engine's {} hooks", path.display(), r.changed.join(", "));
            }
            if let Some(b) = r.backup {
                println!("previous file kept as {}", b.display());
            }
            Ok(0)
        }
        Command::Serve { index, idle_timeout } => {
            let dir = search_index_dir(index)?;
            engine::serve::serve(&dir, idle_timeout.map(std::time::Duration::from_secs))?;
            Ok(0)
        }
        Command::Mcp { action: None, index } => {
            engine::mcp::serve(index.as_deref())?;
            Ok(0)
        }
        Command::Mcp { action: Some(McpAction::Install { user, .. }), .. } => {
            let path = engine::mcp::config_path(user)?;
            let r = engine::mcp::install(&path, &std::env::current_exe()?)?;
            match (r.changed.is_empty(), r.backup) {
                (true, _) => println!("{}: the engine's MCP server is already installed", path.display()),
                (false, backup) => {
                    println!("{}: added the MCP server {:?} (`engine mcp`)", path.display(), engine::mcp::SERVER_NAME);
                    if let Some(b) = backup {
                        println!("previous file kept as {}", b.display());
                    }
                }
            }
            Ok(0)
        }
        Command::Mcp { action: Some(McpAction::Uninstall { user, .. }), .. } => {
            let path = engine::mcp::config_path(user)?;
            let r = engine::mcp::uninstall(&path)?;
            if r.changed.is_empty() {
                println!("{}: no engine MCP server to remove", path.display());
            } else {
                println!("{}: removed the MCP server {:?}", path.display(), engine::mcp::SERVER_NAME);
            }
            Ok(0)
        }
        Command::Config { action: ConfigAction::Check { file, show } } => {
            let path = file.or(cli.config).unwrap_or_else(|| PathBuf::from("engine.toml"));
            if !path.is_file() {
                return Err(engine::Error::InvalidInput(format!("no config file at {}", path.display())).into());
            }
            let (layer, warnings) = SettingsLayer::from_file(&path)?;
            let settings = layer.resolve_unchecked();
            let out_of_range: Vec<String> = settings.problems().into_iter().map(|p| format!("config: {p}")).collect();
            for w in warnings.iter().chain(&out_of_range) {
                eprintln!("engine: {}: {}", path.display(), engine::error::one_line(w));
            }
            if show {
                println!("{}", toml::to_string(&settings)?);
            }
            let problems = warnings.len() + out_of_range.len();
            if problems == 0 {
                println!("{}: ok", path.display());
                Ok(0)
            } else if out_of_range.is_empty() {
                println!("{}: {problems} problem(s); the defaults named above are used instead", path.display());
                Ok(2)
            } else {
                println!(
                    "{}: {problems} problem(s); commands refuse values out of range (the hook and the daemon use their section's defaults)",
                    path.display()
                );
                Ok(2)
            }
        }
        Command::Search { query, index, k, mode, json, format, rerank, explain } => {
            if query.trim().is_empty() {
                return Err(engine::Error::InvalidInput("empty query: give some words to search for".into()).into());
            }
            let format = format.unwrap_or(if json { Format::Json } else { Format::Text });
            let flags = SettingsLayer {
                search: SearchLayer { k, mode, ..Default::default() },
                rerank: RerankLayer { mode: rerank, ..Default::default() },
                ..Default::default()
            };
            let settings = settings_from(&cli.config, flags)?;
            let dir = search_index_dir(index)?;
            // Index errors name the index directory themselves.
            let builder = Engine::builder(&dir).settings(settings.clone());
            let engine = if settings.search.mode == Mode::Bm25 {
                builder.lexical_only()
            } else {
                builder.bm25_fallback().one_shot()
            }
            .open()?;
            let mut req = SearchRequest::new(query, settings.search.k, settings.search.mode);
            req.explain = explain;
            let resp = engine.search_with(&req)?;
            match format {
                Format::Json => println!("{}", serde_json::to_string(&resp)?),
                Format::Text => print_human(&resp),
                // With --json: the block with the rule that shaped it and what it did with each hit.
                Format::Context if json => println!("{}", serde_json::to_string(&engine.context(&resp))?),
                Format::Context => print!("{}", engine.context(&resp).text),
            }
            Ok(0)
        }
        Command::Memory(args) => memory::run(&cli.config, args),
        Command::Embed { texts, batch_size } => {
            let flags = SettingsLayer { embed: EmbedLayer { batch_size, ..Default::default() }, ..Default::default() };
            let settings = settings_from(&cli.config, flags)?;
            let models = Models::locate(None)?;
            let started = std::time::Instant::now();
            let embedder = OnnxEmbedder::load(&models, &settings.embed)?;
            let loaded = started.elapsed();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let vectors = embedder.embed(&refs)?;
            println!(
                "model {} ({} dims) loaded in {:.0} ms; embedded {} texts in {:.1} ms",
                embedder.id(),
                embedder.dimensions(),
                loaded.as_secs_f64() * 1e3,
                texts.len(),
                (started.elapsed() - loaded).as_secs_f64() * 1e3
            );
            for (i, a) in texts.iter().enumerate() {
                for (j, b) in texts.iter().enumerate().skip(i + 1) {
                    println!("{:.4}  {a:?} ~ {b:?}", dot(&vectors[i], &vectors[j]));
                }
            }
            Ok(0)
        }
    }
}
