//! JSON memory records (`{"title","category","tags":[…],"content"}`): one chunk per record (split
//! if long), with title, tags and category carried as fields. A file may hold one record, an array
//! of records, or one record per line (JSONL).

use super::{pack, paragraphs, Chunk, Counter};
use crate::config::ChunkConfig;
use crate::ingest::Document;
use crate::memory::record::{parse, QUOTED_TAG};

/// Chunks a file of memory records; a file that does not parse as records gives no chunks.
pub fn chunk(doc: &Document, config: &ChunkConfig, count: Counter) -> Vec<Chunk> {
    let Some(records) = parse(&doc.text) else {
        return Vec::new();
    };
    let total_lines = doc.text.lines().count().max(1);
    let single = records.len() == 1;
    let config = &ChunkConfig { max_tokens: config.memory_max_tokens, ..config.clone() };
    let mut out = Vec::new();
    for (i, r) in records.into_iter().enumerate() {
        let title = r.title.clone().unwrap_or_else(|| format!("{} #{}", doc.file_name(), i + 1));
        // Where the record sits in the file: its title's line, else the whole file.
        let (start, end) = if single {
            (1, total_lines)
        } else {
            let line = r
                .title
                .as_deref()
                .and_then(|t| doc.text.lines().position(|l| l.contains(&serde_json::to_string(t).unwrap_or_default())))
                .map_or(1, |p| p + 1);
            (line, line)
        };
        let content = r.content.unwrap_or_default();
        for w in pack(paragraphs(&content, start, &|_| false), config, count, "\n\n") {
            out.push(Chunk {
                title: title.clone(),
                text: w.text,
                tags: r.tags.iter().cloned().chain(r.quoted.iter().map(|q| format!("{QUOTED_TAG}{q}"))).collect(),
                category: r.category.clone(),
                start_line: start,
                end_line: end,
                ..Chunk::default()
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::approx_tokens;
    use crate::ingest::Kind;

    #[test]
    fn records_carry_title_tags_and_category() {
        let text = r#"{"title":"Switch session store","category":"decision","tags":["redis","sessions"],"content":"We moved sessions to Redis."}"#;
        let doc = Document::new(".claude/memory/d.json", Kind::Memory, None, text.into());
        let c = chunk(&doc, &ChunkConfig::default(), &approx_tokens);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].title, "Switch session store");
        assert_eq!(c[0].tags, ["redis", "sessions"]);
        assert_eq!(c[0].category.as_deref(), Some("decision"));
    }

    #[test]
    fn arrays_and_jsonl_hold_several_records_and_other_json_is_not_memory() {
        assert_eq!(parse(r#"[{"title":"a","content":"x"},{"title":"b","content":"y"}]"#).unwrap().len(), 2);
        assert_eq!(parse("{\"title\":\"a\",\"content\":\"x\"}\n{\"title\":\"b\"}\n").unwrap().len(), 2);
        assert!(parse(r#"{"name":"package","version":"1.0"}"#).is_none());
        assert!(parse("not json").is_none());
    }

    #[test]
    fn a_long_record_is_cut_into_pieces_of_memory_max_tokens() {
        let bullets: Vec<String> =
            (0..40).map(|i| format!("- fact {i}: the renderer keeps key_{i} for rows")).collect();
        let record = serde_json::json!({"title": "Summary", "category": "summary", "content": bullets.join("\n\n")});
        let doc = Document::new(".claude/memory/s.json", Kind::Memory, None, record.to_string());
        let config = ChunkConfig { max_tokens: 240, memory_max_tokens: 40, ..ChunkConfig::default() };
        let pieces = chunk(&doc, &config, &approx_tokens);
        assert!(pieces.len() > 10, "{}", pieces.len());
        assert!(pieces.iter().all(|p| approx_tokens(&p.text) <= 40 && p.title == "Summary"));
        assert!(pieces.iter().any(|p| p.text.contains("key_39")));
        // The general budget does not apply to memory: fewer, larger pieces only when asked.
        let larger = chunk(&doc, &ChunkConfig { memory_max_tokens: 240, ..config }, &approx_tokens);
        assert!(larger.len() < pieces.len() / 3, "{} vs {}", larger.len(), pieces.len());
    }
}
