//! Settings: built-in defaults ← config file ← command-line flags, merged once and validated.
//!
//! Each pipeline stage has its own small config (`EmbedConfig`, `ChunkConfig`, `FuseConfig`…),
//! declared once in [`sections`] with [`section!`](section::section): every key's type, default,
//! allowed range and doc, from which come reading, merging, range checks and the key reference
//! `docs/config.md`. Reading a file never fails on a bad value: unknown keys and values of the
//! wrong type produce a warning that names the key and the fallback used. Values of the right type
//! outside their bounds are errors for the command line ([`SettingsLayer::resolve`]); the hook and
//! the daemon, which must keep answering, lose only the section ([`Settings::load`]). A library
//! user reads and sets keys by name ([`Settings::set`], [`Settings::get`]), held to the same checks.

pub(crate) mod bounds;
mod check;
mod reference;
mod section;
mod sections;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub(crate) use reference::markdown as reference_markdown;
pub use sections::*;

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

/// Features of the learned fusion (their names: `fuse::FEATURES`).
pub(crate) const LEARNED_FEATURES: usize = 14;

/// Fitted by `scripts/fit/fit-fusion.py` on SciFact train and the golden dev halves.
pub(crate) const LEARNED_WEIGHTS: [f32; LEARNED_FEATURES] = [
    -0.1925, 1.5819, 1.8457, 0.1723, 2.2308, -2.2670, 4.7583, 3.9994, 1.2090, -0.0501, -5.1006, -1.3717, 0.5248, 3.7501,
];
pub(crate) const LEARNED_BIAS: f32 = -6.5935;

/// How the legs' hits are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FuseMethod {
    /// Weighted reciprocal rank fusion with intent-mixed weights.
    Rrf,
    /// RRF, then its first `learned_depth` candidates reordered by a logistic model of what the
    /// legs returned for them.
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

/// How `--format context` prints hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputMode {
    /// By confidence: high with the most room (a clear winner in full), medium compact, low left out.
    Tiered,
    /// Every hit as a `<result>`.
    Legacy,
}

