//! Memory records: the JSON a memory file holds (`{"title","category","tags":[…],"content"}`,
//! one record, an array of them, or one per line). Ingest reads it to tell memory files from other
//! JSON, the chunker to split them, the hook's session digest to list them.

use serde::Deserialize;

/// One memory record. Unknown fields are ignored; `content` may also be called `text` or `body`.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Record {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default, alias = "text", alias = "body")]
    pub content: Option<String>,
    /// Where the content was quoted from, when someone else wrote it (a tracker's issue).
    #[serde(default)]
    pub quoted: Option<String>,
}

/// The tag the chunker gives a quoted record's chunks (`quoted from issue 42 via gh, by mallory`):
/// how the context block knows to mark them, in a field every index already stores.
pub(crate) const QUOTED_TAG: &str = "quoted from ";

/// Parses a file's records, each category under its one name; `None` when the file is not
/// memory records at all.
pub fn parse(text: &str) -> Option<Vec<Record>> {
    let mut records = parse_as(text, |r: &Record| r.content.is_some() || r.title.is_some())?;
    for c in records.iter_mut().filter_map(|r| r.category.as_mut()) {
        if *c != crate::memory::category::canonical(c) {
            *c = crate::memory::category::canonical(c).to_string();
        }
    }
    Some(records)
}

/// Parses a file of records of type `T` (one, an array, or one per line), each of which must
/// pass `is_record`; `None` when the file is not such records.
pub(crate) fn parse_as<T: serde::de::DeserializeOwned>(text: &str, is_record: impl Fn(&T) -> bool) -> Option<Vec<T>> {
    if let Ok(one) = serde_json::from_str::<T>(text) {
        return is_record(&one).then(|| vec![one]);
    }
    if let Ok(many) = serde_json::from_str::<Vec<T>>(text) {
        return (!many.is_empty() && many.iter().all(&is_record)).then_some(many);
    }
    let lines: Vec<T> =
        text.lines().filter(|l| !l.trim().is_empty()).map(serde_json::from_str::<T>).collect::<Result<_, _>>().ok()?;
    (!lines.is_empty() && lines.iter().all(&is_record)).then_some(lines)
}
