//! Reading a generation's chunks: the lexical and symbol legs, loading a chunk as a [`Hit`], the
//! chunks of one document, and the term statistics the evidence stage weighs words by. Everything
//! tantivy-shaped stays here, so the search path deals only in keys, [`LegHit`]s and [`Hit`]s.

use crate::config::Bm25Config;
use crate::error::{Error, Result};
use crate::hit::Hit;
use crate::hit::LegHit;
use crate::index::bm25::{self, Fields};
use std::path::{Path, PathBuf};
use tantivy::collector::TopDocs;
use tantivy::query::{Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, DocSet, IndexReader, Searcher, TantivyDocument, Term};

/// Most chunks [`Snapshot::chunks_of`] reads for one document.
pub(crate) const CHUNKS_PER_DOCUMENT: usize = 2000;

/// The open full-text side of a generation.
pub(crate) struct ChunkReader {
    reader: IndexReader,
    fields: Fields,
    generation_dir: PathBuf,
}

/// Where a chunk sits in the full-text index, as a leg found it (saves a lookup by key later).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChunkAddress(DocAddress);

/// One consistent view of the index for the length of a query.
pub(crate) struct Snapshot<'a> {
    searcher: Searcher,
    fields: &'a Fields,
    generation_dir: &'a Path,
}

impl ChunkReader {
    /// Opens the full-text index of a generation (damage is [`Error::IndexCorrupt`]).
    pub(crate) fn open(generation_dir: &Path) -> Result<ChunkReader> {
        let (_, reader) = bm25::open_reader(generation_dir)?;
        let (_, fields) = bm25::schema();
        Ok(ChunkReader { reader, fields, generation_dir: generation_dir.to_path_buf() })
    }

    pub(crate) fn snapshot(&self) -> Snapshot<'_> {
        Snapshot { searcher: self.reader.searcher(), fields: &self.fields, generation_dir: &self.generation_dir }
    }
}

