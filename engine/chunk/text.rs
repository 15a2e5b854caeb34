//! Plain text: paragraph-aware windows. Also used for BEIR documents and record bodies.

use super::{pack, paragraphs, Chunk, Counter};
use crate::config::ChunkConfig;
use crate::ingest::Document;

pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    let title = doc.title.clone().unwrap_or_else(|| doc.file_name().to_string());
    pack(paragraphs(&doc.text, 1, &|_| false), config, count, "\n\n")
        .into_iter()
        .map(|w| Chunk {
            title: title.clone(),
            text: w.text,
            start_line: w.start_line,
            end_line: w.end_line,
            ..Chunk::default()
        })
        .collect()
}