/// Declares the sections once: the resolved [`Settings`], the [`SettingsLayer`] of `Option`s, and
/// everything that goes over every section (reading, merging, resolving, validating).
macro_rules! settings {
    ($( $section:ident : $config:ident / $layer:ident ),* $(,)?) => {
        /// Everything the engine can be configured with, resolved.
        // Deserialize: `engine search` hands its resolved settings to the daemon as they are.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        pub struct Settings {
            $(
                #[doc = concat!("The `[", stringify!($section), "]` section.")]
                pub(crate) $section: $config,
            )*
        }

        /// One layer of every section.
        #[derive(Debug, Clone, Default)]
        pub(crate) struct SettingsLayer {
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
            /// Every value out of its allowed range, one line each, naming the key.
            pub fn problems(&self) -> Vec<String> {
                let mut out = Vec::new();
                $( out.extend(self.$section.problems(stringify!($section))); )*
                out
            }

            /// Every section with its doc and keys, in declaration order (`docs/config.md`).
            pub(crate) fn reference() -> Vec<(&'static str, &'static str, Vec<reference::Key>)> {
                vec![ $( (stringify!($section), $config::DOC, $config::keys()), )* ]
            }

            /// Replaces each section that has a problem by its defaults; returns the warnings saying so.
            fn with_valid_sections(mut self) -> (Settings, Vec<String>) {
                let defaults = Settings::default();
                let mut warnings = Vec::new();
                $(
                    let problems = self.$section.problems(stringify!($section));
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
    backend: BackendConfig / BackendLayer,
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
    pub(crate) fn from_file(path: &Path) -> Result<(SettingsLayer, Vec<String>)> {
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
    pub(crate) fn resolve(&self) -> Result<Settings> {
        let settings = self.resolve_unchecked();
        settings.validate()?;
        Ok(settings)
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
    pub(crate) fn load_with_flags(path: &Path, flags: SettingsLayer) -> Result<(Settings, Vec<String>)> {
        let (file, warnings) = SettingsLayer::from_file(path)?;
        match file.overwrite(flags).resolve() {
            Ok(settings) => Ok((settings, warnings)),
            // Flags are range-checked by the CLI, so a value out of range comes from the file.
            Err(Error::Config(m)) => Err(Error::Config(format!("{}: {m}", path.display()))),
            Err(e) => Err(e),
        }
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
    /// Settings from the text of a config file (as `engine.toml` holds it), checked strictly:
    /// a TOML error, an unknown key or section, a value of the wrong type or out of range is an
    /// error naming it.
    pub fn from_toml(text: &str) -> Result<Settings> {
        let (layer, warnings) = SettingsLayer::from_toml(text, "settings")?;
        if let Some(w) = warnings.first() {
            return Err(Error::Config(w.trim_start_matches("config: ").to_string()));
        }
        layer.resolve()
    }

    /// Sets one key, named `section.key` as in `engine.toml` (`"search.k"`, `"fuse.method"`),
    /// checked as a config file's value is; on error the settings are unchanged.
    ///
    /// ```
    /// let mut settings = engine::Settings::default();
    /// settings.set("search.k", 20)?;
    /// settings.set("fuse.method", "learned")?;
    /// assert_eq!(settings.get::<usize>("search.k")?, 20);
    /// assert!(settings.set("search.k", 0).is_err());
    /// # Ok::<(), engine::Error>(())
    /// ```
    pub fn set<T: Serialize>(&mut self, key: &str, value: T) -> Result<()> {
        let (section, name) = split_key(key)?;
        let value = toml::Value::try_from(value)
            .map_err(|e| Error::Config(format!("{key}: the value has no TOML form ({e})")))?;
        let mut root = self.as_table()?;
        match root.get_mut(section).and_then(toml::Value::as_table_mut) {
            Some(table) if table.contains_key(name) || Self::is_optional_key(section, name) => {
                table.insert(name.to_string(), value);
            }
            _ => return Err(unknown_key(key)),
        }
        *self = Settings::from_toml(&toml::to_string(&root).map_err(|e| Error::Config(e.to_string()))?)?;
        Ok(())
    }

    /// The value of one key, named `section.key` as in `engine.toml`.
    pub fn get<T: serde::de::DeserializeOwned>(&self, key: &str) -> Result<T> {
        let (section, name) = split_key(key)?;
        let root = self.as_table()?;
        let value = match root.get(section).and_then(|t| t.get(name)) {
            Some(v) => v.clone(),
            None if Self::is_optional_key(section, name) => {
                // Unset: what `None` deserializes from.
                let unset = serde::de::value::UnitDeserializer::<serde::de::value::Error>::new();
                return T::deserialize(unset).map_err(|_| Error::Config(format!("{key} is not set")));
            }
            None => return Err(unknown_key(key)),
        };
        T::deserialize(value).map_err(|e| Error::Config(format!("{key}: {}", e.message())))
    }

    /// The settings as `engine.toml` would hold them (unset optional keys left out).
    fn as_table(&self) -> Result<toml::Table> {
        toml::Table::try_from(self).map_err(|e| Error::Config(e.to_string()))
    }

    /// Whether `section.name` is a key that may be unset (and so is absent from [`as_table`]).
    fn is_optional_key(section: &str, name: &str) -> bool {
        Settings::reference()
            .iter()
            .any(|(s, _, keys)| *s == section && keys.iter().any(|k| k.name == name && k.ty.starts_with("Option")))
    }
}

/// `section.key` split in two.
fn split_key(key: &str) -> Result<(&str, &str)> {
    key.split_once('.').filter(|(s, k)| !s.is_empty() && !k.is_empty()).ok_or_else(|| unknown_key(key))
}

fn unknown_key(key: &str) -> Error {
    Error::Config(format!("unknown setting {key:?}: name it section.key, as in engine.toml (docs/config.md)"))
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
        assert_eq!(layer("[fuse]\nmethod = \"rrf\"\n").unwrap().resolve().unwrap().fuse.method, FuseMethod::Rrf);
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
    fn keys_are_set_and_read_by_name_and_checked_as_in_a_file() {
        let mut s = Settings::default();
        assert_eq!(s.get::<Option<usize>>("embed.threads").unwrap(), None);
        s.set("embed.threads", 2).unwrap();
        assert_eq!(s.get::<Option<usize>>("embed.threads").unwrap(), Some(2));
        s.set("fuse.method", "rrf").unwrap();
        assert_eq!(s.fuse.method, FuseMethod::Rrf);
        let before = s.clone();
        for (key, bad) in [("search.k", toml::Value::Integer(0)), ("search.nope", toml::Value::Integer(1))] {
            assert!(s.set(key, bad).is_err(), "{key}");
        }
        assert!(s.set("search", 3).is_err() && s.set("fuse.method", "magic").is_err());
        assert_eq!(s, before, "a refused value changes nothing");
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