impl Snapshot<'_> {
    /// The BM25 leg: the `n` best chunks for the query's words, best first.
    pub(crate) fn lexical(&self, config: &Bm25Config, query: &str, n: usize) -> Result<Vec<(LegHit, ChunkAddress)>> {
        match bm25::query(self.fields, config, query) {
            Some(q) => self.ranked(&*q, n),
            None => Ok(Vec::new()),
        }
    }

    /// The symbol leg: chunks defining the named identifiers (exact, then prefix matches).
    pub(crate) fn symbols(&self, symbols: &[String], n: usize) -> Result<Vec<(LegHit, ChunkAddress)>> {
        match bm25::symbol_query(self.fields, symbols)? {
            Some(q) => self.ranked(&*q, n),
            None => Ok(Vec::new()),
        }
    }

    fn ranked(&self, q: &dyn Query, n: usize) -> Result<Vec<(LegHit, ChunkAddress)>> {
        let top = self.searcher.search(q, &TopDocs::with_limit(n).order_by_score())?;
        let mut out = Vec::with_capacity(top.len());
        for (rank, (score, address)) in top.into_iter().enumerate() {
            let key = self.key_of(address)?;
            out.push((LegHit { key, rank: rank + 1, score }, ChunkAddress(address)));
        }
        Ok(out)
    }

    /// Where the chunk with this key is (for chunks only the vector leg found).
    pub(crate) fn address_of(&self, key: u64) -> Option<ChunkAddress> {
        let q = TermQuery::new(Term::from_field_u64(self.fields.vid, key), IndexRecordOption::Basic);
        let top = self.searcher.search(&q, &TopDocs::with_limit(1).order_by_score()).ok()?;
        top.first().map(|(_, a)| ChunkAddress(*a))
    }

    /// Every chunk of a document (up to a cap), in no particular order.
    pub(crate) fn chunks_of(&self, doc: &str) -> Result<Vec<Hit>> {
        Ok(self.keyed_chunks_of(doc)?.into_iter().map(|(_, hit)| hit).collect())
    }

    /// [`Snapshot::chunks_of`], each chunk with its key.
    pub(crate) fn keyed_chunks_of(&self, doc: &str) -> Result<Vec<(u64, Hit)>> {
        let q = TermQuery::new(Term::from_field_text(self.fields.doc, doc), IndexRecordOption::Basic);
        let top = self.searcher.search(&q, &TopDocs::with_limit(CHUNKS_PER_DOCUMENT).order_by_score())?;
        top.into_iter()
            .map(|(_, address)| {
                let key = self.key_of(address)?;
                Ok((key, self.load(ChunkAddress(address), key)?))
            })
            .collect()
    }

    /// Every chunk in the index with its key, segment by segment.
    pub(crate) fn all(&self) -> impl Iterator<Item = Result<(u64, Hit)>> + '_ {
        self.searcher.segment_readers().iter().enumerate().flat_map(move |(ord, segment)| {
            let alive: Vec<u32> = segment.doc_ids_alive().collect();
            alive.into_iter().map(move |doc| {
                let address = DocAddress::new(ord as u32, doc);
                let key = self.key_of(address)?;
                Ok((key, self.load(ChunkAddress(address), key)?))
            })
        })
    }

    /// Chunks in the index.
    pub(crate) fn num_docs(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// Chunks holding an analysed term in their body, title, path or symbols (the most of the four).
    pub(crate) fn doc_freq(&self, term: &str) -> u64 {
        let f = self.fields;
        [f.body, f.title, f.path, f.symbols]
            .iter()
            .map(|&field| self.searcher.doc_freq(&Term::from_field_text(field, term)).unwrap_or(0))
            .max()
            .unwrap_or(0)
    }

    /// For each chunk, which of the analysed `terms` its title, path or body holds: what
    /// [`bm25::occurring`] finds in the same texts, read from the postings instead of analysing
    /// each chunk again (a few postings seeks per term rather than a pass over every text).
    pub(crate) fn occurring(&self, terms: &[String], chunks: &[ChunkAddress]) -> Vec<Vec<bool>> {
        let mut found = vec![vec![false; terms.len()]; chunks.len()];
        // Per segment, its chunks in doc order: postings only seek forward.
        let mut by_segment: std::collections::BTreeMap<u32, Vec<(u32, usize)>> = std::collections::BTreeMap::new();
        for (i, c) in chunks.iter().enumerate() {
            by_segment.entry(c.0.segment_ord).or_default().push((c.0.doc_id, i));
        }
        let f = self.fields;
        for (ord, mut docs) in by_segment {
            docs.sort_unstable();
            let segment = self.searcher.segment_reader(ord);
            for field in [f.title, f.path, f.body] {
                let Ok(inverted) = segment.inverted_index(field) else { continue };
                for (t, term) in terms.iter().enumerate() {
                    let term = Term::from_field_text(field, term);
                    let Ok(Some(mut postings)) = inverted.read_postings(&term, IndexRecordOption::Basic) else {
                        continue;
                    };
                    for &(doc, i) in &docs {
                        if postings.doc() > doc {
                            continue;
                        }
                        if postings.seek(doc) == tantivy::TERMINATED {
                            break;
                        }
                        if postings.doc() == doc {
                            found[i][t] = true;
                        }
                    }
                }
            }
        }
        found
    }

    fn key_of(&self, address: DocAddress) -> Result<u64> {
        let column = self.searcher.segment_reader(address.segment_ord).fast_fields().u64("vid")?;
        column.first(address.doc_id).ok_or_else(|| Error::IndexCorrupt {
            path: self.generation_dir.to_path_buf(),
            reason: "chunk without vector id".into(),
        })
    }

    /// The stored chunk as an unscored [`Hit`].
    pub(crate) fn load(&self, address: ChunkAddress, key: u64) -> Result<Hit> {
        let d: TantivyDocument = self.searcher.doc(address.0)?;
        let f = self.fields;
        let text = |field| d.get_first(field).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let num = |field| d.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0) as usize;
        let all = |field| d.get_all(field).filter_map(|v| v.as_str().map(str::to_string)).collect::<Vec<_>>();
        let doc = text(f.doc);
        let lang = text(f.lang);
        let category = text(f.category);
        let symbols = text(f.symbols);
        Ok(Hit {
            id: format!("{doc}#{key}"),
            doc,
            path: text(f.path),
            title: text(f.title),
            start_line: num(f.start_line),
            end_line: num(f.end_line),
            text: text(f.body),
            kind: text(f.kind),
            lang: (!lang.is_empty()).then_some(lang),
            tags: all(f.tags),
            category: (!category.is_empty()).then_some(category),
            symbols: symbols.split_whitespace().map(str::to_string).collect(),
            ..Hit::default()
        })
    }
}
