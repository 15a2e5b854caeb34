//! Plain text: paragraph-aware windows. Also used for BEIR documents and record bodies.

use super::{pack, paragraphs, Chunk, Counter};
use crate::config::ChunkConfig;
use crate::ingest::Document;

/// Chunks plain text into packed paragraph windows, all titled with the document's default title.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    let title = doc.default_title();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;
    use crate::ingest::Kind;

    #[test]
    fn untitled_collection_records_get_no_title_but_files_get_their_name() {
        let mut doc = Document::new("notes/todo.txt", Kind::Text, None, "first\n\nsecond".into());
        assert_eq!(chunk(&doc, &ChunkConfig::default(), &approx_tokens)[0].title, "todo.txt");
        doc.is_file = false;
        doc.path = "4983".into();
        // A record id is no title: embedding "4983" with the text would only add noise.
        assert_eq!(chunk(&doc, &ChunkConfig::default(), &approx_tokens)[0].title, "");
    }
}
